//! The behaviour pin: a grid of short runs (every queue discipline under three ECN modes, and
//! every workload kind) whose summaries and table digests are stored in
//! `tests/snapshots/grid.json`. A change that moves any of them fails here, naming the grid
//! points and what moved, so a refactor is shown to change nothing and a model change states
//! what it changes. After an intended change, rewrite the file with
//! `ECNLAB_UPDATE_SNAPSHOTS=1 cargo test -p ecnlab --test snapshot` and say why in the commit.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::{merge, run};
use ecnlab::metrics::{Column, Results, Value};
use serde_json::{json, Value as Json};

const AQMS: &[(&str, &str)] = &[
    ("droptail", r#"{"kind": "droptail"}"#),
    ("red", r#"{"kind": "red", "min_th_pkts": 5, "max_th_pkts": 15, "max_p": 0.1, "gentle": true, "min_queue_pkts": 2}"#),
    ("ared", r#"{"kind": "ared", "target_delay_ms": 5}"#),
    ("rem", r#"{"kind": "rem", "b_star_pkts": 20}"#),
    ("pi", r#"{"kind": "pi", "q_ref_pkts": 20}"#),
    ("pie", r#"{"kind": "pie", "target_ms": 15}"#),
    ("codel", r#"{"kind": "codel", "target_ms": 5, "interval_ms": 100}"#),
    ("threshold", r#"{"kind": "threshold", "k_pkts": 20}"#),
    ("dcn", r#"{"kind": "dcn", "q_ref_pkts": 20}"#),
    ("afd", r#"{"kind": "afd", "q_target_pkts": 20}"#),
    ("rio_ps", r#"{"kind": "rio_ps"}"#),
    ("choke", r#"{"kind": "choke", "min_th_pkts": 5, "max_th_pkts": 15}"#),
    ("aecn", r#"{"kind": "aecn"}"#),
    ("fq_codel", r#"{"kind": "fq_codel"}"#),
    ("pi2", r#"{"kind": "pi2"}"#),
    ("dualpi2", r#"{"kind": "dualpi2"}"#),
];

/// TCP settings of each ECN mode.
fn ecn_modes() -> Vec<(&'static str, Json)> {
    vec![
        ("no-ecn", json!({"ecn": false})),
        ("rfc3168-ecn-plus", json!({"ecn": true, "ecn_plus": "rfc5562"})),
        (
            "ns2-reno",
            json!({"ecn": true, "congestion_control": "reno", "ecn_response": "ns2",
                   "loss_response": "ns2", "rto_backoff_end": "new_ack", "ack_every_segments": 1}),
        ),
    ]
}

const WORKLOADS: &[(&str, &str)] = &[
    ("bulk", r#"{"kind": "bulk", "flows": 4, "start_jitter_s": 0.5}"#),
    ("exchanges", r#"{"kind": "exchanges", "arrival_rate_per_s": 60, "response_bytes": {"dist": "bounded_pareto", "shape": 1.2, "low": 1000, "high": 1000000}}"#),
    ("web_sessions", r#"{"kind": "web_sessions", "session_rate_per_s": 3}"#),
    ("packmime_http", r#"{"kind": "packmime_http", "rate_per_s": 40}"#),
    ("tpcw_browsers", r#"{"kind": "tpcw_browsers", "browsers": 40, "think_mean_s": 0.5}"#),
    ("packet_source", r#"{"kind": "packet_source", "rate_pps": 300, "size_bytes": {"dist": "constant", "value": 1000}}"#),
];

fn base(aqm: &str, tcp: Json, workloads: Json) -> Json {
    let mut aqm: Json = serde_json::from_str(aqm).unwrap();
    if tcp["ecn"] == json!(true) && !["droptail", "aecn"].contains(&aqm["kind"].as_str().unwrap()) {
        aqm["ecn"] = json!(true); // the queue marks what the hosts made ECN-capable
    }
    let mut v = json!({
        "duration_s": 6.0,
        "warmup_s": 2.0,
        "topology": {"clients": 8, "servers": 8, "access_rate_bps": 1e9,
                     "bottleneck": {"rate_bps": 10e6, "delay_ms": 5.0,
                                    "queue": {"limit_pkts": 60}}},
        "workloads": workloads,
    });
    merge(&mut v, &json!({"topology": {"bottleneck": {"queue": {"aqm": aqm}}}, "tcp": tcp}));
    v
}

/// Every grid point: its name and scenario.
fn grid() -> Vec<(String, Json)> {
    let mut points = Vec::new();
    let mix = |w: &str| serde_json::from_str::<Json>(w).unwrap();
    for (aqm_name, aqm) in AQMS {
        for (mode, tcp) in ecn_modes() {
            let workloads = json!([mix(WORKLOADS[0].1), mix(WORKLOADS[1].1)]);
            points.push((format!("{aqm_name}/{mode}/bulk+exchanges"), base(aqm, tcp, workloads)));
        }
    }
    for (name, w) in WORKLOADS {
        let tcp = json!({"ecn": true});
        points.push((format!("red/rfc3168/{name}"), base(AQMS[1].1, tcp, json!([mix(w)]))));
    }
    points
}

/// FNV-1a over a table's column names and values (bit patterns for floats).
fn digest(r: &Results) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for t in &r.tables {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |bytes: &[u8]| {
            for b in bytes {
                h ^= *b as u64;
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        };
        for (name, col) in &t.columns {
            eat(name.as_bytes());
            match col {
                Column::F64(v) => v.iter().for_each(|x| eat(&x.to_bits().to_le_bytes())),
                Column::U64(v) => v.iter().for_each(|x| eat(&x.to_le_bytes())),
                Column::I64(v) => v.iter().for_each(|x| eat(&x.to_le_bytes())),
                Column::Bool(v) => v.iter().for_each(|x| eat(&[*x as u8])),
                Column::Str(v) => v.iter().for_each(|x| eat(&[x.as_bytes(), &[0]].concat())),
            }
        }
        out.insert(t.name.clone(), format!("{} rows {h:016x}", t.rows()));
    }
    out
}

fn snapshot(r: &Results) -> Json {
    let summary: BTreeMap<String, String> = r
        .summary
        .iter()
        .filter(|(k, _)| !k.starts_with("wall_")) // the machine's time, not the model's
        .map(|(k, v)| {
            let text = match v {
                Value::F64(x) => format!("{x:?}"),
                Value::U64(x) => x.to_string(),
                Value::Str(s) => s.clone(),
            };
            (k.clone(), text)
        })
        .collect();
    json!({"summary": summary, "tables": digest(r)})
}

/// What differs between a stored and a new snapshot of one point, in words.
fn differences(old: &Json, new: &Json) -> Vec<String> {
    let mut out = Vec::new();
    for part in ["summary", "tables"] {
        let (a, b) = (&old[part], &new[part]);
        let keys: std::collections::BTreeSet<&String> =
            a.as_object().into_iter().chain(b.as_object()).flat_map(|m| m.keys()).collect();
        for k in keys {
            if a.get(k) != b.get(k) {
                out.push(format!("{part}.{k}: {} -> {}", a.get(k).unwrap_or(&Json::Null), b.get(k).unwrap_or(&Json::Null)));
            }
        }
    }
    out
}

#[test]
fn the_grid_matches_its_snapshot() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/grid.json");
    let now: BTreeMap<String, Json> = grid().into_iter().map(|(name, v)| (name, snapshot(&run(v, 7)))).collect();
    if std::env::var_os("ECNLAB_UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, serde_json::to_string_pretty(&now).unwrap() + "\n").unwrap();
        return;
    }
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let stored: BTreeMap<String, Json> = serde_json::from_str(&text).unwrap();
    let mut report = Vec::new();
    for (name, snap) in &now {
        match stored.get(name) {
            None => report.push(format!("{name}: not in the snapshot")),
            Some(old) => report.extend(differences(old, snap).into_iter().map(|d| format!("{name}: {d}"))),
        }
    }
    report.extend(stored.keys().filter(|k| !now.contains_key(*k)).map(|k| format!("{k}: no longer in the grid")));
    assert!(
        report.is_empty(),
        "{} differences from {} (if intended, rewrite it with ECNLAB_UPDATE_SNAPSHOTS=1 and say why in the commit):\n{}",
        report.len(),
        path.display(),
        report.join("\n")
    );
}

#[test]
fn a_changed_point_is_reported_by_name() {
    // The comparison itself: one moved summary value and one moved table are both named.
    let old = json!({"summary": {"a": "1.0", "b": "2"}, "tables": {"flows": "3 rows 00"}});
    let new = json!({"summary": {"a": "1.5", "b": "2"}, "tables": {"flows": "3 rows 01"}});
    assert_eq!(
        differences(&old, &new),
        vec![r#"summary.a: "1.0" -> "1.5""#.to_string(), r#"tables.flows: "3 rows 00" -> "3 rows 01""#.to_string()]
    );
    assert!(differences(&old, &old).is_empty());
}
