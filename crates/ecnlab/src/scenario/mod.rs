//! Scenario configuration: serde types (the one schema, DESIGN decision 3), defaults and
//! validation. Every invalid input becomes a [`ConfigError`] naming the field, the value and
//! the rule. The reference for users is docs/scenario.md; `ecnlab schema` prints the JSON
//! Schema generated from these types.

pub mod export;
pub mod limits;
pub mod topology;

pub use topology::{Bottleneck, Layout, Topology, TopologyKind};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::aqm::AqmConfig;
use crate::config::{check, non_negative, positive, tagged, ConfigError};
use crate::dist::Dist;
use crate::net::topology::Graph;
use crate::tcp::config::{Side, TcpConfig};
use crate::workload::{BulkFlows, BulkParams, Browsers, Driver, ExchangeArrivals, ExchangesParams, PackMime, PackMimeParams, PacketSource, PacketSourceParams, TpcwParams, WebSessions, WebSessionsParams};

// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free text copied to the results.
    #[serde(default = "default_name")]
    pub name: String,
    /// Simulated time (s).
    #[serde(default = "default_duration")]
    pub duration_s: f64,
    /// Start-up transient excluded from every measurement (s).
    #[serde(default)]
    pub warmup_s: f64,
    pub topology: Topology,
    #[serde(default)]
    pub tcp: TcpConfig,
    pub workloads: Vec<Workload>,
    #[serde(default)]
    pub metrics: MetricsConfig,
}

fn default_name() -> String {
    "scenario".into()
}
fn default_duration() -> f64 {
    60.0
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueueConfig {
    /// Hard limit in packets (100 when neither limit is given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_pkts: Option<u32>,
    /// Hard limit in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_bytes: Option<u64>,
    /// The AQM algorithm.
    #[serde(default)]
    pub aqm: AqmConfig,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig { limit_pkts: Some(100), limit_bytes: None, aqm: AqmConfig::default() }
    }
}

impl QueueConfig {
    /// The packet limit in force (100 if no limit at all was given).
    pub fn effective_limits(&self) -> (Option<u32>, Option<u64>) {
        match (self.limit_pkts, self.limit_bytes) {
            (None, None) => (Some(100), None),
            l => l,
        }
    }

    /// Checks the queue; `segment_bytes` is the largest TCP segment a host sends.
    pub fn validate(&self, path: &str, segment_bytes: u64) -> Result<(), ConfigError> {
        self.aqm.validate(&format!("{path}.aqm"))?;
        let (pkts, bytes) = self.effective_limits();
        if let Some(l) = bytes {
            check(
                l >= segment_bytes,
                format_args!("{path}.limit_bytes"),
                l,
                format_args!("must hold a full-size segment ({segment_bytes} bytes: tcp.mss_bytes + tcp.header_bytes), or no data packet ever fits"),
            )?;
        }
        // A target the hard limit never lets the queue reach makes the AQM a drop-tail queue.
        for (field, target) in self.aqm.targets_pkts() {
            if let Some(l) = pkts {
                check(
                    target < l as f64,
                    format_args!("{path}.aqm.{field}"),
                    target,
                    format_args!("must be below the queue's limit_pkts ({l}): the queue never reaches it"),
                )?;
            }
        }
        for (field, target) in self.aqm.targets_bytes() {
            if let Some(l) = bytes {
                check(target < l, format_args!("{path}.aqm.{field}"), target, format_args!("must be below the queue's limit_bytes ({l}): the queue never reaches it"))?;
            }
        }
        Ok(())
    }
}

/// Round-trip propagation delay (ns) from each (client router, server router) pair and back;
/// `None` if no route joins them both ways.
type RoundTrips = std::collections::BTreeMap<(u32, u32), Option<u64>>;

// ---------------------------------------------------------------------------------------------

/// A workload, selected by `kind`.
// Each variant wraps its parameter struct and is decoded by [`tagged`], so an error inside a
// workload names its field.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Workload {
    /// Long-lived flows.
    Bulk(BulkParams),
    /// Request/response exchanges on connections opened by a Poisson process.
    Exchanges(ExchangesParams),
    /// Web sessions of pages of objects, one connection per object (Feldmann et al. as ns-2's
    /// WebTraf; docs/models/workloads.md).
    WebSessions(WebSessionsParams),
    /// PackMime-HTTP connections, HTTP/1.0 or 1.1 (Cao et al. 2004 as in ns-2;
    /// docs/models/workloads.md).
    PackmimeHttp(PackMimeParams),
    /// A closed population of TPC-W emulated browsers (browsing mix; docs/models/workloads.md).
    TpcwBrowsers(TpcwParams),
    /// Unresponsive packets injected at the router into the bottleneck queue.
    PacketSource(PacketSourceParams),
}

impl<'de> Deserialize<'de> for Workload {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        const KINDS: &[&str] = &["bulk", "exchanges", "web_sessions", "packmime_http", "tpcw_browsers", "packet_source"];
        let (kind, body) = tagged::split(d, "kind", KINDS)?;
        Ok(match kind.as_str() {
            "bulk" => Workload::Bulk(tagged::body(body)?),
            "exchanges" => Workload::Exchanges(tagged::body(body)?),
            "web_sessions" => Workload::WebSessions(tagged::body(body)?),
            "packmime_http" => Workload::PackmimeHttp(tagged::body(body)?),
            "tpcw_browsers" => Workload::TpcwBrowsers(tagged::body(body)?),
            "packet_source" => Workload::PacketSource(tagged::body(body)?),
            _ => unreachable!("split checks the kind"),
        })
    }
}

impl Workload {
    /// The client and server host groups its connections use (`None`: every host), or
    /// `None` for a packet source.
    pub fn host_groups(&self) -> Option<(Option<&str>, Option<&str>)> {
        let (c, s) = match self {
            Workload::Bulk(p) => (&p.client_group, &p.server_group),
            Workload::Exchanges(p) => (&p.client_group, &p.server_group),
            Workload::WebSessions(p) => (&p.client_group, &p.server_group),
            Workload::PackmimeHttp(p) => (&p.client_group, &p.server_group),
            Workload::TpcwBrowsers(p) => (&p.client_group, &p.server_group),
            Workload::PacketSource(_) => return None,
        };
        Some((c.as_deref(), s.as_deref()))
    }

