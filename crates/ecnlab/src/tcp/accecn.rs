//! Accurate ECN feedback (AccECN, RFC 9768): the handshake encodings, the receiver's counters
//! and the ACE field, the sender's decoding with its safety against wrap.
//!
//! * **Negotiation** (section 3.1, Table 2): an AccECN SYN carries (AE, CWR, ECE) = (1, 1, 1);
//!   an AccECN server answers with one of the four combinations of the top block of Table 2,
//!   which at once confirm AccECN and feed back the IP-ECN field the SYN arrived with
//!   ([`handshake_encoding`]); an RFC 3168 server answers (0, 0, 1) and the client falls back
//!   to classic ECN, a server without ECN (0, 0, 0) and it falls back to none; a server that
//!   reflects the flags (1, 1, 1) is broken: no ECN. An AccECN server that receives a classic
//!   ECN-setup SYN (0, 1, 1) answers as RFC 3168 does. The rules live in `ecn::Feedback`.
//! * **Counters** (section 3.2): the Data Receiver counts CE-marked packets (`r.cep`, from 5)
//!   and the payload bytes that arrived CE, ECT(0) and ECT(1) (`r.ceb` from 0, `r.e0b` and
//!   `r.e1b` from 1) on every acceptable segment after the handshake, control packets and
//!   retransmissions included. Every ACK (SYN = 0) carries the three low bits of `r.cep` in the
//!   ACE field (AE, CWR, ECE; ECE the least significant bit), except the client's pure ACK of
//!   the SYN-ACK, which carries the handshake encoding of the SYN-ACK's IP-ECN field (section
//!   3.2.2.1, Table 3); a CE-marked SYN-ACK also raises the client's `r.cep` once, to 6.
//! * **When the receiver ACKs** (section 3.2.2.5.1): at once when a CE-marked data segment
//!   follows a packet that was not CE (change-triggered), and when `n` CE marks have arrived
//!   since the last ACK: n = 2 with unacknowledged data, 3 without (increment-triggered).
//!   Otherwise the delayed-ACK rules apply unchanged.
//! * **The sender** (section 3.2.2.2, Appendix A.2.1) takes d = (ACE - s.cep) mod 8 as the
//!   fewest new CE marks the ACK can report; if the ACK delivered n >= d + 8 packets (a run of
//!   lost ACKs, a stretch ACK), the counter may have wrapped, and it assumes the safest case,
//!   that all n were marked, modulo 8: dSafer = n - ((n - d) mod 8). n is the delivered bytes
//!   (cumulative plus newly SACKed) in whole segments, rounded up; without SACK a duplicate ACK
//!   counts as one segment and the ACK that ends the run takes those back (as Linux counts
//!   `delivered`), so the ACK that fills a hole does not look like a wrap. ACKs older than
//!   SND.UNA are superseded and ignored.
//!
//! The congestion controller is given the new marks as `ce_bytes` (marks times SMSS, RFC 9768
//! Appendix A.3 with full-sized segments) and `ece` when there was at least one: DCTCP and
//! Prague count marked bytes per observation window, the classic controllers react at most
//! once per window of data to any increase, as RFC 3168 senders react to ECE. A host in
//! AccECN mode never sets CWR (section 3.1.5): its bit is part of the ACE field.

use crate::packet::{flags, Ecn, Packet};

/// The initial value of the CE packet counters r.cep and s.cep (section 3.2.1).
pub const CEP_INIT: u32 = 5;
/// The initial value of the ECT(0) and ECT(1) byte counters (section 3.2.1).
pub const ECT_BYTES_INIT: u64 = 1;
/// The ACE field's modulus (Appendix A.2: DIVACE).
const DIVACE: u32 = 8;

/// The ACE field of a segment: (AE, CWR, ECE) read as a 3-bit number, ECE its least
/// significant bit (Figure 3).
pub fn ace_of(pkt: &Packet) -> u32 {
    (pkt.has(flags::AE) as u32) << 2 | (pkt.has(flags::CWR) as u32) << 1 | pkt.has(flags::ECE) as u32
}

/// The header flags that carry `ace` (its three low bits) in the ACE field.
pub fn ace_flags(ace: u32) -> u16 {
    let mut f = 0;
    if ace & 4 != 0 {
        f |= flags::AE;
    }
    if ace & 2 != 0 {
        f |= flags::CWR;
    }
    if ace & 1 != 0 {
        f |= flags::ECE;
    }
    f
}

