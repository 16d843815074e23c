//! Web sessions: the Feldmann et al. (SIGCOMM'99) session/page/object model as ns-2.35 runs
//! it in `PagePool/WebTraf` (webcache/webtraf.cc), with seed 000's variant of several pages
//! per randomly chosen site (workloads spec 1.1-1.4).
//!
//! Sessions arrive as a Poisson process. A session picks one client for its life and walks
//! `pages_per_session` pages; a site (server) is picked uniformly at random and kept for
//! `pages_per_site` pages. A page has `ceil(objects_per_page)` objects; the first is requested
//! when the page starts and each further one `inter_object_s` after the previous *request*
//! (objects overlap, as in WebTraf). Every object is one TCP connection carrying one
//! request/response exchange. A page is done when every object's response has arrived (or its
//! connection gave up); the next page starts `inter_page_s` later (`inter_page_from =
//! "completion"`, WebTraf's default `interPageOption 1`), or `inter_page_s` after the previous
//! page's start (`"start"`, option 0; never before the previous page's last request, so pages
//! do not interleave).
//!
//! Common random numbers: every value is drawn from the session's own stream (forked from the
//! workload's session stream in arrival order, and sessions arrive open-loop), page by page in
//! a fixed order, and each object from a child stream of its page. So the k-th object of the
//! j-th session has the same client, server, sizes, RTT and window whatever the network does.
//! With `"start"` every request time is network independent too; with `"completion"` page
//! start times follow the network, as they do in ns-2 (load falls as pages slow down, which
//! is why offered load is calibrated on an uncongested link).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::driver::{Action, Context, Owner, PlanEnd, Wake, WorkloadDriver};
use super::{ConnSpec, ExchangeSpec, FlowPlan};
use crate::engine::rng::{purpose, StreamId};
use crate::engine::time::{from_millis, from_secs};
use crate::engine::{Rng, SimTime};
use crate::config::{check, ConfigError};
use crate::dist::Dist;

/// When the gap before the next page starts counting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PageGapFrom {
    /// From the completion of the previous page (ns-2 WebTraf default, closed loop).
    #[default]
    Completion,
    /// From the start of the previous page (open loop: the schedule ignores the network).
    Start,
}

/// Parameters of `kind = "web_sessions"`. Times in seconds unless the name says otherwise.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebSessionsParams {
    /// Poisson rate of new sessions (1/s): the load knob.
    pub session_rate_per_s: f64,
    /// First possible session arrival (s).
    #[serde(default)]
    pub start_s: f64,
    /// No new session after this (s); the end of the run when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_s: Option<f64>,
    /// Pages per session, rounded up, at least 1 (default constant 10, ns-2 web-traffic.tcl).
    #[serde(default = "default_pages")]
    pub pages_per_session: Dist,
    /// Consecutive pages from one site before a new site is drawn, rounded up, at least 1
    /// (default constant 5; seed 000 gives no number).
    #[serde(default = "default_pages_per_site")]
    pub pages_per_site: Dist,
    /// Gap between pages (s) (default Pareto mean 10 shape 2, Feldmann's "Pareto 2").
    #[serde(default = "default_inter_page")]
    pub inter_page_s: Dist,
    /// What the page gap is measured from: `completion` (default) or `start`.
    #[serde(default)]
    pub inter_page_from: PageGapFrom,
    /// Objects per page, rounded up, at least 1 (default Pareto mean 3 shape 1.5).
    #[serde(default = "default_objects")]
    pub objects_per_page: Dist,
    /// Gap between requests of one page (s) (default Pareto mean 0.5 shape 1.5).
    #[serde(default = "default_inter_object")]
    pub inter_object_s: Dist,
    /// Request size (bytes, at least 1) (default constant 300).
    #[serde(default = "default_request")]
    pub request_bytes: Dist,
    /// Object (response) size (bytes, at least 1) (default TL(1720, 1.2, 37.2e6), spec 3.1).
    #[serde(default = "default_object_bytes")]
    pub object_bytes: Dist,
    /// Server time before answering (ms) (default 0).
    #[serde(default = "default_zero")]
    pub server_delay_ms: Dist,
    /// Propagation RTT of each connection (ms) (default uniform 10-150, seed 000).
    #[serde(default = "default_rtt")]
    pub rtt_ms: Dist,
    /// Receiver window of each connection (bytes) (default 8 KiB 20 %, 16 KiB 35 %,
    /// 64 KiB 45 %, seed 000).
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

