//! The forwarding engine: per direction, ecnlab's link (a queue discipline feeding a
//! transmitter of the configured rate) and dummynet-style delay lines, driven by an explicit
//! clock so that tests feed frames at chosen times.
//!
//! A frame arriving on one side becomes a simulator [`Packet`] (size = IPv4 total length, ECN
//! codepoint, kind, a flow key from the 5-tuple) in a [`PacketPool`]; its bytes are copied
//! once into a slot of [`Frames`] indexed by the same [`PacketId`]. The packet is offered to
//! [`Link`] exactly as in the simulator (`net::link`, unchanged): the queue discipline admits,
//! marks or drops it, and the transmitter takes one packet at a time, so packets leave at the
//! link rate (start = max(arrival, end of the previous transmission), end = start +
//! size * 8 / rate, rounded up to a nanosecond). When a packet starts its transmission, a CE
//! mark the discipline gave it is written into the frame (`wire::set_ecn`, checksum updated)
//! and the packet enters the delay line of its (source, destination) address pair (base
//! one-way delay plus the pair's extra delay; one FIFO line per distinct delay, as the
//! simulator's per-flow RTTs). It is ready to send when it leaves the line.
//!
//! Time: the engine runs its own events (ends of transmission, exits from delay lines) in
//! time order up to the `now` of each call, at their own times, not at the time of the call,
//! so a late call does not slow the link: it only delays the frames' actual departure. An
//! arrival is stamped with the call's `now` after every earlier event has run, so the queue
//! discipline sees non-decreasing times.
//!
//! Frames that are not IPv4 (ARP) go straight to the ready list, outside the queue and the
//! delay, so that neighbour discovery works; malformed IPv4 and frames larger than a slot
//! are dropped and counted.
//!
//! Memory: slots, the pool and the lines grow to the largest number of packets held at once
//! and are then reused: nothing is allocated per packet once the router is warm.

use std::collections::{BTreeMap, HashMap, VecDeque};

use ecnlab::aqm::{Outcome, QueueStats, Reason};
use ecnlab::engine::{Rng, SimTime};
use ecnlab::net::link::{DelayLine, Link, LinkWake, Offer};
use ecnlab::packet::{Direction, Ecn, Packet, PacketId, PacketKind, PacketPool};
use ecnlab::scenario::QueueConfig;
use serde::Serialize;

use crate::wire::{self, NotIpv4};

/// Largest frame the router holds (bytes): an Ethernet frame of a 1500-byte MTU with room to
/// spare. Larger frames (offloads left on: GSO/TSO super-packets) are dropped and counted.
pub const SLOT_BYTES: usize = 2048;

/// Frame bytes by packet id: one slot of [`SLOT_BYTES`] per id, grown with the pool.
#[derive(Default)]
pub struct Frames {
    data: Vec<u8>,
    len: Vec<u16>,
    /// The delay line each packet enters after the link.
    line: Vec<u16>,
}

