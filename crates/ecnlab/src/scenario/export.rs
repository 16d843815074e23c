//! A workload's offered traffic without a network: its own generator run standalone for a
//! scenario and seed (`ecnlab._core.workload_plan`), for replaying the same draws elsewhere
//! (the emulation testbed, docs/testbed.md). Times are integer nanoseconds.

use serde_json::{json, Value};

use crate::workload::{ConnSpec, Driver, FlowPlan};
use crate::config::ConfigError;
use crate::engine::time::from_secs;
use crate::engine::SimTime;
use crate::scenario::Scenario;

/// The network-independent content of workload `index` of `scenario` in a run of `seed`:
///
/// * `packmime_http`: `{"kind", "connections": [{"arrival_ns", "client", "server", "rtt_ns"
///   (null: the path's), "rwnd_bytes", "exchanges": [{"request_bytes", "response_bytes",
///   "server_delay_ns", "think_ns"}]}]}` in arrival order;
/// * `web_sessions`: `{"kind", "inter_page_from", "sessions": [{"arrival_ns", "client",
///   "pages": [{"server", "gap_ns", "objects": [{"at_ns" (after the page's start),
///   "rtt_ns", "rwnd_bytes", "exchanges": [...]}]}]}]}` in arrival order.
///
/// Host indices are the scenario's (the workload's host groups placed). Other kinds: an
/// error naming `workloads[index].kind`.
pub fn workload_plan(scenario: &Scenario, index: usize, seed: u64) -> Result<Value, ConfigError> {
    let w = scenario.workloads.get(index).ok_or_else(|| ConfigError {
        path: "workloads".into(),
        value: index.to_string(),
        rule: format!("has {} workloads", scenario.workloads.len()),
    })?;
    let layout = scenario.layout()?;
    let (c, s) = scenario.workload_hosts(&layout, index)?;
    let (clients, servers) = (c.len() as u32, s.len() as u32);
    let end = from_secs(scenario.duration_s);
    // A connection, with its time under `at_key` (a PackMime arrival, a web object's request).
    let conn = |at_key: &str, at: SimTime, spec: &ConnSpec| {
        let FlowPlan::Exchanges(ex) = &spec.plan else { unreachable!("web and PackMime connections carry exchanges") };
        let mut v = json!({
            "client": c.start + spec.client,
            "server": s.start + spec.server,
            "rtt_ns": spec.rtt,
            "rwnd_bytes": spec.rwnd_bytes,
            "exchanges": ex.iter().map(|e| json!({
                "request_bytes": e.request_bytes,
                "response_bytes": e.response_bytes,
                "server_delay_ns": e.server_delay,
                "think_ns": e.think,
            })).collect::<Vec<_>>(),
        });
        v[at_key] = json!(at);
        v
    };
    match w.driver(index as u32, seed, scenario.duration_s, clients, servers) {
        Driver::PackMime(p, d) => {
            let conns = d.plan(&p, end, clients, servers);
            let rows: Vec<Value> = conns.iter().map(|(at, spec)| conn("arrival_ns", *at, spec)).collect();
            Ok(json!({"kind": "packmime_http", "connections": rows}))
        }
        Driver::WebSessions(p, d) => {
            let sessions: Vec<Value> = d
                .plan(&p, end, clients, servers)
                .iter()
                .map(|session| {
                    let pages: Vec<Value> = session
                        .pages
                        .iter()
                        .map(|page| {
                            let objects: Vec<Value> = page.objects.iter().map(|(at, spec)| conn("at_ns", *at, spec)).collect();
                            json!({"server": s.start + page.server, "gap_ns": page.gap, "objects": objects})
                        })
                        .collect();
                    json!({"arrival_ns": session.arrival, "client": c.start + session.client, "pages": pages})
                })
                .collect();
            let from = serde_json::to_value(p.inter_page_from).expect("an enum serializes");
            Ok(json!({"kind": "web_sessions", "inter_page_from": from, "sessions": sessions}))
        }
        _ => Err(ConfigError {
            path: format!("workloads[{index}].kind"),
            value: String::new(),
            rule: "only web_sessions and packmime_http workloads are exported".into(),
        }),
    }
}