fn default_pages() -> Dist {
    Dist::constant(10.0)
}
fn default_pages_per_site() -> Dist {
    Dist::constant(5.0)
}
fn default_inter_page() -> Dist {
    Dist::Pareto { mean: 10.0, shape: 2.0 }
}
fn default_objects() -> Dist {
    Dist::Pareto { mean: 3.0, shape: 1.5 }
}
fn default_inter_object() -> Dist {
    Dist::Pareto { mean: 0.5, shape: 1.5 }
}
fn default_request() -> Dist {
    Dist::constant(300.0)
}
pub(crate) fn default_object_bytes() -> Dist {
    Dist::Lomax { scale: 1720.0, shape: 1.2, max: 37.2e6 }
}
fn default_zero() -> Dist {
    Dist::constant(0.0)
}
fn default_rtt() -> Dist {
    Dist::Uniform { low: 10.0, high: 150.0 }
}
pub(crate) fn default_rwnd() -> Dist {
    Dist::Discrete { values: vec![8192.0, 16384.0, 65536.0], weights: vec![0.20, 0.35, 0.45] }
}

impl WebSessionsParams {
    /// A session workload with every default and the given session rate.
    pub fn with_rate(session_rate_per_s: f64) -> WebSessionsParams {
        WebSessionsParams {
            client_group: None,
            server_group: None,
            session_rate_per_s,
            start_s: 0.0,
            stop_s: None,
            pages_per_session: default_pages(),
            pages_per_site: default_pages_per_site(),
            inter_page_s: default_inter_page(),
            inter_page_from: PageGapFrom::Completion,
            objects_per_page: default_objects(),
            inter_object_s: default_inter_object(),
            request_bytes: default_request(),
            object_bytes: default_object_bytes(),
            server_delay_ms: default_zero(),
            rtt_ms: default_rtt(),
            rwnd_bytes: default_rwnd(),
        }
    }

    pub(crate) fn validate(&self, path: &str, duration_s: f64, path_rtt_ms: f64) -> Result<(), ConfigError> {
        let r = self.session_rate_per_s;
        check(r > 0.0 && r.is_finite(), format_args!("{path}.session_rate_per_s"), r, "must be positive")?;
        check(self.start_s >= 0.0 && self.start_s.is_finite(), format_args!("{path}.start_s"), self.start_s, "must be zero or positive")?;
        let stop = self.stop_s.unwrap_or(duration_s);
        check(stop > self.start_s, format_args!("{path}.stop_s"), stop, format_args!("must be after start_s ({})", self.start_s))?;
        let min = |d: &Dist, name: &str, m: f64| -> Result<(), ConfigError> {
            let p = format!("{path}.{name}");
            d.validate(&p)?;
            check(d.min_value() >= m, &p, d.min_value(), format_args!("must not produce values below {m}"))
        };
        min(&self.pages_per_session, "pages_per_session", 0.0)?;
        min(&self.pages_per_site, "pages_per_site", 0.0)?;
        min(&self.inter_page_s, "inter_page_s", 0.0)?;
        min(&self.objects_per_page, "objects_per_page", 0.0)?;
        min(&self.inter_object_s, "inter_object_s", 0.0)?;
        min(&self.request_bytes, "request_bytes", 0.0)?;
        min(&self.object_bytes, "object_bytes", 0.0)?;
        min(&self.server_delay_ms, "server_delay_ms", 0.0)?;
        min(&self.rwnd_bytes, "rwnd_bytes", 1.0)?;
        let p = format!("{path}.rtt_ms");
        self.rtt_ms.validate(&p)?;
        check(
            self.rtt_ms.min_value() >= path_rtt_ms - 1e-9,
            &p,
            self.rtt_ms.min_value(),
            format_args!("can be below the path's propagation RTT ({path_rtt_ms} ms): lower the access or bottleneck delays"),
        )?;
        // Counts are drawn as ceil(x) and used as u32: refuse absurd constants early.
        for (d, name) in [(&self.pages_per_session, "pages_per_session"), (&self.objects_per_page, "objects_per_page")] {
            if let Dist::Constant { value } = d {
                check(*value <= 1e6, format_args!("{path}.{name}.value"), value, "must be at most 1000000")?;
            }
        }
        Ok(())
    }
}

/// A count drawn from `d`: ceil, at least 1, at most 10^6 (a heavy tail must not exhaust memory).
fn count(d: &Dist, rng: &mut Rng) -> u32 {
    let x = d.sample(rng).ceil();
    if x.is_nan() {
        1
    } else {
        x.clamp(1.0, 1e6) as u32
    }
}

