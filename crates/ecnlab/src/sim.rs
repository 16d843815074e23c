//! A runnable simulation: the scenario wired into engine, network, TCP and workloads.
//!
//! The event loop pops one event at a time and dispatches it. Each link and delay line has at
//! most one pending arrival event (its FIFO holds the rest); each TCP timer has at most one
//! live event, found by a generation counter (lazy cancellation): a timer whose deadline moved
//! later keeps its early event, which on firing re-arms at the new deadline.

mod estimate;

use std::collections::HashMap;
use std::time::Instant;

use crate::aqm::{Outcome, Queue, QueueStats, Reason};
use crate::engine::rng::{purpose, StreamId};
use crate::engine::time::{from_millis, from_secs, to_secs, tx_time};
use crate::engine::{EventQueue, Rng, SimTime};
use crate::metrics::{Column, Results, StrColumn, Table, Value};
use crate::net::dumbbell::{LinkId, Route, BOTTLENECK_DOWN, BOTTLENECK_HOP, BOTTLENECK_UP, NO_LINE};
use crate::net::link::LinkStats;
use crate::net::{DelayLine, Dumbbell, Hop, Link, LinkWake, Offer};
use crate::packet::{Direction, Ecn, Packet, PacketId, PacketKind, PacketPool};
use crate::config::ConfigError;
use crate::scenario::{QueueConfig, Scenario, Workload};
use crate::tcp::config::{Side, TcpConfig};
use crate::tcp::{Endpoint, Role, SegmentCtx, TcpEvents, TcpParams};
use crate::workload::{self, Browsers, BulkParams, ConnSpec, ExchangeArrivals, FlowPlan, PackMime, PacketSource, SessionStep, WebSessions};

const OFF: SimTime = SimTime::MAX;
/// Bytes written by an application that sends "forever".
const UNLIMITED: u64 = 1 << 60;

