//! PI2: the PI controller on queue delay with a squared output for Classic traffic (De Schepper,
//! Bondarenko, Tsang, Briscoe, "PI2: A Linearized AQM for both Classic and Scalable TCP", ACM
//! CoNEXT 2016), as a single-queue discipline, in the form RFC 9332 Appendix A gives it (the
//! base AQM of DualPI2, [`super::dualpi2`], which shares [`Pi2Controller`] and the
//! decisions below).
//!
//! Every `t_update_us`, from time 0 (RFC 9332 A.1, `dualpi2_update`), with `q` the queuing
//! time of the packet at the head of the queue (0 when empty) in seconds:
//!   p' <- clamp(p' + alpha (q - target) + beta (q - q_old), 0, 1);  q_old <- q.
//! Packets are judged as they leave the queue (RFC 9332 A.1 marks and drops at dequeue):
//! - Classic (Not-ECT, ECT(0)) with p_C = p'^2, drawn as `p' > max(u1, u2)` with two uniform
//!   numbers, which is true with probability p'^2 (the paper's "think twice to drop";
//!   RFC 9332 A.2). A signal marks an ECN-capable packet when `ecn` is on and drops the
//!   others.
//! - Scalable (ECT(1), CE), when `scalable` is on, with p_L = min(k p', 1) (`coupling_factor`
//!   k), always as a CE mark: so p_C = (p_L / k)^2, the coupling that gives Classic and
//!   Scalable flows of equal RTT equal rates (RFC 9332 section 2.1; the paper section 5).
//! - Overload (RFC 9332 A.1 and section 4.2.3, "drop on saturation"): once p_C reaches
//!   p_Cmax = min(1 / k^2, 1), where the Scalable probability saturates, ECN-capable Classic
//!   packets are dropped rather than marked, and Scalable packets are dropped with p_C and
//!   marked otherwise. With `drop_on_overload` off, p' stays at most min(1 / k, 1) and nothing
//!   is dropped for overload (Linux `sch_dualpi2` `drop_overload = overflow`).
//!
//! The updates run lazily (see [`super::Periodic`]): the head's queuing time at an update time
//! t is t minus its enqueue time, and the head only changes at packet events, which the
//! discipline sees, so catching up at each event gives exactly the timer's values.
//!
//! Defaults (RFC 9332 A.1, Figure 2): `target_us` 15000; `t_update_us` 16000 and
//! `alpha_hz` 0.16, `beta_hz` 3.2, from alpha = 0.1 Tupdate / RTT_max^2 and
//! beta = 0.3 / RTT_max with RTT_max = 100 ms (Linux `sch_dualpi2` uses the same values);
//! `coupling_factor` 2 (RFC 9332 section 2.1); `scalable` true (the paper treats ECT(1) as
//! Scalable); `drop_on_overload` true (RFC 9332 section 4.2.3); `ecn` true (RFC 9332 A.1 marks
//! ECN-capable Classic packets); `min_backlog_bytes` 0 (the RFC has no such floor; Linux
//! never signals while less than 2 MTU are queued, 3000 here).

use std::collections::VecDeque;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{valid, Action, Context, Discipline, Enqueue, Limits, QueueDisc, QueueStats, QueueView, Reason, Settings, Verdict};
use crate::config::{check, ConfigError};
use crate::engine::time::NS_PER_US;
use crate::engine::{Rng, SimTime};
use crate::packet::{Ecn, Packet, PacketId, PacketPool};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Pi2Params {
    /// Classic signals become CE marks for ECN-capable (ECT(0)) packets.
    pub ecn: bool,
    /// Target queuing delay of the PI controller (us; RFC 9332 A.1: 15 ms).
    pub target_us: f64,
    /// Controller update period Tupdate (us; RFC 9332 A.1: 16 ms).
    pub t_update_us: f64,
    /// Integral gain alpha (Hz; RFC 9332 A.1: 0.16).
    pub alpha_hz: f64,
    /// Proportional gain beta (Hz; RFC 9332 A.1: 3.2).
    pub beta_hz: f64,
    /// Coupling factor k between the Scalable and the base probability (RFC 9332 section 2.1: 2).
    pub coupling_factor: f64,
    /// Treat ECT(1) and CE packets as Scalable (marked with k p'); off, every packet is Classic.
    pub scalable: bool,
    /// Drop instead of mark once the Scalable probability saturates (RFC 9332 section 4.2.3).
    pub drop_on_overload: bool,
    /// No signal while fewer bytes than this are queued (bytes; 0: none, as RFC 9332; Linux 2 MTU).
    pub min_backlog_bytes: u64,
}