impl Frames {
    fn store(&mut self, id: PacketId, frame: &[u8], line: u16) {
        let i = id as usize;
        if self.len.len() <= i {
            // Grow geometrically: amortized, and only until the high-water mark.
            let n = (i + 1).max(self.len.len() * 2).max(64);
            self.data.resize(n * SLOT_BYTES, 0);
            self.len.resize(n, 0);
            self.line.resize(n, 0);
        }
        self.data[i * SLOT_BYTES..i * SLOT_BYTES + frame.len()].copy_from_slice(frame);
        self.len[i] = frame.len() as u16;
        self.line[i] = line;
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &[u8] {
        let i = id as usize;
        &self.data[i * SLOT_BYTES..i * SLOT_BYTES + self.len[i] as usize]
    }

    #[inline]
    fn get_mut(&mut self, id: PacketId) -> &mut [u8] {
        let i = id as usize;
        &mut self.data[i * SLOT_BYTES..i * SLOT_BYTES + self.len[i] as usize]
    }
}

/// What one direction is built from.
#[derive(Clone, Debug)]
pub struct PathConfig {
    /// Transmitter rate (bit/s, of IPv4 bytes: Ethernet framing is not counted, as the
    /// simulator counts IP packets).
    pub rate_bps: u64,
    /// The queue: hard limits and discipline, as the scenario's `[topology.bottleneck.queue]`.
    pub queue: QueueConfig,
    /// One-way delay every IPv4 packet gets after the transmitter (ns).
    pub base_delay_ns: SimTime,
    /// Extra one-way delay by (source, destination) IPv4 address (ns), on top of the base.
    pub pair_delays: Vec<((u32, u32), SimTime)>,
    /// Probability that an IPv4 packet is lost before the queue.
    pub random_loss: f64,
    /// Seed of the discipline's and the loss's random streams.
    pub seed: u64,
    /// ECN+ emulation: SYN-ACKs from these IPv4 addresses that accept ECN (ECE set, CWR clear,
    /// RFC 3168 section 6.1.1) and arrive Not-ECT are made ECT(0) before the queue, as a server
    /// implementing ECN+ (Kuzmanovic 2005; RFC 5562) would send them. Linux servers do not.
    pub ect_synack_sources: Vec<u32>,
}

/// A delay line and the time its head leaves.
struct Line {
    line: DelayLine,
    next: Option<SimTime>,
}

/// Counters of one direction besides its queue's and link's.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PathCounters {
    /// Frames received.
    pub rx_frames: u64,
    /// IPv4 packets offered to the link, and their bytes (IPv4 total length).
    pub ipv4_pkts: u64,
    pub ipv4_bytes: u64,
    /// Frames forwarded outside the queue (not IPv4).
    pub bypassed: u64,
    /// IPv4 frames dropped as malformed.
    pub malformed: u64,
    /// Frames dropped for being larger than a slot.
    pub oversize: u64,
    /// ECT packets whose frame was rewritten to CE.
    pub ce_rewrites: u64,
    /// SYN-ACKs made ECT(0) by the ECN+ emulation.
    pub ect_synacks: u64,
    /// Frames handed out to be sent, and their bytes (whole frames).
    pub tx_frames: u64,
    pub tx_bytes: u64,
    /// How late frames were handed out after they left their delay line (ns): the sum (the
    /// mean is this over `tx_frames`) and the largest. The I/O loop's timer resolution and
    /// scheduling show here; the link's own times do not depend on it.
    pub send_lateness_ns_sum: u64,
    pub send_lateness_ns_max: u64,
}

/// One direction's counters and occupancy at a time, as written to the router's output.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PathSnapshot {
    pub t_ns: SimTime,
    pub len_pkts: u32,
    pub len_bytes: u64,
    #[serde(flatten)]
    pub counters: PathCounters,
    /// Packets the queue accepted (marked ones included).
    pub enqueued: u64,
    pub marked: u64,
    pub dropped: u64,
    pub dropped_overflow: u64,
    pub dropped_early: u64,
    pub dropped_forced: u64,
    pub random_losses: u64,
    /// Packets (bytes) whose transmission has ended.
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    /// Time the transmitter spent sending (ns).
    pub busy_ns: u64,
    /// Integral of the queue length over time (packet-ns, byte-ns).
    pub area_pkts_ns: u128,
    pub area_bytes_ns: u128,
    /// The queue's cumulative counts by packet kind, outcome and reason, keyed
    /// `"kind.outcome.reason"` (e.g. `"data.marked.early"`); only non-zero entries. The
    /// simulator's `queue_counts` table and the `drops_<kind>`/`marks_<kind>` columns.
    pub counts: BTreeMap<String, u64>,
}

/// What became of a frame offered to a [`Path`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    Queued { marked: bool },
    Dropped(Reason),
    Lost,
    Bypassed,
    Malformed,
    Oversize,
}

