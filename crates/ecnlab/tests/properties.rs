//! Property tests of scenario parsing and short runs (issue 19): random scenarios, valid and
//! invalid, made by mutating a valid one. Whatever the input: no panic; every error names a
//! field (its message starts with a path into the scenario); every scenario accepted (valid
//! and within a memory budget) builds and runs.
//!
//! `PROPTEST_CASES` sets the number of scenarios (default 2000 here, about 2 s);
//! docs/scenario.md gives the count run in development and the command.

use ecnlab::sim::estimate;
use ecnlab::{Scenario, Simulation};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{json, Map, Value};

/// Events a short run may take (a few milliseconds of work).
const EVENTS: u64 = 20_000;
/// Memory budget of the accepted scenarios (bytes).
const BUDGET: f64 = 256e6;

const TOP: &[&str] = &["name", "duration_s", "warmup_s", "topology", "tcp", "workloads", "metrics", "scenario"];

fn base() -> Value {
    json!({
        "duration_s": 0.5,
        "warmup_s": 0.1,
        "topology": {"clients": 2, "servers": 2, "bottleneck": {"rate_bps": 1e7, "delay_ms": 2, "queue": {"limit_pkts": 100}}},
        "workloads": [
            {"kind": "bulk", "flows": 2, "rtt_ms": {"dist": "uniform", "low": 10, "high": 40}},
            {"kind": "exchanges", "arrival_rate_per_s": 50, "response_bytes": {"dist": "lomax", "scale": 1720, "shape": 1.2, "max": 1e6}}
        ],
        "metrics": {"interval_s": 0.1}
    })
}

/// Numbers around every bound: zero, signs, sub-nanosecond, huge, integral extremes.
fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => prop_oneof![
            Just(0.0), Just(-1.0), Just(1.0), Just(0.5), Just(2.0), Just(1e-12), Just(1e-9), Just(1e-6),
            Just(1e-3), Just(0.1), Just(10.0), Just(100.0), Just(1e3), Just(1e6), Just(1e7), Just(1e9),
            Just(1e12), Just(1e13), Just(1e15), Just(1e300), Just(-1e300), Just(f64::MIN_POSITIVE),
        ]
        .prop_map(|x| json!(x)),
        3 => (0.0f64..200.0).prop_map(|x| json!(x)),
        2 => prop_oneof![Just(0i64), Just(1), Just(3), Just(-1), Just(1000), Just(u32::MAX as i64), Just(i64::MAX), Just(i64::MIN)]
            .prop_map(|x| json!(x)),
        1 => Just(json!(u64::MAX)),
    ]
}

/// A value of any type: numbers mostly, then the wrong types.
fn any_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        6 => number(),
        1 => prop_oneof![Just(json!("x")), Just(json!(true)), Just(json!(null)), Just(json!([])), Just(json!({})), Just(json!([1, 2])), Just(json!({"a": 1}))],
        2 => dist(),
    ]
}

fn dist() -> impl Strategy<Value = Value> {
    let kinds = prop_oneof![
        Just("constant"), Just("exponential"), Just("uniform"), Just("lomax"), Just("pareto"),
        Just("bounded_pareto"), Just("discrete"), Just("mixture"), Just("nosuch"),
    ];
    (kinds, number(), number(), number(), prop::collection::vec(number(), 0..3)).prop_map(|(k, a, b, c, v)| match k {
        "constant" => json!({"dist": k, "value": a}),
        "exponential" => json!({"dist": k, "mean": a}),
        "uniform" => json!({"dist": k, "low": a, "high": b}),
        "lomax" => json!({"dist": k, "scale": a, "shape": b, "max": c}),
        "pareto" => json!({"dist": k, "mean": a, "shape": b}),
        "bounded_pareto" => json!({"dist": k, "low": a, "high": b, "shape": c}),
        "discrete" => json!({"dist": k, "values": v.clone(), "weights": v}),
        "mixture" => json!({"dist": k, "parts": [{"dist": "constant", "value": a}, {"dist": "exponential", "mean": b}], "weights": [c, 1]}),
        _ => json!({"dist": k, "mean": a}),
    })
}

