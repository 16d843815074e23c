//! A one-way link (rate, propagation delay, queue) and a delay line.

use std::collections::VecDeque;

use crate::aqm::{Enqueue, Queue, Reason};
use crate::engine::{time::tx_time, Rng, SimTime};
use crate::packet::{PacketId, PacketKind, PacketPool};

/// What became of a packet offered to a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    Queued { marked: bool },
    Dropped(Reason),
    /// Lost to the link's random-loss probability before reaching the queue.
    Lost,
}

/// What a link asks the simulator to do after an operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkWake {
    /// Schedule a transmission-complete event at this time (the queue holds a packet that
    /// must be dequeued when the current serialization ends).
    pub tx_done_at: Option<SimTime>,
    /// A packet left the queue and started serialization now; it reaches the far end at the
    /// given time. The simulator puts it on the wire ([`Link::put_on_wire`]) or straight into
    /// the next pure-delay stage.
    pub started: Option<(PacketId, SimTime)>,
    /// The AQM marked the started packet (CE) as it left the queue (e.g. CoDel).
    pub marked_at_dequeue: bool,
}

/// Cumulative counters of a link (queue counters are in its [`Queue`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkStats {
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    /// Data and retransmitted-data packets that finished transmission.
    pub delivered_data_pkts: u64,
    pub random_losses: u64,
    /// Time the transmitter has spent serializing (ns): utilization is its growth over time.
    pub busy_ns: u64,
}

/// A one-way link: a queue, a transmitter of `rate_bps`, and a wire of `delay_ns`.
///
/// A packet's arrival time at the far end is fixed when it leaves the queue (start of
/// serialization + transmission time + delay), so the link schedules no event for the end of a
/// serialization unless another packet is waiting: an uncongested link costs one event per
/// packet (its arrival). Counters still count a packet when its serialization *ends*
/// ([`Link::stats_at`]).
pub struct Link {
    pub rate_bps: u64,
    pub delay_ns: SimTime,
    pub queue: Queue,
    /// When the serialization of the last packet that left the queue ends.
    busy_until: SimTime,
    /// Size and data-ness of that packet, to leave it out of counters read before it ends.
    last_started: (u32, bool),
    /// The last size serialized and its transmission time: a link carries one or two sizes
    /// (full segments, ACKs), and the time is a 64-bit division (`tx_time`).
    tx_memo: (u32, SimTime),
    /// Whether a transmission-complete event is scheduled (always so while packets wait).
    tx_pending: bool,
    /// The queue's AQM has been told that the link went idle at `busy_until`.
    idle_told: bool,
    /// Packets propagating to the far end, with their arrival times (non-decreasing).
    wire: VecDeque<(SimTime, PacketId)>,
    random_loss: f64,
    loss_rng: Rng,
    stats: LinkStats,
}

impl Link {
    pub fn new(rate_bps: u64, delay_ns: SimTime, queue: Queue, random_loss: f64, loss_rng: Rng) -> Link {
        Link {
            rate_bps,
            delay_ns,
            queue,
            busy_until: 0,
            last_started: (0, false),
            tx_memo: (0, 0),
            tx_pending: false,
            idle_told: true,
            wire: VecDeque::with_capacity(16),
            random_loss,
            loss_rng,
            stats: LinkStats::default(),
        }
    }

    /// Offers a packet to the link and says what became of it and what to do next. A packet
    /// that is dropped or lost is not freed: the caller accounts for it and frees it, as it
    /// does for packets an AQM drops at dequeue (appended to `dropped`).
    #[inline]
    pub fn send(
        &mut self,
        pool: &mut PacketPool,
        id: PacketId,
        now: SimTime,
        dropped: &mut Vec<PacketId>,
    ) -> (Offer, LinkWake) {
        if self.random_loss > 0.0 && self.loss_rng.uniform() < self.random_loss {
            self.stats.random_losses += 1;
            return (Offer::Lost, LinkWake::default());
        }
        if !self.tx_pending && now >= self.busy_until {
            // Nothing waits (packets wait only while a wake-up is pending) and the
            // transmitter is free: the arrival leaves the queue at once unless dropped. The
            // queue hears that the link went idle first, if it has not yet (`sync_idle`).
            let idle_since = (!self.idle_told).then_some(self.busy_until);
            self.idle_told = true;
            return match self.queue.enqueue_idle(pool, id, now, idle_since, dropped) {
                (Enqueue::Dropped(reason), _) => (Offer::Dropped(reason), LinkWake::default()),
                (Enqueue::Queued { marked }, next) => (Offer::Queued { marked }, self.start(pool, next, now)),
            };
        }
        match self.queue.enqueue(pool, id, now, dropped) {
            Enqueue::Dropped(reason) => (Offer::Dropped(reason), LinkWake::default()),
            Enqueue::Queued { marked } => {
                let wake = if self.tx_pending {
                    LinkWake::default()
                } else {
                    // The transmitter is busy and nothing else waits: wake when it frees.
                    self.tx_pending = true;
                    LinkWake { tx_done_at: Some(self.busy_until), ..LinkWake::default() }
                };
                (Offer::Queued { marked }, wake)
            }
        }
    }

