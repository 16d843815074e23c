//! The pending-event set: a calendar of time buckets over a 4-ary heap, keyed by
//! (time, insertion sequence).
//!
//! A simulation schedules most events a little ahead of now (the next transmission, the next
//! arrival of a flow's delay line, a delayed ACK) and a few far ahead (retransmission timers).
//! The near ones go into a ring of buckets of `width` nanoseconds covering `BUCKETS * width`
//! ahead, found through a bitmap: push walks one short list, pop takes the head of the first non-empty bucket
//! (a sorted linked list through one table of nodes, which holds a handful of events). Events
//! beyond the ring wait, unsorted, in a second ring of epochs (an epoch is the first ring's
//! whole span), and move into the first ring when it reaches their epoch; the few beyond that
//! (64 epochs) wait in a 4-ary min-heap. Unlike a heap, the cost per event does not grow with
//! the number of pending events (one per flow's delay line and timer), so it does not grow with
//! the number of flows, nor with the retransmission timers of connections that pile up in an
//! overloaded network. `benches/src/bin/event_queue.rs` measures it against
//! `std::collections::BinaryHeap` and the 4-ary heap alone (figures in docs/benchmarks.md).
//! The sequence number makes the order total, so events at the same nanosecond run in the
//! order they were scheduled.

use super::time::SimTime;

#[derive(Clone, Copy, Debug)]
struct Entry<T> {
    /// (time << 64) | sequence: one integer comparison orders by time, then FIFO.
    key: u128,
    payload: T,
}

/// A 4-ary min-heap: the calendar's overflow, and usable on its own.
#[derive(Clone, Debug)]
pub struct Heap4<T> {
    heap: Vec<Entry<T>>,
    seq: u64,
}

impl<T: Copy> Default for Heap4<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> Heap4<T> {
    pub fn new() -> Self {
        Heap4 { heap: Vec::with_capacity(1024), seq: 0 }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.first().map(|e| (e.key >> 64) as SimTime)
    }

    pub fn push(&mut self, time: SimTime, payload: T) {
        let key = (time as u128) << 64 | self.seq as u128;
        self.seq += 1;
        self.push_entry(Entry { key, payload });
    }

    fn push_entry(&mut self, e: Entry<T>) {
        self.heap.push(e);
        self.sift_up(self.heap.len() - 1);
    }

    fn peek_key(&self) -> Option<u128> {
        self.heap.first().map(|e| e.key)
    }

    pub fn pop(&mut self) -> Option<(SimTime, T)> {
        self.pop_entry().map(|e| ((e.key >> 64) as SimTime, e.payload))
    }

    fn pop_entry(&mut self) -> Option<Entry<T>> {
        let n = self.heap.len();
        if n == 0 {
            return None;
        }
        let top = self.heap.swap_remove(0);
        if n > 1 {
            self.sift_down(0);
        }
        Some(top)
    }

    #[inline]
    fn sift_up(&mut self, mut i: usize) {
        let item = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.heap[parent].key <= item.key {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = item;
    }

    #[inline]
    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let item = self.heap[i];
        loop {
            let first = 4 * i + 1;
            if first >= n {
                break;
            }
            let last = (first + 4).min(n);
            let mut best = first;
            let mut best_key = self.heap[first].key;
            for c in first + 1..last {
                let k = self.heap[c].key;
                if k < best_key {
                    best = c;
                    best_key = k;
                }
            }
            if best_key >= item.key {
                break;
            }
            self.heap[i] = self.heap[best];
            i = best;
        }
        self.heap[i] = item;
    }
}


