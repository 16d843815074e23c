//! Building a run: the network, the endpoint parameter sets and the workloads from a scenario.

use std::time::Instant;

use super::conn::{HostParams, ParamSet};
use super::recorder::Recorder;
use super::{Ev, Simulation};
use crate::aqm::Queue;
use crate::config::ConfigError;
use crate::engine::rng::{purpose, StreamId};
use crate::engine::time::{from_millis, from_secs, tx_time};
use crate::engine::{EventQueue, Rng, SimTime};
use crate::net::topology::{Attachment, LinkId};
use crate::net::{Link, Network};
use crate::packet::PacketPool;
use crate::scenario::{Layout, QueueConfig, Scenario, Workload};
use crate::tcp::config::{Side, TcpConfig};
use crate::tcp::TcpParams;
use crate::workload::BulkParams;

/// The queue of a link of `rate_bps`; `rng` is the discipline's own stream.
fn build_queue(cfg: &QueueConfig, rate_bps: u64, rng: Rng) -> Queue {
    Queue::build(&cfg.aqm, cfg.effective_limits(), rate_bps, rng)
}

impl Simulation {
    /// Builds a simulation from a scenario (validated again here) and a run seed.
    pub fn new(scenario: Scenario, seed: u64) -> Result<Simulation, ConfigError> {
        scenario.validate()?;
        let t = &scenario.topology;
        let layout = scenario.layout()?;
        let net = build_network(&scenario, &layout, seed);
        let recorded: Vec<(LinkId, String)> = layout.recorded.clone();
        // Buckets of about a full-size packet's time at the fastest recorded link (the
        // bottleneck), whatever the number of flows: a few events each, and a ring that reaches
        // past most timers. An eighth of it cost 1.6% more instructions on the RED dumbbell
        // and 5.4% more on web traffic (more empty buckets to skip, more events parked in the
        // overflow heap); order does not depend on it.
        let fastest = recorded.iter().map(|(l, _)| net.links[*l as usize].rate_bps).max().unwrap_or(t.access_rate_bps.round() as u64);
        let end = from_secs(scenario.duration_s);
        let rec = Recorder::new(&scenario.metrics, from_secs(scenario.warmup_s), &net, recorded);
        let mut sim = Simulation {
            params: vec![
                // In the order of `HostParams`.
                host_params(&scenario.tcp, Side::Clients, true),
                host_params(&scenario.tcp, Side::Clients, false),
                host_params(&scenario.tcp, Side::Servers, true),
                host_params(&scenario.tcp, Side::Servers, false),
            ],
            workload_params: Vec::new(),
            client_params: host_classes(&scenario.tcp, Side::Clients, net.clients.len() as u32, seed),
            server_params: host_classes(&scenario.tcp, Side::Servers, net.servers.len() as u32, seed),
            delay_grid: ((t.delay_resolution_us * 1000.0).round() as SimTime).max(1),
            now: 0,
            end,
            events: EventQueue::with_bucket_width(tx_time(1500, fastest)),
            n_events: 0,
            pool: PacketPool::new(),
            line_of: vec![Vec::new(); net.links.len()],
            net,
            conns: Vec::new(),
            free_conns: Vec::new(),
            workloads: Vec::new(),
            actions: Vec::new(),
            workload_hosts: Vec::new(),
            source_links: Vec::new(),
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
        for (i, w) in sim.scenario.workloads.clone().iter().enumerate() {
            let hosts = match w {
                Workload::PacketSource(_) => {
                    sim.source_links.push(scenario.source_link(&layout, i)?);
                    (0..0, 0..0)
                }
                _ => {
                    sim.source_links.push(LinkId::MAX);
                    scenario.workload_hosts(&layout, i)?
                }
            };
            let (clients, servers) = (hosts.0.len() as u32, hosts.1.len() as u32);
            sim.workload_hosts.push(hosts);
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
            sim.workloads.push(w.driver(i, seed, sim.scenario.duration_s, clients, servers));
            sim.start_workload(i);
        }
        sim.events.push(sim.rec.warmup, Ev::Warmup);
        Ok(sim)
    }

}

/// The links of `layout` (core links first, then each client's access links up and down,
/// then each server's), with their queues and random streams, and its routes.
fn build_network(scenario: &Scenario, layout: &Layout, seed: u64) -> Network {
    let t = &scenario.topology;
    let stream = |p: u32, a: u32| Rng::stream(seed, StreamId { purpose: p, a, b: 0 });
    let mut links = Vec::new();
    let mut names = Vec::new();
    for (i, c) in layout.core.iter().enumerate() {
        let rate = c.rate_bps.round() as u64;
        let q = build_queue(&c.queue, rate, stream(purpose::AQM, i as u32));
        links.push(Link::new(rate, from_millis(c.delay_ms), q, c.random_loss, stream(purpose::RANDOM_LOSS, i as u32)));
        names.push(c.name.clone());
    }
    let (nc, ns) = (layout.client_routers.len() as u32, layout.server_routers.len() as u32);
    let first = links.len() as u32;
    let (arate, adelay) = (t.access_rate_bps.round() as u64, from_millis(t.access_delay_ms));
    // Access links in the order client up, client down, server up, server down (each by host).
    for (side, n) in [("client", nc), ("server", ns)] {
        for dir in ["up", "down"] {
            for h in 0..n {
                let q = build_queue(&t.access_queue, arate, stream(purpose::AQM, links.len() as u32));
                links.push(Link::new(arate, adelay, q, 0.0, Rng::from_seed(0)));
                names.push(format!("{side}{h}_{dir}"));
            }
        }
    }
    let attach = |router: u32, up: u32, down: u32| Attachment { router, up, down };
    let clients = layout.client_routers.iter().enumerate().map(|(h, &r)| attach(r, first + h as u32, first + nc + h as u32)).collect();
    let servers = layout.server_routers.iter().enumerate().map(|(h, &r)| attach(r, first + 2 * nc + h as u32, first + 2 * nc + ns + h as u32)).collect();
    Network::new(layout.graph(), links, names, clients, servers)
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
fn host_classes(tcp: &TcpConfig, side: Side, n: u32, seed: u64) -> Vec<ParamSet> {
    let (with, without) = match side {
        Side::Clients => (HostParams::Clients, HostParams::ClientsWithoutEcn),
        Side::Servers => (HostParams::Servers, HostParams::ServersWithoutEcn),
    };
    let (with, without) = (with as ParamSet, without as ParamSet);
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

