//! RED: Random Early Detection (Floyd and Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1993), with the variants of spec section 2: gentle mode,
//! the ns-2/ns-3 `wait` uniformization, byte mode, and the behaviour beyond max_th (RED, RED*,
//! ECNM). Adaptive RED (`ared.rs`) is this algorithm with its max_p adapted.
//!
//! Control law, on every arrival that fits in the buffer (q excludes the arrival):
//!   avg <- (1 - w_q) avg + w_q q; after an idle period of length t the ns-2/ns-3 form
//!   avg <- avg (1 - w_q)^(m + 1) + w_q q, m = floor(t / s), s = one mean packet's transmission
//!   time (spec 2.3);
//!   p_b = max_p (avg - min_th) / (max_th - min_th) between the thresholds, and in gentle mode
//!   max_p + (1 - max_p) (avg - max_th) / max_th up to 2 max_th (spec 2.4);
//!   count-based uniformization: p_a = p_b / (1 - count p_b) (FJ93), or with `wait` 0 until
//!   count p_b >= 1, then p_b / (2 - count p_b) (spec 2.5);
//!   beyond max_th (2 max_th in gentle mode) every arrival is signalled ("forced").
//!
//! Parameters (units in the names): `min_th_pkts` 5, `max_th_pkts` 15, `max_p` 0.1, `w_q` 0.002,
//! `gentle` true, `wait` true, `byte_mode` false, `mean_pkt_bytes` 500, `ecn` false,
//! `above_max` drop (spec 2.9, "ecnlab defaults"). In byte mode the queue is measured in bytes
//! and the thresholds are `th_pkts * mean_pkt_bytes` (ns-2).
//!
//! `min_queue_pkts` (default 0: off) is ns-2's rule never to signal while the instantaneous
//! queue holds fewer packets (ns-2.35 `queue/red.cc`, `REDQueue::enque`: no early or forced
//! signal unless `qlen > 1`, i.e. `min_queue_pkts = 2`); like ns-2 the count of arrivals since
//! the last signal restarts when the queue grows back. Not modelled: ns-2/ns-3's "old" flag (no
//! signal on the first arrival after avg crosses min_th).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{signal_marks, valid, AqmAlgorithm, Context, PacketView, QueueView, Reason, Settings, Verdict};
use crate::engine::{Rng, SimTime};
use crate::config::{check, ConfigError};

/// What happens to a packet signalled while the average queue is at or beyond max_th
/// (spec 2.7; the key ECN knob of seed 000).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AboveMax {
    /// Drop even ECN-capable packets (RFC 3168 section 7; "RED" in seed 000).
    #[default]
    Drop,
    /// Mark ECN-capable packets, drop the others (Linux `tc red ecn`; "RED*" in seed 000).
    Mark,
    /// Mark ECN-capable packets, let the others in: only overflow drops (ECNM, seed 001).
    Ecnm,
}

/// RED parameters (spec 2.2, defaults 2.9).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RedParams {
    /// Signals become CE marks for ECN-capable packets.
    pub ecn: bool,
    /// Minimum threshold of the average queue (packets; bytes = pkts * mean_pkt_bytes in byte mode).
    pub min_th_pkts: f64,
    /// Maximum threshold (packets).
    pub max_th_pkts: f64,
    /// Signal probability at max_th.
    pub max_p: f64,
    /// EWMA weight of the average queue.
    pub w_q: f64,
    /// Probability rises from max_p to 1 between max_th and 2 max_th instead of jumping to 1.
    pub gentle: bool,
    /// ns-2/ns-3 uniformization (gap between signals uniform on [1/p_b, 2/p_b]) instead of FJ93's.
    pub wait: bool,
    /// Measure the queue in bytes and scale the probability by packet size / mean_pkt_bytes.
    pub byte_mode: bool,
    /// Typical packet size (bytes): idle-time decay, byte-mode thresholds and scaling.
    pub mean_pkt_bytes: u32,
    /// Treatment of signals at or beyond max_th.
    pub above_max: AboveMax,
    /// Signal only while the queue (the arrival excluded) holds at least this many packets;
    /// 0: whatever the queue. ns-2.35's RED: 2 (it never signals while the queue holds at most
    /// one packet).
    #[serde(skip_serializing_if = "is_zero")]
    pub min_queue_pkts: u32,
}