#[derive(Clone, Copy, Debug)]
enum Ev {
    TxDone(u32),
    Arrive(u32),
    LineOut(u32),
    /// Timer `which` (0 client RTO, 1 client delayed ACK, 2 server RTO, 3 server delayed ACK).
    Timer { conn: u32, which: u8, gen: u32 },
    /// Application step of a connection: the server answers, or the client sends its next request.
    App { conn: u32, gen: u32, server: bool },
    BulkStart { workload: u32, flow: u32 },
    ExchangeArrival(u32),
    /// A web session arrives (workload index).
    SessionArrival(u32),
    /// The next object of a web session is requested.
    WebObject { workload: u32, slot: u32, gen: u32 },
    /// A TPC-W browser starts a session.
    BrowserStart { workload: u32, browser: u32 },
    /// The next page of a web session starts.
    WebPage { workload: u32, slot: u32, gen: u32 },
    SourcePacket(u32),
    Warmup,
    Interval,
    Sample,
    FlowSample,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FlowKind {
    Bulk,
    Exchanges,
}

/// A connection and its application.
struct Conn {
    /// Unique id of the connection in the run (slots are reused, ids are not).
    flow_id: u64,
    gen: u32,
    live: bool,
    client: Endpoint,
    server: Endpoint,
    /// Indices of the client's and the server's parameter sets in `Simulation::params`.
    client_params: u8,
    server_params: u8,
    route: Route,
    workload: u32,
    kind: FlowKind,
    plan: FlowPlan,
    start: SimTime,
    rtt_ms: f64,
    rwnd: u32,
    /// Exchange the client is waiting for, and the one the server answers next.
    client_cur: u32,
    server_cur: u32,
    /// Cumulative request bytes through the exchange the server answers next, and cumulative
    /// response bytes through the exchange the client waits for.
    req_end: u64,
    resp_end: u64,
    ex_start: SimTime,
    ex_rtos: u32,
    ex_index: u64,
    drops: u64,
    /// SYN-ACKs of this connection dropped in the network.
    synack_drops: u64,
    marks: u64,
    /// In-order bytes delivered to the client and to the server when the measurement window
    /// opened (indexed by the direction of travel: `Direction::Up` = to the server).
    delivered_at_warmup: [u64; 2],
    /// Payload bytes received (both ends, duplicates included), and retransmitted bytes
    /// received, when the window opened.
    received_at_warmup: (u64, u64),
    exchanges_done: u32,
    /// The web session (slot, generation) this connection is an object of, and whether the
    /// session has been told the object is done.
    session: Option<(u32, u32)>,
    session_told: bool,
    /// The TPC-W browser of this connection, until the browser closes it.
    browser: Option<u32>,
    /// The client has a request out and waits for its response (false while it thinks).
    waiting: bool,
    timer_at: [SimTime; 4],
    timer_gen: [u32; 4],
}

impl Conn {
    fn delivered(&self) -> u64 {
        self.client.delivered_bytes() + self.server.delivered_bytes()
    }
    /// In-order bytes delivered, by direction of travel (`[up, down]`: to the server, to the
    /// client).
    fn delivered_by_direction(&self) -> [u64; 2] {
        [self.server.delivered_bytes(), self.client.delivered_bytes()]
    }
    /// Payload bytes received by both ends, and the retransmitted ones among them.
    fn received(&self) -> (u64, u64) {
        let (c, s) = (&self.client.stats, &self.server.stats);
        (c.bytes_received + s.bytes_received, c.retx_bytes_received + s.retx_bytes_received)
    }
    fn rtos(&self) -> u32 {
        self.client.stats.rtos + self.server.stats.rtos
    }
    /// Time the handshake lost to retransmissions: from the first SYN (SYN-ACK) to the last,
    /// whichever end waited longer.
    fn handshake_wait(&self) -> SimTime {
        let (c, s) = (&self.client.stats, &self.server.stats);
        (c.last_syn_at - c.first_syn_at).max(s.last_syn_at - s.first_syn_at)
    }
}

/// Counters of a bottleneck link at one instant (for window and interval differences).
#[derive(Clone, Default)]
struct Snapshot {
    t: SimTime,
    queue: QueueStats,
    link: LinkStats,
}

#[derive(Default)]
struct ExchangeRows {
    exchange: Vec<u64>,
    flow: Vec<u64>,
    workload: Vec<i64>,
    seq_in_flow: Vec<i64>,
    client: Vec<i64>,
    server: Vec<i64>,
    start_s: Vec<f64>,
    end_s: Vec<f64>,
    request_bytes: Vec<u64>,
    response_bytes: Vec<u64>,
    rtt_ms: Vec<f64>,
    ecn: Vec<bool>,
    syn_retx: Vec<u64>,
    synack_retx: Vec<u64>,
    synack_drops: Vec<u64>,
    synack_ce: Vec<bool>,
    handshake_wait_s: Vec<f64>,
    rtos: Vec<u64>,
    completed: Vec<bool>,
}

#[derive(Default)]
struct FlowRows {
    flow: Vec<u64>,
    workload: Vec<i64>,
    kind: StrColumn,
    client: Vec<i64>,
    server: Vec<i64>,
    start_s: Vec<f64>,
    end_s: Vec<f64>,
    completed: Vec<bool>,
    rtt_ms: Vec<f64>,
    rwnd_bytes: Vec<u64>,
    ecn: Vec<bool>,
    bytes_sent: Vec<u64>,
    retx_bytes: Vec<u64>,
    goodput_bytes: Vec<u64>,
    throughput_bytes: Vec<u64>,
    retx_received_bytes: Vec<u64>,
    delivered_bytes: Vec<u64>,
    drops: Vec<u64>,
    marks: Vec<u64>,
    rtos: Vec<u64>,
    syn_retx: Vec<u64>,
    synack_retx: Vec<u64>,
    synack_drops: Vec<u64>,
    ce_received: Vec<u64>,
    ecn_reductions: Vec<u64>,
    loss_reductions: Vec<u64>,
    exchanges: Vec<u64>,
}

/// Rows of the `flow_samples` table: each live connection's sender, every `flow_sample_ms`.
#[derive(Default)]
struct FlowSampleRows {
    t_s: Vec<f64>,
    flow: Vec<u64>,
    cwnd_bytes: Vec<u64>,
    ssthresh_bytes: Vec<f64>,
    srtt_ms: Vec<f64>,
    delivered_bytes: Vec<u64>,
}

/// What the run measures besides the per-flow state.
struct Recorder {
    warmup: SimTime,
    interval: SimTime,
    sample_every: SimTime,
    /// Period of the flow samples (0: off).
    flow_every: SimTime,
    flow_samples: FlowSampleRows,
    sojourn_bin: SimTime,
    sojourn_bins: usize,
    exchanges: ExchangeRows,
    flows: FlowRows,
    /// Links-table rows: (link, previous snapshot, current snapshot).
    intervals: Vec<(LinkId, Snapshot, Snapshot)>,
    last: [Snapshot; 2],
    at_warmup: [Snapshot; 2],
    samples: (StrColumn, Vec<f64>, Vec<u64>, Vec<u64>),
    /// AQM control variables: link, time, variable, value (sampled with the queues).
    aqm_samples: (StrColumn, Vec<f64>, StrColumn, Vec<f64>),
    sojourn: [Vec<u64>; 2],
    exchanges_started: u64,
    /// Payload bytes the workloads asked to send in the window, by direction (`[up, down]`):
    /// requests and responses of exchanges that started in it, finite bulk transfers that
    /// started in it, and the packets of unresponsive sources. Long-lived bulk flows ask for
    /// no fixed amount and are not counted.
    offered_bytes: [u64; 2],
    /// In-order payload bytes delivered to the applications in the window, by direction.
    goodput_bytes: [u64; 2],
    response_bytes_delivered: u64,
    next_exchange: u64,
}

/// Configuration and state of an active workload.
enum WorkloadState {
    Bulk(Vec<(SimTime, ConnSpec)>),
    Exchanges(ExchangeArrivals),
    Web(WebSessions),
    PackMime(Box<PackMime>),
    Browsers(Browsers),
    Source(PacketSource),
}

pub use estimate::{bytes_text, estimate, Estimate, Term};

pub struct Simulation {
    scenario: Scenario,
    /// Endpoint parameter sets: [clients, clients without ECN, servers, servers without ECN]
    /// (the second of a side is used only with `ecn_fraction`), then a (client, server) pair
    /// per bulk workload with a `tcp` table of its own.
    params: Vec<TcpParams>,
    /// The (client, server) parameter sets of each workload's flows, if it has its own.
    workload_params: Vec<Option<(u8, u8)>>,
    /// Parameter set of each client and server host.
    client_params: Vec<u8>,
    server_params: Vec<u8>,
    now: SimTime,
    end: SimTime,
    events: EventQueue<Ev>,
    n_events: u64,
    pool: PacketPool,
    net: Dumbbell,
    /// Delay line index per (direction, extra delay): consulted when a flow opens, never per packet.
    line_of: HashMap<(u8, SimTime), u32>,
    path_rtt: SimTime,
    delay_grid: SimTime,
    conns: Vec<Conn>,
    free_conns: Vec<u32>,
    workloads: Vec<WorkloadState>,
    out: Vec<PacketId>,
    dropped: Vec<PacketId>,
    rec: Recorder,
    next_flow: u64,
    /// Scripted loss: drop the n-th packet (0-based) of a kind entering the bottleneck.
    scripted_drop: Option<(PacketKind, u64)>,
    scripted_seen: u64,
    orphans: u64,
    wall_start: Instant,
    finished: bool,
}

/// The queue of a link of `rate_bps`; `rng` is the discipline's own stream.
fn build_queue(cfg: &QueueConfig, rate_bps: u64, rng: Rng) -> Queue {
    Queue::build(&cfg.aqm, cfg.effective_limits(), rate_bps, rng)
}

impl Simulation {
    /// Builds a simulation from a scenario (validated again here) and a run seed.
    pub fn new(scenario: Scenario, seed: u64) -> Result<Simulation, ConfigError> {
        scenario.validate()?;
        let t = &scenario.topology;
        let b = &t.bottleneck;
        let stream = |p: u32, a: u32| Rng::stream(seed, StreamId { purpose: p, a, b: 0 });
        let mut links = Vec::new();
        let bq_up = b.up_queue.as_ref().unwrap_or(&b.queue);
        let rate = b.rate_bps.round() as u64;
        let bdelay = from_millis(b.delay_ms);
        let (q_up, q_down) = (build_queue(bq_up, rate, stream(purpose::AQM, 0)), build_queue(&b.queue, rate, stream(purpose::AQM, 1)));
        links.push(Link::new(rate, bdelay, q_up, b.random_loss, stream(purpose::RANDOM_LOSS, 0)));
        links.push(Link::new(rate, bdelay, q_down, b.random_loss, stream(purpose::RANDOM_LOSS, 1)));
        let arate = t.access_rate_bps.round() as u64;
        let adelay = from_millis(t.access_delay_ms);
        for i in 0..2 * (t.clients + t.servers) {
            let q = build_queue(&t.access_queue, arate, stream(purpose::AQM, 2 + i));
            links.push(Link::new(arate, adelay, q, 0.0, Rng::from_seed(0)));
        }
        let net = Dumbbell::new(t.clients, t.servers, links);
        let m = &scenario.metrics;
        let sojourn_bin = from_millis(m.sojourn_bin_ms).max(1);
        let sojourn_bins = (from_millis(m.sojourn_max_ms) / sojourn_bin) as usize + 1;
        let warmup = from_secs(scenario.warmup_s);
        let end = from_secs(scenario.duration_s);
        let rec = Recorder {
            warmup,
            interval: from_secs(m.interval_s).max(1),
            sample_every: from_millis(m.queue_sample_ms),
            flow_every: from_millis(m.flow_sample_ms),
            flow_samples: FlowSampleRows::default(),
            sojourn_bin,
            sojourn_bins,
            exchanges: ExchangeRows::default(),
            flows: FlowRows::default(),
            intervals: Vec::new(),
            last: Default::default(),
            at_warmup: Default::default(),
            samples: Default::default(),
            aqm_samples: Default::default(),
            sojourn: [vec![0; sojourn_bins], vec![0; sojourn_bins]],
            exchanges_started: 0,
            offered_bytes: [0; 2],
            goodput_bytes: [0; 2],
            response_bytes_delivered: 0,
            next_exchange: 0,
        };
        let mut sim = Simulation {
            params: vec![
                host_params(&scenario.tcp, Side::Clients, true),
                host_params(&scenario.tcp, Side::Clients, false),
                host_params(&scenario.tcp, Side::Servers, true),
                host_params(&scenario.tcp, Side::Servers, false),
            ],
            workload_params: Vec::new(),
            client_params: host_classes(&scenario.tcp, Side::Clients, t.clients, seed),
            server_params: host_classes(&scenario.tcp, Side::Servers, t.servers, seed),
            path_rtt: from_millis(scenario.path_rtt_ms()),
            delay_grid: ((t.delay_resolution_us * 1000.0).round() as SimTime).max(1),
            now: 0,
            end,
            // Buckets of about an eighth of a full-size packet's time at the bottleneck: near the
            // typical gap between events, whatever the number of flows.
            events: EventQueue::with_bucket_width(tx_time(1500, rate) / 8),
            n_events: 0,
            pool: PacketPool::new(),
            net,
            line_of: HashMap::new(),
            conns: Vec::new(),
            free_conns: Vec::new(),
            workloads: Vec::new(),
            out: Vec::with_capacity(64),
            dropped: Vec::with_capacity(16),
            rec,
            next_flow: 0,
            scripted_drop: None,
            scripted_seen: 0,
            orphans: 0,
            wall_start: Instant::now(),
            finished: false,
            scenario: scenario.clone(),
        };
        let (clients, servers) = (sim.net.clients, sim.net.servers);
        for (i, w) in sim.scenario.workloads.clone().iter().enumerate() {
            let own = match w {
                Workload::Bulk(BulkParams { tcp: Some(o), .. }) if sim.params.len() < 255 => {
                    let n = sim.params.len() as u8;
                    sim.params.push(sim.scenario.tcp.side(Side::Clients).overlay(o).resolve());
                    sim.params.push(sim.scenario.tcp.side(Side::Servers).overlay(o).resolve());
                    Some((n, n + 1))
                }
                Workload::Bulk(BulkParams { tcp: Some(_), .. }) => {
                    return Err(ConfigError { path: format!("workloads[{i}].tcp"), value: String::new(), rule: "at most 125 workloads may have a tcp table".into() });
                }
                _ => None,
            };
            sim.workload_params.push(own);
            let i = i as u32;
            let state = match w {
                Workload::Bulk(p) => {
                    let flows = workload::bulk_flows(i, p, seed, clients, servers);
                    for (f, (start, _)) in flows.iter().enumerate() {
                        sim.events.push(*start, Ev::BulkStart { workload: i, flow: f as u32 });
                    }
                    WorkloadState::Bulk(flows)
                }
                Workload::Exchanges(p) => {
                    let a = ExchangeArrivals::new(i, p, seed, sim.scenario.duration_s);
                    if a.next_at < end {
                        sim.events.push(a.next_at, Ev::ExchangeArrival(i));
                    }
                    WorkloadState::Exchanges(a)
                }
                Workload::WebSessions(p) => {
                    let a = WebSessions::new(i, p, seed, sim.scenario.duration_s);
                    if a.next_at < end {
                        sim.events.push(a.next_at, Ev::SessionArrival(i));
                    }
                    WorkloadState::Web(a)
                }
                Workload::TpcwBrowsers(p) => {
                    let b = Browsers::new(i, p, seed, clients, servers);
                    for (k, t) in b.starts.iter().enumerate() {
                        if *t < end {
                            sim.events.push(*t, Ev::BrowserStart { workload: i, browser: k as u32 });
                        }
                    }
                    WorkloadState::Browsers(b)
                }
                Workload::PackmimeHttp(p) => {
                    let a = PackMime::new(i, p, seed, sim.scenario.duration_s);
                    if a.next_at < end {
                        sim.events.push(a.next_at, Ev::ExchangeArrival(i));
                    }
                    WorkloadState::PackMime(Box::new(a))
                }
                Workload::PacketSource(p) => {
                    let s = PacketSource::new(i, p, seed, sim.scenario.duration_s);
                    if s.next_at < end {
                        sim.events.push(s.next_at, Ev::SourcePacket(i));
                    }
                    WorkloadState::Source(s)
                }
            };
            sim.workloads.push(state);
        }
        sim.events.push(warmup, Ev::Warmup);
        Ok(sim)
    }

