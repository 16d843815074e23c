//! Packets through the network (links, delay lines, end hosts) and the TCP glue (segments
//! to endpoints, endpoint output to the network, timers).

use super::conn::{Conn, Opening, Timer, TimerKind, OFF};
use super::{Ev, Simulation};
use crate::engine::SimTime;
use crate::net::{DelayLine, Hop, LinkId, LinkWake, Offer};
use crate::packet::{flags, Direction, Packet, PacketId, PacketKind};
use crate::tcp::{Endpoint, Role, SegmentCtx, TcpEvents};
use crate::workload::{ConnSpec, FlowPlan};

impl Simulation {
    /// Moves a packet to the next stage of its path.
    pub(super) fn forward(&mut self, id: PacketId) {
        let p = self.pool.get(id);
        let (stage, next) = self.net.stage(p.dir, p.hop, &self.conns[p.flow as usize].route);
        self.pool.get_mut(id).hop = next;
        match stage {
            Hop::Link(l) => self.send_on_link(l, id),
            Hop::Line(k) => self.enter_line(k, id, self.now),
            Hop::Host => self.deliver(id),
        }
    }

    pub(super) fn send_on_link(&mut self, l: LinkId, id: PacketId) {
        if let Some((kind, nth)) = self.scripted_drop {
            if self.rec.slot_of(l).is_some() && self.pool.get(id).kind == kind {
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
    pub(super) fn after_link_op(&mut self, l: LinkId, wake: LinkWake) {
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
    pub(super) fn launch(&mut self, l: LinkId, id: PacketId, arrive: SimTime) {
        let p = self.pool.get(id);
        if let Some(slot) = self.rec.slot_of(l) {
            if self.now >= self.rec.warmup {
                self.rec.count_sojourn(slot, self.now - p.enqueued_at);
            }
        }
        // A delay line is fed by the link before it alone, in order: the packet can enter it
        // now with the time it reaches it.
        if self.net.feeds_line[l as usize] && p.kind != PacketKind::Other {
            let route = self.conns[p.flow as usize].route;
            if let (Hop::Line(k), next) = self.net.stage(p.dir, p.hop, &route) {
                self.pool.get_mut(id).hop = next;
                self.enter_line(k, id, arrive);
                return;
            }
        }
        if let Some(t) = self.net.links[l as usize].put_on_wire(id, arrive) {
            self.events.push(t, Ev::Arrive(l));
        }
    }

    pub(super) fn enter_line(&mut self, k: u32, id: PacketId, at: SimTime) {
        if let Some(t) = self.net.lines[k as usize].push(id, at) {
            self.events.push(t, Ev::LineOut(k));
        }
    }

    pub(super) fn drop_packet(&mut self, id: PacketId) {
        self.count_flow(id, true);
        self.pool.free(id);
    }

    /// Charges a drop or a mark to the packet's flow.
    pub(super) fn count_flow(&mut self, id: PacketId, drop: bool) {
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
    pub(super) fn deliver(&mut self, id: PacketId) {
        let pkt: Packet = *self.pool.get(id);
        let sack = self.pool.sack(id);
        let opt = if pkt.has(flags::ACCECN_OPT) { self.pool.accecn(id) } else { None };
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
            e.on_segment_with(&pkt, &sack, opt.as_ref(), &mut ctx)
        };
        self.react(pkt.flow, server, ev);
    }

    /// The application reacts to what TCP reported, then the endpoint sends and timers are set.
    pub(super) fn react(&mut self, conn: u32, server: bool, ev: TcpEvents) {
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

    pub(super) fn flush(&mut self, conn: u32, server: bool) {
        let c = &mut self.conns[conn as usize];
        if !c.live {
            return;
        }
        let params = &self.params[c.params_index(server)];
        let mut ctx = SegmentCtx { now: self.now, pool: &mut self.pool, out: &mut self.out, params };
        let e = if server { &mut c.server } else { &mut c.client };
        e.flush(&mut ctx);
        let (rto, delack, pace) = (e.retransmit_timer_at(), e.delack_at, e.pace_at);
        self.sync_timer(conn, Timer::rto(server), rto);
        self.sync_timer(conn, Timer::delayed_ack(server), delack);
        self.sync_timer(conn, Timer::pace(server), pace);
        let mut out = std::mem::take(&mut self.out);
        for &id in &out {
            self.forward(id);
        }
        out.clear();
        self.out = out;
    }

    /// Makes sure a live event exists no later than `deadline` for `timer`.
    #[inline(always)]
    pub(super) fn sync_timer(&mut self, conn: u32, timer: Timer, deadline: SimTime) {
        if deadline < self.conns[conn as usize].timer_at[timer as usize] {
            self.arm_timer(conn, timer, deadline);
        }
    }

    /// Schedules `timer`'s event at `deadline`, superseding the one it had.
    #[inline(never)]
    fn arm_timer(&mut self, conn: u32, timer: Timer, deadline: SimTime) {
        let c = &mut self.conns[conn as usize];
        let w = timer as usize;
        c.timer_gen[w] = c.timer_gen[w].wrapping_add(1);
        c.timer_at[w] = deadline;
        self.events.push(deadline, Ev::Timer { conn, timer, gen: c.timer_gen[w] });
    }

    pub(super) fn on_timer(&mut self, conn: u32, timer: Timer, gen: u32) {
        let c = &mut self.conns[conn as usize];
        let w = timer as usize;
        if c.timer_gen[w] != gen || !c.live {
            return; // superseded
        }
        c.timer_at[w] = OFF;
        let server = timer.is_server();
        let params = &self.params[c.params_index(server)];
        let e = if server { &mut c.server } else { &mut c.client };
        let deadline = match timer.kind() {
            TimerKind::Rto => e.retransmit_timer_at(),
            TimerKind::DelayedAck => e.delack_at,
            TimerKind::Pace => e.pace_at,
        };
        if deadline > self.now {
            // The deadline moved later since this event was scheduled: re-arm.
            if deadline != OFF {
                self.sync_timer(conn, timer, deadline);
            }
            return;
        }
        let mut ctx = SegmentCtx { now: self.now, pool: &mut self.pool, out: &mut self.out, params };
        let ev = match timer.kind() {
            TimerKind::Rto => e.on_rto(&mut ctx),
            TimerKind::DelayedAck => {
                e.on_delack();
                TcpEvents::default()
            }
            TimerKind::Pace => {
                e.on_pace();
                TcpEvents::default()
            }
        };
        self.react(conn, server, ev);
    }


    pub(super) fn open(&mut self, spec: ConnSpec) {
        let hosts = &self.workload_hosts[spec.workload as usize];
        let (client, server) = (hosts.0.start + spec.client, hosts.1.start + spec.server);
        // Routes were checked with the scenario: every pair of a workload's routers is joined.
        let mut route = self.net.route(client, server).expect("a route between the workload's hosts");
        let path_rtt = self.net.path_delay_ns(&route);
        let extra = spec.rtt.map_or(0, |r| r.saturating_sub(path_rtt));
        // Round the extra delay to the grid; half goes on the way up, the rest on the way down.
        let extra = (extra + self.delay_grid / 2) / self.delay_grid * self.delay_grid;
        if extra > 0 {
            route.line_up = self.line(self.net.line_after(Direction::Up, &route), extra / 2);
            route.line_down = self.line(self.net.line_after(Direction::Down, &route), extra - extra / 2);
        }
        let (slot, gen) = match self.free_conns.pop() {
            Some(slot) => (slot, self.conns[slot as usize].gen.wrapping_add(1)),
            None => (self.conns.len() as u32, 1),
        };
        let params = self.workload_params[spec.workload as usize]
            .unwrap_or((self.client_params[spec.client as usize], self.server_params[spec.server as usize]));
        let rwnd = spec.rwnd_bytes;
        let client = Endpoint::new(Role::Client, slot, gen, rwnd, &self.params[params.0 as usize]);
        let server = Endpoint::new(Role::Server, slot, gen, rwnd, &self.params[params.1 as usize]);
        let ex_index = self.rec.next_exchange;
        if let FlowPlan::Exchanges(ex) = &spec.plan {
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
        let opening = Opening {
            flow_id: self.next_flow,
            gen,
            params,
            route,
            workload: spec.workload,
            plan: spec.plan,
            rtt_ms: (path_rtt + extra) as f64 / 1e6,
            rwnd,
            owner: spec.owner,
            ex_index,
        };
        self.next_flow += 1;
        let mut conn = Conn::new(opening, client, server, self.now);
        if slot as usize == self.conns.len() {
            self.conns.push(conn);
        } else {
            // Timer generations go on across the connections of a slot, so that an event left
            // by the previous one never matches.
            conn.timer_gen = self.conns[slot as usize].timer_gen;
            self.conns[slot as usize] = conn;
        }
        let c = &mut self.conns[slot as usize];
        let params = &self.params[c.params_index(false)];
        let mut ctx = SegmentCtx { now: self.now, pool: &mut self.pool, out: &mut self.out, params };
        c.client.connect(&mut ctx);
        self.flush(slot, false);
    }

    /// The delay line of `delay` after link `after`, created on first use.
    fn line(&mut self, after: LinkId, delay: SimTime) -> u32 {
        let lines = &mut self.line_of[after as usize];
        match lines.binary_search_by_key(&delay, |&(d, _)| d) {
            Ok(i) => lines[i].1,
            Err(i) => {
                let k = self.net.lines.len() as u32;
                self.net.lines.push(DelayLine::new(delay));
                self.net.feeds_line[after as usize] = true;
                lines.insert(i, (delay, k));
                k
            }
        }
    }
}
