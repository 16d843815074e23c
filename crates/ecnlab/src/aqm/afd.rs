//! AFD: Approximate Fair Dropping (Pan, Breslau, Prabhakar, Shenker, CCR 2003; spec section 9).
//!
//! Each arrival enters a shadow buffer of `shadow_size` flow ids with probability
//! 1 / `sample_one_in` (a random entry is replaced when full); m_i = flow i's entries. An arrival
//! of flow i is signalled with probability max(0, 1 - m_fair / m_i). Every 1 / `update_hz`:
//!   m_fair <- clamp(m_fair + alpha (q_old - Q_target) - beta (q - Q_target), m_min, b)
//! which is the PI law of `pi.rs` with (a, b) = (-beta, -alpha) (spec 9.3).
//! The per-flow counts m_i live in an open-addressed table of twice the shadow size (at most
//! `shadow_size` distinct flows can be present): exact counts, no allocation per packet.
//!
//! Parameters: `alpha` 1.7, `beta` 1.8, `update_hz` 160 [R]; `shadow_size` 1000, `sample_one_in`
//! 10, `q_target_pkts` (default 0.25 x the queue's packet limit), `m_min` 1, `m_fair` starting at
//! `shadow_size` [U]; `ecn` false.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::pi::pi_law;
use super::{flow_slot, valid, AqmAlgorithm, Context, PacketView, Periodic, QueueView, Settings, Verdict};
use crate::engine::time::from_secs;
use crate::engine::{Rng, SimTime};
use crate::config::{check, ConfigError};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AfdParams {
    /// Signals become CE marks for ECN-capable packets.
    pub ecn: bool,
    /// Shadow buffer entries (b).
    pub shadow_size: u32,
    /// One arrival in `sample_one_in` (on average) enters the shadow buffer (s).
    pub sample_one_in: f64,
    /// Gain on the previous queue error (per packet).
    pub alpha: f64,
    /// Gain on the current queue error (per packet); beta > alpha.
    pub beta: f64,
    /// m_fair update frequency (Hz).
    pub update_hz: f64,
    /// Target queue (packets); default 0.25 x the queue's packet limit.
    pub q_target_pkts: Option<f64>,
    /// Lower clamp of m_fair (entries).
    pub m_min: f64,
}

impl Default for AfdParams {
    fn default() -> Self {
        AfdParams { ecn: false, shadow_size: 1000, sample_one_in: 10.0, alpha: 1.7, beta: 1.8, update_hz: 160.0, q_target_pkts: None, m_min: 1.0 }
    }
}