/// One object of the current page: when it is requested and its connection.
struct PendingObject {
    at: SimTime,
    spec: ConnSpec,
}

struct Session {
    rng: Rng,
    gen: u32,
    client: u32,
    server: u32,
    pages_left: u32,
    site_pages_left: u32,
    /// Objects of the current page not yet requested, in request order (reversed: pop from the end).
    pending: Vec<PendingObject>,
    /// Objects requested and not yet done.
    outstanding: u32,
    page_start: SimTime,
    /// Gap before the next page, drawn with the page.
    gap: SimTime,
}

/// What the simulator must do next for a session.
#[derive(Debug, PartialEq, Eq)]
pub enum SessionStep {
    /// Open the next object at this time.
    ObjectAt(SimTime),
    /// Start the next page at this time.
    PageAt(SimTime),
    /// Nothing until an outstanding object completes.
    Wait,
    /// The session is over (its slot is free).
    Done,
}

/// The state of one web-sessions workload: the session arrival process and live sessions.
pub struct WebSessions {
    index: u32,
    arrivals: Rng,
    sessions_rng: Rng,
    pub next_at: SimTime,
    stop: SimTime,
    sessions: Vec<Session>,
    free: Vec<u32>,
    /// Sessions started so far.
    pub started: u64,
}

impl WebSessions {
    pub fn new(index: u32, p: &WebSessionsParams, seed: u64, duration_s: f64) -> WebSessions {
        let mut arrivals = Rng::stream(seed, StreamId { purpose: purpose::ARRIVALS, a: index, b: 0 });
        let first = p.start_s + arrivals.exponential(1.0 / p.session_rate_per_s);
        WebSessions {
            index,
            sessions_rng: Rng::stream(seed, StreamId { purpose: purpose::SESSION, a: index, b: 0 }),
            arrivals,
            next_at: from_secs(first),
            stop: from_secs(p.stop_s.unwrap_or(duration_s)),
            sessions: Vec::new(),
            free: Vec::new(),
            started: 0,
        }
    }

    /// A session arrives now: returns its slot, the first page's first step, and the time of
    /// the next session arrival (None after `stop_s`).
    pub fn arrive(&mut self, p: &WebSessionsParams, now: SimTime, clients: u32, servers: u32) -> (u32, SessionStep, Option<SimTime>) {
        let mut rng = self.sessions_rng.fork();
        let client = rng.below(clients as u64) as u32;
        let pages = count(&p.pages_per_session, &mut rng);
        let s = Session {
            rng,
            gen: 0,
            client,
            server: 0,
            pages_left: pages,
            site_pages_left: 0,
            pending: Vec::new(),
            outstanding: 0,
            page_start: now,
            gap: 0,
        };
        let slot = match self.free.pop() {
            Some(i) => {
                let gen = self.sessions[i as usize].gen.wrapping_add(1);
                self.sessions[i as usize] = Session { gen, ..s };
                i
            }
            None => {
                self.sessions.push(s);
                (self.sessions.len() - 1) as u32
            }
        };
        self.started += 1;
        let step = self.start_page(p, slot, now, servers);
        let gap = from_secs(self.arrivals.exponential(1.0 / p.session_rate_per_s)).max(1);
        self.next_at += gap;
        (slot, step, (self.next_at <= self.stop).then_some(self.next_at))
    }

    /// The generation of a slot (events for a recycled slot carry the old one and are ignored).
    pub fn gen(&self, slot: u32) -> u32 {
        self.sessions[slot as usize].gen
    }

