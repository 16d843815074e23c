//! Queue disciplines: each owns its packets ([`QueueDisc`]), and [`Queue`] keeps the statistics
//! every discipline shares.
//!
//! Most disciplines are one FIFO with hard limits ([`Fifo`]) advised by an active queue
//! management algorithm ([`AqmAlgorithm`]). An AQM only returns a [`Verdict`]; the discipline
//! acts on it through [`Verdict::act`], the one place where a congestion *signal* becomes a CE
//! mark when the packet is ECN-capable and the AQM has ECN on, and a drop otherwise (RFC 3168
//! section 5; spec section 0.1), and [`QueueStats`] counts every outcome by packet kind and
//! reason, so every discipline gets the same statistics. The AQMs know nothing of links or TCP:
//! they see a [`PacketView`], the queue's occupancy and the time. Disciplines that need more than
//! one FIFO, or to take packets out of the middle of one (CHOKe, FQ-CoDel, DualPI2), or
//! to read the head's queuing time between packet events (PI2), implement
//! [`QueueDisc`] themselves. [`registry`] lists every discipline with its `kind` name.

pub mod aecn;
pub mod afd;
pub mod ared;
pub mod choke;
pub mod codel;
pub mod dcn;
pub mod droptail;
pub mod dualpi2;
pub mod fq_codel;
#[cfg(test)]
mod harness;
pub mod pi;
pub mod pi2;
pub mod pie;
pub mod red;
pub mod registry;
pub mod rem;
pub mod rio;
pub mod threshold;

use std::collections::VecDeque;

use crate::config::ConfigError;
use crate::engine::{Rng, SimTime};
use crate::packet::{Ecn, Packet, PacketId, PacketKind, PacketPool};

pub use afd::{Afd, AfdParams};
pub use ared::{Ared, AredParams};
pub use choke::{Choke, ChokeParams};
pub use dcn::{Dcn, DcnParams};
pub use codel::{CoDel, CodelParams};
pub use droptail::{DropTail, DropTailParams};
pub use dualpi2::{DualPi2, DualPi2Params};
pub use fq_codel::{FqCodel, FqCodelParams};
pub use pi::{Pi, PiParams};
pub use pi2::{Pi2, Pi2Params};
pub use pie::{Pie, PieParams};
pub use red::{Red, RedParams};
pub use registry::{AqmConfig, Disc};
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

/// What a discipline does with a packet after a [`Verdict`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Keep,
    /// Keep it, marked CE.
    Mark(Reason),
    Drop(Reason),
}

impl Verdict {
    /// The mark-or-drop rule (RFC 3168 section 5), in one place: a signal marks CE when the
    /// packet is ECN-capable and the AQM has `ecn` on, and drops it otherwise. Sets CE on a
    /// marked packet.
    #[inline]
    pub fn act(self, ecn: bool, pkt: &mut Packet) -> Action {
        match self {
            Verdict::Pass => Action::Keep,
            Verdict::Signal(reason) if signal_marks(ecn, pkt.ecn) => {
                pkt.ecn = Ecn::Ce;
                Action::Mark(reason)
            }
            Verdict::Signal(reason) | Verdict::Drop(reason) => Action::Drop(reason),
        }
    }
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

/// What an AQM sees of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketView {
    /// Size on the wire (bytes).
    pub size: u32,
    pub ecn: Ecn,
    /// The packet's flow ([`flow_key`]).
    pub flow: u64,
    /// When it entered the queue (meaningful at dequeue).
    pub enqueued_at: SimTime,
}

impl PacketView {
    #[inline]
    pub fn of(pkt: &Packet) -> PacketView {
        PacketView { size: pkt.size, ecn: pkt.ecn, flow: flow_key(pkt), enqueued_at: pkt.enqueued_at }
    }
}