/// One direction of the router.
pub struct Path {
    link: Link,
    pool: PacketPool,
    frames: Frames,
    /// Scratch list for packets a discipline drops other than the one offered.
    dropped: Vec<PacketId>,
    /// End of the current transmission when packets wait behind it.
    tx_done_at: Option<SimTime>,
    lines: Vec<Line>,
    line_of_pair: HashMap<(u32, u32), u16>,
    /// The line of pairs without an entry (base delay only).
    base_line: u16,
    /// Frames ready to send, in order, with the time each became ready.
    ready: VecDeque<(PacketId, SimTime)>,
    dir: Direction,
    /// Latest time seen (arrivals are never stamped earlier).
    now: SimTime,
    ect_synack_sources: Vec<u32>,
    counters: PathCounters,
}

impl Path {
    pub fn new(cfg: &PathConfig, dir: Direction) -> Path {
        let rng = Rng::from_seed(cfg.seed);
        let queue = ecnlab::aqm::Queue::build(&cfg.queue.aqm, cfg.queue.effective_limits(), cfg.rate_bps, rng.clone().fork());
        let link = Link::new(cfg.rate_bps, 0, queue, cfg.random_loss, rng.clone().fork().fork());
        let mut lines: Vec<Line> = Vec::new();
        let mut line_for = |delay: SimTime| -> u16 {
            let i = lines.iter().position(|l| l.line.delay_ns == delay).unwrap_or_else(|| {
                lines.push(Line { line: DelayLine::new(delay), next: None });
                lines.len() - 1
            });
            i as u16
        };
        let base_line = line_for(cfg.base_delay_ns);
        let line_of_pair = cfg.pair_delays.iter().map(|&(pair, extra)| (pair, line_for(cfg.base_delay_ns + extra))).collect();
        Path {
            link,
            pool: PacketPool::new(),
            frames: Frames::default(),
            dropped: Vec::with_capacity(64),
            tx_done_at: None,
            lines,
            line_of_pair,
            base_line,
            ready: VecDeque::with_capacity(256),
            dir,
            now: 0,
            ect_synack_sources: cfg.ect_synack_sources.clone(),
            counters: PathCounters::default(),
        }
    }

    /// Offers a frame received at `now` (ns).
    pub fn arrive(&mut self, frame: &[u8], now: SimTime) -> Arrival {
        let now = now.max(self.now);
        self.advance(now);
        self.counters.rx_frames += 1;
        if frame.len() > SLOT_BYTES {
            self.counters.oversize += 1;
            return Arrival::Oversize;
        }
        let info = match wire::parse(frame) {
            Ok(info) => info,
            Err(NotIpv4::OtherEtherType(_)) => {
                let id = self.pool.alloc(packet(frame.len() as u32, Ecn::NotEct, PacketKind::Other, 0, self.dir));
                self.frames.store(id, frame, self.base_line);
                self.ready.push_back((id, now));
                self.counters.bypassed += 1;
                return Arrival::Bypassed;
            }
            Err(NotIpv4::Malformed(_)) => {
                self.counters.malformed += 1;
                return Arrival::Malformed;
            }
        };
        self.counters.ipv4_pkts += 1;
        self.counters.ipv4_bytes += info.total_len as u64;
        let line = self.line_of_pair.get(&(info.src, info.dst)).copied().unwrap_or(self.base_line);
        let kind = info.kind();
        let ecn_plus = kind == PacketKind::SynAck
            && info.ecn == Ecn::NotEct
            && info.tcp_flags.is_some_and(|f| f & (wire::TCP_ECE | wire::TCP_CWR) == wire::TCP_ECE)
            && self.ect_synack_sources.contains(&info.src);
        let ecn = if ecn_plus { Ecn::Ect0 } else { info.ecn };
        let mut p = packet(info.total_len as u32, ecn, kind, info.flow_key(), self.dir);
        p.payload = info.tcp_payload;
        let id = self.pool.alloc(p);
        self.frames.store(id, frame, line);
        if ecn_plus {
            wire::set_ecn(self.frames.get_mut(id), Ecn::Ect0);
            self.counters.ect_synacks += 1;
        }
        let (offer, wake) = self.link.send(&mut self.pool, id, now, &mut self.dropped);
        let arrival = match offer {
            Offer::Queued { marked } => {
                self.on_wake(wake);
                Arrival::Queued { marked }
            }
            Offer::Dropped(reason) => {
                self.pool.free(id);
                Arrival::Dropped(reason)
            }
            Offer::Lost => {
                self.pool.free(id);
                Arrival::Lost
            }
        };
        self.free_dropped();
        arrival
    }

