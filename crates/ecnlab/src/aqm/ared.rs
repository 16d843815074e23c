//! Adaptive RED (Floyd, Gummadi, Shenker, "Adaptive RED: An Algorithm for Increasing the
//! Robustness of RED's Active Queue Management", ICSI 2001): gentle RED whose thresholds and
//! w_q follow from a target delay and the link rate, and whose max_p is adapted slowly so the
//! average queue settles in a band around the target (spec section 3).
//!
//! Automatic configuration (spec 3.1), C = link rate in mean packets per second:
//!   min_th = max(5, target_delay C / 2), max_th = 3 min_th, w_q = 1 - exp(-1 / C);
//!   the target average queue (min_th + max_th) / 2 = target_delay C.
//! Adaptation every `interval_ms` (spec 3.2), band [min_th + 0.4 (max_th - min_th),
//! min_th + 0.6 (max_th - min_th)]:
//!   avg above the band and max_p <= top: max_p += min(alpha_max, max_p / 4);
//!   avg below the band and max_p >= bottom: max_p *= beta.
//! The check runs on a fixed 0.5 s timer from time 0 (ARED01, Linux), lazily: at each arrival
//! (and sample) the due checks run with the average as it stood (decayed over idle time, as
//! Linux's timer does), which is exactly what a timer would see, as the average only changes at
//! arrivals. ns-2/ns-3 instead check on the first arrival after each interval.
//!
//! Parameters: `target_delay_ms` 5, `interval_ms` 500, `max_p` 0.1 (initial), `alpha_max` 0.01,
//! `beta` 0.9, `top` 0.5, `bottom` 0.01, optional `min_th_pkts`, `max_th_pkts`, `w_q` overriding
//! the automatic values (one threshold given alone sets the other at a ratio of 3), and RED's `ecn`, `wait`, `byte_mode`, `mean_pkt_bytes`, `above_max`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::red::{AboveMax, Red, RedParams};
use super::{valid, AqmAlgorithm, Context, PacketView, Periodic, QueueView, Settings, Verdict};
use crate::engine::time::from_millis;
use crate::engine::{Rng, SimTime};
use crate::config::{check, ConfigError};

/// Adaptive RED parameters (spec 3; defaults ARED01 / ns-2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AredParams {
    /// Signals become CE marks for ECN-capable packets.
    pub ecn: bool,
    /// Target queueing delay (ms): the target average queue is this times the link rate.
    pub target_delay_ms: f64,
    /// Period of the max_p adaptation (ms).
    pub interval_ms: f64,
    /// Initial max_p.
    pub max_p: f64,
    /// Largest additive increase of max_p per interval (capped at max_p / 4).
    pub alpha_max: f64,
    /// Multiplicative decrease of max_p per interval.
    pub beta: f64,
    /// max_p is increased only while at most this.
    pub top: f64,
    /// max_p is decreased only while at least this.
    pub bottom: f64,
    /// Overrides the automatic minimum threshold (packets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_th_pkts: Option<f64>,
    /// Overrides the automatic maximum threshold (packets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_th_pkts: Option<f64>,
    /// Overrides the automatic EWMA weight.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub w_q: Option<f64>,
    /// As RED's `wait`.
    pub wait: bool,
    /// As RED's `byte_mode`.
    pub byte_mode: bool,
    /// Typical packet size (bytes): converts the link rate into packets per second.
    pub mean_pkt_bytes: u32,
    /// As RED's `above_max`.
    pub above_max: AboveMax,
    /// As RED's `min_queue_pkts` (ns-2.35: 2).
    #[serde(skip_serializing_if = "super::red::is_zero")]
    pub min_queue_pkts: u32,
}

impl Default for AredParams {
    fn default() -> Self {
        let red = RedParams::default();
        AredParams {
            ecn: false,
            target_delay_ms: 5.0,
            interval_ms: 500.0,
            max_p: 0.1,
            alpha_max: 0.01,
            beta: 0.9,
            top: 0.5,
            bottom: 0.01,
            min_th_pkts: None,
            max_th_pkts: None,
            w_q: None,
            wait: red.wait,
            byte_mode: red.byte_mode,
            mean_pkt_bytes: red.mean_pkt_bytes,
            above_max: red.above_max,
            min_queue_pkts: red.min_queue_pkts,
        }
    }
}