/// One AQM algorithm advising a [`Fifo`]. Implementations keep their parameters, state and
/// statistics in their own structs; time is always an argument (STYLE 4).
pub trait AqmAlgorithm: Sized {
    /// The `[queue.aqm]` table of the algorithm.
    type Params;
    /// The names [`AqmAlgorithm::sample`] reports, in its order (`metrics.aqm_variables`
    /// chooses among them).
    const VARIABLES: &'static [&'static str];
    fn build(params: &Self::Params, ctx: Context) -> Self;
    /// Called for every arrival that fits within the queue's hard limits.
    fn on_enqueue(&mut self, q: &QueueView, pkt: &PacketView, now: SimTime) -> Verdict;
    /// The queue acted on the verdict of the last `on_enqueue`: whether it kept the packet,
    /// and its occupancy now (for AQMs that track the occupancy between events).
    fn after_enqueue(&mut self, _q: &QueueView, _kept: bool) {}
    /// Called when a packet leaves the queue for the link; `q` excludes that packet.
    fn on_dequeue(&mut self, _q: &QueueView, _pkt: &PacketView, _now: SimTime) -> Verdict {
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

/// Whether a signal becomes a CE mark (rather than a drop) for a packet with codepoint `e`
/// (AQMs whose next step depends on it ask here; [`Verdict::act`] applies it).
#[inline]
pub fn signal_marks(ecn: bool, e: Ecn) -> bool {
    ecn && e.is_ect_or_ce()
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
        crate::config::positive(v, field(path, f))
    }
    pub fn non_negative(v: f64, path: &str, f: &str) -> Result<(), ConfigError> {
        crate::config::non_negative(v, field(path, f))
    }
    /// A controller period (ms): at least 1 us, so catching up over idle time stays cheap.
    pub fn period_ms(v: f64, path: &str, f: &str) -> Result<(), ConfigError> {
        check(v >= 1e-3 && v.is_finite(), field(path, f), v, "must be at least 0.001 (1 us)")
    }
    /// A probability or weight in (0, 1].
    pub fn fraction(v: f64, path: &str, f: &str) -> Result<(), ConfigError> {
        check(v > 0.0 && v <= 1.0, field(path, f), v, "must be in (0, 1]")
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

    #[inline]
    fn add(&mut self, kind: PacketKind, outcome: Outcome, reason: Reason) {
        self.packets[kind as usize][outcome as usize][reason as usize] += 1;
    }

    /// Counts an arrival the discipline acted on, and says what became of it.
    #[inline]
    pub fn arrival(&mut self, kind: PacketKind, a: Action) -> Enqueue {
        match a {
            Action::Keep => {
                self.add(kind, Outcome::Enqueued, Reason::None);
                Enqueue::Queued { marked: false }
            }
            Action::Mark(reason) => {
                self.add(kind, Outcome::Marked, reason);
                Enqueue::Queued { marked: true }
            }
            Action::Drop(reason) => {
                self.add(kind, Outcome::Dropped, reason);
                Enqueue::Dropped(reason)
            }
        }
    }

    /// Counts a queued packet the discipline acted on as it leaves: `Some(marked)` if it goes
    /// to the link, `None` if dropped.
    #[inline]
    pub fn departure(&mut self, kind: PacketKind, a: Action) -> Option<bool> {
        match a {
            Action::Keep => {}
            Action::Mark(reason) => self.add(kind, Outcome::Marked, reason),
            Action::Drop(reason) => {
                self.dropped_from_queue(kind, reason);
                return None;
            }
        }
        self.dequeued_pkts += 1;
        Some(a != Action::Keep)
    }

    /// Counts a queued packet dropped (at the head, or taken from inside the queue): it was
    /// counted as enqueued on arrival and now leaves as a drop instead.
    #[inline]
    pub fn dropped_from_queue(&mut self, kind: PacketKind, reason: Reason) {
        let e = &mut self.packets[kind as usize][Outcome::Enqueued as usize][0];
        *e = e.wrapping_sub(1);
        self.add(kind, Outcome::Dropped, reason);
    }
}

/// The result of offering a packet to a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueue {
    Queued { marked: bool },
    Dropped(Reason),
}

