//! The `[topology]` table: a dumbbell (the default), a parking lot, or an explicit graph, each
//! lowered to one [`Layout`] (routers, core links, hosts, recorded links) that the simulator
//! builds. Routes come from `net::topology` (fewest links, or given).

use std::ops::Range;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::QueueConfig;
use crate::config::{check, non_negative, positive, ConfigError};
use crate::engine::time::from_millis;
use crate::net::topology::{Edge, Graph, LinkId};

/// The network: a dumbbell (`kind` absent or `"dumbbell"`), a parking lot, or a graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// `"dumbbell"` (default): clients - R1 - bottleneck - R2 - servers. `"parking_lot"`:
    /// `bottlenecks` links in series, R0 - R1 - ... - Rk, with a long host group across all of
    /// them and a cross group over each. `"graph"`: the `routers`, `links` and host groups given.
    #[serde(default, skip_serializing_if = "TopologyKind::is_dumbbell")]
    pub kind: TopologyKind,
    /// Dumbbell: client hosts behind R1 (default 1). Parking lot: client hosts of each group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u32>,
    /// Dumbbell: server hosts behind R2 (default 1). Parking lot: server hosts of each group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<u32>,
    /// Rate of every access link (bit/s).
    #[serde(default = "default_access_rate")]
    pub access_rate_bps: f64,
    /// One-way propagation delay of every access link (ms).
    #[serde(default)]
    pub access_delay_ms: f64,
    /// Queue of every access link.
    #[serde(default = "default_access_queue")]
    pub access_queue: QueueConfig,
    /// Per-flow extra delays are rounded to this grid (us); one delay line per distinct value
    /// and link.
    #[serde(default = "default_resolution")]
    pub delay_resolution_us: f64,
    /// Dumbbell: the bottleneck. Parking lot: each of its bottlenecks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<Bottleneck>,
    /// Parking lot: the number of bottlenecks in series (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottlenecks: Option<u32>,
    /// Graph: the routers' names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routers: Vec<String>,
    /// Graph: links between routers, each both ways.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<GraphLink>,
    /// Graph: groups of client hosts, each behind one router.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_groups: Vec<HostGroup>,
    /// Graph: groups of server hosts, each behind one router.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_groups: Vec<HostGroup>,
    /// Graph: routes to use instead of the shortest (fewest links) one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<GivenRoute>,
    /// Names of the router-to-router links whose queues are recorded (the `links`, `queue_*`,
    /// `aqm_samples` and `sojourn` tables and the summary). Default: every one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<Vec<String>>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    #[default]
    Dumbbell,
    ParkingLot,
    Graph,
}

impl TopologyKind {
    /// A dumbbell's `kind` is not written out, so that scenarios written before there were
    /// other kinds keep their normalized text, and their runs their ids.
    fn is_dumbbell(&self) -> bool {
        *self == TopologyKind::Dumbbell
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bottleneck {
    /// Bottleneck rate in each direction (bit/s).
    pub rate_bps: f64,
    /// One-way propagation delay (ms).
    #[serde(default = "default_bottleneck_delay")]
    pub delay_ms: f64,
    /// Probability that a packet entering the bottleneck is lost (either direction).
    #[serde(default)]
    pub random_loss: f64,
    /// Queue on both directions.
    #[serde(default)]
    pub queue: QueueConfig,
    /// Overrides `queue` on the up direction (clients to servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up_queue: Option<QueueConfig>,
}

impl Bottleneck {
    /// Checks the link's fields; `path` is its table's (`topology.bottleneck`, `topology.links[i]`).
    fn validate(&self, path: &str, segment_bytes: u64) -> Result<(), ConfigError> {
        positive(self.rate_bps, format_args!("{path}.rate_bps"))?;
        non_negative(self.delay_ms, format_args!("{path}.delay_ms"))?;
        check((0.0..1.0).contains(&self.random_loss), format_args!("{path}.random_loss"), self.random_loss, "must be in [0, 1)")?;
        self.queue.validate(&format!("{path}.queue"), segment_bytes)?;
        if let Some(q) = &self.up_queue {
            q.validate(&format!("{path}.up_queue"), segment_bytes)?;
        }
        Ok(())
    }
}

/// A link between two routers of a graph, both ways: `NAME_up` from `from` to `to`, and
/// `NAME_down` back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphLink {
    pub name: String,
    pub from: String,
    pub to: String,
    /// Rate in each direction (bit/s).
    pub rate_bps: f64,
    /// One-way propagation delay (ms).
    #[serde(default = "default_bottleneck_delay")]
    pub delay_ms: f64,
    /// Probability that a packet entering the link is lost (either direction).
    #[serde(default)]
    pub random_loss: f64,
    /// Queue on both directions.
    #[serde(default)]
    pub queue: QueueConfig,
    /// Overrides `queue` on the up direction (`from` to `to`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up_queue: Option<QueueConfig>,
}

/// Hosts behind one router.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostGroup {
    pub name: String,
    pub router: String,
    /// Number of hosts (default 1).
    #[serde(default = "one")]
    pub count: u32,
}

