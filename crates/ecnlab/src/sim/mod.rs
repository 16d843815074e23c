//! A runnable simulation: the scenario wired into engine, network, TCP and workloads.
//!
//! The event loop pops one event at a time and dispatches it. Each link and delay line has at
//! most one pending arrival event (its FIFO holds the rest); each TCP timer has at most one
//! live event, found by a generation counter (lazy cancellation): a timer whose deadline moved
//! later keeps its early event, which on firing re-arms at the new deadline.
//!
//! The parts: `build` (the run from a scenario), this file (the event loop and its dispatch),
//! `network` (packets through links, delay lines and end hosts; the TCP glue and timers),
//! `conn` (a connection's state), `apps` (the workloads' drivers called and connections' plans run), `recorder`
//! (the measures, the tables and the summary) and `estimate` (the memory estimate).

mod apps;
mod build;
mod conn;
mod estimate;
mod network;
mod recorder;

use std::ops::Range;
use std::time::Instant;

use crate::engine::{EventQueue, SimTime};
use crate::net::{LinkId, Network};
use crate::packet::{PacketId, PacketKind, PacketPool};
use crate::scenario::Scenario;
use crate::tcp::TcpParams;
use crate::workload::{Action, Driver, Wake};

use conn::{Conn, ParamSet, Timer};
use recorder::Recorder;

#[derive(Clone, Copy, Debug)]
enum Ev {
    TxDone(u32),
    Arrive(u32),
    LineOut(u32),
    Timer { conn: u32, timer: Timer, gen: u32 },
    /// Application step of a connection: the server answers, or the client sends its next request.
    App { conn: u32, gen: u32, server: bool },
    /// A wake-up a workload asked for: its [`Wake`] laid out flat, which keeps an event at 16
    /// bytes (a queue entry at 32).
    Workload { workload: u32, kind: u8, a: u32, b: u32 },
    Warmup,
    Interval,
    Sample,
    FlowSample,
}

pub use estimate::{bytes_text, estimate, Estimate, Term};

pub struct Simulation {
    scenario: Scenario,
    /// Endpoint parameter sets, indexed by `conn::ParamSet`: the hosts' (`conn::HostParams`),
    /// then a (client, server) pair per bulk workload with a `tcp` table of its own.
    params: Vec<TcpParams>,
    /// The (client, server) parameter sets of each workload's flows, if it has its own.
    workload_params: Vec<Option<(ParamSet, ParamSet)>>,
    /// Parameter set of each client and server host.
    client_params: Vec<ParamSet>,
    server_params: Vec<ParamSet>,
    now: SimTime,
    end: SimTime,
    events: EventQueue<Ev>,
    n_events: u64,
    pool: PacketPool,
    net: Network,
    /// The delay lines after each link (indexed by it), as (delay, line index) sorted by delay:
    /// consulted when a flow opens, never per packet.
    line_of: Vec<Vec<(SimTime, u32)>>,
    delay_grid: SimTime,
    conns: Vec<Conn>,
    free_conns: Vec<u32>,
    workloads: Vec<Driver>,
    /// The actions a workload's driver asked for, waiting to be carried out (kept to reuse).
    actions: Vec<Action>,
    /// The client and server hosts of each workload (empty for packet sources).
    workload_hosts: Vec<(Range<u32>, Range<u32>)>,
    /// The link each packet source's packets enter (`LinkId::MAX` for other workloads).
    source_links: Vec<LinkId>,
    out: Vec<PacketId>,
    dropped: Vec<PacketId>,
    rec: Recorder,
    next_flow: u64,
    /// Scripted loss: drop the n-th packet (0-based) of a kind entering a recorded link.
    scripted_drop: Option<(PacketKind, u64)>,
    scripted_seen: u64,
    orphans: u64,
    wall_start: Instant,
    finished: bool,
}

impl Simulation {
    /// Drops the `nth` (0-based) packet of `kind` that reaches a recorded link's queue (the
    /// dumbbell's bottleneck, either direction), before the queue sees it: a scripted loss for protocol tests.
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
        while done < max_events {
            let Some((time, ev)) = self.events.pop_until(stop) else {
                break;
            };
            self.now = time;
            self.n_events += 1;
            done += 1;
            self.dispatch(ev);
        }
        if done == max_events && self.events.peek_time().is_some_and(|next| next <= stop) {
            // `now` stays at the last event: events at `next` are still due.
            return false;
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
                if self.pool.get(id).kind == PacketKind::Other {
                    // Unresponsive packets leave the network after the link they entered.
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
            Ev::Timer { conn, timer, gen } => self.on_timer(conn, timer, gen),
            Ev::App { conn, gen, server } => self.on_app(conn, gen, server),
            Ev::Workload { workload, kind, a, b } => self.on_wake(workload, Wake { kind, a, b }),
            Ev::Warmup => self.on_warmup(),
            Ev::Interval => self.on_interval(),
            Ev::Sample => self.on_sample(),
            Ev::FlowSample => self.on_flow_sample(),
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


    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_takes_16_bytes() {
        assert_eq!(std::mem::size_of::<Ev>(), 16);
    }

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