    /// Draws page `now` of session `slot`: its site, objects, request times and connections.
    pub fn start_page(&mut self, p: &WebSessionsParams, slot: u32, now: SimTime, servers: u32) -> SessionStep {
        let index = self.index;
        let s = &mut self.sessions[slot as usize];
        s.pages_left -= 1;
        if s.site_pages_left == 0 {
            s.server = s.rng.below(servers as u64) as u32;
            s.site_pages_left = count(&p.pages_per_site, &mut s.rng);
        }
        s.site_pages_left -= 1;
        let n = count(&p.objects_per_page, &mut s.rng);
        s.page_start = now;
        s.gap = from_secs(p.inter_page_s.sample(&mut s.rng).max(0.0));
        let mut page = s.rng.fork();
        let mut at = now;
        s.pending.clear();
        for i in 0..n {
            if i > 0 {
                at += from_secs(p.inter_object_s.sample(&mut page).max(0.0));
            }
            let mut r = page.fork();
            let spec = ConnSpec {
                workload: index,
                client: s.client,
                server: s.server,
                rtt: Some(from_millis(p.rtt_ms.sample(&mut r))),
                rwnd_bytes: p.rwnd_bytes.sample_bytes(&mut r).clamp(1, u32::MAX as u64) as u32,
                plan: FlowPlan::Exchanges(vec![ExchangeSpec {
                    request_bytes: p.request_bytes.sample_bytes(&mut r).max(1),
                    response_bytes: p.object_bytes.sample_bytes(&mut r).max(1),
                    server_delay: from_millis(p.server_delay_ms.sample(&mut r).max(0.0)),
                    think: 0,
                }]),
                owner: Some((slot, s.gen)),
            };
            s.pending.push(PendingObject { at, spec });
        }
        s.pending.reverse();
        SessionStep::ObjectAt(now)
    }

    /// The object due now: its connection, and the session's next step.
    pub fn next_object(&mut self, p: &WebSessionsParams, slot: u32) -> (ConnSpec, SessionStep) {
        let s = &mut self.sessions[slot as usize];
        let o = s.pending.pop().expect("an object is pending when its event fires");
        s.outstanding += 1;
        let step = match s.pending.last() {
            Some(next) => SessionStep::ObjectAt(next.at),
            None => self.after_requests(p, slot, o.at),
        };
        (o.spec, step)
    }

    /// An object of session `slot` is done (delivered or given up): the session's next step.
    pub fn object_done(&mut self, p: &WebSessionsParams, slot: u32, now: SimTime) -> SessionStep {
        let s = &mut self.sessions[slot as usize];
        s.outstanding -= 1;
        if s.outstanding > 0 || !s.pending.is_empty() {
            return SessionStep::Wait;
        }
        match p.inter_page_from {
            PageGapFrom::Completion if s.pages_left > 0 => SessionStep::PageAt(now + s.gap),
            // With `start` the next page was scheduled when the last request went out.
            PageGapFrom::Start if s.pages_left > 0 => SessionStep::Wait,
            _ => self.end(slot),
        }
    }

    /// The last request of the page went out at `last`.
    fn after_requests(&mut self, p: &WebSessionsParams, slot: u32, last: SimTime) -> SessionStep {
        let s = &mut self.sessions[slot as usize];
        match p.inter_page_from {
            PageGapFrom::Start if s.pages_left > 0 => SessionStep::PageAt((s.page_start + s.gap).max(last)),
            PageGapFrom::Start => {
                if s.outstanding == 0 {
                    self.end(slot)
                } else {
                    SessionStep::Wait
                }
            }
            PageGapFrom::Completion => SessionStep::Wait,
        }
    }

    fn end(&mut self, slot: u32) -> SessionStep {
        let s = &mut self.sessions[slot as usize];
        s.gen = s.gen.wrapping_add(1);
        s.pending = Vec::new();
        self.free.push(slot);
        SessionStep::Done
    }

    /// Sessions alive now.
    pub fn live(&self) -> usize {
        self.sessions.len() - self.free.len()
    }
}

/// One page of a session as [`WebSessions::start_page`] draws it: its site, the gap before
/// the next page, and its objects with their request times from the page's start.
#[derive(Clone, Debug, PartialEq)]
pub struct PagePlan {
    pub server: u32,
    /// The `inter_page_s` drawn with the page (from its completion or its start).
    pub gap: SimTime,
    /// (request time after the page's start, the object's connection), in request order.
    pub objects: Vec<(SimTime, ConnSpec)>,
}

/// One session of a web-sessions workload: when it arrives, its client and its pages.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionPlan {
    pub arrival: SimTime,
    pub client: u32,
    pub pages: Vec<PagePlan>,
}

