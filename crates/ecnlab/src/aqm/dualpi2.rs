//! DualPI2: the DualQ Coupled AQM of RFC 9332 with PI2 as its base AQM, after the RFC's
//! Appendix A pseudocode (A.1 the core, A.2 the overload handling).
//!
//! Two FIFOs share one buffer (`limit_pkts` / `limit_bytes` of the queue, checked against the
//! sum of both; A.1 `dualpi2_enqueue`). The classifier puts ECT(1) and CE packets in the L
//! queue and the rest (Not-ECT, ECT(0)) in the C queue (A.1; RFC 9331 section 5.1).
//!
//! Every `t_update_us` the PI2 controller ([`Pi2Controller`]) updates the base probability p'
//! from the queuing time of the C queue's head (A.1) or, with `pi_delay = "max"`, the larger
//! of both heads' (A.2 and Linux `sch_dualpi2`, so that an L queue growing under unresponsive
//! L traffic also raises p'). From p': the Classic probability p_C = p'^2 and the coupled L
//! probability p_CL = min(k p', 1), k = `coupling_factor` (A.1 `dualpi2_update`).
//!
//! Dequeue (A.1 `dualpi2_dequeue`): a time-shifted FIFO picks the queue, L when its head has
//! waited at least as long as the C head's less `tshift_us` (A.1 scheduler: L first unless
//! the C head is more than tshift older), so L gets priority for delay while C cannot starve.
//! - L packet: native ramp p'_L = 0 below `l_min_th_us` of queuing time, rising linearly to 1
//!   over `l_range_us` (A.1 `laqm`; `l_range_us = 0` is a step), applied only while the L queue
//!   (this packet included) holds more than `l_th_len_pkts` packets (A.1 Th_len: a lone packet
//!   is not marked for its own serialization time); p_L = max(p'_L, p_CL) (the combining
//!   function); marked CE with p_L.
//! - C packet: signalled with p_C, drawn as `p' > max(u1, u2)` (A.2); a signal marks ECT(0)
//!   when `ecn` is on and drops Not-ECT.
//! - Overload, once p_C >= p_Cmax = min(1 / k^2, 1), i.e. once p_CL saturates (A.1, A.2 and
//!   section 4.2.3, drop on saturation): ECN-capable C packets are dropped instead of marked,
//!   and L packets are dropped with p_C and marked otherwise. With `drop_on_overload` off p'
//!   stays at most min(1 / k, 1) and nothing is dropped but overflow (Linux `drop_overload`).
//!
//! Defaults (sources): `target_us` 15000, `t_update_us` 16000, `alpha_hz` 0.16, `beta_hz` 3.2
//! (RFC 9332 A.1 Figure 2, alpha = 0.1 Tupdate / RTT_max^2, beta = 0.3 / RTT_max,
//! RTT_max = 100 ms; Linux `sch_dualpi2` the same); `coupling_factor` 2 (section 2.1, A.1);
//! `l_min_th_us` 800, `l_range_us` 400, `l_th_len_pkts` 1 (A.1 Figure 2; Linux instead uses a
//! 1 ms step); `tshift_us` 40000 (the L4S team's early Linux `sch_dualpi2`: tshift 40 ms beside
//! a 20 ms target, twice the target; later Linux code uses a WRR scheduler instead, not
//! modelled); `classifier` ect1_or_ce (A.1); `pi_delay` max (A.2); `ecn` true
//! (A.1 marks ECT(0) Classic packets); `drop_on_overload` true (section 4.2.3);
//! `min_backlog_bytes` 0 (Appendix A has no floor; Linux never signals below 2 MTU queued).
//!
//! Not modelled: A.2's integer arithmetic and the `recur()` de-randomized marking
//! (marking is random here, as in Linux); Linux's WRR C-queue protection and GSO splitting.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::pi2::{depart, from_us, is_l4s, validate_controller, Lane, Pi2Controller};
use super::{valid, Action, Context, Discipline, Enqueue, Limits, QueueDisc, QueueStats, QueueView, Reason, Settings, Verdict};
use crate::config::ConfigError;
use crate::engine::{Rng, SimTime};
use crate::packet::{Ecn, PacketId, PacketPool};