    /// The driver of workload `index` in a run of `seed` lasting `duration_s`, with `clients`
    /// and `servers` hosts in its host groups.
    pub fn driver(&self, index: u32, seed: u64, duration_s: f64, clients: u32, servers: u32) -> Driver {
        match self {
            Workload::Bulk(p) => Driver::Bulk(Box::new(p.clone()), BulkFlows::new(index, p, seed, clients, servers)),
            Workload::Exchanges(p) => Driver::Exchanges(Box::new(p.clone()), ExchangeArrivals::new(index, p, seed, duration_s)),
            Workload::WebSessions(p) => Driver::WebSessions(Box::new(p.clone()), WebSessions::new(index, p, seed, duration_s)),
            Workload::PackmimeHttp(p) => Driver::PackMime(Box::new(p.clone()), Box::new(PackMime::new(index, p, seed, duration_s))),
            Workload::TpcwBrowsers(p) => Driver::TpcwBrowsers(Box::new(p.clone()), Browsers::new(index, p, seed, clients, servers)),
            Workload::PacketSource(p) => Driver::PacketSource(Box::new(p.clone()), PacketSource::new(index, p, seed, duration_s)),
        }
    }

    fn validate(&self, path: &str, duration_s: f64, path_rtt_ms: f64) -> Result<(), ConfigError> {
        let rtt_check = |rtt: &Option<Dist>| -> Result<(), ConfigError> {
            if let Some(d) = rtt {
                let p = format!("{path}.rtt_ms");
                d.validate(&p)?;
                check(
                    d.min_value() >= path_rtt_ms - 1e-9,
                    &p,
                    d.min_value(),
                    format_args!("can be below the path's propagation RTT ({path_rtt_ms} ms): lower the access or bottleneck delays"),
                )?;
            }
            Ok(())
        };
        let size_check = |d: &Dist, name: &str, min: f64| -> Result<(), ConfigError> {
            let p = format!("{path}.{name}");
            d.validate(&p)?;
            check(d.min_value() >= min, &p, d.min_value(), format_args!("must not produce values below {min}"))
        };
        match self {
            Workload::Bulk(BulkParams { flows, start_s, start_jitter_s, rtt_ms, rwnd_bytes, bytes, .. }) => {
                check(*flows >= 1, format_args!("{path}.flows"), flows, "must be at least 1")?;
                non_negative(*start_s, format_args!("{path}.start_s"))?;
                non_negative(*start_jitter_s, format_args!("{path}.start_jitter_s"))?;
                if let Some(b) = bytes {
                    check(*b >= 1, format_args!("{path}.bytes"), b, "must be at least 1")?;
                }
                rtt_check(rtt_ms)?;
                size_check(rwnd_bytes, "rwnd_bytes", 1.0)
            }
            Workload::Exchanges(ExchangesParams {
                arrival_rate_per_s,
                start_s,
                stop_s,
                exchanges_per_connection,
                request_bytes,
                response_bytes,
                server_delay_ms,
                think_time_s,
                rtt_ms,
                rwnd_bytes,
                ..
            }) => {
                positive(*arrival_rate_per_s, format_args!("{path}.arrival_rate_per_s"))?;
                non_negative(*start_s, format_args!("{path}.start_s"))?;
                let stop = stop_s.unwrap_or(duration_s);
                check(stop > *start_s, format_args!("{path}.stop_s"), stop, format_args!("must be after start_s ({start_s})"))?;
                size_check(exchanges_per_connection, "exchanges_per_connection", 0.5)?;
                size_check(request_bytes, "request_bytes", 0.0)?;
                size_check(response_bytes, "response_bytes", 0.0)?;
                size_check(server_delay_ms, "server_delay_ms", 0.0)?;
                size_check(think_time_s, "think_time_s", 0.0)?;
                rtt_check(rtt_ms)?;
                size_check(rwnd_bytes, "rwnd_bytes", 1.0)
            }
            Workload::WebSessions(p) => p.validate(path, duration_s, path_rtt_ms),
            Workload::TpcwBrowsers(p) => {
                p.validate(path)?;
                rtt_check(&p.rtt_ms)
            }
            Workload::PackmimeHttp(p) => {
                p.validate(path, duration_s)?;
                rtt_check(&p.rtt_ms)
            }
            Workload::PacketSource(PacketSourceParams { rate_pps, size_bytes, start_s, stop_s, .. }) => {
                positive(*rate_pps, format_args!("{path}.rate_pps"))?;
                size_check(size_bytes, "size_bytes", 0.0)?;
                non_negative(*start_s, format_args!("{path}.start_s"))?;
                let stop = stop_s.unwrap_or(duration_s);
                check(stop > *start_s, format_args!("{path}.stop_s"), stop, format_args!("must be after start_s ({start_s})"))
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricsConfig {
    /// Width of one row of the links table (s).
    #[serde(default = "default_interval")]
    pub interval_s: f64,
    /// Period of the queue_samples table (ms); 0 turns it off.
    #[serde(default = "default_sample")]
    pub queue_sample_ms: f64,
    /// Bin width of the sojourn-time histogram (ms).
    #[serde(default = "default_bin")]
    pub sojourn_bin_ms: f64,
    /// Sojourn times above this fall into the last bin (ms).
    #[serde(default = "default_sojourn_max")]
    pub sojourn_max_ms: f64,
    /// Period of the flow_samples table (per-flow cwnd, ssthresh, RTT, bytes) in ms; 0 (the
    /// default) turns it off.
    #[serde(default)]
    pub flow_sample_ms: f64,
    /// The AQM control variables the aqm_samples table keeps (names as in its `variable`
    /// column); absent (the default): every variable of each recorded link's AQM; empty: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aqm_variables: Option<Vec<String>>,
}

fn default_interval() -> f64 {
    1.0
}
fn default_sample() -> f64 {
    10.0
}
fn default_bin() -> f64 {
    0.1
}
fn default_sojourn_max() -> f64 {
    2000.0
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            interval_s: default_interval(),
            queue_sample_ms: default_sample(),
            sojourn_bin_ms: default_bin(),
            sojourn_max_ms: default_sojourn_max(),
            flow_sample_ms: 0.0,
            aqm_variables: None,
        }
    }
}

impl MetricsConfig {
    /// Whether the aqm_samples table keeps AQM variable `name` (`aqm_variables`).
    pub fn keeps_aqm_variable(&self, name: &str) -> bool {
        self.aqm_variables.as_ref().is_none_or(|names| names.iter().any(|n| n == name))
    }
}

/// The rule a name in `metrics.aqm_variables` breaks, with the names it may take (written out
/// only for an error).
struct UnknownAqmVariable;

impl std::fmt::Display for UnknownAqmVariable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&str> = AqmConfig::VARIABLES.iter().flat_map(|&(_, vars)| vars.iter().copied()).collect();
        names.sort_unstable();
        names.dedup();
        write!(f, "is not a variable of any AQM; known: {}", names.join(", "))
    }
}