    /// Runs every event due by `now`, then hands each ready frame to `send`, in order.
    pub fn poll(&mut self, now: SimTime, mut send: impl FnMut(&[u8])) {
        let now = now.max(self.now);
        self.advance(now);
        while let Some((id, due)) = self.ready.pop_front() {
            let f = self.frames.get(id);
            let c = &mut self.counters;
            c.tx_frames += 1;
            c.tx_bytes += f.len() as u64;
            c.send_lateness_ns_sum += now - due;
            c.send_lateness_ns_max = c.send_lateness_ns_max.max(now - due);
            send(f);
            self.pool.free(id);
        }
    }

    /// When the next event is due (an end of transmission or an exit from a delay line), if
    /// any: the caller polls then.
    pub fn next_wakeup(&self) -> Option<SimTime> {
        let lines = self.lines.iter().filter_map(|l| l.next);
        lines.chain(self.tx_done_at).min()
    }

    /// Whether frames wait to be handed out by [`Path::poll`].
    pub fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Runs the events due by `now` in time order.
    fn advance(&mut self, now: SimTime) {
        loop {
            // The earliest due event: the transmitter's first (ties do not matter: a packet
            // entering a line never leaves it at the time it enters unless its delay is 0,
            // and then either order gives the same output order).
            let mut best: Option<(SimTime, Option<usize>)> = self.tx_done_at.filter(|&t| t <= now).map(|t| (t, None));
            for (i, l) in self.lines.iter().enumerate() {
                if let Some(t) = l.next.filter(|&t| t <= now) {
                    if best.is_none_or(|(b, _)| t < b) {
                        best = Some((t, Some(i)));
                    }
                }
            }
            match best {
                None => break,
                Some((t, None)) => {
                    self.tx_done_at = None;
                    let wake = self.link.on_tx_done(&mut self.pool, t, &mut self.dropped);
                    self.on_wake(wake);
                    self.free_dropped();
                }
                Some((t, Some(i))) => {
                    let (id, next) = self.lines[i].line.pop();
                    self.lines[i].next = next;
                    self.ready.push_back((id, t));
                }
            }
        }
        self.now = now;
    }

    /// Acts on what the link asks: remember when its transmission ends, and move a packet that
    /// started transmission into its delay line, with a CE mark written into its frame.
    fn on_wake(&mut self, wake: LinkWake) {
        if let Some(t) = wake.tx_done_at {
            self.tx_done_at = Some(t);
        }
        if let Some((id, end)) = wake.started {
            if self.pool.get(id).ecn == Ecn::Ce {
                let f = self.frames.get_mut(id);
                if wire::parse(f).is_ok_and(|i| i.ecn != Ecn::Ce) {
                    wire::set_ecn(f, Ecn::Ce);
                    self.counters.ce_rewrites += 1;
                }
            }
            let l = self.frames.line[id as usize] as usize;
            if let Some(t) = self.lines[l].line.push(id, end) {
                self.lines[l].next = Some(t);
            }
        }
    }

    fn free_dropped(&mut self) {
        for id in self.dropped.drain(..) {
            self.pool.free(id);
        }
    }

