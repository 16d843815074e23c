//! ECN feedback between the two ends of a connection: negotiation in the handshake, the
//! receiver's echo of CE marks and the sender's signal to its congestion controller.
//!
//! Negotiation is RFC 3168's in both modes: an ECN-setup SYN carries ECE and CWR, an ECN-setup
//! SYN-ACK ECE alone (section 6.1.1); new data goes ECT(0), or ECT(1) when the stack is set so
//! (`ect_codepoint`, for L4S senders); the sender sets CWR on its first new segment after a
//! window reduction (6.1.2, and RFC 8257 section 3.3 keeps it). The receiver's echo has two
//! modes ([`EchoMode`]):
//!
//! * RFC 3168 (6.1.3): ECE on every ACK from a CE mark until a segment with CWR arrives. The
//!   feedback says only whether some data was marked, once per round trip.
//! * DCTCP (RFC 8257 section 3.2; Linux's `dctcp_ece_ack_update` in net/ipv4/tcp_dctcp.h): ECE
//!   on an ACK iff the last data segment was CE-marked (the receiver's `DCTCP.CE` state); CWR
//!   is ignored. When the CE state of arriving data changes, the segments received before it
//!   and not yet acknowledged are acknowledged at once with the old ECE value (the endpoint
//!   does that, asking [`Feedback::ce_state_changes`]), so every ACK covers segments of one
//!   state only and the echo counts marked bytes exactly, with delayed ACKs too.
//!
//! * AccECN (RFC 9768, `ecn_feedback = "accecn"`, [`super::accecn`]): negotiated with
//!   (AE, CWR, ECE) = (1, 1, 1) on the SYN and falling back to RFC 3168 or to no ECN by its
//!   Table 2; then every ACK carries a count of CE-marked packets in the ACE field, whatever
//!   the receiver's congestion control, and CWR is never sent.
//!
//! [`AckSignal::ce_bytes`] is the whole ACK's bytes when it echoes (exact in DCTCP's mode);
//! with AccECN the new marks the ACE field reports, times SMSS. How the window answers an
//! echo (RFC 3168's halving, ns-2's, ABE, DCTCP's alpha) stays with the sender and its
//! controller.

use super::accecn::{ace_flags, ace_of, handshake_encoding, synack_feedback, AccEcn, AccEcnOptionMode};
pub use super::window::AckSignal;
use super::window::RttInfo;
use crate::packet::{flags, AccEcnOption, Ecn, Packet};

/// What the sender knows of an arriving ACK when it decodes its feedback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckFacts {
    /// Bytes the ACK delivered (cumulatively acknowledged plus newly SACKed).
    pub delivered: u64,
    /// Not superseded: its cumulative ACK is not below SND.UNA.
    pub fresh: bool,
    /// A duplicate ACK without SACK.
    pub dupack: bool,
    /// SND.UNA moved.
    pub advanced: bool,
    /// SMSS.
    pub mss: u64,
}

/// What the ECN feedback of one ACK tells the sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Echo {
    /// A congestion signal: ECE (RFC 3168, DCTCP), or at least one new CE mark (AccECN).
    pub ece: bool,
    /// The bytes the feedback reports CE-marked: all the ACK's when it echoes (RFC 3168,
    /// DCTCP); the new marks times SMSS (AccECN).
    pub ce_bytes: u64,
}

/// How a receiver echoes CE marks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EchoMode {
    /// RFC 3168 6.1.3: latched from a CE mark until a CWR.
    #[default]
    Rfc3168,
    /// RFC 8257 3.2: ECE iff the last data segment was CE-marked (DCTCP, Prague).
    Dctcp,
}

/// One end's ECN feedback state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Feedback {
    /// Both ends asked for ECN in the handshake.
    pub negotiated: bool,
    /// How the receiver echoes.
    mode: EchoMode,
    /// Receiver: RFC 3168, echo ECE until a CWR arrives; DCTCP, the CE state (`DCTCP.CE`).
    echo: bool,
    /// Sender: CWR goes on the next new data segment.
    cwr: bool,
    /// Sender: the ECT codepoint of new data.
    ect: Ecn,
    /// AccECN (RFC 9768) was negotiated: its counters.
    accecn: Option<AccEcn>,
    /// Server with AccECN: the IP-ECN field of the latest SYN, fed back on the SYN-ACK.
    syn_ecn: Ecn,
}

