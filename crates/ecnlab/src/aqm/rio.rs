//! RIO (Clark and Fang 1998; spec 10.1) with RIO-PS's edge classification (Guo and Matta 2001;
//! spec 10.2): two RED instances over one FIFO. IN packets are judged on the average of the
//! queued IN packets with the IN thresholds; OUT packets on the average of all queued packets
//! with the (lower, steeper) OUT thresholds. Both averages are RED's (`red.rs`), and the total
//! one is updated on every arrival (the ns-2 bug of spec 10.1 avoided).
//!
//! Classification (RIO-PS): the first `short_flow_pkts` (L_t) packets of each flow, SYN
//! included, are IN, the rest OUT; a flow idle for `idle_timeout_ms` starts again. The counts are
//! kept at this queue (it sees every packet of a flow in its direction, as the edge of a dumbbell
//! does), in a direct-mapped table of `table_size` entries where a colliding flow takes over
//! the entry (counted in `table_overwrites`). `short_flow_pkts` 0 makes every packet OUT: RIO
//! without preference, i.e. RED with the OUT parameters.
//! Defaults: the ns-2 `Queue/RED/RIO` column of spec 10.1 (IN 15/30/0.02, OUT 5/15/0.1,
//! w_q 0.002, not gentle); L_t 20, idle timeout 1 s, table 65536 [U].

use std::collections::VecDeque;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::red::{Red, RedParams};
use super::{flow_slot, valid, AqmAlgorithm, Context, PacketView, QueueView, Settings, Verdict};
use crate::engine::time::from_millis;
use crate::engine::{Rng, SimTime};
use crate::config::{check, ConfigError};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RioParams {
    /// Signals become CE marks for ECN-capable packets.
    pub ecn: bool,
    pub in_min_th_pkts: f64,
    pub in_max_th_pkts: f64,
    pub in_max_p: f64,
    pub out_min_th_pkts: f64,
    pub out_max_th_pkts: f64,
    pub out_max_p: f64,
    /// EWMA weight of both averages.
    pub w_q: f64,
    /// Gentle RED beyond max_th (both classes).
    pub gentle: bool,
    /// Packets per flow tagged IN (L_t); 0: every packet is OUT.
    pub short_flow_pkts: u32,
    /// A flow silent this long is classified afresh (ms).
    pub idle_timeout_ms: f64,
    /// Classifier entries.
    pub table_size: u32,
    /// Typical packet size (bytes), for RED's idle decay.
    pub mean_pkt_bytes: u32,
}

impl Default for RioParams {
    fn default() -> Self {
        RioParams {
            ecn: false,
            in_min_th_pkts: 15.0,
            in_max_th_pkts: 30.0,
            in_max_p: 0.02,
            out_min_th_pkts: 5.0,
            out_max_th_pkts: 15.0,
            out_max_p: 0.1,
            w_q: 0.002,
            gentle: false,
            short_flow_pkts: 20,
            idle_timeout_ms: 1000.0,
            table_size: 65536,
            mean_pkt_bytes: 1000,
        }
    }
}

impl RioParams {
    fn red(&self, min: f64, max: f64, max_p: f64) -> RedParams {
        RedParams { ecn: self.ecn, min_th_pkts: min, max_th_pkts: max, max_p, w_q: self.w_q, gentle: self.gentle, mean_pkt_bytes: self.mean_pkt_bytes, ..Default::default() }
    }
}