/// Each AQM with a few of its fields, each set or not.
fn aqm() -> impl Strategy<Value = Value> {
    let kinds: &[(&str, &[&str])] = &[
        ("droptail", &[]),
        ("red", &["min_th_pkts", "max_th_pkts", "max_p", "w_q", "mean_pkt_bytes", "ecn"]),
        ("ared", &["target_delay_ms", "interval_ms", "alpha_max", "beta", "top", "bottom", "min_th_pkts", "w_q"]),
        ("rem", &["phi", "gamma", "alpha", "b_star_pkts", "update_ms", "in_weight"]),
        ("pi", &["a", "b", "sample_hz", "q_ref_pkts", "mean_pkt_bytes"]),
        ("pie", &["target_ms", "tupdate_ms", "alpha", "beta", "max_burst_ms", "dq_threshold_bytes", "dq_rate_weight", "mark_ecnth"]),
        ("codel", &["target_ms", "interval_ms", "mtu_bytes"]),
        ("threshold", &["k_pkts", "k_bytes"]),
        ("dcn", &["sb_size", "hb_size", "hb_max_chain", "threshold_pkts", "clearing_interval_ms", "a", "b", "q_ref_pkts", "t_dec_ms", "p_ref_max_pkts"]),
        ("afd", &["shadow_size", "sample_one_in", "alpha", "beta", "update_hz", "q_target_pkts", "m_min"]),
        ("rio_ps", &["in_min_th_pkts", "in_max_th_pkts", "in_max_p", "out_max_p", "w_q", "short_flow_pkts", "idle_timeout_ms", "table_size"]),
        ("choke", &["min_th_pkts", "max_th_pkts", "candidates"]),
        ("aecn", &["n_ref_flows", "flow_exponent", "rate_exponent", "max_p_cap", "window_ms", "table_size"]),
    ];
    (0..kinds.len(), prop::collection::vec((0usize..16, any_value()), 0..4)).prop_map(move |(i, sets)| {
        let (kind, fields) = kinds[i];
        let mut m = Map::new();
        m.insert("kind".into(), json!(kind));
        for (f, v) in sets {
            if let Some(name) = fields.get(f) {
                m.insert(name.to_string(), v);
            } else if f == 15 {
                m.insert("nosuch".into(), v);
            }
        }
        Value::Object(m)
    })
}

/// Each workload kind with a few fields set to random values.
fn workload() -> impl Strategy<Value = Value> {
    let kinds: &[(&str, &[&str])] = &[
        ("bulk", &["flows", "bytes", "start_s", "start_jitter_s", "rtt_ms", "rwnd_bytes", "host_offset"]),
        ("exchanges", &["arrival_rate_per_s", "start_s", "stop_s", "exchanges_per_connection", "request_bytes", "server_delay_ms", "think_time_s", "rtt_ms"]),
        ("web_sessions", &["session_rate_per_s", "pages_per_session", "objects_per_page", "inter_page_s", "inter_object_s", "object_bytes", "rtt_ms", "stop_s"]),
        ("packmime_http", &["rate_per_s", "p_persistent", "start_s", "stop_s", "rtt_ms", "rwnd_bytes"]),
        ("tpcw_browsers", &["browsers", "think_mean_s", "think_max_s", "images_per_page", "html_bytes", "rtt_ms"]),
        ("packet_source", &["rate_pps", "size_bytes", "start_s", "stop_s"]),
    ];
    const REQUIRED: &[(&str, f64)] =
        &[("flows", 3.0), ("arrival_rate_per_s", 20.0), ("session_rate_per_s", 2.0), ("rate_per_s", 20.0), ("browsers", 5.0), ("rate_pps", 300.0)];
    (0..kinds.len(), prop::collection::vec((0usize..9, any_value()), 0..3), any::<bool>()).prop_map(move |(i, sets, complete)| {
        let (kind, fields) = kinds[i];
        let mut m = Map::new();
        m.insert("kind".into(), json!(kind));
        if complete {
            let (name, v) = REQUIRED[i];
            // Counts are integers in the schema.
            m.insert(name.to_string(), if v.fract() == 0.0 && matches!(name, "flows" | "browsers") { json!(v as u64) } else { json!(v) });
            if kind == "exchanges" {
                m.insert("response_bytes".into(), json!({"dist": "exponential", "mean": 5000}));
            }
        }
        for (f, v) in sets {
            if let Some(name) = fields.get(f) {
                m.insert(name.to_string(), v);
            }
        }
        Value::Object(m)
    })
}