impl WebSessions {
    /// Every session a run of `end` offers, with the network left out: the driver's own
    /// `arrive`, `start_page`, `next_object` and `object_done`, called in the order the
    /// simulator calls them (sessions arrive open loop, up to `stop_s` and before `end`), so
    /// the draws are the simulator's. Page start times, which follow the network with
    /// `inter_page_from = "completion"`, are left to whoever replays the plan (the testbed).
    pub fn plan(mut self, p: &WebSessionsParams, end: SimTime, clients: u32, servers: u32) -> Vec<SessionPlan> {
        let mut out = Vec::new();
        let mut next = Some(self.next_at).filter(|&t| t < end);
        while let Some(at) = next {
            let (slot, mut step, after) = self.arrive(p, at, clients, servers);
            next = after.filter(|&t| t < end);
            let mut session = SessionPlan { arrival: at, client: self.sessions[slot as usize].client, pages: Vec::new() };
            let mut start = at;
            loop {
                let s = &self.sessions[slot as usize];
                let mut page = PagePlan { server: s.server, gap: s.gap, objects: Vec::new() };
                while let SessionStep::ObjectAt(t) = step {
                    let (spec, then) = self.next_object(p, slot);
                    page.objects.push((t - start, spec));
                    step = then;
                }
                for _ in 0..page.objects.len() {
                    self.object_done(p, slot, start);
                }
                session.pages.push(page);
                if self.sessions[slot as usize].pages_left == 0 {
                    break;
                }
                start += 1;
                step = self.start_page(p, slot, start, servers);
            }
            out.push(session);
        }
        out
    }
}

/// The kinds of a web-sessions workload's wake-ups: a session arrives; session (slot `a`,
/// generation `b`) opens its next object; it starts its next page.
const ARRIVAL: u8 = 0;
const OBJECT: u8 = 1;
const PAGE: u8 = 2;

/// Asks for the wake-up of a session's next step (none while it waits or once it is over).
fn wake_for(ctx: &Context, slot: u32, gen: u32, step: SessionStep, out: &mut Vec<Action>) {
    let (at, kind) = match step {
        SessionStep::ObjectAt(t) => (t, OBJECT),
        SessionStep::PageAt(t) => (t, PAGE),
        SessionStep::Wait | SessionStep::Done => return,
    };
    ctx.wake_at(at, Wake { kind, a: slot, b: gen }, out);
}

/// Each object is a connection the session owns (its slot and generation); a wake-up or an
/// object of a session that has ended (an older generation of its slot) is ignored.
impl WorkloadDriver for WebSessions {
    type Params = WebSessionsParams;

    fn start(&mut self, _p: &WebSessionsParams, ctx: &Context, out: &mut Vec<Action>) {
        ctx.wake_at(self.next_at, Wake::of(ARRIVAL), out);
    }

    /// A session arrives (the next arrival's wake-up, then its first step's), opens an object
    /// (its next step's wake-up, then the connection) or starts a page.
    fn wake(&mut self, p: &WebSessionsParams, ctx: &Context, wake: Wake, out: &mut Vec<Action>) {
        let (slot, gen) = (wake.a, wake.b);
        match wake.kind {
            ARRIVAL => {
                let (slot, step, next) = self.arrive(p, ctx.now, ctx.clients, ctx.servers);
                if let Some(at) = next {
                    ctx.wake_at(at, Wake::of(ARRIVAL), out);
                }
                wake_for(ctx, slot, self.gen(slot), step, out);
            }
            _ if self.gen(slot) != gen => {}
            OBJECT => {
                let (spec, step) = self.next_object(p, slot);
                wake_for(ctx, slot, gen, step, out);
                out.push(Action::Open(spec));
            }
            _ => {
                let step = self.start_page(p, slot, ctx.now, ctx.servers);
                wake_for(ctx, slot, gen, step, out);
            }
        }
    }

    /// The object's response has arrived: it is done, and its connection closes.
    fn plan_done(&mut self, p: &WebSessionsParams, ctx: &Context, owner: Owner, out: &mut Vec<Action>) -> PlanEnd {
        self.conn_ended(p, ctx, owner, out);
        PlanEnd::Close
    }