/// Which packets go to the L queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum L4sClassifier {
    /// ECT(1) and CE (RFC 9332 A.1; RFC 9331 section 5.1).
    #[default]
    Ect1OrCe,
    /// Every ECN-capable packet, ECT(0) included (Linux `ecn_mask any_ect`, for DCTCP-style
    /// senders in a data centre).
    AnyEct,
    /// None: every packet in the C queue (PI2 on the C queue alone).
    None,
}

impl L4sClassifier {
    #[inline]
    fn to_l(self, e: Ecn) -> bool {
        match self {
            L4sClassifier::Ect1OrCe => is_l4s(e),
            L4sClassifier::AnyEct => e.is_ect_or_ce(),
            L4sClassifier::None => false,
        }
    }
}

/// The queuing time the PI controller samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PiDelay {
    /// The larger of the two heads' queuing times (RFC 9332 A.2; Linux).
    #[default]
    Max,
    /// The C queue head's (RFC 9332 A.1).
    Classic,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DualPi2Params {
    /// Classic signals become CE marks for ECT(0) packets (L packets are always marked).
    pub ecn: bool,
    /// Target queuing delay of the PI controller (us; RFC 9332 A.1: 15 ms).
    pub target_us: f64,
    /// Controller update period Tupdate (us; RFC 9332 A.1: 16 ms).
    pub t_update_us: f64,
    /// Integral gain alpha (Hz; RFC 9332 A.1: 0.16).
    pub alpha_hz: f64,
    /// Proportional gain beta (Hz; RFC 9332 A.1: 3.2).
    pub beta_hz: f64,
    /// Coupling factor k: p_CL = k p' (RFC 9332 section 2.1: 2).
    pub coupling_factor: f64,
    /// Queuing time where the L queue's native ramp starts (us; RFC 9332 A.1 minTh: 800).
    pub l_min_th_us: f64,
    /// Width of the native ramp (us; RFC 9332 A.1 range: 400; 0: a step at l_min_th_us).
    pub l_range_us: f64,
    /// No native marking while the L queue holds at most this many packets (RFC 9332 A.1 Th_len: 1).
    pub l_th_len_pkts: u32,
    /// Time shift of the time-shifted FIFO scheduler (us; RFC 9332 A.1 example: 40 ms).
    pub tshift_us: f64,
    /// Which packets go to the L queue.
    pub classifier: L4sClassifier,
    /// The queuing time the controller samples.
    pub pi_delay: PiDelay,
    /// Drop instead of mark once p_CL saturates (RFC 9332 section 4.2.3).
    pub drop_on_overload: bool,
    /// No coupled or Classic signal while fewer bytes than this are queued in all (bytes; 0:
    /// none, as RFC 9332; Linux 2 MTU).
    pub min_backlog_bytes: u64,
}

impl Default for DualPi2Params {
    fn default() -> Self {
        DualPi2Params {
            ecn: true,
            target_us: 15_000.0,
            t_update_us: 16_000.0,
            alpha_hz: 0.16,
            beta_hz: 3.2,
            coupling_factor: 2.0,
            l_min_th_us: 800.0,
            l_range_us: 400.0,
            l_th_len_pkts: 1,
            tshift_us: 40_000.0,
            classifier: L4sClassifier::Ect1OrCe,
            pi_delay: PiDelay::Max,
            drop_on_overload: true,
            min_backlog_bytes: 0,
        }
    }
}

