//! The applications: what the workloads do when connections open, exchanges end and wake-ups
//! fire.

use super::conn::{FlowKind, UNLIMITED};
use super::recorder::{record_exchange, record_flow};
use super::{Ev, Simulation};
use crate::engine::SimTime;
use crate::packet::{Direction, Ecn, Packet, PacketKind};
use crate::scenario::Workload;
use crate::tcp::TcpEvents;
use crate::workload::{Browsers, ConnSpec, ExchangeArrivals, FlowPlan, PackMime, PacketSource, SessionStep, WebSessions, WebSessionsParams};

/// Configuration and state of an active workload.
pub(super) enum WorkloadState {
    Bulk(Vec<(SimTime, ConnSpec)>),
    Exchanges(ExchangeArrivals),
    Web(WebSessions),
    PackMime(Box<PackMime>),
    Browsers(Browsers),
    Source(PacketSource),
}

impl Simulation {
    /// The numbers of client and server hosts of workload `w` (its generators draw host
    /// indices below them; `open` places them in the workload's host groups).
    fn host_counts(&self, w: u32) -> (u32, u32) {
        let (c, s) = &self.workload_hosts[w as usize];
        (c.len() as u32, s.len() as u32)
    }

    pub(super) fn on_bulk_start(&mut self, w: u32, flow: u32) {
        let WorkloadState::Bulk(flows) = &self.workloads[w as usize] else { unreachable!() };
        let spec = flows[flow as usize].1.clone();
        self.open(spec, FlowKind::Bulk);
    }

    /// A connection of an exchanges or PackMime-HTTP workload arrives.
    pub(super) fn on_exchange_arrival(&mut self, w: u32) {
        let (clients, servers) = self.host_counts(w);
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

    pub(super) fn client_app(&mut self, conn: u32, ev: TcpEvents) {
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
    pub(super) fn next_request(&mut self, conn: u32) {
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

    pub(super) fn server_app(&mut self, conn: u32, ev: TcpEvents) {
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

    pub(super) fn on_app(&mut self, conn: u32, gen: u32, server: bool) {
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
    pub(super) fn abort(&mut self, conn: u32) {
        self.finish_conn(conn, false);
    }

    /// Records the flow (and an unfinished exchange) and frees the slot.
    pub(super) fn finish_conn(&mut self, conn: u32, completed: bool) {
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

    pub(super) fn on_browser_start(&mut self, w: u32, b: u32) {
        let now = self.now;
        let WorkloadState::Browsers(a) = &mut self.workloads[w as usize] else { unreachable!() };
        let Workload::TpcwBrowsers(p) = &self.scenario.workloads[w as usize] else { unreachable!() };
        let spec = a.start_session(p, b, now);
        self.open(spec, FlowKind::Exchanges);
    }

    /// The browser of `conn` has its whole page: the next page after a think time, on the
    /// same connection, or the end of its session.
    pub(super) fn browser_page_done(&mut self, conn: u32) {
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

    pub(super) fn web(&mut self, w: u32) -> (&mut WebSessions, &WebSessionsParams) {
        let WorkloadState::Web(a) = &mut self.workloads[w as usize] else { unreachable!() };
        let Workload::WebSessions(p) = &self.scenario.workloads[w as usize] else { unreachable!() };
        (a, p)
    }

    /// Schedules what a session does next.
    pub(super) fn session_step(&mut self, w: u32, slot: u32, gen: u32, step: SessionStep) {
        let (t, ev) = match step {
            SessionStep::ObjectAt(t) => (t, Ev::WebObject { workload: w, slot, gen }),
            SessionStep::PageAt(t) => (t, Ev::WebPage { workload: w, slot, gen }),
            SessionStep::Wait | SessionStep::Done => return,
        };
        if t < self.end {
            self.events.push(t, ev);
        }
    }

    pub(super) fn on_session_arrival(&mut self, w: u32) {
        let ((clients, servers), now, end) = (self.host_counts(w), self.now, self.end);
        let (a, p) = self.web(w);
        let (slot, step, next) = a.arrive(p, now, clients, servers);
        let gen = a.gen(slot);
        if let Some(t) = next.filter(|t| *t < end) {
            self.events.push(t, Ev::SessionArrival(w));
        }
        self.session_step(w, slot, gen, step);
    }

    pub(super) fn on_web_object(&mut self, w: u32, slot: u32, gen: u32) {
        let (a, p) = self.web(w);
        if a.gen(slot) != gen {
            return;
        }
        let (spec, step) = a.next_object(p, slot);
        self.session_step(w, slot, gen, step);
        self.open(spec, FlowKind::Exchanges);
    }

    pub(super) fn on_web_page(&mut self, w: u32, slot: u32, gen: u32) {
        let (now, (_, servers)) = (self.now, self.host_counts(w));
        let (a, p) = self.web(w);
        if a.gen(slot) != gen {
            return;
        }
        let step = a.start_page(p, slot, now, servers);
        self.session_step(w, slot, gen, step);
    }

    pub(super) fn web_object_done(&mut self, w: u32, slot: u32, gen: u32) {
        let now = self.now;
        let (a, p) = self.web(w);
        if a.gen(slot) != gen {
            return;
        }
        let step = a.object_done(p, slot, now);
        self.session_step(w, slot, gen, step);
    }

    // ----- unresponsive sources -----

    pub(super) fn on_source(&mut self, w: u32) {
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
            hop: 0,
            enqueued_at: 0,
        });
        // Into its link's queue as if from the router; it leaves the network after the link.
        self.send_on_link(self.source_links[w as usize], id);
    }

}
