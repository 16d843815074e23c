//! Queue disciplines: a FIFO with hard limits ([`Queue`]) and the active queue management
//! algorithm that advises it ([`Aqm`]).
//!
//! An AQM only returns a [`Verdict`]; the queue acts on it (STYLE 3): it enqueues, it turns a
//! congestion *signal* into a CE mark when the packet is ECN-capable and the AQM has ECN on,
//! and into a drop otherwise (RFC 3168 section 5; spec section 0.1), and it counts every outcome
//! by packet kind and reason, so every AQM gets the same statistics. The AQMs know nothing of
//! links or TCP: they see the packet, the queue's occupancy and the time.

pub mod aecn;
pub mod afd;
pub mod ared;
pub mod choke;
pub mod codel;
pub mod dcn;
pub mod droptail;
pub mod pi;
pub mod pie;
pub mod red;
pub mod rem;
pub mod rio;
pub mod threshold;

use std::collections::VecDeque;

use crate::engine::SimTime;
use crate::packet::{Ecn, Packet, PacketId, PacketKind, PacketPool};

pub use afd::{Afd, AfdParams};
pub use ared::{Ared, AredParams};
pub use choke::{Choke, ChokeParams};
pub use dcn::{Dcn, DcnParams};
pub use codel::{CoDel, CodelParams};
pub use droptail::DropTail;
pub use pi::{Pi, PiParams};
pub use pie::{Pie, PieParams};
pub use red::{Red, RedParams};
pub use rem::{Rem, RemParams};
pub use rio::{Rio, RioParams};
pub use aecn::{Aecn, AecnParams};
pub use threshold::{Threshold, ThresholdParams};

/// Why a packet was marked or dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Reason {
    /// Not marked or dropped.
    None = 0,
    /// A probabilistic early signal (e.g. RED between its thresholds).
    Early = 1,
    /// A deterministic signal below the hard limit (e.g. RED beyond max_th).
    Forced = 2,
    /// The queue was full.
    Overflow = 3,
}

impl Reason {
    pub const COUNT: usize = 4;
    pub const ALL: [Reason; 4] = [Reason::None, Reason::Early, Reason::Forced, Reason::Overflow];
    pub fn name(self) -> &'static str {
        match self {
            Reason::None => "none",
            Reason::Early => "early",
            Reason::Forced => "forced",
            Reason::Overflow => "overflow",
        }
    }
}

/// What the AQM advises for one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Accept it (into the queue on enqueue, onto the link on dequeue).
    Pass,
    /// Signal congestion: mark CE if the packet is ECN-capable and the AQM uses ECN, else drop.
    Signal(Reason),
    /// Drop whatever the packet's ECN codepoint.
    Drop(Reason),
}

/// What happened to a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Outcome {
    Enqueued = 0,
    Marked = 1,
    Dropped = 2,
}

impl Outcome {
    pub const COUNT: usize = 3;
    pub const ALL: [Outcome; 3] = [Outcome::Enqueued, Outcome::Marked, Outcome::Dropped];
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Enqueued => "enqueued",
            Outcome::Marked => "marked",
            Outcome::Dropped => "dropped",
        }
    }
}

/// The queue's occupancy as an AQM sees it: the arriving packet is *not* included, nor the
/// packet being serialized on the link (spec section 0.2).
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueView {
    pub len_pkts: u32,
    pub len_bytes: u64,
}

