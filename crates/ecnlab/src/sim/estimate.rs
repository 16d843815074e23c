//! What a run will need, estimated from its scenario before it starts: memory (result tables,
//! connection and host state, per-flow AQM tables) and events.
//!
//! Rows of the sampled tables (`links`, `queue_samples`, `aqm_samples`, `flow_samples`) are
//! counted exactly from the metrics settings and the recorded links' AQMs; rows of the traffic
//! tables (`exchanges`, `flows`) from the mean arrival rates and the means of the count
//! distributions. Each row is charged its size while
//! the run records it plus its column bytes once more (the buffers handed to Python). Events
//! are an upper bound: a TCP workload may keep the bottleneck busy in both directions for the
//! whole run. The estimate is a guard against runs that cannot fit, not a prediction of the
//! peak: the test `estimate_counts_sampled_rows_exactly` pins the row counts, and
//! docs/scenario.md ("Memory budget") gives measured peaks beside the estimates.

use std::fmt;

use super::conn::Conn;
use super::recorder::Snapshot;
use crate::engine::time::{from_millis, from_secs};
use crate::net::LinkId;
use crate::net::Link;
use crate::packet::Packet;
use crate::config::ConfigError;
use crate::dist::Dist;
use crate::scenario::{AqmConfig, QueueConfig, Scenario, Workload};

/// Bytes of one row of the exchanges and flows tables (column bytes, from sim.rs's recorders).
const EXCHANGE_ROW: f64 = 19.0 * 8.0;
const FLOW_ROW: f64 = 28.0 * 8.0;
/// Events per packet through the dumbbell (sent, serialized and delivered on three links,
/// with an ACK for every second segment), and per connection (handshake, close, timers).
const EVENTS_PER_PACKET: f64 = 10.0;
const EVENTS_PER_CONNECTION: f64 = 20.0;

/// One contribution to the estimate: the field that drives it, its value, what grows.
#[derive(Clone, Debug, PartialEq)]
pub struct Term {
    pub path: String,
    pub value: String,
    pub what: String,
    pub bytes: f64,
}

/// The estimate of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub memory_bytes: f64,
    pub events: f64,
    /// The contributions, largest first.
    pub terms: Vec<Term>,
}

/// Bytes in human units: `6.5 GB`.
pub fn bytes_text(b: f64) -> String {
    for (unit, scale) in [("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)] {
        if b >= scale {
            return format!("{:.1} {unit}", b / scale);
        }
    }
    format!("{b:.0} B")
}

impl fmt::Display for Estimate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "about {} of memory and {:.1e} events", bytes_text(self.memory_bytes), self.events)
    }
}

impl Estimate {
    /// Refuses a run whose estimate exceeds `budget_bytes`, naming the fields that drive it.
    pub fn check(&self, budget_bytes: f64) -> Result<(), ConfigError> {
        if self.memory_bytes <= budget_bytes {
            return Ok(());
        }
        let top = &self.terms[0];
        let others: Vec<String> = self.terms[1..]
            .iter()
            .take_while(|t| t.bytes >= 0.1 * self.memory_bytes)
            .map(|t| format!("{} ({}): {}, {}", t.path, t.value, t.what, bytes_text(t.bytes)))
            .collect();
        let also = if others.is_empty() { String::new() } else { format!("; also {}", others.join("; ")) };
        Err(ConfigError {
            path: top.path.clone(),
            value: top.value.clone(),
            rule: format!(
                "makes the run need {self}, over the memory budget of {}: {}, {}{also}; change the field or raise the budget",
                bytes_text(budget_bytes),
                top.what,
                bytes_text(top.bytes)
            ),
        })
    }
}

fn count(d: &Dist) -> f64 {
    d.mean().round().max(1.0)
}

fn number(v: f64) -> String {
    format!("{v}")
}

