//! A test harness for queue disciplines: arrivals run through a [`Queue`] feeding a link,
//! with what became of each packet (PI2 and DualPI2 tests share it).

use crate::aqm::tests::sim_packet;
use crate::aqm::{Enqueue, Queue};
use crate::engine::time::tx_time;
use crate::engine::SimTime;
use crate::packet::{Ecn, Packet, PacketKind, PacketPool};

pub const MS: SimTime = 1_000_000;
/// The link the queue feeds (bit/s).
pub const RATE: u64 = 10_000_000;

/// An arrival: time, flow, size (bytes), codepoint.
pub type Arrival = (SimTime, u32, u32, Ecn);

/// A packet that went to the link.
#[derive(Clone, Copy, Debug)]
pub struct Sent {
    pub at: SimTime,
    pub sojourn: SimTime,
    pub marked: bool,
    /// Packets in the queue (all of it) when it left.
    pub behind: u32,
}

/// What became of the packets, per flow.
pub struct Outcomes {
    pub sent: Vec<Vec<Sent>>,
    pub dropped: Vec<u32>,
    /// When each flow's packets were dropped (at arrival or at dequeue).
    pub drop_times: Vec<Vec<SimTime>>,
}

/// Runs `arrivals` (sorted by time) through `q` feeding a link of `RATE`.
pub fn drive(q: &mut Queue, arrivals: &[Arrival], flows: usize) -> Outcomes {
    let mut pool = PacketPool::new();
    let mut out = Outcomes { sent: vec![Vec::new(); flows], dropped: vec![0; flows], drop_times: vec![Vec::new(); flows] };
    let mut drops = Vec::new();
    let (mut busy_until, mut next) = (0, 0);
    while next < arrivals.len() || !q.is_empty() {
        let t_arrival = arrivals.get(next).map_or(SimTime::MAX, |a| a.0);
        let now;
        if !q.is_empty() && busy_until <= t_arrival {
            now = busy_until;
            if let Some((id, marked)) = q.dequeue(&mut pool, now, &mut drops) {
                let p = pool.get(id);
                out.sent[p.flow as usize].push(Sent { at: now, sojourn: now - p.enqueued_at, marked, behind: q.len_pkts() });
                busy_until = now + tx_time(p.size, RATE);
                pool.free(id);
            }
        } else {
            let (t, flow, size, ecn) = arrivals[next];
            now = t;
            next += 1;
            let id = pool.alloc(Packet { flow, ..sim_packet(PacketKind::Data, size, ecn) });
            if let Enqueue::Dropped(_) = q.enqueue(&mut pool, id, t, &mut drops) {
                drops.push(id);
            }
            busy_until = busy_until.max(t);
        }
        for id in drops.drain(..) {
            let f = pool.get(id).flow as usize;
            out.dropped[f] += 1;
            out.drop_times[f].push(now);
            pool.free(id);
        }
    }
    out
}

/// Packets of `size` for `flow` every `gap` from `start` until `end`.
pub fn every(flow: u32, size: u32, ecn: Ecn, gap: SimTime, start: SimTime, end: SimTime) -> Vec<Arrival> {
    (0..).map(|k| start + k * gap).take_while(|&t| t < end).map(|t| (t, flow, size, ecn)).collect()
}

pub fn merged(parts: Vec<Vec<Arrival>>) -> Vec<Arrival> {
    let mut all: Vec<Arrival> = parts.into_iter().flatten().collect();
    all.sort_by_key(|a| (a.0, a.1));
    all
}


/// The fractions of flow 0's and flow 1's packets sent marked between `from` and `to`,
/// and the number of flow 1's.
pub fn mark_fractions(out: &Outcomes, from: SimTime, to: SimTime) -> (f64, f64, f64) {
    let frac = |f: usize| {
        let v: Vec<_> = out.sent[f].iter().filter(|s| s.at >= from && s.at < to).collect();
        (v.iter().filter(|s| s.marked).count() as f64 / v.len() as f64, v.len() as f64)
    };
    let ((c, _), (l, n)) = (frac(0), frac(1));
    (c, l, n)
}