impl AredParams {
    /// The RED parameters for a link of `link_rate_bps` (spec 3.1).
    pub fn red_params(&self, link_rate_bps: f64) -> RedParams {
        let c = link_rate_bps / (8.0 * self.mean_pkt_bytes.max(1) as f64);
        // A threshold given alone sets the other by ARED's max_th = 3 min_th.
        let (min_th, max_th) = match (self.min_th_pkts, self.max_th_pkts) {
            (Some(min), Some(max)) => (min, max),
            (Some(min), None) => (min, 3.0 * min),
            (None, Some(max)) => (max / 3.0, max),
            (None, None) => {
                let min = (self.target_delay_ms / 1e3 * c / 2.0).max(5.0);
                (min, 3.0 * min)
            }
        };
        RedParams {
            ecn: self.ecn,
            min_th_pkts: min_th,
            max_th_pkts: max_th,
            max_p: self.max_p,
            w_q: self.w_q.unwrap_or_else(|| 1.0 - (-1.0 / c).exp()),
            gentle: true,
            wait: self.wait,
            byte_mode: self.byte_mode,
            mean_pkt_bytes: self.mean_pkt_bytes,
            above_max: self.above_max,
            min_queue_pkts: self.min_queue_pkts,
        }
    }

    /// An Adaptive RED queue on a link of `link_rate_bps`.
    pub fn build(&self, link_rate_bps: u64, rng: Rng) -> Ared {
        Ared {
            red: Red::new(self.red_params(link_rate_bps as f64), link_rate_bps, rng),
            adapt: Adaptation {
                timer: Periodic::new(from_millis(self.interval_ms)),
                alpha_max: self.alpha_max,
                beta: self.beta,
                top: self.top,
                bottom: self.bottom,
                increases: 0,
                decreases: 0,
            },
        }
    }
}

impl Settings for AredParams {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        valid::positive(self.target_delay_ms, path, "target_delay_ms")?;
        valid::period_ms(self.interval_ms, path, "interval_ms")?;
        valid::fraction(self.alpha_max, path, "alpha_max")?;
        valid::fraction(self.beta, path, "beta")?;
        valid::fraction(self.top, path, "top")?;
        valid::fraction(self.bottom, path, "bottom")?;
        check(
            self.bottom <= self.top,
            valid::field(path, "bottom"),
            self.bottom,
            format_args!("must not be above top ({})", self.top),
        )?;
        // The RED checks on what the user gave (automatic values are valid by construction,
        // whatever the link rate).
        self.red_params(1e7).validate(path)
    }

    fn targets_pkts(&self) -> Vec<(&'static str, f64)> {
        self.min_th_pkts.map(|v| ("min_th_pkts", v)).into_iter().collect()
    }
}

/// Adaptive RED: RED whose max_p is adapted every interval before RED sees the queue.
#[derive(Debug)]
pub struct Ared {
    pub red: Red,
    adapt: Adaptation,
}

/// State of the max_p adaptation.
#[derive(Clone, Debug)]
struct Adaptation {
    timer: Periodic,
    alpha_max: f64,
    beta: f64,
    top: f64,
    bottom: f64,
    pub increases: u64,
    pub decreases: u64,
}

impl Ared {
    /// Runs the adaptation checks due at or before `now` (spec 3.2).
    fn adapt_until(&mut self, now: SimTime) {
        let (red, a) = (&mut self.red, &mut self.adapt);
        let (min, max) = red.thresholds();
        let (lo, hi) = (min + 0.4 * (max - min), min + 0.6 * (max - min));
        while let Some(t) = a.timer.due(now) {
            let avg = red.avg_at(t);
            let max_p = &mut red.params.max_p;
            if avg > hi && *max_p <= a.top {
                *max_p += a.alpha_max.min(*max_p / 4.0);
                a.increases += 1;
            } else if avg < lo && *max_p >= a.bottom {
                *max_p *= a.beta;
                a.decreases += 1;
            }
        }
    }