    /// Drops the `nth` (0-based) packet of `kind` that reaches either bottleneck queue, before
    /// the queue sees it: a scripted loss for protocol tests.
    pub fn drop_nth_of_kind(&mut self, kind: PacketKind, nth: usize) {
        self.scripted_drop = Some((kind, nth as u64));
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    pub fn end(&self) -> SimTime {
        self.end
    }

    pub fn events_processed(&self) -> u64 {
        self.n_events
    }

    /// Runs until `t` (or the end of the scenario). Returns true once the end is reached.
    pub fn run_until(&mut self, t: SimTime) -> bool {
        self.advance(t, u64::MAX)
    }

    /// Runs until `t` (or the end of the scenario), or until `max_events` events have been
    /// processed, whichever comes first, so that a caller gets control back after a bounded
    /// amount of work whatever the scenario (progress, Ctrl-C). Returns true once the end is
    /// reached. Stopping early changes nothing: the next call goes on with the next event.
    pub fn advance(&mut self, t: SimTime, max_events: u64) -> bool {
        let stop = t.min(self.end);
        let mut done = 0u64;
        while let Some(next) = self.events.peek_time() {
            if next > stop {
                break;
            }
            if done == max_events {
                // `now` stays at the last event: events at `next` are still due.
                return false;
            }
            let (time, ev) = self.events.pop().expect("peeked");
            self.now = time;
            self.n_events += 1;
            done += 1;
            self.dispatch(ev);
        }
        self.now = self.now.max(stop);
        self.now >= self.end
    }

    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::TxDone(l) => {
                let wake = self.net.links[l as usize].on_tx_done(&mut self.pool, self.now, &mut self.dropped);
                self.after_link_op(l, wake);
            }
            Ev::Arrive(l) => {
                let (id, next) = self.net.links[l as usize].on_arrival();
                if let Some(t) = next {
                    self.events.push(t, Ev::Arrive(l));
                }
                let p = self.pool.get(id);
                if p.kind == PacketKind::Other && (l == BOTTLENECK_UP || l == BOTTLENECK_DOWN) {
                    // Unresponsive packets leave the network after the bottleneck.
                    self.pool.free(id);
                } else {
                    self.forward(id);
                }
            }
            Ev::LineOut(k) => {
                let (id, next) = self.net.lines[k as usize].pop();
                if let Some(t) = next {
                    self.events.push(t, Ev::LineOut(k));
                }
                self.forward(id);
            }
            Ev::Timer { conn, which, gen } => self.on_timer(conn, which, gen),
            Ev::App { conn, gen, server } => self.on_app(conn, gen, server),
            Ev::BulkStart { workload, flow } => {
                let WorkloadState::Bulk(flows) = &self.workloads[workload as usize] else { unreachable!() };
                let spec = flows[flow as usize].1.clone();
                self.open(spec, FlowKind::Bulk);
            }
            Ev::ExchangeArrival(w) => {
                let (clients, servers) = (self.net.clients, self.net.servers);
                let cfg = &self.scenario.workloads[w as usize];
                let (spec, next) = match (&mut self.workloads[w as usize], cfg) {
                    (WorkloadState::Exchanges(a), Workload::Exchanges(p)) => a.arrive(p, clients, servers),
                    (WorkloadState::PackMime(a), Workload::PackmimeHttp(p)) => a.arrive(p, clients, servers),
                    _ => unreachable!(),
                };
                if let Some(t) = next.filter(|t| *t < self.end) {
                    self.events.push(t, Ev::ExchangeArrival(w));
                }
                self.open(spec, FlowKind::Exchanges);
            }
            Ev::SessionArrival(w) => self.on_session_arrival(w),
            Ev::WebObject { workload, slot, gen } => self.on_web_object(workload, slot, gen),
            Ev::WebPage { workload, slot, gen } => self.on_web_page(workload, slot, gen),
            Ev::BrowserStart { workload, browser } => self.on_browser_start(workload, browser),
            Ev::SourcePacket(w) => self.on_source(w),
            Ev::Warmup => self.on_warmup(),
            Ev::Interval => self.on_interval(),
            Ev::Sample => self.on_sample(),
            Ev::FlowSample => self.on_flow_sample(),
        }
    }

    // ----- packets through the network -----

    /// Moves a packet to the next stage of its path.
    fn forward(&mut self, id: PacketId) {
        let p = self.pool.get(id);
        let route = if p.kind == PacketKind::Other {
            Route { client: 0, server: 0, line_up: NO_LINE, line_down: NO_LINE }
        } else {
            self.conns[p.flow as usize].route
        };
        let (stage, next) = self.net.stage(p.dir, p.hop, &route);
        self.pool.get_mut(id).hop = next;
        match stage {
            Hop::Link(l) => self.send_on_link(l, id),
            Hop::Line(k) => self.enter_line(k, id, self.now),
            Hop::Host => self.deliver(id),
        }
    }

    fn send_on_link(&mut self, l: LinkId, id: PacketId) {
        if let Some((kind, nth)) = self.scripted_drop {
            if l <= BOTTLENECK_DOWN && self.pool.get(id).kind == kind {
                self.scripted_seen += 1;
                if self.scripted_seen == nth + 1 {
                    self.drop_packet(id);
                    return;
                }
            }
        }
        let (offer, wake) = self.net.links[l as usize].send(&mut self.pool, id, self.now, &mut self.dropped);
        match offer {
            Offer::Queued { marked } => {
                if marked {
                    self.count_flow(id, false);
                }
            }
            Offer::Dropped(_) | Offer::Lost => self.drop_packet(id),
        }
        self.after_link_op(l, wake);
    }

    /// Schedules what a link asked for and accounts for packets dropped at dequeue.
    fn after_link_op(&mut self, l: LinkId, wake: LinkWake) {
        if let Some(t) = wake.tx_done_at {
            self.events.push(t, Ev::TxDone(l));
        }
        if let Some((id, arrive)) = wake.started {
            if wake.marked_at_dequeue {
                self.count_flow(id, false);
            }
            self.launch(l, id, arrive);
        }
        while let Some(id) = self.dropped.pop() {
            self.drop_packet(id);
        }
    }

    /// A packet left link `l`'s queue and reaches the far end at `arrive`.
    fn launch(&mut self, l: LinkId, id: PacketId, arrive: SimTime) {
        if l <= BOTTLENECK_DOWN {
            let p = self.pool.get(id);
            if self.now >= self.rec.warmup {
                let waited = self.now - p.enqueued_at;
                let bin = ((waited / self.rec.sojourn_bin) as usize).min(self.rec.sojourn_bins - 1);
                self.rec.sojourn[l as usize][bin] += 1;
            }
            // The delay line after a bottleneck is fed by it alone, in order: the packet can
            // enter it now with the time it reaches it.
            if p.kind != PacketKind::Other {
                let route = self.conns[p.flow as usize].route;
                if let (Hop::Line(k), next) = self.net.stage(p.dir, p.hop, &route) {
                    self.pool.get_mut(id).hop = next;
                    self.enter_line(k, id, arrive);
                    return;
                }
            }
        }
        if let Some(t) = self.net.links[l as usize].put_on_wire(id, arrive) {
            self.events.push(t, Ev::Arrive(l));
        }
    }

    fn enter_line(&mut self, k: u32, id: PacketId, at: SimTime) {
        if let Some(t) = self.net.lines[k as usize].push(id, at) {
            self.events.push(t, Ev::LineOut(k));
        }
    }

    fn drop_packet(&mut self, id: PacketId) {
        self.count_flow(id, true);
        self.pool.free(id);
    }

    /// Charges a drop or a mark to the packet's flow.
    fn count_flow(&mut self, id: PacketId, drop: bool) {
        let p = self.pool.get(id);
        if p.kind == PacketKind::Other {
            return;
        }
        let c = &mut self.conns[p.flow as usize];
        if c.gen == p.flow_gen && c.live {
            if drop {
                c.drops += 1;
                c.synack_drops += (p.kind == PacketKind::SynAck) as u64;
            } else {
                c.marks += 1;
            }
        }
    }

    /// A packet reached its end host.
    fn deliver(&mut self, id: PacketId) {
        let pkt: Packet = *self.pool.get(id);
        self.pool.free(id);
        let ci = pkt.flow as usize;
        if !(self.conns[ci].live && self.conns[ci].gen == pkt.flow_gen) {
            self.orphans += 1; // a late packet of a connection that has closed
            return;
        }
        let server = pkt.dir == Direction::Up;
        let ev = {
            let c = &mut self.conns[ci];
            let params = &self.params[c.params_index(server)];
            let mut ctx = SegmentCtx { now: self.now, pool: &mut self.pool, out: &mut self.out, params };
            let e = if server { &mut c.server } else { &mut c.client };
            e.on_segment(&pkt, &mut ctx)
        };
        self.react(pkt.flow, server, ev);
    }