impl Settings for DualPi2Params {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        validate_controller(self.target_us, self.t_update_us, self.alpha_hz, self.beta_hz, self.coupling_factor, path)?;
        valid::non_negative(self.l_min_th_us, path, "l_min_th_us")?;
        valid::non_negative(self.l_range_us, path, "l_range_us")?;
        valid::non_negative(self.tshift_us, path, "tshift_us")
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct DualPi2Stats {
    /// Packets that left the L queue and the C queue (sent or dropped at dequeue).
    pub l_pkts: u64,
    pub c_pkts: u64,
    /// L marks where the native ramp's probability exceeded the coupled one.
    pub native_marks: u64,
    /// Packets dropped for overload (ECN-capable C packets, and L packets).
    pub overload_drops: u64,
    /// Packets sent from the L and C queues, and the total time they had queued (ns): a window's
    /// mean per-packet queuing time is the difference of the totals over the difference of the
    /// counts (sampled as `l_served_pkts`, `l_sojourn_total_ms` and the C pair).
    pub l_served: u64,
    pub l_sojourn: SimTime,
    pub c_served: u64,
    pub c_sojourn: SimTime,
}

#[derive(Debug)]
pub struct DualPi2 {
    pub params: DualPi2Params,
    pub pi: Pi2Controller,
    l: Lane,
    c: Lane,
    limits: Limits,
    min_th: SimTime,
    range: SimTime,
    tshift: SimTime,
    rng: Rng,
    pub stats: DualPi2Stats,
}

impl Discipline for DualPi2 {
    type Params = DualPi2Params;
    const VARIABLES: &'static [&'static str] = &["p", "p_c", "p_cl", "p_l", "l_delay_ms", "c_delay_ms", "l_served_pkts", "l_sojourn_total_ms", "c_served_pkts", "c_sojourn_total_ms"];
    fn build(p: &DualPi2Params, ctx: Context) -> DualPi2 {
        DualPi2 {
            pi: Pi2Controller::new(p.target_us, p.t_update_us, p.alpha_hz, p.beta_hz, p.coupling_factor, p.drop_on_overload),
            l: Lane::with_capacity(64),
            c: Lane::with_capacity(64),
            limits: Limits::of(&ctx),
            min_th: from_us(p.l_min_th_us),
            range: from_us(p.l_range_us),
            tshift: from_us(p.tshift_us),
            rng: ctx.rng,
            stats: DualPi2Stats::default(),
            params: p.clone(),
        }
    }
}

impl DualPi2 {
    fn catch_up(&mut self, now: SimTime) {
        let (l, c, max) = (&self.l, &self.c, self.params.pi_delay == PiDelay::Max);
        let idle = c.is_empty() && (!max || l.is_empty());
        self.pi.catch_up(now, idle, |t| if max { c.delay_at(t).max(l.delay_at(t)) } else { c.delay_at(t) });
    }

    /// The native L AQM's probability for queuing time `qdelay` with `len` packets in the L
    /// queue (RFC 9332 A.1 `laqm`, with Th_len).
    #[inline]
    fn laqm(&self, qdelay: SimTime, len: u32) -> f64 {
        if len <= self.params.l_th_len_pkts {
            0.0
        } else if qdelay >= self.min_th + self.range {
            1.0
        } else if qdelay > self.min_th {
            (qdelay - self.min_th) as f64 / self.range as f64
        } else {
            0.0
        }
    }

    /// The time-shifted FIFO (RFC 9332 A.1): L unless the C head is more than tshift older.
    #[inline]
    fn pick_l(&self) -> Option<bool> {
        match (self.l.is_empty(), self.c.is_empty()) {
            (true, true) => None,
            (false, true) => Some(true),
            (true, false) => Some(false),
            (false, false) => Some(self.c.head_ts + self.tshift >= self.l.head_ts),
        }
    }
}

impl QueueDisc for DualPi2 {
    fn enqueue(&mut self, pool: &mut PacketPool, id: PacketId, now: SimTime, stats: &mut QueueStats, _dropped: &mut Vec<PacketId>) -> Enqueue {
        self.catch_up(now);
        let pkt = pool.get_mut(id);
        // One buffer for both queues (RFC 9332 A.1 dualpi2_enqueue; section 2.5.1).
        let view = QueueView { len_pkts: self.len_pkts(), len_bytes: self.len_bytes() };
        if !self.limits.fit(&view, pkt.size) {
            return stats.arrival(pkt.kind, Action::Drop(Reason::Overflow));
        }
        pkt.enqueued_at = now;
        if self.params.classifier.to_l(pkt.ecn) {
            self.l.push(id, pkt.size, now);
        } else {
            self.c.push(id, pkt.size, now);
        }
        stats.arrival(pkt.kind, Action::Keep)
    }