/// The handshake encoding of an IP-ECN codepoint (Table 2's top block on the SYN-ACK, Table 3
/// on the ACK of the SYN-ACK): Not-ECT 0b010, ECT(1) 0b011, ECT(0) 0b100, CE 0b110.
pub fn handshake_encoding(ecn: Ecn) -> u32 {
    match ecn {
        Ecn::NotEct => 0b010,
        Ecn::Ect1 => 0b011,
        Ecn::Ect0 => 0b100,
        Ecn::Ce => 0b110,
    }
}

/// What a SYN-ACK's handshake encoding says of the SYN's IP-ECN field, if it confirms AccECN
/// (the reserved (1, 0, 1) confirms it "as if the field arrived unchanged", section 3.1.3:
/// `None` inside `Some`).
pub fn synack_feedback(synack: &Packet) -> Option<Option<Ecn>> {
    match ace_of(synack) {
        0b010 => Some(Some(Ecn::NotEct)),
        0b011 => Some(Some(Ecn::Ect1)),
        0b100 => Some(Some(Ecn::Ect0)),
        0b110 => Some(Some(Ecn::Ce)),
        0b101 => Some(None),
        _ => None,
    }
}

/// One end's AccECN state once negotiated: its Data Receiver's counters and its Data Sender's
/// copies of the peer's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccEcn {
    // --- Data Receiver (section 3.2) ---
    /// CE-marked packets received (r.cep).
    pub r_cep: u32,
    /// Payload bytes received CE, ECT(0), ECT(1) (r.ceb, r.e0b, r.e1b).
    pub r_ceb: u64,
    pub r_e0b: u64,
    pub r_e1b: u64,
    /// CE marks since the last ACK sent (increment-triggered ACKs).
    ce_since_ack: u32,
    /// The last packet to arrive was CE (change-triggered ACKs).
    last_ce: bool,
    /// A CE-marked data segment followed a packet that was not CE: ACK at once.
    change_triggered: bool,
    /// The client's r.cep was raised for a CE-marked SYN-ACK (at most once).
    synack_ce_counted: bool,
    /// Client: the ACE value of the pending pure ACK of the SYN-ACK (handshake encoding).
    pub handshake_ack: Option<u32>,

    // --- Data Sender ---
    /// CE-marked packets the peer has reported (s.cep).
    pub s_cep: u64,
    /// Server: the next ACE is the handshake encoding of the ACK of the SYN-ACK, not a count.
    handshake_pending: bool,
    /// Without SACK: segments counted for duplicate ACKs since SND.UNA last advanced.
    dup_pkts: u64,
    /// Table 4, ACE = 0 on the ACK of the SYN-ACK: send Not-ECT and ignore the feedback.
    pub disabled: bool,
    /// The ACK just decoded in the handshake encoding: its ACE is not a count.
    skip_next: bool,
}

impl Default for AccEcn {
    fn default() -> Self {
        AccEcn {
            r_cep: CEP_INIT,
            r_ceb: 0,
            r_e0b: ECT_BYTES_INIT,
            r_e1b: ECT_BYTES_INIT,
            ce_since_ack: 0,
            last_ce: false,
            change_triggered: false,
            synack_ce_counted: false,
            handshake_ack: None,
            s_cep: CEP_INIT as u64,
            handshake_pending: false,
            dup_pkts: 0,
            disabled: false,
            skip_next: false,
        }
    }
}

/// The new CE marks an ACK reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CeDelta {
    pub packets: u64,
    pub bytes: u64,
}

impl AccEcn {
    /// Server in AccECN mode: the first ACK it sees of its SYN-ACK may carry the handshake
    /// encoding (section 3.2.2.1).
    pub fn server() -> Self {
        AccEcn { handshake_pending: true, ..AccEcn::default() }
    }

    // ----- Data Receiver -----

    /// Client: the SYN-ACK arrived with `ecn`. Its pure ACK feeds it back in the handshake
    /// encoding (Table 3); CE raises r.cep to 6, once however many CE SYN-ACKs arrive.
    pub fn on_synack(&mut self, ecn: Ecn) {
        self.handshake_ack = Some(handshake_encoding(ecn));
        if ecn == Ecn::Ce && !self.synack_ce_counted {
            self.synack_ce_counted = true;
            self.r_cep += 1;
        }
    }