impl Default for Pi2Params {
    fn default() -> Self {
        Pi2Params {
            ecn: true,
            target_us: 15_000.0,
            t_update_us: 16_000.0,
            alpha_hz: 0.16,
            beta_hz: 3.2,
            coupling_factor: 2.0,
            scalable: true,
            drop_on_overload: true,
            min_backlog_bytes: 0,
        }
    }
}

/// Checks the parameters the PI2 controller shares between `pi2` and `dualpi2`.
pub(crate) fn validate_controller(target_us: f64, t_update_us: f64, alpha_hz: f64, beta_hz: f64, k: f64, path: &str) -> Result<(), ConfigError> {
    valid::positive(target_us, path, "target_us")?;
    check(t_update_us >= 1.0 && t_update_us.is_finite(), valid::field(path, "t_update_us"), t_update_us, "must be at least 1 (1 us)")?;
    valid::non_negative(alpha_hz, path, "alpha_hz")?;
    valid::non_negative(beta_hz, path, "beta_hz")?;
    valid::positive(k, path, "coupling_factor")
}

impl Settings for Pi2Params {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        validate_controller(self.target_us, self.t_update_us, self.alpha_hz, self.beta_hz, self.coupling_factor, path)
    }
}

/// Acts on a dequeued packet's verdict (PI2's and DualPI2's dequeue): counts a drop for
/// overload in `overload_drops`, then the action in `stats`; `Some(marked)` if the packet goes
/// to the link.
pub(crate) fn depart(verdict: Verdict, ecn: bool, pkt: &mut Packet, overload_drops: &mut u64, stats: &mut QueueStats) -> Option<bool> {
    if matches!(verdict, Verdict::Drop(_)) {
        *overload_drops += 1;
    }
    stats.departure(pkt.kind, verdict.act(ecn, pkt))
}

/// Microseconds (validated finite, non-negative) to simulator time.
pub(crate) fn from_us(us: f64) -> SimTime {
    (us * NS_PER_US as f64).round() as SimTime
}

/// The PI controller of PI2 and DualPI2 (RFC 9332 A.1 `dualpi2_update`): the base
/// probability p' and what it implies.
#[derive(Debug)]
pub struct Pi2Controller {
    /// The base probability p'.
    pub p: f64,
    /// Queuing time at the previous update (s).
    q_old: f64,
    timer: super::Periodic,
    /// Target (s).
    target: f64,
    alpha: f64,
    beta: f64,
    /// Coupling factor k.
    pub k: f64,
    /// Upper bound of p': 1, or 1 / k without drop on overload (so that k p' <= 1).
    p_cap: f64,
    /// p_Cmax = min(1 / k^2, 1), or infinite without drop on overload.
    p_c_max: f64,
}

impl Pi2Controller {
    pub fn new(target_us: f64, t_update_us: f64, alpha_hz: f64, beta_hz: f64, k: f64, drop_on_overload: bool) -> Pi2Controller {
        Pi2Controller {
            p: 0.0,
            q_old: 0.0,
            timer: super::Periodic::new(from_us(t_update_us)),
            target: target_us * 1e-6,
            alpha: alpha_hz,
            beta: beta_hz,
            k,
            p_cap: if drop_on_overload { 1.0 } else { (1.0 / k).min(1.0) },
            p_c_max: if drop_on_overload { (1.0 / (k * k)).min(1.0) } else { f64::INFINITY },
        }
    }

