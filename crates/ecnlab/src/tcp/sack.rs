//! Selective acknowledgments: the receiver's SACK blocks (RFC 2018, D-SACK per RFC 2883), the
//! sender's scoreboard and the RFC 6675 rules that read it (IsLost, SetPipe, NextSeg), and
//! Proportional Rate Reduction (RFC 6937) for the sending during recovery.
//!
//! Everything counts bytes, as the rest of the endpoint does. Where RFC 6675 counts segments
//! ("DupThresh discontiguous SACKed sequences") the scoreboard counts bytes: a sequence number
//! is lost when more than (DupThresh - 1) SMSS bytes above it are SACKed, the RFC's second
//! criterion, which is the first one for full-sized segments.

pub use crate::packet::{SackBlocks, MAX_BLOCKS};

/// RFC 6675's DupThresh.
pub const DUP_THRESH: u64 = 3;

/// Inserts [s, e) into a sorted list of disjoint ranges, merging overlaps and neighbours.
/// Returns the bytes of [s, e) that were not in the list before.
pub fn insert_range(ranges: &mut Vec<(u64, u64)>, s: u64, e: u64) -> u64 {
    let i = ranges.partition_point(|r| r.1 < s);
    let mut ns = s;
    let mut ne = e;
    let mut covered = 0;
    let mut j = i;
    while j < ranges.len() && ranges[j].0 <= ne {
        covered += ranges[j].1.min(e).saturating_sub(ranges[j].0.max(s));
        ns = ns.min(ranges[j].0);
        ne = ne.max(ranges[j].1);
        j += 1;
    }
    ranges.splice(i..j, std::iter::once((ns, ne)));
    (e - s) - covered
}

/// Appends to `out` the pieces of [s, e) that no range of `ranges` (sorted, disjoint) holds.
fn gaps(ranges: &[(u64, u64)], s: u64, e: u64, out: &mut Vec<(u64, u64)>) {
    let mut at = s;
    for r in &ranges[ranges.partition_point(|r| r.1 <= s)..] {
        if r.0 >= e {
            break;
        }
        if r.0 > at {
            out.push((at, r.0));
        }
        at = at.max(r.1);
    }
    if at < e {
        out.push((at, e));
    }
}

/// The receiver's side: which blocks the next ACK reports.
///
/// RFC 2018 section 4: the first block holds the segment that triggered the ACK, the others
/// repeat the most recently reported blocks; RFC 2883: a duplicate segment is reported first,
/// as a D-SACK block, on the ACK it triggers.
#[derive(Clone, Debug, Default)]
pub struct SackReceiver {
    /// Starts of the out-of-order ranges, most recently changed first.
    recent: [u64; MAX_BLOCKS],
    recent_len: usize,
    /// A duplicate segment to report once.
    dsack: Option<(u64, u64)>,
}

impl SackReceiver {
    /// An out-of-order segment landed in the range that starts at `start` (after merging).
    pub fn on_out_of_order(&mut self, start: u64) {
        let n = self.recent_len;
        let pos = self.recent[..n].iter().position(|&s| s == start).unwrap_or(n.min(MAX_BLOCKS - 1));
        self.recent.copy_within(0..pos, 1);
        self.recent[0] = start;
        self.recent_len = (n + (pos == n) as usize).min(MAX_BLOCKS);
    }

    /// A segment [s, e) that the receiver already had arrived again.
    pub fn on_duplicate(&mut self, s: u64, e: u64) {
        self.dsack = Some((s, e));
    }

    pub fn has_dsack(&self) -> bool {
        self.dsack.is_some()
    }

    /// The blocks for the next ACK, given the out-of-order ranges above `rcv_nxt`. A D-SACK is
    /// reported once.
    pub fn blocks(&mut self, ooo: &[(u64, u64)]) -> SackBlocks {
        let mut out = SackBlocks::EMPTY;
        if let Some(d) = self.dsack.take() {
            out.push(d);
            // RFC 2883 section 4: a duplicate inside an out-of-order range is followed by it.
            if let Some(&r) = ooo.iter().find(|r| r.0 <= d.0 && d.1 <= r.1) {
                out.push(r);
            }
        }
        // Keep only the recent starts whose range is still out of order; ranges may have merged
        // since, so a start is looked up by containment.
        let mut kept = 0;
        for i in 0..self.recent_len {
            let s = self.recent[i];
            let Some(&r) = ooo.iter().find(|r| r.0 <= s && s < r.1) else { continue };
            if self.recent[..kept].iter().any(|&k| r.0 <= k && k < r.1) {
                continue;
            }
            self.recent[kept] = s;
            kept += 1;
            out.push(r);
        }
        self.recent_len = kept;
        out
    }
}