    /// Any acceptable segment with SYN = 0 arrived with `ecn` and `payload` bytes: count it.
    pub fn on_segment(&mut self, ecn: Ecn, payload: u32) {
        let ce = ecn == Ecn::Ce;
        let bytes = payload as u64;
        match ecn {
            Ecn::Ce => {
                self.r_cep = self.r_cep.wrapping_add(1);
                self.r_ceb += bytes;
                self.ce_since_ack += 1;
            }
            Ecn::Ect0 => self.r_e0b += bytes,
            Ecn::Ect1 => self.r_e1b += bytes,
            Ecn::NotEct => {}
        }
        // Section 3.2.2.5.1: a CE data segment after a packet (of any kind) that was not CE.
        self.change_triggered |= ce && payload > 0 && !self.last_ce;
        self.last_ce = ce;
    }

    /// Whether the receiver must ACK at once (section 3.2.2.5.1): a change-triggered ACK, or
    /// n CE marks since the last ACK, n = 2 with data unacknowledged, else 3.
    pub fn ack_due(&self, data_unacked: bool) -> bool {
        self.change_triggered || self.ce_since_ack >= if data_unacked { 2 } else { 3 }
    }

    /// The ACE flags of an outgoing ACK (SYN = 0): the handshake encoding on the client's pure
    /// ACK of the SYN-ACK (`pure`), else r.cep. An ACK resets the triggers.
    pub fn take_ack_flags(&mut self, pure: bool) -> u16 {
        self.ce_since_ack = 0;
        self.change_triggered = false;
        match self.handshake_ack.take() {
            Some(code) if pure => ace_flags(code),
            _ => ace_flags(self.r_cep),
        }
    }

    // ----- Data Sender -----

    /// Server in SYN-RECEIVED: a pure ACK without SACK blocks carries the handshake encoding
    /// (Table 4). Returns whether it reports a CE-marked SYN-ACK (s.cep goes to 6, and the
    /// caller answers it as a congestion signal); 0b000 disables ECT and the response to
    /// feedback ({Note 1}).
    pub fn on_handshake_ack(&mut self, ack: &Packet) -> bool {
        self.handshake_pending = false;
        self.skip_next = true;
        match ace_of(ack) {
            0b000 => {
                self.disabled = true;
                false
            }
            0b110 => {
                self.s_cep = CEP_INIT as u64 + 1;
                true
            }
            _ => false,
        }
    }

    /// The server's first ACK was not pure: it carries the counter.
    pub fn end_handshake(&mut self) {
        self.handshake_pending = false;
    }

    /// Whether the server still waits for the handshake encoding.
    pub fn handshake_pending(&self) -> bool {
        self.handshake_pending
    }

    /// An ACK arrived that is not superseded (its cumulative ACK is not below SND.UNA):
    /// decode its ACE field. `delivered_bytes`: cumulatively acknowledged plus newly SACKed;
    /// `dupack`: a duplicate ACK without SACK (one segment left the network); `advanced`:
    /// SND.UNA moved; `mss`: SMSS.
    pub fn on_ack(&mut self, ack: &Packet, delivered_bytes: u64, dupack: bool, advanced: bool, mss: u64) -> CeDelta {
        if std::mem::take(&mut self.skip_next) {
            return CeDelta::default();
        }
        let d = (ace_of(ack).wrapping_sub(self.s_cep as u32) % DIVACE) as u64;
        let mut n = delivered_bytes.div_ceil(mss.max(1));
        if dupack {
            n += 1;
            self.dup_pkts += 1;
        } else if advanced {
            // The segments the duplicate ACKs already counted are not new (Linux's
            // tcp_remove_reno_sacks).
            n = n.saturating_sub(std::mem::take(&mut self.dup_pkts)).max(1);
        }
        // Appendix A.2.1: the counter may have wrapped when n >= d + 8; take the safest case.
        let packets = if n >= d + DIVACE as u64 { n - (n - d) % DIVACE as u64 } else { d };
        self.s_cep += packets;
        if self.disabled {
            return CeDelta::default();
        }
        CeDelta { packets, bytes: packets * mss }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Direction, PacketKind};

    fn ack(ace: u32) -> Packet {
        Packet {
            flow: 0,
            flow_gen: 0,
            seq: 1,
            ack: 1,
            payload: 0,
            size: 40,
            wnd: 64_000,
            flags: flags::ACK | ace_flags(ace),
            ecn: Ecn::NotEct,
            kind: PacketKind::Ack,
            dir: Direction::Up,
            hop: 0,
            enqueued_at: 0,
        }
    }

    #[test]
    fn ace_bits_are_ae_cwr_ece_with_ece_least_significant() {
        for v in 0..8 {
            assert_eq!(ace_of(&ack(v)), v);
        }
        assert_eq!(ace_flags(0b010), flags::CWR);
        assert_eq!(ace_flags(0b100), flags::AE);
        assert_eq!(ace_flags(13), flags::AE | flags::ECE, "only the three low bits");
        // Table 2's top block and Table 3.
        let codes: Vec<u32> = [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce].iter().map(|&e| handshake_encoding(e)).collect();
        assert_eq!(codes, [0b010, 0b011, 0b100, 0b110]);
    }