    /// The object's connection gave up: the object is done for its page (a failed download).
    fn conn_ended(&mut self, p: &WebSessionsParams, ctx: &Context, (slot, gen): Owner, out: &mut Vec<Action>) {
        if self.gen(slot) == gen {
            let step = self.object_done(p, slot, ctx.now);
            wake_for(ctx, slot, gen, step, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the schedule of one workload on an ideal network where every object completes
    /// `service` after its request; returns (request time, client, server, sizes) per object.
    fn schedule(p: &WebSessionsParams, seed: u64, until: SimTime, service: SimTime) -> Vec<(SimTime, u32, u32, u64, u64)> {
        use std::collections::BinaryHeap;
        use std::cmp::Reverse;
        #[derive(PartialEq, Eq, PartialOrd, Ord)]
        enum E {
            Arrive,
            Obj(u32, u32),
            Page(u32, u32),
            Done(u32, u32),
        }
        let mut w = WebSessions::new(0, p, seed, 1e9);
        let mut q = BinaryHeap::new();
        let mut seq = 0u64;
        let mut push = |q: &mut BinaryHeap<_>, t: SimTime, e: E| {
            seq += 1;
            q.push(Reverse((t, seq, e)));
        };
        push(&mut q, w.next_at, E::Arrive);
        let mut out = Vec::new();
        let step = |q: &mut BinaryHeap<_>, push: &mut dyn FnMut(&mut BinaryHeap<_>, SimTime, E), st: SessionStep, slot: u32, gen: u32| match st {
            SessionStep::ObjectAt(t) => push(q, t, E::Obj(slot, gen)),
            SessionStep::PageAt(t) => push(q, t, E::Page(slot, gen)),
            _ => {}
        };
        while let Some(Reverse((t, _, e))) = q.pop() {
            if t > until {
                break;
            }
            match e {
                E::Arrive => {
                    let (slot, st, next) = w.arrive(p, t, 10, 7);
                    let gen = w.gen(slot);
                    step(&mut q, &mut push, st, slot, gen);
                    if let Some(n) = next {
                        push(&mut q, n, E::Arrive);
                    }
                }
                E::Obj(slot, gen) | E::Page(slot, gen) if w.gen(slot) != gen => {}
                E::Obj(slot, gen) => {
                    let (spec, st) = w.next_object(p, slot);
                    let FlowPlan::Exchanges(ex) = &spec.plan else { unreachable!() };
                    out.push((t, spec.client, spec.server, ex[0].request_bytes, ex[0].response_bytes));
                    step(&mut q, &mut push, st, slot, gen);
                    push(&mut q, t + service, E::Done(slot, gen));
                }
                E::Page(slot, gen) => {
                    let st = w.start_page(p, slot, t, 7);
                    step(&mut q, &mut push, st, slot, gen);
                }
                E::Done(slot, gen) => {
                    let st = w.object_done(p, slot, t);
                    step(&mut q, &mut push, st, slot, gen);
                }
            }
        }
        out
    }

    #[test]
    fn start_mode_schedule_ignores_the_network() {
        let mut p = WebSessionsParams::with_rate(2.0);
        p.inter_page_from = PageGapFrom::Start;
        let fast = schedule(&p, 4, from_secs(300.0), from_millis(20.0));
        let slow = schedule(&p, 4, from_secs(300.0), from_millis(3000.0));
        assert!(fast.len() > 1000, "{}", fast.len());
        assert_eq!(fast, slow);
    }

    #[test]
    fn the_plan_is_the_drivers_schedule() {
        // With `start` every request time is the network's; the plan, replayed by the same
        // rule, opens the same objects at the same times as the driver run on any network.
        let mut p = WebSessionsParams::with_rate(2.0);
        p.inter_page_from = PageGapFrom::Start;
        let until = from_secs(300.0);
        let mut planned: Vec<(SimTime, u32, u32, u64, u64)> = Vec::new();
        for s in WebSessions::new(0, &p, 4, 1e9).plan(&p, until, 10, 7) {
            let mut start = s.arrival;
            for page in &s.pages {
                for (at, spec) in &page.objects {
                    let FlowPlan::Exchanges(ex) = &spec.plan else { unreachable!() };
                    assert_eq!((spec.client, spec.server), (s.client, page.server));
                    planned.push((start + at, s.client, page.server, ex[0].request_bytes, ex[0].response_bytes));
                }
                start = (start + page.gap).max(start + page.objects.last().unwrap().0);
            }
        }
        planned.retain(|o| o.0 <= until);
        planned.sort_by_key(|o| o.0);
        let driven = schedule(&p, 4, until, from_millis(700.0));
        assert!(driven.len() > 1000);
        let key = |v: &[(SimTime, u32, u32, u64, u64)]| {
            let mut k = v.to_vec();
            k.sort_unstable();
            k
        };
        assert_eq!(key(&planned), key(&driven));
    }

    #[test]
    fn completion_mode_keeps_the_objects_and_shifts_only_times() {
        let p = WebSessionsParams::with_rate(2.0);
        let mut fast = schedule(&p, 4, from_secs(2000.0), from_millis(20.0));
        let mut slow = schedule(&p, 4, from_secs(2000.0), from_millis(800.0));
        // Slower pages delay later pages: fewer objects by the same time.
        assert!(slow.len() < fast.len(), "{} {}", slow.len(), fast.len());
        // The objects are the same ones: compare the (client, server, sizes) multisets of the
        // first objects of the sessions that arrived early enough to finish in both runs.
        let key = |v: &mut Vec<(SimTime, u32, u32, u64, u64)>| {
            let mut k: Vec<_> = v.iter().filter(|o| o.0 < from_secs(20.0)).map(|o| (o.1, o.2, o.3, o.4)).collect();
            k.sort_unstable();
            k
        };
        // Page 1 of every session starts at its arrival in both runs.
        let first_pages = |v: &Vec<(SimTime, u32, u32, u64, u64)>| v.iter().take(5).cloned().collect::<Vec<_>>();
        assert_eq!(first_pages(&fast), first_pages(&slow));
        let (kf, ks) = (key(&mut fast), key(&mut slow));
        assert!(ks.iter().all(|o| kf.contains(o)));
    }

    #[test]
    fn sessions_have_their_pages_and_sites() {
        // Constant counts make the totals exact: 3 pages of 2 objects, 2 pages per site.
        let mut p = WebSessionsParams::with_rate(1.0);
        p.pages_per_session = Dist::constant(3.0);
        p.objects_per_page = Dist::constant(2.0);
        p.pages_per_site = Dist::constant(2.0);
        p.inter_page_s = Dist::constant(1.0);
        p.inter_object_s = Dist::constant(0.1);
        p.stop_s = Some(50.0);
        let mut w = WebSessions::new(0, &p, 1, 100.0);
        let (slot, st, _) = w.arrive(&p, 0, 3, 1000);
        assert_eq!(st, SessionStep::ObjectAt(0));
        let (a, st) = w.next_object(&p, slot);
        assert_eq!(st, SessionStep::ObjectAt(100_000_000));
        let (b, st) = w.next_object(&p, slot);
        assert_eq!(st, SessionStep::Wait);
        assert_eq!((a.client, a.server), (b.client, b.server));
        assert_eq!(w.object_done(&p, slot, 5), SessionStep::Wait);
        assert_eq!(w.object_done(&p, slot, 7), SessionStep::PageAt(1_000_000_007));
        w.start_page(&p, slot, 10, 1000);
        let (c, _) = w.next_object(&p, slot);
        assert_eq!(c.server, a.server, "second page of the site");
        w.next_object(&p, slot);
        w.object_done(&p, slot, 11);
        let st = w.object_done(&p, slot, 12);
        assert_eq!(st, SessionStep::PageAt(1_000_000_012));
        w.start_page(&p, slot, 20, 1000);
        let (d, _) = w.next_object(&p, slot);
        w.next_object(&p, slot);
        w.object_done(&p, slot, 21);
        assert_eq!(w.object_done(&p, slot, 22), SessionStep::Done);
        assert_eq!(w.live(), 0);
        // A new site was drawn for page 3 (1000 servers: equal only by a 1/1000 chance).
        assert_ne!(d.server, a.server);
    }

    #[test]
    fn a_session_overlaps_its_objects_and_waits_for_them_before_the_next_page() {
        let mut p = WebSessionsParams::with_rate(1.0);
        p.pages_per_session = Dist::constant(2.0);
        p.objects_per_page = Dist::constant(2.0);
        p.inter_page_s = Dist::constant(1.0);
        p.inter_object_s = Dist::constant(0.1);
        let mut w = WebSessions::new(0, &p, 1, 100.0);
        let ctx = |now| Context { now, end: from_secs(100.0), clients: 3, servers: 4 };
        let mut out = Vec::new();
        w.start(&p, &ctx(0), &mut out);
        let Some(Action::Wake { at, wake }) = out.pop() else { panic!("{out:?}") };
        // The arrival: the next arrival's wake-up, then the first object's, at once.
        w.wake(&p, &ctx(at), wake, &mut out);
        let obj = match &out[..] {
            [Action::Wake { wake: Wake { kind: ARRIVAL, .. }, .. }, Action::Wake { at: t, wake }] if *t == at && wake.kind == OBJECT => *wake,
            o => panic!("{o:?}"),
        };
        out.clear();
        // The first object: the second's wake-up 0.1 s later, then its connection.
        w.wake(&p, &ctx(at), obj, &mut out);
        let session = match &out[..] {
            [Action::Wake { at: t, wake }, Action::Open(spec)] if *t == at + from_millis(100.0) && *wake == obj => spec.owner.unwrap(),
            o => panic!("{o:?}"),
        };
        out.clear();
        // The second object opens before the first is done (objects overlap); nothing follows.
        w.wake(&p, &ctx(at + from_millis(100.0)), obj, &mut out);
        assert!(matches!(&out[..], [Action::Open(_)]), "{out:?}");
        out.clear();
        // The page is done when both objects are (the session's handle on each is the same),
        // one told when its plan is done, one when its connection gives up; the next page 1 s
        // later.
        assert_eq!(w.plan_done(&p, &ctx(at + 5), session, &mut out), PlanEnd::Close);
        assert!(out.is_empty());
        w.conn_ended(&p, &ctx(at + 7), session, &mut out);
        assert_eq!(out, vec![Action::Wake { at: at + 7 + from_secs(1.0), wake: Wake { kind: PAGE, ..obj } }]);
        out.clear();
        // The last page's objects end the session: later wake-ups of its slot are ignored.
        w.wake(&p, &ctx(at + 8), Wake { kind: PAGE, ..obj }, &mut out);
        assert_eq!(out, vec![Action::Wake { at: at + 8, wake: obj }]);
        out.clear();
        w.wake(&p, &ctx(at + 8), obj, &mut out);
        w.wake(&p, &ctx(at + 9), obj, &mut out);
        assert!(matches!(&out[..], [Action::Wake { .. }, Action::Open(_), Action::Open(_)]), "{out:?}");
        out.clear();
        for _ in 0..2 {
            w.conn_ended(&p, &ctx(at + 10), session, &mut out);
        }
        assert!(out.is_empty() && w.live() == 0, "{out:?}");
        w.wake(&p, &ctx(at + 11), obj, &mut out);
        assert!(out.is_empty());
    }
}

#[cfg(test)]
mod size_tests {
    use super::*;

    /// Object sizes as the workload draws them: 2 * 10^6 objects of 2000 one-page sessions.
    fn object_sizes(seed: u64) -> Vec<u64> {
        let mut p = WebSessionsParams::with_rate(1.0);
        p.pages_per_session = Dist::constant(1.0);
        p.objects_per_page = Dist::constant(1000.0);
        let mut w = WebSessions::new(0, &p, seed, 1e9);
        let mut sizes = Vec::with_capacity(2_000_000);
        for _ in 0..2000 {
            let (slot, _, _) = w.arrive(&p, 0, 1, 1);
            for _ in 0..1000 {
                let (spec, _) = w.next_object(&p, slot);
                let FlowPlan::Exchanges(ex) = spec.plan else { unreachable!() };
                sizes.push(ex[0].response_bytes);
            }
            for _ in 0..1000 {
                w.object_done(&p, slot, 0);
            }
        }
        sizes
    }

    #[test]
    fn object_sizes_match_the_spec() {
        // Spec 3.1, TL(1720, 1.2, 37.2 MB): exact mean 7198 B, P(<= 10 kB) 0.900, top 15 % of
        // objects carry 0.814 of the bytes.
        let d = default_object_bytes();
        let (s, a, h) = (1720.0f64, 1.2f64, 37.2e6 + 1720.0);
        // Exact standard deviation from E[(X+s)^2] of the bounded Pareto on [s, h].
        let c = 1.0 - (s / h).powf(a);
        let m2 = a * s.powf(a) * (h.powf(2.0 - a) - s.powf(2.0 - a)) / ((2.0 - a) * c);
        let mean = d.mean();
        let sd = (m2 - (mean + s).powi(2)).sqrt();
        let n = 2_000_000f64;
        let se = sd / n.sqrt();
        assert!((mean - 7198.0).abs() < 1.0, "{mean}");
        let mut x = object_sizes(21);
        let got = x.iter().sum::<u64>() as f64 / n;
        // ceil() to whole bytes adds 0.5 B on average.
        assert!((got - mean - 0.5).abs() < 4.0 * se, "mean {got}, exact {mean}, se {se}");
        let small = x.iter().filter(|&&v| v <= 10_000).count() as f64 / n;
        assert!((small - 0.900).abs() < 4.0 * (0.09f64 / n).sqrt() + 5e-4, "{small}");
        x.sort_unstable();
        let top: u64 = x[(0.85 * n) as usize..].iter().sum();
        let share = top as f64 / x.iter().sum::<u64>() as f64;
        eprintln!("mean {got:.0} (exact {mean:.0}, se {se:.0}), P(<=10kB) {small:.4}, top-15% share {share:.4}");
        // The share's spread comes from the tail (spec: 0.814-0.815 over 3 seeds).
        assert!((share - 0.814).abs() < 0.01, "{share}");
    }
}
