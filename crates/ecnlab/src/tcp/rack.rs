//! RACK-TLP loss detection (RFC 8985), Linux's default since 4.18 (`net.ipv4.tcp_recovery`
//! bit 1, `tcp_early_retrans` = 3 for TLP).
//!
//! RACK ("recent acknowledgment") declares a segment lost when a segment sent after it has been
//! delivered and more than RACK.rtt + RACK.reo_wnd has passed since it was sent; TLP ("tail
//! loss probe") sends one segment when no ACK has come for a probe timeout (about two smoothed
//! RTTs), so that a loss at the tail of a flight produces SACK feedback instead of waiting for
//! the retransmission timer.
//!
//! The network model never reorders packets of one flow, so RACK's reordering window only
//! matters through its initial value (min_RTT / 4 until reordering is seen; RFC 8985 6.2 sets it
//! to 0 during recovery and once DupThresh segments are SACKed). D-SACKs still widen it as the
//! RFC says (`reo_wnd_mult`), since a spurious retransmission can produce one.

use std::collections::VecDeque;

use super::rtt::RttInfo;
use crate::engine::SimTime;

/// RFC 8985 7.2: WCDelAckT, the worst-case delayed-ACK time added to a probe timeout when one
/// segment is in flight.
pub const WC_DEL_ACK: SimTime = 200_000_000;

/// One segment in flight, as RACK tracks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentSeg {
    pub start: u64,
    pub end: u64,
    /// Its latest transmission.
    pub xmit: SimTime,
    pub retransmitted: bool,
    pub sacked: bool,
    /// Marked lost and not yet retransmitted since.
    pub lost: bool,
}

/// RACK's state (RFC 8985 section 6).
#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// Segments in flight (above snd_una), in sequence order.
    segs: VecDeque<SentSeg>,
    /// (time, start) of every transmission, in the order sent (so by time): the loss search
    /// walks it from the oldest. An entry whose segment has since been delivered, marked lost
    /// or sent again is stale, and is dropped when the search meets it at the front.
    by_time: VecDeque<(SimTime, u64)>,
    /// RACK.xmit_ts, RACK.end_seq: the most recently sent segment known delivered.
    xmit_ts: SimTime,
    end_seq: u64,
    /// RACK.rtt: the RTT of that segment.
    rtt: SimTime,
    /// RACK.fack: the highest end of a delivered segment.
    fack: u64,
    pub reordering_seen: bool,
    reo_wnd_mult: u32,
    reo_wnd_persist: i32,
    dsack_round: Option<u64>,
}

impl Rack {
    pub fn new() -> Rack {
        Rack { reo_wnd_mult: 1, ..Rack::default() }
    }

    /// A segment [start, end) was sent at `now` (new data, or a retransmission).
    pub fn on_send(&mut self, start: u64, end: u64, now: SimTime, retransmission: bool) {
        if retransmission {
            let i = self.segs.partition_point(|s| s.end <= start);
            if let Some(s) = self.segs.get_mut(i).filter(|s| s.start <= start) {
                s.xmit = now;
                s.retransmitted = true;
                s.lost = false;
                self.by_time.push_back((now, s.start));
            }
        } else if self.segs.back().is_none_or(|s| s.end <= start) {
            self.segs.push_back(SentSeg { start, end, xmit: now, retransmitted: false, sacked: false, lost: false });
            self.by_time.push_back((now, start));
        }
    }

