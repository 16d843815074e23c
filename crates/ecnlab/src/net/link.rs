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

/// What a link asks the simulator to schedule after an operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkWake {
    /// Schedule a transmission-complete event at this time.
    pub tx_done_at: Option<SimTime>,
    /// Schedule an arrival (at the far end) event at this time.
    pub arrival_at: Option<SimTime>,
}

/// Cumulative counters of a link (queue counters are in its [`Queue`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkStats {
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    /// Data and retransmitted-data packets that finished transmission.
    pub delivered_data_pkts: u64,
    pub random_losses: u64,
}

pub struct Link {
    pub rate_bps: u64,
    pub delay_ns: SimTime,
    pub queue: Queue,
    /// The packet being serialized, if any.
    transmitting: Option<PacketId>,
    /// Serialized packets propagating to the far end, with their arrival times (non-decreasing).
    wire: VecDeque<(SimTime, PacketId)>,
    random_loss: f64,
    loss_rng: Rng,
    pub stats: LinkStats,
}

impl Link {
    pub fn new(rate_bps: u64, delay_ns: SimTime, queue: Queue, random_loss: f64, loss_rng: Rng) -> Link {
        Link {
            rate_bps,
            delay_ns,
            queue,
            transmitting: None,
            wire: VecDeque::with_capacity(16),
            random_loss,
            loss_rng,
            stats: LinkStats::default(),
        }
    }

    /// Offers a packet to the link and says what became of it and what to schedule. A packet
    /// that is dropped or lost is not freed: the caller accounts for it and frees it, as it
    /// does for packets an AQM drops at dequeue (appended to `dropped`).
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
        match self.queue.enqueue(pool, id, now) {
            Enqueue::Dropped(reason) => (Offer::Dropped(reason), LinkWake::default()),
            Enqueue::Queued { marked } => {
                let wake = if self.transmitting.is_none() {
                    self.start_next(pool, now, dropped)
                } else {
                    LinkWake::default()
                };
                (Offer::Queued { marked }, wake)
            }
        }
    }

    /// Starts serializing the next queued packet, if any.
    fn start_next(&mut self, pool: &mut PacketPool, now: SimTime, dropped: &mut Vec<PacketId>) -> LinkWake {
        match self.queue.dequeue(pool, now, dropped) {
            Some(next) => {
                self.transmitting = Some(next);
                LinkWake { tx_done_at: Some(now + tx_time(pool.get(next).size, self.rate_bps)), arrival_at: None }
            }
            None => LinkWake::default(),
        }
    }

    /// The packet in transmission has been serialized: put it on the wire and start the next.
    /// Packets an AQM dropped at dequeue are appended to `dropped`.
    pub fn on_tx_done(&mut self, pool: &mut PacketPool, now: SimTime, dropped: &mut Vec<PacketId>) -> LinkWake {
        let id = self.transmitting.take().expect("tx-done event without a packet in transmission");
        let p = pool.get(id);
        self.stats.delivered_pkts += 1;
        self.stats.delivered_bytes += p.size as u64;
        if matches!(p.kind, PacketKind::Data | PacketKind::Retx) {
            self.stats.delivered_data_pkts += 1;
        }
        let arrive = now + self.delay_ns;
        let was_idle = self.wire.is_empty();
        self.wire.push_back((arrive, id));
        let mut wake = self.start_next(pool, now, dropped);
        if was_idle {
            wake.arrival_at = Some(arrive);
        }
        wake
    }

    /// The packet at the head of the wire reaches the far end. Returns it and, if another
    /// packet is on the wire, when that one arrives.
    pub fn on_arrival(&mut self) -> (PacketId, Option<SimTime>) {
        let (_, id) = self.wire.pop_front().expect("arrival event on an empty wire");
        (id, self.wire.front().map(|&(t, _)| t))
    }

    /// The packet being serialized, if any.
    pub fn transmitting(&self) -> Option<PacketId> {
        self.transmitting
    }

    /// Packets on this link: queued, in transmission, or propagating.
    pub fn packets_inside(&self) -> u64 {
        self.queue.len_pkts() as u64 + self.transmitting.is_some() as u64 + self.wire.len() as u64
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

    /// Enters a packet; returns the time to schedule an exit event if the line was empty.
    pub fn push(&mut self, id: PacketId, now: SimTime) -> Option<SimTime> {
        let out = now + self.delay_ns;
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