    /// Counters and occupancy at `now` (the queue's occupancy integral is brought up to it).
    pub fn snapshot(&mut self, now: SimTime) -> PathSnapshot {
        let now = now.max(self.now);
        let link = self.link.stats_at(now);
        let (len_pkts, len_bytes) = (self.link.queue.len_pkts(), self.link.queue.len_bytes());
        let q = self.link.queue.stats(now);
        let dropped = |r| q.total(Outcome::Dropped, Some(r));
        PathSnapshot {
            t_ns: now,
            len_pkts,
            len_bytes,
            counters: self.counters.clone(),
            enqueued: q.total(Outcome::Enqueued, None).wrapping_add(q.total(Outcome::Marked, None)),
            marked: q.total(Outcome::Marked, None),
            dropped: q.total(Outcome::Dropped, None),
            dropped_overflow: dropped(Reason::Overflow),
            dropped_early: dropped(Reason::Early),
            dropped_forced: dropped(Reason::Forced),
            random_losses: link.random_losses,
            delivered_pkts: link.delivered_pkts,
            delivered_bytes: link.delivered_bytes,
            busy_ns: link.busy_ns,
            area_pkts_ns: q.area_pkts_ns,
            area_bytes_ns: q.area_bytes_ns,
            counts: counts(q),
        }
    }

    /// The discipline's control variables at `now` (e.g. RED's average), by name.
    pub fn sample_aqm(&mut self, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        self.link.queue.sample_aqm(now.max(self.now), out)
    }

    /// Packets held: queued, in transmission, in delay lines or ready.
    pub fn packets_inside(&self) -> usize {
        self.pool.live()
    }
}

/// The non-zero entries of a queue's counts by kind, outcome and reason (sampled every few
/// milliseconds, not per packet).
fn counts(q: &QueueStats) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for kind in PacketKind::ALL {
        for outcome in Outcome::ALL {
            for reason in Reason::ALL {
                let n = q.count(kind, outcome, reason);
                if n > 0 {
                    out.insert(format!("{}.{}.{}", kind.name(), outcome.name(), reason.name()), n);
                }
            }
        }
    }
    out
}

