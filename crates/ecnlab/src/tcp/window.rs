//! What a congestion controller works on and is told: the sender's window, the congestion
//! signals, the round-trip times and the per-ACK signal. A leaf of `tcp`: the controllers, the
//! slow-start exits, the RTT estimator and the ECN feedback all use it, and it uses none of
//! them.

use crate::engine::SimTime;

/// The sender's window state, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
}

impl Window {
    pub fn in_slow_start(&self) -> bool {
        // Slow start iff cwnd < ssthresh (RFC 5681 section 3.1; Linux uses the same test).
        self.cwnd < self.ssthresh
    }
}

/// What the network said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// A loss detected by duplicate ACKs.
    Loss,
    /// An ECN echo (ECE) from the receiver.
    Ecn,
}

/// Round-trip times as a congestion controller sees them (both 0 before the first sample),
/// and what a slow-start exit (`hystart`) needs of the ACK at hand.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RttInfo {
    pub srtt: SimTime,
    pub min_rtt: SimTime,
    /// This ACK's own RTT sample: from the send time of the newest segment it acknowledges,
    /// none if it acknowledges retransmitted data (Linux's `ca_rtt_us`). Taken only when a
    /// slow-start exit is configured; `None` otherwise.
    pub latest: Option<SimTime>,
    /// SND.UNA after this ACK, and SND.NXT (one past the highest byte sent): the slow-start
    /// exits count rounds with them.
    pub snd_una: u64,
    pub snd_nxt: u64,
}

/// What one ACK tells the congestion controller, whatever the sender does with it: every ACK,
/// duplicate or in recovery, with or without an echo (the base for DCTCP, AccECN and Prague).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckSignal {
    /// Bytes newly delivered: cumulatively acknowledged plus newly SACKed (RFC 6937's
    /// DeliveredData).
    pub delivered_bytes: u64,
    /// Bytes of those that the feedback reports CE-marked (RFC 3168: all of them when the ACK
    /// echoes, none otherwise).
    pub ce_bytes: u64,
    /// The ACK carried an echo.
    pub ece: bool,
    /// The round-trip times after this ACK's sample, if it gave one.
    pub rtt: RttInfo,
}