/// The links a flow from router `from` to router `to` takes, by one-way link name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GivenRoute {
    pub from: String,
    pub to: String,
    pub links: Vec<String>,
}

fn one() -> u32 {
    1
}
fn default_access_rate() -> f64 {
    1e9
}
fn default_access_queue() -> QueueConfig {
    QueueConfig { limit_pkts: Some(1000), limit_bytes: None, aqm: Default::default() }
}
fn default_resolution() -> f64 {
    100.0
}
fn default_bottleneck_delay() -> f64 {
    1.0
}

/// Named host groups, each a range of host indices.
pub type Groups = Vec<(String, Range<u32>)>;

/// A one-way router-to-router link of a layout.
#[derive(Clone, Debug, PartialEq)]
pub struct CoreLink {
    pub name: String,
    pub from: u32,
    pub to: u32,
    pub rate_bps: f64,
    pub delay_ms: f64,
    pub random_loss: f64,
    pub queue: QueueConfig,
}

/// A topology lowered to what the simulator builds: core links (index = link id), the router
/// of every client and server host, the host groups as ranges of host indices, and the
/// recorded links with the suffix of their summary keys.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub routers: Vec<String>,
    pub core: Vec<CoreLink>,
    pub client_routers: Vec<u32>,
    pub server_routers: Vec<u32>,
    pub client_groups: Groups,
    pub server_groups: Groups,
    pub given: Vec<(u32, u32, Vec<LinkId>)>,
    /// (core link, summary key suffix): the dumbbell's keep `up` and `down`; others use the
    /// link's name.
    pub recorded: Vec<(LinkId, String)>,
}

impl Layout {
    pub fn graph(&self) -> Graph {
        Graph {
            routers: self.routers.len() as u32,
            edges: self.core.iter().map(|l| Edge { from: l.from, to: l.to, delay_ns: from_millis(l.delay_ms) }).collect(),
            given: self.given.clone(),
        }
    }

    /// The hosts of the client group `name` (all client hosts when `None`).
    pub fn clients(&self, name: Option<&str>) -> Option<Range<u32>> {
        group(&self.client_groups, name, self.client_routers.len() as u32)
    }

    pub fn servers(&self, name: Option<&str>) -> Option<Range<u32>> {
        group(&self.server_groups, name, self.server_routers.len() as u32)
    }
}

fn group(groups: &[(String, Range<u32>)], name: Option<&str>, all: u32) -> Option<Range<u32>> {
    match name {
        None => Some(0..all),
        Some(n) => groups.iter().find(|(g, _)| g == n).map(|(_, r)| r.clone()),
    }
}

impl Topology {
    /// The topology with the defaults of its kind written out (host counts, bottlenecks).
    pub fn filled(&self) -> Topology {
        let mut t = self.clone();
        if t.kind != TopologyKind::Graph {
            t.clients = Some(t.clients.unwrap_or(1));
            t.servers = Some(t.servers.unwrap_or(1));
        }
        if t.kind == TopologyKind::ParkingLot {
            t.bottlenecks = Some(t.bottlenecks.unwrap_or(3));
        }
        t
    }