    /// The application reacts to what TCP reported, then the endpoint sends and timers are set.
    fn react(&mut self, conn: u32, server: bool, ev: TcpEvents) {
        if ev.aborted {
            self.abort(conn);
            return;
        }
        if server {
            self.server_app(conn, ev);
        } else {
            self.client_app(conn, ev);
        }
        self.flush(conn, server);
        let c = &self.conns[conn as usize];
        if c.live && c.client.is_done() && c.server.is_done() {
            self.finish_conn(conn, true);
        }
    }

    fn flush(&mut self, conn: u32, server: bool) {
        let c = &mut self.conns[conn as usize];
        if !c.live {
            return;
        }
        let params = &self.params[c.params_index(server)];
        let mut ctx = SegmentCtx { now: self.now, pool: &mut self.pool, out: &mut self.out, params };
        let e = if server { &mut c.server } else { &mut c.client };
        e.flush(&mut ctx);
        let base = if server { 2 } else { 0 };
        let (rto, delack) = (e.rto_at, e.delack_at);
        self.sync_timer(conn, base, rto);
        self.sync_timer(conn, base + 1, delack);
        let mut out = std::mem::take(&mut self.out);
        for &id in &out {
            self.forward(id);
        }
        out.clear();
        self.out = out;
    }

    /// Makes sure a live event exists no later than `deadline` for timer `which`.
    fn sync_timer(&mut self, conn: u32, which: u8, deadline: SimTime) {
        let c = &mut self.conns[conn as usize];
        let w = which as usize;
        if deadline < c.timer_at[w] {
            c.timer_gen[w] = c.timer_gen[w].wrapping_add(1);
            c.timer_at[w] = deadline;
            self.events.push(deadline, Ev::Timer { conn, which, gen: c.timer_gen[w] });
        }
    }

    fn on_timer(&mut self, conn: u32, which: u8, gen: u32) {
        let c = &mut self.conns[conn as usize];
        let w = which as usize;
        if c.timer_gen[w] != gen || !c.live {
            return; // superseded
        }
        c.timer_at[w] = OFF;
        let server = which >= 2;
        let params = &self.params[c.params_index(server)];
        let e = if server { &mut c.server } else { &mut c.client };
        let deadline = if which.is_multiple_of(2) { e.rto_at } else { e.delack_at };
        if deadline > self.now {
            // The deadline moved later since this event was scheduled: re-arm.
            if deadline != OFF {
                self.sync_timer(conn, which, deadline);
            }
            return;
        }
        let mut ctx = SegmentCtx { now: self.now, pool: &mut self.pool, out: &mut self.out, params };
        let ev = if which.is_multiple_of(2) {
            e.on_rto(&mut ctx)
        } else {
            e.on_delack();
            TcpEvents::default()
        };
        self.react(conn, server, ev);
    }

    // ----- connections and applications -----

    fn open(&mut self, spec: ConnSpec, kind: FlowKind) {
        let extra = spec.rtt.map_or(0, |r| r.saturating_sub(self.path_rtt));
        // Round the extra delay to the grid; half goes on the way up, the rest on the way down.
        let extra = (extra + self.delay_grid / 2) / self.delay_grid * self.delay_grid;
        let (line_up, line_down) =
            if extra == 0 { (NO_LINE, NO_LINE) } else { (self.line(Direction::Up, extra / 2), self.line(Direction::Down, extra - extra / 2)) };
        let route = Route { client: spec.client, server: spec.server, line_up, line_down };
        let rtt_ms = (self.path_rtt + extra) as f64 / 1e6;
        let id = match self.free_conns.pop() {
            Some(id) => id,
            None => {
                self.conns.push(Conn {
                    flow_id: 0,
                    gen: 0,
                    live: false,
                    client: Endpoint::new(Role::Client, 0, 0, 1, &self.params[0]),
                    server: Endpoint::new(Role::Server, 0, 0, 1, &self.params[2]),
                    client_params: 0,
                    server_params: 2,
                    route,
                    workload: 0,
                    kind,
                    plan: FlowPlan::Exchanges(Vec::new()),
                    start: 0,
                    rtt_ms: 0.0,
                    rwnd: 0,
                    client_cur: 0,
                    server_cur: 0,
                    req_end: 0,
                    resp_end: 0,
                    ex_start: 0,
                    ex_rtos: 0,
                    ex_index: 0,
                    drops: 0,
                    synack_drops: 0,
                    marks: 0,
                    delivered_at_warmup: [0; 2],
                    received_at_warmup: (0, 0),
                    exchanges_done: 0,
                    session: None,
                    session_told: false,
                    browser: None,
                    waiting: false,
                    timer_at: [OFF; 4],
                    timer_gen: [0; 4],
                });
                (self.conns.len() - 1) as u32
            }
        };
        let c = &mut self.conns[id as usize];
        let gen = c.gen.wrapping_add(1);
        let rwnd = spec.rwnd_bytes;
        c.gen = gen;
        c.flow_id = self.next_flow;
        self.next_flow += 1;
        c.live = true;
        (c.client_params, c.server_params) = self.workload_params[spec.workload as usize]
            .unwrap_or((self.client_params[spec.client as usize], self.server_params[spec.server as usize]));
        c.client = Endpoint::new(Role::Client, id, gen, rwnd, &self.params[c.client_params as usize]);
        c.server = Endpoint::new(Role::Server, id, gen, rwnd, &self.params[c.server_params as usize]);
        c.route = route;
        c.workload = spec.workload;
        c.kind = kind;
        c.start = self.now;
        c.rtt_ms = rtt_ms;
        c.rwnd = rwnd;
        c.client_cur = 0;
        c.server_cur = 0;
        c.req_end = 0;
        c.resp_end = 0;
        c.ex_start = self.now;
        c.ex_rtos = 0;
        c.drops = 0;
        c.synack_drops = 0;
        c.marks = 0;
        c.delivered_at_warmup = [0; 2];
        c.received_at_warmup = (0, 0);
        c.exchanges_done = 0;
        c.session = spec.session;
        c.session_told = false;
        c.browser = spec.browser;
        c.waiting = matches!(spec.plan, FlowPlan::Exchanges(_));
        c.timer_at = [OFF; 4];
        if let FlowPlan::Exchanges(ex) = &spec.plan {
            c.req_end = ex[0].request_bytes;
            c.resp_end = ex[0].response_bytes;
            c.ex_index = self.rec.next_exchange;
            self.rec.next_exchange += 1;
            if self.now >= self.rec.warmup {
                self.rec.exchanges_started += 1;
                self.rec.offered_bytes[Direction::Up as usize] += ex[0].request_bytes;
                self.rec.offered_bytes[Direction::Down as usize] += ex[0].response_bytes;
            }
        }
        if let FlowPlan::Bulk { dir, bytes: Some(b) } = &spec.plan {
            if self.now >= self.rec.warmup {
                self.rec.offered_bytes[*dir as usize] += b;
            }
        }
        c.plan = spec.plan;
        let params = &self.params[c.params_index(false)];
        let mut ctx = SegmentCtx { now: self.now, pool: &mut self.pool, out: &mut self.out, params };
        c.client.connect(&mut ctx);
        self.flush(id, false);
    }

    /// The delay line for `delay` in direction `dir`, created on first use.
    fn line(&mut self, dir: Direction, delay: SimTime) -> u32 {
        let lines = &mut self.net.lines;
        *self.line_of.entry((dir as u8, delay)).or_insert_with(|| {
            lines.push(DelayLine::new(delay));
            (lines.len() - 1) as u32
        })
    }

    fn client_app(&mut self, conn: u32, ev: TcpEvents) {
        let now = self.now;
        let c = &mut self.conns[conn as usize];
        match &c.plan {
            FlowPlan::Bulk { dir, bytes } => {
                if ev.established && *dir == Direction::Up {
                    c.client.write(bytes.unwrap_or(UNLIMITED));
                    if bytes.is_some() {
                        c.client.close();
                    }
                }
                if ev.peer_closed {
                    c.client.close();
                }
            }
            FlowPlan::Exchanges(ex) => {
                if ev.established {
                    c.client.write(ex[0].request_bytes);
                }
                if ev.delivered && c.waiting && (c.client_cur as usize) < ex.len() && c.client.delivered_bytes() >= c.resp_end {
                    c.waiting = false;
                    // The response of the current exchange is complete.
                    let done = ex[c.client_cur as usize];
                    c.exchanges_done += 1;
                    if c.ex_start >= self.rec.warmup {
                        self.rec.response_bytes_delivered += done.response_bytes;
                    }
                    record_exchange(&mut self.rec, c, Some(now));
                    c.client_cur += 1;
                    if (c.client_cur as usize) < ex.len() {
                        let gen = c.gen;
                        if done.think == 0 {
                            self.next_request(conn);
                        } else {
                            self.events.push(now + done.think, Ev::App { conn, gen, server: false });
                        }
                    } else if c.browser.is_some() {
                        // A browser's page is complete: it thinks, then asks for the next one.
                        self.browser_page_done(conn);
                    } else {
                        c.client.close();
                        if let Some((slot, gen)) = c.session.filter(|_| !c.session_told) {
                            c.session_told = true;
                            let w = c.workload;
                            self.web_object_done(w, slot, gen);
                        }
                    }
                }
                let c = &mut self.conns[conn as usize];
                if ev.peer_closed {
                    c.client.close();
                }
            }
        }
    }

