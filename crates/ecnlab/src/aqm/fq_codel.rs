//! FQ-CoDel: flow queueing with CoDel on each queue (RFC 8290), structured as Linux
//! `net/sched/sch_fq_codel.c`.
//!
//! Arrivals are hashed by flow into `flows` queues (the hash is perturbed by a value drawn from
//! the discipline's random stream, as Linux draws one at set-up). A queue that was not on a list
//! joins the tail of the *new* list with `quantum_bytes` of credit (RFC 8290 section 4.1).
//! Dequeue is deficit round robin over the new list, then the old one (section 4.2): a queue
//! out of credit gets `quantum_bytes` more and moves to the tail of the old list; otherwise
//! CoDel (`codel.rs`, RFC 8289) dequeues from it, dropping or marking as it does on a single
//! queue, and the packet sent is charged to its credit. A queue found empty moves from the new
//! list to the tail of the old one (so a flow cannot stay new by emptying its queue), and
//! leaves the old list. CoDel runs on each queue with its own state; as in Linux its
//! "more than one MTU queued" test reads the whole discipline's backlog.
//!
//! When the total passes the queue's hard limit, the arrival is queued and a packet is dropped
//! from the head of the queue with the most bytes (RFC 8290 section 4.1): one packet per
//! arrival in packet terms (Linux drops a batch of up to 64 at once, to save CPU time, which a
//! simulator does not need), as many as it takes to get below a byte limit. `ce_threshold_ms`
//! marks CE any ECN-capable packet whose sojourn time exceeds it, whatever `ecn` says, as Linux's
//! `ce_threshold` does (for DCTCP-style congestion control).
//!
//! Parameters: `flows` 1024, `quantum_bytes` 1514, `target_ms` 5, `interval_ms` 100,
//! `mtu_bytes` 1514 (Linux: the device MTU plus link-layer header for both), `ecn` false (Linux
//! has it on; ecnlab's AQMs all default to off), `ce_threshold_ms` off.

use std::collections::VecDeque;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::codel::{CoDel, CodelParams};
use super::{
    flow_key, flow_slot, signal_marks, valid, Action, AqmAlgorithm, Context, Discipline, Enqueue, Limits, PacketView, QueueDisc,
    QueueStats, QueueView, Reason, Settings, Verdict,
};
use crate::config::{check, ConfigError};
use crate::engine::time::from_millis;
use crate::engine::SimTime;
use crate::packet::{PacketId, PacketPool};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct FqCodelParams {
    /// CoDel's signals become CE marks for ECN-capable packets.
    pub ecn: bool,
    /// Number of flow queues (RFC 8290 and Linux: 1024).
    pub flows: u32,
    /// Credit a queue gets per round (bytes; Linux: the device MTU plus header, 1514).
    pub quantum_bytes: u32,
    /// CoDel's acceptable standing sojourn time (ms).
    pub target_ms: f64,
    /// CoDel's window over which sojourn must stay above target (ms).
    pub interval_ms: f64,
    /// CoDel does not signal while at most this many bytes are queued in all (bytes).
    pub mtu_bytes: u32,
    /// Mark ECN-capable packets whose sojourn exceeds this (ms); off when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ce_threshold_ms: Option<f64>,
}

impl Default for FqCodelParams {
    fn default() -> Self {
        FqCodelParams { ecn: false, flows: 1024, quantum_bytes: 1514, target_ms: 5.0, interval_ms: 100.0, mtu_bytes: 1514, ce_threshold_ms: None }
    }
}

impl FqCodelParams {
    fn codel(&self) -> CodelParams {
        CodelParams { ecn: self.ecn, target_ms: self.target_ms, interval_ms: self.interval_ms, mtu_bytes: self.mtu_bytes }
    }
}

impl Settings for FqCodelParams {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        self.codel().validate(path)?;
        check(self.flows >= 1 && self.flows <= 65536, &valid::field(path, "flows"), self.flows, "must be in [1, 65536]")?;
        check(self.quantum_bytes >= 1, &valid::field(path, "quantum_bytes"), self.quantum_bytes, "must be at least 1")?;
        self.ce_threshold_ms.map_or(Ok(()), |v| valid::non_negative(v, path, "ce_threshold_ms"))
    }
}

/// Which list a flow queue is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

#[derive(Debug)]
struct FlowQueue {
    pkts: VecDeque<PacketId>,
    bytes: u64,
    /// DRR credit (bytes); may go negative by less than one packet.
    deficit: i64,
    list: List,
    codel: CoDel,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct FqCodelStats {
    /// Queues that joined the new list.
    pub new_flows: u64,
    /// Packets marked by `ce_threshold_ms`.
    pub ce_marks: u64,
}

#[derive(Debug)]
pub struct FqCodel {
    pub params: FqCodelParams,
    queues: Vec<FlowQueue>,
    new_list: VecDeque<u32>,
    old_list: VecDeque<u32>,
    limits: Limits,
    len_pkts: u32,
    len_bytes: u64,
    /// XORed into flow keys before hashing.
    perturbation: u64,
    ce_threshold: Option<SimTime>,
    pub stats: FqCodelStats,
}

impl Discipline for FqCodel {
    type Params = FqCodelParams;
    fn build(params: &FqCodelParams, mut ctx: Context) -> FqCodel {
        let codel = params.codel();
        let queues = (0..params.flows)
            .map(|_| FlowQueue { pkts: VecDeque::new(), bytes: 0, deficit: 0, list: List::None, codel: CoDel::new(codel.clone()) })
            .collect();
        FqCodel {
            queues,
            new_list: VecDeque::new(),
            old_list: VecDeque::new(),
            limits: Limits::of(&ctx),
            len_pkts: 0,
            len_bytes: 0,
            perturbation: ctx.rng.next_u64(),
            ce_threshold: params.ce_threshold_ms.map(from_millis),
            stats: FqCodelStats::default(),
            params: params.clone(),
        }
    }
}

impl FqCodel {
    /// The queue of a flow.
    fn slot(&self, flow: u64) -> usize {
        flow_slot(flow ^ self.perturbation, self.queues.len())
    }

