//! Traffic generators. They decide *what* is offered (connections, their sizes, hosts, RTTs,
//! windows, start times; unresponsive packets), never how the network treats it.
//!
//! Every random value comes from a stream of its own workload (DESIGN decision 4), and
//! everything about a connection is drawn when it arrives, in arrival order, from a child
//! stream of that workload. The network cannot change those draws, so two scenarios that
//! differ only in queues or TCP settings offer exactly the same traffic (paired comparisons).

pub mod packmime;
pub mod tpcw;
pub mod web;

pub use packmime::{PackMime, PackMimeParams};
pub use tpcw::{Browsers, TpcwParams};
pub use web::{PageGapFrom, SessionStep, WebSessions, WebSessionsParams};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::rng::{purpose, StreamId};
use crate::engine::time::{from_millis, from_secs};
use crate::engine::{Rng, SimTime};
use crate::packet::Direction;
use crate::dist::Dist;
use crate::tcp::config::TcpConfig;

/// Which way data flows through the bottleneck.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DirectionName {
    /// Servers to clients.
    #[default]
    Down,
    /// Clients to servers.
    Up,
}

impl DirectionName {
    pub fn name(self) -> &'static str {
        match self {
            DirectionName::Down => "down",
            DirectionName::Up => "up",
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalProcess {
    /// Exponential gaps.
    #[default]
    Poisson,
    /// Constant gaps.
    Cbr,
}

fn default_rwnd() -> Dist {
    Dist::constant(4_194_304.0)
}
fn default_one() -> Dist {
    Dist::constant(1.0)
}
fn default_request() -> Dist {
    Dist::constant(300.0)
}
fn default_zero() -> Dist {
    Dist::constant(0.0)
}
fn default_packet_size() -> Dist {
    Dist::constant(1000.0)
}

/// Parameters of `kind = "bulk"`: long-lived flows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkParams {
    /// Number of connections (signed here so a negative value gets an error naming it).
    pub flows: i64,
    #[serde(default)]
    pub direction: DirectionName,
    /// Bytes each flow sends, then it closes (unlimited when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<i64>,
    /// Start of every flow (s).
    #[serde(default)]
    pub start_s: f64,
    /// Each flow starts at start_s + U[0, start_jitter_s) (s).
    #[serde(default)]
    pub start_jitter_s: f64,
    /// Per-flow propagation RTT (ms); the path RTT when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_ms: Option<Dist>,
    /// Receiver window of each flow (bytes). It also caps the sender's window (the
    /// congestion window stops growing at it), e.g. 30 packets x MSS for seed 001.
    #[serde(default = "default_rwnd")]
    pub rwnd_bytes: Dist,
    /// Flow i runs between client and server (host_offset + i) mod the host counts, so
    /// that several bulk workloads (flow groups) can use hosts of their own.
    #[serde(default)]
    pub host_offset: u32,
    /// TCP settings of both ends of these flows, laid over `tcp` and its side tables
    /// (e.g. CUBIC with ABE for one group, NewReno without ECN for another).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<Box<TcpConfig>>,
    /// The client host group its connections start from (`topology`: the dumbbell's
    /// `clients`, a parking lot's `long` or `cross{i}`, a graph's `client_groups`); default:
    /// every client host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_group: Option<String>,
    /// The server host group its connections go to; default: every server host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_group: Option<String>,
}

/// Parameters of `kind = "exchanges"`: request/response exchanges on connections opened by a
/// Poisson process.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExchangesParams {
    /// Rate of new connections (1/s).
    pub arrival_rate_per_s: f64,
    #[serde(default)]
    pub start_s: f64,
    /// No arrival after this (s); the end of the run when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_s: Option<f64>,
    #[serde(default = "default_one")]
    pub exchanges_per_connection: Dist,
    /// Request size (bytes, at least 1).
    #[serde(default = "default_request")]
    pub request_bytes: Dist,
    /// Response size (bytes).
    pub response_bytes: Dist,
    /// Server time before answering (ms).
    #[serde(default = "default_zero")]
    pub server_delay_ms: Dist,
    /// Pause after a response before the next request on the same connection (s).
    #[serde(default = "default_zero")]
    pub think_time_s: Dist,
    /// Per-connection propagation RTT (ms); the path RTT when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_ms: Option<Dist>,
    /// Receiver window of both ends (bytes).
    #[serde(default = "default_rwnd")]
    pub rwnd_bytes: Dist,
    /// The client host group its connections start from (`topology`: the dumbbell's
    /// `clients`, a parking lot's `long` or `cross{i}`, a graph's `client_groups`); default:
    /// every client host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_group: Option<String>,
    /// The server host group its connections go to; default: every server host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_group: Option<String>,
}

