//! The workload driver interface: what the simulator asks of a workload and what it gets back.
//!
//! A workload is the application side of a run. The simulator wakes it up at the times it
//! asked for and tells it about the connections it owns; the workload answers with
//! [`Action`]s (connections to open, packets to send, further wake-ups), which the simulator
//! carries out in order. The order matters: the event queue breaks ties by insertion order, so
//! a driver lists its actions in the order it wants them to take effect. The simulator runs
//! each connection's [`FlowPlan`](super::FlowPlan) itself (writes, exchanges, think times), the
//! same for every workload.
//!
//! Dispatch is static: [`Driver`] is an enum over the kinds and each call is one `match`.

use super::{BulkFlows, BulkParams, Browsers, ConnSpec, ExchangeArrivals, ExchangeSpec, ExchangesParams, PackMime, PackMimeParams, PacketSource, PacketSourceParams, TpcwParams, WebSessions, WebSessionsParams};
use crate::engine::SimTime;
use crate::packet::Direction;

/// What a wake-up is for, in the workload's own terms (a web session's slot and generation, a
/// browser's index): the simulator stores it with the event and hands it back unread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wake {
    /// The kind of wake-up, numbered by the workload.
    pub kind: u8,
    /// The first argument (a flow, a session's slot, a browser).
    pub a: u32,
    /// The second argument (a session's generation).
    pub b: u32,
}

impl Wake {
    /// A wake-up of `kind` with no arguments.
    pub const fn of(kind: u8) -> Wake {
        Wake { kind, a: 0, b: 0 }
    }
}

/// A workload's handle on a connection it owns (a web session's (slot, generation), a
/// browser's index), given in its [`ConnSpec`] and handed back in the driver's callbacks.
pub type Owner = (u32, u32);

/// What a driver knows of the run when it is called.
#[derive(Clone, Copy, Debug)]
pub struct Context {
    /// The current time.
    pub now: SimTime,
    /// The end of the run: wake-ups after it never fire, and [`Context::wake_at`] drops those
    /// at or after it.
    pub end: SimTime,
    /// Client hosts in the workload's client group: a [`ConnSpec`]'s client is below it.
    pub clients: u32,
    /// Server hosts in the workload's server group: a [`ConnSpec`]'s server is below it.
    pub servers: u32,
}

impl Context {
    /// Asks for a wake-up at `at` unless the run ends first.
    pub fn wake_at(&self, at: SimTime, wake: Wake, out: &mut Vec<Action>) {
        if at < self.end {
            out.push(Action::Wake { at, wake });
        }
    }
}

/// What a workload asks the simulator to do, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Open a connection now.
    Open(ConnSpec),
    /// Send an unresponsive packet now.
    Send {
        /// Wire size (bytes).
        size: u32,
        /// The direction it travels.
        dir: Direction,
        /// Sent as ECT(0) (else Not-ECT).
        ect: bool,
    },
    /// Wake the workload up at `at` with `wake`.
    Wake { at: SimTime, wake: Wake },
}

/// A workload's answer when a connection it owns has done every exchange of its plan.
#[derive(Clone, Debug, PartialEq)]
pub enum PlanEnd {
    /// The client closes the connection; the workload no longer owns it.
    Close,
    /// The connection goes on: after `think`, the client requests the first of `exchanges`.
    More { think: SimTime, exchanges: Vec<ExchangeSpec> },
}

/// The application logic of one workload kind.
pub trait WorkloadDriver {
    /// The workload's parameter table.
    type Params;
    /// The first wake-ups, at the start of the run.
    fn start(&mut self, p: &Self::Params, ctx: &Context, out: &mut Vec<Action>);
    /// A wake-up it asked for fires.
    fn wake(&mut self, p: &Self::Params, ctx: &Context, wake: Wake, out: &mut Vec<Action>);
    /// A connection it owns has done every exchange of its plan.
    fn plan_done(&mut self, _p: &Self::Params, _ctx: &Context, _owner: Owner, _out: &mut Vec<Action>) -> PlanEnd {
        PlanEnd::Close
    }
    /// A connection it still owns ended (its handshake or a retransmission gave up).
    fn conn_ended(&mut self, _p: &Self::Params, _ctx: &Context, _owner: Owner, _out: &mut Vec<Action>) {}
}

/// A running workload: its parameters (boxed: they are large, and read only when it is
/// called) and its driver, one variant per kind.
pub enum Driver {
    /// `kind = "bulk"`.
    Bulk(Box<BulkParams>, BulkFlows),
    /// `kind = "exchanges"`.
    Exchanges(Box<ExchangesParams>, ExchangeArrivals),
    /// `kind = "web_sessions"`.
    WebSessions(Box<WebSessionsParams>, WebSessions),
    /// `kind = "packmime_http"`.
    PackMime(Box<PackMimeParams>, Box<PackMime>),
    /// `kind = "tpcw_browsers"`.
    TpcwBrowsers(Box<TpcwParams>, Browsers),
    /// `kind = "packet_source"`.
    PacketSource(Box<PacketSourceParams>, PacketSource),
}

/// Calls `$call` on the driver of whatever kind `$driver` is, with its parameters as `$p`.
macro_rules! dispatch {
    ($driver:expr, ($p:ident, $d:ident) => $call:expr) => {
        match $driver {
            Driver::Bulk($p, $d) => $call,
            Driver::Exchanges($p, $d) => $call,
            Driver::WebSessions($p, $d) => $call,
            Driver::PackMime($p, $d) => $call,
            Driver::TpcwBrowsers($p, $d) => $call,
            Driver::PacketSource($p, $d) => $call,
        }
    };
}

impl Driver {
    /// See [`WorkloadDriver::start`].
    pub fn start(&mut self, ctx: &Context, out: &mut Vec<Action>) {
        dispatch!(self, (p, d) => d.start(p, ctx, out))
    }

    /// See [`WorkloadDriver::wake`].
    pub fn wake(&mut self, ctx: &Context, wake: Wake, out: &mut Vec<Action>) {
        dispatch!(self, (p, d) => d.wake(p, ctx, wake, out))
    }

    /// See [`WorkloadDriver::plan_done`].
    pub fn plan_done(&mut self, ctx: &Context, owner: Owner, out: &mut Vec<Action>) -> PlanEnd {
        dispatch!(self, (p, d) => d.plan_done(p, ctx, owner, out))
    }

    /// See [`WorkloadDriver::conn_ended`].
    pub fn conn_ended(&mut self, ctx: &Context, owner: Owner, out: &mut Vec<Action>) {
        dispatch!(self, (p, d) => d.conn_ended(p, ctx, owner, out))
    }
}