/// Estimates what a run of `s` needs. The scenario must be valid (see `Scenario::validate`).
pub fn estimate(s: &Scenario) -> Estimate {
    let mut terms: Vec<Term> = Vec::new();
    let mut events = 0.0;
    let duration = s.duration_s;
    let window = duration - s.warmup_s;
    let m = &s.metrics;
    let copies = |column_bytes: f64, recorded: f64| recorded + column_bytes;
    let Ok(layout) = s.layout() else {
        return Estimate { memory_bytes: 0.0, events: 0.0, terms };
    };
    // Recorded links: each has rows in the sampled tables and a sojourn histogram.
    let rec = layout.recorded.len() as f64;

    // Sampled tables: their row counts follow from the metrics settings alone.
    let intervals = from_secs(window).div_ceil(from_secs(m.interval_s).max(1)) as f64;
    let link_row = copies(30.0 * 8.0 + 4.0, std::mem::size_of::<(LinkId, Snapshot, Snapshot)>() as f64);
    terms.push(Term {
        path: "metrics.interval_s".into(),
        value: number(m.interval_s),
        what: format!("{:.3e} rows of the links table", rec * intervals),
        bytes: rec * intervals * link_row,
    });
    events += intervals;
    if m.queue_sample_ms > 0.0 {
        let samples = (from_secs(window) / from_millis(m.queue_sample_ms).max(1)) as f64 + 1.0;
        // Each recorded link's sample is a row of queue_samples and a row of aqm_samples per
        // variable of its AQM that `metrics.aqm_variables` keeps.
        let variables: f64 = layout
            .recorded
            .iter()
            .map(|&(l, _)| layout.core[l as usize].queue.aqm.variables().iter().filter(|v| m.keeps_aqm_variable(v)).count() as f64)
            .sum();
        terms.push(Term {
            path: "metrics.queue_sample_ms".into(),
            value: number(m.queue_sample_ms),
            what: format!("{:.3e} rows of the queue_samples and aqm_samples tables", samples * (rec + variables)),
            bytes: samples * (rec * copies(28.0, 28.0) + variables * copies(24.0, 24.0)),
        });
        events += samples;
    }

    let mut long_lived = 0.0;
    let conn_bytes = std::mem::size_of::<Conn>() as f64;
    let mut tcp = false;
    for (i, w) in s.workloads.iter().enumerate() {
        let at = |f: &str| format!("workloads[{i}].{f}");
        let span = |start: f64, stop: Option<f64>| (stop.unwrap_or(duration).min(duration) - start).max(0.0);
        // (field, value, connections, exchanges, connections open all along)
        let (path, value, conns, exchanges, open) = match w {
            Workload::Bulk(b) => (at("flows"), number(b.flows as f64), b.flows as f64, 0.0, b.flows as f64),
            Workload::Exchanges(e) => {
                let n = e.arrival_rate_per_s * span(e.start_s, e.stop_s);
                (at("arrival_rate_per_s"), number(e.arrival_rate_per_s), n, n * count(&e.exchanges_per_connection), 0.0)
            }
            Workload::WebSessions(p) => {
                let t = span(p.start_s, p.stop_s);
                let pages = count(&p.pages_per_session).min(1.0 + t / p.inter_page_s.mean().max(1e-9));
                let n = p.session_rate_per_s * t * pages * count(&p.objects_per_page);
                (at("session_rate_per_s"), number(p.session_rate_per_s), n, n, 0.0)
            }
            Workload::PackmimeHttp(p) => {
                let n = p.rate_per_s * span(p.start_s, p.stop_s);
                let per = if p.http_1_1 { 1.0 + 10.0 * p.p_persistent } else { 1.0 };
                (at("rate_per_s"), number(p.rate_per_s), n, n * per, 0.0)
            }
            Workload::TpcwBrowsers(p) => {
                let b = p.browsers as f64;
                let pages = b * (1.0 + duration / p.effective_think_s().max(1e-9));
                (at("browsers"), number(b), pages, pages * (1.0 + p.images_per_page.mean().max(0.0)), b)
            }
            Workload::PacketSource(p) => {
                events += 3.0 * p.rate_pps * span(p.start_s, p.stop_s);
                continue;
            }
        };
        tcp = true;
        long_lived += open;
        events += EVENTS_PER_CONNECTION * conns;
        terms.push(Term {
            path,
            value,
            what: format!("{conns:.3e} connections ({open:.3e} open all along) and {exchanges:.3e} exchanges"),
            // The state of the connections open all along, and every connection's rows.
            bytes: open * conn_bytes + conns * copies(FLOW_ROW, FLOW_ROW) + exchanges * copies(EXCHANGE_ROW, EXCHANGE_ROW + 32.0),
        });
    }
    if m.flow_sample_ms > 0.0 {
        let samples = (from_secs(window) / from_millis(m.flow_sample_ms).max(1)) as f64 + 1.0;
        let rows = samples * long_lived.max(1.0);
        terms.push(Term {
            path: "metrics.flow_sample_ms".into(),
            value: number(m.flow_sample_ms),
            what: format!("{rows:.3e} rows of the flow_samples table"),
            bytes: rows * copies(48.0, 48.0),
        });
        events += samples;
    }

    // Hosts: two access links each, with their queues and AQM tables.
    let t = &s.topology;
    let (clients, servers) = (layout.client_routers.len(), layout.server_routers.len());
    let hosts = (clients + servers) as f64;
    let per_link = std::mem::size_of::<Link>() as f64 + 64.0 * 4.0;
    let access_tables = aqm_table_bytes(&t.access_queue);
    terms.push(Term {
        path: "topology.clients".into(),
        value: format!("{clients} clients and {servers} servers"),
        what: format!("{:.3e} access links", 2.0 * hosts),
        bytes: 2.0 * hosts * (per_link + access_tables),
    });
    let queued = |q: &QueueConfig| q.effective_limits().0.map_or(0.0, |l| l as f64) * (std::mem::size_of::<Packet>() + 4) as f64;
    let core_path = if t.bottleneck.is_some() { "topology.bottleneck.queue" } else { "topology.links" };
    terms.push(Term {
        path: core_path.into(),
        value: "{...}".into(),
        what: format!("the queues of {} router-to-router links, full, and their AQM tables", layout.core.len()),
        bytes: layout.core.iter().map(|c| per_link + aqm_table_bytes(&c.queue) + queued(&c.queue)).sum(),
    });
    let bins = (from_millis(m.sojourn_max_ms) / from_millis(m.sojourn_bin_ms).max(1)) as f64 + 1.0;
    terms.push(Term {
        path: "metrics.sojourn_bin_ms".into(),
        value: number(m.sojourn_bin_ms),
        what: format!("{bins:.3e} histogram bins"),
        bytes: rec * bins * 8.0,
    });

    if tcp {
        // Full-size segments through the bottleneck in both directions, the whole run.
        let segment = 1500.0;
        let rates: f64 = layout.recorded.iter().map(|(l, _)| layout.core[*l as usize].rate_bps).sum();
        events += EVENTS_PER_PACKET * rates / 8.0 / segment * duration;
    }
    terms.sort_by(|a, b| b.bytes.total_cmp(&a.bytes));
    Estimate { memory_bytes: terms.iter().map(|t| t.bytes).sum(), events, terms }
}