    /// The client writes the request of its next exchange.
    fn next_request(&mut self, conn: u32) {
        let c = &mut self.conns[conn as usize];
        let FlowPlan::Exchanges(ex) = &c.plan else { return };
        let next = ex[c.client_cur as usize];
        c.resp_end += next.response_bytes;
        c.ex_start = self.now;
        c.waiting = true;
        c.ex_rtos = c.rtos();
        c.ex_index = self.rec.next_exchange;
        self.rec.next_exchange += 1;
        if self.now >= self.rec.warmup {
            self.rec.exchanges_started += 1;
            self.rec.offered_bytes[Direction::Up as usize] += next.request_bytes;
            self.rec.offered_bytes[Direction::Down as usize] += next.response_bytes;
        }
        c.client.write(next.request_bytes);
    }

    fn server_app(&mut self, conn: u32, ev: TcpEvents) {
        let c = &mut self.conns[conn as usize];
        match &c.plan {
            FlowPlan::Bulk { dir, bytes } => {
                if ev.established && *dir == Direction::Down {
                    c.server.write(bytes.unwrap_or(UNLIMITED));
                    if bytes.is_some() {
                        c.server.close();
                    }
                }
            }
            FlowPlan::Exchanges(ex) => {
                if ev.delivered
                    && (c.server_cur as usize) < ex.len()
                    && c.server.delivered_bytes() >= c.req_end
                {
                    let e = ex[c.server_cur as usize];
                    c.server_cur += 1;
                    if let Some(next) = ex.get(c.server_cur as usize) {
                        c.req_end += next.request_bytes;
                    }
                    if e.server_delay == 0 {
                        c.server.write(e.response_bytes);
                    } else {
                        let gen = c.gen;
                        self.events.push(self.now + e.server_delay, Ev::App { conn, gen, server: true });
                    }
                }
            }
        }
        let c = &mut self.conns[conn as usize];
        if ev.peer_closed {
            c.server.close();
        }
    }

    fn on_app(&mut self, conn: u32, gen: u32, server: bool) {
        let c = &mut self.conns[conn as usize];
        if c.gen != gen || !c.live {
            return;
        }
        if server {
            let FlowPlan::Exchanges(ex) = &c.plan else { return };
            let e = ex[c.server_cur as usize - 1];
            c.server.write(e.response_bytes);
        } else {
            self.next_request(conn);
        }
        self.flush(conn, server);
    }

    /// The handshake gave up: the exchange fails and the connection is torn down.
    fn abort(&mut self, conn: u32) {
        self.finish_conn(conn, false);
    }

    /// Records the flow (and an unfinished exchange) and frees the slot.
    fn finish_conn(&mut self, conn: u32, completed: bool) {
        let now = self.now;
        let c = &mut self.conns[conn as usize];
        if let FlowPlan::Exchanges(ex) = &c.plan {
            // An exchange whose request is not out yet (the client thinks) did not start.
            if c.waiting && (c.client_cur as usize) < ex.len() {
                record_exchange(&mut self.rec, c, None);
            }
        }
        record_flow(&mut self.rec, now, c, completed.then_some(now));
        c.live = false;
        self.free_conns.push(conn);
        if let Some(b) = c.browser.take() {
            // The browser's connection failed: it starts a new session after a think time.
            let w = c.workload;
            let WorkloadState::Browsers(a) = &mut self.workloads[w as usize] else { unreachable!() };
            let Workload::TpcwBrowsers(p) = &self.scenario.workloads[w as usize] else { unreachable!() };
            let t = now + a.retry_after(p, b);
            if t < self.end {
                self.events.push(t, Ev::BrowserStart { workload: w, browser: b });
            }
            return;
        }
        if let Some((slot, gen)) = c.session.filter(|_| !c.session_told) {
            // An object whose connection gave up is done for its page (as a failed download).
            c.session_told = true;
            let w = c.workload;
            self.web_object_done(w, slot, gen);
        }
    }

    // ----- TPC-W browsers -----

    fn on_browser_start(&mut self, w: u32, b: u32) {
        let now = self.now;
        let WorkloadState::Browsers(a) = &mut self.workloads[w as usize] else { unreachable!() };
        let Workload::TpcwBrowsers(p) = &self.scenario.workloads[w as usize] else { unreachable!() };
        let spec = a.start_session(p, b, now);
        self.open(spec, FlowKind::Exchanges);
    }

    /// The browser of `conn` has its whole page: the next page after a think time, on the
    /// same connection, or the end of its session.
    fn browser_page_done(&mut self, conn: u32) {
        let now = self.now;
        let c = &mut self.conns[conn as usize];
        let (w, b, gen) = (c.workload, c.browser.expect("a browser connection"), c.gen);
        let WorkloadState::Browsers(a) = &mut self.workloads[w as usize] else { unreachable!() };
        let Workload::TpcwBrowsers(p) = &self.scenario.workloads[w as usize] else { unreachable!() };
        let (think, next) = a.page_done(p, b, now);
        match next {
            Some(ex) => {
                // The server has answered everything so far: the next request is this one.
                c.req_end += ex[0].request_bytes;
                if let FlowPlan::Exchanges(v) = &mut c.plan {
                    v.extend(ex);
                }
                self.events.push(now + think, Ev::App { conn, gen, server: false });
            }
            None => {
                c.browser = None;
                c.client.close();
                if now + think < self.end {
                    self.events.push(now + think, Ev::BrowserStart { workload: w, browser: b });
                }
            }
        }
    }

    // ----- web sessions -----

    fn web(&mut self, w: u32) -> (&mut WebSessions, &crate::workload::WebSessionsParams) {
        let WorkloadState::Web(a) = &mut self.workloads[w as usize] else { unreachable!() };
        let Workload::WebSessions(p) = &self.scenario.workloads[w as usize] else { unreachable!() };
        (a, p)
    }

    /// Schedules what a session does next.
    fn session_step(&mut self, w: u32, slot: u32, gen: u32, step: SessionStep) {
        let (t, ev) = match step {
            SessionStep::ObjectAt(t) => (t, Ev::WebObject { workload: w, slot, gen }),
            SessionStep::PageAt(t) => (t, Ev::WebPage { workload: w, slot, gen }),
            SessionStep::Wait | SessionStep::Done => return,
        };
        if t < self.end {
            self.events.push(t, ev);
        }
    }

    fn on_session_arrival(&mut self, w: u32) {
        let (now, clients, servers, end) = (self.now, self.net.clients, self.net.servers, self.end);
        let (a, p) = self.web(w);
        let (slot, step, next) = a.arrive(p, now, clients, servers);
        let gen = a.gen(slot);
        if let Some(t) = next.filter(|t| *t < end) {
            self.events.push(t, Ev::SessionArrival(w));
        }
        self.session_step(w, slot, gen, step);
    }

    fn on_web_object(&mut self, w: u32, slot: u32, gen: u32) {
        let (a, p) = self.web(w);
        if a.gen(slot) != gen {
            return;
        }
        let (spec, step) = a.next_object(p, slot);
        self.session_step(w, slot, gen, step);
        self.open(spec, FlowKind::Exchanges);
    }

    fn on_web_page(&mut self, w: u32, slot: u32, gen: u32) {
        let (now, servers) = (self.now, self.net.servers);
        let (a, p) = self.web(w);
        if a.gen(slot) != gen {
            return;
        }
        let step = a.start_page(p, slot, now, servers);
        self.session_step(w, slot, gen, step);
    }

    fn web_object_done(&mut self, w: u32, slot: u32, gen: u32) {
        let now = self.now;
        let (a, p) = self.web(w);
        if a.gen(slot) != gen {
            return;
        }
        let step = a.object_done(p, slot, now);
        self.session_step(w, slot, gen, step);
    }

    // ----- unresponsive sources -----

    fn on_source(&mut self, w: u32) {
        let WorkloadState::Source(s) = &mut self.workloads[w as usize] else { unreachable!() };
        let (size, next) = s.emit();
        let (dir, ect) = (s.dir, s.ect);
        if let Some(t) = next.filter(|t| *t < self.end) {
            self.events.push(t, Ev::SourcePacket(w));
        }
        if self.now >= self.rec.warmup {
            self.rec.offered_bytes[dir as usize] += size as u64;
        }
        let id = self.pool.alloc(Packet {
            flow: w,
            flow_gen: 0,
            seq: 0,
            ack: 0,
            payload: size,
            size,
            wnd: 0,
            flags: 0,
            ecn: if ect { Ecn::Ect0 } else { Ecn::NotEct },
            kind: PacketKind::Other,
            dir,
            hop: BOTTLENECK_HOP,
            enqueued_at: 0,
        });
        self.forward(id);
    }

    // ----- measurement -----

    fn snapshot(&mut self, l: LinkId) -> Snapshot {
        let link = &mut self.net.links[l as usize];
        Snapshot { t: self.now, queue: link.queue.stats(self.now).clone(), link: link.stats_at(self.now) }
    }