/// Paths of fields to overwrite with a random value.
const PATHS: &[&str] = &[
    "name", "duration_s", "warmup_s", "nosuch",
    "topology.clients", "topology.servers", "topology.access_rate_bps", "topology.access_delay_ms",
    "topology.delay_resolution_us", "topology.access_queue.limit_pkts", "topology.bottleneck.rate_bps",
    "topology.bottleneck.delay_ms", "topology.bottleneck.random_loss", "topology.bottleneck.queue.limit_pkts",
    "topology.bottleneck.queue.limit_bytes", "topology.bottleneck.nosuch",
    "tcp.mss_bytes", "tcp.header_bytes", "tcp.initial_rto_s", "tcp.min_rto_s", "tcp.max_rto_s",
    "tcp.initial_window_segments", "tcp.delayed_ack_ms", "tcp.ack_every_segments", "tcp.syn_retries",
    "tcp.beta", "tcp.beta_ecn", "tcp.cubic_c", "tcp.clients.ecn_fraction", "tcp.servers.mss_bytes",
    "workloads.0.flows", "workloads.0.rtt_ms", "workloads.0.rwnd_bytes", "workloads.0.bytes",
    "workloads.0.start_jitter_s", "workloads.1.arrival_rate_per_s", "workloads.1.response_bytes",
    "workloads.1.exchanges_per_connection", "workloads.1.think_time_s", "workloads.1.stop_s",
    "metrics.interval_s", "metrics.queue_sample_ms", "metrics.sojourn_bin_ms", "metrics.sojourn_max_ms",
    "metrics.flow_sample_ms",
];

/// Options that are not numbers: ECN and its variants, profiles, congestion controls.
const SWITCHES: &[(&str, &[&str])] = &[
    ("tcp.ecn", &["true", "false"]),
    ("tcp.ecn_plus", &["\"off\"", "\"seed\"", "\"rfc5562\"", "\"nosuch\""]),
    ("tcp.abe", &["true", "false"]),
    ("tcp.profile", &["\"seed-2005\"", "\"linux\"", "\"rfc6298\"", "\"nosuch\""]),
    ("tcp.congestion_control", &["\"reno\"", "\"cubic\"", "\"newreno\""]),
    ("topology.bottleneck.queue.aqm.ecn", &["true", "false"]),
    ("workloads.0.direction", &["\"up\"", "\"down\"", "\"sideways\""]),
];

#[derive(Clone, Debug)]
enum Mutation {
    Set(usize, Value),
    Switch(usize, usize),
    Aqm(Value),
    UpQueueAqm(Value),
    Workload(usize, Value),
    Remove(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        6 => (0..PATHS.len(), any_value()).prop_map(|(p, v)| Mutation::Set(p, v)),
        2 => (0..SWITCHES.len(), 0usize..4).prop_map(|(p, v)| Mutation::Switch(p, v)),
        3 => aqm().prop_map(Mutation::Aqm),
        1 => aqm().prop_map(Mutation::UpQueueAqm),
        3 => (0usize..3, workload()).prop_map(|(i, w)| Mutation::Workload(i, w)),
        1 => (0..PATHS.len()).prop_map(Mutation::Remove),
    ]
}