    /// Checks the fields of the kind and lowers the topology to its layout. `segment_bytes`
    /// is the largest TCP segment a host sends (queues must hold one).
    pub fn layout(&self, segment_bytes: u64) -> Result<Layout, ConfigError> {
        positive(self.access_rate_bps, "topology.access_rate_bps")?;
        non_negative(self.access_delay_ms, "topology.access_delay_ms")?;
        self.access_queue.validate("topology.access_queue", segment_bytes)?;
        positive(self.delay_resolution_us, "topology.delay_resolution_us")?;
        let kind = match self.kind {
            TopologyKind::Dumbbell => "a dumbbell",
            TopologyKind::ParkingLot => "a parking lot",
            TopologyKind::Graph => "a graph",
        };
        let refuse = |present: bool, field: &str| {
            check(!present, format_args!("topology.{field}"), "(set)", format_args!("is not a field of {kind} (topology.kind)"))
        };
        let graph_only = [
            (!self.routers.is_empty(), "routers"),
            (!self.links.is_empty(), "links"),
            (!self.client_groups.is_empty(), "client_groups"),
            (!self.server_groups.is_empty(), "server_groups"),
            (!self.routes.is_empty(), "routes"),
        ];
        let mut layout = match self.kind {
            TopologyKind::Dumbbell | TopologyKind::ParkingLot => {
                for (present, field) in graph_only {
                    refuse(present, field)?;
                }
                let Some(b) = &self.bottleneck else {
                    return Err(ConfigError { path: "topology.bottleneck".into(), value: String::new(), rule: format!("is required for {kind}") });
                };
                b.validate("topology.bottleneck", segment_bytes)?;
                let (c, s) = (self.clients.unwrap_or(1), self.servers.unwrap_or(1));
                check(c >= 1, "topology.clients", c, "must be at least 1")?;
                check(s >= 1, "topology.servers", s, "must be at least 1")?;
                if self.kind == TopologyKind::Dumbbell {
                    refuse(self.bottlenecks.is_some(), "bottlenecks")?;
                    dumbbell(b, c, s)
                } else {
                    let k = self.bottlenecks.unwrap_or(3);
                    check(k >= 1, "topology.bottlenecks", k, "must be at least 1")?;
                    parking_lot(b, k, c, s)
                }
            }
            TopologyKind::Graph => {
                refuse(self.bottleneck.is_some(), "bottleneck")?;
                refuse(self.bottlenecks.is_some(), "bottlenecks")?;
                refuse(self.clients.is_some(), "clients")?;
                refuse(self.servers.is_some(), "servers")?;
                self.graph_layout(segment_bytes)?
            }
        };
        if let Some(names) = &self.record {
            let mut recorded = Vec::new();
            for (i, n) in names.iter().enumerate() {
                let Some(l) = layout.core.iter().position(|c| &c.name == n) else {
                    return Err(unknown(&format!("topology.record[{i}]"), n, "router-to-router link", layout.core.iter().map(|c| c.name.as_str())));
                };
                let key = layout.recorded.iter().find(|(r, _)| *r as usize == l).map_or(n.clone(), |(_, k)| k.clone());
                check(!recorded.iter().any(|(r, _)| *r as usize == l), format_args!("topology.record[{i}]"), n, "is listed twice")?;
                recorded.push((l as LinkId, key));
            }
            layout.recorded = recorded;
        }
        Ok(layout)
    }