/// Parameters of `kind = "packet_source"`: unresponsive packets injected at the router.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PacketSourceParams {
    #[serde(default)]
    pub process: ArrivalProcess,
    /// Mean packet rate (packets/s).
    pub rate_pps: f64,
    /// Wire size of each packet (bytes).
    #[serde(default = "default_packet_size")]
    pub size_bytes: Dist,
    #[serde(default)]
    pub direction: DirectionName,
    #[serde(default)]
    pub start_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_s: Option<f64>,
    /// Send packets as ECT(0).
    #[serde(default)]
    pub ect: bool,
    /// The router-to-router link its packets enter (and leave the network after); default:
    /// the dumbbell's bottleneck in `direction` (required in other topologies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

/// One request/response exchange of a connection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExchangeSpec {
    pub request_bytes: u64,
    pub response_bytes: u64,
    pub server_delay: SimTime,
    /// Pause after this exchange's response before the next request.
    pub think: SimTime,
}

/// What a connection does once open.
#[derive(Clone, Debug, PartialEq)]
pub enum FlowPlan {
    /// Send `bytes` (None: forever) in `dir`, then close.
    Bulk { dir: Direction, bytes: Option<u64> },
    /// Request/response exchanges in sequence, then close.
    Exchanges(Vec<ExchangeSpec>),
}

/// A connection to open.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnSpec {
    pub workload: u32,
    pub client: u32,
    pub server: u32,
    /// Propagation RTT requested for the flow (None: the path's).
    pub rtt: Option<SimTime>,
    pub rwnd_bytes: u32,
    pub plan: FlowPlan,
    /// The web session (slot, generation) this connection is an object of.
    pub session: Option<(u32, u32)>,
    /// The TPC-W browser this connection belongs to.
    pub browser: Option<u32>,
}

fn direction(d: DirectionName) -> Direction {
    match d {
        DirectionName::Down => Direction::Down,
        DirectionName::Up => Direction::Up,
    }
}

fn draw_rtt(d: &Option<Dist>, rng: &mut Rng) -> Option<SimTime> {
    d.as_ref().map(|d| from_millis(d.sample(rng)))
}

fn draw_rwnd(d: &Dist, rng: &mut Rng) -> u32 {
    d.sample_bytes(rng).clamp(1, u32::MAX as u64) as u32
}

/// Long-lived flows: all drawn at set-up, each with its start time.
pub fn bulk_flows(index: u32, p: &BulkParams, seed: u64, clients: u32, servers: u32) -> Vec<(SimTime, ConnSpec)> {
    let BulkParams { flows, direction: dir, bytes, start_s, start_jitter_s, rtt_ms, rwnd_bytes, host_offset, .. } = p;
    let mut start_rng = Rng::stream(seed, StreamId { purpose: purpose::START, a: index, b: 0 });
    let mut rtt_rng = Rng::stream(seed, StreamId { purpose: purpose::FLOW_RTT, a: index, b: 0 });
    let mut rwnd_rng = Rng::stream(seed, StreamId { purpose: purpose::FLOW_RWND, a: index, b: 0 });
    (0..*flows as u32)
        .map(|i| {
            let start = from_secs(start_s + start_jitter_s * start_rng.uniform());
            let spec = ConnSpec {
                workload: index,
                client: ((*host_offset as u64 + i as u64) % clients as u64) as u32,
                server: ((*host_offset as u64 + i as u64) % servers as u64) as u32,
                rtt: draw_rtt(rtt_ms, &mut rtt_rng),
                rwnd_bytes: draw_rwnd(rwnd_bytes, &mut rwnd_rng),
                plan: FlowPlan::Bulk { dir: direction(*dir), bytes: bytes.map(|b| b as u64) },
                session: None,
                browser: None,
            };
            (start, spec)
        })
        .collect()
}