    /// Runs the updates due at or before `now`; `delay(t)` is the queuing time (ns) the
    /// controller samples at update time `t`, `idle` that it is 0 at every such time.
    #[inline]
    pub fn catch_up(&mut self, now: SimTime, idle: bool, delay: impl Fn(SimTime) -> SimTime) {
        if idle && self.p == 0.0 && self.q_old == 0.0 {
            // The fixed point of the law with q = 0 (p' only falls): skip the updates.
            if self.timer.next <= now {
                let missed = (now - self.timer.next) / self.timer.period + 1;
                self.timer.next += missed * self.timer.period;
            }
            return;
        }
        while let Some(t) = self.timer.due(now) {
            let q = delay(t) as f64 * 1e-9;
            self.p = (self.p + self.alpha * (q - self.target) + self.beta * (q - self.q_old)).clamp(0.0, self.p_cap);
            self.q_old = q;
        }
    }

    /// p_C = p'^2 (RFC 9332 A.1).
    pub fn p_c(&self) -> f64 {
        self.p * self.p
    }

    /// p_CL = min(k p', 1) (RFC 9332 A.1).
    pub fn p_cl(&self) -> f64 {
        (self.k * self.p).min(1.0)
    }

    /// Whether p_C has reached p_Cmax: ECN is off for Classic packets and Scalable packets
    /// see Classic drops (RFC 9332 A.1 and section 4.2.3).
    pub fn overloaded(&self) -> bool {
        self.p_c() >= self.p_c_max
    }

    /// The verdict for a Classic packet: a signal with probability p'^2, drawn as
    /// `p' > max(u1, u2)`; a drop whatever the ECN codepoint under overload.
    #[inline]
    pub fn classic(&self, rng: &mut Rng) -> Verdict {
        if self.p > 0.0 && self.p > rng.uniform().max(rng.uniform()) {
            if self.overloaded() {
                Verdict::Drop(Reason::Early)
            } else {
                Verdict::Signal(Reason::Early)
            }
        } else {
            Verdict::Pass
        }
    }

    /// The verdict for a Scalable packet with native probability `p_native` (0 without a
    /// native AQM): a signal with p_L = max(p_native, p_CL) (RFC 9332 A.1's combining
    /// function); under overload a Classic drop (p'^2) first, then a mark for the rest.
    #[inline]
    pub fn scalable(&self, p_native: f64, rng: &mut Rng) -> (Verdict, f64) {
        if self.overloaded() {
            if self.p > rng.uniform().max(rng.uniform()) {
                return (Verdict::Drop(Reason::Early), 1.0);
            }
            return (Verdict::Signal(Reason::Forced), 1.0);
        }
        let p_l = p_native.max(self.p_cl());
        let v = if p_l >= 1.0 {
            Verdict::Signal(Reason::Forced)
        } else if p_l > 0.0 && rng.uniform() < p_l {
            Verdict::Signal(Reason::Early)
        } else {
            Verdict::Pass
        };
        (v, p_l)
    }
}

/// Whether a packet with codepoint `e` is L4S-identified (RFC 9331 section 5.1, RFC 9332 A.1
/// classifier: ECT(1) or CE).
#[inline]
pub fn is_l4s(e: Ecn) -> bool {
    matches!(e, Ecn::Ect1 | Ecn::Ce)
}

/// A FIFO of packet ids with its byte count and the enqueue time of its head.
#[derive(Debug, Default)]
pub(crate) struct Lane {
    pkts: VecDeque<PacketId>,
    pub bytes: u64,
    /// Enqueue time of the head (meaningless when empty).
    pub head_ts: SimTime,
}

impl Lane {
    pub fn with_capacity(n: usize) -> Lane {
        Lane { pkts: VecDeque::with_capacity(n), bytes: 0, head_ts: 0 }
    }