    fn graph_layout(&self, segment_bytes: u64) -> Result<Layout, ConfigError> {
        check(!self.routers.is_empty(), "topology.routers", "[]", "a graph needs at least one router")?;
        for (i, r) in self.routers.iter().enumerate() {
            check(!self.routers[..i].contains(r), format_args!("topology.routers[{i}]"), r, "is listed twice")?;
        }
        let router = |name: &str, path: String| -> Result<u32, ConfigError> {
            self.routers.iter().position(|r| r == name).map(|i| i as u32).ok_or_else(|| unknown(&path, name, "router", self.routers.iter().map(|s| s.as_str())))
        };
        let mut core = Vec::new();
        for (i, l) in self.links.iter().enumerate() {
            let path = format!("topology.links[{i}]");
            check(!self.links[..i].iter().any(|o| o.name == l.name), format_args!("{path}.name"), &l.name, "is used by an earlier link")?;
            let (a, b) = (router(&l.from, format!("{path}.from"))?, router(&l.to, format!("{path}.to"))?);
            check(a != b, format_args!("{path}.to"), &l.to, "must differ from `from`: a link joins two routers")?;
            let link = Bottleneck {
                rate_bps: l.rate_bps,
                delay_ms: l.delay_ms,
                random_loss: l.random_loss,
                queue: l.queue.clone(),
                up_queue: l.up_queue.clone(),
            };
            link.validate(&path, segment_bytes)?;
            core.extend(duplex(&link, a, b, &l.name));
        }
        let hosts = |groups: &[HostGroup], field: &str| -> Result<(Vec<u32>, Groups), ConfigError> {
            check(!groups.is_empty(), format_args!("topology.{field}"), "[]", "a graph needs at least one group")?;
            let (mut routers, mut ranges) = (Vec::new(), Vec::new());
            for (i, g) in groups.iter().enumerate() {
                let path = format!("topology.{field}[{i}]");
                check(!groups[..i].iter().any(|o| o.name == g.name), format_args!("{path}.name"), &g.name, "is used by an earlier group")?;
                check(g.count >= 1, format_args!("{path}.count"), g.count, "must be at least 1")?;
                let r = router(&g.router, format!("{path}.router"))?;
                let start = routers.len() as u32;
                routers.extend(std::iter::repeat_n(r, g.count as usize));
                ranges.push((g.name.clone(), start..routers.len() as u32));
            }
            Ok((routers, ranges))
        };
        let (client_routers, client_groups) = hosts(&self.client_groups, "client_groups")?;
        let (server_routers, server_groups) = hosts(&self.server_groups, "server_groups")?;
        let mut layout = Layout {
            routers: self.routers.clone(),
            recorded: (0..core.len()).map(|l| (l as LinkId, core[l].name.clone())).collect(),
            core,
            client_routers,
            server_routers,
            client_groups,
            server_groups,
            given: Vec::new(),
        };
        let graph = layout.graph();
        for (i, r) in self.routes.iter().enumerate() {
            let path = format!("topology.routes[{i}]");
            let (a, b) = (router(&r.from, format!("{path}.from"))?, router(&r.to, format!("{path}.to"))?);
            let mut links = Vec::new();
            for (j, n) in r.links.iter().enumerate() {
                let Some(l) = layout.core.iter().position(|c| &c.name == n) else {
                    return Err(unknown(&format!("{path}.links[{j}]"), n, "one-way link (NAME_up or NAME_down)", layout.core.iter().map(|c| c.name.as_str())));
                };
                links.push(l as LinkId);
            }
            check(graph.connects(a, b, &links), format_args!("{path}.links"), format!("{:?}", r.links), format_args!("must lead from {} to {}, each link starting where the previous one ends", r.from, r.to))?;
            check(!layout.given.iter().any(|(f, t, _)| (*f, *t) == (a, b)), &path, format!("{} -> {}", r.from, r.to), "gives a second route between the same routers")?;
            layout.given.push((a, b, links));
        }
        Ok(layout)
    }
}

fn unknown<'a>(path: &str, name: &str, what: &str, known: impl Iterator<Item = &'a str>) -> ConfigError {
    let known: Vec<&str> = known.collect();
    ConfigError { path: path.into(), value: name.into(), rule: format!("names no {what}; known: {}", known.join(", ")) }
}