impl Settings for AfdParams {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        check(self.shadow_size >= 1, valid::field(path, "shadow_size"), self.shadow_size, "must be at least 1")?;
        check(self.sample_one_in >= 1.0 && self.sample_one_in.is_finite(), valid::field(path, "sample_one_in"), self.sample_one_in, "must be at least 1")?;
        valid::non_negative(self.alpha, path, "alpha")?;
        check(self.beta > self.alpha && self.beta.is_finite(), valid::field(path, "beta"), self.beta, format_args!("must be above alpha ({})", self.alpha))?;
        check(self.update_hz > 0.0 && self.update_hz <= 1e6, valid::field(path, "update_hz"), self.update_hz, "must be in (0, 1000000]")?;
        if let Some(q) = self.q_target_pkts {
            valid::non_negative(q, path, "q_target_pkts")?;
        }
        check(self.m_min >= 1.0 && self.m_min <= self.shadow_size as f64, valid::field(path, "m_min"), self.m_min, "must be in [1, shadow_size]")
    }

    fn targets_pkts(&self) -> Vec<(&'static str, f64)> {
        self.q_target_pkts.map(|v| ("q_target_pkts", v)).into_iter().collect()
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct AfdStats {
    /// Arrivals copied into the shadow buffer.
    pub sampled: u64,
}

/// Exact per-flow counts in an open-addressed table (linear probing, backward-shift deletion).
#[derive(Debug)]
struct Counts {
    keys: Vec<u64>,
    counts: Vec<u32>,
}

impl Counts {
    fn new(max_flows: usize) -> Counts {
        let n = (2 * max_flows).next_power_of_two().max(2);
        Counts { keys: vec![0; n], counts: vec![0; n] }
    }
    /// The slot holding `key`, or the empty slot where it would go.
    fn slot(&self, key: u64) -> usize {
        let mask = self.keys.len() - 1;
        let mut i = flow_slot(key, self.keys.len());
        while self.keys[i] != 0 && self.keys[i] != key {
            i = (i + 1) & mask;
        }
        i
    }
    fn get(&self, key: u64) -> u32 {
        let i = self.slot(key);
        if self.keys[i] == key { self.counts[i] } else { 0 }
    }
    fn add(&mut self, key: u64) {
        let i = self.slot(key);
        self.keys[i] = key;
        self.counts[i] += 1;
    }
    fn remove_one(&mut self, key: u64) {
        let mask = self.keys.len() - 1;
        let mut i = self.slot(key);
        debug_assert_eq!(self.keys[i], key);
        self.counts[i] -= 1;
        if self.counts[i] > 0 {
            return;
        }
        // Backward-shift deletion keeps every probe sequence unbroken.
        self.keys[i] = 0;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            if self.keys[j] == 0 {
                return;
            }
            let home = flow_slot(self.keys[j], self.keys.len());
            // Move j back to i unless its home lies cyclically in (i, j].
            let in_between = if i <= j { i < home && home <= j } else { i < home || home <= j };
            if !in_between {
                self.keys[i] = self.keys[j];
                self.counts[i] = self.counts[j];
                self.keys[j] = 0;
                self.counts[j] = 0;
                i = j;
            }
        }
    }
}

#[derive(Debug)]
pub struct Afd {
    pub params: AfdParams,
    q_target: f64,
    /// Shadow buffer of flow keys + 1.
    shadow: Vec<u64>,
    m: Counts,
    /// Fair share (shadow entries).
    pub m_fair: f64,
    q_old: f64,
    timer: Periodic,
    last: QueueView,
    rng: Rng,
    pub stats: AfdStats,
}

impl Afd {
    /// `limit_pkts`: the queue's packet limit (for the default target).
    pub fn new(params: AfdParams, limit_pkts: u32, rng: Rng) -> Afd {
        let b = params.shadow_size as usize;
        Afd {
            q_target: params.q_target_pkts.unwrap_or(0.25 * limit_pkts as f64),
            shadow: Vec::with_capacity(b),
            m: Counts::new(b),
            m_fair: b as f64,
            q_old: 0.0,
            timer: Periodic::new(from_secs(1.0 / params.update_hz)),
            last: QueueView::default(),
            rng,
            stats: AfdStats::default(),
            params,
        }
    }

    /// Flow `pkt`'s entries in the shadow buffer (m_i).
    pub fn m_i(&self, pkt: &PacketView) -> u32 {
        self.m.get(pkt.flow + 1)
    }

    fn catch_up(&mut self, now: SimTime) {
        while self.timer.due(now).is_some() {
            let q = self.last.len_pkts as f64;
            // Spec 9.3 is the PI law with the error's sign reversed: (a, b) = (-beta, -alpha).
            let m = pi_law(self.m_fair, -self.params.beta, -self.params.alpha, q, self.q_old, self.q_target);
            self.m_fair = m.clamp(self.params.m_min, self.params.shadow_size as f64);
            self.q_old = q;
        }
    }

    /// Spec 9.2: sample into the shadow buffer, then signal with 1 - m_fair / m_i.
    fn decide(&mut self, pkt: &PacketView) -> Verdict {
        let key = pkt.flow + 1;
        if self.rng.uniform() * self.params.sample_one_in < 1.0 {
            self.stats.sampled += 1;
            if self.shadow.len() < self.params.shadow_size as usize {
                self.shadow.push(key);
            } else {
                let v = self.rng.below(self.shadow.len() as u64) as usize;
                let victim = std::mem::replace(&mut self.shadow[v], key);
                self.m.remove_one(victim);
            }
            self.m.add(key);
        }
        let m_i = self.m.get(key) as f64;
        if m_i > 0.0 {
            super::coin(&mut self.rng, (1.0 - self.m_fair / m_i).max(0.0))
        } else {
            Verdict::Pass
        }
    }
}