/// The sender's scoreboard: SACKed ranges above the cumulative ACK, and RFC 6675's recovery
/// variables.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// SACKed [start, end) ranges, sorted and disjoint, all above snd_una.
    sacked: Vec<(u64, u64)>,
    /// Bytes in `sacked`.
    pub sacked_bytes: u64,
    /// The bytes the last [`Scoreboard::update`] SACKed that were not SACKed before, as
    /// disjoint [start, end) pieces sorted by start: where RACK looks for newly SACKed segments.
    pub newly_sacked: Vec<(u64, u64)>,
    /// RFC 6675 HighRxt: one past the highest byte retransmitted in this recovery.
    pub high_rxt: u64,
    /// RFC 6675 RescueRxt: the recovery point when the rescue retransmission went out.
    pub rescue_rxt: u64,
    /// D-SACK blocks received (RFC 2883).
    pub dsacks: u32,
    /// Losses are marked by RACK (RFC 8985) in `lost` instead of inferred by IsLost, and
    /// NextSeg sends only lost segments and new data (no rule 3 or rescue: TLP replaces it).
    pub explicit_loss: bool,
    /// RACK's marks: [start, end) ranges declared lost and not retransmitted since.
    lost: Vec<(u64, u64)>,
}

/// What [`Scoreboard::next_seg`] chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextSeg {
    /// Retransmit [start, start + len) (rules 1, 3 and 4).
    Retransmit { start: u64, len: u64, rescue: bool },
    /// Send new data (rule 2).
    NewData,
    Nothing,
}

impl Scoreboard {
    /// RACK declared [s, e) lost.
    pub fn mark_lost(&mut self, s: u64, e: u64) {
        insert_range(&mut self.lost, s, e);
    }

    /// [s, e) was retransmitted: no longer counted as lost. In place (no allocation unless a
    /// lost range is split in two).
    pub fn retransmitted(&mut self, s: u64, e: u64) {
        if !self.explicit_loss {
            return;
        }
        let mut i = 0;
        while i < self.lost.len() {
            let (a, b) = self.lost[i];
            if b <= s || a >= e {
                i += 1; // untouched
                continue;
            }
            match (a < s, b > e) {
                (true, true) => {
                    self.lost[i] = (a, s);
                    self.lost.insert(i + 1, (e, b));
                    i += 2;
                }
                (true, false) => {
                    self.lost[i] = (a, s);
                    i += 1;
                }
                (false, true) => {
                    self.lost[i] = (e, b);
                    i += 1;
                }
                (false, false) => {
                    self.lost.remove(i);
                }
            }
        }
    }

    /// Forgets RACK's marks (after a timeout everything unSACKed is resent anyway).
    pub fn clear_lost(&mut self) {
        self.lost.clear();
    }

    /// Takes an ACK's blocks; returns the bytes newly SACKed. Blocks below `snd_una` or already
    /// SACKed are D-SACKs (counted); parts outside [snd_una, snd_max) are ignored.
    pub fn update(&mut self, blocks: &[(u64, u64)], snd_una: u64, snd_max: u64) -> u64 {
        let mut new = 0;
        self.newly_sacked.clear();
        for (i, &(s, e)) in blocks.iter().enumerate() {
            let dsack = i == 0 && (e <= snd_una || self.covers(s, e));
            if dsack {
                self.dsacks += 1;
                continue;
            }
            let (s, e) = (s.max(snd_una), e.min(snd_max));
            if s < e {
                gaps(&self.sacked, s, e, &mut self.newly_sacked);
                new += insert_range(&mut self.sacked, s, e);
            }
        }
        self.newly_sacked.sort_unstable();
        self.sacked_bytes += new;
        new
    }

    /// Whether [s, e) is all SACKed.
    pub fn covers(&self, s: u64, e: u64) -> bool {
        // The ranges are sorted and disjoint: the only candidate is the first that reaches e.
        let i = self.sacked.partition_point(|r| r.1 < e);
        self.sacked.get(i).is_some_and(|r| r.0 <= s)
    }