/// Buckets in the ring (a power of two). With the bucket a full-size packet's time on the fastest
/// link (12 us at 1 Gb/s, rounded down to 8.2 us) the ring reaches 1.07 s ahead, past delayed-ACK
/// timers (200 ms): with 2^14 buckets (134 ms) every such timer went through the heap, 3.9% of the
/// instructions of a web run with 1 Gb/s access links (docs/benchmarks.md). The heads cost 512 KiB,
/// touched only where events fall.
const BUCKETS: usize = 1 << 17;
const WORDS: usize = BUCKETS / 64;
/// log2 of the buckets in an epoch: an epoch is the ring's whole span.
const EPOCH_SHIFT: u32 = BUCKETS.trailing_zeros();
/// Epochs in the far ring (one bit each in `far_occupied`): with 8.2 us buckets, about 68 s
/// ahead, past the longest retransmission timeout of the `seed-2005` and `rfc6298` TCP
/// profiles (60 s).
const EPOCHS: usize = 64;
/// End of a bucket's list, and of the free list.
const NIL: u32 = u32::MAX;

/// A pending event in the ring: a node of its bucket's singly linked list.
#[derive(Clone, Copy, Debug)]
struct Node<T> {
    time: SimTime,
    seq: u64,
    payload: T,
    next: u32,
}

impl<T> Node<T> {
    #[inline]
    fn key(&self) -> (SimTime, u64) {
        (self.time, self.seq)
    }
}

/// The simulation's event queue (module documentation).
///
/// Each bucket is a linked list threaded through one table of nodes, which reuses the nodes
/// of popped events first: the ring costs a 4-byte list head per bucket, and the pending
/// events stay together in a table as small as their number, so scheduling an event touches
/// memory that is already in cache (a vector per bucket put each event in its own
/// allocation, and `push` and `pop` were the simulator's main cache misses).
#[derive(Clone, Debug)]
pub struct EventQueue<T> {
    /// log2 of the bucket width in nanoseconds.
    shift: u32,
    /// First node of each ring slot's list (`NIL` when empty). This and `occupied` have a fixed
    /// length, so a slot (masked to the ring) is used without a bounds check.
    heads: Box<[u32; BUCKETS]>,
    nodes: Vec<Node<T>>,
    /// First node of the free list (`NIL` when every node is in use).
    free: u32,
    /// Bit `i % 64` of word `i / 64` is set when ring slot `i` holds entries.
    occupied: Box<[u64; WORDS]>,
    /// Absolute bucket number (time >> shift) of the last event popped: the ring covers
    /// buckets `cur .. cur + BUCKETS`, slot = bucket % BUCKETS.
    cur: u64,
    in_ring: usize,
    /// Events beyond the ring's reach, unsorted, by epoch (`bucket >> EPOCH_SHIFT`): those of
    /// epoch `e` in `far[e % EPOCHS]`, for the `EPOCHS - 1` epochs after the ring's current one.
    /// An epoch's events move into the ring together when the ring reaches it, each then
    /// sorted into its bucket. (In a heap, the pop of each cost a walk down through as many
    /// levels as the log of the timers pending: 10 at 400,000, which connections piling up in
    /// an overloaded network reach.) Each keeps its capacity once drained.
    far: Vec<Vec<Entry<T>>>,
    /// Bit `e % EPOCHS` is set when `far[e % EPOCHS]` holds events.
    far_occupied: u64,
    in_far: usize,
    /// Events beyond the far ring.
    overflow: Heap4<T>,
    seq: u64,
    /// The absolute bucket of the earliest entry (the head of its list), once found by
    /// `peek_time`; kept while it stays true.
    found: Option<u64>,
}

impl<T: Copy> Default for EventQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> EventQueue<T> {
    /// A queue with 16.4 us buckets (suits links of about 100 Mb/s).
    pub fn new() -> Self {
        Self::with_bucket_width(1 << 14)
    }