/// The dumbbell: R1 (router 0) with the clients, R2 (router 1) with the servers.
fn dumbbell(b: &Bottleneck, clients: u32, servers: u32) -> Layout {
    let core = duplex(b, 0, 1, "bottleneck");
    Layout {
        routers: vec!["R1".into(), "R2".into()],
        core,
        client_routers: vec![0; clients as usize],
        server_routers: vec![1; servers as usize],
        client_groups: vec![("clients".into(), 0..clients)],
        server_groups: vec![("servers".into(), 0..servers)],
        given: Vec::new(),
        recorded: vec![(0, "up".into()), (1, "down".into())],
    }
}

/// The parking lot: routers R0..Rk; bottleneck i (1..=k) joins R(i-1) and Ri (`b{i}_up`
/// towards Rk, `b{i}_down` back). Host groups, `clients` client and `servers` server hosts
/// each: `long` (clients at R0, servers at Rk) and `cross{i}` (clients at R(i-1), servers at
/// Ri), in that order.
fn parking_lot(b: &Bottleneck, k: u32, clients: u32, servers: u32) -> Layout {
    let mut core = Vec::new();
    for i in 1..=k {
        core.extend(duplex(b, i - 1, i, &format!("b{i}")));
    }
    let mut groups = vec![("long".to_string(), 0u32, k)];
    groups.extend((1..=k).map(|i| (format!("cross{i}"), i - 1, i)));
    let (mut client_routers, mut server_routers, mut client_groups, mut server_groups) = (vec![], vec![], vec![], vec![]);
    for (name, a, z) in groups {
        let c0 = client_routers.len() as u32;
        client_routers.extend(std::iter::repeat_n(a, clients as usize));
        client_groups.push((name.clone(), c0..c0 + clients));
        let s0 = server_routers.len() as u32;
        server_routers.extend(std::iter::repeat_n(z, servers as usize));
        server_groups.push((name, s0..s0 + servers));
    }
    Layout {
        routers: (0..=k).map(|i| format!("R{i}")).collect(),
        recorded: core.iter().enumerate().map(|(l, c)| (l as LinkId, c.name.clone())).collect(),
        core,
        client_routers,
        server_routers,
        client_groups,
        server_groups,
        given: Vec::new(),
    }
}