    #[inline]
    pub fn len(&self) -> u32 {
        self.pkts.len() as u32
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pkts.is_empty()
    }

    /// The head's queuing time at `t` (0 when empty).
    #[inline]
    pub fn delay_at(&self, t: SimTime) -> SimTime {
        if self.is_empty() {
            0
        } else {
            t.saturating_sub(self.head_ts)
        }
    }

    /// Appends `id` (of `size` bytes, enqueued at `now`).
    #[inline]
    pub fn push(&mut self, id: PacketId, size: u32, now: SimTime) {
        if self.pkts.is_empty() {
            self.head_ts = now;
        }
        self.pkts.push_back(id);
        self.bytes += size as u64;
    }

    /// Takes the head out.
    #[inline]
    pub fn pop(&mut self, pool: &PacketPool) -> Option<PacketId> {
        let id = self.pkts.pop_front()?;
        self.bytes -= pool.get(id).size as u64;
        if let Some(&next) = self.pkts.front() {
            self.head_ts = pool.get(next).enqueued_at;
        }
        Some(id)
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pi2Stats {
    /// Packets judged as Scalable at dequeue.
    pub scalable_pkts: u64,
    /// Packets dropped for overload (ECN-capable Classic or Scalable).
    pub overload_drops: u64,
}

/// PI2 on one FIFO.
#[derive(Debug)]
pub struct Pi2 {
    pub params: Pi2Params,
    pub pi: Pi2Controller,
    q: Lane,
    limits: Limits,
    rng: Rng,
    pub stats: Pi2Stats,
}

impl Discipline for Pi2 {
    type Params = Pi2Params;
    const VARIABLES: &'static [&'static str] = &["p", "p_c", "p_l", "qdelay_ms"];
    fn build(p: &Pi2Params, ctx: Context) -> Pi2 {
        Pi2 {
            pi: Pi2Controller::new(p.target_us, p.t_update_us, p.alpha_hz, p.beta_hz, p.coupling_factor, p.drop_on_overload),
            q: Lane::with_capacity(64),
            limits: Limits::of(&ctx),
            rng: ctx.rng,
            stats: Pi2Stats::default(),
            params: p.clone(),
        }
    }
}

impl Pi2 {
    fn catch_up(&mut self, now: SimTime) {
        let q = &self.q;
        self.pi.catch_up(now, q.is_empty(), |t| q.delay_at(t));
    }
}

impl QueueDisc for Pi2 {
    fn enqueue(&mut self, pool: &mut PacketPool, id: PacketId, now: SimTime, stats: &mut QueueStats, _dropped: &mut Vec<PacketId>) -> Enqueue {
        self.catch_up(now);
        let pkt = pool.get_mut(id);
        let view = QueueView { len_pkts: self.q.len(), len_bytes: self.q.bytes };
        if !self.limits.fit(&view, pkt.size) {
            return stats.arrival(pkt.kind, Action::Drop(Reason::Overflow));
        }
        pkt.enqueued_at = now;
        self.q.push(id, pkt.size, now);
        stats.arrival(pkt.kind, Action::Keep)
    }

    fn dequeue(&mut self, pool: &mut PacketPool, now: SimTime, stats: &mut QueueStats, dropped: &mut Vec<PacketId>) -> Option<(PacketId, bool)> {
        self.catch_up(now);
        loop {
            let id = self.q.pop(pool)?;
            let pkt = pool.get_mut(id);
            let scalable = self.params.scalable && is_l4s(pkt.ecn);
            if scalable {
                self.stats.scalable_pkts += 1;
            }
            let (verdict, ecn) = if self.q.bytes < self.params.min_backlog_bytes {
                (Verdict::Pass, true)
            } else if scalable {
                (self.pi.scalable(0.0, &mut self.rng).0, true)
            } else {
                (self.pi.classic(&mut self.rng), self.params.ecn)
            };
            match depart(verdict, ecn, pkt, &mut self.stats.overload_drops, stats) {
                Some(marked) => return Some((id, marked)),
                None => dropped.push(id),
            }
        }
    }

