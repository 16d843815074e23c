//! Traffic generators. They decide *what* is offered (connections, their sizes, hosts, RTTs,
//! windows, start times; unresponsive packets), never how the network treats it. Each kind
//! has its file, with its application logic behind the driver interface ([`driver`]): the
//! simulator wakes it up and tells it about its connections, and carries out what it asks.
//!
//! Every random value comes from a stream of its own workload (DESIGN decision 4), and
//! everything about a connection is drawn when it arrives, in arrival order, from a child
//! stream of that workload. The network cannot change those draws, so two scenarios that
//! differ only in queues or TCP settings offer exactly the same traffic (paired comparisons).

pub mod bulk;
pub mod driver;
pub mod exchanges;
pub mod packmime;
pub mod source;
pub mod tpcw;
pub mod web;

pub use bulk::BulkFlows;
pub use driver::{Action, Context, Driver, Owner, PlanEnd, Wake, WorkloadDriver};
pub use exchanges::ExchangeArrivals;
pub use packmime::{PackMime, PackMimeParams};
pub use source::PacketSource;
pub use tpcw::{Browsers, TpcwParams};
pub use web::{PageGapFrom, SessionStep, WebSessions, WebSessionsParams};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::time::from_millis;
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
    /// The workload's handle on the connection (a web session's object, a browser's
    /// connection), handed back when the plan is done and when the connection ends; None: the
    /// workload is not told.
    pub owner: Option<Owner>,
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