/// Serde helper: leave a field at its default 0 out of the normalized scenario.
pub(crate) fn is_zero(x: &u32) -> bool {
    *x == 0
}

impl Default for RedParams {
    fn default() -> Self {
        RedParams {
            ecn: false,
            min_th_pkts: 5.0,
            max_th_pkts: 15.0,
            max_p: 0.1,
            w_q: 0.002,
            gentle: true,
            wait: true,
            byte_mode: false,
            mean_pkt_bytes: 500,
            above_max: AboveMax::Drop,
            min_queue_pkts: 0,
        }
    }
}

impl Settings for RedParams {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        valid::non_negative(self.min_th_pkts, path, "min_th_pkts")?;
        valid::positive(self.max_th_pkts, path, "max_th_pkts")?;
        check(
            self.min_th_pkts <= self.max_th_pkts,
            valid::field(path, "min_th_pkts"),
            self.min_th_pkts,
            format_args!("must not be above max_th_pkts ({})", self.max_th_pkts),
        )?;
        valid::fraction(self.max_p, path, "max_p")?;
        valid::fraction(self.w_q, path, "w_q")?;
        check(self.mean_pkt_bytes >= 1, valid::field(path, "mean_pkt_bytes"), self.mean_pkt_bytes, "must be at least 1")
    }

    fn targets_pkts(&self) -> Vec<(&'static str, f64)> {
        vec![("min_th_pkts", self.min_th_pkts)]
    }
}

/// Counters beyond the queue's (which counts every outcome by reason).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RedStats {
    /// Arrivals that found the link idle (and decayed the average).
    pub idle_arrivals: u64,
}

/// Idle periods (in mean packet times) whose decay factor [`Red`] keeps in a table.
const DECAY_TABLE: usize = 64;

#[derive(Debug)]
pub struct Red {
    pub params: RedParams,
    /// Thresholds in queue units (packets, or bytes in byte mode).
    min_th: f64,
    max_th: f64,
    /// Mean packets per nanosecond the link can send (idle decay: m = idle time * this).
    pkts_per_ns: f64,
    /// `(1 - w_q)^m` for m below [`DECAY_TABLE`], by `powf` at construction: the values the
    /// idle decay would compute per arrival, without a libm call for the short idle spells.
    decay: [f64; DECAY_TABLE],
    /// Average queue, in queue units.
    pub avg: f64,
    /// Arrivals since the last signal while avg is between the thresholds (-1: none, FJ93).
    pub count: i64,
    /// Bytes of those arrivals (byte mode).
    count_bytes: u64,
    /// The link is idle (queue empty and nothing in transmission) since `idle_since`.
    idle: bool,
    idle_since: SimTime,
    rng: Rng,
    pub stats: RedStats,
}

impl Red {
    /// A RED queue on a link of `link_rate_bps`, drawing from `rng`.
    pub fn new(params: RedParams, link_rate_bps: u64, rng: Rng) -> Red {
        let unit = if params.byte_mode { params.mean_pkt_bytes as f64 } else { 1.0 };
        Red {
            min_th: params.min_th_pkts * unit,
            max_th: params.max_th_pkts * unit,
            pkts_per_ns: link_rate_bps as f64 / (8.0 * params.mean_pkt_bytes as f64) / 1e9,
            decay: std::array::from_fn(|m| (1.0 - params.w_q).powf(m as f64)),
            params,
            avg: 0.0,
            count: -1,
            count_bytes: 0,
            idle: true,
            idle_since: 0,
            rng,
            stats: RedStats::default(),
        }
    }

