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
//! [`AckSignal::ce_bytes`] is the whole ACK's bytes when it echoes (exact in DCTCP's mode);
//! accurate feedback (AccECN, RFC 9768) would count them itself. How the window answers an
//! echo (RFC 3168's halving, ns-2's, ABE, DCTCP's alpha) stays with the sender and its
//! controller.

pub use super::window::AckSignal;
use super::window::RttInfo;
use crate::packet::{flags, Ecn, Packet};

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
        Feedback { negotiated: false, mode, echo: false, cwr: false, ect }
    }

    /// The flags of a client's SYN: ECE and CWR when it wants ECN.
    pub fn syn_flags(wants: bool) -> u8 {
        if wants {
            flags::ECE | flags::CWR
        } else {
            0
        }
    }

    /// A server saw `syn`: ECN is on when it wants it and the SYN is ECN-setup.
    pub fn accept_syn(&mut self, wants: bool, syn: &Packet) {
        self.negotiated = wants && syn.has(flags::ECE) && syn.has(flags::CWR);
    }

    /// The flags of the server's SYN-ACK: ECE when ECN is on.
    pub fn synack_flags(&self) -> u8 {
        if self.negotiated {
            flags::ECE
        } else {
            0
        }
    }

    /// A client saw the SYN-ACK: ECN is on when it asked and the SYN-ACK is ECN-setup.
    pub fn accept_synack(&mut self, wants: bool, synack: &Packet) {
        self.negotiated = wants && synack.has(flags::ECE) && !synack.has(flags::CWR);
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

    /// The ECE flag for an outgoing ACK.
    pub fn ack_flags(&self) -> u8 {
        if self.echo {
            flags::ECE
        } else {
            0
        }
    }

    /// Sender: whether an arriving ACK echoes a mark.
    pub fn echoes(&self, ack: &Packet) -> bool {
        self.negotiated && ack.has(flags::ECE)
    }

    /// Sender: the codepoint of new data (and of ECN-capable retransmissions).
    pub fn data_codepoint(&self) -> Ecn {
        if self.negotiated {
            self.ect
        } else {
            Ecn::NotEct
        }
    }

    /// Sender: the window was reduced; say CWR on the next new segment. `always`: even
    /// without ECN (the reductions that only an echo causes).
    pub fn window_reduced(&mut self, always: bool) {
        self.cwr = always || self.negotiated;
    }

    /// Sender: the CWR flag for the next new data segment (once).
    pub fn take_cwr(&mut self) -> u8 {
        if std::mem::take(&mut self.cwr) { flags::CWR } else { 0 }
    }

    /// The signal an ACK of `delivered_bytes` gives the controller.
    pub fn signal(&self, delivered_bytes: u64, ece: bool, rtt: RttInfo) -> AckSignal {
        AckSignal { delivered_bytes, ce_bytes: if ece { delivered_bytes } else { 0 }, ece, rtt }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Direction, PacketKind};

    fn seg(f: u8, ecn: Ecn) -> Packet {
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
        let syn = seg(flags::SYN | Feedback::syn_flags(true), Ecn::NotEct);
        let mut server = Feedback::default();
        server.accept_syn(true, &syn);
        assert!(server.negotiated);
        let mut client = Feedback::default();
        client.accept_synack(true, &seg(flags::SYN | flags::ACK | server.synack_flags(), Ecn::NotEct));
        assert!(client.negotiated);
        // A SYN-ACK with CWR too is a reflected SYN, not ECN-setup (RFC 3168 6.1.1).
        client.accept_synack(true, &seg(flags::SYN | flags::ACK | flags::ECE | flags::CWR, Ecn::NotEct));
        assert!(!client.negotiated);
        server.accept_syn(false, &syn);
        assert!(!server.negotiated && server.synack_flags() == 0);
    }

    #[test]
    fn the_echo_runs_from_a_mark_to_a_cwr_and_cwr_goes_once() {
        let mut rx = Feedback { negotiated: true, ..Default::default() };
        assert!(!rx.on_segment(&seg(flags::ACK, Ecn::Ce)));
        assert_eq!(rx.ack_flags(), flags::ECE);
        assert!(rx.on_segment(&seg(flags::ACK, Ecn::Ect0)), "still demanding CWR");
        rx.on_segment(&seg(flags::ACK | flags::CWR, Ecn::Ect0));
        assert_eq!(rx.ack_flags(), 0);
        let mut tx = Feedback { negotiated: true, ..Default::default() };
        tx.window_reduced(false);
        assert_eq!((tx.take_cwr(), tx.take_cwr()), (flags::CWR, 0));
        let sig = tx.signal(3000, true, RttInfo::default());
        assert_eq!((sig.delivered_bytes, sig.ce_bytes), (3000, 3000));
        assert_eq!(tx.signal(3000, false, RttInfo::default()).ce_bytes, 0);
    }

    #[test]
    fn dctcp_mode_follows_the_last_segment_and_ignores_cwr() {
        let mut rx = Feedback { negotiated: true, ..Feedback::new(EchoMode::Dctcp, Ecn::Ect0) };
        assert!(rx.ce_state_changes(&seg(flags::ACK, Ecn::Ce)));
        assert!(!rx.on_segment(&seg(flags::ACK, Ecn::Ce)));
        assert_eq!(rx.ack_flags(), flags::ECE);
        // CWR does not stop the echo; a CE segment keeps it, an ECT one ends it.
        assert!(!rx.ce_state_changes(&seg(flags::ACK | flags::CWR, Ecn::Ce)));
        assert!(rx.on_segment(&seg(flags::ACK | flags::CWR, Ecn::Ce)));
        assert_eq!(rx.ack_flags(), flags::ECE);
        // Not-ECT (a retransmission) leaves the state.
        assert!(!rx.ce_state_changes(&seg(flags::ACK, Ecn::NotEct)));
        rx.on_segment(&seg(flags::ACK, Ecn::NotEct));
        assert_eq!(rx.ack_flags(), flags::ECE);
        assert!(rx.ce_state_changes(&seg(flags::ACK, Ecn::Ect1)));
        rx.on_segment(&seg(flags::ACK, Ecn::Ect1));
        assert_eq!(rx.ack_flags(), 0);
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
