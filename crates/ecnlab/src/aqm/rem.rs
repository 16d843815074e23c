//! REM: Random Exponential Marking (Athuraliya, Li, Low, Yin, "REM: Active Queue Management",
//! IEEE Network 2001; spec section 4), in ns-2's units (`rem.cc`).
//!
//! Price update every `update_ms` from time 0 (spec 4.2):
//!   x_avg <- (1 - in_weight) x_avg + in_weight x      (x: arrivals in the period, packets)
//!   price <- max(0, price + gamma (x_avg + alpha (q - b*) - c)),  c = packets the link serves
//!   per period (T rate / (8 mean_pkt_bytes));  prob = 1 - phi^(-price).
//! Each arrival that fits in the buffer is signalled with probability prob (byte mode:
//! prob size / mean_pkt_bytes), decided at enqueue (spec 4.3), or with `mark_on_dequeue` (ns-2's
//! `markpkts_`) at departure, marking ECN-capable packets only and never dropping. The price settles where input equals capacity and q equals b*.
//!
//! The updates run lazily (see [`super::Periodic`]): at each event the due updates run with the
//! occupancy and arrival count as they stood, exactly as a timer would.
//!
//! Parameters: `phi` 1.001, `gamma` 0.001, `alpha` 0.1, `b_star_pkts` 20, `update_ms` 2,
//! `in_weight` 1, `byte_mode` false, `mean_pkt_bytes` 1000, `ecn` false, `mark_on_dequeue` false
//! (ns-2 `Queue/REM`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{byte_scaled, coin, signal_marks, valid, AqmAlgorithm, Context, PacketView, Periodic, QueueView, Settings, Verdict};
use crate::engine::time::from_millis;
use crate::engine::{Rng, SimTime};
use crate::config::{check, ConfigError};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RemParams {
    /// Signals become CE marks for ECN-capable packets.
    pub ecn: bool,
    /// Base of the exponential marking function (> 1).
    pub phi: f64,
    /// Price step size.
    pub gamma: f64,
    /// Weight of the backlog mismatch against the rate mismatch.
    pub alpha: f64,
    /// Target backlog b* (packets; in byte mode, mean packets).
    pub b_star_pkts: f64,
    /// Price update period (ms).
    pub update_ms: f64,
    /// EWMA weight of the per-period input (1: no smoothing).
    pub in_weight: f64,
    /// Measure queue and input in bytes / mean_pkt_bytes and scale the probability by size.
    pub byte_mode: bool,
    /// Typical packet size (bytes): converts the link rate into packets per period.
    pub mean_pkt_bytes: u32,
    /// ns-2's `markpkts_` mode: mark departing ECN-capable packets with probability prob and
    /// never drop early (needs `ecn`).
    pub mark_on_dequeue: bool,
}

impl Default for RemParams {
    fn default() -> Self {
        RemParams {
            ecn: false,
            phi: 1.001,
            gamma: 0.001,
            alpha: 0.1,
            b_star_pkts: 20.0,
            update_ms: 2.0,
            in_weight: 1.0,
            byte_mode: false,
            mean_pkt_bytes: 1000,
            mark_on_dequeue: false,
        }
    }
}

impl Settings for RemParams {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        check(self.phi > 1.0 && self.phi.is_finite(), valid::field(path, "phi"), self.phi, "must be above 1")?;
        valid::positive(self.gamma, path, "gamma")?;
        valid::positive(self.alpha, path, "alpha")?;
        valid::non_negative(self.b_star_pkts, path, "b_star_pkts")?;
        valid::period_ms(self.update_ms, path, "update_ms")?;
        valid::fraction(self.in_weight, path, "in_weight")?;
        check(!self.mark_on_dequeue || self.ecn, valid::field(path, "mark_on_dequeue"), true, "needs ecn = true")?;
        check(self.mean_pkt_bytes >= 1, valid::field(path, "mean_pkt_bytes"), self.mean_pkt_bytes, "must be at least 1")
    }

    fn targets_pkts(&self) -> Vec<(&'static str, f64)> {
        vec![("b_star_pkts", self.b_star_pkts)]
    }
}

#[derive(Debug)]
pub struct Rem {
    pub params: RemParams,
    pub price: f64,
    /// Signal probability 1 - phi^(-price).
    pub prob: f64,
    /// Arrivals in the current period and their smoothed count (packets).
    in_count: f64,
    x_avg: f64,
    /// Packets the link serves per period.
    capacity: f64,
    timer: Periodic,
    last: QueueView,
    rng: Rng,
}

impl Rem {
    pub fn new(params: RemParams, link_rate_bps: u64, rng: Rng) -> Rem {
        let capacity = params.update_ms / 1e3 * link_rate_bps as f64 / (8.0 * params.mean_pkt_bytes as f64);
        Rem {
            timer: Periodic::new(from_millis(params.update_ms)),
            params,
            price: 0.0,
            prob: 0.0,
            in_count: 0.0,
            x_avg: 0.0,
            capacity,
            last: QueueView::default(),
            rng,
        }
    }

    /// The marking probability for a price (spec 4.2).
    pub fn probability(phi: f64, price: f64) -> f64 {
        1.0 - phi.powf(-price)
    }

    /// The signal probability of `pkt` (byte mode: scaled by its size).
    fn packet_prob(&self, pkt: &PacketView) -> f64 {
        if self.params.byte_mode {
            byte_scaled(self.prob, pkt.size, self.params.mean_pkt_bytes)
        } else {
            self.prob
        }
    }