fn slot<'a>(root: &'a mut Value, path: &str) -> Option<(&'a mut Map<String, Value>, String)> {
    let mut keys: Vec<&str> = path.split('.').collect();
    let last = keys.pop()?.to_string();
    let mut node = root;
    for k in keys {
        node = match node {
            Value::Object(m) => m.entry(k.to_string()).or_insert_with(|| json!({})),
            Value::Array(a) => a.get_mut(k.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    match node {
        Value::Object(m) => Some((m, last)),
        _ => None,
    }
}

fn apply(v: &mut Value, m: &Mutation) {
    match m {
        Mutation::Set(p, value) => {
            if let Some((t, k)) = slot(v, PATHS[*p]) {
                t.insert(k, value.clone());
            }
        }
        Mutation::Switch(p, i) => {
            let (path, options) = SWITCHES[*p];
            if let Some((t, k)) = slot(v, path) {
                t.insert(k, serde_json::from_str(options[i % options.len()]).unwrap());
            }
        }
        Mutation::Aqm(a) => v["topology"]["bottleneck"]["queue"]["aqm"] = a.clone(),
        Mutation::UpQueueAqm(a) => v["topology"]["bottleneck"]["up_queue"] = json!({"aqm": a}),
        Mutation::Workload(i, w) => {
            let list = v["workloads"].as_array_mut().unwrap();
            if *i < list.len() {
                list[*i] = w.clone();
            } else {
                list.push(w.clone());
            }
        }
        Mutation::Remove(p) => {
            if let Some((t, k)) = slot(v, PATHS[*p]) {
                t.remove(&k);
            }
        }
    }
}

/// The property, for one scenario text.
/// An error names a field: its path starts at a field of the scenario, or is an unknown key
/// at the top, named as such.
fn names_a_field(e: &ecnlab::ConfigError) -> bool {
    let first = e.path.split(['.', '[']).next().unwrap_or("");
    let unknown_top = e.path == first && e.rule.contains(&format!("unknown field `{first}`"));
    (TOP.contains(&first) || unknown_top) && e.to_string().starts_with(&e.path)
}

fn check(text: &str, seed: u64) -> Result<&'static str, TestCaseError> {
    let s = match Scenario::from_json(text) {
        Err(e) => {
            prop_assert!(names_a_field(&e), "error names no field: {e}");
            return Ok("refused");
        }
        Ok(s) => s,
    };
    let e = estimate(&s);
    prop_assert!(e.memory_bytes.is_finite() && e.memory_bytes > 0.0 && e.events.is_finite(), "{e:?}");
    if let Err(over) = e.check(BUDGET) {
        prop_assert!(names_a_field(&over), "error names no field: {over}");
        return Ok("over budget");
    }
    let mut sim = Simulation::new(s, seed).map_err(|e| TestCaseError::fail(format!("accepted but not built: {e}")))?;
    let end = sim.end();
    let _ = sim.advance(end, EVENTS);
    let results = sim.finish();
    prop_assert!(!results.tables.is_empty());
    Ok("ran")
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000)
}

#[test]
fn random_scenarios_parse_or_name_a_field_and_accepted_ones_run() {
    let config = Config { cases: cases(), failure_persistence: None, ..Config::default() };
    // A fixed seed: CI runs the same scenarios every time; PROPTEST_RNG_SEED picks others.
    let seed = std::env::var("PROPTEST_RNG_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(19u64);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes));
    let tally = std::cell::RefCell::new(std::collections::BTreeMap::<&str, u32>::new());
    let strategy = (prop::collection::vec(mutation(), 1..5), any::<u64>());
    runner
        .run(&strategy, |(mutations, seed)| {
            let mut v = base();
            for m in &mutations {
                apply(&mut v, m);
            }
            let outcome = check(&v.to_string(), seed)?;
            *tally.borrow_mut().entry(outcome).or_default() += 1;
            Ok(())
        })
        .unwrap();
    let tally = tally.into_inner();
    eprintln!("{} random scenarios: {tally:?}", cases());
    // The generator reaches all three outcomes in quantity.
    for outcome in ["refused", "ran"] {
        assert!(tally.get(outcome).copied().unwrap_or(0) * 10 >= cases(), "{tally:?}");
    }
}

#[test]
fn the_base_scenario_and_every_aqm_and_workload_kind_can_run() {
    // The generator's building blocks, each valid on its own.
    for aqm in ["red", "ared", "rem", "pi", "pie", "codel", "dcn", "afd", "rio_ps", "choke", "aecn"] {
        let mut v = base();
        v["topology"]["bottleneck"]["queue"]["aqm"] = json!({"kind": aqm});
        assert_eq!(check(&v.to_string(), 1).unwrap(), "ran", "{aqm}");
    }
}
