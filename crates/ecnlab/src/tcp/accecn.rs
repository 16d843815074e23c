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

use crate::packet::{flags, AccEcnOption, Ecn, Packet};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// When an AccECN receiver sends the AccECN option (RFC 9768 section 3.2.3) and which fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AccEcnOptionMode {
    /// RFC 9768's recommended simple scheme (3.2.3.3): on the SYN-ACK, on the client's first
    /// ACK and first data segment (3.2.3.2.1), and on every ACK after a byte counter changed
    /// since the last ACK, with a field for every counter that has ever changed.
    #[default]
    Rfc9768,
    /// Every segment with ACK carries all three fields (12 bytes).
    Full,
    /// The handshake's options, then only when the CE byte counter changed since the last
    /// option, with the fields up to ECEB (8 bytes).
    Minimum,
    /// Never (the peer's options are still read).
    Off,
}

/// The byte counters' bits in the sets of counters that changed (`AccEcn::ever` etc.).
const E0: u8 = 1;
const CE: u8 = 2;
const E1: u8 = 4;
/// TCP option space without timestamps (RFC 9293: a 60-byte header at most).
const OPTION_SPACE: u32 = 40;
/// The AccECN option's fields are 24 bits (Appendix A.1: DIVOPT).
const DIVOPT_MASK: u64 = (1 << 24) - 1;

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
    /// The byte counters (E0, CE, E1 bits) that have changed during the connection, since the
    /// last ACK, and since the last AccECN option.
    ever: u8,
    since_ack: u8,
    since_opt: u8,
    /// Segments still to carry the handshake's option (the client's first ACK and first data
    /// segment, RFC 9768 3.2.3.2.1).
    handshake_opts: u8,

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
    /// The peer's byte counters as last decoded from its options (s.ceb, s.e0b, s.e1b).
    pub s_ceb: u64,
    pub s_e0b: u64,
    pub s_e1b: u64,
    /// CE bytes given to the controller from ACE estimates since the last ECEB field.
    ceb_estimated: u64,
    /// All CE bytes given to the controller.
    pub ce_bytes_reported: u64,
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
            ever: 0,
            since_ack: 0,
            since_opt: 0,
            handshake_opts: 0,
            s_cep: CEP_INIT as u64,
            handshake_pending: false,
            dup_pkts: 0,
            disabled: false,
            skip_next: false,
            s_ceb: 0,
            s_e0b: ECT_BYTES_INIT,
            s_e1b: ECT_BYTES_INIT,
            ceb_estimated: 0,
            ce_bytes_reported: 0,
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

    /// Client entering AccECN mode: its first ACK and its first data segment carry the option
    /// (3.2.3.2.1).
    pub fn client() -> Self {
        AccEcn { handshake_opts: 2, ..AccEcn::default() }
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
        let changed = match ecn {
            Ecn::Ce => {
                self.r_cep = self.r_cep.wrapping_add(1);
                self.r_ceb += bytes;
                self.ce_since_ack += 1;
                CE
            }
            Ecn::Ect0 => {
                self.r_e0b += bytes;
                E0
            }
            Ecn::Ect1 => {
                self.r_e1b += bytes;
                E1
            }
            Ecn::NotEct => 0,
        };
        if payload > 0 {
            self.ever |= changed;
            self.since_ack |= changed;
            self.since_opt |= changed;
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

    /// The AccECN option of an outgoing ACK (SYN = 0) under `mode`, if one is due and fits
    /// beside `other_option_bytes` of other options (SACK). Sending one counts it as sent.
    ///
    /// * `Rfc9768` (3.2.3.3, "recommended simple scheme"): when a byte counter changed since the
    ///   last ACK (or on the handshake's segments), with a field for every counter that has ever
    ///   changed, in the order that needs the fewest fields;
    /// * `Full`: on every ACK, all three fields;
    /// * `Minimum`: when r.ceb changed since the last option (or on the handshake's segments),
    ///   with the fields up to ECEB;
    /// * `Off`: never.
    ///
    /// When the option does not fit, fields are dropped from its tail as long as no field that
    /// changed since the last option is dropped; otherwise it is left out (3.2.3.3, "Necessary
    /// Option Length"; SACK has precedence).
    pub fn take_option(&mut self, mode: AccEcnOptionMode, other_option_bytes: u32) -> Option<AccEcnOption> {
        let changed = std::mem::take(&mut self.since_ack);
        let handshake = self.handshake_opts > 0;
        let all = E0 | CE | E1;
        let want = match mode {
            AccEcnOptionMode::Off => return None,
            AccEcnOptionMode::Full => all,
            _ if handshake => all,
            AccEcnOptionMode::Rfc9768 if changed != 0 => self.ever,
            AccEcnOptionMode::Minimum if self.since_opt & CE != 0 => self.ever | CE,
            _ => return None,
        };
        let (order1, mut fields) = layout(want);
        let room = OPTION_SPACE.saturating_sub(other_option_bytes);
        let bytes = |n: u8| AccEcnOption { fields: n, ..AccEcnOption::default() }.option_bytes();
        let needed = layout_prefix(order1, self.since_opt & want);
        while bytes(fields) > room && fields > needed {
            fields -= 1;
        }
        if bytes(fields) > room {
            return None;
        }
        self.handshake_opts = self.handshake_opts.saturating_sub(1);
        self.since_opt = 0;
        let low = |v: u64| (v & DIVOPT_MASK) as u32;
        Some(AccEcnOption { order1, fields, ee0b: low(self.r_e0b), eceb: low(self.r_ceb), ee1b: low(self.r_e1b) })
    }

    /// The option on a SYN-ACK (3.2.3.2.1: a server that confirms AccECN SHOULD send one): all
    /// three fields at their initial values, unless `mode` is off.
    pub fn synack_option(&self, mode: AccEcnOptionMode) -> Option<AccEcnOption> {
        let low = |v: u64| (v & DIVOPT_MASK) as u32;
        (mode != AccEcnOptionMode::Off).then_some(AccEcnOption {
            order1: false,
            fields: 3,
            ee0b: low(self.r_e0b),
            eceb: low(self.r_ceb),
            ee1b: low(self.r_e1b),
        })
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
    pub fn on_ack(&mut self, ack: &Packet, opt: Option<&AccEcnOption>, delivered_bytes: u64, dupack: bool, advanced: bool, mss: u64) -> CeDelta {
        // Appendix A.1: each field gives the smallest non-negative increment mod 2^24.
        let field_delta = |field: Option<u32>, counter: &mut u64| {
            field.map(|f| {
                let d = (f as u64).wrapping_sub(*counter) & DIVOPT_MASK;
                *counter += d;
                d
            })
        };
        let d_ceb = opt.and_then(|o| field_delta(o.eceb(), &mut self.s_ceb));
        if let Some(o) = opt {
            field_delta(o.ee0b(), &mut self.s_e0b);
            field_delta(o.ee1b(), &mut self.s_e1b);
        }
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
        let mut packets = if n >= d + DIVACE as u64 { n - (n - d) % DIVACE as u64 } else { d };
        // Appendix A.2.2: with the ECEB field, d is safe enough unless the marked bytes would
        // make the marked segments larger than an SMSS, or dSafer's smaller than half of one.
        if let Some(d_ceb) = d_ceb {
            if packets > d && d_ceb <= mss * d && d_ceb / packets < mss / 2 {
                packets = d;
            }
        }
        self.s_cep += packets;
        if self.disabled {
            return CeDelta::default();
        }
        // The controller is given the exact bytes when the ECEB field is there (less what
        // earlier ACKs without it made it count), otherwise the marks times SMSS (A.3).
        let bytes = match d_ceb {
            Some(d_ceb) => d_ceb.saturating_sub(std::mem::take(&mut self.ceb_estimated)),
            None => {
                self.ceb_estimated += packets * mss;
                packets * mss
            }
        };
        self.ce_bytes_reported += bytes;
        CeDelta { packets, bytes }
    }
}

/// The option's order and number of fields that carry the counters in `set` first (Table 5):
/// order 1 when ECT(1) bytes changed and ECT(0) ones did not.
fn layout(set: u8) -> (bool, u8) {
    let order1 = set & E1 != 0 && set & E0 == 0;
    (order1, layout_prefix(order1, set))
}

/// The fields an option of the given order needs to carry the counters in `set`.
fn layout_prefix(order1: bool, set: u8) -> u8 {
    let (first, last) = if order1 { (E1, E0) } else { (E0, E1) };
    if set & last != 0 {
        3
    } else if set & CE != 0 {
        2
    } else if set & first != 0 {
        1
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(ace: u32) -> Packet {
        Packet::test_ack(1, ace_flags(ace))
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
        assert_eq!(s.on_ack(&ack(7), None, 2 * mss, false, true, mss).packets, 2);
        // Appendix A.2.1's examples: 9 segments, ACE up by 2: 2; 10 segments: 10.
        let mut s = AccEcn { s_cep: 7, ..AccEcn::default() };
        assert_eq!(s.on_ack(&ack(1), None, 9 * mss, false, true, mss).packets, 2);
        let mut s = AccEcn { s_cep: 7, ..AccEcn::default() };
        assert_eq!(s.on_ack(&ack(1), None, 10 * mss, false, true, mss).packets, 10);
        // 20 segments all marked behind lost ACKs: ACE moved by 4, the count is 20.
        let mut s = AccEcn::default();
        let d = s.on_ack(&ack((5 + 20) % 8), None, 20 * mss, false, true, mss);
        assert_eq!((d.packets, d.bytes, s.s_cep), (20, 20 * mss, 25));
        // Without SACK, marks reported on duplicate ACKs are not taken again when the ACK
        // that fills the hole covers many segments.
        let mut s = AccEcn::default();
        for i in 1..=9 {
            assert_eq!(s.on_ack(&ack((5 + i) % 8), None, 0, true, false, mss).packets, 1);
        }
        assert_eq!(s.on_ack(&ack((5 + 9) % 8), None, 10 * mss, false, true, mss).packets, 0);
        // Disabled feedback (Table 4, ACE 0): counted, not reported.
        let mut s = AccEcn { disabled: true, ..AccEcn::default() };
        assert_eq!(s.on_ack(&ack(6), None, mss, false, true, mss), CeDelta::default());
    }

    #[test]
    fn option_fields_follow_the_scheme_and_fit_beside_sack() {
        use AccEcnOptionMode::*;
        let mut r = AccEcn::default();
        assert_eq!(r.take_option(Rfc9768, 0), None, "nothing changed");
        assert_eq!(r.take_option(Full, 0).map(|o| o.fields), Some(3));
        r.on_segment(Ecn::Ect1, 100);
        let o = r.take_option(Rfc9768, 0).unwrap();
        assert_eq!((o.order1, o.fields, o.ee1b()), (true, 1, Some(101)), "order 1 when only ECT(1) moved");
        assert_eq!(r.take_option(Rfc9768, 0), None);
        r.on_segment(Ecn::Ce, 100);
        let o = r.take_option(Rfc9768, 0).unwrap();
        assert_eq!((o.order1, o.fields, o.eceb()), (true, 2, Some(100)));
        r.on_segment(Ecn::Ect0, 100);
        assert_eq!(r.take_option(Minimum, 0), None, "minimum: only when r.ceb moved");
        r.on_segment(Ecn::Ce, 100);
        assert_eq!(r.take_option(Minimum, 0).map(|o| (o.order1, o.fields, o.eceb)), Some((false, 3, 200)));
        // Four SACK blocks leave 4 bytes: a changed ECEB does not fit, so no option; with
        // nothing changed since the last option the fields are dropped down to the empty one.
        r.on_segment(Ecn::Ce, 100);
        assert_eq!(r.take_option(Rfc9768, 36), None);
        assert_eq!(r.take_option(Full, 36).map(|o| o.fields), None, "ECEB changed since the last option");
        assert_eq!(r.take_option(Full, 0).map(|o| o.fields), Some(3));
        assert_eq!(r.take_option(Full, 36).map(|o| o.fields), Some(0));
        assert_eq!(r.take_option(Off, 0), None);
    }

    #[test]
    fn the_sender_takes_marked_bytes_from_the_option_and_its_packets_by_appendix_a_2_2() {
        let mss = 1460;
        let o = |ceb: u32| AccEcnOption { order1: false, fields: 2, ee0b: 1, eceb: ceb, ee1b: 1 };
        // A.2.2's second example: d.cep = 2, dSafer = 10, d.ceb = 1460: d is safe enough.
        let mut s = AccEcn { s_cep: 7, ..AccEcn::default() };
        let d = s.on_ack(&ack(1), Some(&o(1460)), 10 * mss, false, true, mss);
        assert_eq!((d.packets, d.bytes), (2, 1460));
        // Its first: d.cep = 0, dSafer = 8, d.ceb = 1460: marks larger than an SMSS each, keep 8.
        let mut s = AccEcn::default();
        assert_eq!(s.on_ack(&ack(5), Some(&o(1460)), 8 * mss, false, true, mss).packets, 8);
        // The 24-bit field wraps: s.ceb 2^24 - 10, ECEB 90: 100 new bytes.
        let mut s = AccEcn { s_ceb: (1 << 24) - 10, ..AccEcn::default() };
        assert_eq!(s.on_ack(&ack(6), Some(&o(90)), mss, false, true, mss).bytes, 100);
        // Estimates from ACKs without the field are not counted twice.
        let mut s = AccEcn::default();
        assert_eq!(s.on_ack(&ack(6), None, mss, false, true, mss).bytes, mss);
        assert_eq!(s.on_ack(&ack(7), Some(&o(2000)), mss, false, true, mss).bytes, 2000 - mss);
        assert_eq!(s.ce_bytes_reported, 2000);
    }
}
