//! The applications: the workloads' drivers called and their actions carried out, and the
//! plan of each connection (bulk writes, request/response exchanges, think times) run at its
//! two ends, the same for every workload.

use super::conn::UNLIMITED;
use super::recorder::{record_exchange, record_flow};
use super::{Ev, Simulation};
use crate::packet::{Direction, Ecn, Packet, PacketKind};
use crate::tcp::TcpEvents;
use crate::workload::{Action, Context, Driver, FlowPlan, Owner, PlanEnd, Wake};

impl Simulation {
    /// The numbers of client and server hosts of workload `w` (its generators draw host
    /// indices below them; `open` places them in the workload's host groups).
    fn host_counts(&self, w: u32) -> (u32, u32) {
        let (c, s) = &self.workload_hosts[w as usize];
        (c.len() as u32, s.len() as u32)
    }

    /// Calls workload `w`'s driver; its actions wait in `self.actions` for [`Self::run_actions`].
    fn ask<R>(&mut self, w: u32, call: impl FnOnce(&mut Driver, &Context, &mut Vec<Action>) -> R) -> R {
        let (clients, servers) = self.host_counts(w);
        let ctx = Context { now: self.now, end: self.end, clients, servers };
        call(&mut self.workloads[w as usize], &ctx, &mut self.actions)
    }

    /// Carries out the actions workload `w` asked for, in order.
    fn run_actions(&mut self, w: u32) {
        let mut actions = std::mem::take(&mut self.actions);
        for a in actions.drain(..) {
            match a {
                Action::Open(spec) => self.open(spec),
                Action::Send { size, dir, ect } => self.send_unresponsive(w, size, dir, ect),
                Action::Wake { at, wake: Wake { kind, a, b } } => self.events.push(at, Ev::Workload { workload: w, kind, a, b }),
            }
        }
        self.actions = actions;
    }

    /// Workload `w` starts: its first wake-ups.
    pub(super) fn start_workload(&mut self, w: u32) {
        self.ask(w, |d, ctx, out| d.start(ctx, out));
        self.run_actions(w);
    }

    /// A wake-up of workload `w` fires.
    pub(super) fn on_wake(&mut self, w: u32, wake: Wake) {
        self.ask(w, |d, ctx, out| d.wake(ctx, wake, out));
        self.run_actions(w);
    }

    /// Connection `conn` has done every exchange of its plan: its owner says whether it goes
    /// on (the next exchanges after a think time) or closes.
    fn plan_done(&mut self, conn: u32, owner: Owner) {
        let w = self.conns[conn as usize].workload;
        let answer = self.ask(w, |d, ctx, out| d.plan_done(ctx, owner, out));
        let c = &mut self.conns[conn as usize];
        match answer {
            PlanEnd::More { think, exchanges } => {
                // The server has answered everything so far: the next request is this one.
                c.req_end += exchanges[0].request_bytes;
                if let FlowPlan::Exchanges(v) = &mut c.plan {
                    v.extend(exchanges);
                }
                self.events.push(self.now + think, Ev::App { conn, gen: c.gen, server: false });
            }
            PlanEnd::Close => {
                c.owner = None;
                c.client.close();
            }
        }
        self.run_actions(w);
    }

    /// An unresponsive packet of workload `w` enters its link's queue as if from the router; it
    /// leaves the network after the link.
    fn send_unresponsive(&mut self, w: u32, size: u32, dir: Direction, ect: bool) {
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
        self.send_on_link(self.source_links[w as usize], id);
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
                    } else if let Some(owner) = c.owner {
                        self.plan_done(conn, owner);
                    } else {
                        c.client.close();
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
        if let Some(owner) = c.owner.take() {
            // The connection ended before its owner let it go.
            let w = c.workload;
            self.ask(w, |d, ctx, out| d.conn_ended(ctx, owner, out));
            self.run_actions(w);
        }
    }
}