impl Default for Feedback {
    fn default() -> Self {
        Feedback::new(EchoMode::Rfc3168, Ecn::Ect0)
    }
}

impl Feedback {
    /// Not yet negotiated; echoing by `mode`, sending data with codepoint `ect` (ECT(0) or
    /// ECT(1)) once negotiated.
    pub fn new(mode: EchoMode, ect: Ecn) -> Self {
        Feedback { negotiated: false, mode, echo: false, cwr: false, ect, accecn: None, syn_ecn: Ecn::NotEct }
    }

    /// The flags of a client's SYN: ECE and CWR when it wants ECN (RFC 3168 6.1.1), AE too
    /// when it wants AccECN (RFC 9768 3.1.1).
    pub fn syn_flags(wants: bool, accecn: bool) -> u16 {
        match (wants, accecn) {
            (false, _) => 0,
            (true, false) => flags::ECE | flags::CWR,
            (true, true) => flags::AE | flags::ECE | flags::CWR,
        }
    }

    /// A server saw `syn`: AccECN when both want it (RFC 9768 3.1.1; 3.1.3: any combination
    /// but (0, 0, 0) and (0, 1, 1) asks for it), else RFC 3168's ECN when it wants ECN and the
    /// SYN is ECN-setup (an RFC 3168 server ignores AE).
    pub fn accept_syn(&mut self, wants: bool, wants_accecn: bool, syn: &Packet) {
        let ace = ace_of(syn);
        if wants && wants_accecn && ace != 0b000 && ace != 0b011 {
            self.negotiated = true;
            self.accecn = Some(AccEcn::server());
            self.syn_ecn = syn.ecn;
        } else {
            self.negotiated = wants && syn.has(flags::ECE) && syn.has(flags::CWR);
        }
    }

    /// A server saw its SYN again: with AccECN the SYN-ACK feeds back the latest SYN's IP-ECN
    /// field (RFC 9768 3.1.5).
    pub fn syn_again(&mut self, syn: &Packet) {
        self.syn_ecn = syn.ecn;
    }

    /// The flags of the server's SYN-ACK: with AccECN the handshake encoding of the SYN's
    /// IP-ECN field (RFC 9768 Table 2), with RFC 3168's ECN ECE.
    pub fn synack_flags(&self) -> u16 {
        match (self.negotiated, self.accecn.is_some()) {
            (false, _) => 0,
            (true, false) => flags::ECE,
            (true, true) => ace_flags(handshake_encoding(self.syn_ecn)),
        }
    }

    /// A client saw the SYN-ACK. After an RFC 3168 SYN, ECN is on when the SYN-ACK is
    /// ECN-setup (ECE without CWR). After an AccECN SYN (RFC 9768 Table 2): AccECN when the
    /// SYN-ACK has one of the top block's combinations (or the reserved (1, 0, 1)), RFC 3168's
    /// ECN on (0, 0, 1), none on (0, 0, 0) or the broken (1, 1, 1).
    pub fn accept_synack(&mut self, wants: bool, wants_accecn: bool, synack: &Packet) {
        if !(wants && wants_accecn) {
            self.negotiated = wants && synack.has(flags::ECE) && !synack.has(flags::CWR);
            return;
        }
        if synack_feedback(synack).is_some() {
            self.negotiated = true;
            let mut a = AccEcn::client();
            a.on_synack(synack.ecn);
            self.accecn = Some(a);
        } else {
            self.negotiated = ace_of(synack) == 0b001;
        }
    }

    /// Client with AccECN: whether the SYN-ACK feeds back a CE-marked SYN (Table 2: (1, 1, 0)).
    pub fn synack_reports_ce(&self, synack: &Packet) -> bool {
        self.accecn.is_some() && synack_feedback(synack) == Some(Some(Ecn::Ce))
    }