    /// The cumulative ACK moved to `snd_una`: forget what it covers.
    pub fn advance(&mut self, snd_una: u64) {
        let mut removed = 0;
        let mut k = 0;
        while k < self.sacked.len() && self.sacked[k].0 < snd_una {
            let (s, e) = self.sacked[k];
            if e <= snd_una {
                removed += e - s;
                k += 1;
            } else {
                removed += snd_una - s;
                self.sacked[k].0 = snd_una;
                break;
            }
        }
        self.sacked.drain(..k);
        self.sacked_bytes -= removed;
        self.lost.retain(|r| r.1 > snd_una);
        if let Some(r) = self.lost.first_mut() {
            r.0 = r.0.max(snd_una);
        }
        self.high_rxt = self.high_rxt.max(snd_una);
    }

    /// The SACKed range that contains `seq`, if any.
    pub fn sacked_at(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.sacked.partition_point(|r| r.1 <= seq);
        self.sacked.get(i).copied().filter(|r| r.0 <= seq)
    }

    /// The first SACKed byte at or above `seq` (`u64::MAX` if none).
    fn next_sacked(&self, seq: u64) -> u64 {
        let i = self.sacked.partition_point(|r| r.1 <= seq);
        self.sacked.get(i).map_or(u64::MAX, |r| r.0.max(seq))
    }

    /// Length of the retransmission that starts at the unSACKed byte `seq`: up to one SMSS,
    /// stopping at the next SACKed byte or at `snd_max`.
    pub fn hole_len(&self, seq: u64, snd_max: u64, mss: u64) -> u64 {
        mss.min(self.next_sacked(seq) - seq).min(snd_max - seq)
    }

    /// Highest SACKed byte + 1 (0 if nothing is SACKed).
    pub fn high_sacked(&self) -> u64 {
        self.sacked.last().map_or(0, |r| r.1)
    }

    /// RFC 6675 IsLost as a boundary: every unSACKed byte below the returned sequence number is
    /// lost (more than (DupThresh - 1) SMSS bytes above it are SACKed), none at or above it.
    pub fn lost_end(&self, snd_una: u64, mss: u64) -> u64 {
        let threshold = (DUP_THRESH - 1) * mss;
        let mut above = 0;
        for &(s, e) in self.sacked.iter().rev() {
            above += e - s;
            if above > threshold {
                return s;
            }
        }
        snd_una
    }

    /// UnSACKed bytes in [a, b).
    fn unsacked(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            return 0;
        }
        let sacked: u64 = self.sacked.iter().map(|r| r.1.min(b).saturating_sub(r.0.max(a))).sum();
        (b - a) - sacked
    }

    /// RFC 6675 SetPipe: bytes believed in the network. An unSACKed byte counts once if it is
    /// not lost and once more if it was retransmitted in this recovery.
    pub fn pipe(&self, snd_una: u64, snd_max: u64, mss: u64) -> u64 {
        if self.explicit_loss {
            // RACK: what is in flight, less what is marked lost (retransmissions unmark it).
            let lost: u64 = self.lost.iter().map(|&(a, b)| self.unsacked(a, b)).sum();
            return self.unsacked(snd_una, snd_max) - lost;
        }
        let lost_end = self.lost_end(snd_una, mss).max(snd_una);
        self.unsacked(lost_end, snd_max) + self.unsacked(snd_una, self.high_rxt.min(snd_max))
    }

    /// RFC 6675 NextSeg. `new_data`: unsent data is available and the receiver's window allows
    /// it.
    pub fn next_seg(&self, snd_una: u64, snd_max: u64, mss: u64, new_data: bool) -> NextSeg {
        if self.explicit_loss {
            for &(a, b) in &self.lost {
                let mut s = a.max(snd_una);
                while s < b {
                    match self.sacked_at(s) {
                        Some(r) => s = r.1,
                        None => return NextSeg::Retransmit { start: s, len: self.hole_len(s, b, mss), rescue: false },
                    }
                }
            }
            return if new_data { NextSeg::NewData } else { NextSeg::Nothing };
        }
        let from = self.high_rxt.max(snd_una);
        let lost_end = self.lost_end(snd_una, mss);
        let first_hole = |limit: u64| -> Option<(u64, u64)> {
            let mut s = from;
            while s < limit {
                match self.sacked_at(s) {
                    Some(r) => s = r.1,
                    None => return Some((s, self.hole_len(s, snd_max, mss))),
                }
            }
            None
        };
        // (1) the first lost byte above HighRxt.
        if let Some((start, len)) = first_hole(lost_end) {
            return NextSeg::Retransmit { start, len, rescue: false };
        }
        // (2) new data.
        if new_data {
            return NextSeg::NewData;
        }
        // (3) an unSACKed byte above HighRxt below the highest SACKed one.
        if let Some((start, len)) = first_hole(self.high_sacked()) {
            return NextSeg::Retransmit { start, len, rescue: false };
        }
        // (4) the rescue retransmission, once per recovery (HighACK > RescueRxt; the caller
        // then sets RescueRxt to RecoveryPoint): up to one segment that ends at the highest
        // unSACKed byte.
        if snd_una > self.rescue_rxt && snd_max > snd_una {
            let mut top = snd_max;
            while let Some(r) = self.sacked_at(top - 1) {
                top = r.0;
            }
            if top > snd_una {
                let below = self.sacked.iter().rev().find(|r| r.1 < top).map_or(snd_una, |r| r.1);
                let start = top.saturating_sub(mss).max(below).max(snd_una);
                return NextSeg::Retransmit { start, len: top - start, rescue: true };
            }
        }
        NextSeg::Nothing
    }
}

