//! CHOKe (Pan, Prabhakar, Psounis, INFOCOM 2000; spec 11.1): RED plus "choose and kill". Once the
//! average exceeds min_th, each arrival is compared with a packet drawn uniformly from the queue;
//! if both belong to the same flow both are dropped, otherwise RED decides (spec 2).
//!
//! CHOKe owns its FIFO, so the victim leaves the queue at the arrival that matched it, as in
//! Linux `sch_choke.c` (which leaves a hole in its ring where ecnlab closes the gap).
//! Parameters: RED's (`min_th_pkts` 5, `max_th_pkts` 15, `max_p` 0.1, `w_q` 0.002, not gentle,
//! spec 11.1 "RED defaults, packet mode"), `candidates` 1 (the paper's m), `ecn` false.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::red::{Red, RedParams};
use super::{valid, Action, Context, Discipline, Enqueue, Fifo, Limits, PacketView, QueueDisc, QueueStats, Reason, Settings, Verdict};
use crate::config::{check, ConfigError};
use crate::engine::{Rng, SimTime};
use crate::packet::{PacketId, PacketPool};

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
}

impl Settings for ChokeParams {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        self.red().validate(path)?;
        check(self.candidates >= 1 && self.candidates <= 64, valid::field(path, "candidates"), self.candidates, "must be in [1, 64]")
    }

    fn targets_pkts(&self) -> Vec<(&'static str, f64)> {
        vec![("min_th_pkts", self.min_th_pkts)]
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChokeStats {
    /// Arrivals dropped because a drawn packet was of the same flow (each takes >= 1 victim).
    pub matches: u64,
    /// Queued packets dropped by a match.
    pub victims: u64,
}

/// CHOKe: a FIFO with RED's average and decision, and the draw.
#[derive(Debug)]
pub struct Choke {
    pub params: ChokeParams,
    fifo: Fifo<Red>,
    rng: Rng,
    pub stats: ChokeStats,
}

impl Discipline for Choke {
    type Params = ChokeParams;
    const VARIABLES: &'static [&'static str] = &["avg", "matches"];
    fn build(params: &ChokeParams, mut ctx: Context) -> Choke {
        let red = Red::new(params.red(), ctx.rate_bps, ctx.rng.fork());
        Choke { fifo: Fifo::new(Limits::of(&ctx), red), rng: ctx.rng, stats: ChokeStats::default(), params: params.clone() }
    }
}

impl Choke {
    /// Draws `candidates` packets from the queue and drops every one of the arrival's flow
    /// (appended to `dropped`); whether any matched.
    fn choose_and_kill(&mut self, pool: &PacketPool, flow: u64, stats: &mut QueueStats, dropped: &mut Vec<PacketId>) -> bool {
        let mut matched = false;
        for _ in 0..self.params.candidates {
            let len = self.fifo.len_pkts();
            if len == 0 {
                break;
            }
            let i = self.rng.below(len as u64) as usize;
            if PacketView::of(pool.get(self.fifo.get(i))).flow == flow {
                let victim = self.fifo.remove(pool, i);
                stats.dropped_from_queue(pool.get(victim).kind, Reason::Early);
                dropped.push(victim);
                self.stats.victims += 1;
                matched = true;
            }
        }
        matched
    }
}

impl QueueDisc for Choke {
    fn enqueue(&mut self, pool: &mut PacketPool, id: PacketId, now: SimTime, stats: &mut QueueStats, dropped: &mut Vec<PacketId>) -> Enqueue {
        let q = self.fifo.view();
        let pkt = PacketView::of(pool.get(id));
        let kind = pool.get(id).kind;
        if !self.fifo.limits.fit(&q, pkt.size) {
            return stats.arrival(kind, Action::Drop(Reason::Overflow));
        }
        let red = &mut self.fifo.aqm;
        red.update_avg(q.len_pkts as f64, now);
        let (min_th, _) = red.thresholds();
        let v = if red.avg <= min_th || q.len_pkts == 0 {
            red.decide(&pkt)
        } else if self.choose_and_kill(pool, pkt.flow, stats, dropped) {
            // Matched arrivals are dropped whatever their ECN codepoint.
            self.stats.matches += 1;
            Verdict::Drop(Reason::Early)
        } else {
            self.fifo.aqm.decide(&pkt)
        };
        self.fifo.admit(pool, id, v, now, stats)
    }

    fn dequeue(&mut self, pool: &mut PacketPool, now: SimTime, stats: &mut QueueStats, dropped: &mut Vec<PacketId>) -> Option<(PacketId, bool)> {
        self.fifo.dequeue(pool, now, stats, dropped)
    }

    fn len_pkts(&self) -> u32 {
        self.fifo.len_pkts()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.len_bytes()
    }

    fn went_idle(&mut self, at: SimTime) {
        self.fifo.went_idle(at);
    }

    fn sample(&mut self, _now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        out("avg", self.fifo.aqm.avg);
        out("matches", self.stats.matches as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::tests::{queue, sim_packet};
    use crate::aqm::{AqmConfig, Disc, Outcome};
    use crate::packet::{Ecn, PacketKind};

    #[test]
    fn a_match_drops_the_arrival_and_the_victim_at_once() {
        // w_q 1: avg = q. Ten arrivals all of flow 0, so any draw matches.
        let p = ChokeParams { w_q: 1.0, min_th_pkts: 5.0, max_th_pkts: 100.0, ..Default::default() };
        let mut q = queue(AqmConfig::Choke(p), (Some(100), None));
        let mut pool = PacketPool::new();
        let mut dropped = Vec::new();
        let mut lens = Vec::new();
        for t in 0..10 {
            let id = pool.alloc(sim_packet(PacketKind::Data, 1000, Ecn::NotEct));
            let e = q.enqueue(&mut pool, id, t, &mut dropped);
            lens.push((q.len_pkts(), e));
        }
        // Six arrivals see avg <= min_th and are queued uncompared; the seventh sees 6 > 5,
        // draws a packet of its own flow and takes it out with itself, leaving 5: from then
        // on avg is 5 again, so the arrivals alternate between queued and matched.
        let want = [1, 2, 3, 4, 5, 6, 5, 6, 5, 6];
        assert_eq!(lens.iter().map(|l| l.0).collect::<Vec<_>>(), want);
        assert_eq!(lens[6].1, Enqueue::Dropped(Reason::Early));
        let Disc::Choke(c) = q.disc() else { unreachable!() };
        assert_eq!((c.stats.matches, c.stats.victims), (2, 2));
        assert_eq!(dropped.len(), 2, "the victims leave at the arrivals that matched them");
        let s = q.stats(10);
        assert_eq!(s.total(Outcome::Dropped, Some(Reason::Early)), 4);
        assert_eq!(s.total(Outcome::Enqueued, None), 6);
        assert_eq!(s.arrivals(), 10);
    }
}