fn packet(size: u32, ecn: Ecn, kind: PacketKind, flow: u64, dir: Direction) -> Packet {
    Packet {
        flow: (flow >> 32) as u32,
        flow_gen: flow as u32,
        seq: 0,
        ack: 0,
        payload: 0,
        size,
        wnd: 0,
        flags: 0,
        ecn,
        kind,
        dir,
        hop: 0,
        enqueued_at: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::tests::tcp_frame;
    use crate::wire::{ipv4_header_checksum, parse, ETH_HLEN};
    use ecnlab::aqm::red::AboveMax;
    use ecnlab::aqm::{AqmConfig, RedParams, ThresholdParams};

    const MS: SimTime = 1_000_000;

    fn config(rate_bps: u64, queue: QueueConfig) -> PathConfig {
        PathConfig { rate_bps, queue, base_delay_ns: 0, pair_delays: Vec::new(), random_loss: 0.0, seed: 1, ect_synack_sources: Vec::new() }
    }

    fn droptail(limit_pkts: u32) -> QueueConfig {
        QueueConfig { limit_pkts: Some(limit_pkts), limit_bytes: None, aqm: AqmConfig::default() }
    }

    /// Runs the path until it is empty, returning (time, frame) of every frame handed out,
    /// polling at each wake-up.
    fn drain(p: &mut Path, mut now: SimTime) -> Vec<(SimTime, Vec<u8>)> {
        let mut out = Vec::new();
        loop {
            p.poll(now, |f| out.push((now, f.to_vec())));
            match p.next_wakeup() {
                Some(t) => now = t,
                None => return out,
            }
        }
    }

    fn checksum_ok(f: &[u8]) -> bool {
        let hl = (f[ETH_HLEN] & 0x0f) as usize * 4;
        let h = &f[ETH_HLEN..ETH_HLEN + hl];
        u16::from_be_bytes([h[10], h[11]]) == ipv4_header_checksum(h)
    }

    #[test]
    fn a_burst_leaves_at_the_link_rate() {
        // 1000 packets of 1500 bytes offered at once to a 10 Mb/s link with room for all:
        // the last leaves after 1000 * 1.2 ms, and departures are 1.2 ms apart.
        let mut p = Path::new(&config(10_000_000, droptail(2000)), Direction::Down);
        let f = tcp_frame(1, 2, 1500, Ecn::NotEct, 0x10);
        for _ in 0..1000 {
            assert_eq!(p.arrive(&f, 0), Arrival::Queued { marked: false });
        }
        let out = drain(&mut p, 0);
        assert_eq!(out.len(), 1000);
        let bits = 1000.0 * 1500.0 * 8.0;
        let rate = bits / (out.last().unwrap().0 as f64 / 1e9);
        assert!((rate / 10e6 - 1.0).abs() < 0.01, "rate {rate}");
        assert!(out.windows(2).all(|w| w[1].0 - w[0].0 == 1_200_000), "evenly spaced");
        assert_eq!(out[0].0, 1_200_000, "the first leaves after its own transmission");
        assert_eq!(out[0].1, f, "bytes unchanged");
        let s = p.snapshot(out.last().unwrap().0);
        assert_eq!((s.delivered_pkts, s.counters.tx_frames, s.enqueued, s.dropped), (1000, 1000, 1000, 0));
        assert_eq!(s.busy_ns, 1_200_000_000);
        assert_eq!(s.counters.send_lateness_ns_max, 0, "polled exactly at each wake-up");
        assert_eq!(p.packets_inside(), 0, "every slot freed");
    }

    #[test]
    fn late_polls_do_not_slow_the_link() {
        // Frames arrive every 0.5 ms (faster than the link's 1.2 ms per packet) and the router
        // polls only at arrivals, late for most departures: the transmitter still runs on its
        // own times, so the last departure is where an exact link puts it.
        let mut p = Path::new(&config(10_000_000, droptail(1000)), Direction::Up);
        let f = tcp_frame(1, 2, 1500, Ecn::NotEct, 0x10);
        let mut n_out = 0;
        for i in 0..500u64 {
            p.arrive(&f, i * MS / 2);
            p.poll(i * MS / 2, |_| n_out += 1);
        }
        let out = drain(&mut p, 250 * MS);
        assert_eq!(n_out + out.len(), 500);
        assert_eq!(out.last().unwrap().0, 500 * 1_200_000, "back-to-back from time 0");
        let c = p.snapshot(600 * MS).counters;
        // Departures due between two arrivals wait for the next one: up to 0.5 ms late.
        assert!(c.send_lateness_ns_max > 0 && c.send_lateness_ns_max <= MS / 2, "{c:?}");
    }

    #[test]
    fn drop_tail_overflows_and_counts() {
        let mut p = Path::new(&config(10_000_000, droptail(10)), Direction::Down);
        let f = tcp_frame(1, 2, 1500, Ecn::Ect0, 0x10);
        let arrivals: Vec<_> = (0..20).map(|_| p.arrive(&f, 0)).collect();
        // One in transmission, ten queued, nine dropped: a full buffer drops even ECT packets.
        assert_eq!(arrivals.iter().filter(|a| matches!(a, Arrival::Queued { .. })).count(), 11);
        assert_eq!(arrivals.iter().filter(|a| **a == Arrival::Dropped(Reason::Overflow)).count(), 9);
        let s = p.snapshot(0);
        assert_eq!((s.len_pkts, s.len_bytes, s.enqueued, s.dropped_overflow, s.marked), (10, 15_000, 11, 9, 0));
        assert_eq!(drain(&mut p, 0).len(), 11);
        assert_eq!(p.packets_inside(), 0);
    }

    #[test]
    fn a_threshold_marker_marks_ect_in_the_bytes_and_drops_not_ect() {
        // K = 2 packets: behind the third queued packet every arrival is signalled.
        let aqm = AqmConfig::Threshold(ThresholdParams { ecn: true, k_pkts: Some(2), ..ThresholdParams::default() });
        let mut p = Path::new(&config(10_000_000, QueueConfig { limit_pkts: Some(100), limit_bytes: None, aqm }), Direction::Down);
        let mut want_marked = 0;
        let mut want_dropped = 0;
        for i in 0..40 {
            let ecn = if i % 2 == 0 { Ecn::Ect0 } else { Ecn::NotEct };
            match p.arrive(&tcp_frame(1, 2, 1000, ecn, 0x10), 0) {
                Arrival::Queued { marked: true } => want_marked += 1,
                Arrival::Queued { marked: false } => {}
                Arrival::Dropped(Reason::Forced) => {
                    assert_eq!(ecn, Ecn::NotEct, "only Not-ECT is dropped");
                    want_dropped += 1;
                }
                a => panic!("unexpected {a:?}"),
            }
        }
        assert!(want_marked > 10 && want_dropped > 10, "marked {want_marked}, dropped {want_dropped}");
        let out = drain(&mut p, 0);
        let ce: Vec<_> = out.iter().filter(|(_, f)| parse(f).unwrap().ecn == Ecn::Ce).collect();
        assert_eq!(ce.len(), want_marked);
        assert!(out.iter().all(|(_, f)| checksum_ok(f)), "every header checksum valid");
        let s = p.snapshot(out.last().unwrap().0);
        assert_eq!((s.marked, s.counters.ce_rewrites, s.dropped_forced), (want_marked as u64, want_marked as u64, want_dropped as u64));
    }

    #[test]
    fn red_marks_ect_and_drops_not_ect_under_sustained_overload() {
        // 1.2 times the link rate for 2 s into RED* with ECN, half the packets ECT: RED's average
        // crosses its thresholds; ECT packets are marked (never dropped by a signal), Not-ECT
        // ones dropped, enough to hold the queue below its hard limit.
        // RED* (above_max = "mark"): beyond max_th too, signals mark ECT and drop Not-ECT.
        let red = RedParams { ecn: true, min_th_pkts: 5.0, max_th_pkts: 15.0, above_max: AboveMax::Mark, ..RedParams::default() };
        let q = QueueConfig { limit_pkts: Some(100), limit_bytes: None, aqm: AqmConfig::Red(red) };
        let mut p = Path::new(&config(10_000_000, q), Direction::Down);
        let (mut ect_early_drops, mut not_ect_marks) = (0, 0);
        let mut out = 0;
        for i in 0..2000u64 {
            let ecn = if i % 2 == 0 { Ecn::Ect0 } else { Ecn::NotEct };
            match p.arrive(&tcp_frame(1, 2, 1500, ecn, 0x10), i * 1_000_000) {
                Arrival::Dropped(Reason::Early) if ecn == Ecn::Ect0 => ect_early_drops += 1,
                Arrival::Queued { marked: true } if ecn == Ecn::NotEct => not_ect_marks += 1,
                _ => {}
            }
            p.poll(i * 1_000_000, |f| {
                assert!(checksum_ok(f));
                out += 1
            });
        }
        let ce = drain(&mut p, 2 * 1_000 * MS).iter().filter(|(_, f)| checksum_ok(f) && parse(f).unwrap().ecn == Ecn::Ce).count();
        let s = p.snapshot(3 * 1_000 * MS);
        assert!(s.marked > 50 && s.dropped_early + s.dropped_forced > 50 && s.dropped_overflow == 0, "{s:?}");
        assert_eq!((ect_early_drops, not_ect_marks), (0, 0));
        assert_eq!(s.counters.ce_rewrites, s.marked, "every mark is in the bytes");
        assert_eq!(s.counters.tx_frames, s.delivered_pkts, "every delivered packet was sent");
        assert!(ce > 0 && ce as u64 <= s.marked);
    }

    #[test]
    fn pair_delays_apply_per_direction_and_pair() {
        let mut cfg = config(1_000_000_000, droptail(100));
        cfg.base_delay_ns = 2 * MS;
        cfg.pair_delays = vec![((1, 2), 10 * MS), ((3, 2), 40 * MS)];
        let mut p = Path::new(&cfg, Direction::Down);
        // 100-byte packets take 800 ns at 1 Gb/s.
        let tx = 800;
        for (src, at) in [(3, 0), (1, MS), (5, 2 * MS)] {
            p.arrive(&tcp_frame(src, 2, 100, Ecn::NotEct, 0x10), at);
        }
        let out = drain(&mut p, 0);
        let by_src: Vec<_> = out.iter().map(|(t, f)| (parse(f).unwrap().src, *t)).collect();
        // Ordered by exit time: src 5 (base only), src 1 (+10 ms), src 3 (+40 ms).
        assert_eq!(by_src, vec![(5, 4 * MS + tx), (1, 13 * MS + tx), (3, 42 * MS + tx)]);
    }

    #[test]
    fn arp_bypasses_the_queue_and_malformed_ipv4_is_dropped() {
        let mut p = Path::new(&config(10_000_000, droptail(1)), Direction::Up);
        let f = tcp_frame(1, 2, 1500, Ecn::NotEct, 0x10);
        p.arrive(&f, 0);
        p.arrive(&f, 0);
        assert_eq!(p.arrive(&f, 0), Arrival::Dropped(Reason::Overflow), "the queue is full");
        let mut arp = vec![0xffu8; 42];
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert_eq!(p.arrive(&arp, 0), Arrival::Bypassed);
        let mut sent = Vec::new();
        p.poll(0, |f| sent.push(f.to_vec()));
        assert_eq!(sent, vec![arp], "out at once, ahead of the queued IPv4");
        assert_eq!(p.arrive(&f[..100], 0), Arrival::Malformed);
        assert_eq!(p.arrive(&vec![0u8; SLOT_BYTES + 1], 0), Arrival::Oversize);
        let s = p.snapshot(0);
        assert_eq!((s.counters.bypassed, s.counters.malformed, s.counters.oversize, s.counters.rx_frames), (1, 1, 1, 6));
    }

    #[test]
    fn ecn_plus_makes_chosen_servers_ecn_setup_syn_acks_ect_so_they_are_marked_not_dropped() {
        // A threshold marker at K = 0 signals every arrival behind a queued packet (the first
        // of two is in transmission): a Not-ECT SYN-ACK is dropped, an ECN+ one (made ECT(0))
        // is marked CE instead.
        let aqm = AqmConfig::Threshold(ThresholdParams { ecn: true, k_pkts: Some(0), ..ThresholdParams::default() });
        let mut cfg = config(10_000_000, QueueConfig { limit_pkts: Some(100), limit_bytes: None, aqm });
        cfg.ect_synack_sources = vec![7];
        let mut p = Path::new(&cfg, Direction::Down);
        for _ in 0..2 {
            p.arrive(&tcp_frame(1, 2, 1500, Ecn::NotEct, 0x10), 0);
        }
        let synack_ece = 0x12 | 0x40;
        assert_eq!(p.arrive(&tcp_frame(7, 2, 40, Ecn::NotEct, synack_ece), 0), Arrival::Queued { marked: true }, "ECN+ server");
        assert_eq!(p.arrive(&tcp_frame(8, 2, 40, Ecn::NotEct, synack_ece), 0), Arrival::Dropped(Reason::Forced), "another server");
        assert_eq!(p.arrive(&tcp_frame(7, 2, 40, Ecn::NotEct, 0x12), 0), Arrival::Dropped(Reason::Forced), "a SYN-ACK refusing ECN");
        assert_eq!(p.arrive(&tcp_frame(7, 2, 40, Ecn::NotEct, 0x10), 0), Arrival::Dropped(Reason::Forced), "not a SYN-ACK");
        let out = drain(&mut p, 0);
        assert_eq!(out.len(), 3);
        let synack = &out[2].1;
        assert_eq!((parse(synack).unwrap().src, parse(synack).unwrap().ecn), (7, Ecn::Ce));
        assert!(checksum_ok(synack));
        assert_eq!(p.snapshot(out[2].0).counters.ect_synacks, 1);
    }

    #[test]
    fn slots_are_reused_once_warm() {
        // The pool and frame table stop growing: 10 000 packets through a queue of 5.
        let mut p = Path::new(&config(10_000_000, droptail(5)), Direction::Up);
        let f = tcp_frame(1, 2, 1500, Ecn::NotEct, 0x10);
        for i in 0..10_000u64 {
            p.arrive(&f, i * 1_000_000);
            p.poll(i * 1_000_000, |_| {});
        }
        assert!(p.frames.len.len() <= 64, "slots {}", p.frames.len.len());
    }
}
