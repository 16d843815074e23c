//! Runs one scenario (JSON file) to its end and prints events, packets and wall time: a
//! driver for profilers (`perf record`), free of the Python interpreter.
//!
//! Usage: `cargo run --release -p ecnlab-benches --bin run_scenario -- SCENARIO.json [SEED]`

use std::time::Instant;

use ecnlab::scenario::Scenario;
use ecnlab::sim::Simulation;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: run_scenario SCENARIO.json [SEED]");
        std::process::exit(2);
    };
    let seed: u64 = args.get(2).map_or(1, |s| s.parse().expect("SEED must be an integer"));
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let scenario = Scenario::from_json(&text).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let start = Instant::now();
    let mut sim = Simulation::new(scenario, seed).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let end = sim.end();
    sim.run_until(end);
    let results = sim.finish();
    let wall = start.elapsed().as_secs_f64();
    let events = sim.events_processed();
    println!("events {events} wall_s {wall:.3} events_per_s {:.0}", events as f64 / wall);
    for key in ["bottleneck_data_pkts", "goodput_bps", "orphan_packets"] {
        if let Some((_, v)) = results.summary.iter().find(|(k, _)| k == key) {
            println!("{key} {v:?}");
        }
    }
}
