//! A connection: its two TCP endpoints, its route, its application's progress and its counters.

use crate::engine::SimTime;
use crate::net::Route;
use crate::packet::Direction;
use crate::tcp::Endpoint;
use crate::workload::{FlowPlan, Owner};


/// A timer that is not armed.
pub(super) const OFF: SimTime = SimTime::MAX;
/// Bytes written by an application that sends "forever".
pub(super) const UNLIMITED: u64 = 1 << 60;

/// A connection and its application.
pub(super) struct Conn {
    /// Unique id of the connection in the run (slots are reused, ids are not).
    pub(super) flow_id: u64,
    pub(super) gen: u32,
    pub(super) live: bool,
    pub(super) client: Endpoint,
    pub(super) server: Endpoint,
    /// The client's and the server's parameter sets.
    pub(super) client_params: ParamSet,
    pub(super) server_params: ParamSet,
    pub(super) route: Route,
    pub(super) workload: u32,
    pub(super) plan: FlowPlan,
    pub(super) start: SimTime,
    pub(super) rtt_ms: f64,
    pub(super) rwnd: u32,
    /// Exchange the client is waiting for, and the one the server answers next.
    pub(super) client_cur: u32,
    pub(super) server_cur: u32,
    /// Cumulative request bytes through the exchange the server answers next, and cumulative
    /// response bytes through the exchange the client waits for.
    pub(super) req_end: u64,
    pub(super) resp_end: u64,
    pub(super) ex_start: SimTime,
    pub(super) ex_rtos: u32,
    pub(super) ex_index: u64,
    pub(super) drops: u64,
    /// SYN-ACKs of this connection dropped in the network.
    pub(super) synack_drops: u64,
    pub(super) marks: u64,
    /// In-order bytes delivered to the client and to the server when the measurement window
    /// opened (indexed by the direction of travel: `Direction::Up` = to the server).
    pub(super) delivered_at_warmup: [u64; 2],
    /// Payload bytes received (both ends, duplicates included), and retransmitted bytes
    /// received, when the window opened.
    pub(super) received_at_warmup: (u64, u64),
    pub(super) exchanges_done: u32,
    /// The workload's handle on this connection, until the workload lets it go.
    pub(super) owner: Option<Owner>,
    /// The client has a request out and waits for its response (false while it thinks).
    pub(super) waiting: bool,
    /// Deadline and generation of the live event of each [`Timer`] (indexed by it).
    pub(super) timer_at: [SimTime; TIMERS],
    pub(super) timer_gen: [u32; TIMERS],
}

/// What a connection is opened with besides its endpoints.
pub(super) struct Opening {
    pub flow_id: u64,
    pub gen: u32,
    pub params: (ParamSet, ParamSet),
    pub route: Route,
    pub workload: u32,
    pub plan: FlowPlan,
    pub rtt_ms: f64,
    pub rwnd: u32,
    pub owner: Option<Owner>,
    /// The exchange index of its first exchange (exchange plans).
    pub ex_index: u64,
}

impl Conn {
    /// A live connection opened at `now`, its endpoints not yet started.
    pub(super) fn new(o: Opening, client: Endpoint, server: Endpoint, now: SimTime) -> Conn {
        let (req_end, resp_end, waiting) = match &o.plan {
            FlowPlan::Exchanges(ex) => (ex[0].request_bytes, ex[0].response_bytes, true),
            FlowPlan::Bulk { .. } => (0, 0, false),
        };
        Conn {
            flow_id: o.flow_id,
            gen: o.gen,
            live: true,
            client,
            server,
            client_params: o.params.0,
            server_params: o.params.1,
            route: o.route,
            workload: o.workload,
            plan: o.plan,
            start: now,
            rtt_ms: o.rtt_ms,
            rwnd: o.rwnd,
            client_cur: 0,
            server_cur: 0,
            req_end,
            resp_end,
            ex_start: now,
            ex_rtos: 0,
            ex_index: o.ex_index,
            drops: 0,
            synack_drops: 0,
            marks: 0,
            delivered_at_warmup: [0; 2],
            received_at_warmup: (0, 0),
            exchanges_done: 0,
            owner: o.owner,
            waiting,
            timer_at: [OFF; TIMERS],
            timer_gen: [0; TIMERS],
        }
    }
}

/// A connection's timers; each has at most one live event, found by its generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Timer {
    ClientRto = 0,
    ClientDelayedAck = 1,
    ServerRto = 2,
    ServerDelayedAck = 3,
    /// The wake-up for a segment that pacing held back (`tcp.pacing`).
    ClientPace = 4,
    ServerPace = 5,
}

/// How many timers a connection has (the length of `timer_at` and `timer_gen`).
pub(super) const TIMERS: usize = 6;

/// What a timer does when it expires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TimerKind {
    Rto,
    DelayedAck,
    Pace,
}

impl Timer {
    pub(super) fn rto(server: bool) -> Timer {
        if server { Timer::ServerRto } else { Timer::ClientRto }
    }
    pub(super) fn delayed_ack(server: bool) -> Timer {
        if server { Timer::ServerDelayedAck } else { Timer::ClientDelayedAck }
    }
    pub(super) fn pace(server: bool) -> Timer {
        if server { Timer::ServerPace } else { Timer::ClientPace }
    }
    pub(super) fn is_server(self) -> bool {
        matches!(self, Timer::ServerRto | Timer::ServerDelayedAck | Timer::ServerPace)
    }
    pub(super) fn kind(self) -> TimerKind {
        match self {
            Timer::ClientRto | Timer::ServerRto => TimerKind::Rto,
            Timer::ClientDelayedAck | Timer::ServerDelayedAck => TimerKind::DelayedAck,
            Timer::ClientPace | Timer::ServerPace => TimerKind::Pace,
        }
    }
}

