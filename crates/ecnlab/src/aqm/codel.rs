//! CoDel: Controlled Delay (RFC 8289; spec section 7), structured as Linux
//! `include/net/codel_impl.h` `codel_dequeue`.
//!
//! At dequeue, a packet "should be dropped" once sojourn times have stayed at or above `target`
//! for `interval` (and more than one MTU is queued behind it). CoDel then enters the dropping
//! state and signals at times drop_next = t + interval / sqrt(count) (the control law, exact
//! square root where Linux uses a Newton-iterated reciprocal), count rising by one per signal;
//! it leaves the state as soon as a packet's sojourn is below target. On re-entering soon
//! (within 16 intervals of the last drop_next) count resumes near its previous value
//! (count - lastcount). With `ecn` an ECN-capable packet is marked and delivered instead of
//! dropped (the next signal then follows the control law from the previous drop_next).
//!
//! Linux's dequeue loop drops several packets in one call; here the queue calls `on_dequeue`
//! once per packet it pops, so the loop's state between packets (`Cont`) is kept here: the
//! decisions are the same packet by packet.
//!
//! Parameters: `target_ms` 5, `interval_ms` 100, `mtu_bytes` 1500 (no signal while at most this
//! many bytes remain queued), `ecn` false (RFC 8289, Linux `sch_codel`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{signal_marks, valid, AqmAlgorithm, Context, PacketView, QueueView, Reason, Settings, Verdict};
use crate::engine::time::from_millis;
use crate::engine::SimTime;
use crate::config::ConfigError;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CodelParams {
    /// Signals become CE marks for ECN-capable packets.
    pub ecn: bool,
    /// Acceptable standing sojourn time (ms).
    pub target_ms: f64,
    /// Window over which sojourn must stay above target before signalling (ms).
    pub interval_ms: f64,
    /// No signal while at most this many bytes remain queued (one maximum-size packet).
    pub mtu_bytes: u32,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams { ecn: false, target_ms: 5.0, interval_ms: 100.0, mtu_bytes: 1500 }
    }
}

impl Settings for CodelParams {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        valid::positive(self.target_ms, path, "target_ms")?;
        valid::positive(self.interval_ms, path, "interval_ms")
    }
}

/// Where the previous call left Linux's dequeue loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cont {
    None,
    /// A packet was dropped on entering the dropping state: the next one is delivered.
    Entered,
    /// A packet was dropped in the dropping state: the next one continues the loop.
    InLoop,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct CodelStats {
    /// Times the dropping state was entered.
    pub entered: u64,
}

#[derive(Debug)]
pub struct CoDel {
    pub params: CodelParams,
    target: SimTime,
    interval: SimTime,
    /// When sojourn will have been above target for an interval (0: not above).
    first_above: SimTime,
    pub dropping: bool,
    pub drop_next: SimTime,
    pub count: u32,
    lastcount: u32,
    /// Sojourn of the last dequeued packet.
    pub ldelay: SimTime,
    cont: Cont,
    /// The last packet was dropped on entering: the empty-queue poll that follows is part of
    /// that dequeue (Linux keeps `dropping` then).
    drained: bool,
    pub stats: CodelStats,
}

/// The control law (spec 7.4): the next signal `interval / sqrt(count)` after `t`.
pub fn control_law(t: SimTime, interval: SimTime, count: u32) -> SimTime {
    t + (interval as f64 / (count.max(1) as f64).sqrt()) as SimTime
}

impl CoDel {
    pub fn new(params: CodelParams) -> CoDel {
        CoDel {
            target: from_millis(params.target_ms),
            interval: from_millis(params.interval_ms),
            params,
            first_above: 0,
            dropping: false,
            drop_next: 0,
            count: 0,
            lastcount: 0,
            ldelay: 0,
            cont: Cont::None,
            drained: false,
            stats: CodelStats::default(),
        }
    }

    /// Spec 7.3; `q` is the queue after this packet left.
    fn should_drop(&mut self, pkt: &PacketView, q: &QueueView, now: SimTime) -> bool {
        self.ldelay = now - pkt.enqueued_at;
        if self.ldelay < self.target || q.len_bytes <= self.params.mtu_bytes as u64 {
            self.first_above = 0;
            return false;
        }
        if self.first_above == 0 {
            self.first_above = now + self.interval;
            return false;
        }
        now >= self.first_above
    }

    /// The loop of the dropping state (spec 7.5), for the packet at hand.
    fn dropping_step(&mut self, q: &QueueView, pkt: &PacketView, now: SimTime) -> Verdict {
        if now < self.drop_next {
            return Verdict::Pass;
        }
        self.count += 1;
        if signal_marks(self.params.ecn, pkt.ecn) {
            self.drop_next = control_law(self.drop_next, self.interval, self.count);
        } else if q.len_pkts > 0 {
            self.cont = Cont::InLoop;
        } else {
            // should_drop(NULL): the queue is empty, leave the dropping state.
            self.first_above = 0;
            self.dropping = false;
        }
        Verdict::Signal(Reason::Early)
    }
}