    fn on_warmup(&mut self) {
        for l in [BOTTLENECK_UP, BOTTLENECK_DOWN] {
            let s = self.snapshot(l);
            self.rec.at_warmup[l as usize] = s.clone();
            self.rec.last[l as usize] = s;
        }
        for c in self.conns.iter_mut().filter(|c| c.live) {
            c.delivered_at_warmup = c.delivered_by_direction();
            c.received_at_warmup = c.received();
        }
        if self.now + self.rec.interval <= self.end {
            self.events.push(self.now + self.rec.interval, Ev::Interval);
        }
        if self.rec.sample_every > 0 {
            self.events.push(self.now, Ev::Sample);
        }
        if self.rec.flow_every > 0 {
            self.events.push(self.now, Ev::FlowSample);
        }
    }

    fn on_interval(&mut self) {
        self.close_interval();
        if self.now + self.rec.interval <= self.end {
            self.events.push(self.now + self.rec.interval, Ev::Interval);
        }
    }

    fn close_interval(&mut self) {
        for l in [BOTTLENECK_UP, BOTTLENECK_DOWN] {
            let s = self.snapshot(l);
            let prev = std::mem::replace(&mut self.rec.last[l as usize], s.clone());
            if s.t > prev.t {
                self.rec.intervals.push((l, prev, s));
            }
        }
    }

    fn on_sample(&mut self) {
        for l in [BOTTLENECK_UP, BOTTLENECK_DOWN] {
            let q = &self.net.links[l as usize].queue;
            let s = &mut self.rec.samples;
            s.0.push(link_name(l));
            s.1.push(to_secs(self.now));
            s.2.push(q.len_pkts() as u64);
            s.3.push(q.len_bytes());
            let (now, a) = (self.now, &mut self.rec.aqm_samples);
            self.net.links[l as usize].sync_idle(now);
            self.net.links[l as usize].queue.sample_aqm(now, &mut |name, v| {
                a.0.push(link_name(l));
                a.1.push(to_secs(now));
                a.2.push(name);
                a.3.push(v);
            });
        }
        if self.now + self.rec.sample_every <= self.end {
            self.events.push(self.now + self.rec.sample_every, Ev::Sample);
        }
    }

    /// One row per live connection: its sender's window, slow-start threshold and smoothed RTT,
    /// and the bytes its receiver has delivered in order (a timer, never per packet).
    fn on_flow_sample(&mut self) {
        let t = to_secs(self.now);
        let r = &mut self.rec.flow_samples;
        for c in self.conns.iter().filter(|c| c.live) {
            let (sender, receiver) = if c.sender_is_client() { (&c.client, &c.server) } else { (&c.server, &c.client) };
            let w = sender.window();
            r.t_s.push(t);
            r.flow.push(c.flow_id);
            r.cwnd_bytes.push(w.cwnd);
            r.ssthresh_bytes.push(if w.ssthresh == u64::MAX { f64::INFINITY } else { w.ssthresh as f64 });
            r.srtt_ms.push(sender.srtt().map_or(f64::NAN, |s| s as f64 / 1e6));
            r.delivered_bytes.push(receiver.delivered_bytes());
        }
        if self.now + self.rec.flow_every <= self.end {
            self.events.push(self.now + self.rec.flow_every, Ev::FlowSample);
        }
    }

    /// Packets in the network right now: on links, in delay lines (for conservation checks).
    pub fn packets_in_network(&self) -> u64 {
        self.net.packets_inside()
    }

    /// Packets allocated and not yet freed (must equal `packets_in_network` between events).
    pub fn packets_allocated(&self) -> u64 {
        self.pool.live() as u64
    }

    /// Cumulative counters of a bottleneck direction and the packets it holds now, queued or
    /// being serialized (for tests and tools).
    pub fn bottleneck_counters(&mut self, dir: Direction) -> (QueueStats, LinkStats, u64) {
        let l = match dir {
            Direction::Up => BOTTLENECK_UP,
            Direction::Down => BOTTLENECK_DOWN,
        };
        let s = self.snapshot(l);
        (s.queue, s.link, self.net.links[l as usize].held_at(self.now))
    }

    /// Ends the run at the current time and returns its tables and summary. Connections still
    /// open are recorded as not completed.
    pub fn finish(&mut self) -> Results {
        assert!(!self.finished, "finish() called twice");
        self.finished = true;
        if self.now < self.rec.warmup {
            // Stopped before the window opened: an empty window at the stop time.
            self.rec.warmup = self.now;
            self.on_warmup();
        }
        self.close_interval();
        for i in 0..self.conns.len() {
            if self.conns[i].live {
                let c = &mut self.conns[i];
                if let FlowPlan::Exchanges(ex) = &c.plan {
                    if c.waiting && (c.client_cur as usize) < ex.len() {
                        record_exchange(&mut self.rec, c, None);
                    }
                }
                record_flow(&mut self.rec, self.now, c, None);
            }
        }
        let mut results = Results::default();
        results.tables.push(self.exchanges_table());
        results.tables.push(self.flows_table());
        results.tables.push(self.links_table());
        results.tables.push(self.queue_counts_table());
        results.tables.push(self.samples_table());
        results.tables.push(self.aqm_samples_table());
        results.tables.push(self.sojourn_table());
        results.tables.push(self.flow_samples_table());
        results.summary = self.summary(&results);
        results
    }

    fn exchanges_table(&mut self) -> Table {
        let r = std::mem::take(&mut self.rec.exchanges);
        let rt: Vec<f64> = r.start_s.iter().zip(&r.end_s).map(|(s, e)| e - s).collect();
        // An unfinished exchange (still waiting, or its connection gave up) is observed until
        // the end of the run: a right-censored response time.
        let end_s = to_secs(self.now);
        let elapsed: Vec<f64> = r.start_s.iter().zip(&rt).map(|(s, t)| if t.is_nan() { end_s - s } else { *t }).collect();
        Table::new("exchanges")
            .with("exchange", Column::U64(r.exchange))
            .with("flow", Column::U64(r.flow))
            .with("workload", Column::I64(r.workload))
            .with("seq_in_flow", Column::I64(r.seq_in_flow))
            .with("client", Column::I64(r.client))
            .with("server", Column::I64(r.server))
            .with("start_s", Column::F64(r.start_s))
            .with("end_s", Column::F64(r.end_s))
            .with("response_time_s", Column::F64(rt))
            .with("elapsed_s", Column::F64(elapsed))
            .with("request_bytes", Column::U64(r.request_bytes))
            .with("response_bytes", Column::U64(r.response_bytes))
            .with("rtt_ms", Column::F64(r.rtt_ms))
            .with("ecn", Column::Bool(r.ecn))
            .with("syn_retx", Column::U64(r.syn_retx))
            .with("synack_retx", Column::U64(r.synack_retx))
            .with("synack_drops", Column::U64(r.synack_drops))
            .with("synack_ce", Column::Bool(r.synack_ce))
            .with("handshake_wait_s", Column::F64(r.handshake_wait_s))
            .with("rtos", Column::U64(r.rtos))
            .with("completed", Column::Bool(r.completed))
    }

    fn flows_table(&mut self) -> Table {
        let r = std::mem::take(&mut self.rec.flows);
        Table::new("flows")
            .with("flow", Column::U64(r.flow))
            .with("workload", Column::I64(r.workload))
            .with("kind", Column::Str(r.kind))
            .with("client", Column::I64(r.client))
            .with("server", Column::I64(r.server))
            .with("start_s", Column::F64(r.start_s))
            .with("end_s", Column::F64(r.end_s))
            .with("completed", Column::Bool(r.completed))
            .with("rtt_ms", Column::F64(r.rtt_ms))
            .with("rwnd_bytes", Column::U64(r.rwnd_bytes))
            .with("ecn", Column::Bool(r.ecn))
            .with("bytes_sent", Column::U64(r.bytes_sent))
            .with("retx_bytes", Column::U64(r.retx_bytes))
            .with("goodput_bytes", Column::U64(r.goodput_bytes))
            .with("throughput_bytes", Column::U64(r.throughput_bytes))
            .with("retx_received_bytes", Column::U64(r.retx_received_bytes))
            .with("delivered_bytes", Column::U64(r.delivered_bytes))
            .with("drops", Column::U64(r.drops))
            .with("marks", Column::U64(r.marks))
            .with("rtos", Column::U64(r.rtos))
            .with("syn_retx", Column::U64(r.syn_retx))
            .with("synack_retx", Column::U64(r.synack_retx))
            .with("synack_drops", Column::U64(r.synack_drops))
            .with("ce_received", Column::U64(r.ce_received))
            .with("ecn_reductions", Column::U64(r.ecn_reductions))
            .with("loss_reductions", Column::U64(r.loss_reductions))
            .with("exchanges", Column::U64(r.exchanges))
    }

    fn links_table(&self) -> Table {
        let names = link_column_names();
        let mut cols: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
        let mut links = StrColumn::default();
        for (l, a, b) in &self.rec.intervals {
            links.push(link_name(*l));
            let row = link_row(a, b);
            debug_assert_eq!(row.len(), names.len());
            for (c, v) in cols.iter_mut().zip(row) {
                c.push(v);
            }
        }
        let mut t = Table::new("links").with("link", Column::Str(links));
        for (name, v) in names.iter().zip(cols) {
            let is_float = matches!(name.as_str(), "t_start_s" | "t_end_s" | "utilization" | "mean_queue_pkts" | "mean_queue_bytes");
            t = if is_float {
                t.with(name, Column::F64(v))
            } else {
                t.with(name, Column::U64(v.into_iter().map(|x| x as u64).collect()))
            };
        }
        t
    }

