//! Unresponsive packet sources: packets injected into a router's link at a rate, whatever
//! the network does.

use super::driver::{Action, Context, Wake, WorkloadDriver};
use super::{direction, ArrivalProcess, PacketSourceParams};
use crate::dist::Dist;
use crate::engine::rng::{purpose, StreamId};
use crate::engine::time::from_secs;
use crate::engine::{Rng, SimTime};
use crate::packet::Direction;

/// The wake-up of the next packet.
const PACKET: Wake = Wake::of(0);

/// An unresponsive packet source (Poisson or constant rate).
pub struct PacketSource {
    dir: Direction,
    ect: bool,
    process: ArrivalProcess,
    mean_gap_s: f64,
    size: Dist,
    rng: Rng,
    /// Time of the next packet.
    next_at: SimTime,
    stop: SimTime,
}

impl PacketSource {
    /// The source of workload `index`, its first packet's time drawn.
    pub fn new(index: u32, p: &PacketSourceParams, seed: u64, duration_s: f64) -> PacketSource {
        let PacketSourceParams { process, rate_pps, size_bytes, direction: dir, start_s, stop_s, ect, .. } = p;
        let mut rng = Rng::stream(seed, StreamId { purpose: purpose::SOURCE, a: index, b: 0 });
        let mean_gap_s = 1.0 / rate_pps;
        let first = match process {
            ArrivalProcess::Poisson => rng.exponential(mean_gap_s),
            ArrivalProcess::Cbr => 0.0,
        };
        PacketSource {
            dir: direction(*dir),
            ect: *ect,
            process: *process,
            mean_gap_s,
            size: size_bytes.clone(),
            rng,
            next_at: from_secs(start_s + first),
            stop: from_secs(stop_s.unwrap_or(duration_s)),
        }
    }

    /// The size of the packet sent now and the time of the next one (None after the stop).
    fn emit(&mut self) -> (u32, Option<SimTime>) {
        let size = self.size.sample_bytes(&mut self.rng).clamp(1, u32::MAX as u64) as u32;
        let gap = match self.process {
            ArrivalProcess::Poisson => self.rng.exponential(self.mean_gap_s),
            ArrivalProcess::Cbr => self.mean_gap_s,
        };
        self.next_at += from_secs(gap).max(1);
        (size, (self.next_at <= self.stop).then_some(self.next_at))
    }
}


impl WorkloadDriver for PacketSource {
    type Params = PacketSourceParams;

    fn start(&mut self, _p: &PacketSourceParams, ctx: &Context, out: &mut Vec<Action>) {
        ctx.wake_at(self.next_at, PACKET, out);
    }

    /// A packet is due: the next one's wake-up, then the packet.
    fn wake(&mut self, _p: &PacketSourceParams, ctx: &Context, _wake: Wake, out: &mut Vec<Action>) {
        let (size, next) = self.emit();
        if let Some(at) = next {
            ctx.wake_at(at, PACKET, out);
        }
        out.push(Action::Send { size, dir: self.dir, ect: self.ect });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::DirectionName;

    #[test]
    fn a_constant_rate_source_emits_its_packets_at_its_rate() {
        let p = PacketSourceParams {
            process: ArrivalProcess::Cbr,
            rate_pps: 100.0,
            size_bytes: Dist::constant(500.0),
            direction: DirectionName::Up,
            start_s: 1.0,
            stop_s: None,
            ect: true,
            link: None,
        };
        let mut s = PacketSource::new(0, &p, 1, 2.0);
        let mut ctx = Context { now: 0, end: from_secs(2.0), clients: 0, servers: 0 };
        let mut out = Vec::new();
        s.start(&p, &ctx, &mut out);
        let mut times = Vec::new();
        while let Some(Action::Wake { at, wake }) = out.pop() {
            times.push(at);
            ctx.now = at;
            s.wake(&p, &ctx, wake, &mut out);
            assert_eq!(out.remove(out.len() - 1), Action::Send { size: 500, dir: Direction::Up, ect: true });
        }
        // One packet every 10 ms from 1 s, none at or after the end.
        assert_eq!(times.len(), 100);
        assert!(times.iter().enumerate().all(|(i, &t)| t == from_secs(1.0) + i as SimTime * 10_000_000), "{times:?}");
    }
}
