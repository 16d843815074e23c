//! Measures the pending-event set: std's BinaryHeap, ecnlab's 4-ary heap alone, and ecnlab's
//! calendar queue (a ring of buckets over the 4-ary heap), on the access pattern of a
//! simulation (hold model: pop the earliest event, push one at a random later time, up to 1 ms
//! ahead, with a steady population). The calendar's bucket width is the mean gap between
//! events, as the simulator sets it from the bottleneck rate. Run: `cargo run --release -p
//! ecnlab-benches --bin event_queue`. Prints the median of 5 runs for each size; figures are in
//! docs/benchmarks.md.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use ecnlab::engine::{EventQueue, Heap4, Rng};

const OPS: usize = 4_000_000;

fn hold_binary(n: usize, seed: u64) -> (f64, u64) {
    let mut rng = Rng::from_seed(seed);
    let mut h = BinaryHeap::with_capacity(n);
    let mut seq = 0u64;
    for _ in 0..n {
        h.push(Reverse(((rng.below(1_000_000) as u128) << 64 | seq as u128, seq as u32)));
        seq += 1;
    }
    let start = Instant::now();
    let mut check = 0u64;
    for _ in 0..OPS {
        let Reverse((key, p)) = h.pop().unwrap();
        let t = (key >> 64) as u64;
        check = check.wrapping_add(p as u64);
        h.push(Reverse((((t + 1 + rng.below(1_000_000)) as u128) << 64 | seq as u128, seq as u32)));
        seq += 1;
    }
    (start.elapsed().as_secs_f64() * 1e9 / OPS as f64, check)
}

/// The hold model on any queue with push/pop (the 4-ary heap or the calendar).
macro_rules! hold {
    ($name:ident, $make:expr) => {
        fn $name(n: usize, seed: u64) -> (f64, u64) {
            let mut rng = Rng::from_seed(seed);
            let mut q = $make(n);
            let mut seq = 0u32;
            for _ in 0..n {
                q.push(rng.below(1_000_000), seq);
                seq += 1;
            }
            let start = Instant::now();
            let mut check = 0u64;
            for _ in 0..OPS {
                let (t, p) = q.pop().unwrap();
                check = check.wrapping_add(p as u64);
                q.push(t + 1 + rng.below(1_000_000), seq);
                seq += 1;
            }
            (start.elapsed().as_secs_f64() * 1e9 / OPS as f64, check)
        }
    };
}

hold!(hold_quaternary, |_n: usize| Heap4::<u32>::new());
// Pushes land up to 1 ms ahead, so n pending events are about 1 ms / n apart (at least 1 ns).
hold!(hold_calendar, |n: usize| EventQueue::<u32>::with_bucket_width(1_000_000 / n as u64));

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
        let c = median((0..5).map(|s| hold_calendar(n, s).0).collect());
        // All see the same random times: same checksums prove the same pop order.
        let check = hold_binary(n, 9).1;
        assert_eq!(check, hold_quaternary(n, 9).1);
        assert_eq!(check, hold_calendar(n, 9).1);
        println!("| {n} | {b:.1} | {q:.1} | {c:.1} | {:.2} |", b / c);
    }
}
