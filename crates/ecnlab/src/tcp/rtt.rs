//! Retransmission timeout (RFC 6298 sections 2-5).
//!
//! SRTT and RTTVAR follow section 2 (alpha 1/8, beta 1/4, K = 4); RTO = SRTT + max(G, 4 RTTVAR),
//! clamped to [min RTO, max RTO]. Before the first sample the RTO is the initial RTO (1 s in RFC
//! 6298, 3 s in RFC 2988 and the 2005 studies). Each expiry doubles the RTO (section 5.5) up to
//! max RTO; the backoff is kept until a new sample arrives (section 5.7, Karn's algorithm: the
//! caller never samples a retransmitted segment).

use crate::engine::SimTime;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: SimTime,
    rttvar: SimTime,
    /// Smallest sample so far (0 before the first).
    min_rtt: SimTime,
    has_sample: bool,
    /// Number of consecutive backoffs (RTO doublings).
    backoff: u32,
    initial: SimTime,
    min: SimTime,
    max: SimTime,
    granularity: SimTime,
}

impl RttEstimator {
    pub fn new(initial: SimTime, min: SimTime, max: SimTime, granularity: SimTime) -> Self {
        RttEstimator { srtt: 0, rttvar: 0, min_rtt: 0, has_sample: false, backoff: 0, initial, min, max, granularity }
    }

    /// Feeds one round-trip measurement (never from a retransmitted segment).
    pub fn sample(&mut self, r: SimTime) {
        if self.has_sample {
            let err = self.srtt.abs_diff(r);
            // RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R'|, then SRTT <- 7/8 SRTT + 1/8 R'.
            self.rttvar = (3 * self.rttvar + err) / 4;
            self.srtt = (7 * self.srtt + r) / 8;
        } else {
            self.srtt = r;
            self.rttvar = r / 2;
            self.min_rtt = r;
            self.has_sample = true;
        }
        self.min_rtt = self.min_rtt.min(r);
        self.backoff = 0;
    }

    /// The RTO before backoff.
    fn base(&self) -> SimTime {
        if self.has_sample {
            (self.srtt + self.granularity.max(4 * self.rttvar)).clamp(self.min, self.max)
        } else {
            self.initial
        }
    }

    /// The timeout to arm now.
    pub fn rto(&self) -> SimTime {
        let mut r = self.base();
        for _ in 0..self.backoff {
            r = r.saturating_mul(2).min(self.max);
        }
        r
    }

    /// Consecutive backoffs so far.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    /// Sets the backoff count: ns-2's ECN response keeps it across an RTT sample, and
    /// `RtoBackoffEnd::NewAck` ends it (0) at an ACK of new data.
    pub fn set_backoff(&mut self, backoff: u32) {
        self.backoff = backoff;
    }

    /// An expiry: double the timeout.
    pub fn back_off(&mut self) {
        if self.rto() < self.max {
            self.backoff += 1;
        }
    }

    pub fn srtt(&self) -> Option<SimTime> {
        self.has_sample.then_some(self.srtt)
    }

    /// What a congestion controller may know of the path's round-trip time (the per-ACK
    /// fields are the sender's to fill).
    pub fn info(&self) -> RttInfo {
        RttInfo { srtt: self.srtt, min_rtt: self.min_rtt, ..Default::default() }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::{NS_PER_MS, NS_PER_S};

    #[test]
    fn first_sample_matches_spec_vector() {
        // Spec Part V: R = 100 ms -> SRTT 0.1, RTTVAR 0.05, RTO 0.3 s, clamped to 1 s by RFC 6298.
        let mut e = RttEstimator::new(NS_PER_S, NS_PER_S, 60 * NS_PER_S, 0);
        assert_eq!(e.rto(), NS_PER_S);
        e.sample(100 * NS_PER_MS);
        assert_eq!(e.srtt(), Some(100 * NS_PER_MS));
        assert_eq!(e.rttvar, 50 * NS_PER_MS);
        assert_eq!(e.rto(), NS_PER_S);
        let mut linux = RttEstimator::new(NS_PER_S, 200 * NS_PER_MS, 120 * NS_PER_S, 0);
        linux.sample(100 * NS_PER_MS);
        assert_eq!(linux.rto(), 300 * NS_PER_MS);
    }

    #[test]
    fn later_samples_use_old_srtt_for_rttvar() {
        let mut e = RttEstimator::new(NS_PER_S, 0, 60 * NS_PER_S, 0);
        e.sample(100 * NS_PER_MS);
        e.sample(200 * NS_PER_MS);
        // RTTVAR = 3/4 * 50 + 1/4 * |100 - 200| = 62.5 ms; SRTT = 7/8 * 100 + 1/8 * 200 = 112.5 ms.
        assert_eq!(e.rttvar, 62_500_000);
        assert_eq!(e.srtt(), Some(112_500_000));
        assert_eq!(e.rto(), 112_500_000 + 250_000_000);
    }

    #[test]
    fn backoff_doubles_up_to_max_and_resets_on_sample() {
        let mut e = RttEstimator::new(3 * NS_PER_S, NS_PER_S, 60 * NS_PER_S, 0);
        let mut seen = vec![e.rto()];
        for _ in 0..6 {
            e.back_off();
            seen.push(e.rto());
        }
        let s: Vec<u64> = seen.iter().map(|t| t / NS_PER_S).collect();
        assert_eq!(s, vec![3, 6, 12, 24, 48, 60, 60]);
        e.sample(100 * NS_PER_MS);
        assert_eq!(e.rto(), NS_PER_S);
    }
}