/// One AQM algorithm. Implementations keep their parameters, state and statistics in their
/// own structs; time is always an argument (STYLE 4).
pub trait AqmAlgorithm {
    /// Called for every arrival that fits within the queue's hard limits.
    fn on_enqueue(&mut self, q: &QueueView, pkt: &Packet, now: SimTime) -> Verdict;
    /// Called when a packet leaves the queue for the link; `q` excludes that packet.
    fn on_dequeue(&mut self, _q: &QueueView, _pkt: &Packet, _now: SimTime) -> Verdict {
        Verdict::Pass
    }
    /// Called when the link asks for a packet and the queue is empty: the link goes idle.
    fn on_idle(&mut self, _now: SimTime) {}
    /// Whether signals become CE marks for ECN-capable packets.
    fn ecn(&self) -> bool;
    /// Reports the control variables at `now` (e.g. RED's average queue) by name, for the
    /// `aqm_samples` table. Must not change what the algorithm later decides.
    fn sample(&mut self, _now: SimTime, _out: &mut dyn FnMut(&'static str, f64)) {}
}

/// Whether the queue turns `Signal` into a CE mark (rather than a drop) for `pkt`.
#[inline]
pub fn signal_marks(ecn: bool, pkt: &Packet) -> bool {
    ecn && pkt.ecn.is_ect_or_ce()
}

/// Whether the queue keeps `pkt` after verdict `v` on enqueue (AQMs that track the occupancy
/// between events use it to know the length after the arrival).
#[inline]
pub fn accepted(v: Verdict, ecn: bool, pkt: &Packet) -> bool {
    match v {
        Verdict::Pass => true,
        Verdict::Signal(_) => signal_marks(ecn, pkt),
        Verdict::Drop(_) => false,
    }
}

/// The occupancy after an arrival the AQM saw in `q` and judged `v`.
#[inline]
pub fn after_enqueue(q: &QueueView, v: Verdict, ecn: bool, pkt: &Packet) -> QueueView {
    if accepted(v, ecn, pkt) {
        QueueView { len_pkts: q.len_pkts + 1, len_bytes: q.len_bytes + pkt.size as u64 }
    } else {
        *q
    }
}

/// An early signal with probability `p` (no draw when `p` is 0).
#[inline]
pub fn coin(rng: &mut crate::engine::Rng, p: f64) -> Verdict {
    if p > 0.0 && rng.uniform() < p {
        Verdict::Signal(Reason::Early)
    } else {
        Verdict::Pass
    }
}

/// Byte-mode probability: `p` scaled by the packet's size relative to the mean, at most 1.
#[inline]
pub fn byte_scaled(p: f64, size: u32, mean_bytes: u32) -> f64 {
    (p * size as f64 / mean_bytes as f64).min(1.0)
}

/// A periodic update run lazily: the controllers of PI, REM, PIE and Adaptive RED update every
/// `period`, and the queue length they read only changes at packet events, which the AQM sees.
/// So at each event the AQM first runs the updates due at or before `now`, with the occupancy
/// it last saw; the result is exactly that of a timer, without simulator events.
#[derive(Clone, Debug)]
pub struct Periodic {
    pub period: SimTime,
    /// Time of the next update.
    pub next: SimTime,
}

impl Periodic {
    /// First update at `period` (the timer starts at time 0).
    pub fn new(period: SimTime) -> Periodic {
        Periodic { period: period.max(1), next: period.max(1) }
    }
    /// The next update time due at or before `now`, if any (call until it returns `None`).
    #[inline]
    pub fn due(&mut self, now: SimTime) -> Option<SimTime> {
        if self.next <= now {
            let t = self.next;
            self.next += self.period;
            Some(t)
        } else {
            None
        }
    }
}

/// A flow's identity for the per-flow AQMs: connection slot and generation (a new connection in
/// a reused slot is a new flow). Direction is implicit: each queue carries one direction.
#[inline]
pub fn flow_key(pkt: &Packet) -> u64 {
    ((pkt.flow as u64) << 32) | pkt.flow_gen as u64
}

/// A table slot in `0..n` for `key`: a multiplicative (Fibonacci) hash, then Lemire's
/// multiply-shift range reduction; cheap, and it spreads consecutive slot numbers.
#[inline]
pub fn flow_slot(key: u64, n: usize) -> usize {
    let h = (key ^ (key >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((h as u128 * n as u128) >> 64) as usize
}

/// Validation helpers shared by the parameter structs: `path` is the table's path in the
/// scenario (e.g. `topology.bottleneck.queue.aqm`), `field` the parameter's name.
pub(crate) mod valid {
    use crate::config::{check, ConfigError};

    pub fn field(path: &str, field: &str) -> String {
        format!("{path}.{field}")
    }
    pub fn positive(v: f64, path: &str, f: &str) -> Result<(), ConfigError> {
        crate::config::positive(v, &field(path, f))
    }
    pub fn non_negative(v: f64, path: &str, f: &str) -> Result<(), ConfigError> {
        crate::config::non_negative(v, &field(path, f))
    }
    /// A controller period (ms): at least 1 us, so catching up over idle time stays cheap.
    pub fn period_ms(v: f64, path: &str, f: &str) -> Result<(), ConfigError> {
        check(v >= 1e-3 && v.is_finite(), &field(path, f), v, "must be at least 0.001 (1 us)")
    }
    /// A probability or weight in (0, 1].
    pub fn fraction(v: f64, path: &str, f: &str) -> Result<(), ConfigError> {
        check(v > 0.0 && v <= 1.0, &field(path, f), v, "must be in (0, 1]")
    }
}

/// The configured AQM of a queue (an enum, so the hot path dispatches without a virtual call).
/// The algorithms with state are
/// boxed so that every queue (most are DropTail access queues) stays small: one enum of
/// hundreds of bytes per link measurably slowed DropTail runs.
#[derive(Debug)]
pub enum Aqm {
    DropTail(DropTail),
    Red(Box<Red>),
    Ared(Box<Ared>),
    Rem(Box<Rem>),
    Pi(Box<Pi>),
    Pie(Box<Pie>),
    CoDel(Box<CoDel>),
    Threshold(Threshold),
    Dcn(Box<Dcn>),
    Afd(Box<Afd>),
    Rio(Box<Rio>),
    Choke(Box<Choke>),
    Aecn(Box<Aecn>),
}

macro_rules! dispatch {
    ($self:ident, $a:ident => $e:expr) => {
        match $self {
            Aqm::DropTail($a) => $e,
            Aqm::Red($a) => $e,
            Aqm::Ared($a) => $e,
            Aqm::Rem($a) => $e,
            Aqm::Pi($a) => $e,
            Aqm::Pie($a) => $e,
            Aqm::CoDel($a) => $e,
            Aqm::Threshold($a) => $e,
            Aqm::Dcn($a) => $e,
            Aqm::Afd($a) => $e,
            Aqm::Rio($a) => $e,
            Aqm::Choke($a) => $e,
            Aqm::Aecn($a) => $e,
        }
    };
}

impl Aqm {
    #[inline]
    fn on_enqueue(&mut self, q: &QueueView, pkt: &Packet, now: SimTime) -> Verdict {
        dispatch!(self, a => a.on_enqueue(q, pkt, now))
    }
    #[inline]
    fn on_dequeue(&mut self, q: &QueueView, pkt: &Packet, now: SimTime) -> Verdict {
        dispatch!(self, a => a.on_dequeue(q, pkt, now))
    }
    #[inline]
    fn on_idle(&mut self, now: SimTime) {
        dispatch!(self, a => a.on_idle(now))
    }
    #[inline]
    fn ecn(&self) -> bool {
        dispatch!(self, a => a.ecn())
    }
    fn sample(&mut self, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        dispatch!(self, a => a.sample(now, out))
    }
}

/// Cumulative counters of a queue, by packet kind, outcome and reason. Windows and intervals
/// are differences of two snapshots, in wrapping arithmetic: a packet counted as enqueued and
/// dropped at dequeue (CoDel, PIE) moves from enqueued to dropped, so one count of a
/// difference can be negative (wrapped) while the sums read from it are exact.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueStats {
    pub packets: [[[u64; Reason::COUNT]; Outcome::COUNT]; PacketKind::COUNT],
    /// Packets that left the queue for the link.
    pub dequeued_pkts: u64,
    /// Integral of the queue length over time, in packet-nanoseconds and byte-nanoseconds.
    pub area_pkts_ns: u128,
    pub area_bytes_ns: u128,
}

impl QueueStats {
    pub fn count(&self, kind: PacketKind, outcome: Outcome, reason: Reason) -> u64 {
        self.packets[kind as usize][outcome as usize][reason as usize]
    }

    /// Total of one outcome (over all kinds), optionally restricted to one reason.
    pub fn total(&self, outcome: Outcome, reason: Option<Reason>) -> u64 {
        let mut n = 0;
        for k in &self.packets {
            for (r, c) in k[outcome as usize].iter().enumerate() {
                if reason.is_none_or(|want| want as usize == r) {
                    n = c.wrapping_add(n);
                }
            }
        }
        n
    }

    /// Total of one outcome for one kind.
    pub fn by_kind(&self, kind: PacketKind, outcome: Outcome) -> u64 {
        self.packets[kind as usize][outcome as usize].iter().fold(0, |n, c| n.wrapping_add(*c))
    }

    /// Arrivals = enqueued + marked (also enqueued) + dropped; marked packets are counted once.
    pub fn arrivals(&self) -> u64 {
        self.total(Outcome::Enqueued, None)
            .wrapping_add(self.total(Outcome::Marked, None))
            .wrapping_add(self.total(Outcome::Dropped, None))
    }
}

/// The result of offering a packet to a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueue {
    Queued { marked: bool },
    Dropped(Reason),
}

/// A FIFO with hard limits in packets and/or bytes, advised by an [`Aqm`].
#[derive(Debug)]
pub struct Queue {
    fifo: VecDeque<PacketId>,
    len_bytes: u64,
    /// Hard limits; `u32::MAX` / `u64::MAX` when not set.
    limit_pkts: u32,
    limit_bytes: u64,
    aqm: Aqm,
    stats: QueueStats,
    last_change: SimTime,
}

impl Queue {
    pub fn new(limit_pkts: Option<u32>, limit_bytes: Option<u64>, aqm: Aqm) -> Queue {
        Queue {
            fifo: VecDeque::with_capacity(64),
            len_bytes: 0,
            limit_pkts: limit_pkts.unwrap_or(u32::MAX),
            limit_bytes: limit_bytes.unwrap_or(u64::MAX),
            aqm,
            stats: QueueStats::default(),
            last_change: 0,
        }
    }

    pub fn len_pkts(&self) -> u32 {
        self.fifo.len() as u32
    }

    pub fn len_bytes(&self) -> u64 {
        self.len_bytes
    }

    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }

    pub fn view(&self) -> QueueView {
        QueueView { len_pkts: self.fifo.len() as u32, len_bytes: self.len_bytes }
    }

    /// The AQM's control variables at `now` (see [`AqmAlgorithm::sample`]).
    /// The link drained this queue and finished its last transmission at `at`: it is idle
    /// from then on (RED decays its average over idle time; CoDel leaves its dropping state).
    pub fn went_idle(&mut self, at: SimTime) {
        debug_assert!(self.fifo.is_empty());
        self.aqm.on_idle(at);
    }

    pub fn sample_aqm(&mut self, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        self.aqm.sample(now, out)
    }

    /// Counters, with the occupancy integral brought up to `now`.
    pub fn stats(&mut self, now: SimTime) -> &QueueStats {
        self.advance_area(now);
        &self.stats
    }

    #[inline]
    fn advance_area(&mut self, now: SimTime) {
        let dt = (now - self.last_change) as u128;
        self.stats.area_pkts_ns += self.fifo.len() as u128 * dt;
        self.stats.area_bytes_ns += self.len_bytes as u128 * dt;
        self.last_change = now;
    }

    #[inline]
    fn count(&mut self, kind: PacketKind, outcome: Outcome, reason: Reason) {
        self.stats.packets[kind as usize][outcome as usize][reason as usize] += 1;
    }

    /// Offers packet `id` to the queue. A dropped packet is *not* freed: the caller accounts
    /// for it and frees it.
    pub fn enqueue(&mut self, pool: &mut PacketPool, id: PacketId, now: SimTime) -> Enqueue {
        let view = self.view();
        let pkt = pool.get_mut(id);
        let kind = pkt.kind;
        // Hard limits first: a full buffer drops regardless of ECT (RFC 3168 section 7).
        if view.len_pkts + 1 > self.limit_pkts || view.len_bytes + pkt.size as u64 > self.limit_bytes {
            self.count(kind, Outcome::Dropped, Reason::Overflow);
            return Enqueue::Dropped(Reason::Overflow);
        }
        let verdict = self.aqm.on_enqueue(&view, pkt, now);
        let marked = match verdict {
            Verdict::Pass => false,
            Verdict::Signal(reason) => {
                if self.aqm.ecn() && pkt.ecn.is_ect_or_ce() {
                    pkt.ecn = Ecn::Ce;
                    self.count(kind, Outcome::Marked, reason);
                    true
                } else {
                    self.count(kind, Outcome::Dropped, reason);
                    return Enqueue::Dropped(reason);
                }
            }
            Verdict::Drop(reason) => {
                self.count(kind, Outcome::Dropped, reason);
                return Enqueue::Dropped(reason);
            }
        };
        if !marked {
            self.count(kind, Outcome::Enqueued, Reason::None);
        }
        pkt.enqueued_at = now;
        let size = pkt.size as u64;
        self.advance_area(now);
        self.fifo.push_back(id);
        self.len_bytes += size;
        Enqueue::Queued { marked }
    }

    /// Takes the head packet for transmission, with whether the AQM marked it (CE) now.
    /// Packets the AQM drops at dequeue (e.g. CoDel) are appended to `dropped` for the caller to
    /// account for and free.
    pub fn dequeue(
        &mut self,
        pool: &mut PacketPool,
        now: SimTime,
        dropped: &mut Vec<PacketId>,
    ) -> Option<(PacketId, bool)> {
        loop {
            self.advance_area(now);
            let Some(id) = self.fifo.pop_front() else {
                self.aqm.on_idle(now);
                return None;
            };
            let pkt = pool.get_mut(id);
            self.len_bytes -= pkt.size as u64;
            let view = QueueView { len_pkts: self.fifo.len() as u32, len_bytes: self.len_bytes };
            let mut marked = false;
            match self.aqm.on_dequeue(&view, pkt, now) {
                Verdict::Pass => {}
                Verdict::Signal(reason) if self.aqm.ecn() && pkt.ecn.is_ect_or_ce() => {
                    pkt.ecn = Ecn::Ce;
                    marked = true;
                    let kind = pkt.kind;
                    self.count(kind, Outcome::Marked, reason);
                }
                Verdict::Signal(reason) | Verdict::Drop(reason) => {
                    let kind = pkt.kind;
                    // The arrival was counted as enqueued; it now leaves as a drop instead.
                    self.stats.packets[kind as usize][Outcome::Enqueued as usize][0] -= 1;
                    self.count(kind, Outcome::Dropped, reason);
                    dropped.push(id);
                    continue;
                }
            }
            self.stats.dequeued_pkts += 1;
            return Some((id, marked));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Direction;

    pub(crate) fn packet(kind: PacketKind, size: u32, ecn: Ecn) -> Packet {
        Packet {
            flow: 0,
            flow_gen: 0,
            seq: 0,
            ack: 0,
            payload: size.saturating_sub(40),
            size,
            wnd: 0,
            flags: 0,
            ecn,
            kind,
            dir: Direction::Down,
            hop: 0,
            enqueued_at: 0,
        }
    }

    /// A data packet of flow `flow` (generation 0), for the per-flow AQMs.
    pub(crate) fn flow_packet(flow: u32, size: u32, ecn: Ecn) -> Packet {
        Packet { flow, ..packet(PacketKind::Data, size, ecn) }
    }

    #[test]
    fn a_signal_marks_ect_and_drops_not_ect() {
        // A threshold marker at K = 0 signals every arrival behind the first: the queue marks
        // an ECN-capable packet when the AQM has ECN on and drops every other one.
        for ecn in [true, false] {
            let mut pool = PacketPool::new();
            let params = ThresholdParams { ecn, k_pkts: Some(0), ..ThresholdParams::default() };
            let mut q = Queue::new(Some(10), None, Aqm::Threshold(Threshold::new(params)));
            let mut offer = |e: Ecn| {
                let id = pool.alloc(packet(PacketKind::Data, 1000, e));
                q.enqueue(&mut pool, id, 0)
            };
            assert_eq!(offer(Ecn::NotEct), Enqueue::Queued { marked: false }, "an empty queue");
            let ect = offer(Ecn::Ect0);
            let want = if ecn { Enqueue::Queued { marked: true } } else { Enqueue::Dropped(Reason::Forced) };
            assert_eq!(ect, want, "ECT(0), ecn {ecn}");
            assert_eq!(offer(Ecn::NotEct), Enqueue::Dropped(Reason::Forced), "Not-ECT, ecn {ecn}");
            let s = q.stats(0);
            assert_eq!(s.count(PacketKind::Data, Outcome::Marked, Reason::Forced), ecn as u64);
        }
    }

    #[test]
    fn packet_limit_overflows_and_counts_by_kind() {
        let mut pool = PacketPool::new();
        let mut q = Queue::new(Some(2), None, Aqm::DropTail(DropTail));
        let ids: Vec<_> = (0..3)
            .map(|i| {
                let kind = if i == 2 { PacketKind::SynAck } else { PacketKind::Data };
                pool.alloc(packet(kind, 1000, Ecn::NotEct))
            })
            .collect();
        assert_eq!(q.enqueue(&mut pool, ids[0], 0), Enqueue::Queued { marked: false });
        assert_eq!(q.enqueue(&mut pool, ids[1], 0), Enqueue::Queued { marked: false });
        assert_eq!(q.enqueue(&mut pool, ids[2], 0), Enqueue::Dropped(Reason::Overflow));
        let s = q.stats(0);
        assert_eq!(s.count(PacketKind::SynAck, Outcome::Dropped, Reason::Overflow), 1);
        assert_eq!(s.by_kind(PacketKind::Data, Outcome::Enqueued), 2);
        assert_eq!(s.arrivals(), 3);
    }

    #[test]
    fn a_difference_with_a_dequeue_drop_sums_exactly() {
        // Between two snapshots a packet enqueued before the first was dropped at dequeue: the
        // difference has enqueued -1 (wrapped) and dropped +1, and one arrival of another kind.
        let mut d = QueueStats::default();
        d.packets[PacketKind::Data as usize][Outcome::Enqueued as usize][0] = 0u64.wrapping_sub(1);
        d.packets[PacketKind::Data as usize][Outcome::Dropped as usize][Reason::Early as usize] = 1;
        d.packets[PacketKind::Ack as usize][Outcome::Enqueued as usize][0] = 1;
        assert_eq!(d.arrivals(), 1);
        assert_eq!(d.total(Outcome::Dropped, None), 1);
        assert_eq!(d.total(Outcome::Enqueued, None), 0);
        assert_eq!(d.by_kind(PacketKind::Data, Outcome::Dropped), 1);
    }

    #[test]
    fn byte_limit_and_occupancy_integral() {
        let mut pool = PacketPool::new();
        let mut q = Queue::new(None, Some(2500), Aqm::DropTail(DropTail));
        let a = pool.alloc(packet(PacketKind::Data, 1500, Ecn::NotEct));
        let b = pool.alloc(packet(PacketKind::Data, 1500, Ecn::NotEct));
        let c = pool.alloc(packet(PacketKind::Ack, 40, Ecn::NotEct));
        assert!(matches!(q.enqueue(&mut pool, a, 0), Enqueue::Queued { .. }));
        assert_eq!(q.enqueue(&mut pool, b, 10), Enqueue::Dropped(Reason::Overflow));
        assert!(matches!(q.enqueue(&mut pool, c, 10), Enqueue::Queued { .. }));
        let mut dropped = Vec::new();
        assert_eq!(q.dequeue(&mut pool, 20, &mut dropped), Some((a, false)));
        assert_eq!(q.len_bytes(), 40);
        // 1 packet for 10 ns, 2 packets for 10 ns, then 1 packet for 5 ns.
        assert_eq!(q.stats(25).area_pkts_ns, 10 + 20 + 5);
        assert_eq!(q.stats(25).area_bytes_ns, 1500 * 10 + 1540 * 10 + 40 * 5);
    }
}