    /// The counts of max_p increases and decreases.
    pub fn adaptations(&self) -> (u64, u64) {
        (self.adapt.increases, self.adapt.decreases)
    }
}

impl AqmAlgorithm for Ared {
    type Params = AredParams;
    const VARIABLES: &'static [&'static str] = &["avg", "max_p"];

    fn build(params: &AredParams, ctx: Context) -> Ared {
        params.build(ctx.rate_bps, ctx.rng)
    }

    fn on_enqueue(&mut self, q: &QueueView, pkt: &PacketView, now: SimTime) -> Verdict {
        self.adapt_until(now);
        self.red.on_enqueue(q, pkt, now)
    }

    fn on_idle(&mut self, now: SimTime) {
        self.red.on_idle(now);
    }

    fn ecn(&self) -> bool {
        self.red.ecn()
    }

    fn sample(&mut self, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        self.adapt_until(now);
        self.red.sample(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::tests::packet;
    use crate::aqm::{AqmAlgorithm, QueueView};
    use crate::packet::Ecn;

    #[test]
    fn auto_configuration_matches_spec_vector() {
        // 10 Mb/s, 500-B packets: C = 2500 pkt/s; target 5 ms.
        let p = AredParams::default().red_params(10e6);
        assert!((p.min_th_pkts - 6.25).abs() < 1e-12);
        assert!((p.max_th_pkts - 18.75).abs() < 1e-12);
        assert!((p.w_q - 3.9992e-4).abs() < 1e-8, "w_q {}", p.w_q);
        assert!(p.gentle);
        // A slow link: the floor of 5 packets.
        assert_eq!(AredParams::default().red_params(1e6).min_th_pkts, 5.0);
        // One threshold given: the other at a ratio of 3.
        let p = AredParams { max_th_pkts: Some(30.0), ..Default::default() }.red_params(10e6);
        assert_eq!((p.min_th_pkts, p.max_th_pkts), (10.0, 30.0));
    }

    /// Holds the average at `q` (w_q 1) for `secs` with one arrival per ms.
    fn run(red: &mut Ared, q: u32, from_ms: u64, secs: u64) {
        let p = packet(500, Ecn::NotEct);
        let v = QueueView { len_pkts: q, len_bytes: q as u64 * 500 };
        for i in 0..secs * 1000 {
            red.on_enqueue(&v, &p, (from_ms + i) * 1_000_000);
        }
    }

    #[test]
    fn max_p_rises_above_the_band_and_falls_below_it() {
        let params = AredParams { w_q: Some(1.0), ..Default::default() };
        let mut red = params.build(10_000_000, Rng::from_seed(3));
        // Band for 6.25/18.75: [11.25, 13.75]. avg 16 is above: +min(0.01, max_p/4) per 0.5 s.
        run(&mut red, 16, 0, 2);
        // Checks at 0.5, 1.0, 1.5 s (the 2.0 s one is not yet due at the last arrival, 1.999 s).
        assert!((red.red.params.max_p - 0.13).abs() < 1e-12, "max_p {}", red.red.params.max_p);
        // It stops rising once above top (0.5), at most one step (0.01) beyond it.
        run(&mut red, 16, 2000, 30);
        assert!(red.red.params.max_p > 0.5 - 1e-9 && red.red.params.max_p <= 0.51 + 1e-9, "max_p {}", red.red.params.max_p);
        // Below the band: x0.9 per check until below bottom.
        run(&mut red, 8, 32000, 60);
        assert!(red.red.params.max_p < 0.01 && red.red.params.max_p >= 0.009, "max_p {}", red.red.params.max_p);
        // Inside the band: unchanged.
        let before = red.red.params.max_p;
        run(&mut red, 12, 92000, 5);
        assert_eq!(red.red.params.max_p, before);
    }
}