    /// A queue whose buckets span about `width_ns` (rounded down to a power of two, at least
    /// 1 ns). Speed, not order, depends on it: a width near the typical gap between events
    /// keeps buckets short.
    pub fn with_bucket_width(width_ns: u64) -> Self {
        EventQueue {
            shift: 63 - width_ns.max(1).leading_zeros(),
            heads: vec![NIL; BUCKETS].into_boxed_slice().try_into().expect("BUCKETS heads"),
            nodes: Vec::with_capacity(1024),
            free: NIL,
            occupied: vec![0; WORDS].into_boxed_slice().try_into().expect("WORDS words"),
            cur: 0,
            in_ring: 0,
            far: (0..EPOCHS).map(|_| Vec::new()).collect(),
            far_occupied: 0,
            in_far: 0,
            overflow: Heap4::new(),
            seq: 0,
            found: None,
        }
    }

    pub fn len(&self) -> usize {
        self.in_ring + self.in_far + self.overflow.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Schedules `payload` at `time`, which must not be before the last event popped.
    #[inline(always)]
    pub fn push(&mut self, time: SimTime, payload: T) {
        let seq = self.seq;
        self.seq += 1;
        let bucket = time >> self.shift;
        debug_assert!(bucket >= self.cur, "event scheduled before the current time");
        if bucket < self.cur + BUCKETS as u64 {
            self.insert(bucket, time, seq, payload);
        } else {
            self.push_far(bucket, Entry { key: (time as u128) << 64 | seq as u128, payload });
        }
    }

    /// Keeps an entry beyond the ring's reach: in the far ring if its epoch is within it, else
    /// in the overflow heap.
    #[inline(never)]
    fn push_far(&mut self, bucket: u64, e: Entry<T>) {
        let epoch = bucket >> EPOCH_SHIFT;
        if epoch < (self.cur >> EPOCH_SHIFT) + EPOCHS as u64 {
            let slot = epoch as usize % EPOCHS;
            self.far[slot].push(e);
            self.far_occupied |= 1 << slot;
            self.in_far += 1;
        } else {
            self.overflow.push_entry(e);
        }
    }

    /// Puts an entry into its bucket's list, which is kept sorted, so that the earliest entry
    /// of a bucket is its head.
    #[inline(always)]
    fn insert(&mut self, bucket: u64, time: SimTime, seq: u64, payload: T) {
        let slot = bucket as usize & (BUCKETS - 1);
        let (mut prev, mut next) = (NIL, self.heads[slot]);
        while next != NIL && self.nodes[next as usize].key() < (time, seq) {
            prev = next;
            next = self.nodes[next as usize].next;
        }
        let node = Node { time, seq, payload, next };
        let i = if self.free != NIL {
            let i = self.free;
            self.free = self.nodes[i as usize].next;
            self.nodes[i as usize] = node;
            i
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        };
        if prev == NIL {
            self.heads[slot] = i;
        } else {
            self.nodes[prev as usize].next = i;
        }
        self.occupied[slot / 64] |= 1 << (slot % 64);
        self.in_ring += 1;
        if self.found.is_some_and(|f| bucket < f) {
            self.found = Some(bucket);
        }
    }

    /// Moves the ring's start to `bucket`, before which nothing is pending, and brings in what
    /// it now covers of the events kept beyond it.
    #[inline(always)]
    fn move_to(&mut self, bucket: u64) {
        debug_assert!(bucket >= self.cur);
        let old = self.cur;
        self.cur = bucket;
        if self.in_far != 0 || !self.overflow.is_empty() {
            self.bring_in(old);
        }
    }

    /// After the ring's start moved from bucket `old`: moves the far ring's epoch that the
    /// start is now in into the ring, and overflow entries into the ring or the far ring.
    #[inline(never)]
    fn bring_in(&mut self, old: u64) {
        let (old_epoch, epoch) = (old >> EPOCH_SHIFT, self.cur >> EPOCH_SHIFT);
        if epoch > old_epoch && self.far_occupied != 0 {
            // The far ring holds epochs after the old one; none before `epoch` can hold
            // events, as none is pending before the ring's start.
            let slot = epoch as usize % EPOCHS;
            if epoch - old_epoch < EPOCHS as u64 && self.far_occupied & (1 << slot) != 0 {
                let mut entries = std::mem::take(&mut self.far[slot]);
                self.far_occupied &= !(1 << slot);
                self.in_far -= entries.len();
                for e in entries.drain(..) {
                    self.insert_entry(e);
                }
                self.far[slot] = entries;
            }
        }
        let (end, far_end) = (self.cur + BUCKETS as u64, epoch + EPOCHS as u64);
        while let Some(key) = self.overflow.peek_key() {
            let bucket = ((key >> 64) as u64) >> self.shift;
            if bucket >= end && bucket >> EPOCH_SHIFT >= far_end {
                break;
            }
            let e = self.overflow.pop_entry().expect("peeked");
            if bucket < end {
                self.insert_entry(e);
            } else {
                self.push_far(bucket, e);
            }
        }
    }

    /// Puts an entry kept beyond the ring into its bucket, which the ring now covers.
    fn insert_entry(&mut self, e: Entry<T>) {
        let time = (e.key >> 64) as SimTime;
        self.insert(time >> self.shift, time, e.key as u64, e.payload);
    }

    /// The first bucket of the earliest epoch the far ring holds.
    fn far_start(&self) -> Option<u64> {
        if self.far_occupied == 0 {
            return None;
        }
        // Its epochs follow the current one, in ring order from the next epoch's slot.
        let next = ((self.cur >> EPOCH_SHIFT) + 1) as u32 % EPOCHS as u32;
        let ahead = self.far_occupied.rotate_right(next).trailing_zeros() as u64;
        Some(((self.cur >> EPOCH_SHIFT) + 1 + ahead) << EPOCH_SHIFT)
    }

    /// The first occupied ring slot at or after `cur`, as an absolute bucket number.
    #[inline]
    fn first_occupied(&self) -> Option<u64> {
        if self.in_ring == 0 {
            return None;
        }
        let start = self.cur as usize & (BUCKETS - 1);
        let (mut w, bit) = (start / 64, start % 64);
        // The first word, from `start` on; then whole words, wrapping around the ring.
        let mut bits = self.occupied[w] & (!0u64 << bit);
        for step in 0..=WORDS {
            if bits != 0 {
                let slot = w * 64 + bits.trailing_zeros() as usize;
                let ahead = (slot + BUCKETS - start) & (BUCKETS - 1);
                return Some(self.cur + ahead as u64);
            }
            w = (w + 1) % WORDS;
            bits = self.occupied[w];
            if step == WORDS - 1 {
                // Back at the first word: only its bits before `start` are left.
                bits &= !(!0u64 << bit);
            }
        }
        unreachable!("in_ring > 0 but no slot is occupied")
    }

    /// Time of the earliest pending event.
    #[inline(always)]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        let bucket = match self.found {
            Some(b) => b,
            None => self.find()?,
        };
        Some(self.nodes[self.heads[bucket as usize & (BUCKETS - 1)] as usize].time)
    }

    /// Finds the bucket of the earliest entry (and keeps it in `found`); `None` if the queue
    /// is empty.
    fn find(&mut self) -> Option<u64> {
        loop {
            let ring = self.first_occupied();
            // The earliest bucket an event kept beyond the ring can be in.
            let over = self.overflow.peek_key().map(|k| ((k >> 64) as u64) >> self.shift);
            let beyond = match (self.far_start(), over) {
                (Some(f), Some(o)) => Some(f.min(o)),
                (f, o) => f.or(o),
            };
            match (ring, beyond) {
                // Events kept beyond the ring may come first: bring them in, then look again.
                (Some(r), Some(b)) if b <= r => self.move_to(b.max(self.cur)),
                (None, Some(b)) => self.move_to(b.max(self.cur)),
                (Some(r), _) => {
                    self.found = Some(r);
                    return Some(r);
                }
                (None, None) => return None,
            }
        }
    }

    #[inline(always)]
    pub fn pop(&mut self) -> Option<(SimTime, T)> {
        self.pop_until(SimTime::MAX)
    }

    /// Pops the earliest pending event if it is due at or before `stop` (one lookup of the
    /// head where `peek_time` then `pop` make two).
    #[inline(always)]
    pub fn pop_until(&mut self, stop: SimTime) -> Option<(SimTime, T)> {
        let bucket = match self.found {
            Some(b) => b,
            None => self.find()?,
        };
        let slot = bucket as usize & (BUCKETS - 1);
        let i = self.heads[slot];
        let node = self.nodes[i as usize];
        if node.time > stop {
            return None;
        }
        self.heads[slot] = node.next;
        self.nodes[i as usize].next = self.free;
        self.free = i;
        if node.next == NIL {
            self.occupied[slot / 64] &= !(1 << (slot % 64));
            self.found = None;
        }
        self.in_ring -= 1;
        let bucket = node.time >> self.shift;
        if bucket > self.cur {
            self.move_to(bucket);
        }
        Some((node.time, node.payload))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Rng;

    #[test]
    fn pop_until_takes_only_events_due_by_its_stop() {
        let mut q = EventQueue::new();
        let far = 1 << 40; // beyond the ring: held in the overflow heap
        for (t, p) in [(5, 'a'), (1, 'b'), (3, 'c'), (far, 'd')] {
            q.push(t, p);
        }
        assert_eq!(q.pop_until(3), Some((1, 'b')));
        assert_eq!(q.pop_until(3), Some((3, 'c')));
        assert_eq!(q.pop_until(3), None);
        assert_eq!(q.pop_until(4), None);
        assert_eq!((q.len(), q.peek_time()), (2, Some(5)));
        assert_eq!(q.pop_until(far - 1), Some((5, 'a')));
        assert_eq!(q.pop_until(far - 1), None);
        assert_eq!(q.pop_until(far), Some((far, 'd')));
        assert_eq!(q.pop_until(SimTime::MAX), None);
    }

    #[test]
    fn pops_in_time_then_fifo_order() {
        let mut q = EventQueue::new();
        q.push(5, 'a');
        q.push(1, 'b');
        q.push(5, 'c');
        q.push(3, 'd');
        q.push(1, 'e');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, p)| p)).collect();
        assert_eq!(order, vec!['b', 'e', 'd', 'a', 'c']);
    }

    #[test]
    fn matches_a_sorted_reference_under_random_load() {
        // Narrow buckets and wide spreads exercise the ring's wrap-around, the far ring and the
        // overflow.
        for width in [1, 64, 1 << 14] {
            check_against_reference(EventQueue::with_bucket_width(width), width);
        }
    }

    fn check_against_reference(mut q: EventQueue<u64>, width: u64) {
        let mut rng = Rng::from_seed(3 + width);
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut id = 0u64;
        let mut now = 0u64;
        for _ in 0..20_000 {
            if rng.uniform() < 0.55 {
                // Within the ring, within the far ring (64 epochs of one ring span), beyond.
                let t = now + match rng.below(5) {
                    0 => 0,
                    1 => rng.below(1000),
                    2 => rng.below(BUCKETS as u64 * width),
                    3 => rng.below(8 * BUCKETS as u64 * width),
                    _ => rng.below(100 * BUCKETS as u64 * width),
                };
                q.push(t, id);
                reference.push((t, id));
                id += 1;
            } else if let Some((t, p)) = q.pop() {
                reference.sort();
                let expected = reference.remove(0);
                assert_eq!((t, p), expected);
                now = t;
            }
            assert_eq!(q.len(), reference.len());
        }
        // Drain what is left in order.
        reference.sort();
        for expected in reference {
            assert_eq!(q.pop(), Some(expected));
        }
        assert!(q.is_empty() && q.pop().is_none());
    }
}