/// Index of an endpoint parameter set in `Simulation::params`: the four sets of the hosts
/// ([`HostParams`]), then a (client, server) pair per bulk workload with its own `tcp` table.
pub(super) type ParamSet = u8;

/// The parameter sets every run has, at the start of `Simulation::params`. The sets without
/// ECN are used only by a side with `ecn_fraction`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum HostParams {
    Clients = 0,
    ClientsWithoutEcn = 1,
    Servers = 2,
    ServersWithoutEcn = 3,
}

impl Conn {
    pub(super) fn delivered(&self) -> u64 {
        self.client.delivered_bytes() + self.server.delivered_bytes()
    }
    /// In-order bytes delivered, by direction of travel (`[up, down]`: to the server, to the
    /// client).
    pub(super) fn delivered_by_direction(&self) -> [u64; 2] {
        [self.server.delivered_bytes(), self.client.delivered_bytes()]
    }
    /// Payload bytes received by both ends, and the retransmitted ones among them.
    pub(super) fn received(&self) -> (u64, u64) {
        let (c, s) = (&self.client.stats, &self.server.stats);
        (c.bytes_received + s.bytes_received, c.retx_bytes_received + s.retx_bytes_received)
    }
    pub(super) fn rtos(&self) -> u32 {
        self.client.stats.rtos + self.server.stats.rtos
    }
    /// Time the handshake lost to retransmissions: from the first SYN (SYN-ACK) to the last,
    /// whichever end waited longer.
    pub(super) fn handshake_wait(&self) -> SimTime {
        let (c, s) = (&self.client.stats, &self.server.stats);
        (c.last_syn_at - c.first_syn_at).max(s.last_syn_at - s.first_syn_at)
    }
}

impl Conn {
    /// The end that sends the bulk of the data: the client of an upload, else the server.
    pub(super) fn sender_is_client(&self) -> bool {
        matches!(self.plan, FlowPlan::Bulk { dir: Direction::Up, .. })
    }

    #[inline]
    pub(super) fn params_index(&self, server: bool) -> usize {
        (if server { self.server_params } else { self.client_params }) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::config::{Side, TcpConfig};
    use crate::tcp::Role;
    use crate::workload::ExchangeSpec;

    fn opening(plan: FlowPlan) -> Opening {
        Opening {
            flow_id: 9,
            gen: 3,
            params: (HostParams::Clients as ParamSet, HostParams::Servers as ParamSet),
            route: Route::default(),
            workload: 1,
            plan,
            rtt_ms: 40.0,
            rwnd: 65535,
            owner: None,
            ex_index: 17,
        }
    }

    fn endpoints() -> (Endpoint, Endpoint) {
        let p = TcpConfig::default().side(Side::Clients).resolve();
        (Endpoint::new(Role::Client, 0, 3, 65535, &p), Endpoint::new(Role::Server, 0, 3, 65535, &p))
    }

    #[test]
    fn a_new_exchange_connection_waits_for_its_first_response() {
        let ex = vec![
            ExchangeSpec { request_bytes: 300, response_bytes: 5000, think: 0, server_delay: 0 },
            ExchangeSpec { request_bytes: 200, response_bytes: 100, think: 0, server_delay: 0 },
        ];
        let (cl, sv) = endpoints();
        let c = Conn::new(opening(FlowPlan::Exchanges(ex)), cl, sv, 1_000);
        assert!(c.live && c.waiting);
        assert_eq!((c.req_end, c.resp_end), (300, 5000), "only the first exchange is expected");
        assert_eq!((c.start, c.ex_start, c.ex_index), (1_000, 1_000, 17));
        assert_eq!((c.client_cur, c.server_cur, c.drops, c.marks), (0, 0, 0, 0));
        assert_eq!(c.timer_at, [OFF; TIMERS]);
    }

    #[test]
    fn a_bulk_connection_waits_for_nothing() {
        let (cl, sv) = endpoints();
        let c = Conn::new(opening(FlowPlan::Bulk { dir: Direction::Down, bytes: None }), cl, sv, 5);
        assert!(!c.waiting);
        assert_eq!((c.req_end, c.resp_end), (0, 0));
        assert!(!c.sender_is_client());
    }

    #[test]
    fn timers_name_their_end_and_kind() {
        for server in [false, true] {
            let (r, d, p) = (Timer::rto(server), Timer::delayed_ack(server), Timer::pace(server));
            assert_eq!((r.kind(), d.kind(), p.kind()), (TimerKind::Rto, TimerKind::DelayedAck, TimerKind::Pace));
            assert_eq!((r.is_server(), d.is_server(), p.is_server()), (server, server, server));
        }
        // Indices of `timer_at` / `timer_gen`: TIMERS distinct slots.
        let mut seen = [false; TIMERS];
        for t in [
            Timer::ClientRto,
            Timer::ClientDelayedAck,
            Timer::ServerRto,
            Timer::ServerDelayedAck,
            Timer::ClientPace,
            Timer::ServerPace,
        ] {
            assert!(!std::mem::replace(&mut seen[t as usize], true));
        }
        assert!(seen.iter().all(|&s| s));
    }
}
