//! CHOKe (Pan, Prabhakar, Psounis, INFOCOM 2000; spec 11.1): RED plus "choose and kill". Once the
//! average exceeds min_th, each arrival is compared with a packet drawn uniformly from the queue;
//! if both belong to the same flow both are dropped, otherwise RED decides (spec 2).
//!
//! The AQM cannot take a packet out of the middle of the FIFO, so it keeps a mirror of the
//! queue's flow ids and dooms the victim: the victim is dropped when it reaches the head
//! (`on_dequeue` returns `Drop`). It never uses the link; until then it holds its buffer space
//! (Linux removes it at once). A doomed packet drawn again counts as no match (a "hole").
//! Parameters: RED's (`min_th_pkts` 5, `max_th_pkts` 15, `max_p` 0.1, `w_q` 0.002, not gentle,
//! spec 11.1 "RED defaults, packet mode"), `candidates` 1 (the paper's m), `ecn` false.

use std::collections::VecDeque;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::red::{Red, RedParams};
use super::{accepted, flow_key, valid, AqmAlgorithm, QueueView, Reason, Verdict};
use crate::engine::{Rng, SimTime};
use crate::packet::Packet;
use crate::config::{check, ConfigError};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ChokeParams {
    /// Signals become CE marks for ECN-capable packets (matches are always dropped).
    pub ecn: bool,
    pub min_th_pkts: f64,
    pub max_th_pkts: f64,
    pub max_p: f64,
    pub w_q: f64,
    /// Packets drawn from the queue per arrival (m).
    pub candidates: u32,
    /// Typical packet size (bytes), for RED's idle decay.
    pub mean_pkt_bytes: u32,
}

impl Default for ChokeParams {
    fn default() -> Self {
        ChokeParams { ecn: false, min_th_pkts: 5.0, max_th_pkts: 15.0, max_p: 0.1, w_q: 0.002, candidates: 1, mean_pkt_bytes: 1000 }
    }
}

impl ChokeParams {
    fn red(&self) -> RedParams {
        RedParams { ecn: self.ecn, min_th_pkts: self.min_th_pkts, max_th_pkts: self.max_th_pkts, max_p: self.max_p, w_q: self.w_q, gentle: false, mean_pkt_bytes: self.mean_pkt_bytes, ..Default::default() }
    }
    pub fn validate(&self, path: &str) -> Result<(), ConfigError> {
        self.red().validate(path)?;
        check(self.candidates >= 1 && self.candidates <= 64, &valid::field(path, "candidates"), self.candidates, "must be in [1, 64]")
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChokeStats {
    /// Arrivals dropped because a drawn packet was of the same flow (each dooms >= 1 victim).
    pub matches: u64,
    /// Queued packets doomed by a match.
    pub victims: u64,
}

#[derive(Debug)]
pub struct Choke {
    pub params: ChokeParams,
    pub red: Red,
    /// Flow key and doomed flag of each queued packet, in queue order.
    mirror: VecDeque<(u64, bool)>,
    rng: Rng,
    pub stats: ChokeStats,
}

impl Choke {
    pub fn new(params: ChokeParams, link_rate_bps: u64, mut rng: Rng) -> Choke {
        let red = Red::new(params.red(), link_rate_bps, rng.fork());
        Choke { red, mirror: VecDeque::with_capacity(64), rng, stats: ChokeStats::default(), params }
    }

    fn decide(&mut self, q: &QueueView, pkt: &Packet, now: SimTime) -> Verdict {
        self.red.update_avg(q.len_pkts as f64, now);
        let (min_th, _) = self.red.thresholds();
        if self.red.avg <= min_th || self.mirror.is_empty() {
            return self.red.decide(pkt);
        }
        let key = flow_key(pkt);
        let mut matched = false;
        for _ in 0..self.params.candidates {
            let i = self.rng.below(self.mirror.len() as u64) as usize;
            let v = &mut self.mirror[i];
            if !v.1 && v.0 == key {
                v.1 = true;
                self.stats.victims += 1;
                matched = true;
            }
        }
        if matched {
            self.stats.matches += 1;
            return Verdict::Drop(Reason::Early);
        }
        self.red.decide(pkt)
    }
}

impl AqmAlgorithm for Choke {
    fn on_enqueue(&mut self, q: &QueueView, pkt: &Packet, now: SimTime) -> Verdict {
        let v = self.decide(q, pkt, now);
        if accepted(v, self.params.ecn, pkt) {
            self.mirror.push_back((flow_key(pkt), false));
        }
        v
    }

    fn on_dequeue(&mut self, _q: &QueueView, pkt: &Packet, _now: SimTime) -> Verdict {
        let (key, doomed) = self.mirror.pop_front().expect("CHOKe mirror out of step with the queue");
        debug_assert_eq!(key, flow_key(pkt));
        if doomed { Verdict::Drop(Reason::Early) } else { Verdict::Pass }
    }

    fn on_idle(&mut self, now: SimTime) {
        self.red.on_idle(now);
    }

    fn ecn(&self) -> bool {
        self.params.ecn
    }

    fn sample(&mut self, _now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        out("avg", self.red.avg);
        out("matches", self.stats.matches as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::tests::flow_packet;
    use crate::packet::Ecn;

    fn pkt(flow: u32) -> Packet {
        flow_packet(flow, 1000, Ecn::NotEct)
    }

    #[test]
    fn a_match_drops_the_arrival_and_dooms_the_victim() {
        // w_q 1: avg = q. Queue of 10 packets all of flow 1, so any draw matches.
        let p = ChokeParams { w_q: 1.0, min_th_pkts: 5.0, max_th_pkts: 100.0, ..Default::default() };
        let mut c = Choke::new(p, 10_000_000, Rng::from_seed(2));
        let mut q = QueueView::default();
        for _ in 0..10 {
            // avg <= 5 for the first six: no comparison; then matches drop.
            let v = c.on_enqueue(&q, &pkt(1), 0);
            if v == Verdict::Pass {
                q.len_pkts += 1;
            }
        }
        // The first six arrivals see avg <= min_th and pass uncompared; each later one either
        // matched (dropped, one victim doomed) or drew an already doomed packet and passed.
        assert!(q.len_pkts >= 6 && c.stats.matches >= 2, "{} {}", q.len_pkts, c.stats.matches);
        assert_eq!(q.len_pkts as u64 + c.stats.matches, 10);
        assert_eq!(c.stats.victims, c.stats.matches);
        let mut dequeued_drops = 0;
        for _ in 0..q.len_pkts {
            if c.on_dequeue(&q, &pkt(1), 1) != Verdict::Pass {
                dequeued_drops += 1;
            }
        }
        assert_eq!(dequeued_drops, c.stats.victims);
    }
}
