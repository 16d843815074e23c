//! Helpers shared by the scenario-level test files.
#![allow(dead_code)] // each test file uses its own subset

use ecnlab::metrics::{Column, Results};
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

/// A string column of a result table.
pub fn strs(r: &Results, table: &str, col: &str) -> Vec<String> {
    match r.table(table).column(col) {
        Some(Column::Str(s)) => s.to_vec(),
        _ => panic!("{table}.{col} is not a string column"),
    }
}

/// Values of one AQM variable of the down bottleneck, as (t_s, value).
pub fn aqm_series(r: &Results, var: &str) -> Vec<(f64, f64)> {
    let t = r.table("aqm_samples");
    let (links, vars) = (strs(r, "aqm_samples", "link"), strs(r, "aqm_samples", "variable"));
    let (ts, vs) = (t.f64s("t_s"), t.f64s("value"));
    (0..t.rows()).filter(|&i| links[i] == "bottleneck_down" && vars[i] == var).map(|i| (ts[i], vs[i])).collect()
}