impl Settings for RioParams {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        // Each class's RED parameters, reported under this table's field names.
        for (min, max, p, pre) in [
            (self.in_min_th_pkts, self.in_max_th_pkts, self.in_max_p, "in_"),
            (self.out_min_th_pkts, self.out_max_th_pkts, self.out_max_p, "out_"),
        ] {
            valid::non_negative(min, path, &format!("{pre}min_th_pkts"))?;
            check(max > 0.0 && max >= min, valid::field(path, &format!("{pre}max_th_pkts")), max, format_args!("must be positive and not below {pre}min_th_pkts ({min})"))?;
            valid::fraction(p, path, &format!("{pre}max_p"))?;
        }
        valid::fraction(self.w_q, path, "w_q")?;
        valid::positive(self.idle_timeout_ms, path, "idle_timeout_ms")?;
        check(self.table_size >= 1, valid::field(path, "table_size"), self.table_size, "must be at least 1")?;
        check(self.mean_pkt_bytes >= 1, valid::field(path, "mean_pkt_bytes"), self.mean_pkt_bytes, "must be at least 1")
    }

    fn targets_pkts(&self) -> Vec<(&'static str, f64)> {
        vec![("in_min_th_pkts", self.in_min_th_pkts), ("out_min_th_pkts", self.out_min_th_pkts)]
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct RioStats {
    pub in_arrivals: u64,
    pub out_arrivals: u64,
    pub in_signals: u64,
    pub out_signals: u64,
    /// Classifier entries of a live flow taken over by another flow.
    pub table_overwrites: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    key: u64,
    pkts: u32,
    last: SimTime,
}

#[derive(Debug)]
pub struct Rio {
    pub params: RioParams,
    /// RED over IN packets (IN thresholds) and over all packets (OUT thresholds).
    pub red_in: Red,
    pub red_total: Red,
    table: Vec<Entry>,
    idle_timeout: SimTime,
    /// IN bit of each queued packet, in queue order, and the IN packets queued.
    queued_in: VecDeque<bool>,
    in_len: u32,
    /// The class of the arrival being judged, until the queue acts on the verdict.
    arriving_in: bool,
    pub stats: RioStats,
}

impl Rio {
    pub fn new(params: RioParams, link_rate_bps: u64, mut rng: Rng) -> Rio {
        let p = &params;
        let red_in = Red::new(p.red(p.in_min_th_pkts, p.in_max_th_pkts, p.in_max_p), link_rate_bps, rng.fork());
        let red_total = Red::new(p.red(p.out_min_th_pkts, p.out_max_th_pkts, p.out_max_p), link_rate_bps, rng);
        Rio {
            red_in,
            red_total,
            table: vec![Entry::default(); p.table_size as usize],
            idle_timeout: from_millis(p.idle_timeout_ms),
            queued_in: VecDeque::with_capacity(64),
            in_len: 0,
            arriving_in: false,
            stats: RioStats::default(),
            params,
        }
    }

    /// RIO-PS edge rule: IN for the first L_t packets of a flow (spec 10.2).
    pub fn classify(&mut self, pkt: &PacketView, now: SimTime) -> bool {
        if self.params.short_flow_pkts == 0 {
            return false;
        }
        let key = pkt.flow + 1;
        let timeout = self.idle_timeout;
        let i = flow_slot(key, self.table.len());
        let e = &mut self.table[i];
        if e.key != key || now - e.last >= timeout {
            if e.key != key && e.key != 0 && now - e.last < timeout {
                self.stats.table_overwrites += 1;
            }
            *e = Entry { key, pkts: 0, last: now };
        }
        e.pkts = e.pkts.saturating_add(1);
        e.last = now;
        e.pkts <= self.params.short_flow_pkts
    }
}

impl AqmAlgorithm for Rio {
    type Params = RioParams;
    const VARIABLES: &'static [&'static str] = &["avg_in", "avg_total", "in_queued"];

    fn build(params: &RioParams, ctx: Context) -> Rio {
        Rio::new(params.clone(), ctx.rate_bps, ctx.rng)
    }

    fn on_enqueue(&mut self, q: &QueueView, pkt: &PacketView, now: SimTime) -> Verdict {
        let is_in = self.classify(pkt, now);
        self.red_total.update_avg(q.len_pkts as f64, now);
        let v = if is_in {
            self.stats.in_arrivals += 1;
            self.red_in.update_avg(self.in_len as f64, now);
            self.red_in.decide(pkt)
        } else {
            self.stats.out_arrivals += 1;
            self.red_total.decide(pkt)
        };
        if v != Verdict::Pass {
            if is_in { self.stats.in_signals += 1 } else { self.stats.out_signals += 1 }
        }
        self.arriving_in = is_in;
        v
    }

    fn after_enqueue(&mut self, _q: &QueueView, kept: bool) {
        if kept {
            self.queued_in.push_back(self.arriving_in);
            self.in_len += self.arriving_in as u32;
        }
    }

    fn on_dequeue(&mut self, _q: &QueueView, _pkt: &PacketView, _now: SimTime) -> Verdict {
        if self.queued_in.pop_front() == Some(true) {
            self.in_len -= 1;
        }
        Verdict::Pass
    }

    fn on_idle(&mut self, now: SimTime) {
        self.red_in.on_idle(now);
        self.red_total.on_idle(now);
    }

    fn ecn(&self) -> bool {
        self.params.ecn
    }

    fn sample(&mut self, _now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        out("avg_in", self.red_in.avg);
        out("avg_total", self.red_total.avg);
        out("in_queued", self.in_len as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::tests::flow_packet;
    use crate::packet::Ecn;

    fn pkt(flow: u32) -> PacketView {
        flow_packet(flow, 1000, Ecn::NotEct)
    }

    #[test]
    fn first_l_t_packets_are_in_then_out_and_idle_flows_restart() {
        let mut r = Rio::new(RioParams::default(), 10_000_000, Rng::from_seed(1));
        let ms = 1_000_000;
        let tags: Vec<bool> = (0..25).map(|i| r.classify(&pkt(3), i * ms)).collect();
        assert!(tags[..20].iter().all(|&t| t) && tags[20..].iter().all(|&t| !t), "{tags:?}");
        // Another flow is independent; after 1 s of silence flow 3 is new again.
        assert!(r.classify(&pkt(4), 30 * ms));
        assert!(r.classify(&pkt(3), 25 * ms + 1000 * ms));
        let mut p = pkt(3);
        p.flow |= 1; // generation 1: a new connection in the same slot
        assert!(r.classify(&p, 1026 * ms));
    }

    #[test]
    fn in_packets_use_the_in_average_and_out_packets_the_total() {
        // 40 packets queued, none IN: the total average follows q (w_q 1) and OUT packets are
        // forced beyond out_max_th 15, while an IN packet sees avg_in 0 and passes.
        let p = RioParams { w_q: 1.0, short_flow_pkts: 1, ..Default::default() };
        let mut r = Rio::new(p, 10_000_000, Rng::from_seed(1));
        let q = QueueView { len_pkts: 40, len_bytes: 40_000 };
        assert_eq!(r.on_enqueue(&q, &pkt(1), 0), Verdict::Pass); // IN (first packet of flow 1)
        r.after_enqueue(&QueueView { len_pkts: 41, len_bytes: 41_000 }, true);
        assert_eq!(r.red_total.avg, 40.0);
        assert_eq!(r.red_in.avg, 0.0);
        assert!(matches!(r.on_enqueue(&q, &pkt(1), 1), Verdict::Drop(_))); // OUT, avg 40 > 15
        r.after_enqueue(&q, false);
        assert_eq!(r.in_len, 1);
        r.on_dequeue(&q, &pkt(1), 2);
        assert_eq!(r.in_len, 0);
    }
}