    fn window_queue(&mut self, l: LinkId) -> (QueueStats, LinkStats) {
        let now = self.snapshot(l);
        let w = &self.rec.at_warmup[l as usize];
        (diff_queue(&now.queue, &w.queue), diff_link(&now.link, &w.link))
    }

    fn queue_counts_table(&mut self) -> Table {
        let (mut link, mut kind, mut outcome, mut reason) =
            (StrColumn::default(), StrColumn::default(), StrColumn::default(), StrColumn::default());
        let mut packets = vec![];
        for l in [BOTTLENECK_UP, BOTTLENECK_DOWN] {
            let (q, _) = self.window_queue(l);
            for k in PacketKind::ALL {
                for o in Outcome::ALL {
                    for r in Reason::ALL {
                        let n = q.count(k, o, r);
                        if n > 0 {
                            link.push(link_name(l));
                            kind.push(k.name());
                            outcome.push(o.name());
                            reason.push(r.name());
                            packets.push(n);
                        }
                    }
                }
            }
        }
        Table::new("queue_counts")
            .with("link", Column::Str(link))
            .with("kind", Column::Str(kind))
            .with("outcome", Column::Str(outcome))
            .with("reason", Column::Str(reason))
            .with("packets", Column::U64(packets))
    }

    fn samples_table(&mut self) -> Table {
        let s = std::mem::take(&mut self.rec.samples);
        Table::new("queue_samples")
            .with("link", Column::Str(s.0))
            .with("t_s", Column::F64(s.1))
            .with("queue_pkts", Column::U64(s.2))
            .with("queue_bytes", Column::U64(s.3))
    }

    fn aqm_samples_table(&mut self) -> Table {
        let s = std::mem::take(&mut self.rec.aqm_samples);
        Table::new("aqm_samples")
            .with("link", Column::Str(s.0))
            .with("t_s", Column::F64(s.1))
            .with("variable", Column::Str(s.2))
            .with("value", Column::F64(s.3))
    }

    fn flow_samples_table(&mut self) -> Table {
        let r = std::mem::take(&mut self.rec.flow_samples);
        Table::new("flow_samples")
            .with("t_s", Column::F64(r.t_s))
            .with("flow", Column::U64(r.flow))
            .with("cwnd_bytes", Column::U64(r.cwnd_bytes))
            .with("ssthresh_bytes", Column::F64(r.ssthresh_bytes))
            .with("srtt_ms", Column::F64(r.srtt_ms))
            .with("delivered_bytes", Column::U64(r.delivered_bytes))
    }

    fn sojourn_table(&self) -> Table {
        let (mut link, mut lo, mut hi, mut n) = (StrColumn::default(), vec![], vec![], vec![]);
        let bin_ms = self.rec.sojourn_bin as f64 / 1e6;
        for l in [BOTTLENECK_UP, BOTTLENECK_DOWN] {
            for (i, &c) in self.rec.sojourn[l as usize].iter().enumerate() {
                if c > 0 {
                    link.push(link_name(l));
                    lo.push(i as f64 * bin_ms);
                    let last = i + 1 == self.rec.sojourn_bins;
                    hi.push(if last { f64::INFINITY } else { (i + 1) as f64 * bin_ms });
                    n.push(c);
                }
            }
        }
        Table::new("sojourn")
            .with("link", Column::Str(link))
            .with("bin_start_ms", Column::F64(lo))
            .with("bin_end_ms", Column::F64(hi))
            .with("packets", Column::U64(n))
    }

    fn summary(&mut self, results: &Results) -> Vec<(String, Value)> {
        let window = self.now.saturating_sub(self.rec.warmup);
        let window_s = to_secs(window);
        let mut s: Vec<(String, Value)> = Vec::new();
        let mut f = |k: &str, v: f64| s.push((k.to_string(), Value::F64(v)));
        let mut per_dir = Vec::new();
        for l in [BOTTLENECK_UP, BOTTLENECK_DOWN] {
            let (q, link) = self.window_queue(l);
            let arrivals = q.arrivals() + link.random_losses;
            let lost = q.total(Outcome::Dropped, None) + link.random_losses;
            per_dir.push((
                link.busy_ns as f64 / window as f64,
                ratio(lost, arrivals),
                ratio(q.total(Outcome::Marked, None), arrivals),
                q.area_pkts_ns as f64 / window as f64,
            ));
        }
        let ex = results.table("exchanges");
        let completed = ex.bools("completed").iter().filter(|c| **c).count() as u64;
        let rts: Vec<f64> = ex.f64s("response_time_s").iter().copied().filter(|x| x.is_finite()).collect();
        let flows = results.table("flows");
        let goodput: u64 = flows.u64s("goodput_bytes").iter().sum();
        f("sim_s", to_secs(self.now));
        f("warmup_s", to_secs(self.rec.warmup));
        f("window_s", window_s);
        f("utilization_up", per_dir[0].0);
        f("utilization_down", per_dir[1].0);
        f("loss_rate_up", per_dir[0].1);
        f("loss_rate_down", per_dir[1].1);
        f("mark_rate_up", per_dir[0].2);
        f("mark_rate_down", per_dir[1].2);
        f("mean_queue_pkts_up", per_dir[0].3);
        f("mean_queue_pkts_down", per_dir[1].3);
        f("goodput_bps", goodput as f64 * 8.0 / window_s);
        let (up, down) = (Direction::Up as usize, Direction::Down as usize);
        let bps = |bytes: u64| bytes as f64 * 8.0 / window_s;
        f("offered_bps_down", bps(self.rec.offered_bytes[down]));
        f("offered_bps_up", bps(self.rec.offered_bytes[up]));
        f("goodput_bps_down", bps(self.rec.goodput_bytes[down]));
        f("goodput_bps_up", bps(self.rec.goodput_bytes[up]));
        let wire = |l: LinkId| {
            let (a, b) = (&self.rec.at_warmup[l as usize].link, self.net.links[l as usize].stats_at(self.now));
            bps(b.delivered_bytes - a.delivered_bytes)
        };
        f("delivered_bps_down", wire(BOTTLENECK_DOWN));
        f("delivered_bps_up", wire(BOTTLENECK_UP));
        f(
            "normalized_throughput",
            if self.rec.offered_bytes[Direction::Down as usize] > 0 {
                self.rec.response_bytes_delivered as f64 / self.rec.offered_bytes[Direction::Down as usize] as f64
            } else {
                f64::NAN
            },
        );
        f("mean_response_time_s", if rts.is_empty() { f64::NAN } else { rts.iter().sum::<f64>() / rts.len() as f64 });
        f("wall_s_core", self.wall_start.elapsed().as_secs_f64());
        let data_pkts = self.net.links[BOTTLENECK_UP as usize].stats_at(self.now).delivered_data_pkts
            + self.net.links[BOTTLENECK_DOWN as usize].stats_at(self.now).delivered_data_pkts;
        let flows_started = flows.rows() as u64;
        let flows_completed = flows.bools("completed").iter().filter(|c| **c).count() as u64;
        let mut u = |k: &str, v: u64| s.push((k.to_string(), Value::U64(v)));
        u("events", self.n_events);
        u("exchanges_started", self.rec.exchanges_started);
        u("exchanges_completed", completed);
        u("flows_started", flows_started);
        u("flows_completed", flows_completed);
        u("bottleneck_data_pkts", data_pkts);
        u("orphan_packets", self.orphans);
        s.push(("name".into(), Value::Str(self.scenario.name.clone())));
        s
    }

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }
}