impl AqmAlgorithm for CoDel {
    type Params = CodelParams;
    const VARIABLES: &'static [&'static str] = &["dropping", "count", "sojourn_ms"];

    fn build(params: &CodelParams, _ctx: Context) -> CoDel {
        CoDel::new(params.clone())
    }

    fn on_enqueue(&mut self, _q: &QueueView, _pkt: &PacketView, _now: SimTime) -> Verdict {
        Verdict::Pass
    }

    fn on_dequeue(&mut self, q: &QueueView, pkt: &PacketView, now: SimTime) -> Verdict {
        self.drained = false;
        let drop = self.should_drop(pkt, q, now);
        match std::mem::replace(&mut self.cont, Cont::None) {
            Cont::Entered => return Verdict::Pass,
            Cont::InLoop => {
                if !drop {
                    self.dropping = false;
                    return Verdict::Pass;
                }
                self.drop_next = control_law(self.drop_next, self.interval, self.count);
                return self.dropping_step(q, pkt, now);
            }
            Cont::None => {}
        }
        if self.dropping {
            if !drop {
                self.dropping = false;
                return Verdict::Pass;
            }
            return self.dropping_step(q, pkt, now);
        }
        if !drop {
            return Verdict::Pass;
        }
        // Enter the dropping state, signalling this packet.
        self.stats.entered += 1;
        self.dropping = true;
        let delta = self.count.wrapping_sub(self.lastcount);
        let recent = (now as i128 - self.drop_next as i128) < 16 * self.interval as i128;
        self.count = if delta > 1 && delta < u32::MAX / 2 && recent { delta } else { 1 };
        self.lastcount = self.count;
        self.drop_next = control_law(now, self.interval, self.count);
        if !signal_marks(self.params.ecn, pkt.ecn) {
            if q.len_pkts > 0 {
                self.cont = Cont::Entered;
            } else {
                self.first_above = 0;
                self.drained = true;
            }
        }
        Verdict::Signal(Reason::Early)
    }

    fn on_idle(&mut self, _now: SimTime) {
        // Linux: a dequeue that finds the queue empty leaves the dropping state.
        if !std::mem::take(&mut self.drained) {
            self.dropping = false;
        }
    }

    fn ecn(&self) -> bool {
        self.params.ecn
    }

    fn sample(&mut self, _now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        out("dropping", self.dropping as u8 as f64);
        out("count", self.count as f64);
        out("sojourn_ms", self.ldelay as f64 / 1e6);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::tests::{packet, queue, sim_packet};
    use crate::aqm::{AqmConfig, Disc, Enqueue, Queue};
    use crate::packet::{Ecn, PacketKind, PacketPool};

    const MS: SimTime = 1_000_000;

    #[test]
    fn spec_vector_control_law() {
        assert_eq!(control_law(0, 100 * MS, 4), 50 * MS);
        assert_eq!(control_law(7, 100 * MS, 1), 100 * MS + 7);
    }

    /// Port of Linux's control law (include/net/codel.h, codel_impl.h): a 16-bit reciprocal
    /// square root refined by one Newton step per count change, time in units of 1024 ns.
    struct LinuxLaw {
        rec_inv_sqrt: u16,
        count: u32,
    }
    impl LinuxLaw {
        const SHIFT: u32 = 32 - 16;
        fn reset(&mut self) {
            self.count = 1;
            self.rec_inv_sqrt = (!0u32 >> Self::SHIFT) as u16;
        }
        fn newton_step(&mut self) {
            let invsqrt = (self.rec_inv_sqrt as u32) << Self::SHIFT;
            let invsqrt2 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
            let mut val: u64 = (3u64 << 32).wrapping_sub(self.count as u64 * invsqrt2 as u64);
            val >>= 2;
            val = (val * invsqrt as u64) >> (32 - 2 + 1);
            self.rec_inv_sqrt = (val >> Self::SHIFT) as u16;
        }
        fn interval(&self, interval_units: u32) -> u32 {
            ((interval_units as u64 * ((self.rec_inv_sqrt as u64) << Self::SHIFT)) >> 32) as u32
        }
    }

    #[test]
    fn control_law_matches_a_port_of_linux_newton_iteration() {
        // Linux increments count by one per signal with one Newton step each, starting from
        // 1.0 at count 1. One step from 1.0 gives 1/2 at count 2 (exact: 0.707), so Linux's
        // second signal comes 50 ms after the first where RFC 8289's law says 70.7 ms; the
        // iteration then converges: measured deviation 2.6 % at count 3, 0.37 % at 10, below
        // 0.14 % from 20 on (16-bit reciprocal, 1024-ns time unit). ecnlab uses the exact
        // square root (spec 7.4); this pins how far that is from Linux.
        let interval = 100 * MS;
        let units = (interval >> 10) as u32;
        let mut lx = LinuxLaw { rec_inv_sqrt: 0, count: 0 };
        lx.reset();
        for count in 1..=3000u32 {
            if count > 1 {
                lx.count = count;
                lx.newton_step();
            }
            let linux_ns = (lx.interval(units) as u64) << 10;
            let ours = control_law(0, interval, count);
            let err = (ours as f64 - linux_ns as f64).abs() / ours as f64;
            let bound = match count {
                1 => 1e-4,
                2 => {
                    assert_eq!(linux_ns / MS, 50, "Linux's second interval");
                    0.30
                }
                3..=9 => 0.03,
                10..=19 => 0.004,
                _ => 0.0015,
            };
            assert!(err < bound, "count {count}: ecnlab {ours} linux {linux_ns} ({err})");
        }
    }

    /// A queue of `n` ECT or Not-ECT packets all enqueued at time 0.
    fn full_queue(pool: &mut PacketPool, n: usize, ecn: Ecn, params: CodelParams) -> Queue {
        let mut q = queue(AqmConfig::Codel(params), (None, None));
        for _ in 0..n {
            let id = pool.alloc(sim_packet(PacketKind::Data, 1500, ecn));
            assert!(matches!(q.enqueue(pool, id, 0, &mut Vec::new()), Enqueue::Queued { .. }));
        }
        q
    }

    fn codel(q: &Queue) -> &CoDel {
        match q.disc() {
            Disc::Codel(c) => &c.aqm,
            _ => unreachable!(),
        }
    }

    #[test]
    fn drops_follow_the_control_law_from_the_first_interval_above_target() {
        // Dequeue one packet per ms from a standing queue (all enqueued at 0): sojourn >= 5 ms
        // from t = 5 ms, so first_above = 105 ms and the first drop comes at 105 ms; entering
        // sets count 1 and drop_next = 105 + 100/sqrt(1) ms; each later drop comes
        // 100/sqrt(count) ms after the previous drop_next.
        let mut pool = PacketPool::new();
        let mut q = full_queue(&mut pool, 2000, Ecn::NotEct, CodelParams::default());
        let mut dropped = Vec::new();
        let mut drop_times = Vec::new();
        for t in 5..=600u64 {
            let before = dropped.len();
            q.dequeue(&mut pool, t * MS, &mut dropped);
            for _ in before..dropped.len() {
                drop_times.push(t * MS);
            }
        }
        let mut expect = vec![105 * MS];
        let mut next = control_law(105 * MS, 100 * MS, 1);
        let mut count = 1;
        while next <= 600 * MS {
            // Dequeues happen on whole ms: the drop happens at the first dequeue at or after next.
            let at = next.div_ceil(MS) * MS;
            expect.push(at);
            count += 1;
            next = control_law(next, 100 * MS, count);
        }
        assert_eq!(drop_times, expect);
        assert_eq!(codel(&q).count as usize, expect.len());
    }

    #[test]
    fn ecn_marks_instead_of_dropping_and_short_sojourn_leaves_the_state() {
        let mut pool = PacketPool::new();
        let params = CodelParams { ecn: true, ..Default::default() };
        let mut q = full_queue(&mut pool, 400, Ecn::Ect0, params.clone());
        let mut dropped = Vec::new();
        let mut marked = 0;
        for t in 5..=300u64 {
            if let Some((id, _)) = q.dequeue(&mut pool, t * MS, &mut dropped) {
                marked += (pool.get(id).ecn == Ecn::Ce) as u32;
                pool.free(id);
            }
        }
        assert!(dropped.is_empty());
        // Marks at 105, 205, 276 ms (100 and 70.7 ms apart).
        assert_eq!(marked, 3);
        assert!(codel(&q).dropping);
        // A packet whose sojourn is below target ends the dropping state.
        let mut c = CoDel::new(params);
        c.dropping = true;
        let mut fresh = packet(1500, Ecn::Ect0);
        fresh.enqueued_at = 299 * MS;
        let big = QueueView { len_pkts: 10, len_bytes: 15_000 };
        assert_eq!(c.on_dequeue(&big, &fresh, 300 * MS), Verdict::Pass);
        assert!(!c.dropping);
    }

    #[test]
    fn reentering_soon_resumes_the_count() {
        let mut c = CoDel::new(CodelParams::default());
        c.count = 10;
        c.lastcount = 2;
        c.drop_next = 1000 * MS;
        let p = packet(1500, Ecn::NotEct);
        let big = QueueView { len_pkts: 10, len_bytes: 15_000 };
        // Sojourn above target for an interval: enters at 1100 ms with count = 10 - 2.
        let mut pk = p;
        pk.enqueued_at = 0;
        assert_eq!(c.on_dequeue(&big, &pk, 1000 * MS), Verdict::Pass);
        assert_eq!(c.on_dequeue(&big, &pk, 1100 * MS), Verdict::Signal(Reason::Early));
        assert_eq!(c.count, 8);
        assert_eq!(c.drop_next, control_law(1100 * MS, 100 * MS, 8));
    }
}