    /// Drops the head of the queue with the most bytes (the first such queue on a tie, as
    /// Linux); returns it.
    fn drop_from_fattest(&mut self, pool: &PacketPool, stats: &mut QueueStats) -> PacketId {
        let (mut fattest, mut most) = (0, 0);
        for (i, q) in self.queues.iter().enumerate() {
            if q.bytes > most {
                (fattest, most) = (i, q.bytes);
            }
        }
        let q = &mut self.queues[fattest];
        let id = q.pkts.pop_front().expect("a queue holds the bytes over the limit");
        let pkt = pool.get(id);
        q.bytes -= pkt.size as u64;
        self.len_pkts -= 1;
        self.len_bytes -= pkt.size as u64;
        stats.dropped_from_queue(pkt.kind, Reason::Overflow);
        id
    }

    /// CoDel's dequeue from queue `i`: the packet to send and whether it was marked, with the
    /// packets CoDel dropped appended to `dropped`; `None` when the queue is empty.
    fn codel_dequeue(&mut self, i: usize, pool: &mut PacketPool, now: SimTime, stats: &mut QueueStats, dropped: &mut Vec<PacketId>) -> Option<(PacketId, bool)> {
        let q = &mut self.queues[i];
        loop {
            let Some(id) = q.pkts.pop_front() else {
                q.codel.on_idle(now);
                return None;
            };
            let pkt = pool.get_mut(id);
            q.bytes -= pkt.size as u64;
            self.len_pkts -= 1;
            self.len_bytes -= pkt.size as u64;
            let view = QueueView { len_pkts: q.pkts.len() as u32, len_bytes: self.len_bytes };
            let mut action = q.codel.on_dequeue(&view, &PacketView::of(pkt), now).act(self.params.ecn, pkt);
            if action == Action::Keep && self.ce_threshold.is_some_and(|t| q.codel.ldelay > t) && signal_marks(true, pkt.ecn) {
                self.stats.ce_marks += 1;
                action = Verdict::Signal(Reason::Forced).act(true, pkt);
            }
            match stats.departure(pkt.kind, action) {
                Some(marked) => {
                    q.deficit -= pkt.size as i64;
                    return Some((id, marked));
                }
                None => dropped.push(id),
            }
        }
    }

    /// Takes the queue at the head of its list off it; it joins the tail of `to`.
    fn move_head(&mut self, from_new: bool, to: List) {
        let i = if from_new { self.new_list.pop_front() } else { self.old_list.pop_front() }.expect("a listed queue");
        self.queues[i as usize].list = to;
        if to == List::Old {
            self.old_list.push_back(i);
        }
    }
}

impl QueueDisc for FqCodel {
    fn enqueue(&mut self, pool: &mut PacketPool, id: PacketId, now: SimTime, stats: &mut QueueStats, dropped: &mut Vec<PacketId>) -> Enqueue {
        let pkt = pool.get_mut(id);
        pkt.enqueued_at = now;
        let (size, kind) = (pkt.size as u64, pkt.kind);
        let i = self.slot(flow_key(pkt));
        let q = &mut self.queues[i];
        q.pkts.push_back(id);
        q.bytes += size;
        if q.list == List::None {
            q.list = List::New;
            q.deficit = self.params.quantum_bytes as i64;
            self.new_list.push_back(i as u32);
            self.stats.new_flows += 1;
        }
        self.len_pkts += 1;
        self.len_bytes += size;
        let mut result = stats.arrival(kind, Action::Keep);
        while self.len_pkts > self.limits.pkts || self.len_bytes > self.limits.bytes {
            let victim = self.drop_from_fattest(pool, stats);
            if victim == id {
                result = Enqueue::Dropped(Reason::Overflow);
            } else {
                dropped.push(victim);
            }
        }
        result
    }

    fn dequeue(&mut self, pool: &mut PacketPool, now: SimTime, stats: &mut QueueStats, dropped: &mut Vec<PacketId>) -> Option<(PacketId, bool)> {
        loop {
            let (i, from_new) = match (self.new_list.front(), self.old_list.front()) {
                (Some(&i), _) => (i as usize, true),
                (None, Some(&i)) => (i as usize, false),
                (None, None) => return None,
            };
            if self.queues[i].deficit <= 0 {
                self.queues[i].deficit += self.params.quantum_bytes as i64;
                self.move_head(from_new, List::Old);
                continue;
            }
            if let Some(sent) = self.codel_dequeue(i, pool, now, stats, dropped) {
                return Some(sent);
            }
            // Empty: a new queue goes to the old list, an old one leaves (RFC 8290 4.2).
            self.move_head(from_new, if from_new { List::Old } else { List::None });
        }
    }

    fn len_pkts(&self) -> u32 {
        self.len_pkts
    }

    fn len_bytes(&self) -> u64 {
        self.len_bytes
    }

    /// Every queue is empty: what the dequeue that found them so would do to the lists.
    fn went_idle(&mut self, at: SimTime) {
        for i in self.new_list.drain(..).chain(self.old_list.drain(..)) {
            let q = &mut self.queues[i as usize];
            q.list = List::None;
            q.codel.on_idle(at);
        }
    }

    fn sample(&mut self, _now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        out("new_flows", self.new_list.len() as f64);
        out("old_flows", self.old_list.len() as f64);
        out("ce_marks", self.stats.ce_marks as f64);
    }
}