/// Columns of the links table after `link`, in the order [`link_row`] fills them.
fn link_column_names() -> Vec<String> {
    let mut n: Vec<String> = ["t_start_s", "t_end_s", "arrivals_pkts", "delivered_pkts", "delivered_bytes", "utilization", "drops", "marks"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    n.extend(["drops_early", "drops_forced", "drops_overflow", "marks_early", "marks_forced"].iter().map(|s| s.to_string()));
    n.extend(PacketKind::ALL.iter().map(|k| format!("drops_{}", k.name())));
    n.extend(PacketKind::ALL.iter().map(|k| format!("marks_{}", k.name())));
    n.extend(["random_losses", "mean_queue_pkts", "mean_queue_bytes"].iter().map(|s| s.to_string()));
    n
}

/// One links-table row for the interval between snapshots `a` and `b`.
fn link_row(a: &Snapshot, b: &Snapshot) -> Vec<f64> {
    let dq = diff_queue(&b.queue, &a.queue);
    let dl = diff_link(&b.link, &a.link);
    let dt = (b.t - a.t) as f64;
    let mut v = vec![
        to_secs(a.t),
        to_secs(b.t),
        dq.arrivals() as f64,
        dl.delivered_pkts as f64,
        dl.delivered_bytes as f64,
        dl.busy_ns as f64 / dt,
        dq.total(Outcome::Dropped, None) as f64,
        dq.total(Outcome::Marked, None) as f64,
    ];
    for r in [Reason::Early, Reason::Forced, Reason::Overflow] {
        v.push(dq.total(Outcome::Dropped, Some(r)) as f64);
    }
    for r in [Reason::Early, Reason::Forced] {
        v.push(dq.total(Outcome::Marked, Some(r)) as f64);
    }
    v.extend(PacketKind::ALL.iter().map(|k| dq.by_kind(*k, Outcome::Dropped) as f64));
    v.extend(PacketKind::ALL.iter().map(|k| dq.by_kind(*k, Outcome::Marked) as f64));
    v.extend([dl.random_losses as f64, dq.area_pkts_ns as f64 / dt, dq.area_bytes_ns as f64 / dt]);
    v
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

fn link_name(l: LinkId) -> &'static str {
    if l == BOTTLENECK_UP {
        "bottleneck_up"
    } else {
        "bottleneck_down"
    }
}

fn diff_queue(b: &QueueStats, a: &QueueStats) -> QueueStats {
    let mut d = b.clone();
    for k in 0..PacketKind::COUNT {
        for o in 0..Outcome::COUNT {
            for r in 0..Reason::COUNT {
                // Wrapping: one count can go down between snapshots (QueueStats).
                d.packets[k][o][r] = d.packets[k][o][r].wrapping_sub(a.packets[k][o][r]);
            }
        }
    }
    d.dequeued_pkts -= a.dequeued_pkts;
    d.area_pkts_ns -= a.area_pkts_ns;
    d.area_bytes_ns -= a.area_bytes_ns;
    d
}

fn diff_link(b: &LinkStats, a: &LinkStats) -> LinkStats {
    LinkStats {
        delivered_pkts: b.delivered_pkts - a.delivered_pkts,
        delivered_bytes: b.delivered_bytes - a.delivered_bytes,
        delivered_data_pkts: b.delivered_data_pkts - a.delivered_data_pkts,
        random_losses: b.random_losses - a.random_losses,
        busy_ns: b.busy_ns - a.busy_ns,
    }
}

/// Appends the current exchange of `c` (completed at `end`, or unfinished).
fn record_exchange(rec: &mut Recorder, c: &Conn, end: Option<SimTime>) {
    if c.ex_start < rec.warmup {
        return;
    }
    let FlowPlan::Exchanges(ex) = &c.plan else { return };
    let e = ex[c.client_cur as usize];
    let first = c.client_cur == 0;
    let r = &mut rec.exchanges;
    r.exchange.push(c.ex_index);
    r.flow.push(c.flow_id);
    r.workload.push(c.workload as i64);
    r.seq_in_flow.push(c.client_cur as i64);
    r.client.push(c.route.client as i64);
    r.server.push(c.route.server as i64);
    r.start_s.push(to_secs(c.ex_start));
    r.end_s.push(end.map_or(f64::NAN, to_secs));
    r.request_bytes.push(e.request_bytes);
    r.response_bytes.push(e.response_bytes);
    r.rtt_ms.push(c.rtt_ms);
    r.ecn.push(c.client.ecn_negotiated());
    r.syn_retx.push(if first { c.client.stats.handshake_retx as u64 } else { 0 });
    r.synack_retx.push(if first { c.server.stats.handshake_retx as u64 } else { 0 });
    r.synack_drops.push(if first { c.synack_drops } else { 0 });
    r.synack_ce.push(first && c.client.stats.synack_ce);
    r.handshake_wait_s.push(if first { to_secs(c.handshake_wait()) } else { 0.0 });
    r.rtos.push((c.rtos() - c.ex_rtos) as u64);
    r.completed.push(end.is_some());
}

fn record_flow(rec: &mut Recorder, now: SimTime, c: &Conn, end: Option<SimTime>) {
    let r = &mut rec.flows;
    r.flow.push(c.flow_id);
    r.workload.push(c.workload as i64);
    r.kind.push(match c.kind {
        FlowKind::Bulk => "bulk",
        FlowKind::Exchanges => "exchanges",
    });
    r.client.push(c.route.client as i64);
    r.server.push(c.route.server as i64);
    r.start_s.push(to_secs(c.start));
    r.end_s.push(end.map_or(f64::NAN, to_secs));
    r.completed.push(end.is_some());
    r.rtt_ms.push(c.rtt_ms);
    r.rwnd_bytes.push(c.rwnd as u64);
    r.ecn.push(c.client.ecn_negotiated());
    r.bytes_sent.push(c.client.stats.bytes_sent + c.server.stats.bytes_sent);
    r.retx_bytes.push(c.client.stats.retx_bytes + c.server.stats.retx_bytes);
    let delivered = c.delivered();
    // Bytes delivered inside the window: none if the flow ended before it opened.
    let received = c.received();
    let by_dir = c.delivered_by_direction();
    let (goodput, received) = if now < rec.warmup {
        ([0, 0], (0, 0))
    } else if c.start < rec.warmup {
        let (at, d0) = (c.received_at_warmup, c.delivered_at_warmup);
        ([by_dir[0] - d0[0], by_dir[1] - d0[1]], (received.0 - at.0, received.1 - at.1))
    } else {
        (by_dir, received)
    };
    rec.goodput_bytes[0] += goodput[0];
    rec.goodput_bytes[1] += goodput[1];
    let r = &mut rec.flows;
    r.goodput_bytes.push(goodput[0] + goodput[1]);
    r.throughput_bytes.push(received.0);
    r.retx_received_bytes.push(received.1);
    r.delivered_bytes.push(delivered);
    r.drops.push(c.drops);
    r.marks.push(c.marks);
    r.rtos.push(c.rtos() as u64);
    r.syn_retx.push(c.client.stats.handshake_retx as u64);
    r.synack_retx.push(c.server.stats.handshake_retx as u64);
    r.synack_drops.push(c.synack_drops);
    let (a, b) = (&c.client.stats, &c.server.stats);
    r.ce_received.push((a.ce_received + b.ce_received) as u64);
    r.ecn_reductions.push((a.ecn_reductions + b.ecn_reductions) as u64);
    r.loss_reductions.push((a.loss_reductions + b.loss_reductions) as u64);
    r.exchanges.push(c.exchanges_done as u64);
}

impl Conn {
    /// The end that sends the bulk of the data: the client of an upload, else the server.
    fn sender_is_client(&self) -> bool {
        matches!(self.plan, FlowPlan::Bulk { dir: Direction::Up, .. })
    }

    #[inline]
    fn params_index(&self, server: bool) -> usize {
        (if server { self.server_params } else { self.client_params }) as usize
    }
}

/// Parameters of one side's hosts, with or without ECN when the side sets `ecn_fraction`.
fn host_params(tcp: &TcpConfig, side: Side, ecn: bool) -> TcpParams {
    let cfg = tcp.side(side);
    let mut p = cfg.resolve();
    if cfg.ecn_fraction.is_some() {
        p.ecn = ecn;
    }
    p
}

/// The parameter set of each of `n` hosts of a side: with `ecn_fraction` f, exactly
/// round(f n) hosts, drawn at random from the run seed alone, have ECN.
fn host_classes(tcp: &TcpConfig, side: Side, n: u32, seed: u64) -> Vec<u8> {
    let (with, without) = match side {
        Side::Clients => (0u8, 1u8),
        Side::Servers => (2u8, 3u8),
    };
    let Some(f) = tcp.side(side).ecn_fraction else {
        return vec![with; n as usize];
    };
    let k = (f * n as f64).round() as usize;
    let mut rng = Rng::stream(seed, StreamId { purpose: purpose::ECN_HOSTS, a: with as u32 / 2, b: 0 });
    // The first k of a uniform random permutation (Fisher-Yates) get ECN.
    let mut order: Vec<u32> = (0..n).collect();
    for i in 0..k.min(n as usize) {
        let j = i + rng.below((n as usize - i) as u64) as usize;
        order.swap(i, j);
    }
    let mut classes = vec![without; n as usize];
    for &h in &order[..k.min(n as usize)] {
        classes[h as usize] = with;
    }
    classes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advance_stops_after_max_events_and_changes_nothing() {
        let s = Scenario::from_json(
            r#"{"duration_s": 2, "topology": {"bottleneck": {"rate_bps": 1e7}},
                "workloads": [{"kind": "bulk", "flows": 3}, {"kind": "packet_source", "rate_pps": 500}]}"#,
        )
        .unwrap();
        let mut whole = Simulation::new(s.clone(), 7).unwrap();
        assert!(whole.run_until(u64::MAX));
        let mut pieces = Simulation::new(s, 7).unwrap();
        let mut calls = 0;
        loop {
            let before = pieces.events_processed();
            let done = pieces.advance(u64::MAX, 1000);
            calls += 1;
            assert!(pieces.events_processed() - before <= 1000);
            if done {
                break;
            }
        }
        assert!(calls > 10, "{calls}");
        assert_eq!(pieces.events_processed(), whole.events_processed());
        let (a, b) = (whole.finish(), pieces.finish());
        assert_eq!(a.tables.len(), b.tables.len());
        for (x, y) in a.tables.iter().zip(&b.tables) {
            assert_eq!(format!("{:?}", x.columns), format!("{:?}", y.columns), "{}", x.name);
        }
    }
}