    /// An ACK arrived at `now`: the cumulative ACK `snd_una` and, through `is_sacked`, the
    /// scoreboard after it. Updates RACK.xmit_ts / end_seq / rtt from every segment newly
    /// delivered (RFC 8985 6.2 step 2, with its guard against the ACK of an original
    /// transmission being taken for the retransmission's: an RTT below min_rtt is ignored) and
    /// notes reordering (step 3). `newly_sacked`: the bytes this ACK SACKed anew
    /// ([`super::sack::Scoreboard::newly_sacked`], sorted by start); only segments that overlap
    /// them can have become SACKed (the scoreboard's ranges are maximal), and they are visited in
    /// sequence order, as a search of every segment would.
    pub fn on_ack(&mut self, snd_una: u64, newly_sacked: &[(u64, u64)], is_sacked: impl Fn(u64, u64) -> bool, now: SimTime, min_rtt: SimTime) {
        let update = |rack: &mut Rack, s: &SentSeg| {
            let rtt = now - s.xmit;
            if s.retransmitted && rtt < min_rtt {
                return;
            }
            if !s.retransmitted && s.end < rack.fack {
                rack.reordering_seen = true;
            }
            rack.fack = rack.fack.max(s.end);
            rack.rtt = rtt;
            if (s.xmit, s.end) > (rack.xmit_ts, rack.end_seq) {
                rack.xmit_ts = s.xmit;
                rack.end_seq = s.end;
            }
        };
        while let Some(s) = self.segs.front().copied().filter(|s| s.end <= snd_una) {
            self.segs.pop_front();
            if !s.sacked {
                update(self, &s);
            }
        }
        for &(a, b) in newly_sacked {
            let mut i = self.segs.partition_point(|s| s.end <= a);
            while let Some(s) = self.segs.get(i).copied().filter(|s| s.start < b) {
                if !s.sacked && is_sacked(s.start, s.end) {
                    self.segs[i].sacked = true;
                    self.segs[i].lost = false;
                    update(self, &s);
                }
                i += 1;
            }
        }
    }

    /// RFC 8985 6.2 step 4 (RACK_update_reo_wnd): D-SACK widening, and the window itself.
    /// `(snd_una, snd_nxt)`: the sender's; `sacked_segs`: segments SACKed.
    pub fn reo_wnd(&mut self, dsack: bool, (snd_una, snd_nxt): (u64, u64), in_recovery: bool, sacked_segs: u64, rtt: RttInfo) -> SimTime {
        let RttInfo { srtt, min_rtt, .. } = rtt;
        if self.dsack_round.is_some_and(|r| snd_una >= r) {
            self.dsack_round = None;
        }
        if self.dsack_round.is_none() && dsack {
            self.dsack_round = Some(snd_nxt);
            self.reo_wnd_mult += 1;
            self.reo_wnd_persist = 16;
        }
        if !self.reordering_seen && (in_recovery || sacked_segs >= super::sack::DUP_THRESH) {
            return 0;
        }
        (self.reo_wnd_mult as u64 * min_rtt / 4).min(srtt)
    }

    /// Recovery ended: the D-SACK widening decays (RFC 8985 6.2 step 4).
    pub fn on_recovery_exit(&mut self) {
        self.reo_wnd_persist -= 1;
        if self.reo_wnd_persist <= 0 {
            self.reo_wnd_mult = 1;
        }
    }

    /// RFC 8985 6.2 step 5 (RACK_detect_loss): marks lost every segment sent before the most
    /// recently delivered one whose time is up, calling `lost(start, end)` for each newly
    /// marked (in the order they were sent); returns when the reordering timer must fire for
    /// the others (None: not needed).
    pub fn detect_loss(&mut self, now: SimTime, reo_wnd: SimTime, mut lost: impl FnMut(u64, u64)) -> Option<SimTime> {
        // The walk goes from the oldest transmission: a deadline (its time + RACK.rtt +
        // reo_wnd) grows with it, so the first segment whose time is not up gives the timer
        // and none after it can be lost. Segments sent at the most recently delivered one's time
        // are ordered by their end (RFC 8985's RACK_sent_after), so the walk passes over those
        // not before it.
        let newest = (self.xmit_ts, self.end_seq);
        let mut k = 0;
        while let Some(&(xmit, start)) = self.by_time.get(k) {
            let i = self.segs.partition_point(|s| s.end <= start);
            let current = self.segs.get(i).filter(|s| s.start == start && s.xmit == xmit && !s.sacked && !s.lost);
            let Some(&s) = current else {
                // Stale: delivered, marked lost, or sent again since.
                if k == 0 {
                    self.by_time.pop_front();
                } else {
                    k += 1;
                }
                continue;
            };
            if xmit > newest.0 {
                break;
            }
            if (xmit, s.end) >= newest {
                k += 1; // sent at the same time, not before
                continue;
            }
            let deadline = xmit + self.rtt + reo_wnd;
            if deadline > now {
                return Some(deadline);
            }
            self.segs[i].lost = true;
            lost(s.start, s.end);
        }
        None
    }