/// What a discipline is built from besides its parameters.
pub struct Context {
    /// The queue's hard limits (at least one is set).
    pub limit_pkts: Option<u32>,
    pub limit_bytes: Option<u64>,
    /// Rate of the link the queue feeds (bit/s).
    pub rate_bps: u64,
    /// The discipline's own random stream.
    pub rng: Rng,
}

/// Hard limits in packets and bytes; `u32::MAX` / `u64::MAX` when not set.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub pkts: u32,
    pub bytes: u64,
}

impl Limits {
    pub fn of(ctx: &Context) -> Limits {
        Limits { pkts: ctx.limit_pkts.unwrap_or(u32::MAX), bytes: ctx.limit_bytes.unwrap_or(u64::MAX) }
    }

    /// Whether a packet of `size` bytes fits behind occupancy `q`.
    #[inline]
    pub fn fit(&self, q: &QueueView, size: u32) -> bool {
        q.len_pkts < self.pkts && q.len_bytes + size as u64 <= self.bytes
    }
}

/// The parameters of a discipline, as the scenario gives them.
pub trait Settings {
    /// Checks the parameters; `path` is the table's path in the scenario.
    fn validate(&self, path: &str) -> Result<(), ConfigError>;
    /// The queue lengths (packets) the discipline aims at or starts signalling at, by field:
    /// the scenario refuses ones the queue's hard limit never lets it reach.
    fn targets_pkts(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// The same in bytes.
    fn targets_bytes(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

/// A discipline built from its parameters ([`registry`] builds each `kind` through this).
pub trait Discipline: Sized {
    type Params;
    /// The names [`QueueDisc::sample`] reports, in its order.
    const VARIABLES: &'static [&'static str];
    fn build(params: &Self::Params, ctx: Context) -> Self;
}

impl<D: Discipline> Discipline for Box<D> {
    type Params = D::Params;
    const VARIABLES: &'static [&'static str] = D::VARIABLES;
    fn build(params: &D::Params, ctx: Context) -> Self {
        Box::new(D::build(params, ctx))
    }
}

/// A queue discipline: it holds the queued packets and decides which to keep, mark, drop and
/// send. Statistics go to the [`QueueStats`] it is handed; packets it drops other than the
/// one being offered (from the head at dequeue, or from inside the queue at an arrival) are
/// appended to `dropped` for the caller to account for and free.
pub trait QueueDisc {
    /// Offers packet `id`. A dropped arrival is *not* freed: the caller accounts for it and
    /// frees it.
    fn enqueue(&mut self, pool: &mut PacketPool, id: PacketId, now: SimTime, stats: &mut QueueStats, dropped: &mut Vec<PacketId>) -> Enqueue;
    /// Takes the next packet for transmission, with whether it was marked (CE) now; `None`
    /// when the queue is empty (the link goes idle now).
    fn dequeue(&mut self, pool: &mut PacketPool, now: SimTime, stats: &mut QueueStats, dropped: &mut Vec<PacketId>) -> Option<(PacketId, bool)>;
    /// Offers packet `id` to the queue while it is empty and its link idle, and takes the
    /// next packet for transmission at once if the arrival was queued: what [`went_idle`] (if
    /// `idle_since` is given: the link has not said so yet), [`enqueue`] and then [`dequeue`]
    /// do, which a discipline may do in one step.
    ///
    /// [`went_idle`]: QueueDisc::went_idle
    /// [`enqueue`]: QueueDisc::enqueue
    /// [`dequeue`]: QueueDisc::dequeue
    #[inline]
    fn enqueue_idle(&mut self, pool: &mut PacketPool, id: PacketId, now: SimTime, idle_since: Option<SimTime>, stats: &mut QueueStats, dropped: &mut Vec<PacketId>) -> (Enqueue, Option<(PacketId, bool)>) {
        if let Some(at) = idle_since {
            self.went_idle(at);
        }
        let e = self.enqueue(pool, id, now, stats, dropped);
        match e {
            Enqueue::Queued { .. } => (e, self.dequeue(pool, now, stats, dropped)),
            Enqueue::Dropped(_) => (e, None),
        }
    }
    fn len_pkts(&self) -> u32;
    fn len_bytes(&self) -> u64;
    /// The link drained the queue and finished its last transmission at `at`.
    fn went_idle(&mut self, at: SimTime);
    /// The control variables at `now` by name, for the `aqm_samples` table.
    fn sample(&mut self, now: SimTime, out: &mut dyn FnMut(&'static str, f64));
}

/// A FIFO with hard limits in packets and/or bytes, advised by an AQM algorithm: every
/// single-queue discipline.
#[derive(Debug)]
pub struct Fifo<A> {
    fifo: VecDeque<PacketId>,
    len_bytes: u64,
    pub limits: Limits,
    pub aqm: A,
}

impl<A: AqmAlgorithm> Discipline for Fifo<A> {
    type Params = A::Params;
    const VARIABLES: &'static [&'static str] = A::VARIABLES;
    fn build(params: &A::Params, ctx: Context) -> Self {
        Fifo::new(Limits::of(&ctx), A::build(params, ctx))
    }
}

impl<A: AqmAlgorithm> Fifo<A> {
    pub fn new(limits: Limits, aqm: A) -> Fifo<A> {
        Fifo { fifo: VecDeque::with_capacity(64), len_bytes: 0, limits, aqm }
    }