/// Proportional Rate Reduction (RFC 6937, with the slow-start reduction bound PRR-SSRB): how
/// much a sender in loss recovery may send on each ACK, so that the flight falls smoothly to
/// ssthresh over one round trip and then grows back to it as slow start would.
///
/// Amounts are bytes, rounded up to whole segments where the RFC rounds up (its CEIL), as
/// Linux counts segments (net/ipv4/tcp_input.c, `tcp_cwnd_reduction`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prr {
    /// RFC 6937 prr_delivered: bytes delivered to the receiver since recovery began.
    pub delivered: u64,
    /// RFC 6937 prr_out: bytes sent since recovery began.
    pub out: u64,
    /// RFC 6937 RecoverFS: FlightSize when recovery began.
    pub recover_fs: u64,
}

impl Prr {
    pub fn start(recover_fs: u64) -> Prr {
        Prr { delivered: 0, out: 0, recover_fs: recover_fs.max(1) }
    }

    /// An ACK in recovery delivered `delivered` bytes (cumulatively or by SACK); `pipe` is
    /// RFC 6675's after the ACK. Returns sndcnt, the bytes that may be sent now.
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, ssthresh: u64, mss: u64) -> u64 {
        self.delivered += delivered;
        if pipe > ssthresh {
            // Proportional part: CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out.
            let target = (self.delivered as u128 * ssthresh as u128).div_ceil(self.recover_fs as u128) as u64;
            (target.div_ceil(mss) * mss).saturating_sub(self.out)
        } else {
            // PRR-SSRB: grow back to ssthresh no faster than slow start.
            let limit = self.delivered.saturating_sub(self.out).max(delivered) + mss;
            (ssthresh - pipe).min(limit)
        }
    }

    pub fn on_send(&mut self, bytes: u64) {
        self.out += bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn retransmitted_cuts_lost_ranges_as_a_rebuilt_list_would() {
        // Reference: the list rebuilt, each range's parts before `s` and after `e` kept.
        fn rebuilt(lost: &[(u64, u64)], s: u64, e: u64) -> Vec<(u64, u64)> {
            let mut out = Vec::new();
            for &(a, b) in lost {
                if a < s {
                    out.push((a, b.min(s)));
                }
                if b > e {
                    out.push((a.max(e), b));
                }
            }
            out
        }
        let mut rng = crate::engine::Rng::from_seed(11);
        let mut splits = 0;
        for _ in 0..2000 {
            let mut board = Scoreboard { explicit_loss: true, ..Scoreboard::default() };
            for _ in 0..rng.below(6) {
                let a = rng.below(50) * 100;
                board.mark_lost(a, a + (1 + rng.below(8)) * 100);
            }
            let before = board.lost.clone();
            let s = rng.below(60) * 100;
            let e = s + (1 + rng.below(10)) * 100;
            board.retransmitted(s, e);
            assert_eq!(board.lost, rebuilt(&before, s, e), "lost {before:?}, retransmitted [{s}, {e})");
            splits += (board.lost.len() > before.len()) as u32;
        }
        assert!(splits > 0, "the random cases include a range split in two");
    }

    #[test]
    fn insert_range_merges_and_counts_new_bytes() {
        let mut r = vec![];
        assert_eq!(insert_range(&mut r, 10, 20), 10);
        assert_eq!(insert_range(&mut r, 30, 40), 10);
        assert_eq!(insert_range(&mut r, 15, 35), 10);
        assert_eq!(r, vec![(10, 40)]);
        assert_eq!(insert_range(&mut r, 40, 50), 10); // adjacent ranges merge
        assert_eq!(insert_range(&mut r, 12, 18), 0);
        assert_eq!(r, vec![(10, 50)]);
    }

    #[test]
    fn receiver_reports_the_triggering_block_first_then_recent_ones() {
        let mut rx = SackReceiver::default();
        let mut ooo = vec![];
        for &(s, e) in &[(3000, 4000), (6000, 7000), (9000, 10000)] {
            insert_range(&mut ooo, s, e);
            rx.on_out_of_order(s);
        }
        assert_eq!(rx.blocks(&ooo).as_slice(), &[(9000, 10000), (6000, 7000), (3000, 4000)]);
        // A segment extending the first range makes it the most recent.
        insert_range(&mut ooo, 4000, 5000);
        rx.on_out_of_order(3000);
        assert_eq!(rx.blocks(&ooo).as_slice(), &[(3000, 5000), (9000, 10000), (6000, 7000)]);
        // Five ranges: only the four most recent are reported.
        for &(s, e) in &[(12000, 13000), (15000, 16000)] {
            insert_range(&mut ooo, s, e);
            rx.on_out_of_order(s);
        }
        let b = rx.blocks(&ooo);
        assert_eq!(b.as_slice(), &[(15000, 16000), (12000, 13000), (3000, 5000), (9000, 10000)]);
        assert_eq!(b.option_bytes(), 36);
        // Ranges that the cumulative ACK passed are no longer reported.
        let b = rx.blocks(&ooo[3..]);
        assert_eq!(b.as_slice(), &[(15000, 16000), (12000, 13000)]);
    }

    #[test]
    fn a_duplicate_is_reported_once_as_dsack_first() {
        let mut rx = SackReceiver::default();
        let mut ooo = vec![];
        insert_range(&mut ooo, 5000, 7000);
        rx.on_out_of_order(5000);
        rx.on_duplicate(5000, 6000); // inside an out-of-order range: that range follows it
        assert_eq!(rx.blocks(&ooo).as_slice(), &[(5000, 6000), (5000, 7000)]);
        rx.on_duplicate(1000, 2000); // below the cumulative ACK
        assert_eq!(rx.blocks(&ooo).as_slice(), &[(1000, 2000), (5000, 7000)]);
        assert_eq!(rx.blocks(&ooo).as_slice(), &[(5000, 7000)]);
    }

    /// 10 segments outstanding from 1; `sacked` segment indices are SACKed.
    fn board(sacked: &[u64]) -> Scoreboard {
        let mut sb = Scoreboard::default();
        for &i in sacked {
            let s = 1 + i * MSS;
            sb.update(&[(s, s + MSS)], 1, 1 + 10 * MSS);
        }
        sb
    }

    #[test]
    fn is_lost_needs_more_than_two_segments_sacked_above() {
        let sb = board(&[1, 2]);
        assert_eq!(sb.lost_end(1, MSS), 1); // two above: not lost
        let sb = board(&[1, 2, 3]);
        assert_eq!(sb.lost_end(1, MSS), 1 + MSS); // three above segment 0: lost
        let sb = board(&[2, 5, 8]);
        assert_eq!(sb.lost_end(1, MSS), 1 + 2 * MSS); // segments 0, 1 lost; 3, 4, 6, 7 not
    }

    #[test]
    fn pipe_counts_unsacked_not_lost_and_retransmitted_bytes() {
        let una = 1;
        let max = 1 + 10 * MSS;
        let mut sb = board(&[1, 2, 3]);
        // Segment 0 lost, 1-3 SACKed, 4-9 in flight.
        assert_eq!(sb.pipe(una, max, MSS), 6 * MSS);
        sb.high_rxt = 1 + MSS; // segment 0 retransmitted
        assert_eq!(sb.pipe(una, max, MSS), 7 * MSS);
    }

    #[test]
    fn next_seg_follows_rfc6675_rules_in_order() {
        let una = 1;
        let max = 1 + 10 * MSS;
        let mut sb = board(&[2, 5, 6, 7]);
        // Rule 1: segments 0, 1, 3, 4 are lost (three or more SACKed above each).
        assert_eq!(sb.next_seg(una, max, MSS, true), NextSeg::Retransmit { start: 1, len: MSS, rescue: false });
        sb.high_rxt = 1 + 2 * MSS;
        assert_eq!(sb.next_seg(una, max, MSS, true), NextSeg::Retransmit { start: 1 + 3 * MSS, len: MSS, rescue: false });
        sb.high_rxt = 1 + 5 * MSS;
        // Rule 2 before rule 3: segments 8, 9 are not lost.
        assert_eq!(sb.next_seg(una, max, MSS, true), NextSeg::NewData);
        // Rule 3 needs an unSACKed byte below the highest SACKed one: 8 and 9 lie above it.
        assert_eq!(sb.next_seg(una, max, MSS, false), NextSeg::Retransmit { start: 1 + 9 * MSS, len: MSS, rescue: true });
        sb.rescue_rxt = max - 1; // RescueRxt = RecoveryPoint, the highest byte sent
        assert_eq!(sb.next_seg(una, max, MSS, false), NextSeg::Nothing);
    }

    #[test]
    fn cumulative_ack_prunes_the_scoreboard() {
        let mut sb = board(&[1, 2, 3]);
        assert_eq!(sb.sacked_bytes, 3 * MSS);
        sb.advance(1 + 2 * MSS + 500);
        assert_eq!(sb.sacked_bytes, MSS + 500);
        assert_eq!(sb.sacked_at(1 + 3 * MSS), Some((1 + 2 * MSS + 500, 1 + 4 * MSS)));
        // A block below snd_una is a D-SACK and adds nothing.
        assert_eq!(sb.update(&[(1, 1 + MSS)], 1 + 2 * MSS + 500, 1 + 10 * MSS), 0);
        assert_eq!(sb.dsacks, 1);
    }

    #[test]
    fn prr_sends_in_proportion_then_grows_back_by_slow_start() {
        // RecoverFS 20 segments, ssthresh 10: one segment per two delivered while pipe > ssthresh.
        let mut prr = Prr::start(20 * MSS);
        let mut sent = vec![];
        let mut pipe = 19 * MSS;
        for _ in 0..10 {
            let n = prr.on_ack(MSS, pipe, 10 * MSS, MSS);
            prr.on_send(n);
            sent.push(n / MSS);
            pipe = pipe - MSS + n;
        }
        assert_eq!(sent, vec![1, 0, 1, 0, 1, 0, 1, 0, 1, 0], "{sent:?}");
        // Below ssthresh (after heavy losses): at most DeliveredData + 1 SMSS per ACK beyond
        // what was banked, never above ssthresh - pipe.
        let mut prr = Prr::start(20 * MSS);
        prr.on_send(MSS);
        assert_eq!(prr.on_ack(MSS, 4 * MSS, 10 * MSS, MSS), 2 * MSS);
        assert_eq!(prr.on_ack(MSS, 9 * MSS + 500, 10 * MSS, MSS), 500);
    }

    #[test]
    fn covers_is_containment_in_one_range() {
        let mut b = Scoreboard::default();
        for (s, e) in [(10, 20), (30, 40), (50, 60)] {
            b.update(&[(s, e)], 0, 100);
        }
        for s in 0..70 {
            for e in s..70 {
                let want = [(10, 20), (30, 40), (50, 60)].iter().any(|&(a, z)| a <= s && e <= z);
                assert_eq!(b.covers(s, e), want, "[{s}, {e})");
            }
        }
    }

    #[test]
    fn an_update_names_the_bytes_it_sacked_anew() {
        let mut b = Scoreboard::default();
        b.update(&[(30, 40), (10, 20)], 0, 100);
        assert_eq!(b.newly_sacked, vec![(10, 20), (30, 40)], "sorted by start");
        // A block over both ranges and beyond: the gap between them and the part above.
        b.update(&[(15, 50)], 0, 100);
        assert_eq!(b.newly_sacked, vec![(20, 30), (40, 50)]);
        b.update(&[(12, 18)], 0, 100);
        assert!(b.newly_sacked.is_empty(), "a D-SACK adds nothing");
        b.update(&[(60, 70), (5, 12), (45, 65)], 0, 100);
        assert_eq!(b.newly_sacked, vec![(5, 10), (50, 60), (60, 70)], "(60, 65) came with the first block");
        assert_eq!(b.sacked_bytes, 70 - 5);
    }
}
