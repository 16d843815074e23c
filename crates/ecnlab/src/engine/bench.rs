//! The engine alone, measured: the hold model on a pending-event set (pop the earliest event,
//! push one a random time later, so the number pending stays constant).
//!
//! `ecnlab bench` calls [`hold_benchmark`] through the Python bindings for its bare-engine
//! reference (events per second of the event queue with nothing else to do), and
//! `benches/src/bin/event_queue.rs` runs [`hold`] on each kind of queue. Times are drawn
//! uniformly on 1 ns .. [`HOLD_AHEAD_NS`] ahead of the event popped; the calendar's bucket width
//! is the mean gap between pending events (`HOLD_AHEAD_NS / pending`), as the simulator sets it
//! near the gap between its events.

use std::time::Instant;

use super::queue::{EventQueue, Heap4};
use super::rng::Rng;
use super::time::SimTime;

/// New events land up to this far (ns) after the event just popped.
pub const HOLD_AHEAD_NS: u64 = 1_000_000;

/// A payload of 16 bytes, the size of the simulator's event (a queue entry of 32 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Payload16 {
    pub a: u64,
    pub b: u64,
}

/// A pending-event set the hold model can run on.
pub trait PendingSet<T> {
    fn push(&mut self, time: SimTime, payload: T);
    fn pop(&mut self) -> Option<(SimTime, T)>;
}

impl<T: Copy> PendingSet<T> for EventQueue<T> {
    #[inline]
    fn push(&mut self, time: SimTime, payload: T) {
        EventQueue::push(self, time, payload)
    }
    #[inline]
    fn pop(&mut self) -> Option<(SimTime, T)> {
        EventQueue::pop(self)
    }
}

impl<T: Copy> PendingSet<T> for Heap4<T> {
    #[inline]
    fn push(&mut self, time: SimTime, payload: T) {
        Heap4::push(self, time, payload)
    }
    #[inline]
    fn pop(&mut self) -> Option<(SimTime, T)> {
        Heap4::pop(self)
    }
}

/// What a hold-model run measured.
#[derive(Clone, Copy, Debug)]
pub struct Hold {
    /// Wall time of the `ops` pop-and-push steps (filling the queue is not timed).
    pub seconds: f64,
    /// Sum of the sequence numbers popped: equal for two queues that pop in the same order.
    pub checksum: u64,
}

/// Fills `q` with `pending` events at random times in 0 .. [`HOLD_AHEAD_NS`], then times `ops`
/// steps of: pop the earliest, push a new event 1 ns .. [`HOLD_AHEAD_NS`] after it. `payload`
/// makes the payload of the event with sequence number `seq` (and reads it back as `seq`).
pub fn hold<T: Copy, Q: PendingSet<T>>(
    q: &mut Q,
    pending: usize,
    ops: u64,
    seed: u64,
    payload: impl Fn(u64) -> T,
    seq_of: impl Fn(&T) -> u64,
) -> Hold {
    let mut rng = Rng::from_seed(seed);
    let mut seq = 0u64;
    for _ in 0..pending {
        q.push(rng.below(HOLD_AHEAD_NS), payload(seq));
        seq += 1;
    }
    let start = Instant::now();
    let mut checksum = 0u64;
    for _ in 0..ops {
        let (t, p) = q.pop().expect("the hold model keeps the queue non-empty");
        checksum = checksum.wrapping_add(seq_of(&p));
        q.push(t + 1 + rng.below(HOLD_AHEAD_NS), payload(seq));
        seq += 1;
    }
    Hold { seconds: start.elapsed().as_secs_f64(), checksum }
}

/// The simulator's calendar queue for `pending` events in the hold model (bucket width: the
/// mean gap between them).
pub fn hold_calendar<T: Copy>(pending: usize) -> EventQueue<T> {
    EventQueue::with_bucket_width(HOLD_AHEAD_NS / pending.max(1) as u64)
}

/// The hold model on the simulator's [`EventQueue`] with 16-byte payloads: `pending` events,
/// `events` timed steps (each one pop and one push), random stream `seed`. Returns the wall
/// seconds of the timed steps and the checksum of [`Hold`].
pub fn hold_benchmark(pending: usize, events: u64, seed: u64) -> Hold {
    let mut q = hold_calendar::<Payload16>(pending);
    hold(&mut q, pending.max(1), events, seed, |s| Payload16 { a: s, b: !s }, |p| p.a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_payload_is_the_size_of_an_event() {
        assert_eq!(std::mem::size_of::<Payload16>(), 16);
    }

    #[test]
    fn calendar_and_heap_pop_in_the_same_order() {
        let n = 500;
        let a = hold(&mut hold_calendar::<u64>(n), n, 20_000, 3, |s| s, |p| *p);
        let b = hold(&mut Heap4::<u64>::new(), n, 20_000, 3, |s| s, |p| *p);
        assert_eq!(a.checksum, b.checksum);
        // Payload16 carries the same sequence numbers
        assert_eq!(hold_benchmark(n, 20_000, 3).checksum, a.checksum);
        assert!(a.seconds >= 0.0);
    }

    #[test]
    fn the_queue_stays_at_its_size() {
        let mut q = hold_calendar::<u64>(100);
        hold(&mut q, 100, 1_000, 1, |s| s, |p| *p);
        assert_eq!(q.len(), 100);
    }
}