    fn catch_up(&mut self, now: SimTime) {
        while self.timer.due(now).is_some() {
            let p = &self.params;
            let q = if p.byte_mode {
                self.last.len_bytes as f64 / p.mean_pkt_bytes as f64
            } else {
                self.last.len_pkts as f64
            };
            self.x_avg = (1.0 - p.in_weight) * self.x_avg + p.in_weight * self.in_count;
            self.price = (self.price + p.gamma * (self.x_avg + p.alpha * (q - p.b_star_pkts) - self.capacity)).max(0.0);
            self.prob = Rem::probability(p.phi, self.price);
            self.in_count = 0.0;
        }
    }
}

impl AqmAlgorithm for Rem {
    type Params = RemParams;
    const VARIABLES: &'static [&'static str] = &["price", "prob"];

    fn build(params: &RemParams, ctx: Context) -> Rem {
        Rem::new(params.clone(), ctx.rate_bps, ctx.rng)
    }

    fn on_enqueue(&mut self, _q: &QueueView, pkt: &PacketView, now: SimTime) -> Verdict {
        self.catch_up(now);
        let p = &self.params;
        self.in_count += if p.byte_mode { pkt.size as f64 / p.mean_pkt_bytes as f64 } else { 1.0 };
        if p.mark_on_dequeue {
            Verdict::Pass
        } else {
            let prob = self.packet_prob(pkt);
            coin(&mut self.rng, prob)
        }
    }

    fn after_enqueue(&mut self, q: &QueueView, _kept: bool) {
        self.last = *q;
    }

    fn on_dequeue(&mut self, q: &QueueView, pkt: &PacketView, now: SimTime) -> Verdict {
        self.catch_up(now);
        self.last = *q;
        if self.params.mark_on_dequeue && signal_marks(self.params.ecn, pkt.ecn) {
            let prob = self.packet_prob(pkt);
            coin(&mut self.rng, prob)
        } else {
            Verdict::Pass
        }
    }

    fn ecn(&self) -> bool {
        self.params.ecn
    }

    fn sample(&mut self, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        self.catch_up(now);
        out("price", self.price);
        out("prob", self.prob);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::tests::packet;
    use crate::packet::Ecn;

    #[test]
    fn spec_vector_probability() {
        assert!((Rem::probability(1.001, 10.0) - 0.009945).abs() < 5e-7);
        assert_eq!(Rem::probability(1.001, 0.0), 0.0);
    }

    #[test]
    fn price_update_by_hand() {
        // 10 Mb/s, 1000-B packets, 2 ms periods: c = 2.5 packets per period.
        let mut rem = Rem::new(RemParams::default(), 10_000_000, Rng::from_seed(1));
        let pkt = packet(1000, Ecn::NotEct);
        // 40 arrivals in the first period, queue 40 at its end.
        for i in 0..40 {
            rem.on_enqueue(&QueueView { len_pkts: i, len_bytes: 1000 * i as u64 }, &pkt, 1000 + i as u64);
            rem.after_enqueue(&QueueView { len_pkts: i + 1, len_bytes: 1000 * (i + 1) as u64 }, true);
        }
        rem.sample(2_000_000, &mut |_, _| {});
        // price = 0.001 (40 + 0.1 (40 - 20) - 2.5) = 0.0395
        let p1 = 0.001 * (40.0 + 0.1 * (40.0 - 20.0) - 2.5);
        assert!((rem.price - p1).abs() < 1e-15, "price {}", rem.price);
        // No arrivals in the second period: price += 0.001 (0 + 2 - 2.5) = -0.0005.
        rem.sample(4_000_000, &mut |_, _| {});
        assert!((rem.price - (p1 - 0.0005)).abs() < 1e-15);
        assert!((rem.prob - Rem::probability(1.001, p1 - 0.0005)).abs() < 1e-15);
        // The price never goes below 0.
        rem.on_dequeue(&QueueView::default(), &pkt, 4_000_001);
        rem.sample(1_000_000_000, &mut |_, _| {});
        assert_eq!(rem.price, 0.0);
    }

    #[test]
    fn mark_on_dequeue_marks_departing_ect_packets_only() {
        let params = RemParams { ecn: true, mark_on_dequeue: true, ..Default::default() };
        let mut rem = Rem::new(params, 10_000_000, Rng::from_seed(1));
        rem.price = 1e6; // prob = 1 until the next update at 2 ms
        rem.prob = Rem::probability(1.001, rem.price);
        let ect = packet(1000, Ecn::Ect0);
        let syn_ack = packet(40, Ecn::NotEct);
        let q = QueueView { len_pkts: 5, len_bytes: 5000 };
        assert_eq!(rem.on_enqueue(&q, &ect, 1), Verdict::Pass);
        assert_eq!(rem.on_dequeue(&q, &ect, 2), Verdict::Signal(crate::aqm::Reason::Early));
        assert_eq!(rem.on_dequeue(&q, &syn_ack, 3), Verdict::Pass);
        let e = RemParams { mark_on_dequeue: true, ..Default::default() }.validate("aqm").unwrap_err();
        assert_eq!(e.to_string(), "aqm.mark_on_dequeue (true) needs ecn = true");
    }

    #[test]
    fn validate_rejects_phi_at_most_one() {
        let e = RemParams { phi: 1.0, ..Default::default() }.validate("aqm").unwrap_err();
        assert_eq!(e.to_string(), "aqm.phi (1) must be above 1");
    }
}