    /// Takes the next packet from the queue, if any, and starts serializing it at `now`.
    #[inline]
    fn start_next(&mut self, pool: &mut PacketPool, now: SimTime, dropped: &mut Vec<PacketId>) -> LinkWake {
        let next = self.queue.dequeue(pool, now, dropped);
        self.start(pool, next, now)
    }

    /// Starts serializing `next`, the packet the queue gave for transmission at `now` (with
    /// whether it was marked as it left), or goes idle if the queue gave none.
    #[inline]
    fn start(&mut self, pool: &PacketPool, next: Option<(PacketId, bool)>, now: SimTime) -> LinkWake {
        let Some((id, marked_at_dequeue)) = next else {
            // The queue found itself empty and told its AQM the link is idle from now.
            self.tx_pending = false;
            self.idle_told = true;
            return LinkWake::default();
        };
        let p = pool.get(id);
        let data = matches!(p.kind, PacketKind::Data | PacketKind::Retx);
        if p.size != self.tx_memo.0 {
            self.tx_memo = (p.size, tx_time(p.size, self.rate_bps));
        }
        let tx = self.tx_memo.1;
        self.busy_until = now + tx;
        self.stats.busy_ns += tx;
        self.idle_told = false;
        self.last_started = (p.size, data);
        self.stats.delivered_pkts += 1;
        self.stats.delivered_bytes += p.size as u64;
        self.stats.delivered_data_pkts += data as u64;
        self.tx_pending = !self.queue.is_empty();
        LinkWake {
            tx_done_at: self.tx_pending.then_some(self.busy_until),
            started: Some((id, self.busy_until + self.delay_ns)),
            marked_at_dequeue,
        }
    }

    /// If the link has gone idle by `now` (queue drained, last transmission over), tells the
    /// queue's AQM when that happened. The link has no event at the end of its last
    /// transmission, so this is done lazily, before the AQM next sees the queue.
    pub fn sync_idle(&mut self, now: SimTime) {
        if !self.idle_told && !self.tx_pending && self.queue.is_empty() && now >= self.busy_until {
            self.queue.went_idle(self.busy_until);
            self.idle_told = true;
        }
    }

    /// The transmitter is free and packets wait: start the next. Packets an AQM dropped at
    /// dequeue are appended to `dropped`.
    pub fn on_tx_done(&mut self, pool: &mut PacketPool, now: SimTime, dropped: &mut Vec<PacketId>) -> LinkWake {
        debug_assert!(self.tx_pending && now == self.busy_until);
        self.start_next(pool, now, dropped)
    }

    /// Puts a packet that started serialization on the wire; returns its arrival time if the
    /// wire was empty (the caller schedules the arrival event; later ones chain from it).
    pub fn put_on_wire(&mut self, id: PacketId, arrive: SimTime) -> Option<SimTime> {
        debug_assert!(self.wire.back().is_none_or(|&(t, _)| t <= arrive));
        let was_empty = self.wire.is_empty();
        self.wire.push_back((arrive, id));
        was_empty.then_some(arrive)
    }

    /// The packet at the head of the wire reaches the far end. Returns it and, if another
    /// packet is on the wire, when that one arrives.
    pub fn on_arrival(&mut self) -> (PacketId, Option<SimTime>) {
        let (_, id) = self.wire.pop_front().expect("arrival event on an empty wire");
        (id, self.wire.front().map(|&(t, _)| t))
    }

    /// Counters at `now`: a packet counts as delivered once its serialization has ended, and
    /// busy time up to `now` only.
    pub fn stats_at(&self, now: SimTime) -> LinkStats {
        let mut s = self.stats.clone();
        if now < self.busy_until {
            s.busy_ns -= self.busy_until - now;
            let (size, data) = self.last_started;
            s.delivered_pkts -= 1;
            s.delivered_bytes -= size as u64;
            s.delivered_data_pkts -= data as u64;
        }
        s
    }

    /// Packets that arrived and by `now` have been neither dropped nor fully serialized: the
    /// queue and the packet being sent (what `stats_at` does not yet count as delivered).
    pub fn held_at(&self, now: SimTime) -> u64 {
        self.queue.len_pkts() as u64 + (now < self.busy_until) as u64
    }

    /// Packets on this link: queued, or serializing and propagating (on the wire). Packets the
    /// simulator moved straight into a delay line are counted there.
    pub fn packets_inside(&self) -> u64 {
        self.queue.len_pkts() as u64 + self.wire.len() as u64
    }
}

/// A pure delay shared by every flow with the same extra delay (dummynet-style per-flow RTTs).
pub struct DelayLine {
    pub delay_ns: SimTime,
    fifo: VecDeque<(SimTime, PacketId)>,
}

impl DelayLine {
    pub fn new(delay_ns: SimTime) -> DelayLine {
        DelayLine { delay_ns, fifo: VecDeque::with_capacity(16) }
    }