// ---------------------------------------------------------------------------------------------

impl Scenario {
    /// Parses JSON text, naming the field of any unknown key or wrong type.
    pub fn from_json(text: &str) -> Result<Scenario, ConfigError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let s: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let mut path = e.path().to_string();
            let mut rule = e.into_inner().to_string();
            // An error inside a tagged enum's body carries its inner path (see `tagged`).
            if let Some(rest) = rule.strip_prefix(tagged::INNER_PATH) {
                if let Some((inner, message)) = rest.split_once(tagged::INNER_PATH) {
                    path = format!("{path}.{inner}");
                    rule = message.to_string();
                }
            }
            ConfigError {
                path: if path == "." { "scenario".into() } else { path },
                value: String::new(),
                rule: strip_position(&rule),
            }
        })?;
        s.validate()?;
        Ok(s)
    }

    /// The scenario as JSON with every default filled in, the TCP profile's values included.
    pub fn to_json(&self) -> String {
        let mut s = self.clone();
        s.tcp = s.tcp.filled();
        s.topology = s.topology.filled();
        serde_json::to_string_pretty(&s).expect("a scenario always serializes")
    }

    /// The TCP settings hosts actually run: each side's (if a workload without a `tcp` table of
    /// its own opens connections) and each bulk workload's own laid over each side. Each comes
    /// with the tables it is made of (path, table), the later ones overriding the earlier.
    fn tcp_in_use(&self) -> Vec<(Vec<(String, &TcpConfig)>, TcpConfig)> {
        let mut out = Vec::new();
        let sides_used = self.workloads.iter().any(|w| match w {
            Workload::Bulk(b) => b.tcp.is_none(),
            Workload::PacketSource(_) => false,
            _ => true,
        });
        for side in [Side::Clients, Side::Servers] {
            let mut layers = vec![("tcp".to_string(), &self.tcp)];
            let own = match side {
                Side::Clients => self.tcp.clients.as_deref(),
                Side::Servers => self.tcp.servers.as_deref(),
            };
            if let Some(o) = own {
                layers.push((format!("tcp.{}", side.name()), o));
            }
            if sides_used {
                out.push((layers.clone(), self.tcp.side(side)));
            }
            for (i, w) in self.workloads.iter().enumerate() {
                if let Workload::Bulk(BulkParams { tcp: Some(o), .. }) = w {
                    let mut l = layers.clone();
                    l.push((format!("workloads[{i}].tcp"), o));
                    out.push((l, self.tcp.side(side).overlay(o)));
                }
            }
        }
        out
    }

    /// The largest TCP segment on the wire (bytes): MSS plus headers, over every host's
    /// settings.
    fn largest_segment_bytes(&self) -> u64 {
        self.tcp_in_use()
            .iter()
            .map(|(_, c)| c.resolve())
            .map(|p| p.mss_bytes as u64 + p.header_bytes as u64)
            .max()
            .unwrap_or(0)
    }

    /// The topology lowered to routers, links and hosts (checked).
    pub fn layout(&self) -> Result<Layout, ConfigError> {
        self.topology.layout(self.largest_segment_bytes())
    }

    /// The hosts of workload `i` (client and server host ranges) in `layout`, or an error
    /// naming the group field.
    pub fn workload_hosts(&self, layout: &Layout, i: usize) -> Result<(std::ops::Range<u32>, std::ops::Range<u32>), ConfigError> {
        let (c, s) = self.workloads[i].host_groups().unwrap_or((None, None));
        let names = |g: &[(String, std::ops::Range<u32>)]| g.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ");
        let clients = layout.clients(c).ok_or_else(|| ConfigError {
            path: format!("workloads[{i}].client_group"),
            value: c.unwrap_or_default().into(),
            rule: format!("names no client group; known: {}", names(&layout.client_groups)),
        })?;
        let servers = layout.servers(s).ok_or_else(|| ConfigError {
            path: format!("workloads[{i}].server_group"),
            value: s.unwrap_or_default().into(),
            rule: format!("names no server group; known: {}", names(&layout.server_groups)),
        })?;
        Ok((clients, servers))
    }

    /// The largest propagation RTT (ms) between a client and a server of workload `i`,
    /// without per-flow extra delay (its flows' `rtt_ms` may not be below it), or an error if
    /// some of its servers cannot be reached from some of its clients.
    fn workload_path_rtt_ms(&self, layout: &Layout, graph: &Graph, round_trips: &mut RoundTrips, i: usize) -> Result<f64, ConfigError> {
        let (clients, servers) = self.workload_hosts(layout, i)?;
        let routers = |hosts: std::ops::Range<u32>, of: &[u32]| {
            let mut r: Vec<u32> = hosts.map(|h| of[h as usize]).collect();
            r.dedup();
            r
        };
        let mut worst_ns = 0u64;
        for a in routers(clients, &layout.client_routers) {
            for z in routers(servers.clone(), &layout.server_routers) {
                let round_trip = *round_trips.entry((a, z)).or_insert_with(|| {
                    let (up, down) = (graph.route(a, z)?, graph.route(z, a)?);
                    Some(graph.delay_ns(&up) + graph.delay_ns(&down))
                });
                let Some(ns) = round_trip else {
                    return Err(ConfigError {
                        path: format!("workloads[{i}]"),
                        value: String::new(),
                        rule: format!("connects hosts of routers {} and {}, which no route joins both ways", layout.routers[a as usize], layout.routers[z as usize]),
                    });
                };
                worst_ns = worst_ns.max(ns);
            }
        }
        Ok(worst_ns as f64 / 1e6 + 4.0 * self.topology.access_delay_ms)
    }

    /// The core link a packet source's packets enter: its `link`, else the dumbbell's
    /// bottleneck in its direction.
    pub fn source_link(&self, layout: &Layout, i: usize) -> Result<u32, ConfigError> {
        let Workload::PacketSource(p) = &self.workloads[i] else { panic!("workload {i} is not a packet source") };
        let name = p.link.clone().unwrap_or_else(|| format!("bottleneck_{}", p.direction.name()));
        layout.core.iter().position(|c| c.name == name).map(|l| l as u32).ok_or_else(|| ConfigError {
            path: format!("workloads[{i}].link"),
            value: name,
            rule: format!("names no router-to-router link; known: {}", layout.core.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")),
        })
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        // Every number finite and in its range first: the rules below compute with them.
        limits::check(self)?;
        positive(self.duration_s, "duration_s")?;
        non_negative(self.warmup_s, "warmup_s")?;
        check(
            self.warmup_s < self.duration_s,
            "warmup_s",
            self.warmup_s,
            format_args!("must be below duration_s ({})", self.duration_s),
        )?;
        let layout = self.layout()?;
        self.tcp.validate()?;
        check(!self.workloads.is_empty(), "workloads", "[]", "must list at least one workload")?;
        // Workloads mostly share their routers (all of them in a dumbbell): each pair's route is
        // found once.
        let graph = layout.graph();
        let mut round_trips = RoundTrips::new();
        for (i, w) in self.workloads.iter().enumerate() {
            let path_rtt = match w {
                Workload::PacketSource(p) => {
                    check(self.topology.kind == TopologyKind::Dumbbell || p.link.is_some(), format_args!("workloads[{i}].link"), "(none)", "is required outside a dumbbell: name the link the packets enter")?;
                    self.source_link(&layout, i)?;
                    0.0
                }
                _ => self.workload_path_rtt_ms(&layout, &graph, &mut round_trips, i)?,
            };
            w.validate(&format!("workloads[{i}]"), self.duration_s, path_rtt)?;
            if let Workload::Bulk(BulkParams { tcp: Some(o), .. }) = w {
                self.tcp.validate_workload(o, &format!("workloads[{i}].tcp"))?;
            }
        }
        for (layers, cfg) in self.tcp_in_use() {
            cfg.validate_ecn_options(&layers)?;
        }
        let m = &self.metrics;
        positive(m.interval_s, "metrics.interval_s")?;
        non_negative(m.queue_sample_ms, "metrics.queue_sample_ms")?;
        non_negative(m.flow_sample_ms, "metrics.flow_sample_ms")?;
        check(
            m.flow_sample_ms == 0.0 || m.flow_sample_ms >= 0.001,
            "metrics.flow_sample_ms",
            m.flow_sample_ms,
            "must be 0 (off) or at least 0.001 (1 us)",
        )?;
        positive(m.sojourn_bin_ms, "metrics.sojourn_bin_ms")?;
        check(
            m.sojourn_max_ms >= m.sojourn_bin_ms,
            "metrics.sojourn_max_ms",
            m.sojourn_max_ms,
            format_args!("must be at least sojourn_bin_ms ({})", m.sojourn_bin_ms),
        )?;
        check(
            m.sojourn_max_ms / m.sojourn_bin_ms <= 1e6,
            "metrics.sojourn_bin_ms",
            m.sojourn_bin_ms,
            "makes more than a million histogram bins: use a wider bin",
        )?;
        for (i, name) in m.aqm_variables.iter().flatten().enumerate() {
            let known = AqmConfig::VARIABLES.iter().any(|(_, vars)| vars.contains(&name.as_str()));
            check(known, format_args!("metrics.aqm_variables[{i}]"), format_args!("{name:?}"), UnknownAqmVariable)?;
        }
        Ok(())
    }
}