/// The two directions of a link between routers `a` (the clients' side) and `z`:
/// `NAME_up` from `a` to `z` (its `up_queue` if set), `NAME_down` back.
fn duplex(b: &Bottleneck, a: u32, z: u32, name: &str) -> Vec<CoreLink> {
    let link = |dir: &str, from, to, queue: &QueueConfig| CoreLink {
        name: format!("{name}_{dir}"),
        from,
        to,
        rate_bps: b.rate_bps,
        delay_ms: b.delay_ms,
        random_loss: b.random_loss,
        queue: queue.clone(),
    };
    vec![link("up", a, z, b.up_queue.as_ref().unwrap_or(&b.queue)), link("down", z, a, &b.queue)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bottleneck() -> Bottleneck {
        Bottleneck { rate_bps: 1e7, delay_ms: 2.0, random_loss: 0.0, queue: QueueConfig::default(), up_queue: None }
    }

    fn topology(kind: TopologyKind) -> Topology {
        Topology {
            kind,
            clients: None,
            servers: None,
            access_rate_bps: 1e9,
            access_delay_ms: 0.0,
            access_queue: default_access_queue(),
            delay_resolution_us: 100.0,
            bottleneck: Some(bottleneck()),
            bottlenecks: None,
            routers: vec![],
            links: vec![],
            client_groups: vec![],
            server_groups: vec![],
            routes: vec![],
            record: None,
        }
    }

    #[test]
    fn a_parking_lot_routes_long_flows_over_every_bottleneck_and_cross_flows_over_one() {
        let l = topology(TopologyKind::ParkingLot).layout(1500).unwrap();
        let g = l.graph();
        assert_eq!(l.routers.len(), 4);
        let names: Vec<&str> = l.core.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["b1_up", "b1_down", "b2_up", "b2_down", "b3_up", "b3_down"]);
        let long = (l.clients(Some("long")).unwrap(), l.servers(Some("long")).unwrap());
        let (a, z) = (l.client_routers[long.0.start as usize], l.server_routers[long.1.start as usize]);
        assert_eq!(g.route(a, z), Some(vec![0, 2, 4]));
        assert_eq!(g.route(z, a), Some(vec![5, 3, 1]));
        let c2 = (l.clients(Some("cross2")).unwrap(), l.servers(Some("cross2")).unwrap());
        assert_eq!(g.route(l.client_routers[c2.0.start as usize], l.server_routers[c2.1.start as usize]), Some(vec![2]));
        assert_eq!(l.recorded.len(), 6);
        assert!(l.clients(Some("cross4")).is_none());
    }

    #[test]
    fn graph_errors_name_the_field() {
        let mut t = topology(TopologyKind::Graph);
        let e = t.layout(1500).unwrap_err();
        assert_eq!(e.path, "topology.bottleneck", "{e}");
        t.bottleneck = None;
        t.routers = vec!["a".into(), "b".into()];
        t.links = vec![GraphLink { name: "ab".into(), from: "a".into(), to: "c".into(), rate_bps: 1e7, delay_ms: 1.0, random_loss: 0.0, queue: QueueConfig::default(), up_queue: None }];
        let e = t.layout(1500).unwrap_err();
        assert_eq!(e.path, "topology.links[0].to");
        assert!(e.rule.contains("known: a, b"), "{e}");
        t.links[0].to = "b".into();
        t.client_groups = vec![HostGroup { name: "c".into(), router: "a".into(), count: 2 }];
        t.server_groups = vec![HostGroup { name: "s".into(), router: "b".into(), count: 1 }];
        t.routes = vec![GivenRoute { from: "a".into(), to: "b".into(), links: vec!["ab_down".into()] }];
        let e = t.layout(1500).unwrap_err();
        assert_eq!(e.path, "topology.routes[0].links", "{e}");
        t.routes[0].links = vec!["ab_up".into()];
        t.record = Some(vec!["ab_down".into(), "zz".into()]);
        assert_eq!(t.layout(1500).unwrap_err().path, "topology.record[1]");
        t.record = Some(vec!["ab_down".into()]);
        let l = t.layout(1500).unwrap();
        assert_eq!(l.recorded, vec![(1, "ab_down".to_string())]);
        assert_eq!((l.clients(Some("c")), l.clients(None)), (Some(0..2), Some(0..2)));
    }

    #[test]
    fn a_dumbbell_is_written_out_as_before_there_were_kinds() {
        // Stored runs are named by a hash of their normalized scenario: a dumbbell's text must
        // not change with the new fields.
        let v = serde_json::to_value(topology(TopologyKind::Dumbbell).filled()).unwrap();
        for absent in ["kind", "bottlenecks", "routers", "links", "client_groups", "server_groups", "routes", "record"] {
            assert!(v.get(absent).is_none(), "{absent} written out: {v}");
        }
        assert_eq!((v["clients"].as_u64(), v["servers"].as_u64()), (Some(1), Some(1)));
        let v = serde_json::to_value(topology(TopologyKind::ParkingLot).filled()).unwrap();
        assert_eq!((v["kind"].as_str(), v["bottlenecks"].as_u64()), (Some("parking_lot"), Some(3)));
    }

    #[test]
    fn the_dumbbell_keeps_its_summary_keys_and_refuses_graph_fields() {
        let t = topology(TopologyKind::Dumbbell);
        let l = t.layout(1500).unwrap();
        assert_eq!(l.recorded, vec![(0, "up".to_string()), (1, "down".to_string())]);
        assert_eq!((l.core[0].name.as_str(), l.core[1].name.as_str()), ("bottleneck_up", "bottleneck_down"));
        let mut t = t;
        t.bottlenecks = Some(2);
        assert_eq!(t.layout(1500).unwrap_err().path, "topology.bottlenecks");
    }
}
