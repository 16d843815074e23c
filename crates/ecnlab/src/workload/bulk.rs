//! Long-lived (bulk) flows: every flow is drawn at set-up and opens at its start time.

use super::driver::{Action, Context, Wake, WorkloadDriver};
use super::{direction, draw_rtt, draw_rwnd, BulkParams, ConnSpec, FlowPlan};
use crate::engine::rng::{purpose, StreamId};
use crate::engine::time::from_secs;
use crate::engine::{Rng, SimTime};

/// The flows of one bulk workload, each with its start time.
pub struct BulkFlows {
    flows: Vec<(SimTime, ConnSpec)>,
}

impl BulkFlows {
    /// Draws the flows of workload `index`: start times, hosts, RTTs and windows.
    pub fn new(index: u32, p: &BulkParams, seed: u64, clients: u32, servers: u32) -> BulkFlows {
        let BulkParams { flows, direction: dir, bytes, start_s, start_jitter_s, rtt_ms, rwnd_bytes, host_offset, .. } = p;
        let mut start_rng = Rng::stream(seed, StreamId { purpose: purpose::START, a: index, b: 0 });
        let mut rtt_rng = Rng::stream(seed, StreamId { purpose: purpose::FLOW_RTT, a: index, b: 0 });
        let mut rwnd_rng = Rng::stream(seed, StreamId { purpose: purpose::FLOW_RWND, a: index, b: 0 });
        let flows = (0..*flows as u32)
            .map(|i| {
                let start = from_secs(start_s + start_jitter_s * start_rng.uniform());
                let spec = ConnSpec {
                    workload: index,
                    client: ((*host_offset as u64 + i as u64) % clients as u64) as u32,
                    server: ((*host_offset as u64 + i as u64) % servers as u64) as u32,
                    rtt: draw_rtt(rtt_ms, &mut rtt_rng),
                    rwnd_bytes: draw_rwnd(rwnd_bytes, &mut rwnd_rng),
                    plan: FlowPlan::Bulk { dir: direction(*dir), bytes: bytes.map(|b| b as u64) },
                    owner: None,
                };
                (start, spec)
            })
            .collect();
        BulkFlows { flows }
    }
}

impl WorkloadDriver for BulkFlows {
    type Params = BulkParams;

    /// A wake-up per flow at its start time (`a` = the flow), even at or after the end: a flow
    /// due at the end still opens.
    fn start(&mut self, _p: &BulkParams, _ctx: &Context, out: &mut Vec<Action>) {
        for (f, (at, _)) in self.flows.iter().enumerate() {
            out.push(Action::Wake { at: *at, wake: Wake { kind: 0, a: f as u32, b: 0 } });
        }
    }

    /// Flow `a` opens.
    fn wake(&mut self, _p: &BulkParams, _ctx: &Context, wake: Wake, out: &mut Vec<Action>) {
        out.push(Action::Open(self.flows[wake.a as usize].1.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Dist;
    use crate::workload::DirectionName;

    fn params(flows: i64, host_offset: u32) -> BulkParams {
        BulkParams {
            client_group: None,
            server_group: None,
            flows,
            direction: DirectionName::Down,
            bytes: None,
            start_s: 2.0,
            start_jitter_s: 0.0,
            rtt_ms: None,
            rwnd_bytes: Dist::constant(1e5),
            host_offset,
            tcp: None,
        }
    }

    fn hosts(b: &BulkFlows) -> Vec<(u32, u32)> {
        b.flows.iter().map(|(_, s)| (s.client, s.server)).collect()
    }

    #[test]
    fn bulk_flows_spread_over_hosts() {
        let f = BulkFlows::new(0, &params(5, 0), 1, 2, 3);
        assert_eq!(hosts(&f), vec![(0, 0), (1, 1), (0, 2), (1, 0), (0, 1)]);
        assert!(f.flows.iter().all(|(t, _)| *t == 2_000_000_000));
        let f = BulkFlows::new(0, &params(5, 4), 1, 10, 10);
        assert_eq!(hosts(&f), vec![(4, 4), (5, 5), (6, 6), (7, 7), (8, 8)]);
    }

    #[test]
    fn each_wake_up_opens_its_flow_at_its_start() {
        let mut p = params(3, 0);
        p.start_jitter_s = 1.0;
        let mut b = BulkFlows::new(0, &p, 5, 3, 3);
        let ctx = Context { now: 0, end: 10_000_000_000, clients: 3, servers: 3 };
        let mut out = Vec::new();
        b.start(&p, &ctx, &mut out);
        let wakes: Vec<(SimTime, Wake)> = out.drain(..).map(|a| match a {
            Action::Wake { at, wake } => (at, wake),
            a => panic!("{a:?}"),
        }).collect();
        assert_eq!(wakes.len(), 3);
        for (f, (at, wake)) in wakes.into_iter().enumerate() {
            assert!((2_000_000_000..3_000_000_000).contains(&at), "{at}");
            b.wake(&p, &Context { now: at, ..ctx }, wake, &mut out);
            assert_eq!(std::mem::take(&mut out), vec![Action::Open(b.flows[f].1.clone())]);
        }
    }
}