    #[inline]
    pub fn view(&self) -> QueueView {
        QueueView { len_pkts: self.fifo.len() as u32, len_bytes: self.len_bytes }
    }

    /// Acts on the AQM's verdict `v` for arrival `id` (which fits the hard limits): queues it
    /// unless dropped, and tells the AQM the outcome.
    #[inline]
    pub fn admit(&mut self, pool: &mut PacketPool, id: PacketId, v: Verdict, now: SimTime, stats: &mut QueueStats) -> Enqueue {
        let pkt = pool.get_mut(id);
        let e = stats.arrival(pkt.kind, v.act(self.aqm.ecn(), pkt));
        let kept = matches!(e, Enqueue::Queued { .. });
        if kept {
            pkt.enqueued_at = now;
            self.len_bytes += pkt.size as u64;
            self.fifo.push_back(id);
        }
        self.aqm.after_enqueue(&self.view(), kept);
        e
    }

    /// The `i`-th packet from the head.
    pub fn get(&self, i: usize) -> PacketId {
        self.fifo[i]
    }

    /// Takes the `i`-th packet from the head out of the queue.
    pub fn remove(&mut self, pool: &PacketPool, i: usize) -> PacketId {
        let id = self.fifo.remove(i).expect("index inside the queue");
        self.len_bytes -= pool.get(id).size as u64;
        id
    }
}

impl<A: AqmAlgorithm> QueueDisc for Fifo<A> {
    #[inline]
    fn enqueue(&mut self, pool: &mut PacketPool, id: PacketId, now: SimTime, stats: &mut QueueStats, _dropped: &mut Vec<PacketId>) -> Enqueue {
        let view = self.view();
        let pkt = pool.get(id);
        // Hard limits first: a full buffer drops regardless of ECT (RFC 3168 section 7).
        if !self.limits.fit(&view, pkt.size) {
            return stats.arrival(pkt.kind, Action::Drop(Reason::Overflow));
        }
        let v = self.aqm.on_enqueue(&view, &PacketView::of(pkt), now);
        self.admit(pool, id, v, now, stats)
    }

    #[inline]
    fn dequeue(&mut self, pool: &mut PacketPool, now: SimTime, stats: &mut QueueStats, dropped: &mut Vec<PacketId>) -> Option<(PacketId, bool)> {
        loop {
            let Some(id) = self.fifo.pop_front() else {
                self.aqm.on_idle(now);
                return None;
            };
            let pkt = pool.get_mut(id);
            self.len_bytes -= pkt.size as u64;
            let view = self.view();
            let v = self.aqm.on_dequeue(&view, &PacketView::of(pkt), now);
            match stats.departure(pkt.kind, v.act(self.aqm.ecn(), pkt)) {
                Some(marked) => return Some((id, marked)),
                None => dropped.push(id),
            }
        }
    }

