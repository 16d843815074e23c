//! Request/response exchanges on connections that arrive as a Poisson process (open loop).

use super::driver::{Action, Context, Wake, WorkloadDriver};
use super::{draw_rtt, draw_rwnd, ConnSpec, ExchangeSpec, ExchangesParams, FlowPlan};
use crate::engine::rng::{purpose, StreamId};
use crate::engine::time::{from_millis, from_secs};
use crate::engine::{Rng, SimTime};

/// The wake-up of an open-loop connection arrival process.
pub(super) const ARRIVAL: Wake = Wake::of(0);

/// The actions of a connection arriving now in an open-loop process: the next arrival's
/// wake-up first, then the connection.
pub(super) fn arrival(ctx: &Context, (spec, next): (ConnSpec, Option<SimTime>), out: &mut Vec<Action>) {
    if let Some(at) = next {
        ctx.wake_at(at, ARRIVAL, out);
    }
    out.push(Action::Open(spec));
}

/// Poisson arrivals of connections carrying request/response exchanges.
pub struct ExchangeArrivals {
    index: u32,
    arrivals: Rng,
    conns: Rng,
    /// Time of the next arrival.
    pub next_at: SimTime,
    stop: SimTime,
}

impl ExchangeArrivals {
    /// The arrival process of workload `index`, its first arrival drawn.
    pub fn new(index: u32, p: &ExchangesParams, seed: u64, duration_s: f64) -> ExchangeArrivals {
        let ExchangesParams { arrival_rate_per_s, start_s, stop_s, .. } = p;
        let mut arrivals = Rng::stream(seed, StreamId { purpose: purpose::ARRIVALS, a: index, b: 0 });
        let first = start_s + arrivals.exponential(1.0 / arrival_rate_per_s);
        ExchangeArrivals {
            index,
            conns: Rng::stream(seed, StreamId { purpose: purpose::CONNECTION, a: index, b: 0 }),
            arrivals,
            next_at: from_secs(first),
            stop: from_secs(stop_s.unwrap_or(duration_s)),
        }
    }

    /// The connection arriving now, and the time of the next arrival (None after `stop_s`).
    pub fn arrive(&mut self, p: &ExchangesParams, clients: u32, servers: u32) -> (ConnSpec, Option<SimTime>) {
        let ExchangesParams {
            arrival_rate_per_s,
            exchanges_per_connection,
            request_bytes,
            response_bytes,
            server_delay_ms,
            think_time_s,
            rtt_ms,
            rwnd_bytes,
            ..
        } = p;
        // A child stream per connection: its draws never shift those of later connections.
        let mut r = self.conns.fork();
        let client = r.below(clients as u64) as u32;
        let server = r.below(servers as u64) as u32;
        let rtt = draw_rtt(rtt_ms, &mut r);
        let rwnd = draw_rwnd(rwnd_bytes, &mut r);
        let n = exchanges_per_connection.sample(&mut r).round().max(1.0) as usize;
        let exchanges = (0..n)
            .map(|_| ExchangeSpec {
                // Sizes are at least one byte: an exchange must move something to be seen.
                request_bytes: request_bytes.sample_bytes(&mut r).max(1),
                response_bytes: response_bytes.sample_bytes(&mut r).max(1),
                server_delay: from_millis(server_delay_ms.sample(&mut r).max(0.0)),
                think: from_secs(think_time_s.sample(&mut r).max(0.0)),
            })
            .collect();
        let spec = ConnSpec { workload: self.index, client, server, rtt, rwnd_bytes: rwnd, plan: FlowPlan::Exchanges(exchanges), owner: None };
        let gap = from_secs(self.arrivals.exponential(1.0 / arrival_rate_per_s)).max(1);
        self.next_at += gap;
        (spec, (self.next_at <= self.stop).then_some(self.next_at))
    }
}


impl WorkloadDriver for ExchangeArrivals {
    type Params = ExchangesParams;

    fn start(&mut self, _p: &ExchangesParams, ctx: &Context, out: &mut Vec<Action>) {
        ctx.wake_at(self.next_at, ARRIVAL, out);
    }

    /// A connection arrives.
    fn wake(&mut self, p: &ExchangesParams, ctx: &Context, _wake: Wake, out: &mut Vec<Action>) {
        arrival(ctx, self.arrive(p, ctx.clients, ctx.servers), out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Dist;

    fn exchanges(rate: f64) -> ExchangesParams {
        ExchangesParams {
            client_group: None,
            server_group: None,
            arrival_rate_per_s: rate,
            start_s: 0.0,
            stop_s: None,
            exchanges_per_connection: Dist::constant(1.0),
            request_bytes: Dist::constant(300.0),
            response_bytes: Dist::Lomax { scale: 1720.0, shape: 1.2, max: 37.2e6 },
            server_delay_ms: Dist::constant(0.0),
            think_time_s: Dist::constant(0.0),
            rtt_ms: Some(Dist::Uniform { low: 10.0, high: 150.0 }),
            rwnd_bytes: Dist::constant(65536.0),
        }
    }

    #[test]
    fn poisson_arrivals_have_the_configured_rate() {
        let w = exchanges(1000.0);
        let mut a = ExchangeArrivals::new(0, &w, 9, 1000.0);
        let mut n = 0;
        let mut t = a.next_at;
        while t < from_secs(50.0) {
            let (_, next) = a.arrive(&w, 4, 4);
            t = next.unwrap();
            n += 1;
        }
        // 50 000 expected; the standard deviation of a Poisson count is about 224.
        assert!((n as f64 - 50_000.0).abs() < 1000.0, "{n}");
    }

    #[test]
    fn same_seed_same_connections() {
        let w = exchanges(10.0);
        let draw = |seed| {
            let mut a = ExchangeArrivals::new(0, &w, seed, 100.0);
            (0..50).map(|_| a.arrive(&w, 3, 5).0).collect::<Vec<_>>()
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
    }

    #[test]
    fn an_arrival_schedules_the_next_before_opening_and_stops_at_the_end() {
        let w = exchanges(10.0);
        let mut a = ExchangeArrivals::new(0, &w, 3, 100.0);
        let end = from_secs(5.0);
        let mut ctx = Context { now: 0, end, clients: 2, servers: 2 };
        let mut out = Vec::new();
        a.start(&w, &ctx, &mut out);
        let mut arrivals = 0;
        while let Some(Action::Wake { at, wake }) = out.pop() {
            assert!(out.is_empty() && at < end && wake == ARRIVAL);
            ctx.now = at;
            a.wake(&w, &ctx, wake, &mut out);
            arrivals += 1;
            assert!(matches!(out.last(), Some(Action::Open(_))), "{out:?}");
            out.pop();
        }
        // About 50 arrivals in 5 s; the last one's successor is past the end.
        assert!((25..80).contains(&arrivals), "{arrivals}");
        assert!(a.next_at >= end);
    }
}
