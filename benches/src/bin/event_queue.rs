//! Measures the pending-event set: std's BinaryHeap, ecnlab's 4-ary heap alone, and ecnlab's
//! calendar queue (a ring of buckets over the 4-ary heap), on the access pattern of a
//! simulation (hold model: pop the earliest event, push one at a random later time, up to 1 ms
//! ahead, with a steady population). The calendar's bucket width is the mean gap between
//! events, as the simulator sets it from the bottleneck rate. The hold loop is the library's
//! (`ecnlab::engine::bench`, which `ecnlab bench` also runs for its bare-engine reference).
//! Run: `cargo run --release -p ecnlab-benches --bin event_queue`. Prints the median of 5 runs
//! for each size; figures are in docs/benchmarks.md.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use ecnlab::engine::bench::{hold, hold_calendar, PendingSet};
use ecnlab::engine::{Heap4, SimTime};

const OPS: u64 = 4_000_000;

/// std's binary heap keyed by (time, sequence), as the engine orders events.
struct StdHeap {
    heap: BinaryHeap<Reverse<(u128, u32)>>,
    seq: u64,
}

impl PendingSet<u32> for StdHeap {
    fn push(&mut self, time: SimTime, payload: u32) {
        self.heap.push(Reverse(((time as u128) << 64 | self.seq as u128, payload)));
        self.seq += 1;
    }
    fn pop(&mut self) -> Option<(SimTime, u32)> {
        self.heap.pop().map(|Reverse((key, p))| ((key >> 64) as SimTime, p))
    }
}

/// ns per pop-and-push step and the checksum of the pop order.
fn run(q: &mut impl PendingSet<u32>, n: usize, seed: u64) -> (f64, u64) {
    let h = hold(q, n, OPS, seed, |s| s as u32, |p| *p as u64);
    (h.seconds * 1e9 / OPS as f64, h.checksum)
}

fn hold_binary(n: usize, seed: u64) -> (f64, u64) {
    run(&mut StdHeap { heap: BinaryHeap::with_capacity(n), seq: 0 }, n, seed)
}

fn hold_quaternary(n: usize, seed: u64) -> (f64, u64) {
    run(&mut Heap4::<u32>::new(), n, seed)
}

// Pushes land up to 1 ms ahead, so n pending events are about 1 ms / n apart (at least 1 ns).
fn hold_cal(n: usize, seed: u64) -> (f64, u64) {
    run(&mut hold_calendar::<u32>(n), n, seed)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    println!("| pending events | BinaryHeap ns/op | 4-ary heap ns/op | calendar ns/op | BinaryHeap / calendar |");
    println!("|---:|---:|---:|---:|---:|");
    for n in [64, 1_000, 10_000, 100_000] {
        let b = median((0..5).map(|s| hold_binary(n, s).0).collect());
        let q = median((0..5).map(|s| hold_quaternary(n, s).0).collect());
        let c = median((0..5).map(|s| hold_cal(n, s).0).collect());
        // All see the same random times: same checksums prove the same pop order.
        let check = hold_binary(n, 9).1;
        assert_eq!(check, hold_quaternary(n, 9).1);
        assert_eq!(check, hold_cal(n, 9).1);
        println!("| {n} | {b:.1} | {q:.1} | {c:.1} | {:.2} |", b / c);
    }
}