    /// The arrival goes through the AQM's enqueue and dequeue decisions as in `enqueue` then
    /// `dequeue`, without passing through the FIFO.
    #[inline]
    fn enqueue_idle(&mut self, pool: &mut PacketPool, id: PacketId, now: SimTime, idle_since: Option<SimTime>, stats: &mut QueueStats, dropped: &mut Vec<PacketId>) -> (Enqueue, Option<(PacketId, bool)>) {
        debug_assert!(self.fifo.is_empty());
        if let Some(at) = idle_since {
            self.aqm.on_idle(at);
        }
        let empty = self.view();
        let pkt = pool.get_mut(id);
        if !self.limits.fit(&empty, pkt.size) {
            return (stats.arrival(pkt.kind, Action::Drop(Reason::Overflow)), None);
        }
        let v = self.aqm.on_enqueue(&empty, &PacketView::of(pkt), now);
        let e = stats.arrival(pkt.kind, v.act(self.aqm.ecn(), pkt));
        let Enqueue::Queued { .. } = e else {
            self.aqm.after_enqueue(&empty, false);
            return (e, None);
        };
        pkt.enqueued_at = now;
        self.aqm.after_enqueue(&QueueView { len_pkts: 1, len_bytes: pkt.size as u64 }, true);
        let v = self.aqm.on_dequeue(&empty, &PacketView::of(pkt), now);
        match stats.departure(pkt.kind, v.act(self.aqm.ecn(), pkt)) {
            Some(marked) => (e, Some((id, marked))),
            None => {
                dropped.push(id);
                self.aqm.on_idle(now);
                (e, None)
            }
        }
    }

    #[inline]
    fn len_pkts(&self) -> u32 {
        self.fifo.len() as u32
    }

    #[inline]
    fn len_bytes(&self) -> u64 {
        self.len_bytes
    }

    fn went_idle(&mut self, at: SimTime) {
        debug_assert!(self.fifo.is_empty());
        self.aqm.on_idle(at);
    }

    fn sample(&mut self, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        self.aqm.sample(now, out)
    }
}

/// A link's queue: its discipline ([`Disc`], an enum, so the hot path dispatches without a
/// virtual call) and the statistics every discipline shares.
#[derive(Debug)]
pub struct Queue {
    disc: Disc,
    stats: QueueStats,
    last_change: SimTime,
    /// The discipline's occupancy (packets, bytes) after its last enqueue or dequeue, read
    /// without a dispatch on every packet's way through the link.
    len: (u32, u64),
}

impl Queue {
    pub fn new(disc: Disc) -> Queue {
        Queue { disc, stats: QueueStats::default(), last_change: 0, len: (0, 0) }
    }

    /// The queue `cfg` configures, with hard limits `(pkts, bytes)`, on a link of `rate_bps`;
    /// `rng` is the discipline's own stream.
    pub fn build(cfg: &AqmConfig, (limit_pkts, limit_bytes): (Option<u32>, Option<u64>), rate_bps: u64, rng: Rng) -> Queue {
        Queue::new(cfg.build(Context { limit_pkts, limit_bytes, rate_bps, rng }))
    }

    #[cfg(test)]
    pub(crate) fn disc(&self) -> &Disc {
        &self.disc
    }

    #[inline]
    pub fn len_pkts(&self) -> u32 {
        self.len.0
    }

    #[inline]
    pub fn len_bytes(&self) -> u64 {
        self.len.1
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len_pkts() == 0
    }

    /// The link drained this queue and finished its last transmission at `at`: it is idle
    /// from then on (RED decays its average over idle time; CoDel leaves its dropping state).
    pub fn went_idle(&mut self, at: SimTime) {
        self.disc.went_idle(at);
    }

    /// The discipline's control variables at `now` (see [`AqmAlgorithm::sample`]).
    pub fn sample_aqm(&mut self, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        self.disc.sample(now, out)
    }

