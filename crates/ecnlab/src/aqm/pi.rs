//! PI: the proportional-integral AQM controller (Hollot, Misra, Towsley, Gong, "On Designing
//! Improved Controllers for AQM Routers Supporting TCP Flows", INFOCOM 2001; spec section 5).
//!
//! Control law, every T = 1 / `sample_hz` from time 0 (spec 5.1, ns-2 `pi.cc`):
//!   p <- clamp(p + a (q - q_ref) - b (q_old - q_ref), 0, 1);  q_old <- q
//! with q in packets (byte mode: bytes / mean_pkt_bytes). Each arrival that fits in the buffer is
//! signalled with probability p (byte mode: p size / mean_pkt_bytes).
//!
//! The updates run lazily (see [`super::Periodic`]): q only changes at enqueue and dequeue, which
//! PI sees, so catching up on the due updates at each event gives exactly the timer's values.
//!
//! Parameters: `a` 1.822e-5, `b` 1.816e-5, `sample_hz` 160 (the paper's example; ns-2 uses 170),
//! `q_ref_pkts` 50 (ns-2), `byte_mode` false, `mean_pkt_bytes` 500, `ecn` false.
//! [`design`] and [`coefficients`] derive a and b for other links by the paper's rules.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{byte_scaled, coin, valid, AqmAlgorithm, Context, PacketView, Periodic, QueueView, Settings, Verdict};
use crate::engine::time::from_secs;
use crate::engine::{Rng, SimTime};
use crate::config::{check, ConfigError};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PiParams {
    /// Signals become CE marks for ECN-capable packets.
    pub ecn: bool,
    /// Coefficient of the current error (per packet).
    pub a: f64,
    /// Coefficient of the previous error (per packet).
    pub b: f64,
    /// Update frequency (Hz).
    pub sample_hz: f64,
    /// Target queue (packets; in byte mode, mean packets).
    pub q_ref_pkts: f64,
    /// Measure the queue in bytes / mean_pkt_bytes and scale the probability by packet size.
    pub byte_mode: bool,
    /// Typical packet size (bytes).
    pub mean_pkt_bytes: u32,
}

impl Default for PiParams {
    fn default() -> Self {
        PiParams {
            ecn: false,
            a: 1.822e-5,
            b: 1.816e-5,
            sample_hz: 160.0,
            q_ref_pkts: 50.0,
            byte_mode: false,
            mean_pkt_bytes: 500,
        }
    }
}

impl Settings for PiParams {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        valid::positive(self.a, path, "a")?;
        valid::non_negative(self.b, path, "b")?;
        check(self.b < self.a, valid::field(path, "b"), self.b, format_args!("must be below a ({}) for a stable integral term", self.a))?;
        check(self.sample_hz > 0.0 && self.sample_hz <= 1e6, valid::field(path, "sample_hz"), self.sample_hz, "must be in (0, 1000000]")?;
        valid::non_negative(self.q_ref_pkts, path, "q_ref_pkts")?;
        check(self.mean_pkt_bytes >= 1, valid::field(path, "mean_pkt_bytes"), self.mean_pkt_bytes, "must be at least 1")
    }

    fn targets_pkts(&self) -> Vec<(&'static str, f64)> {
        vec![("q_ref_pkts", self.q_ref_pkts)]
    }
}

/// The continuous-time design of spec 5.3: controller zero and gain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PiDesign {
    /// Controller zero (rad/s), placed on the TCP window pole 2N / (R^2 C).
    pub z: f64,
    /// Gain K_PI, for a unity-gain crossover at w_g = z.
    pub k_pi: f64,
}

/// PI01's design rules (spec 5.3) for a link of `capacity_pps` packets/s carrying at least
/// `n_flows` long-lived flows with round-trip times at most `rtt_max_s`:
/// z = 2N / (R^2 C); K_PI = w_g |j w_g R + 1| (2N)^2 / (R C)^3 with w_g = z.
pub fn design(capacity_pps: f64, n_flows: f64, rtt_max_s: f64) -> PiDesign {
    let (c, n, r) = (capacity_pps, n_flows, rtt_max_s);
    let z = 2.0 * n / (r * r * c);
    let wg = z;
    let k_pi = wg * (1.0 + (wg * r).powi(2)).sqrt() * (2.0 * n).powi(2) / (r * c).powi(3);
    PiDesign { z, k_pi }
}

/// Tustin discretization at `sample_hz` (spec 5.3 step 4): a = K (1/z + T/2), b = K (1/z - T/2).
pub fn coefficients(k_pi: f64, z: f64, sample_hz: f64) -> (f64, f64) {
    let t = 1.0 / sample_hz;
    (k_pi * (1.0 / z + t / 2.0), k_pi * (1.0 / z - t / 2.0))
}

/// One step of the discrete PI law (spec 5.1): x + a (q - q_ref) - b (q_old - q_ref), unclamped.
/// PI uses it for its probability (a > b); DCN (seed 004 section 3.2) and AFD (spec 9.3) use it
/// for their fair share, with the error's sign reversed (see `dcn.rs`, `afd.rs`).
#[inline]
pub fn pi_law(x: f64, a: f64, b: f64, q: f64, q_old: f64, q_ref: f64) -> f64 {
    x + a * (q - q_ref) - b * (q_old - q_ref)
}

#[derive(Debug)]
pub struct Pi {
    pub params: PiParams,
    /// Signal probability.
    pub p: f64,
    /// Queue at the previous update (packets).
    q_old: f64,
    timer: Periodic,
    /// Occupancy since the last event.
    last: QueueView,
    rng: Rng,
}