    /// Client with AccECN: a SYN-ACK arrived again; its pure ACK feeds back its IP-ECN field
    /// (RFC 9768 3.2.2.1).
    pub fn synack_again(&mut self, synack: &Packet) {
        if let Some(a) = &mut self.accecn {
            a.on_synack(synack.ecn);
        }
    }

    /// AccECN was negotiated.
    pub fn accecn(&self) -> bool {
        self.accecn.is_some()
    }

    /// The AccECN state, once negotiated.
    pub fn accecn_state(&self) -> Option<&AccEcn> {
        self.accecn.as_ref()
    }

    /// Client with AccECN: the pure ACK of the SYN-ACK (handshake encoding) is still owed.
    pub fn handshake_ack_owed(&self) -> bool {
        self.accecn.is_some_and(|a| a.handshake_ack.is_some())
    }

    /// Server with AccECN in SYN-RECEIVED: the first ACK arrived. A pure ACK without SACK
    /// blocks carries the handshake encoding (RFC 9768 Table 4); returns whether it reports a
    /// CE-marked SYN-ACK.
    pub fn on_first_ack(&mut self, ack: &Packet) -> bool {
        match &mut self.accecn {
            Some(a) if a.handshake_pending() => {
                if ack.payload == 0 && !ack.has(flags::SACK) && !ack.has(flags::FIN) {
                    a.on_handshake_ack(ack)
                } else {
                    a.end_handshake();
                    false
                }
            }
            _ => false,
        }
    }

    /// Receiver with AccECN: a segment with SYN = 0 arrived; count it (RFC 9768 3.2).
    pub fn count_arrival(&mut self, pkt: &Packet) {
        if let Some(a) = &mut self.accecn {
            a.on_segment(pkt.ecn, pkt.payload);
        }
    }

    /// Receiver with AccECN: the AccECN option for an outgoing ACK, if `mode` sends one now
    /// and it fits beside `other_option_bytes` (RFC 9768 3.2.3.3).
    pub fn take_option(&mut self, mode: AccEcnOptionMode, other_option_bytes: u32) -> Option<AccEcnOption> {
        self.accecn.as_mut().and_then(|a| a.take_option(mode, other_option_bytes))
    }

    /// Server with AccECN: the option on its SYN-ACK (RFC 9768 3.2.3.2.1).
    pub fn synack_option(&self, mode: AccEcnOptionMode) -> Option<AccEcnOption> {
        self.accecn.as_ref().and_then(|a| a.synack_option(mode))
    }

    /// Receiver with AccECN: an ACK is due now (RFC 9768 3.2.2.5.1).
    pub fn accecn_ack_due(&self, data_unacked: bool) -> bool {
        self.accecn.is_some_and(|a| a.ack_due(data_unacked))
    }

    /// Receiver: a segment arrived (RFC 3168 6.1.3: CWR stops the echo, CE restarts it;
    /// RFC 8257 3.2: CE sets the CE state, ECT clears it, Not-ECT leaves it, CWR is ignored).
    /// Returns whether the echo was on before it (Linux's "demanding CWR", which DCTCP keeps
    /// equal to its CE state).
    pub fn on_segment(&mut self, pkt: &Packet) -> bool {
        match self.mode {
            EchoMode::Rfc3168 => {
                if pkt.has(flags::CWR) {
                    self.echo = false;
                }
                let was = self.echo;
                if pkt.ecn == Ecn::Ce {
                    self.echo = true;
                }
                was
            }
            EchoMode::Dctcp => {
                let was = self.echo;
                match pkt.ecn {
                    Ecn::Ce => self.echo = true,
                    Ecn::Ect0 | Ecn::Ect1 => self.echo = false,
                    Ecn::NotEct => {}
                }
                was
            }
        }
    }

    /// Receiver, DCTCP's mode only: this data segment changes the CE state, so what arrived
    /// before it must be acknowledged first, with the old ECE (RFC 8257 section 3.2, Figure 1).
    pub fn ce_state_changes(&self, pkt: &Packet) -> bool {
        self.mode == EchoMode::Dctcp
            && self.negotiated
            && match pkt.ecn {
                Ecn::Ce => !self.echo,
                Ecn::Ect0 | Ecn::Ect1 => self.echo,
                Ecn::NotEct => false,
            }
    }