    fn dequeue(&mut self, pool: &mut PacketPool, now: SimTime, stats: &mut QueueStats, dropped: &mut Vec<PacketId>) -> Option<(PacketId, bool)> {
        self.catch_up(now);
        loop {
            let from_l = self.pick_l()?;
            let (id, l_len) = if from_l {
                let len = self.l.len();
                (self.l.pop(pool).expect("picked a non-empty queue"), len)
            } else {
                (self.c.pop(pool).expect("picked a non-empty queue"), 0)
            };
            let floor = self.len_bytes() < self.params.min_backlog_bytes;
            let pkt = pool.get_mut(id);
            let waited = now - pkt.enqueued_at;
            let (verdict, ecn) = if from_l {
                self.stats.l_pkts += 1;
                let p_native = self.laqm(waited, l_len);
                let v = if floor {
                    // Below the floor only the native AQM acts (as Linux's step).
                    if p_native >= 1.0 {
                        Verdict::Signal(Reason::Forced)
                    } else if p_native > 0.0 && self.rng.uniform() < p_native {
                        Verdict::Signal(Reason::Early)
                    } else {
                        Verdict::Pass
                    }
                } else {
                    self.pi.scalable(p_native, &mut self.rng).0
                };
                if matches!(v, Verdict::Signal(_)) && p_native > self.pi.p_cl() && !self.pi.overloaded() {
                    self.stats.native_marks += 1;
                }
                // L packets are ECN-capable by classification: a signal is a mark.
                (v, true)
            } else {
                self.stats.c_pkts += 1;
                (if floor { Verdict::Pass } else { self.pi.classic(&mut self.rng) }, self.params.ecn)
            };
            match depart(verdict, ecn, pkt, &mut self.stats.overload_drops, stats) {
                Some(marked) => {
                    let s = &mut self.stats;
                    let (served, sojourn) =
                        if from_l { (&mut s.l_served, &mut s.l_sojourn) } else { (&mut s.c_served, &mut s.c_sojourn) };
                    *served += 1;
                    *sojourn += waited;
                    return Some((id, marked));
                }
                None => dropped.push(id),
            }
        }
    }

    fn len_pkts(&self) -> u32 {
        self.l.len() + self.c.len()
    }

    fn len_bytes(&self) -> u64 {
        self.l.bytes + self.c.bytes
    }

    fn went_idle(&mut self, _at: SimTime) {}

