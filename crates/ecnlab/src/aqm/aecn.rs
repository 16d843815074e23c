//! AECN, adaptive ECN: RED with ECN whose max_p adapts to the number of flows and, per flow, to
//! how far the flow's rate is from the mean. Seed 001 (Kinicki and Zheng) ends by proposing
//! "an adaptive version of ECN that adjusts max_p based on the round-trip time of a flow and an
//! estimate of the current number of flows" in each flow group, after finding that (i) with
//! many flows max_p must be raised aggressively and (ii) one max_p is unfair to long-RTT flows.
//! The seed gives no algorithm; this is our reading, built from two standard relations:
//!
//! * TCP's rate is about `MSS / (RTT sqrt(2p/3))`, so N flows sharing a link of capacity C and
//!   buffer B need `p ~ (N / (C RTT + B))^2`: the marking level grows as N squared. We scale
//!   max_p by `(N / n_ref_flows)^flow_exponent` (default exponent 2), N counted per window.
//! * A router cannot see a flow's RTT, but it can see its rate, which is inversely proportional
//!   to RTT at equal p. Marking a flow with `p_i = p (r_i / r_mean)^rate_exponent` (default 2)
//!   cancels that dependence: a short-RTT flow sending twice the mean rate is marked four times
//!   as often, a long-RTT flow at half the mean a quarter as often.
//!
//! Per flow, a direct-mapped table of `table_size` entries (a colliding flow takes the entry
//! over) holds the bytes seen in the current window of `window_ms` and the previous window's
//! count, which is the flow's rate; the number of flows is the number that sent in the previous
//! window. RED's average, thresholds, gentle region and count spacing are used unchanged, with
//! the packet's adapted max_p, capped at `max_p_cap`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::red::{Red, RedParams};
use super::{flow_slot, valid, AqmAlgorithm, Context, PacketView, QueueView, Settings, Verdict};
use crate::engine::time::from_millis;
use crate::engine::{Rng, SimTime};
use crate::config::{check, ConfigError};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AecnParams {
    /// The RED underneath (its `max_p` is the level at `n_ref_flows` flows of mean rate);
    /// default: RED's defaults with `ecn = true`.
    pub red: RedParams,
    /// Number of flows at which max_p is `red.max_p`.
    pub n_ref_flows: f64,
    /// max_p grows as (flows / n_ref_flows) to this power.
    pub flow_exponent: f64,
    /// A flow's max_p scales as (its rate / the mean rate) to this power (0: no per-flow part).
    pub rate_exponent: f64,
    /// Upper bound of the adapted max_p.
    pub max_p_cap: f64,
    /// Window over which flows and their rates are counted (ms).
    pub window_ms: f64,
    /// Per-flow table entries.
    pub table_size: u32,
}

impl Default for AecnParams {
    fn default() -> Self {
        AecnParams {
            red: RedParams { ecn: true, ..RedParams::default() },
            n_ref_flows: 10.0,
            flow_exponent: 2.0,
            rate_exponent: 2.0,
            max_p_cap: 1.0,
            window_ms: 1000.0,
            table_size: 4096,
        }
    }
}