impl AqmAlgorithm for Afd {
    type Params = AfdParams;
    const VARIABLES: &'static [&'static str] = &["m_fair"];

    fn build(params: &AfdParams, ctx: Context) -> Afd {
        // The default target is a quarter of the packet limit (1500-B packets if only bytes).
        let limit = ctx.limit_pkts.unwrap_or_else(|| (ctx.limit_bytes.unwrap_or(150_000) / 1500) as u32);
        Afd::new(params.clone(), limit, ctx.rng)
    }

    fn on_enqueue(&mut self, _q: &QueueView, pkt: &PacketView, now: SimTime) -> Verdict {
        self.catch_up(now);
        self.decide(pkt)
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
        out("m_fair", self.m_fair);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::tests::flow_packet;
    use crate::packet::Ecn;

    fn pkt(flow: u32) -> PacketView {
        flow_packet(flow, 1500, Ecn::NotEct)
    }

    #[test]
    fn fair_share_update_is_the_spec_law() {
        let p = AfdParams { q_target_pkts: Some(50.0), ..Default::default() };
        let mut a = Afd::new(p, 1000, Rng::from_seed(1));
        a.last.len_pkts = 150;
        a.sample(6_250_000, &mut |_, _| {});
        // 1000 + 1.7 (0 - 50) - 1.8 (150 - 50) = 1000 - 85 - 180 = 735
        assert!((a.m_fair - 735.0).abs() < 1e-9, "{}", a.m_fair);
        a.sample(12_500_000, &mut |_, _| {});
        // 735 + 1.7 (100) - 1.8 (100) = 725
        assert!((a.m_fair - 725.0).abs() < 1e-9, "{}", a.m_fair);
    }

    #[test]
    fn a_flow_at_k_times_the_fair_share_is_dropped_with_one_minus_one_over_k() {
        // Four flows: flow 0 sends k = 4 times as often as each of flows 1-3. With m_fair pinned
        // at flow 1's expected share, flow 0's drop rate must be near 1 - 1/4.
        let b = 1000.0;
        let p = AfdParams { shadow_size: b as u32, sample_one_in: 1.0, q_target_pkts: Some(0.0), alpha: 0.0, beta: 1e-12, ..Default::default() };
        let mut a = Afd::new(p, 1000, Rng::from_seed(9));
        let q = QueueView::default();
        let fair = b / 7.0; // shares 4:1:1:1 of 7
        let (mut sent, mut dropped) = ([0u64; 4], [0u64; 4]);
        for i in 0..140_000u64 {
            a.m_fair = fair;
            let f = if i % 7 < 4 { 0 } else { (i % 7 - 3) as u32 };
            sent[f as usize] += 1;
            if a.on_enqueue(&q, &pkt(f), 0) != Verdict::Pass {
                dropped[f as usize] += 1;
            }
        }
        let d0 = dropped[0] as f64 / sent[0] as f64;
        let d1 = dropped[1] as f64 / sent[1] as f64;
        assert!((d0 - 0.75).abs() < 0.03, "k=4 flow dropped {d0}");
        assert!(d1 < 0.1, "fair flow dropped {d1}");
    }

    #[test]
    fn counts_match_the_shadow_buffer() {
        let p = AfdParams { shadow_size: 50, sample_one_in: 2.0, ..Default::default() };
        let mut a = Afd::new(p, 100, Rng::from_seed(4));
        let q = QueueView::default();
        for i in 0..5000u32 {
            a.on_enqueue(&q, &pkt(i * 7 % 23), 0);
        }
        for f in 0..23 {
            let want = a.shadow.iter().filter(|&&k| k == pkt(f).flow + 1).count() as u32;
            assert_eq!(a.m_i(&pkt(f)), want);
        }
        assert_eq!(a.shadow.len(), 50);
    }
}