    fn sample(&mut self, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        self.catch_up(now);
        let l_delay = self.l.delay_at(now);
        out("p", self.pi.p);
        out("p_c", self.pi.p_c());
        out("p_cl", self.pi.p_cl());
        // p_L as the L head would see it now (the coupled one when the L queue is empty).
        let p_l = if self.pi.overloaded() { 1.0 } else { self.laqm(l_delay, self.l.len()).max(self.pi.p_cl()) };
        out("p_l", p_l);
        out("l_delay_ms", l_delay as f64 / 1e6);
        out("c_delay_ms", self.c.delay_at(now) as f64 / 1e6);
        out("l_served_pkts", self.stats.l_served as f64);
        out("l_sojourn_total_ms", self.stats.l_sojourn as f64 / 1e6);
        out("c_served_pkts", self.stats.c_served as f64);
        out("c_sojourn_total_ms", self.stats.c_sojourn as f64 / 1e6);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::tests::{queue, sim_packet};
    use crate::aqm::{AqmConfig, Disc, Outcome, Queue};
    use crate::engine::time::tx_time;
    use crate::packet::PacketKind;

    use crate::aqm::harness::{drive, every, mark_fractions, merged, MS, RATE};

    fn dualpi2(p: DualPi2Params) -> Queue {
        queue(AqmConfig::DualPi2(p), (Some(10_000), None))
    }

    fn inner(q: &Queue) -> &DualPi2 {
        let Disc::DualPi2(d) = q.disc() else { unreachable!() };
        d
    }

    /// Classic Not-ECT at 6 Mb/s (flow 0) and L ECT(1) at 5 Mb/s (flow 1) into 10 Mb/s for
    /// 40 s, through DualPI2 with coupling factor `k`: measured p_C and p_L over the last 30 s,
    /// and the longest L sojourn then.
    fn coupled_steady_state(k: f64) -> (f64, f64, SimTime) {
        let end = 40_000 * MS;
        let arrivals = merged(vec![every(0, 1500, Ecn::NotEct, 2_000_000, 0, end), every(1, 1500, Ecn::Ect1, 2_400_000, 0, end)]);
        let mut q = dualpi2(DualPi2Params { coupling_factor: k, ..Default::default() });
        let out = drive(&mut q, &arrivals, 2);
        let from = 10_000 * MS;
        let (_, p_l, _) = mark_fractions(&out, from, end);
        let classic = arrivals.iter().filter(|a| a.1 == 0 && a.0 >= from).count() as f64;
        let p_c = out.drop_times[0].iter().filter(|t| **t >= from).count() as f64 / classic;
        // p' (about 0.41 for k = 2) now and then crosses 1/k, where overload drops L packets
        // too: rarely (measured 12 of 12500).
        let (l_drops, l_sent) = (out.drop_times[1].iter().filter(|t| **t >= from).count(), out.sent[1].len());
        assert!((l_drops as f64) < 0.005 * l_sent as f64, "k {k}: {l_drops} L drops of {l_sent}");
        let late_l = out.sent[1].iter().filter(|s| s.at >= from).map(|s| s.sojourn).max().unwrap();
        (p_c, p_l, late_l)
    }

    #[test]
    fn classic_probability_is_the_square_of_the_l_probability_over_k() {
        // The done-when of issue 22: at steady state DualPI2 drops or marks Classic packets with
        // p_C = p'^2 = (p_L / k)^2 where p_L = k p' marks the L packets (RFC 9332 section 2.1).
        // The Classic drops must remove 1 Mb/s of 6, so p_C -> 1/6 whatever k; p_L follows k.
        for k in [2.0, 1.5] {
            let (p_c, p_l, late_l) = coupled_steady_state(k);
            let want = (p_l / k).powi(2);
            assert!((p_c / want - 1.0).abs() < 0.08, "k {k}: p_C {p_c} against (p_L/k)^2 {want} (p_L {p_l})");
            assert!((p_c / (1.0 / 6.0) - 1.0).abs() < 0.05, "k {k}: p_C {p_c} against the 1/6 the load needs");
            // With p_C = p' (no square) the Classic probability would be p_L / k, 2.4x larger.
            assert!(p_c < 0.6 * p_l / k, "k {k}: p_C {p_c}, p_L/k {}", p_l / k);
            // Once settled, an L packet waits at most for the packet on the link (1.2 ms): the L
            // queue holds one packet, so Th_len keeps the native ramp off and the coupled
            // probability alone drives the L marks.
            assert!(late_l <= tx_time(1500, RATE), "k {k}: L sojourn up to {late_l} ns");
        }
    }

    #[test]
    fn the_native_step_marks_every_l_packet_above_its_threshold() {
        // L packets only, at 15 Mb/s into 10 Mb/s for 60 ms in bursts: sojourns grow through
        // 1 ms. A step (range 0) at 1 ms must mark exactly those whose sojourn reached it
        // (with more than Th_len = 1 packet in the L queue). The gains are 0 so the coupled
        // probability stays 0.
        let arrivals = every(1, 1500, Ecn::Ect1, 800_000, 0, 60 * MS);
        let p = DualPi2Params { alpha_hz: 0.0, beta_hz: 0.0, l_min_th_us: 1000.0, l_range_us: 0.0, ..Default::default() };
        let mut q = dualpi2(p);
        let out = drive(&mut q, &arrivals, 2);
        let sent = &out.sent[1];
        let above = sent.iter().filter(|s| s.sojourn >= MS).count();
        assert!(above > 10 && above < sent.len(), "{above} of {} above 1 ms", sent.len());
        for s in sent {
            // `behind` excludes the packet itself: the L queue held behind + 1.
            assert_eq!(s.marked, s.sojourn >= MS && s.behind + 1 > 1, "{s:?}");
        }
        assert_eq!(inner(&q).stats.native_marks as usize, sent.iter().filter(|s| s.marked).count());
    }

    #[test]
    fn the_native_ramp_rises_from_min_th_over_range() {
        // The default ramp (800 us, 400 us): nothing below 800 us, everything from 1.2 ms, and
        // between them a mark fraction near the ramp's mean there.
        // A 1500-B packet takes 1.2 ms at 10 Mb/s: at 1.19 ms gaps each packet waits 10 us
        // longer than the one before, so sojourns sweep the ramp (Th_len 0: a lone packet counts).
        let arrivals = every(1, 1500, Ecn::Ect1, 1_190_000, 0, 2_000 * MS);
        let p = DualPi2Params { alpha_hz: 0.0, beta_hz: 0.0, l_th_len_pkts: 0, ..Default::default() };
        let mut q = dualpi2(p);
        let out = drive(&mut q, &arrivals[..300], 2);
        let (mut on_ramp, mut expected, mut n_ramp) = (0.0, 0.0, 0);
        for s in &out.sent[1] {
            let us = s.sojourn as f64 / 1e3;
            if us <= 800.0 {
                assert!(!s.marked, "{s:?}");
            } else if us >= 1200.0 {
                assert!(s.marked, "{s:?}");
            } else {
                n_ramp += 1;
                on_ramp += s.marked as u8 as f64;
                expected += (us - 800.0) / 400.0;
            }
        }
        assert!(n_ramp > 20, "{n_ramp} packets on the ramp");
        assert!((on_ramp - expected).abs() < 3.0 * expected.sqrt().max(1.0), "{on_ramp} marks on the ramp, expected {expected}");
    }

    #[test]
    fn the_scheduler_serves_l_first_within_tshift() {
        // C packets queued at 0 and 10 ms, L packets at 20 ms and 60 ms; tshift 40 ms.
        let mut pool = PacketPool::new();
        // No coupled signal (gains 0): only the order is under test.
        let mut q = dualpi2(DualPi2Params { alpha_hz: 0.0, beta_hz: 0.0, ..Default::default() });
        let mut drops = Vec::new();
        let mut offer = |pool: &mut PacketPool, t: SimTime, ecn: Ecn| {
            let id = pool.alloc(sim_packet(PacketKind::Data, 1000, ecn));
            q.enqueue(pool, id, t * MS, &mut drops);
            id
        };
        let c0 = offer(&mut pool, 0, Ecn::NotEct);
        let c1 = offer(&mut pool, 10, Ecn::Ect0);
        let l0 = offer(&mut pool, 20, Ecn::Ect1);
        let l1 = offer(&mut pool, 60, Ecn::Ce);
        let mut take = |t: SimTime| q.dequeue(&mut pool, t * MS, &mut drops).map(|(id, _)| id);
        // At 61 ms the C head (0 ms) is 20 ms older than the L head (20 ms): within tshift, L.
        assert_eq!(take(61), Some(l0));
        // Now the L head is 60 ms: the C head is 60 ms older, beyond tshift, so C.
        assert_eq!(take(62), Some(c0));
        // The C head (10 ms) is 50 ms older than the L head: still C.
        assert_eq!(take(63), Some(c1));
        assert_eq!(take(64), Some(l1));
        assert_eq!(take(65), None);
    }

    #[test]
    fn unresponsive_l_traffic_does_not_starve_the_classic_queue() {
        // L ECT(1) at 15 Mb/s and Classic Not-ECT at 3 Mb/s into 10 Mb/s for 20 s. The L queue
        // would take the whole link under strict priority; the time shift serves a C packet
        // once it has waited tshift longer than the L head, and the controller (sampling the
        // larger delay) saturates p_CL and drops L packets for overload.
        let end = 20_000 * MS;
        let arrivals = merged(vec![every(0, 1500, Ecn::NotEct, 4_000_000, 0, end), every(1, 1500, Ecn::Ect1, 800_000, 0, end)]);
        let mut q = dualpi2(DualPi2Params::default());
        let out = drive(&mut q, &arrivals, 2);
        let (from, to) = (5_000 * MS, end);
        let rate = |f: usize| out.sent[f].iter().filter(|s| s.at >= from && s.at < to).count() as f64 * 1500.0 * 8.0 / 15.0;
        let (c, l) = (rate(0), rate(1));
        // Both classes lose p'^2 of their packets for overload; the 8 Mb/s excess of 18 needs
        // p'^2 = 0.44, so Classic keeps about 3 (1 - 0.44) = 1.7 Mb/s (measured 1.59 Mb/s,
        // L 8.18 Mb/s). A strict priority would leave it nothing.
        assert!(c > 1.2e6, "Classic gets {c} bit/s of its 3 Mb/s");
        // Dropping both heads at once now and then leaves the link idle briefly (measured 97.6 %).
        assert!(c + l > 0.95 * RATE as f64, "link busy: {}", c + l);
        // Classic delay stays near the target instead of growing with the L backlog
        // (measured mean 15.4 ms, worst 46 ms).
        let c_sent: Vec<_> = out.sent[0].iter().filter(|s| s.at >= from && s.at < to).collect();
        let mean = c_sent.iter().map(|s| s.sojourn as f64).sum::<f64>() / c_sent.len() as f64 / 1e6;
        assert!((mean / 15.0 - 1.0).abs() < 0.3, "Classic mean sojourn {mean} ms");
        let worst = c_sent.iter().map(|s| s.sojourn).max().unwrap();
        assert!(worst < 100 * MS, "Classic sojourn up to {} ms", worst / MS);
        let d = inner(&q);
        assert!(d.stats.overload_drops > 1000 && out.dropped[1] > 1000, "overload drops {}", d.stats.overload_drops);
        assert!(d.pi.p >= 0.5, "p' {} at saturation", d.pi.p);
        // The queue never overflowed.
        assert_eq!(q.stats(end * 2).total(Outcome::Dropped, Some(Reason::Overflow)), 0);
    }

    #[test]
    fn without_drop_on_overload_nothing_is_dropped_but_overflow() {
        let end = 5_000 * MS;
        let arrivals = merged(vec![every(0, 1500, Ecn::Ect0, 4_000_000, 0, end), every(1, 1500, Ecn::Ect1, 800_000, 0, end)]);
        let mut q = queue(AqmConfig::DualPi2(DualPi2Params { drop_on_overload: false, ..Default::default() }), (Some(500), None));
        let out = drive(&mut q, &arrivals, 2);
        assert!(inner(&q).pi.p <= 0.5 + 1e-12);
        assert_eq!(inner(&q).stats.overload_drops, 0);
        let s = q.stats(end * 2);
        assert_eq!(s.total(Outcome::Dropped, Some(Reason::Early)), 0);
        assert!(out.dropped[1] > 0 && s.total(Outcome::Dropped, Some(Reason::Overflow)) > 0);
    }

    #[test]
    fn the_classifier_chooses_the_l_queue() {
        let mut pool = PacketPool::new();
        for (classifier, want_l) in [
            (L4sClassifier::Ect1OrCe, [false, true, false, true]),
            (L4sClassifier::AnyEct, [false, true, true, true]),
            (L4sClassifier::None, [false; 4]),
        ] {
            let mut q = dualpi2(DualPi2Params { classifier, ..Default::default() });
            for (e, l) in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce].into_iter().zip(want_l) {
                let id = pool.alloc(sim_packet(PacketKind::Data, 100, e));
                q.enqueue(&mut pool, id, 0, &mut Vec::new());
                assert_eq!(inner(&q).l.len() == 1, l, "{classifier:?} {e:?}");
                q.dequeue(&mut pool, 0, &mut Vec::new());
            }
        }
    }