    fn len_pkts(&self) -> u32 {
        self.q.len()
    }

    fn len_bytes(&self) -> u64 {
        self.q.bytes
    }

    fn went_idle(&mut self, _at: SimTime) {}

    fn sample(&mut self, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        self.catch_up(now);
        out("p", self.pi.p);
        out("p_c", self.pi.p_c());
        out("p_l", if self.params.scalable { self.pi.p_cl() } else { 0.0 });
        out("qdelay_ms", self.q.delay_at(now) as f64 / 1e6);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::harness::{drive, every, mark_fractions, merged, MS};
    use crate::aqm::tests::queue;
    use crate::aqm::{AqmConfig, Disc};

    fn pi2(p: Pi2Params) -> crate::aqm::Queue {
        queue(AqmConfig::Pi2(p), (Some(10_000), None))
    }

    #[test]
    fn the_controller_follows_the_rfc_update() {
        // One packet sits in the queue from t = 5 ms: the updates at 16, 32, 48 ms see
        // 11, 27, 43 ms; an oracle of RFC 9332 A.1's dualpi2_update gives p' after each.
        let mut pool = PacketPool::new();
        let mut q = pi2(Pi2Params::default());
        let id = pool.alloc(crate::aqm::tests::sim_packet(crate::packet::PacketKind::Data, 1500, Ecn::NotEct));
        q.enqueue(&mut pool, id, 5 * MS, &mut Vec::new());
        let (alpha, beta, target) = (0.16, 3.2, 0.015);
        let (mut p, mut q_old) = (0.0f64, 0.0);
        for (i, t) in [16u64, 32, 48].iter().enumerate() {
            let qd = (*t - 5) as f64 * 1e-3;
            p = (p + alpha * (qd - target) + beta * (qd - q_old)).clamp(0.0, 1.0);
            q_old = qd;
            let mut got = Vec::new();
            q.sample_aqm(*t * MS, &mut |n, v| got.push((n, v)));
            assert_eq!(got[0], ("p", p), "update {i}");
            assert_eq!(got[1], ("p_c", p * p));
            assert_eq!(got[2], ("p_l", (2.0 * p).min(1.0)));
        }
        assert!(p > 0.0);
        // Emptied at 50 ms: q = 0 from then on drives p' back to 0.
        q.dequeue(&mut pool, 50 * MS, &mut Vec::new());
        q.sample_aqm(10_000 * MS, &mut |_, _| {});
        let Disc::Pi2(d) = q.disc() else { unreachable!() };
        assert_eq!(d.pi.p, 0.0);
    }

    #[test]
    fn pi2_holds_an_overload_at_its_target_delay() {
        // Not-ECT packets at 12 Mb/s into 10 Mb/s for 20 s: PI2 must drop 1/6 of them, so
        // p' settles near sqrt(1/6) = 0.41, and hold the queuing delay at its 15 ms target.
        let end = 20_000 * MS;
        let arrivals = every(0, 1500, Ecn::NotEct, 1_000_000, 0, end);
        let mut q = pi2(Pi2Params::default());
        let out = drive(&mut q, &arrivals, 1);
        let late: Vec<_> = out.sent[0].iter().filter(|s| s.at > end / 2 && s.at < end).collect();
        let mean = late.iter().map(|s| s.sojourn as f64).sum::<f64>() / late.len() as f64 / 1e6;
        assert!((mean / 15.0 - 1.0).abs() < 0.15, "mean sojourn {mean} ms over the second half");
        let frac = out.dropped[0] as f64 / arrivals.len() as f64;
        assert!((frac / (1.0 / 6.0) - 1.0).abs() < 0.1, "dropped fraction {frac}");
    }

    #[test]
    fn pi2_signals_classic_with_the_square_of_the_scalable_probability_over_k() {
        // Classic not-ECT at 6 Mb/s and Scalable ECT(1) at 5 Mb/s into 10 Mb/s for 30 s: drops
        // of the Classic packets remove the excess, so p_C settles near 1/6; Scalable marks
        // cannot. Measured Classic drop fraction against Scalable mark fraction: p_C = (p_L/k)^2.
        let end = 30_000 * MS;
        let arrivals = merged(vec![every(0, 1500, Ecn::NotEct, 2_000_000, 0, end), every(1, 1500, Ecn::Ect1, 2_400_000, 0, end)]);
        let mut q = pi2(Pi2Params::default());
        let out = drive(&mut q, &arrivals, 2);
        let (_, p_l, _) = mark_fractions(&out, 10_000 * MS, end);
        let classic_late = arrivals.iter().filter(|a| a.1 == 0 && a.0 >= 10_000 * MS).count() as f64;
        let p_c = out.drop_times[0].iter().filter(|t| **t >= 10_000 * MS).count() as f64 / classic_late;
        let want = (p_l / 2.0).powi(2);
        assert!((p_c / want - 1.0).abs() < 0.1, "p_C {p_c} against (p_L/k)^2 {want} (p_L {p_l})");
        // Were Classic signalled with p' rather than p'^2, p_C would be about p_L / k.
        assert!(p_c < 0.7 * p_l / 2.0, "p_C {p_c}, p_L/k {}", p_l / 2.0);
        // Overload (p' above 1/k) drops Scalable packets, rarely at this load.
        let late_l_drops = out.drop_times[1].iter().filter(|t| **t >= 10_000 * MS).count();
        assert!((late_l_drops as f64) < 0.005 * out.sent[1].len() as f64, "{late_l_drops} Scalable drops");
    }

    #[test]
    fn without_scalable_every_packet_is_classic() {
        // The same ECT(1) packets with `scalable` off are Classic: marked with p'^2 like ECT(0).
        let end = 10_000 * MS;
        let arrivals = merged(vec![every(0, 1500, Ecn::NotEct, 2_000_000, 0, end), every(1, 1500, Ecn::Ect1, 2_400_000, 0, end)]);
        let mut q = pi2(Pi2Params { scalable: false, ..Default::default() });
        let out = drive(&mut q, &arrivals, 2);
        let (_, p_l, _) = mark_fractions(&out, 5_000 * MS, end);
        let classic_late = arrivals.iter().filter(|a| a.1 == 0 && a.0 >= 5_000 * MS).count() as f64;
        let p_c = out.drop_times[0].iter().filter(|t| **t >= 5_000 * MS).count() as f64 / classic_late;
        assert!((p_l / p_c - 1.0).abs() < 0.25, "ECT(1) marked {p_l}, Not-ECT dropped {p_c}");
        let Disc::Pi2(d) = q.disc() else { unreachable!() };
        assert_eq!(d.stats.scalable_pkts, 0);
    }

    #[test]
    fn bad_parameters_are_rejected_naming_the_field() {
        let err = |p: Pi2Params| p.validate("q.aqm").unwrap_err().to_string();
        assert_eq!(err(Pi2Params { target_us: -1.0, ..Default::default() }), "q.aqm.target_us (-1) must be positive");
        assert_eq!(err(Pi2Params { coupling_factor: 0.0, ..Default::default() }), "q.aqm.coupling_factor (0) must be positive");
        assert_eq!(err(Pi2Params { t_update_us: 0.5, ..Default::default() }), "q.aqm.t_update_us (0.5) must be at least 1 (1 us)");
        assert_eq!(err(Pi2Params { alpha_hz: -0.1, ..Default::default() }), "q.aqm.alpha_hz (-0.1) must be zero or positive");
        assert_eq!(err(Pi2Params { beta_hz: f64::NAN, ..Default::default() }), "q.aqm.beta_hz (NaN) must be zero or positive");
    }
}