    /// Thresholds in queue units (for tests and Adaptive RED).
    pub fn thresholds(&self) -> (f64, f64) {
        (self.min_th, self.max_th)
    }

    /// The average the next arrival would start from at `now` (decayed if the link is idle).
    pub(super) fn avg_at(&self, now: SimTime) -> f64 {
        if self.idle {
            // m = floor(t / s): the product is finite and not negative, so truncation is its
            // floor (no libm call; beyond 2^64 the power is 0 either way).
            let m = (now.saturating_sub(self.idle_since) as f64 * self.pkts_per_ns) as u64;
            let factor = if m < DECAY_TABLE as u64 {
                self.decay[m as usize]
            } else {
                (1.0 - self.params.w_q).powf(m as f64)
            };
            self.avg * factor
        } else {
            self.avg
        }
    }

    /// Spec 2.3: the EWMA, with the ns-2/ns-3 idle decay `(1 - w_q)^(m + 1)`.
    pub(super) fn update_avg(&mut self, q: f64, now: SimTime) {
        let w = self.params.w_q;
        if self.idle {
            self.avg = self.avg_at(now) * (1.0 - w) + w * q;
            self.idle = false;
            self.stats.idle_arrivals += 1;
        } else {
            self.avg = (1.0 - w) * self.avg + w * q;
        }
    }

    /// Spec 2.4: the base probability for the current average (gentle slope from the current
    /// max_p, so Adaptive RED's changes apply to it, spec 2.8).
    pub fn base_probability(&self, avg: f64) -> f64 {
        let (min, max, max_p) = (self.min_th, self.max_th, self.params.max_p);
        if avg < min {
            0.0
        } else if avg < max {
            let span = if max > min { max - min } else { 1.0 };
            max_p * (avg - min) / span
        } else if self.params.gentle && avg < 2.0 * max {
            max_p + (1.0 - max_p) * (avg - max) / max
        } else {
            1.0
        }
    }

    /// Spec 2.5: the probability for this arrival, given p_b and the arrivals since the last
    /// signal (`count`, in mean packets in byte mode).
    pub fn uniformize(p_b: f64, count: f64, wait: bool) -> f64 {
        let cp = count * p_b;
        if wait {
            if cp < 1.0 {
                0.0
            } else if cp < 2.0 {
                p_b / (2.0 - cp)
            } else {
                1.0
            }
        } else if cp >= 1.0 {
            1.0
        } else {
            p_b / (1.0 - cp)
        }
    }

    /// A signal at or beyond max_th, treated per `above_max` (spec 2.7).
    fn above_max(&self, pkt: &PacketView, reason: Reason) -> Verdict {
        match self.params.above_max {
            AboveMax::Drop => Verdict::Drop(reason),
            AboveMax::Mark => Verdict::Signal(reason),
            AboveMax::Ecnm if signal_marks(self.params.ecn, pkt.ecn) => Verdict::Signal(reason),
            AboveMax::Ecnm => Verdict::Pass,
        }
    }

    /// RED's decision (spec 2.4-2.7) for `pkt` on the current average (RIO and CHOKe update
    /// their averages themselves, then call this).
    pub(super) fn decide(&mut self, pkt: &PacketView) -> Verdict {
        let avg = self.avg;
        let p = &self.params;
        if avg < self.min_th {
            self.count = -1;
            self.count_bytes = 0;
            return Verdict::Pass;
        }
        let p_b = self.base_probability(avg);
        if p_b >= 1.0 {
            // Forced region: every arrival, and count restarts (ns-2 after a forced drop).
            self.count = 0;
            self.count_bytes = 0;
            return self.above_max(pkt, Reason::Forced);
        }
        self.count += 1;
        self.count_bytes += pkt.size as u64;
        let p_a = if p.byte_mode {
            // ns-2/ns-3: count in mean packets, then scale by this packet's size (spec 2.6).
            let mean = p.mean_pkt_bytes as f64;
            let pa = Red::uniformize(p_b, self.count_bytes as f64 / mean, p.wait);
            if pa < 1.0 {
                (pa * pkt.size as f64 / mean).min(1.0)
            } else {
                pa
            }
        } else {
            Red::uniformize(p_b, self.count as f64, p.wait)
        };
        if self.rng.uniform() < p_a {
            self.count = 0;
            self.count_bytes = 0;
            if avg >= self.max_th {
                // The gentle band: probabilistic, but beyond max_th.
                return self.above_max(pkt, Reason::Early);
            }
            return Verdict::Signal(Reason::Early);
        }
        Verdict::Pass
    }
}

