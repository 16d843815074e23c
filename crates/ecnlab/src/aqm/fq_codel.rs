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
        check(self.flows >= 1 && self.flows <= 65536, valid::field(path, "flows"), self.flows, "must be in [1, 65536]")?;
        check(self.quantum_bytes >= 1, valid::field(path, "quantum_bytes"), self.quantum_bytes, "must be at least 1")?;
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

/// Bytes of one flow queue's state (its packets aside), for the memory estimate.
pub const QUEUE_STATE_BYTES: usize = std::mem::size_of::<FlowQueue>();

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
    const VARIABLES: &'static [&'static str] = &["new_flows", "old_flows", "ce_marks"];
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::tests::{queue, sim_packet};
    use crate::aqm::{AqmConfig, Disc, Outcome, Queue};
    use crate::engine::time::tx_time;
    use crate::packet::{Ecn, Packet, PacketKind};

    const MS: SimTime = 1_000_000;
    /// The link the queue feeds (bit/s).
    const RATE: u64 = 10_000_000;

    /// An arrival: time, flow, size (bytes), codepoint.
    type Arrival = (SimTime, u32, u32, Ecn);

    /// A packet that went to the link.
    #[derive(Clone, Copy)]
    struct Sent {
        at: SimTime,
        sojourn: SimTime,
        marked: bool,
    }

    /// What became of the packets, per flow: the packets sent and the number dropped.
    struct Outcomes {
        sent: Vec<Vec<Sent>>,
        dropped: Vec<u32>,
        /// Flows of the packets dropped, in order.
        drop_order: Vec<u32>,
    }

    /// Runs `arrivals` (sorted by time) through `q` feeding a link of `RATE`.
    fn drive(q: &mut Queue, arrivals: &[Arrival], flows: usize) -> Outcomes {
        let mut pool = PacketPool::new();
        let mut out = Outcomes { sent: vec![Vec::new(); flows], dropped: vec![0; flows], drop_order: Vec::new() };
        let mut drops = Vec::new();
        let account = |pool: &mut PacketPool, drops: &mut Vec<PacketId>, out: &mut Outcomes| {
            for id in drops.drain(..) {
                let f = pool.get(id).flow;
                out.dropped[f as usize] += 1;
                out.drop_order.push(f);
                pool.free(id);
            }
        };
        let (mut busy_until, mut next) = (0, 0);
        while next < arrivals.len() || !q.is_empty() {
            let t_arrival = arrivals.get(next).map_or(SimTime::MAX, |a| a.0);
            if !q.is_empty() && busy_until <= t_arrival {
                let now = busy_until;
                if let Some((id, marked)) = q.dequeue(&mut pool, now, &mut drops) {
                    let p = pool.get(id);
                    out.sent[p.flow as usize].push(Sent { at: now, sojourn: now - p.enqueued_at, marked });
                    busy_until = now + tx_time(p.size, RATE);
                    pool.free(id);
                }
            } else {
                let (t, flow, size, ecn) = arrivals[next];
                next += 1;
                let id = pool.alloc(Packet { flow, ..sim_packet(PacketKind::Data, size, ecn) });
                if let Enqueue::Dropped(_) = q.enqueue(&mut pool, id, t, &mut drops) {
                    drops.push(id);
                }
                busy_until = busy_until.max(t);
            }
            account(&mut pool, &mut drops, &mut out);
        }
        out
    }

    /// Packets of `size` for `flow` every `gap` from `start` until `end`.
    fn every(flow: u32, size: u32, ecn: Ecn, gap: SimTime, start: SimTime, end: SimTime) -> Vec<Arrival> {
        (0..).map(|k| start + k * gap).take_while(|&t| t < end).map(|t| (t, flow, size, ecn)).collect()
    }

    fn merged(mut parts: Vec<Vec<Arrival>>) -> Vec<Arrival> {
        let mut all: Vec<Arrival> = parts.drain(..).flatten().collect();
        all.sort_by_key(|a| (a.0, a.1));
        all
    }

    fn fq_codel(p: FqCodelParams, limit_pkts: u32) -> Queue {
        queue(AqmConfig::FqCodel(p), (Some(limit_pkts), None))
    }

    fn mean_ms(v: &[Sent]) -> f64 {
        v.iter().map(|s| s.sojourn as f64).sum::<f64>() / v.len() as f64 / 1e6
    }

    #[test]
    fn a_sparse_flow_waits_at_most_one_packet_while_the_bulk_queue_holds_the_target() {
        // Bulk: 1500-B packets at 10.2 Mb/s into 10 Mb/s (1.18 ms apart, 1.2 ms to send), for
        // 10 s; sparse: a 100-B packet every 10 ms.
        let end = 10_000 * MS;
        let bulk = every(0, 1500, Ecn::NotEct, 1_176_470, 0, end);
        let arrivals = merged(vec![bulk.clone(), every(1, 100, Ecn::NotEct, 10 * MS, 3 * MS, end)]);
        let mut q = fq_codel(FqCodelParams::default(), 10_240);
        let out = drive(&mut q, &arrivals, 2);
        // The sparse flow's queue is new at each arrival: it waits behind nothing, or behind at
        // most the packet the link had just started (1.2 ms).
        let worst = out.sent[1].iter().map(|s| s.sojourn).max().unwrap();
        assert!(worst <= tx_time(1500, RATE), "sparse sojourn up to {worst} ns");
        assert_eq!(out.dropped[1], 0);
        // CoDel holds the bulk queue near its 5 ms target by dropping (measured: 6.5 ms over the
        // last 5 s, 227 drops), as CoDel alone on a FIFO does with the bulk flow alone (6.0 ms;
        // without an AQM the queue would grow by 2 % of the arrivals, 170 packets, 200 ms).
        let late_mean = |sent: &[Sent]| mean_ms(&sent[sent.len() / 2..]);
        let m = late_mean(&out.sent[0]);
        assert!((2.5..=10.0).contains(&m), "bulk mean sojourn {m} ms");
        assert!(out.dropped[0] > 0);
        let mut codel = queue(AqmConfig::Codel(CodelParams { mtu_bytes: 1514, ..Default::default() }), (Some(10_240), None));
        let alone = late_mean(&drive(&mut codel, &bulk, 1).sent[0]);
        assert!((m / alone - 1.0).abs() < 0.2, "bulk mean sojourn {m} ms, CoDel alone {alone} ms");
        let Disc::FqCodel(f) = q.disc() else { unreachable!() };
        assert!(f.stats.new_flows as usize >= out.sent[1].len() - 1, "sparse packets each make a new queue");
    }

    #[test]
    fn two_bulk_flows_get_equal_bytes_under_drr() {
        // 1500-B packets at 15 Mb/s and 500-B packets at 7 Mb/s into 10 Mb/s, for 2 s: a FIFO
        // would share the link 15 : 7, DRR shares its bytes equally. CoDel's target is set out of reach so that neither queue ever empties
        // (with CoDel on, its drops decide how often each unresponsive flow's queue empties and
        // loses its turn, which is not DRR's doing).
        let end = 2_000 * MS;
        let arrivals = merged(vec![every(0, 1500, Ecn::NotEct, tx_time(1500, 15_000_000), 0, end), every(1, 500, Ecn::NotEct, tx_time(500, 7_000_000), 0, end)]);
        let p = FqCodelParams { target_ms: 10_000.0, ..Default::default() };
        let out = drive(&mut fq_codel(p, 100_000), &arrivals, 2);
        assert_eq!(out.dropped, [0, 0]);
        // Both queues stay backlogged until the arrivals stop; count what left by then.
        let sent_by_end = |f: usize| out.sent[f].iter().filter(|s| s.at < end).count();
        let (a, b) = (sent_by_end(0) as f64 * 1500.0, sent_by_end(1) as f64 * 500.0);
        assert!((a / b - 1.0).abs() < 0.05, "dequeued bytes {a} and {b}");
        assert!(a + b > 0.99 * (RATE / 8 * 2) as f64, "the link was busy throughout: {}", a + b);
    }

    /// A flow of ECT(0) packets at 12 Mb/s into 10 Mb/s for 3 s, with `ecn`.
    fn overloaded(ecn: bool) -> (Outcomes, Queue) {
        let arrivals = every(0, 1500, Ecn::Ect0, 1_000_000, 0, 3_000 * MS);
        let mut q = fq_codel(FqCodelParams { ecn, ..Default::default() }, 10_240);
        (drive(&mut q, &arrivals, 1), q)
    }

    #[test]
    fn ecn_capable_packets_are_marked_with_ecn_and_dropped_without() {
        // Counters are read after the run (the drive goes on until the queue drains).
        let (out, mut q) = overloaded(true);
        let marks = out.sent[0].iter().filter(|s| s.marked).count();
        assert!(marks > 10, "{marks} marks");
        assert_eq!(out.dropped[0], 0);
        assert_eq!(q.stats(1_000_000 * MS).total(Outcome::Marked, Some(Reason::Early)), marks as u64);
        let (out, mut q) = overloaded(false);
        assert!(out.sent[0].iter().all(|s| !s.marked));
        assert!(out.dropped[0] > 10, "{} drops", out.dropped[0]);
        assert_eq!(q.stats(1_000_000 * MS).total(Outcome::Dropped, Some(Reason::Early)), out.dropped[0] as u64);
    }

    #[test]
    fn ce_threshold_marks_ect_packets_above_it_only() {
        // 30 ms of a 12 Mb/s ECT flow and a Not-ECT one of the same rate: sojourns grow past
        // 1 ms, and the queue drains before CoDel (100 ms interval) acts.
        let p = FqCodelParams { ce_threshold_ms: Some(1.0), ..Default::default() };
        let arrivals = merged(vec![every(0, 1500, Ecn::Ect0, 1_000_000, 0, 30 * MS), every(1, 1500, Ecn::NotEct, 1_000_000, 0, 30 * MS)]);
        let out = drive(&mut fq_codel(p, 10_240), &arrivals, 2);
        let above = out.sent[0].iter().filter(|s| s.sojourn > MS).count();
        assert!(above > 5 && above < out.sent[0].len(), "{above} of {}", out.sent[0].len());
        for s in &out.sent[0] {
            assert_eq!(s.marked, s.sojourn > MS, "sojourn {}", s.sojourn);
        }
        assert!(out.sent[1].iter().all(|s| !s.marked) && out.dropped == [0, 0]);
    }

    #[test]
    fn overflow_drops_from_the_head_of_the_fattest_queue() {
        // Limit 10: flow 0 queues 6 packets of 1500 B, flow 1 four of 1000 B, all at time 0 while
        // the link is busy with flow 0's first. The next arrival (flow 1) overflows: flow 0's
        // queue has the most bytes, so its head goes, and the arrival stays.
        let mut pool = PacketPool::new();
        let mut q = fq_codel(FqCodelParams::default(), 10);
        let mut drops = Vec::new();
        let mut offer = |pool: &mut PacketPool, flow: u32, size: u32| {
            let id = pool.alloc(Packet { flow, ..sim_packet(PacketKind::Data, size, Ecn::NotEct) });
            (id, q.enqueue(pool, id, 0, &mut drops))
        };
        let first: Vec<_> = (0..6).map(|_| offer(&mut pool, 0, 1500).0).collect();
        (0..4).for_each(|_| assert_eq!(offer(&mut pool, 1, 1000).1, Enqueue::Queued { marked: false }));
        let (_, e) = offer(&mut pool, 1, 1000);
        assert_eq!(e, Enqueue::Queued { marked: false });
        assert_eq!(drops, vec![first[0]]);
        assert_eq!(q.len_pkts(), 10);
        assert_eq!(q.stats(0).count(PacketKind::Data, Outcome::Dropped, Reason::Overflow), 1);
    }
}