    /// Counters, with the occupancy integral brought up to `now`.
    pub fn stats(&mut self, now: SimTime) -> &QueueStats {
        self.advance_area(now);
        &self.stats
    }

    #[inline]
    fn advance_area(&mut self, now: SimTime) {
        let dt = (now - self.last_change) as u128;
        self.stats.area_pkts_ns += self.len.0 as u128 * dt;
        self.stats.area_bytes_ns += self.len.1 as u128 * dt;
        self.last_change = now;
    }

    /// Offers packet `id` (see [`QueueDisc::enqueue`]).
    #[inline]
    pub fn enqueue(&mut self, pool: &mut PacketPool, id: PacketId, now: SimTime, dropped: &mut Vec<PacketId>) -> Enqueue {
        self.advance_area(now);
        let (e, len) = self.disc.enqueue_len(pool, id, now, &mut self.stats, dropped);
        self.len = len;
        e
    }

    /// Offers packet `id` while the queue is empty and its link idle (since `idle_since`
    /// if the queue has not been told), and takes the next packet for transmission (see
    /// [`QueueDisc::enqueue_idle`]).
    #[inline]
    pub fn enqueue_idle(&mut self, pool: &mut PacketPool, id: PacketId, now: SimTime, idle_since: Option<SimTime>, dropped: &mut Vec<PacketId>) -> (Enqueue, Option<(PacketId, bool)>) {
        self.advance_area(now);
        let (r, len) = self.disc.enqueue_idle_len(pool, id, now, idle_since, &mut self.stats, dropped);
        self.len = len;
        r
    }