    /// Receiver: echo from now on (RFC 5562: a CE-marked SYN-ACK).
    pub fn start_echo(&mut self) {
        self.echo = true;
    }

    /// The ECN flags of an outgoing segment with ACK (and SYN = 0): RFC 3168's ECE, or the
    /// ACE field with AccECN (the handshake encoding on the client's pure ACK of the SYN-ACK
    /// when `pure`).
    pub fn take_ack_flags(&mut self, pure: bool) -> u16 {
        if let Some(a) = &mut self.accecn {
            a.take_ack_flags(pure)
        } else if self.echo {
            flags::ECE
        } else {
            0
        }
    }

    /// RFC 3168's ECE flag for an outgoing ACK (or DCTCP's; not for AccECN).
    #[inline]
    pub fn echo_flag(&self) -> u16 {
        if self.echo {
            flags::ECE
        } else {
            0
        }
    }

    /// Sender: whether an arriving ACK echoes a mark (RFC 3168's ECE; false with AccECN, whose
    /// ECE bit is part of a count).
    pub fn echoes(&self, ack: &Packet) -> bool {
        self.negotiated && self.accecn.is_none() && ack.has(flags::ECE)
    }

    /// Sender: the feedback of an ACK (and its AccECN option, if any). With AccECN its ACE
    /// field and option are decoded when the ACK is not superseded.
    pub fn on_ack(&mut self, ack: &Packet, opt: Option<&AccEcnOption>, facts: AckFacts) -> Echo {
        match &mut self.accecn {
            None => {
                let ece = self.negotiated && ack.has(flags::ECE);
                Echo { ece, ce_bytes: if ece { facts.delivered } else { 0 } }
            }
            Some(a) if facts.fresh => {
                let d = a.on_ack(ack, opt, facts.delivered, facts.dupack, facts.advanced, facts.mss);
                Echo { ece: d.packets > 0, ce_bytes: d.bytes }
            }
            Some(_) => Echo::default(),
        }
    }

    /// Sender: the codepoint of new data (and of ECN-capable retransmissions).
    pub fn data_codepoint(&self) -> Ecn {
        if self.negotiated && !self.accecn.is_some_and(|a| a.disabled) {
            self.ect
        } else {
            Ecn::NotEct
        }
    }

    /// Sender: the window was reduced; say CWR on the next new segment. `always`: even
    /// without ECN (the reductions that only an echo causes). Never with AccECN (RFC 9768
    /// 3.1.5: the flag is part of the ACE field).
    pub fn window_reduced(&mut self, always: bool) {
        self.cwr = (always || self.negotiated) && self.accecn.is_none();
    }

    /// Sender: the CWR flag for the next new data segment (once).
    pub fn take_cwr(&mut self) -> u16 {
        if std::mem::take(&mut self.cwr) { flags::CWR } else { 0 }
    }

    /// The signal an ACK of `delivered_bytes` gives the controller.
    pub fn signal(&self, delivered_bytes: u64, echo: Echo, rtt: RttInfo) -> AckSignal {
        AckSignal { delivered_bytes, ce_bytes: echo.ce_bytes, ece: echo.ece, rtt }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Direction, PacketKind};

    fn seg(f: u16, ecn: Ecn) -> Packet {
        Packet {
            flow: 0,
            flow_gen: 0,
            seq: 1,
            ack: 1,
            payload: 1000,
            size: 1040,
            wnd: 64_000,
            flags: f,
            ecn,
            kind: PacketKind::Data,
            dir: Direction::Down,
            hop: 0,
            enqueued_at: 0,
        }
    }