    /// After a retransmission timeout every segment not SACKed counts as lost (RFC 8985 6.3).
    pub fn mark_all_lost(&mut self) {
        for s in self.segs.iter_mut().filter(|s| !s.sacked) {
            s.lost = true;
        }
    }

    /// The highest segment in flight not SACKed (TLP's retransmission probe).
    pub fn last_unsacked(&self) -> Option<SentSeg> {
        self.segs.iter().rev().find(|s| !s.sacked).copied()
    }
}

/// TLP's state (RFC 8985 section 7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tlp {
    /// TLP.end_seq: snd_max when the probe went (None: no probe outstanding).
    pub end_seq: Option<u64>,
    /// TLP.is_retrans: the probe retransmitted the last segment.
    pub is_retrans: bool,
    /// A D-SACK arrived since the probe: its retransmission was not needed.
    pub dsacked: bool,
}

/// RFC 8985 7.2: the probe timeout. `flight_segs`: segments in flight; `srtt` None before the
/// first RTT sample.
pub fn probe_timeout(srtt: Option<SimTime>, flight_segs: u64) -> SimTime {
    match srtt {
        None => 1_000_000_000,
        Some(srtt) if flight_segs <= 1 => 2 * srtt + WC_DEL_ACK,
        Some(srtt) => 2 * srtt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    fn info(min_rtt_ms: u64, srtt_ms: u64) -> RttInfo {
        RttInfo { srtt: srtt_ms * MS, min_rtt: min_rtt_ms * MS, ..RttInfo::default() }
    }

    #[test]
    fn a_segment_sent_before_a_delivered_one_is_lost_after_rtt_plus_reo_wnd() {
        let mut rack = Rack::new();
        for i in 0..4u64 {
            rack.on_send(1 + i * 1000, 1001 + i * 1000, i * MS, false);
        }
        // Segment 2 (sent at 1 ms) is SACKed 101 ms after being sent: segment 1, sent at 0,
        // has waited RACK.rtt (100 ms) and is lost once reo_wnd has passed too.
        rack.on_ack(1, &[(1001, 2001)], |s, _| s == 1001, 101 * MS, 100 * MS);
        let mut lost = vec![];
        let timer = rack.detect_loss(101 * MS, 25 * MS, |s, e| lost.push((s, e)));
        assert!(lost.is_empty());
        assert_eq!(timer, Some(125 * MS), "xmit 0 + rtt 100 + reo_wnd 25");
        let timer = rack.detect_loss(125 * MS, 25 * MS, |s, e| lost.push((s, e)));
        assert_eq!((lost, timer), (vec![(1, 1001)], None));
        // Segments 3 and 4 were sent after the delivered one: not lost, however late.
        let mut more = vec![];
        rack.detect_loss(10_000 * MS, 0, |s, e| more.push((s, e)));
        assert!(more.is_empty());
    }

    #[test]
    fn an_ack_of_the_original_is_not_taken_for_the_retransmission() {
        let mut rack = Rack::new();
        rack.on_send(1, 1001, 0, false);
        rack.on_send(1001, 2001, 0, false);
        rack.on_send(1, 1001, 90 * MS, true); // retransmitted at 90 ms
        // Cumulatively ACKed at 100 ms: 10 ms after the retransmission, below min_rtt (80 ms):
        // it was the original's ACK; RACK keeps no state from it.
        rack.on_ack(1001, &[], |_, _| false, 100 * MS, 80 * MS);
        assert_eq!((rack.xmit_ts, rack.rtt), (0, 0));
    }

    #[test]
    fn reo_wnd_is_a_quarter_min_rtt_until_recovery_or_three_sacked_and_widens_on_dsack() {
        let mut rack = Rack::new();
        assert_eq!(rack.reo_wnd(false, (1, 10_001), false, 0, info(100, 120)), 25 * MS);
        assert_eq!(rack.reo_wnd(false, (1, 10_001), true, 0, info(100, 120)), 0);
        assert_eq!(rack.reo_wnd(false, (1, 10_001), false, 3, info(100, 120)), 0);
        rack.reordering_seen = true;
        assert_eq!(rack.reo_wnd(true, (1, 10_001), true, 3, info(100, 120)), 50 * MS);
        assert_eq!(rack.reo_wnd(true, (5001, 10_001), true, 3, info(100, 120)), 50 * MS, "once per round");
        assert_eq!(rack.reo_wnd(false, (1, 10_001), true, 3, info(400, 120)), 120 * MS, "at most SRTT");
    }

    #[test]
    fn probe_timeout_is_two_srtt_plus_the_delayed_ack_time_for_a_single_segment() {
        assert_eq!(probe_timeout(Some(50 * MS), 10), 100 * MS);
        assert_eq!(probe_timeout(Some(50 * MS), 1), 300 * MS);
        assert_eq!(probe_timeout(None, 3), 1000 * MS);
    }

    /// RACK's loss search as RFC 8985 states it, over every segment in flight.
    fn reference_loss(rack: &Rack, now: SimTime, reo_wnd: SimTime) -> (Vec<(u64, u64)>, Option<SimTime>) {
        let mut lost = vec![];
        let mut timeout: Option<SimTime> = None;
        for s in rack.segs.iter().filter(|s| !s.sacked && !s.lost && (s.xmit, s.end) < (rack.xmit_ts, rack.end_seq)) {
            let deadline = s.xmit + rack.rtt + reo_wnd;
            if deadline <= now {
                lost.push((s.start, s.end));
            } else {
                timeout = Some(timeout.map_or(deadline, |t| t.min(deadline)));
            }
        }
        (lost, timeout)
    }

    #[test]
    fn the_searches_that_stop_early_find_what_full_scans_find() {
        use crate::engine::Rng;
        use crate::tcp::sack::Scoreboard;
        for seed in 0..200 {
            let mut rng = Rng::from_seed(seed);
            let (mut rack, mut board) = (Rack::new(), Scoreboard::default());
            let (mut now, mut snd_una, mut snd_max) = (0, 0, 0);
            for _ in 0..300 {
                now += rng.below(3 * MS);
                match rng.below(4) {
                    0 | 1 => {
                        rack.on_send(snd_max, snd_max + 1000, now, false);
                        snd_max += 1000;
                    }
                    2 if snd_max > snd_una => {
                        // Retransmit a segment in flight.
                        let seq = snd_una + rng.below((snd_max - snd_una) / 1000) * 1000;
                        rack.on_send(seq, seq + 1000, now, true);
                    }
                    _ if snd_max > snd_una => {
                        // An ACK: the cumulative point moves, or a block is SACKed.
                        if rng.below(2) == 0 {
                            snd_una += rng.below((snd_max - snd_una) / 1000 + 1) * 1000;
                            board.advance(snd_una);
                        } else {
                            let seq = snd_una + rng.below((snd_max - snd_una) / 1000) * 1000;
                            board.update(&[(seq, seq + 1000 * (1 + rng.below(3)))], snd_una, snd_max);
                        }
                        let mut full = rack.clone();
                        let b = &board;
                        rack.on_ack(snd_una, &b.newly_sacked, |s, e| b.covers(s, e), now, 0);
                        // The reference visits every segment.
                        full.on_ack(snd_una, &[(0, u64::MAX)], |s, e| b.covers(s, e), now, 0);
                        assert_eq!(rack.segs, full.segs, "seed {seed}: SACKed segments");
                        for s in &rack.segs {
                            assert_eq!(s.sacked, b.covers(s.start, s.end), "seed {seed}: [{}, {}) SACKed", s.start, s.end);
                        }
                        assert_eq!((rack.xmit_ts, rack.end_seq, rack.rtt), (full.xmit_ts, full.end_seq, full.rtt));
                        let reo_wnd = rng.below(5 * MS);
                        let want = reference_loss(&rack, now, reo_wnd);
                        let mut lost = vec![];
                        let timeout = rack.detect_loss(now, reo_wnd, |s, e| lost.push((s, e)));
                        lost.sort_unstable(); // found in the order sent
                        assert_eq!((lost, timeout), want, "seed {seed}: losses and timer");
                    }
                    _ => {}
                }
            }
        }
    }
}
