//! Helpers shared by the scenario-level test files.
#![allow(dead_code)] // each test file uses its own subset

use ecnlab::metrics::Results;
use ecnlab::{Scenario, Simulation};
use serde_json::Value;

/// Parses a scenario written as JSON; panics with the error if the test scenario is invalid.
pub fn scenario(v: &Value) -> Scenario {
    Scenario::from_json(&v.to_string()).unwrap_or_else(|e| panic!("invalid test scenario: {e}"))
}

/// Runs a scenario to its end with `seed`.
pub fn run(v: Value, seed: u64) -> Results {
    let mut sim = Simulation::new(scenario(&v), seed).unwrap();
    sim.run_until(u64::MAX);
    sim.finish()
}

/// Overlays `b` on `a`, recursively for objects.
pub fn merge(a: &mut Value, b: &Value) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (a, b) => *a = b.clone(),
    }
}