    #[test]
    fn samples_report_the_probabilities_and_both_delays() {
        let mut pool = PacketPool::new();
        let mut q = dualpi2(DualPi2Params::default());
        let c = pool.alloc(sim_packet(PacketKind::Data, 1000, Ecn::NotEct));
        let l = pool.alloc(sim_packet(PacketKind::Data, 1000, Ecn::Ect1));
        q.enqueue(&mut pool, c, 0, &mut Vec::new());
        q.enqueue(&mut pool, l, 30 * MS, &mut Vec::new());
        let mut got = std::collections::BTreeMap::new();
        q.sample_aqm(40 * MS, &mut |n, v| {
            got.insert(n, v);
        });
        // Updates at 16 and 32 ms saw the C head at 16 and 32 ms (the L head, 2 ms, is younger).
        let mut p = (0.16 * (0.016 - 0.015) + 3.2 * 0.016f64).clamp(0.0, 1.0);
        p = (p + 0.16 * (0.032 - 0.015) + 3.2 * (0.032 - 0.016)).clamp(0.0, 1.0);
        assert_eq!(got["p"], p);
        assert_eq!(got["p_c"], p * p);
        assert_eq!(got["p_cl"], (2.0 * p).min(1.0));
        assert_eq!(got["p_l"], (2.0 * p).min(1.0));
        assert_eq!(got["c_delay_ms"], 40.0);
        assert_eq!(got["l_delay_ms"], 10.0);
        assert_eq!((got["l_served_pkts"], got["c_served_pkts"]), (0.0, 0.0));
        // Both leave: the L packet first (it is within tshift of the C head), after 15 and 45 ms.
        let out: Vec<_> = (0..2).filter_map(|_| q.dequeue(&mut pool, 45 * MS, &mut Vec::new())).map(|o| o.0).collect();
        assert_eq!(out, vec![l, c]);
        let mut got = std::collections::BTreeMap::new();
        q.sample_aqm(50 * MS, &mut |n, v| {
            got.insert(n, v);
        });
        assert_eq!((got["l_served_pkts"], got["l_sojourn_total_ms"]), (1.0, 15.0));
        assert_eq!((got["c_served_pkts"], got["c_sojourn_total_ms"]), (1.0, 45.0));
    }