    /// Enters a packet that reaches the line at `at` (now, or later when the packet is still
    /// on the link that feeds the line); returns the time to schedule an exit event if the line
    /// was empty. Packets must enter in order of `at`.
    pub fn push(&mut self, id: PacketId, at: SimTime) -> Option<SimTime> {
        let out = at + self.delay_ns;
        debug_assert!(self.fifo.back().is_none_or(|&(t, _)| t <= out));
        let was_empty = self.fifo.is_empty();
        self.fifo.push_back((out, id));
        was_empty.then_some(out)
    }

    /// The head packet leaves; returns it and when the next one leaves.
    pub fn pop(&mut self) -> (PacketId, Option<SimTime>) {
        let (_, id) = self.fifo.pop_front().expect("delay-line event on an empty line");
        (id, self.fifo.front().map(|&(t, _)| t))
    }

    pub fn len(&self) -> usize {
        self.fifo.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::AqmConfig;
    use crate::packet::{Direction, Ecn, Packet};

    fn packet(pool: &mut PacketPool, size: u32) -> PacketId {
        pool.alloc(Packet {
            flow: 0,
            flow_gen: 0,
            seq: 0,
            ack: 0,
            payload: size - 40,
            size,
            wnd: 0,
            flags: 0,
            ecn: Ecn::NotEct,
            kind: PacketKind::Data,
            dir: Direction::Down,
            hop: 0,
            enqueued_at: 0,
        })
    }

    /// A link of 8 Mb/s (a byte in 1 us) with a 10-packet drop-tail queue.
    fn fifo_link(delay_ns: SimTime) -> Link {
        let queue = Queue::build(&AqmConfig::default(), (Some(10), None), 8_000_000, Rng::from_seed(1));
        Link::new(8_000_000, delay_ns, queue, 0.0, Rng::from_seed(1))
    }

    #[test]
    fn serialization_events_only_while_packets_wait() {
        let mut pool = PacketPool::new();
        let mut dropped = Vec::new();
        // 1000 B at 8 Mb/s: 1 ms to serialize; 5 ms of propagation.
        let mut link = fifo_link(5_000_000);
        let (a, b, c) = (packet(&mut pool, 1000), packet(&mut pool, 1000), packet(&mut pool, 1000));

        // Idle link: the packet starts at once, no end-of-serialization event.
        let (_, w) = link.send(&mut pool, a, 0, &mut dropped);
        assert_eq!(w, LinkWake { tx_done_at: None, started: Some((a, 6_000_000)), marked_at_dequeue: false });
        assert_eq!(link.put_on_wire(a, 6_000_000), Some(6_000_000));
        // Busy link: the next packet waits and asks to be woken when the transmitter frees.
        let (_, w) = link.send(&mut pool, b, 400_000, &mut dropped);
        assert_eq!(w, LinkWake { tx_done_at: Some(1_000_000), ..LinkWake::default() });
        // A third packet joins the queue; the wake-up is already scheduled.
        let (_, w) = link.send(&mut pool, c, 500_000, &mut dropped);
        assert_eq!(w, LinkWake::default());
        // At 1 ms b starts; c still waits, so another wake-up.
        let w = link.on_tx_done(&mut pool, 1_000_000, &mut dropped);
        assert_eq!(w, LinkWake { tx_done_at: Some(2_000_000), started: Some((b, 7_000_000)), marked_at_dequeue: false });
        assert_eq!(link.put_on_wire(b, 7_000_000), None);
        let w = link.on_tx_done(&mut pool, 2_000_000, &mut dropped);
        assert_eq!(w, LinkWake { tx_done_at: None, started: Some((c, 8_000_000)), marked_at_dequeue: false });
        link.put_on_wire(c, 8_000_000);
        assert_eq!(link.packets_inside(), 3);
        assert_eq!(link.on_arrival(), (a, Some(7_000_000)));

        // Counters count a packet once its serialization has ended.
        assert_eq!(link.stats_at(2_500_000).delivered_pkts, 2);
        assert_eq!(link.stats_at(3_000_000).delivered_pkts, 3);
        assert_eq!(link.stats_at(3_000_000).delivered_bytes, 3000);
        // Busy from 0 to 3 ms without a gap.
        assert_eq!(link.stats_at(2_500_000).busy_ns, 2_500_000);
        assert_eq!(link.stats_at(4_000_000).busy_ns, 3_000_000);
    }

    #[test]
    fn each_packet_takes_the_time_of_its_own_size() {
        // Sizes alternate (a segment, an ACK, a segment) and repeat: at 8 Mb/s a byte takes
        // 1 us, whatever size the link serialized before.
        let mut pool = PacketPool::new();
        let mut dropped = Vec::new();
        let mut link = fifo_link(0);
        let mut now = 0;
        for size in [1000, 40, 40, 1000, 1000, 576, 40] {
            let id = packet(&mut pool, size);
            let (_, w) = link.send(&mut pool, id, now, &mut dropped);
            assert_eq!(w.started, Some((id, now + size as u64 * 1_000)), "{size} B");
            now += size as u64 * 1_000;
        }
        assert_eq!(link.stats_at(now).busy_ns, 3_696_000);
    }
}
