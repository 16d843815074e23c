//! The pending-event set: a 4-ary min-heap keyed by (time, insertion sequence).
//!
//! A 4-ary heap does half the levels of a binary heap and its four children share a cache
//! line or two, which makes it faster for the pop-dominated access pattern of a simulator;
//! `benches/src/bin/event_queue.rs` measures it against `std::collections::BinaryHeap`
//! (figures in docs/benchmarks.md). The sequence number makes the order total, so events at
//! the same nanosecond run in the order they were scheduled.

use super::time::SimTime;

#[derive(Clone, Copy, Debug)]
struct Entry<T> {
    /// (time << 64) | sequence: one integer comparison orders by time, then FIFO.
    key: u128,
    payload: T,
}

#[derive(Clone, Debug)]
pub struct EventQueue<T> {
    heap: Vec<Entry<T>>,
    seq: u64,
}

impl<T: Copy> Default for EventQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> EventQueue<T> {
    pub fn new() -> Self {
        EventQueue { heap: Vec::with_capacity(1024), seq: 0 }
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
        self.heap.push(Entry { key, payload });
        self.sift_up(self.heap.len() - 1);
    }

    pub fn pop(&mut self) -> Option<(SimTime, T)> {
        let n = self.heap.len();
        if n == 0 {
            return None;
        }
        let top = self.heap.swap_remove(0);
        if n > 1 {
            self.sift_down(0);
        }
        Some(((top.key >> 64) as SimTime, top.payload))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Rng;

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
        let mut rng = Rng::from_seed(3);
        let mut q = EventQueue::new();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut id = 0u64;
        let mut now = 0u64;
        for _ in 0..20_000 {
            if rng.uniform() < 0.55 {
                let t = now + rng.below(1000);
                q.push(t, id);
                reference.push((t, id));
                id += 1;
            } else if let Some((t, p)) = q.pop() {
                reference.sort();
                let expected = reference.remove(0);
                assert_eq!((t, p), expected);
                now = t;
            }
        }
    }
}