    #[test]
    fn the_receiver_counts_packets_and_bytes_from_their_initial_values() {
        let mut r = AccEcn::default();
        r.on_segment(Ecn::Ce, 1000);
        r.on_segment(Ecn::Ect0, 1000);
        r.on_segment(Ecn::Ect1, 500);
        r.on_segment(Ecn::Ce, 0); // a CE-marked pure ACK counts as a packet
        r.on_segment(Ecn::NotEct, 700);
        assert_eq!((r.r_cep, r.r_ceb, r.r_e0b, r.r_e1b), (7, 1000, 1001, 501));
        assert_eq!(r.take_ack_flags(false), ace_flags(7));
    }

    #[test]
    fn change_and_increment_triggered_acks() {
        let mut r = AccEcn::default();
        r.on_segment(Ecn::Ect0, 1000);
        assert!(!r.ack_due(true));
        r.on_segment(Ecn::Ce, 1000);
        assert!(r.ack_due(true), "CE after not-CE");
        r.take_ack_flags(false);
        r.on_segment(Ecn::Ce, 1000);
        assert!(!r.ack_due(true), "one more CE in a run is not a change");
        r.on_segment(Ecn::Ce, 1000);
        assert!(r.ack_due(true), "two CE marks with data unacknowledged");
        r.take_ack_flags(false);
        // CE-marked pure ACKs: every third one is acknowledged (n = 3 without data).
        r.on_segment(Ecn::Ce, 0);
        r.on_segment(Ecn::Ce, 0);
        assert!(!r.ack_due(false));
        r.on_segment(Ecn::Ce, 0);
        assert!(r.ack_due(false));
    }

    #[test]
    fn the_handshake_encodings_and_the_synack_mark() {
        let mut c = AccEcn::default();
        c.on_synack(Ecn::Ce);
        c.on_synack(Ecn::Ce);
        assert_eq!(c.r_cep, 6, "raised once");
        assert_eq!(c.take_ack_flags(true), ace_flags(0b110));
        assert_eq!(c.take_ack_flags(true), ace_flags(6), "then the counter");
        let mut s = AccEcn::server();
        assert!(s.on_handshake_ack(&ack(0b110)));
        assert_eq!(s.s_cep, 6);
        let mut s = AccEcn::server();
        assert!(!s.on_handshake_ack(&ack(0b100)));
        assert_eq!(s.s_cep, 5);
        assert!(!s.on_handshake_ack(&ack(0)) && s.disabled);
    }

    #[test]
    fn the_sender_decodes_increments_and_assumes_the_safest_wrap() {
        let mss = 1000;
        let mut s = AccEcn::default();
        // Two new marks on an ACK of two segments.
        assert_eq!(s.on_ack(&ack(7), 2 * mss, false, true, mss).packets, 2);
        // Appendix A.2.1's examples: 9 segments, ACE up by 2: 2; 10 segments: 10.
        let mut s = AccEcn { s_cep: 7, ..AccEcn::default() };
        assert_eq!(s.on_ack(&ack(1), 9 * mss, false, true, mss).packets, 2);
        let mut s = AccEcn { s_cep: 7, ..AccEcn::default() };
        assert_eq!(s.on_ack(&ack(1), 10 * mss, false, true, mss).packets, 10);
        // 20 segments all marked behind lost ACKs: ACE moved by 4, the count is 20.
        let mut s = AccEcn::default();
        let d = s.on_ack(&ack((5 + 20) % 8), 20 * mss, false, true, mss);
        assert_eq!((d.packets, d.bytes, s.s_cep), (20, 20 * mss, 25));
        // Without SACK, marks reported on duplicate ACKs are not taken again when the ACK
        // that fills the hole covers many segments.
        let mut s = AccEcn::default();
        for i in 1..=9 {
            assert_eq!(s.on_ack(&ack((5 + i) % 8), 0, true, false, mss).packets, 1);
        }
        assert_eq!(s.on_ack(&ack((5 + 9) % 8), 10 * mss, false, true, mss).packets, 0);
        // Disabled feedback (Table 4, ACE 0): counted, not reported.
        let mut s = AccEcn { disabled: true, ..AccEcn::default() };
        assert_eq!(s.on_ack(&ack(6), mss, false, true, mss), CeDelta::default());
    }
}