impl Pi {
    pub fn new(params: PiParams, rng: Rng) -> Pi {
        Pi {
            timer: Periodic::new(from_secs(1.0 / params.sample_hz)),
            params,
            p: 0.0,
            q_old: 0.0,
            last: QueueView::default(),
            rng,
        }
    }

    fn queue(&self) -> f64 {
        if self.params.byte_mode {
            self.last.len_bytes as f64 / self.params.mean_pkt_bytes as f64
        } else {
            self.last.len_pkts as f64
        }
    }

    /// Runs the updates due at or before `now` (spec 5.1).
    fn catch_up(&mut self, now: SimTime) {
        while self.timer.due(now).is_some() {
            let (q, r) = (self.queue(), self.params.q_ref_pkts);
            self.p = pi_law(self.p, self.params.a, self.params.b, q, self.q_old, r).clamp(0.0, 1.0);
            self.q_old = q;
        }
    }
}

impl AqmAlgorithm for Pi {
    type Params = PiParams;
    const VARIABLES: &'static [&'static str] = &["p"];

    fn build(params: &PiParams, ctx: Context) -> Pi {
        Pi::new(params.clone(), ctx.rng)
    }

    fn on_enqueue(&mut self, _q: &QueueView, pkt: &PacketView, now: SimTime) -> Verdict {
        self.catch_up(now);
        let p = if self.params.byte_mode { byte_scaled(self.p, pkt.size, self.params.mean_pkt_bytes) } else { self.p };
        coin(&mut self.rng, p)
    }

    fn after_enqueue(&mut self, q: &QueueView, _kept: bool) {
        self.last = *q;
    }

    fn on_dequeue(&mut self, q: &QueueView, _pkt: &PacketView, now: SimTime) -> Verdict {
        self.catch_up(now);
        self.last = *q;
        Verdict::Pass
    }

    fn ecn(&self) -> bool {
        self.params.ecn
    }

    fn sample(&mut self, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        self.catch_up(now);
        out("p", self.p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::tests::packet;
    use crate::packet::Ecn;

    #[test]
    fn design_rules_reproduce_the_paper_example() {
        // PI01 section V: C = 3750 pkt/s (15 Mb/s, 500-B packets), N- = 60, R+ = 0.2467 s.
        let d = design(3750.0, 60.0, 0.2467);
        assert!((d.z - 0.526).abs() < 0.0005, "z {}", d.z);
        // The paper's K_PI is 9.6424e-6; ours is within 0.1 %.
        assert!((d.k_pi / 9.6424e-6 - 1.0).abs() < 1e-3, "K_PI {}", d.k_pi);
        // The paper rounds the zero to 0.53 before discretizing at 160 Hz.
        let (a, b) = coefficients(d.k_pi, 0.53, 160.0);
        assert!((a / 1.822e-5 - 1.0).abs() < 5e-4, "a {a}");
        assert!((b / 1.816e-5 - 1.0).abs() < 5e-4, "b {b}");
        // With the unrounded zero a and b are about 0.8 % larger: the rounding matters.
        let (a2, _) = coefficients(d.k_pi, d.z, 160.0);
        assert!(a2 / a > 1.005, "a with exact z {a2}");
    }

    #[test]
    fn probability_follows_the_difference_equation() {
        let mut pi = Pi::new(PiParams { q_ref_pkts: 10.0, ..Default::default() }, Rng::from_seed(1));
        let pkt = packet(500, Ecn::NotEct);
        let t = 6_250_000; // 1/160 s in ns
        // 30 packets arrive at t = 1 ns; the queue then holds 30 for the updates at T, 2T, 3T.
        for i in 0..30 {
            pi.on_enqueue(&QueueView { len_pkts: i, len_bytes: 500 * i as u64 }, &pkt, 1);
            pi.after_enqueue(&QueueView { len_pkts: i + 1, len_bytes: 500 * (i + 1) as u64 }, true);
        }
        assert_eq!(pi.p, 0.0);
        let (a, b) = (1.822e-5, 1.816e-5);
        let mut p: f64 = 0.0;
        let mut q_old = 0.0;
        for _ in 0..3 {
            p = (p + a * (30.0 - 10.0) - b * (q_old - 10.0)).clamp(0.0, 1.0);
            q_old = 30.0;
        }
        let mut got = Vec::new();
        pi.sample(3 * t, &mut |n, v| got.push((n, v)));
        assert_eq!(got, vec![("p", p)]);
        // A dequeue at 3T + 1 ns: the update at 4T sees 29 packets.
        pi.on_dequeue(&QueueView { len_pkts: 29, len_bytes: 29 * 500 }, &pkt, 3 * t + 1);
        pi.sample(4 * t, &mut |_, _| {});
        p = (p + a * (29.0 - 10.0) - b * (30.0 - 10.0)).clamp(0.0, 1.0);
        assert_eq!(pi.p, p);
        // An empty queue for long drives p back to 0 and keeps it there.
        pi.on_dequeue(&QueueView::default(), &pkt, 4 * t + 1);
        pi.sample(1_000 * t, &mut |_, _| {});
        assert_eq!(pi.p, 0.0);
    }

    #[test]
    fn validate_rejects_b_not_below_a() {
        let e = PiParams { b: 2e-5, ..Default::default() }.validate("q.aqm").unwrap_err();
        assert_eq!(e.to_string(), "q.aqm.b (0.00002) must be below a (0.00001822) for a stable integral term");
    }
}