/// Bytes of the per-flow tables an AQM allocates when it is built.
fn aqm_table_bytes(q: &QueueConfig) -> f64 {
    match &q.aqm {
        AqmConfig::Dcn(p) => 16.0 * (p.sb_size as f64 + p.hb_size as f64),
        AqmConfig::Afd(p) => 16.0 * p.shadow_size as f64,
        AqmConfig::RioPs(p) => 32.0 * p.table_size as f64,
        AqmConfig::Aecn(p) => 32.0 * p.table_size as f64,
        AqmConfig::FqCodel(p) => crate::aqm::fq_codel::QUEUE_STATE_BYTES as f64 * p.flows as f64,
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Simulation;

    fn scenario(metrics: &str, workloads: &str) -> Scenario {
        Scenario::from_json(&format!(
            r#"{{"duration_s": 3, "warmup_s": 0.5, "topology": {{"bottleneck": {{"rate_bps": 1e7}}}},
                "workloads": {workloads}, "metrics": {metrics}}}"#
        ))
        .unwrap()
    }

    fn rows_in(e: &Estimate, path: &str) -> f64 {
        let what = &e.terms.iter().find(|t| t.path == path).unwrap_or_else(|| panic!("{path}")).what;
        what.split(' ').next().unwrap().parse().unwrap()
    }

    #[test]
    fn estimate_counts_sampled_rows_exactly() {
        for interval in ["0.25", "0.3", "1"] {
            let s = scenario(
                &format!(r#"{{"interval_s": {interval}, "queue_sample_ms": 20, "flow_sample_ms": 7}}"#),
                r#"[{"kind": "bulk", "flows": 2}]"#,
            );
            let e = estimate(&s);
            let mut sim = Simulation::new(s, 1).unwrap();
            sim.run_until(u64::MAX);
            let r = sim.finish();
            let rows = |t: &str| r.table(t).rows() as f64;
            assert_eq!(rows_in(&e, "metrics.interval_s"), rows("links"), "interval {interval}");
            assert_eq!(rows_in(&e, "metrics.queue_sample_ms"), rows("queue_samples"));
            assert_eq!(rows_in(&e, "metrics.flow_sample_ms"), rows("flow_samples"));
            assert!(e.events >= sim.events_processed() as f64, "{} < {}", e.events, sim.events_processed());
        }
    }

    #[test]
    fn estimate_counts_the_aqm_variables_kept() {
        for kept in ["", r#", "aqm_variables": ["p", "l_delay_ms", "avg"]"#, r#", "aqm_variables": []"#] {
            let s = Scenario::from_json(&format!(
                r#"{{"duration_s": 3, "warmup_s": 0.5,
                    "topology": {{"bottleneck": {{"rate_bps": 1e7, "queue": {{"aqm": {{"kind": "dualpi2"}}}}}}}},
                    "workloads": [{{"kind": "bulk", "flows": 2}}], "metrics": {{"queue_sample_ms": 20{kept}}}}}"#
            ))
            .unwrap();
            let e = estimate(&s);
            let mut sim = Simulation::new(s, 1).unwrap();
            sim.run_until(u64::MAX);
            let r = sim.finish();
            let rows = |t: &str| r.table(t).rows() as f64;
            assert!(rows("aqm_samples") > 0.0 || kept.ends_with("[]"), "{kept}");
            assert_eq!(rows_in(&e, "metrics.queue_sample_ms"), rows("queue_samples") + rows("aqm_samples"), "{kept}");
        }
    }

    #[test]
    fn estimate_grows_with_its_fields_and_names_them_when_over_budget() {
        let small = estimate(&scenario("{}", r#"[{"kind": "bulk", "flows": 10}]"#));
        let big = estimate(&scenario("{}", r#"[{"kind": "bulk", "flows": 1000000}]"#));
        assert!(big.memory_bytes > 1000.0 * (small.memory_bytes - small.terms[0].bytes).max(1.0) / 100.0);
        assert_eq!(big.terms[0].path, "workloads[0].flows");
        let e = big.check(1e8).unwrap_err();
        assert_eq!(e.path, "workloads[0].flows");
        assert_eq!(e.value, "1000000");
        assert!(e.rule.contains("over the memory budget of 100.0 MB"), "{e}");
        assert!(big.check(1e12).is_ok());
        let dense = estimate(&scenario(r#"{"interval_s": 1e-9}"#, r#"[{"kind": "bulk", "flows": 1}]"#));
        let e = dense.check(1e10).unwrap_err();
        assert_eq!((e.path.as_str(), e.value.as_str()), ("metrics.interval_s", "0.000000001"));
    }
}