/// serde_json appends " at line L column C"; the path already says where.
fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// The JSON Schema of a scenario, as pretty JSON.
pub fn json_schema() -> String {
    serde_json::to_string_pretty(&schemars::schema_for!(Scenario)).expect("schema serializes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::params::{EcnResponse, LossResponse, RtoBackoffEnd, TimeoutSsthresh};

    const MINIMAL: &str = r#"{"topology": {"bottleneck": {"rate_bps": 1e7}},
        "workloads": [{"kind": "bulk", "flows": 2}]}"#;

    fn with(patch: &str) -> Result<Scenario, ConfigError> {
        let mut v: serde_json::Value = serde_json::from_str(MINIMAL).unwrap();
        let p: serde_json::Value = serde_json::from_str(patch).unwrap();
        merge(&mut v, &p);
        Scenario::from_json(&v.to_string())
    }

    fn merge(a: &mut serde_json::Value, b: &serde_json::Value) {
        match (a, b) {
            (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
                for (k, v) in b {
                    merge(a.entry(k.clone()).or_insert(serde_json::Value::Null), v);
                }
            }
            (a, b) => *a = b.clone(),
        }
    }

    #[test]
    fn minimal_scenario_gets_documented_defaults() {
        let s = Scenario::from_json(MINIMAL).unwrap();
        assert_eq!(s.duration_s, 60.0);
        assert_eq!(s.topology.access_rate_bps, 1e9);
        assert_eq!(s.topology.bottleneck.as_ref().unwrap().queue.effective_limits(), (Some(100), None));
        let p = s.tcp.resolve();
        assert_eq!((p.initial_rto, p.min_rto, p.initial_window_segments), (1_000_000_000, 1_000_000_000, 3));
        // Normalizing writes the profile's values out, and is stable.
        let n = Scenario::from_json(&s.to_json()).unwrap();
        assert_eq!(n.tcp.mss_bytes, Some(1460));
        assert_eq!(n.tcp.resolve(), s.tcp.resolve());
        assert_eq!(Scenario::from_json(&n.to_json()).unwrap(), n);
    }

    #[test]
    fn unknown_field_is_named_with_its_path() {
        let e = with(r#"{"topology": {"bottleneck": {"rate_bsp": 5}}}"#).unwrap_err();
        assert_eq!(e.path, "topology.bottleneck.rate_bsp");
        assert!(e.rule.contains("unknown field `rate_bsp`"), "{e}");
    }

    #[test]
    fn unknown_aqm_is_named() {
        let e = with(r#"{"topology": {"bottleneck": {"queue": {"aqm": {"kind": "nosuch"}}}}}"#).unwrap_err();
        assert!(e.to_string().contains("topology.bottleneck.queue.aqm"), "{e}");
        assert!(e.to_string().contains("unknown variant `nosuch`"), "{e}");
    }

    #[test]
    fn negative_rate_and_bad_values_are_refused() {
        let e = with(r#"{"topology": {"bottleneck": {"rate_bps": -5}}}"#).unwrap_err();
        assert_eq!(e.to_string(), "topology.bottleneck.rate_bps (-5) must be positive");
        let e = with(r#"{"warmup_s": 70}"#).unwrap_err();
        assert_eq!(e.to_string(), "warmup_s (70) must be below duration_s (60)");
        let e = with(r#"{"workloads": [{"kind": "bulk", "flows": 1, "rtt_ms": {"dist": "constant", "value": 1}}]}"#)
            .unwrap_err();
        assert!(e.to_string().starts_with("workloads[0].rtt_ms (1) can be below the path's propagation RTT (2 ms)"), "{e}");
        let e = with(r#"{"tcp": {"min_rto_s": 2, "max_rto_s": 1}}"#).unwrap_err();
        assert_eq!(e.path, "tcp.max_rto_s");
    }

    #[test]
    fn new_workload_kinds_name_bad_fields() {
        let e = with(r#"{"workloads": [{"kind": "web_sessions", "session_rate_per_s": 0}]}"#).unwrap_err();
        assert_eq!(e.to_string(), "workloads[0].session_rate_per_s (0) must be positive");
        let e = with(r#"{"workloads": [{"kind": "web_sessions", "session_rate_per_s": 1, "inter_page_s": {"dist": "pareto", "mean": 1, "shape": 1}}]}"#)
            .unwrap_err();
        assert_eq!(e.to_string(), "workloads[0].inter_page_s.shape (1) must be above 1 (the mean is infinite otherwise)");
        let e = with(r#"{"workloads": [{"kind": "web_sessions", "session_rate_per_s": 1, "pages": 3}]}"#).unwrap_err();
        assert!(e.to_string().contains("unknown field `pages`"), "{e}");
        let e = with(r#"{"workloads": [{"kind": "packmime_http", "rate_per_s": 10, "p_persistent": 2}]}"#).unwrap_err();
        assert_eq!(e.to_string(), "workloads[0].p_persistent (2) must be at most 1 (a probability or fraction)");
        let e = with(r#"{"workloads": [{"kind": "tpcw_browsers", "browsers": 0}]}"#).unwrap_err();
        assert_eq!(e.to_string(), "workloads[0].browsers (0) must be positive");
        // The default web RTTs (10-150 ms) must be above the path's propagation RTT.
        let e = with(r#"{"topology": {"bottleneck": {"delay_ms": 20}}, "workloads": [{"kind": "web_sessions", "session_rate_per_s": 1}]}"#)
            .unwrap_err();
        assert!(e.to_string().starts_with("workloads[0].rtt_ms (10) can be below the path's propagation RTT (40 ms)"), "{e}");
    }

    #[test]
    fn profiles_bundle_their_defaults_and_fields_override() {
        let s = with(r#"{"tcp": {"profile": "linux", "min_rto_s": 0.3}}"#).unwrap();
        let p = s.tcp.resolve();
        assert_eq!((p.initial_window_segments, p.min_rto, p.delayed_ack), (10, 300_000_000, 40_000_000));
        let s = with(r#"{"tcp": {"profile": "seed-2005"}}"#).unwrap();
        assert_eq!(s.tcp.resolve().initial_rto, 3_000_000_000);
    }

    #[test]
    fn stack_profiles_set_their_timers_receivers_and_ecn_rule() {
        use crate::tcp::params::{CcKind, DelayedAckPolicy, EcnMinWindow, RtoEstimator};
        let linux = with(r#"{"tcp": {"profile": "linux"}}"#).unwrap().tcp.resolve();
        assert_eq!(
            (linux.initial_rto, linux.min_rto, linux.max_rto, linux.initial_window_segments, linux.delayed_ack),
            (1_000_000_000, 200_000_000, 120_000_000_000, 10, 40_000_000)
        );
        assert_eq!(
            (linux.rto_estimator, linux.delayed_ack_policy, linux.ecn_min_window, linux.ect_retransmissions),
            (RtoEstimator::Linux, DelayedAckPolicy::Linux, EcnMinWindow::TwoSegments, false)
        );
        assert!(!linux.abc && !linux.limited_transmit);
        let bsd = with(r#"{"tcp": {"profile": "freebsd"}}"#).unwrap().tcp.resolve();
        assert_eq!(
            (bsd.initial_rto, bsd.min_rto, bsd.max_rto, bsd.initial_window_segments, bsd.delayed_ack, bsd.ack_every_segments),
            (1_000_000_000, 30_000_000, 64_000_000_000, 3, 100_000_000, 2)
        );
        assert_eq!(
            (bsd.rto_estimator, bsd.delayed_ack_policy, bsd.ecn_min_window, bsd.ect_retransmissions),
            (RtoEstimator::Freebsd, DelayedAckPolicy::Rfc5681, EcnMinWindow::TwoSegments, false)
        );
        assert!(bsd.abc && bsd.limited_transmit);
        assert!(matches!(bsd.cc, CcKind::NewReno { .. }));
        // The study profiles keep the RFC behaviour (and write none of the new fields out).
        for name in ["seed-2005", "rfc6298"] {
            let s = with(&format!(r#"{{"tcp": {{"profile": "{name}"}}}}"#)).unwrap();
            let p = s.tcp.resolve();
            assert_eq!(
                (p.rto_estimator, p.delayed_ack_policy, p.ecn_min_window),
                (RtoEstimator::Rfc6298, DelayedAckPolicy::Rfc5681, EcnMinWindow::Rfc3168Timer)
            );
            let json = s.to_json();
            for field in ["rto_estimator", "delayed_ack_policy", "ecn_min_window"] {
                assert!(!json.contains(field), "{name}: {field}");
            }
        }
        // The stack profiles' choices are written out (a run's id changes with them), and each
        // can be overridden.
        let s = with(r#"{"tcp": {"profile": "linux"}}"#).unwrap();
        assert!(s.to_json().contains(r#""rto_estimator": "linux""#));
        assert!(s.to_json().contains(r#""ecn_min_window": "two_segments""#));
        let s = with(r#"{"tcp": {"profile": "linux", "rto_estimator": "rfc6298", "delayed_ack_policy": "rfc5681", "ecn_min_window": "rfc3168_timer"}}"#).unwrap();
        let p = s.tcp.resolve();
        assert_eq!(
            (p.rto_estimator, p.delayed_ack_policy, p.ecn_min_window),
            (RtoEstimator::Rfc6298, DelayedAckPolicy::Rfc5681, EcnMinWindow::Rfc3168Timer)
        );
        let e = with(r#"{"tcp": {"rto_estimator": "windows"}}"#).unwrap_err();
        assert!(e.to_string().contains("rto_estimator"), "{e}");
        let e = with(r#"{"tcp": {"ecn": true, "ecn_response": "ns2", "ecn_min_window": "two_segments"}}"#).unwrap_err();
        assert!(e.to_string().starts_with("tcp.ecn_min_window"), "{e}");
        // ns-2's response with the linux profile: the profile's rule is simply not used.
        assert!(with(r#"{"tcp": {"profile": "linux", "ecn": true, "ecn_response": "ns2"}}"#).is_ok());
    }

    #[test]
    fn rto_backoff_end_is_written_out_only_when_not_the_default() {
        let s = with(r#"{"tcp": {"rto_backoff_end": "new_ack"}}"#).unwrap();
        assert_eq!(s.tcp.resolve().rto_backoff_end, RtoBackoffEnd::NewAck);
        assert!(s.to_json().contains(r#""rto_backoff_end": "new_ack""#));
        let s = with(r#"{"tcp": {"rto_backoff_end": "rtt_sample"}}"#).unwrap();
        assert_eq!(s.tcp.resolve().rto_backoff_end, RtoBackoffEnd::RttSample);
        assert!(!Scenario::from_json(&s.to_json()).unwrap().to_json().contains("rto_backoff_end"));
        let e = with(r#"{"tcp": {"rto_backoff_end": "never"}}"#).unwrap_err();
        assert!(e.to_string().contains("rto_backoff_end"), "{e}");
    }

    #[test]
    fn ns2_ecn_response_is_checked_and_written_out_only_when_chosen() {
        let s = with(r#"{"tcp": {"ecn": true, "ecn_response": "ns2"}}"#).unwrap();
        assert_eq!(s.tcp.resolve().ecn_response, EcnResponse::Ns2);
        assert!(s.to_json().contains(r#""ecn_response": "ns2""#));
        // The default is not written out: runs stored before the field existed keep their ids.
        let s = with(r#"{"tcp": {"ecn": true, "ecn_response": "rfc3168"}}"#).unwrap();
        assert_eq!(s.tcp.resolve().ecn_response, EcnResponse::Rfc3168);
        assert!(!Scenario::from_json(&s.to_json()).unwrap().to_json().contains("ecn_response"));
        let e = with(r#"{"tcp": {"ecn": true, "ecn_response": "ns2", "congestion_control": "cubic"}}"#).unwrap_err();
        assert_eq!(e.path, "tcp.ecn_response");
        assert!(e.rule.contains("newreno"), "{e}");
        let e = with(r#"{"tcp": {"ecn": true, "servers": {"ecn_response": "ns2", "abe": true}}}"#).unwrap_err();
        assert_eq!(e.path, "tcp.servers.ecn_response");
        assert!(e.rule.contains("abe"), "{e}");
        let e = with(r#"{"tcp": {"ecn_response": "ns2"}}"#).unwrap_err();
        assert_eq!(e.path, "tcp.ecn_response");
        assert!(e.rule.starts_with("needs ecn = true"), "{e}");
    }

    #[test]
    fn ns2_loss_response_is_checked_and_written_out_only_when_chosen() {
        let s = with(r#"{"tcp": {"congestion_control": "reno", "loss_response": "ns2"}}"#).unwrap();
        assert_eq!(s.tcp.resolve().loss_response, LossResponse::Ns2);
        assert!(s.to_json().contains(r#""loss_response": "ns2""#));
        let s = with(r#"{"tcp": {"loss_response": "rfc5681"}}"#).unwrap();
        assert_eq!(s.tcp.resolve().loss_response, LossResponse::Rfc5681);
        assert!(!Scenario::from_json(&s.to_json()).unwrap().to_json().contains("loss_response"));
        let e = with(r#"{"tcp": {"servers": {"loss_response": "ns2", "congestion_control": "cubic"}}}"#).unwrap_err();
        assert_eq!(e.path, "tcp.servers.loss_response");
        assert!(e.rule.contains("newreno"), "{e}");
        let e = with(r#"{"tcp": {"loss_response": "bsd"}}"#).unwrap_err();
        assert!(e.to_string().contains("loss_response"), "{e}");
    }

    #[test]
    fn timeout_ssthresh_is_written_out_only_when_not_the_rfc_rule() {
        let s = with(r#"{"tcp": {"timeout_ssthresh": "once_per_window"}}"#).unwrap();
        assert_eq!(s.tcp.resolve().timeout_ssthresh, TimeoutSsthresh::OncePerWindow);
        assert!(s.to_json().contains(r#""timeout_ssthresh": "once_per_window""#));
        let s = with(r#"{"tcp": {"timeout_ssthresh": "half_flight_size"}}"#).unwrap();
        assert_eq!(s.tcp.resolve().timeout_ssthresh, TimeoutSsthresh::HalfFlightSize);
        assert!(!Scenario::from_json(&s.to_json()).unwrap().to_json().contains("timeout_ssthresh"));
        let s = with(r#"{"tcp": {"servers": {"timeout_ssthresh": "once_per_window"}}}"#).unwrap();
        assert_eq!(s.tcp.servers.as_ref().unwrap().resolve().timeout_ssthresh, TimeoutSsthresh::OncePerWindow);
        let e = with(r#"{"tcp": {"timeout_ssthresh": "cwnd"}}"#).unwrap_err();
        assert!(e.to_string().contains("timeout_ssthresh"), "{e}");
    }

    #[test]
    fn a_switch_that_overrides_its_profile_survives_the_written_scenario() {
        for tcp in [
            r#"{"profile": "linux", "congestion_control": "cubic", "rack_tlp": false, "hystart": "off"}"#,
            r#"{"profile": "linux", "sack": false, "timeout_ssthresh": "half_flight_size", "rto_estimator": "rfc6298"}"#,
            r#"{"profile": "freebsd", "limited_transmit": false, "delayed_ack_policy": "linux"}"#,
            r#"{"profile": "rfc6298", "sack": true, "prr": true}"#,
        ] {
            let s = with(&format!(r#"{{"tcp": {tcp}}}"#)).unwrap();
            let again = Scenario::from_json(&s.to_json()).unwrap();
            assert_eq!(again.tcp.resolve(), s.tcp.resolve(), "{tcp}");
            assert_eq!(again.to_json(), s.to_json(), "{tcp}: the written scenario is a fixed point");
        }
        // A value equal to both the standard endpoint's and the profile's is not written.
        let s = with(r#"{"tcp": {"profile": "rfc6298", "sack": false, "limited_transmit": false}}"#).unwrap();
        let json = s.to_json();
        assert!(!json.contains("sack") && !json.contains("limited_transmit"), "{json}");
    }

    #[test]
    fn pacing_is_off_by_default_checked_and_written_out_only_when_on() {
        for profile in ["seed-2005", "rfc6298", "linux"] {
            let s = with(&format!(r#"{{"tcp": {{"profile": "{profile}"}}}}"#)).unwrap();
            assert!(!s.tcp.resolve().pacing, "{profile}");
            assert!(!s.to_json().contains("pacing"), "{profile}: run ids stay unchanged");
        }
        let s = with(r#"{"tcp": {"pacing": true, "pacing_ca_ratio_percent": 100}}"#).unwrap();
        let p = s.tcp.resolve();
        assert_eq!((p.pacing, p.pacing_ss_ratio_percent, p.pacing_ca_ratio_percent), (true, 200, 100));
        let json = s.to_json();
        assert!(json.contains(r#""pacing": true"#) && json.contains(r#""pacing_ss_ratio_percent": 200"#), "{json}");
        let e = with(r#"{"tcp": {"servers": {"pacing_ss_ratio_percent": 300}}}"#).unwrap_err();
        assert_eq!(e.path, "tcp.servers.pacing_ss_ratio_percent");
        assert!(e.rule.contains("pacing = true"), "{e}");
        for bad in [0, 1001] {
            let e = with(&format!(r#"{{"tcp": {{"pacing": true, "pacing_ca_ratio_percent": {bad}}}}}"#)).unwrap_err();
            assert_eq!(e.path, "tcp.pacing_ca_ratio_percent", "{e}");
        }
    }

    #[test]
    fn dctcp_turns_ecn_on_is_checked_and_writes_its_options() {
        use crate::packet::Ecn;
        use crate::tcp::dctcp::DctcpParams;
        use crate::tcp::params::CcKind;
        let s = with(r#"{"tcp": {"congestion_control": "dctcp"}}"#).unwrap();
        let p = s.tcp.resolve();
        assert!(p.ecn, "DCTCP asks for ECN (Linux's TCP_CONG_NEEDS_ECN)");
        assert_eq!(p.cc, CcKind::Dctcp { beta: 0.5, dctcp: DctcpParams { g: 0.0625, alpha_init: 1.0 } });
        assert_eq!(p.ect_codepoint, Ecn::Ect0);
        let json = s.to_json();
        assert!(json.contains(r#""dctcp_g": 0.0625"#) && json.contains(r#""dctcp_alpha_init": 1.0"#), "{json}");
        assert!(!json.contains("ect_codepoint"), "ECT(0) is not written out");
        let again = Scenario::from_json(&json).unwrap();
        assert_eq!(again.tcp.resolve(), p);
        let e = with(r#"{"tcp": {"congestion_control": "dctcp", "ecn": false, "ect_codepoint": "ect1"}}"#).unwrap_err();
        assert_eq!(e.path, "tcp.ect_codepoint", "{e}");
        let s = with(r#"{"tcp": {"congestion_control": "dctcp", "dctcp_g": 0.125, "ect_codepoint": "ect1"}}"#).unwrap();
        let p = s.tcp.resolve();
        assert_eq!((p.ect_codepoint, p.cc), (Ecn::Ect1, CcKind::Dctcp { beta: 0.5, dctcp: DctcpParams { g: 0.125, alpha_init: 1.0 } }));
        assert!(s.to_json().contains(r#""ect_codepoint": "ect1""#));
        // Existing scenarios write nothing new.
        let plain = with(r#"{"tcp": {"ecn": true}}"#).unwrap().to_json();
        assert!(!plain.contains("dctcp") && !plain.contains("ect_codepoint"), "{plain}");
        for (patch, path, rule) in [
            (r#"{"tcp": {"dctcp_g": 0.1}}"#, "tcp.dctcp_g", "dctcp"),
            (r#"{"tcp": {"congestion_control": "dctcp", "dctcp_g": 0}}"#, "tcp.dctcp_g", "positive"),
            (r#"{"tcp": {"congestion_control": "dctcp", "dctcp_g": 1.5}}"#, "tcp.dctcp_g", "1"),
            (r#"{"tcp": {"congestion_control": "dctcp", "dctcp_alpha_init": 2}}"#, "tcp.dctcp_alpha_init", "1"),
            (r#"{"tcp": {"servers": {"dctcp_alpha_init": 0.5}}}"#, "tcp.servers.dctcp_alpha_init", "dctcp"),
            (r#"{"tcp": {"congestion_control": "dctcp", "abe": true}}"#, "tcp.abe", "DCTCP"),
            (r#"{"tcp": {"congestion_control": "dctcp", "ecn_response": "ns2"}}"#, "tcp.ecn_response", "newreno"),
            (r#"{"tcp": {"ect_codepoint": "ect1"}}"#, "tcp.ect_codepoint", "needs ecn = true"),
        ] {
            let e = with(patch).unwrap_err();
            assert_eq!(e.path, path, "{patch}: {e}");
            assert!(e.to_string().contains(rule), "{patch}: {e}");
        }
    }

    #[test]
    fn prague_defaults_to_ect1_and_pacing_and_checks_its_options() {
        use crate::packet::Ecn;
        use crate::tcp::params::CcKind;
        use crate::tcp::prague::PragueParams;
        let s = with(r#"{"tcp": {"congestion_control": "prague"}}"#).unwrap();
        let p = s.tcp.resolve();
        assert!(p.ecn && p.pacing);
        assert_eq!((p.ect_codepoint, p.pacing_ss_ratio_percent, p.pacing_ca_ratio_percent), (Ecn::Ect1, 200, 100));
        let CcKind::Prague { prague, .. } = p.cc else { panic!("{:?}", p.cc) };
        assert_eq!(prague, PragueParams { rtt_target: 25_000_000, rtt_transition: 500, classic_fallback: false, classic_delay: 2_000_000 });
        assert_eq!(Scenario::from_json(&s.to_json()).unwrap().tcp.resolve(), p, "survives the written scenario");
        let s = with(r#"{"tcp": {"congestion_control": "prague", "pacing": false, "ect_codepoint": "ect0", "prague_rtt_target_ms": 10, "prague_classic_fallback": true, "prague_classic_delay_ms": 5}}"#).unwrap();
        let p = s.tcp.resolve();
        assert_eq!((p.pacing, p.ect_codepoint), (false, Ecn::Ect0));
        let CcKind::Prague { prague, .. } = p.cc else { panic!() };
        assert_eq!((prague.rtt_target, prague.classic_fallback, prague.classic_delay), (10_000_000, true, 5_000_000));
        assert_eq!(Scenario::from_json(&s.to_json()).unwrap().tcp.resolve(), p);
        for (patch, path) in [
            (r#"{"tcp": {"congestion_control": "dctcp", "prague_rtt_target_ms": 10}}"#, "tcp.prague_rtt_target_ms"),
            (r#"{"tcp": {"congestion_control": "prague", "prague_classic_delay_ms": 5}}"#, "tcp.prague_classic_delay_ms"),
            (r#"{"tcp": {"congestion_control": "prague", "abe": true}}"#, "tcp.abe"),
        ] {
            assert_eq!(with(patch).unwrap_err().path, path, "{patch}");
        }
        with(r#"{"tcp": {"congestion_control": "prague", "dctcp_g": 0.125}}"#).unwrap();
    }

    #[test]
    fn hystart_is_checked_and_written_out_only_when_on() {
        use crate::tcp::hystart::{HystartDetect, HystartKind};
        let s = with(r#"{"tcp": {"congestion_control": "cubic", "hystart": "linux"}}"#).unwrap();
        assert_eq!(s.tcp.resolve().hystart, HystartKind::Linux(HystartDetect::Both), "Linux's hystart_detect = 3");
        let json = s.to_json();
        assert!(json.contains(r#""hystart": "linux""#) && json.contains(r#""hystart_detect": "both""#), "{json}");
        let s = with(r#"{"tcp": {"hystart": "rfc9406", "servers": {"congestion_control": "reno"}}}"#).unwrap();
        assert_eq!(s.tcp.resolve().hystart, HystartKind::Rfc9406);
        // Off is not written out: runs stored before the option existed keep their ids.
        let s = with(r#"{"tcp": {"hystart": "off"}}"#).unwrap();
        assert_eq!(s.tcp.resolve().hystart, HystartKind::Off);
        assert!(!Scenario::from_json(&s.to_json()).unwrap().to_json().contains("hystart"));
        // Linux's HyStart belongs to its CUBIC.
        let e = with(r#"{"tcp": {"hystart": "linux"}}"#).unwrap_err();
        assert_eq!((e.path.as_str(), e.value.as_str()), ("tcp.hystart", "linux"));
        assert!(e.rule.contains("cubic") && e.rule.contains("rfc9406"), "{e}");
        let e = with(r#"{"tcp": {"congestion_control": "cubic", "servers": {"congestion_control": "newreno", "hystart": "linux"}}}"#).unwrap_err();
        assert_eq!(e.path, "tcp.servers.hystart");
        let e = with(r#"{"tcp": {"congestion_control": "cubic", "hystart": "rfc9406", "hystart_detect": "delay"}}"#).unwrap_err();
        assert_eq!((e.path.as_str(), e.value.as_str()), ("tcp.hystart_detect", "delay"));
        let e = with(r#"{"tcp": {"hystart": "hystart++"}}"#).unwrap_err();
        assert!(e.to_string().contains("hystart"), "{e}");
    }

    #[test]
    fn schema_mentions_every_section() {
        let schema = json_schema();
        for key in ["topology", "bottleneck", "workloads", "packet_source", "lomax", "seed-2005", "web_sessions", "packmime_http", "tpcw_browsers", "mixture", "bounded_pareto", "fq_codel", "ce_threshold_ms"] {
            assert!(schema.contains(key), "{key}");
        }
    }

    #[test]
    fn errors_inside_an_aqm_table_name_the_field() {
        let with_aqm = |aqm: &str| {
            let text = format!(
                r#"{{"topology": {{"bottleneck": {{"rate_bps": 1e7, "delay_ms": 1, "queue": {{"aqm": {aqm}}}}}}}}}, "workloads": []}}"#
            );
            Scenario::from_json(&text).unwrap_err().to_string()
        };
        let at = "topology.bottleneck.queue.aqm";
        assert_eq!(with_aqm(r#"{"kind": "red", "w_q": "x"}"#), format!("{at}.w_q: invalid type: string \"x\", expected f64"));
        assert!(with_aqm(r#"{"kind": "red", "wq": 1}"#).starts_with(&format!("{at}.wq: unknown field `wq`")));
        assert!(with_aqm(r#"{"kind": "nosuch"}"#).starts_with(&format!("{at}.kind: unknown variant `nosuch`, expected one of `droptail`")));
        assert_eq!(with_aqm(r#"{"w_q": 1}"#), format!("{at}: missing field `kind`"));
        assert!(with_aqm(r#"{"kind": "droptail", "x": 1}"#).starts_with(&format!("{at}.x: unknown field `x`")));
    }

}
