//! Threshold marker: marks every ECN-capable packet while the instantaneous queue exceeds K
//! (seed 000 section 5.1's "threshold scheme"; the DCTCP switch rule of RFC 8257 section 3.1;
//! spec section 8). No averaging and no randomness: a step marking function.
//!
//! On enqueue (or, with `mark_at = "dequeue"`, on departure), with q the queue without the
//! packet: if q > K, an ECN-capable packet is marked; a Not-ECT packet is dropped
//! (`nonect = "drop"`, seed 000) or let in unmarked (`nonect = "enqueue"`, as DCTCP switches do).
//!
//! K is a length in packets (`k_pkts`) or bytes (`k_bytes`), or a delay (`k_us`): on enqueue
//! the queue's delay is its bytes at the link rate (the time the packet will wait), on
//! departure the packet's sojourn time (the L4S step of RFC 9332 section 5.2 and Linux's
//! sch_dualpi2 `step_thresh`, and the time-based K that RFC 8257 section 3.1 leaves open).
//!
//! Parameters: exactly one of `k_pkts`, `k_bytes`, `k_us` (no default: seed 000 used 5 ms
//! times the link rate), `nonect` drop, `mark_at` enqueue, `ecn` true (false: every packet
//! above K is dropped, a hard threshold).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{signal_marks, valid, AqmAlgorithm, Context, PacketView, QueueView, Reason, Settings, Verdict};
use crate::engine::SimTime;
use crate::config::{check, ConfigError};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NonEct {
    /// Drop Not-ECT packets above K (seed 000).
    #[default]
    Drop,
    /// Let them in unmarked (only the hard limit drops them).
    Enqueue,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MarkAt {
    #[default]
    Enqueue,
    Dequeue,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ThresholdParams {
    /// Mark ECN-capable packets (false: drop every packet above K).
    pub ecn: bool,
    /// Threshold in packets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k_pkts: Option<u32>,
    /// Threshold in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k_bytes: Option<u64>,
    /// Threshold as a delay (microseconds): the queue's bytes at the link rate on enqueue, the
    /// packet's sojourn time on dequeue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k_us: Option<f64>,
    /// What happens to Not-ECT packets above K.
    pub nonect: NonEct,
    /// Decide on arrival or on departure.
    pub mark_at: MarkAt,
}

impl Default for ThresholdParams {
    fn default() -> Self {
        ThresholdParams { ecn: true, k_pkts: None, k_bytes: None, k_us: None, nonect: NonEct::Drop, mark_at: MarkAt::Enqueue }
    }
}

impl Settings for ThresholdParams {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        match (self.k_pkts, self.k_bytes, self.k_us) {
            (Some(_), Some(b), _) => check(false, valid::field(path, "k_bytes"), b, "cannot be given together with k_pkts"),
            (Some(_), None, Some(t)) => check(false, valid::field(path, "k_us"), t, "cannot be given together with k_pkts"),
            (None, Some(_), Some(t)) => check(false, valid::field(path, "k_us"), t, "cannot be given together with k_bytes"),
            (None, None, None) => check(false, path, "", "needs k_pkts, k_bytes or k_us (the threshold K)"),
            _ => Ok(()),
        }
    }

    fn targets_pkts(&self) -> Vec<(&'static str, f64)> {
        self.k_pkts.map(|v| ("k_pkts", v as f64)).into_iter().collect()
    }

    fn targets_bytes(&self) -> Vec<(&'static str, u64)> {
        self.k_bytes.map(|v| ("k_bytes", v)).into_iter().collect()
    }
}

#[derive(Debug)]
pub struct Threshold {
    pub params: ThresholdParams,
    /// `k_us` in nanoseconds.
    k_ns: Option<SimTime>,
    /// The rate of the link the queue feeds (bit/s), for `k_us` on enqueue.
    rate_bps: u64,
}

impl Threshold {
    pub fn new(params: ThresholdParams, rate_bps: u64) -> Threshold {
        let k_ns = params.k_us.map(|t| (t * 1e3).round() as SimTime);
        Threshold { params, k_ns, rate_bps }
    }

    fn verdict(&self, q: &QueueView, pkt: &PacketView, now: SimTime, departing: bool) -> Verdict {
        let above = match (self.params.k_pkts, self.params.k_bytes, self.k_ns) {
            (Some(k), _, _) => q.len_pkts > k,
            (None, Some(k), _) => q.len_bytes > k,
            // Sojourn time on departure.
            (None, None, Some(k)) if departing => now.saturating_sub(pkt.enqueued_at) > k,
            // On arrival, the queue's drain time at the link rate: bytes * 8 / rate > K, exactly.
            (None, None, Some(k)) => q.len_bytes as u128 * 8_000_000_000 > k as u128 * self.rate_bps as u128,
            (None, None, None) => false,
        };
        if !above || (self.params.nonect == NonEct::Enqueue && !signal_marks(self.params.ecn, pkt.ecn)) {
            Verdict::Pass
        } else {
            Verdict::Signal(Reason::Forced)
        }
    }
}

impl AqmAlgorithm for Threshold {
    type Params = ThresholdParams;
    const VARIABLES: &'static [&'static str] = &[];

    fn build(params: &ThresholdParams, ctx: Context) -> Threshold {
        Threshold::new(params.clone(), ctx.rate_bps)
    }

    fn on_enqueue(&mut self, q: &QueueView, pkt: &PacketView, now: SimTime) -> Verdict {
        match self.params.mark_at {
            MarkAt::Enqueue => self.verdict(q, pkt, now, false),
            MarkAt::Dequeue => Verdict::Pass,
        }
    }

    fn on_dequeue(&mut self, q: &QueueView, pkt: &PacketView, now: SimTime) -> Verdict {
        match self.params.mark_at {
            MarkAt::Enqueue => Verdict::Pass,
            MarkAt::Dequeue => self.verdict(q, pkt, now, true),
        }
    }

    fn ecn(&self) -> bool {
        self.params.ecn
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::tests::packet;
    use crate::packet::Ecn;

    #[test]
    fn marks_above_k_and_treats_not_ect_by_policy() {
        let mut t = Threshold::new(ThresholdParams { k_pkts: Some(10), ..Default::default() }, 10_000_000);
        let ect = packet(1500, Ecn::Ect0);
        let syn_ack = packet(40, Ecn::NotEct);
        let at = |n: u32| QueueView { len_pkts: n, len_bytes: n as u64 * 1500 };
        assert_eq!(t.on_enqueue(&at(10), &ect, 0), Verdict::Pass);
        assert_eq!(t.on_enqueue(&at(11), &ect, 0), Verdict::Signal(Reason::Forced));
        // Signal on a Not-ECT packet: the queue drops it.
        assert_eq!(t.on_enqueue(&at(11), &syn_ack, 0), Verdict::Signal(Reason::Forced));
        t.params.nonect = NonEct::Enqueue;
        assert_eq!(t.on_enqueue(&at(11), &syn_ack, 0), Verdict::Pass);
        assert_eq!(t.on_enqueue(&at(11), &ect, 0), Verdict::Signal(Reason::Forced));
        // In bytes, on departure.
        let mut t = Threshold::new(ThresholdParams { k_bytes: Some(3000), mark_at: MarkAt::Dequeue, ..Default::default() }, 10_000_000);
        assert_eq!(t.on_enqueue(&at(5), &ect, 0), Verdict::Pass);
        assert_eq!(t.on_dequeue(&at(2), &ect, 0), Verdict::Pass);
        assert_eq!(t.on_dequeue(&at(3), &ect, 0), Verdict::Signal(Reason::Forced));
    }

    #[test]
    fn k_in_time_is_the_drain_time_on_arrival_and_the_sojourn_on_departure() {
        // 1 ms at 12 Mb/s is 1500 bytes: marked above exactly that on arrival.
        let p = ThresholdParams { k_us: Some(1000.0), ..Default::default() };
        let mut t = Threshold::new(p.clone(), 12_000_000);
        let ect = packet(1500, Ecn::Ect0);
        let q = |b: u64| QueueView { len_pkts: 1, len_bytes: b };
        assert_eq!(t.on_enqueue(&q(1500), &ect, 0), Verdict::Pass);
        assert_eq!(t.on_enqueue(&q(1501), &ect, 0), Verdict::Signal(Reason::Forced));
        // At 120 Mb/s the same bytes drain in 0.1 ms: unmarked.
        let mut fast = Threshold::new(p.clone(), 120_000_000);
        assert_eq!(fast.on_enqueue(&q(1501), &ect, 0), Verdict::Pass);
        // On departure: the packet's own sojourn, whatever the queue behind it.
        let mut t = Threshold::new(ThresholdParams { mark_at: MarkAt::Dequeue, ..p }, 12_000_000);
        let waited = PacketView { enqueued_at: 5_000_000, ..ect };
        assert_eq!(t.on_dequeue(&q(0), &waited, 5_000_000 + 1_000_000), Verdict::Pass);
        assert_eq!(t.on_dequeue(&q(0), &waited, 5_000_000 + 1_000_001), Verdict::Signal(Reason::Forced));
        assert_eq!(t.on_dequeue(&q(1_000_000), &waited, 5_000_000 + 10), Verdict::Pass);
    }

    #[test]
    fn validate_needs_exactly_one_threshold() {
        let e = ThresholdParams::default().validate("aqm").unwrap_err();
        assert_eq!(e.to_string(), "aqm: needs k_pkts, k_bytes or k_us (the threshold K)");
        let both = ThresholdParams { k_pkts: Some(1), k_bytes: Some(2), ..Default::default() };
        assert_eq!(both.validate("aqm").unwrap_err().to_string(), "aqm.k_bytes (2) cannot be given together with k_pkts");
        let both = ThresholdParams { k_bytes: Some(2), k_us: Some(500.0), ..Default::default() };
        assert_eq!(both.validate("aqm").unwrap_err().to_string(), "aqm.k_us (500) cannot be given together with k_bytes");
        let both = ThresholdParams { k_pkts: Some(2), k_us: Some(500.0), ..Default::default() };
        assert_eq!(both.validate("aqm").unwrap_err().to_string(), "aqm.k_us (500) cannot be given together with k_pkts");
        ThresholdParams { k_us: Some(500.0), ..Default::default() }.validate("aqm").unwrap();
    }
}