impl AqmAlgorithm for Red {
    type Params = RedParams;
    const VARIABLES: &'static [&'static str] = &["avg", "max_p"];

    fn build(params: &RedParams, ctx: Context) -> Red {
        Red::new(params.clone(), ctx.rate_bps, ctx.rng)
    }

    fn on_enqueue(&mut self, q: &QueueView, pkt: &PacketView, now: SimTime) -> Verdict {
        let qlen = if self.params.byte_mode { q.len_bytes as f64 } else { q.len_pkts as f64 };
        self.update_avg(qlen, now);
        if q.len_pkts < self.params.min_queue_pkts {
            // ns-2: no signal on a (nearly) empty queue; the count restarts from there.
            if self.avg >= self.min_th {
                self.count = 0;
                self.count_bytes = 0;
            }
            return Verdict::Pass;
        }
        self.decide(pkt)
    }

    fn on_idle(&mut self, now: SimTime) {
        if !self.idle {
            self.idle = true;
            self.idle_since = now;
        }
    }

    fn ecn(&self) -> bool {
        self.params.ecn
    }

    fn sample(&mut self, _now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        out("avg", self.avg);
        out("max_p", self.params.max_p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::tests::packet;
    use crate::packet::Ecn;

    fn red(params: RedParams) -> Red {
        Red::new(params, 10_000_000, Rng::from_seed(1))
    }

    fn view(pkts: u32) -> QueueView {
        QueueView { len_pkts: pkts, len_bytes: pkts as u64 * 1000 }
    }

    #[test]
    fn min_queue_pkts_keeps_a_nearly_empty_queue_from_signalling() {
        let pkt = packet(1000, Ecn::NotEct);
        // The average far beyond 2 max_th (a small w_q keeps it there): every arrival is
        // signalled, except, with ns-2's rule, while fewer than 2 packets wait.
        let params = RedParams { w_q: 1e-6, min_th_pkts: 1.0, max_th_pkts: 2.0, ..Default::default() };
        let mut plain = red(params.clone());
        let mut ns2 = red(RedParams { min_queue_pkts: 2, ..params });
        plain.avg = 10.0;
        ns2.avg = 10.0;
        for q in [0, 1] {
            assert_eq!(plain.on_enqueue(&view(q), &pkt, 1_000), Verdict::Drop(Reason::Forced));
            assert_eq!(ns2.on_enqueue(&view(q), &pkt, 1_000), Verdict::Pass, "queue {q}");
        }
        assert_eq!(ns2.on_enqueue(&view(2), &pkt, 1_000), Verdict::Drop(Reason::Forced));
        // Between the thresholds (p_b 0.5 at avg 1.5, `wait`): a pass at a short queue restarts
        // the count, so the next arrival (count 1, count p_b < 1) is never signalled.
        let mut r = red(RedParams { w_q: 1e-6, min_th_pkts: 1.0, max_th_pkts: 2.0, max_p: 0.5, min_queue_pkts: 2, ..Default::default() });
        r.avg = 1.5;
        r.count = 50;
        assert_eq!(r.on_enqueue(&view(1), &pkt, 1_000), Verdict::Pass);
        assert_eq!(r.count, 0);
        assert_eq!(r.on_enqueue(&view(5), &pkt, 1_000), Verdict::Pass, "count 1: wait");
    }

    #[test]
    fn spec_part_v_vectors() {
        let r = red(RedParams::default());
        // min 5, max 15, max_p 0.1, avg 10 -> 0.05; gentle, avg 20 -> 0.4.
        assert!((r.base_probability(10.0) - 0.05).abs() < 1e-12);
        assert!((r.base_probability(20.0) - 0.4).abs() < 1e-12);
        assert_eq!(r.base_probability(4.9), 0.0);
        assert_eq!(r.base_probability(30.0), 1.0);
        // FJ93: p_b 0.05, count 10 -> 0.1; wait: count 10 -> 0, count 30 -> 0.1.
        assert!((Red::uniformize(0.05, 10.0, false) - 0.1).abs() < 1e-12);
        assert_eq!(Red::uniformize(0.05, 10.0, true), 0.0);
        assert!((Red::uniformize(0.05, 30.0, true) - 0.1).abs() < 1e-12);
        assert_eq!(Red::uniformize(0.05, 20.0, false), 1.0);
        let not_gentle = red(RedParams { gentle: false, ..Default::default() });
        assert_eq!(not_gentle.base_probability(15.0), 1.0);
    }

    #[test]
    fn average_follows_the_ewma_and_decays_over_idle_time() {
        let mut r = red(RedParams { w_q: 0.5, ..Default::default() });
        let p = packet(500, Ecn::NotEct);
        // First arrival at t = 0 on an idle link: m = 0, avg = 0 * 0.5 + 0.5 * q.
        r.on_enqueue(&view(4), &p, 0);
        assert_eq!(r.avg, 2.0);
        r.on_enqueue(&view(6), &p, 1);
        assert_eq!(r.avg, 4.0);
        // Idle from 1 ms: at 10 Mb/s a 500-B packet takes 400 us, so 1.2 ms later m = 3 and
        // avg = 4 * 0.5^(3 + 1) + 0.5 * 0 = 0.25.
        r.on_idle(1_000_000);
        r.on_enqueue(&view(0), &p, 2_200_000);
        assert_eq!(r.avg, 0.25);
        assert_eq!(r.stats.idle_arrivals, 2);
    }

    #[test]
    fn idle_decay_from_the_table_is_the_power_bit_for_bit() {
        // Idle spells from a fraction of a packet time to well past the table, on an odd
        // w_q: the decayed average equals avg * (1 - w_q)^floor(t / s) by `powf`, exactly.
        let w_q = 0.0023;
        let mut r = red(RedParams { w_q, ..Default::default() });
        r.avg = 37.25;
        r.on_idle(0);
        let s_ns = 1e9 / r.pkts_per_ns;
        for k in 0..(3 * DECAY_TABLE as u64) {
            for t in [k as f64 * s_ns, (k as f64 + 0.5) * s_ns, (k as f64 + 1.0) * s_ns - 1.0] {
                let t = t as SimTime;
                let m = (t as f64 * r.pkts_per_ns).floor();
                let want = 37.25 * (1.0 - w_q).powf(m);
                assert_eq!(r.avg_at(t).to_bits(), want.to_bits(), "t = {t} ns, m = {m}");
            }
        }
    }

    /// Arrivals with the average held at `avg`: fraction signalled, and the verdicts seen.
    fn signal_rate(params: RedParams, q: u32, pkt: &PacketView, n: usize) -> (f64, Vec<Verdict>) {
        let mut r = red(RedParams { w_q: 1.0, ..params });
        let mut v = Vec::new();
        for i in 0..n {
            v.push(r.on_enqueue(&view(q), pkt, i as u64));
        }
        let s = v.iter().filter(|v| **v != Verdict::Pass).count();
        (s as f64 / n as f64, v)
    }

    #[test]
    fn uniformized_signals_come_at_the_rate_of_the_law() {
        let p = packet(500, Ecn::NotEct);
        // avg 10: p_b = 0.05 = 1/20. FJ93: the k-th arrival after a signal has p_a = 1/(20 - k),
        // so gaps are uniform on 1..=19: mean 10.
        let (rate, _) = signal_rate(RedParams { wait: false, ..Default::default() }, 10, &p, 200_000);
        assert!((rate - 1.0 / 10.0).abs() < 0.002, "FJ93 rate {rate}");
        // wait: p_a = 0 before k = 20, then 1/(40 - k): gaps uniform on 20..=39, mean 29.5.
        let (rate, _) = signal_rate(RedParams::default(), 10, &p, 200_000);
        assert!((rate - 1.0 / 29.5).abs() < 0.001, "wait rate {rate}");
    }

    #[test]
    fn beyond_max_th_red_drops_red_star_marks_ecnm_never_drops() {
        let ect = packet(500, Ecn::Ect0);
        let not_ect = packet(500, Ecn::NotEct);
        let base = RedParams { ecn: true, gentle: false, ..Default::default() };
        let (rate, v) = signal_rate(base.clone(), 20, &ect, 10);
        assert_eq!(rate, 1.0);
        assert!(v.iter().all(|v| *v == Verdict::Drop(Reason::Forced)));
        let mark = RedParams { above_max: AboveMax::Mark, ..base.clone() };
        let (_, v) = signal_rate(mark, 20, &ect, 10);
        assert!(v.iter().all(|v| *v == Verdict::Signal(Reason::Forced)));
        let ecnm = RedParams { above_max: AboveMax::Ecnm, ..base.clone() };
        let (_, v) = signal_rate(ecnm.clone(), 20, &ect, 10);
        assert!(v.iter().all(|v| *v == Verdict::Signal(Reason::Forced)));
        let (rate, _) = signal_rate(ecnm.clone(), 20, &not_ect, 10);
        assert_eq!(rate, 0.0, "ECNM lets Not-ECT packets in beyond max_th");
        // In the probabilistic region every variant signals (the queue marks or drops).
        let (_, v) = signal_rate(ecnm, 10, &ect, 1000);
        assert!(v.iter().all(|v| matches!(v, Verdict::Pass | Verdict::Signal(Reason::Early))));
    }

    #[test]
    fn byte_mode_measures_bytes_and_scales_by_size() {
        let params = RedParams { byte_mode: true, wait: false, ..Default::default() };
        let r = red(params.clone());
        assert_eq!(r.thresholds(), (2500.0, 7500.0));
        // avg 5000 bytes: p_b 0.05. Mean-sized packets behave as in packet mode (rate 1/10);
        // 250-B packets count half a mean packet each and their probability is halved, so they
        // are signalled less often per packet.
        let small = packet(250, Ecn::NotEct);
        let mean = packet(500, Ecn::NotEct);
        let mut rs = red(RedParams { w_q: 1.0, ..params.clone() });
        let mut rm = red(RedParams { w_q: 1.0, ..params });
        let q = QueueView { len_pkts: 10, len_bytes: 5000 };
        let (mut ns, mut nm) = (0, 0);
        for i in 0..100_000 {
            ns += (rs.on_enqueue(&q, &small, i) != Verdict::Pass) as u32;
            nm += (rm.on_enqueue(&q, &mean, i) != Verdict::Pass) as u32;
        }
        assert!((nm as f64 / 1e5 - 1.0 / 10.0).abs() < 0.003, "mean-size rate {}", nm as f64 / 1e5);
        assert!((ns as f64) < 0.7 * nm as f64, "small {ns} vs mean {nm}");
    }

    #[test]
    fn validate_names_both_thresholds() {
        let e = RedParams { min_th_pkts: 30.0, max_th_pkts: 20.0, ..Default::default() }
            .validate("aqm")
            .unwrap_err();
        assert_eq!(e.to_string(), "aqm.min_th_pkts (30) must not be above max_th_pkts (20)");
        let e = RedParams { max_p: 1.5, ..Default::default() }.validate("aqm").unwrap_err();
        assert_eq!(e.to_string(), "aqm.max_p (1.5) must be in (0, 1]");
        assert!(RedParams::default().validate("aqm").is_ok());
    }
}