impl Settings for AecnParams {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        self.red.validate(&valid::field(path, "red"))?;
        valid::positive(self.n_ref_flows, path, "n_ref_flows")?;
        valid::non_negative(self.flow_exponent, path, "flow_exponent")?;
        valid::non_negative(self.rate_exponent, path, "rate_exponent")?;
        valid::fraction(self.max_p_cap, path, "max_p_cap")?;
        check(self.max_p_cap > 0.0, valid::field(path, "max_p_cap"), self.max_p_cap, "must be positive")?;
        valid::period_ms(self.window_ms, path, "window_ms")?;
        check(self.table_size >= 1, valid::field(path, "table_size"), self.table_size, "must be at least 1")
    }

    fn targets_pkts(&self) -> Vec<(&'static str, f64)> {
        vec![("red.min_th_pkts", self.red.min_th_pkts)]
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct FlowEntry {
    key: u64,
    /// Window the byte count belongs to.
    window: u64,
    bytes: u64,
    /// Bytes in the window before `window` (0 if the flow was silent then).
    prev_bytes: u64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct AecnStats {
    /// Flows that sent in the last completed window.
    pub flows: u64,
    pub table_overwrites: u64,
}

#[derive(Debug)]
pub struct Aecn {
    params: AecnParams,
    red: Red,
    window: SimTime,
    table: Vec<FlowEntry>,
    /// Current window index, flows and bytes seen in it; flows and bytes of the previous one.
    cur: u64,
    cur_flows: u64,
    cur_bytes: u64,
    prev_flows: u64,
    prev_bytes: u64,
    pub stats: AecnStats,
}

impl Aecn {
    pub fn new(params: AecnParams, link_rate_bps: u64, rng: Rng) -> Aecn {
        Aecn {
            red: Red::new(params.red.clone(), link_rate_bps, rng),
            window: from_millis(params.window_ms).max(1),
            table: vec![FlowEntry::default(); params.table_size as usize],
            cur: 0,
            cur_flows: 0,
            cur_bytes: 0,
            prev_flows: 0,
            prev_bytes: 0,
            stats: AecnStats::default(),
            params,
        }
    }

    /// Brings the window counters to `now`.
    fn roll(&mut self, now: SimTime) {
        let w = now / self.window;
        if w > self.cur {
            let adjacent = w == self.cur + 1;
            self.prev_flows = if adjacent { self.cur_flows } else { 0 };
            self.prev_bytes = if adjacent { self.cur_bytes } else { 0 };
            self.stats.flows = self.prev_flows;
            self.cur = w;
            self.cur_flows = 0;
            self.cur_bytes = 0;
        }
    }

    /// Counts the packet for its flow; returns the flow's rate in the previous window (bytes).
    fn count(&mut self, pkt: &PacketView) -> u64 {
        let key = pkt.flow;
        let slot = flow_slot(key, self.table.len());
        let e = &mut self.table[slot];
        if e.key != key {
            if e.window == self.cur && e.bytes > 0 {
                self.stats.table_overwrites += 1;
            }
            *e = FlowEntry { key, window: self.cur, bytes: 0, prev_bytes: 0 };
        }
        if e.window != self.cur {
            e.prev_bytes = if e.window + 1 == self.cur { e.bytes } else { 0 };
            e.bytes = 0;
            e.window = self.cur;
        }
        if e.bytes == 0 {
            self.cur_flows += 1;
        }
        e.bytes += pkt.size as u64;
        self.cur_bytes += pkt.size as u64;
        e.prev_bytes
    }

    /// max_p for the level of flows alone (no per-flow factor).
    pub fn scaled_max_p(&self) -> f64 {
        let n = (self.prev_flows.max(1)) as f64;
        (self.params.red.max_p * (n / self.params.n_ref_flows).powf(self.params.flow_exponent)).min(self.params.max_p_cap)
    }

    /// The adapted max_p for a flow that sent `flow_bytes` in the previous window.
    pub fn flow_max_p(&self, flow_bytes: u64) -> f64 {
        let base = self.scaled_max_p();
        if self.prev_flows == 0 || flow_bytes == 0 || self.params.rate_exponent == 0.0 {
            return base;
        }
        let mean = self.prev_bytes as f64 / self.prev_flows as f64;
        let ratio = flow_bytes as f64 / mean;
        (base * ratio.powf(self.params.rate_exponent)).min(self.params.max_p_cap)
    }
}

impl AqmAlgorithm for Aecn {
    type Params = AecnParams;
    const VARIABLES: &'static [&'static str] = &["avg", "flows", "max_p"];

    fn build(params: &AecnParams, ctx: Context) -> Aecn {
        Aecn::new(params.clone(), ctx.rate_bps, ctx.rng)
    }

    fn on_enqueue(&mut self, q: &QueueView, pkt: &PacketView, now: SimTime) -> Verdict {
        self.roll(now);
        let flow_bytes = self.count(pkt);
        let max_p = self.flow_max_p(flow_bytes);
        self.red.params.max_p = max_p;
        self.red.on_enqueue(q, pkt, now)
    }

    fn on_idle(&mut self, now: SimTime) {
        self.red.on_idle(now);
    }

    fn ecn(&self) -> bool {
        self.params.red.ecn
    }

    fn sample(&mut self, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        self.roll(now);
        out("avg", self.red.avg_at(now));
        out("flows", self.prev_flows as f64);
        out("max_p", self.scaled_max_p());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::tests::flow_packet;
    use crate::packet::Ecn;


    #[test]
    fn max_p_scales_with_flows_squared_and_with_each_flows_rate_squared() {
        let params = AecnParams { n_ref_flows: 2.0, window_ms: 100.0, ..AecnParams::default() };
        let mut a = Aecn::new(params, 10_000_000, Rng::from_seed(1));
        let q = QueueView::default();
        // Window 0: four flows; flow 0 sends 3000 B, the others 1000 B (mean 1500 B).
        for (flow, n) in [(0, 3), (1, 1), (2, 1), (3, 1)] {
            for _ in 0..n {
                a.on_enqueue(&q, &flow_packet(flow, 1000, Ecn::Ect0), 1_000);
            }
        }
        // In window 1 the counts of window 0 apply: 4 flows against n_ref 2 -> max_p 0.1 * 4.
        a.roll(150_000_000);
        assert_eq!(a.stats.flows, 4);
        assert!((a.scaled_max_p() - 0.4).abs() < 1e-12);
        // Flow 0 at twice the mean: 0.4 * 2^2 capped at 1; flow 1 at 2/3: 0.4 * 4/9.
        assert_eq!(a.flow_max_p(3000), 1.0);
        assert!((a.flow_max_p(1000) - 0.4 * 4.0 / 9.0).abs() < 1e-12);
        // A flow's own entry carries its previous-window bytes into the next window.
        assert_eq!(a.count(&flow_packet(1, 1000, Ecn::Ect0)), 1000);
        // After a silent window everything starts over.
        a.roll(350_000_000);
        assert_eq!(a.stats.flows, 0);
        assert!((a.scaled_max_p() - 0.1 * 0.25).abs() < 1e-12, "one flow assumed: (1/2)^2");
    }
}