    #[test]
    fn negotiation_needs_both_ends_and_the_right_flags() {
        let syn = seg(flags::SYN | Feedback::syn_flags(true, false), Ecn::NotEct);
        let mut server = Feedback::default();
        server.accept_syn(true, false, &syn);
        assert!(server.negotiated);
        let mut client = Feedback::default();
        client.accept_synack(true, false, &seg(flags::SYN | flags::ACK | server.synack_flags(), Ecn::NotEct));
        assert!(client.negotiated);
        // A SYN-ACK with CWR too is a reflected SYN, not ECN-setup (RFC 3168 6.1.1).
        client.accept_synack(true, false, &seg(flags::SYN | flags::ACK | flags::ECE | flags::CWR, Ecn::NotEct));
        assert!(!client.negotiated);
        server.accept_syn(false, false, &syn);
        assert!(!server.negotiated && server.synack_flags() == 0);
    }

    #[test]
    fn the_echo_runs_from_a_mark_to_a_cwr_and_cwr_goes_once() {
        let mut rx = Feedback { negotiated: true, ..Default::default() };
        assert!(!rx.on_segment(&seg(flags::ACK, Ecn::Ce)));
        assert_eq!(rx.take_ack_flags(false), flags::ECE);
        assert!(rx.on_segment(&seg(flags::ACK, Ecn::Ect0)), "still demanding CWR");
        rx.on_segment(&seg(flags::ACK | flags::CWR, Ecn::Ect0));
        assert_eq!(rx.take_ack_flags(false), 0);
        let mut tx = Feedback { negotiated: true, ..Default::default() };
        tx.window_reduced(false);
        assert_eq!((tx.take_cwr(), tx.take_cwr()), (flags::CWR, 0));
        let facts = AckFacts { delivered: 3000, fresh: true, dupack: false, advanced: true, mss: 1000 };
        let echo = tx.on_ack(&seg(flags::ACK | flags::ECE, Ecn::NotEct), None, facts);
        let sig = tx.signal(3000, echo, RttInfo::default());
        assert_eq!((sig.delivered_bytes, sig.ce_bytes, sig.ece), (3000, 3000, true));
        let echo = tx.on_ack(&seg(flags::ACK, Ecn::NotEct), None, facts);
        assert_eq!(tx.signal(3000, echo, RttInfo::default()).ce_bytes, 0);
    }

    #[test]
    fn dctcp_mode_follows_the_last_segment_and_ignores_cwr() {
        let mut rx = Feedback { negotiated: true, ..Feedback::new(EchoMode::Dctcp, Ecn::Ect0) };
        assert!(rx.ce_state_changes(&seg(flags::ACK, Ecn::Ce)));
        assert!(!rx.on_segment(&seg(flags::ACK, Ecn::Ce)));
        assert_eq!(rx.take_ack_flags(false), flags::ECE);
        // CWR does not stop the echo; a CE segment keeps it, an ECT one ends it.
        assert!(!rx.ce_state_changes(&seg(flags::ACK | flags::CWR, Ecn::Ce)));
        assert!(rx.on_segment(&seg(flags::ACK | flags::CWR, Ecn::Ce)));
        assert_eq!(rx.take_ack_flags(false), flags::ECE);
        // Not-ECT (a retransmission) leaves the state.
        assert!(!rx.ce_state_changes(&seg(flags::ACK, Ecn::NotEct)));
        rx.on_segment(&seg(flags::ACK, Ecn::NotEct));
        assert_eq!(rx.take_ack_flags(false), flags::ECE);
        assert!(rx.ce_state_changes(&seg(flags::ACK, Ecn::Ect1)));
        rx.on_segment(&seg(flags::ACK, Ecn::Ect1));
        assert_eq!(rx.take_ack_flags(false), 0);
        // RFC 3168's mode never reports a change of state (its echo latches).
        let classic = Feedback { negotiated: true, ..Feedback::default() };
        assert!(!classic.ce_state_changes(&seg(flags::ACK, Ecn::Ce)));
        // The sender's codepoint: ECT(1) when set, Not-ECT before negotiation.
        let mut tx = Feedback::new(EchoMode::Dctcp, Ecn::Ect1);
        assert_eq!(tx.data_codepoint(), Ecn::NotEct);
        tx.negotiated = true;
        assert_eq!(tx.data_codepoint(), Ecn::Ect1);
    }
}