    /// Takes the next packet for transmission (see [`QueueDisc::dequeue`]).
    #[inline]
    pub fn dequeue(&mut self, pool: &mut PacketPool, now: SimTime, dropped: &mut Vec<PacketId>) -> Option<(PacketId, bool)> {
        self.advance_area(now);
        let (d, len) = self.disc.dequeue_len(pool, now, &mut self.stats, dropped);
        self.len = len;
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Direction;

    /// A simulator packet, for tests that go through a queue.
    pub(crate) fn sim_packet(kind: PacketKind, size: u32, ecn: Ecn) -> Packet {
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

    /// What an AQM sees of a packet of flow 0.
    pub(crate) fn packet(size: u32, ecn: Ecn) -> PacketView {
        PacketView::of(&sim_packet(PacketKind::Data, size, ecn))
    }

    /// What an AQM sees of a data packet of flow `flow` (generation 0).
    pub(crate) fn flow_packet(flow: u32, size: u32, ecn: Ecn) -> PacketView {
        PacketView::of(&Packet { flow, ..sim_packet(PacketKind::Data, size, ecn) })
    }

    /// A queue of discipline `cfg` with hard limits `limits` on a 10 Mb/s link.
    pub(crate) fn queue(cfg: AqmConfig, limits: (Option<u32>, Option<u64>)) -> Queue {
        Queue::build(&cfg, limits, 10_000_000, Rng::from_seed(1))
    }

    #[test]
    fn a_signal_marks_ect_and_drops_not_ect() {
        // A threshold marker at K = 0 signals every arrival behind the first: the queue marks
        // an ECN-capable packet when the AQM has ECN on and drops every other one.
        for ecn in [true, false] {
            let mut pool = PacketPool::new();
            let params = ThresholdParams { ecn, k_pkts: Some(0), ..ThresholdParams::default() };
            let mut q = queue(AqmConfig::Threshold(params), (Some(10), None));
            let mut offer = |e: Ecn| {
                let id = pool.alloc(sim_packet(PacketKind::Data, 1000, e));
                q.enqueue(&mut pool, id, 0, &mut Vec::new())
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

    /// The one-step path of an arrival at an idle link (`Queue::enqueue_idle`) decides, counts
    /// and leaves the discipline exactly as telling it the link went idle, then `enqueue`, then
    /// `dequeue` do, for every discipline: between arrivals at an idle link, bursts through
    /// the queue give the AQMs a history (averages, drop states, per-flow state), and every
    /// AQM marks or drops some packets.
    #[test]
    fn an_arrival_at_an_idle_link_is_decided_as_an_enqueue_then_a_dequeue() {
        const TX: SimTime = 800_000; // 1000 B at 10 Mb/s
        let kinds = [
            r#"{"kind": "droptail"}"#,
            r#"{"kind": "red", "min_th_pkts": 2, "max_th_pkts": 6, "max_p": 0.2, "w_q": 0.2, "gentle": true, "ecn": true}"#,
            r#"{"kind": "ared", "target_delay_ms": 2, "ecn": true}"#,
            r#"{"kind": "rem", "b_star_pkts": 3, "ecn": true}"#,
            r#"{"kind": "pi", "q_ref_pkts": 3}"#,
            r#"{"kind": "pie", "target_ms": 2, "max_burst_ms": 0, "estimator": "timestamp", "alpha": 20, "beta": 100, "ecn": true}"#,
            r#"{"kind": "codel", "target_ms": 1, "interval_ms": 10}"#,
            r#"{"kind": "threshold", "k_pkts": 3, "ecn": true}"#,
            r#"{"kind": "dcn", "q_ref_pkts": 3, "ecn": true}"#,
            r#"{"kind": "afd", "q_target_pkts": 3}"#,
            r#"{"kind": "rio_ps"}"#,
            r#"{"kind": "choke", "min_th_pkts": 2, "max_th_pkts": 6}"#,
            r#"{"kind": "aecn"}"#,
            r#"{"kind": "fq_codel", "target_ms": 1, "interval_ms": 10}"#,
            r#"{"kind": "pi2", "ecn": true}"#,
            r#"{"kind": "dualpi2"}"#,
        ];
        for json in kinds {
            let cfg: AqmConfig = serde_json::from_str(json).unwrap();
            let (mut two, mut one) = (queue(cfg.clone(), (Some(40), None)), queue(cfg, (Some(40), None)));
            let (mut pool_two, mut pool_one) = (PacketPool::new(), PacketPool::new());
            let (mut dropped_two, mut dropped_one) = (Vec::new(), Vec::new());
            let (mut t, mut idle_since) = (0, None);
            for i in 0..600u32 {
                let packet = |flow: u32| {
                    let ecn = if i % 3 == 0 { Ecn::NotEct } else { Ecn::Ect0 };
                    Packet { flow, ..sim_packet(PacketKind::Data, 1000, ecn) }
                };
                if i % 2 == 0 {
                    // A burst through the queue, the same on both.
                    let k = 10 + i % 25;
                    for q in [(&mut two, &mut pool_two, &mut dropped_two), (&mut one, &mut pool_one, &mut dropped_one)] {
                        let (q, pool, dropped) = q;
                        if let Some(at) = idle_since {
                            q.went_idle(at);
                        }
                        for j in 0..k {
                            // Flow 0 sends three packets in four (per-flow AQMs act on it).
                            let id = pool.alloc(packet(if j % 4 == 0 { 1 + j % 3 } else { 0 }));
                            q.enqueue(pool, id, t, dropped);
                        }
                    }
                    let (mut at, mut sent) = (t, 0);
                    idle_since = loop {
                        let (a, b) = (two.dequeue(&mut pool_two, at, &mut dropped_two), one.dequeue(&mut pool_one, at, &mut dropped_one));
                        assert_eq!(a, b, "{json}: burst at step {i}");
                        if a.is_none() {
                            break None; // the dequeue told the AQM
                        }
                        at += TX;
                        sent += 1;
                        if sent < k {
                            // Arrivals go on while the queue drains, at half its rate.
                            for (q, pool, dropped) in [(&mut two, &mut pool_two, &mut dropped_two), (&mut one, &mut pool_one, &mut dropped_one)] {
                                if sent % 2 == 0 {
                                    let id = pool.alloc(packet(0));
                                    q.enqueue(pool, id, at - TX / 2, dropped);
                                }
                            }
                        }
                        if two.is_empty() {
                            break Some(at);
                        }
                    };
                    t = at;
                } else {
                    let (a, b) = (pool_two.alloc(packet(i % 4)), pool_one.alloc(packet(i % 4)));
                    if let Some(at) = idle_since {
                        two.went_idle(at);
                    }
                    let e = two.enqueue(&mut pool_two, a, t, &mut dropped_two);
                    let d = match e {
                        Enqueue::Queued { .. } => two.dequeue(&mut pool_two, t, &mut dropped_two),
                        Enqueue::Dropped(_) => None,
                    };
                    let r = one.enqueue_idle(&mut pool_one, b, t, idle_since, &mut dropped_one);
                    assert_eq!((e, d), r, "{json}: arrival at step {i}");
                    assert_eq!(format!("{:?}", pool_two.get(a)), format!("{:?}", pool_one.get(b)), "{json}: the packet at step {i}");
                    // Busy until the packet is sent; otherwise the queue has heard it is idle.
                    idle_since = d.map(|_| t + TX);
                }
                assert_eq!(dropped_two, dropped_one, "{json}: step {i}");
                assert_eq!(two.len_pkts(), one.len_pkts());
                t += 300_000 + (i as SimTime * 7_919) % 4_000_000;
            }
            assert_eq!(two.stats(t), one.stats(t), "{json}");
            let (mut vars_two, mut vars_one) = (Vec::new(), Vec::new());
            two.sample_aqm(t, &mut |k, v| vars_two.push((k, v)));
            one.sample_aqm(t, &mut |k, v| vars_one.push((k, v)));
            assert_eq!(vars_two, vars_one, "{json}");
            let s = two.stats(t);
            let signals = s.total(Outcome::Marked, None) + s.total(Outcome::Dropped, None) - s.total(Outcome::Dropped, Some(Reason::Overflow));
            assert!(signals > 0 || json.contains("droptail"), "{json}: the AQM never marked or dropped");
        }
    }

    #[test]
    fn packet_limit_overflows_and_counts_by_kind() {
        let mut pool = PacketPool::new();
        let mut q = queue(AqmConfig::default(), (Some(2), None));
        let ids: Vec<_> = (0..3)
            .map(|i| {
                let kind = if i == 2 { PacketKind::SynAck } else { PacketKind::Data };
                pool.alloc(sim_packet(kind, 1000, Ecn::NotEct))
            })
            .collect();
        assert_eq!(q.enqueue(&mut pool, ids[0], 0, &mut Vec::new()), Enqueue::Queued { marked: false });
        assert_eq!(q.enqueue(&mut pool, ids[1], 0, &mut Vec::new()), Enqueue::Queued { marked: false });
        assert_eq!(q.enqueue(&mut pool, ids[2], 0, &mut Vec::new()), Enqueue::Dropped(Reason::Overflow));
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
        let mut q = queue(AqmConfig::default(), (None, Some(2500)));
        let a = pool.alloc(sim_packet(PacketKind::Data, 1500, Ecn::NotEct));
        let b = pool.alloc(sim_packet(PacketKind::Data, 1500, Ecn::NotEct));
        let c = pool.alloc(sim_packet(PacketKind::Ack, 40, Ecn::NotEct));
        assert!(matches!(q.enqueue(&mut pool, a, 0, &mut Vec::new()), Enqueue::Queued { .. }));
        assert_eq!(q.enqueue(&mut pool, b, 10, &mut Vec::new()), Enqueue::Dropped(Reason::Overflow));
        assert!(matches!(q.enqueue(&mut pool, c, 10, &mut Vec::new()), Enqueue::Queued { .. }));
        let mut dropped = Vec::new();
        assert_eq!(q.dequeue(&mut pool, 20, &mut dropped), Some((a, false)));
        assert_eq!(q.len_bytes(), 40);
        // 1 packet for 10 ns, 2 packets for 10 ns, then 1 packet for 5 ns.
        assert_eq!(q.stats(25).area_pkts_ns, 10 + 20 + 5);
        assert_eq!(q.stats(25).area_bytes_ns, 1500 * 10 + 1540 * 10 + 40 * 5);
    }
}