/// Poisson arrivals of connections carrying request/response exchanges.
pub struct ExchangeArrivals {
    index: u32,
    arrivals: Rng,
    conns: Rng,
    pub next_at: SimTime,
    stop: SimTime,
}

impl ExchangeArrivals {
    pub fn new(index: u32, p: &ExchangesParams, seed: u64, duration_s: f64) -> ExchangeArrivals {
        let ExchangesParams { arrival_rate_per_s, start_s, stop_s, .. } = p;
        let mut arrivals = Rng::stream(seed, StreamId { purpose: purpose::ARRIVALS, a: index, b: 0 });
        let first = start_s + arrivals.exponential(1.0 / arrival_rate_per_s);
        ExchangeArrivals {
            index,
            conns: Rng::stream(seed, StreamId { purpose: purpose::CONNECTION, a: index, b: 0 }),
            arrivals,
            next_at: from_secs(first),
            stop: from_secs(stop_s.unwrap_or(duration_s)),
        }
    }

    /// The connection arriving now, and the time of the next arrival (None after `stop_s`).
    pub fn arrive(&mut self, p: &ExchangesParams, clients: u32, servers: u32) -> (ConnSpec, Option<SimTime>) {
        let ExchangesParams {
            arrival_rate_per_s,
            exchanges_per_connection,
            request_bytes,
            response_bytes,
            server_delay_ms,
            think_time_s,
            rtt_ms,
            rwnd_bytes,
            ..
        } = p;
        // A child stream per connection: its draws never shift those of later connections.
        let mut r = self.conns.fork();
        let client = r.below(clients as u64) as u32;
        let server = r.below(servers as u64) as u32;
        let rtt = draw_rtt(rtt_ms, &mut r);
        let rwnd = draw_rwnd(rwnd_bytes, &mut r);
        let n = exchanges_per_connection.sample(&mut r).round().max(1.0) as usize;
        let exchanges = (0..n)
            .map(|_| ExchangeSpec {
                // Sizes are at least one byte: an exchange must move something to be seen.
                request_bytes: request_bytes.sample_bytes(&mut r).max(1),
                response_bytes: response_bytes.sample_bytes(&mut r).max(1),
                server_delay: from_millis(server_delay_ms.sample(&mut r).max(0.0)),
                think: from_secs(think_time_s.sample(&mut r).max(0.0)),
            })
            .collect();
        let spec = ConnSpec { workload: self.index, client, server, rtt, rwnd_bytes: rwnd, plan: FlowPlan::Exchanges(exchanges), session: None, browser: None };
        let gap = from_secs(self.arrivals.exponential(1.0 / arrival_rate_per_s)).max(1);
        self.next_at += gap;
        (spec, (self.next_at <= self.stop).then_some(self.next_at))
    }
}

/// An unresponsive packet source (Poisson or constant rate).
pub struct PacketSource {
    pub dir: Direction,
    pub ect: bool,
    process: ArrivalProcess,
    mean_gap_s: f64,
    size: Dist,
    rng: Rng,
    pub next_at: SimTime,
    stop: SimTime,
}