    #[test]
    fn bad_parameters_are_rejected_naming_the_field() {
        let err = |p: DualPi2Params| p.validate("q.aqm").unwrap_err().to_string();
        assert_eq!(err(DualPi2Params { target_us: -15.0, ..Default::default() }), "q.aqm.target_us (-15) must be positive");
        assert_eq!(err(DualPi2Params { coupling_factor: -2.0, ..Default::default() }), "q.aqm.coupling_factor (-2) must be positive");
        assert_eq!(err(DualPi2Params { coupling_factor: 0.0, ..Default::default() }), "q.aqm.coupling_factor (0) must be positive");
        assert_eq!(err(DualPi2Params { tshift_us: -1.0, ..Default::default() }), "q.aqm.tshift_us (-1) must be zero or positive");
        assert_eq!(err(DualPi2Params { l_min_th_us: f64::INFINITY, ..Default::default() }), "q.aqm.l_min_th_us (inf) must be zero or positive");
        assert_eq!(err(DualPi2Params { l_range_us: -400.0, ..Default::default() }), "q.aqm.l_range_us (-400) must be zero or positive");
        assert_eq!(err(DualPi2Params { t_update_us: 0.0, ..Default::default() }), "q.aqm.t_update_us (0) must be at least 1 (1 us)");
        assert!(DualPi2Params::default().validate("q.aqm").is_ok());
    }
}