impl PacketSource {
    pub fn new(index: u32, p: &PacketSourceParams, seed: u64, duration_s: f64) -> PacketSource {
        let PacketSourceParams { process, rate_pps, size_bytes, direction: dir, start_s, stop_s, ect, .. } = p;
        let mut rng = Rng::stream(seed, StreamId { purpose: purpose::SOURCE, a: index, b: 0 });
        let mean_gap_s = 1.0 / rate_pps;
        let first = match process {
            ArrivalProcess::Poisson => rng.exponential(mean_gap_s),
            ArrivalProcess::Cbr => 0.0,
        };
        PacketSource {
            dir: direction(*dir),
            ect: *ect,
            process: *process,
            mean_gap_s,
            size: size_bytes.clone(),
            rng,
            next_at: from_secs(start_s + first),
            stop: from_secs(stop_s.unwrap_or(duration_s)),
        }
    }

    /// The size of the packet sent now and the time of the next one (None after the stop).
    pub fn emit(&mut self) -> (u32, Option<SimTime>) {
        let size = self.size.sample_bytes(&mut self.rng).clamp(1, u32::MAX as u64) as u32;
        let gap = match self.process {
            ArrivalProcess::Poisson => self.rng.exponential(self.mean_gap_s),
            ArrivalProcess::Cbr => self.mean_gap_s,
        };
        self.next_at += from_secs(gap).max(1);
        (size, (self.next_at <= self.stop).then_some(self.next_at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchanges(rate: f64) -> ExchangesParams {
        ExchangesParams {
            client_group: None,
            server_group: None,
            arrival_rate_per_s: rate,
            start_s: 0.0,
            stop_s: None,
            exchanges_per_connection: Dist::constant(1.0),
            request_bytes: Dist::constant(300.0),
            response_bytes: Dist::Lomax { scale: 1720.0, shape: 1.2, max: 37.2e6 },
            server_delay_ms: Dist::constant(0.0),
            think_time_s: Dist::constant(0.0),
            rtt_ms: Some(Dist::Uniform { low: 10.0, high: 150.0 }),
            rwnd_bytes: Dist::constant(65536.0),
        }
    }

    #[test]
    fn poisson_arrivals_have_the_configured_rate() {
        let w = exchanges(1000.0);
        let mut a = ExchangeArrivals::new(0, &w, 9, 1000.0);
        let mut n = 0;
        let mut t = a.next_at;
        while t < from_secs(50.0) {
            let (_, next) = a.arrive(&w, 4, 4);
            t = next.unwrap();
            n += 1;
        }
        // 50 000 expected; the standard deviation of a Poisson count is about 224.
        assert!((n as f64 - 50_000.0).abs() < 1000.0, "{n}");
    }

    #[test]
    fn same_seed_same_connections() {
        let w = exchanges(10.0);
        let draw = |seed| {
            let mut a = ExchangeArrivals::new(0, &w, seed, 100.0);
            (0..50).map(|_| a.arrive(&w, 3, 5).0).collect::<Vec<_>>()
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
    }

    #[test]
    fn bulk_flows_spread_over_hosts() {
        let w = BulkParams {
            client_group: None,
            server_group: None,
            flows: 5,
            direction: DirectionName::Down,
            bytes: None,
            start_s: 2.0,
            start_jitter_s: 0.0,
            rtt_ms: None,
            rwnd_bytes: Dist::constant(1e5),
            host_offset: 0,
            tcp: None,
        };
        let f = bulk_flows(0, &w, 1, 2, 3);
        assert_eq!(f.iter().map(|(_, s)| (s.client, s.server)).collect::<Vec<_>>(), vec![(0, 0), (1, 1), (0, 2), (1, 0), (0, 1)]);
        assert!(f.iter().all(|(t, _)| *t == 2_000_000_000));
        let w = BulkParams { host_offset: 4, ..w };
        let f = bulk_flows(0, &w, 1, 10, 10);
        assert_eq!(f.iter().map(|(_, s)| (s.client, s.server)).collect::<Vec<_>>(), vec![(4, 4), (5, 5), (6, 6), (7, 7), (8, 8)]);
    }
}
