//! Slow-start exit before loss, shared by the controllers of `cc` and `cubic`
//! (`tcp.hystart`): HyStart as Linux's CUBIC runs it (net/ipv4/tcp_cubic.c, read from a
//! Linux 6.17-rc3 tree: `hystart_update`, `cubictcp_acked`, `bictcp_hystart_reset`), and
//! HyStart++ (RFC 9406) for any controller.
//!
//! Both watch per-ACK RTT samples (the send time of the newest segment an ACK acknowledges to
//! its arrival, never from retransmitted data: Linux's `ca_rtt_us`) over rounds of one window
//! each, and end slow start when the RTT rises, i.e. when a queue starts to build, instead of
//! waiting for the buffer to overflow.
//!
//! **Linux HyStart** (`hystart = "linux"`, CUBIC only; Linux's module parameters `hystart` = 1,
//! `hystart_detect` = 3, `hystart_low_window` = 16, `hystart_ack_delta_us` = 2000):
//!
//! * `delay_min` is the smallest per-ACK sample (reset at a retransmission timeout; samples
//!   within 1 s of the start of a congestion-avoidance epoch are ignored, as Linux does "right
//!   after fast recovery").
//! * A round starts at the first ACK beyond `end_seq`: `round_start = last_ack = now`,
//!   `end_seq = SND.NXT`, the round's minimum RTT forgotten, its sample count 0.
//! * Nothing is detected below a window of 16 segments.
//! * ACK train (bit 1): an ACK within 2 ms of the previous one in the train extends it; once
//!   the train has lasted more than `delay_min / 2` since the round started, slow start ends.
//!   Linux adds a cushion for TSO/GRO aggregation (`hystart_ack_delay`, at most 1 ms) before
//!   halving and does not halve under pacing; ecnlab neither aggregates nor paces, so the
//!   threshold is `delay_min / 2`.
//! * Delay (bit 2): after 8 samples in a round (`HYSTART_MIN_SAMPLES`), slow start ends when
//!   the round's minimum RTT exceeds `delay_min + clamp(delay_min / 8, 4 ms, 16 ms)`
//!   (`HYSTART_DELAY_MIN`, `HYSTART_DELAY_MAX`).
//! * On detection `ssthresh = cwnd`, and detection stops (`found`) until a retransmission
//!   timeout (Linux's `TCP_CA_Loss` state) starts it afresh; a fast recovery does not.
//!
//! **HyStart++** (`hystart = "rfc9406"`, RFC 9406 section 4): rounds end when an ACK passes
//! `windowEnd` (SND.NXT when the round began). In standard slow start, a round with at least
//! `N_RTT_SAMPLE` = 8 samples whose minimum RTT reaches the previous round's minimum plus
//! `RttThresh = max(4 ms, min(lastRoundMinRTT / 8, 16 ms))` enters Conservative Slow Start
//! (CSS): growth divided by `CSS_GROWTH_DIVISOR` = 4. In CSS, a round (again with 8 samples)
//! whose minimum falls below the RTT that started CSS was a false alarm: back to standard slow
//! start; after `CSS_ROUNDS` = 5 rounds in CSS, `ssthresh = cwnd` (congestion avoidance). A loss
//! or an ECN echo ends slow start as usual. HyStart++ runs only in the initial slow start
//! (ssthresh still infinite; RFC 9406 section 4.3's SHOULD); later slow starts are RFC 5681's.
//! Departure: RFC 9406 grows by `min(N, L SMSS)` per ACK with `L = 8` when not paced (`L =
//! infinity` only for a paced sender; ecnlab does not pace); ecnlab keeps the controller's own
//! slow-start increase (`min(N, SMSS)`, or `min(N, 2 SMSS)` with `abc`), as FreeBSD's
//! NewReno with HyStart++ keeps its `abc_l_var`, so that turning HyStart++ on changes only
//! where slow start ends, not how fast it grows.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::window::{RttInfo, Window};
use crate::engine::time::NS_PER_MS;
use crate::engine::SimTime;

/// `tcp.hystart`: which slow-start exit the senders run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HystartName {
    /// RFC 5681 slow start until a loss or an ECN echo.
    #[default]
    Off,
    /// HyStart as Linux's CUBIC runs it (net/ipv4/tcp_cubic.c); CUBIC only.
    Linux,
    /// HyStart++ (RFC 9406), for any controller.
    Rfc9406,
}

/// `tcp.hystart_detect`: Linux's `hystart_detect` module parameter (bit 1 ACK train, bit 2
/// delay).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HystartDetect {
    /// `hystart_detect = 1`.
    AckTrain,
    /// `hystart_detect = 2`.
    Delay,
    /// `hystart_detect = 3` (Linux's default).
    #[default]
    Both,
}

impl HystartDetect {
    fn ack_train(self) -> bool {
        matches!(self, HystartDetect::AckTrain | HystartDetect::Both)
    }
    fn delay(self) -> bool {
        matches!(self, HystartDetect::Delay | HystartDetect::Both)
    }
}

/// The resolved `tcp.hystart` (with Linux's detection bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HystartKind {
    #[default]
    Off,
    Linux(HystartDetect),
    Rfc9406,
}

/// Linux's `hystart_low_window`, segments.
pub const LINUX_LOW_WINDOW_SEGS: u64 = 16;
/// Linux's `hystart_ack_delta_us`: ACKs at most this far apart form a train.
pub const LINUX_ACK_DELTA: SimTime = 2 * NS_PER_MS;
/// Linux's `HYSTART_MIN_SAMPLES`.
pub const LINUX_MIN_SAMPLES: u32 = 8;
/// Linux's `HYSTART_DELAY_MIN` and `HYSTART_DELAY_MAX`.
pub const LINUX_DELAY_MIN: SimTime = 4 * NS_PER_MS;
pub const LINUX_DELAY_MAX: SimTime = 16 * NS_PER_MS;

/// RFC 9406 section 4.3 constants.
pub const MIN_RTT_THRESH: SimTime = 4 * NS_PER_MS;
pub const MAX_RTT_THRESH: SimTime = 16 * NS_PER_MS;
pub const MIN_RTT_DIVISOR: u64 = 8;
pub const N_RTT_SAMPLE: u32 = 8;
pub const CSS_GROWTH_DIVISOR: u64 = 4;
pub const CSS_ROUNDS: u32 = 5;

/// What the slow-start exits did (whole connection).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HystartStats {
    /// Slow start ended by the detector (ssthresh set to cwnd).
    pub exits: u32,
    /// Linux: detections by the ACK train and by delay (Linux's `TCPHystartTrainDetect` and
    /// `TCPHystartDelayDetect`; one ACK may count in both).
    pub train_detections: u32,
    pub delay_detections: u32,
    /// RFC 9406: entries into CSS, and returns from CSS to slow start.
    pub css_entries: u32,
    pub css_resumes: u32,
}

/// Linux HyStart's state (the HyStart fields of tcp_cubic.c's `struct bictcp`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinuxHystart {
    pub detect: HystartDetect,
    /// The exit point was found: no more detection until a timeout.
    pub found: bool,
    /// Smallest per-ACK RTT sample (0: none yet).
    pub delay_min: SimTime,
    /// When the round started (its first ACK).
    pub round_start: SimTime,
    /// SND.NXT when the round started: an ACK beyond it starts the next round.
    pub end_seq: u64,
    /// The last ACK of the current train.
    pub last_ack: SimTime,
    /// The round's minimum RTT (`SimTime::MAX`: none yet).
    pub curr_rtt: SimTime,
    pub sample_cnt: u32,
}

impl LinuxHystart {
    pub fn new(detect: HystartDetect) -> Self {
        // end_seq 0: the first ACK of data starts the first round, as Linux's reset at
        // connection setup (end_seq = SND.NXT with nothing sent yet) makes it.
        LinuxHystart { detect, curr_rtt: SimTime::MAX, ..Default::default() }
    }

    /// `bictcp_hystart_reset`.
    fn reset_round(&mut self, now: SimTime, snd_nxt: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = SimTime::MAX;
        self.sample_cnt = 0;
    }

    /// `cubictcp_acked`: one ACK with its RTT sample (run before the window grows).
    fn on_ack(&mut self, w: &mut Window, rtt: &RttInfo, now: SimTime, fresh_epoch: bool, stats: &mut HystartStats) {
        let Some(delay) = rtt.latest else { return };
        if fresh_epoch {
            return; // "Discard delay samples right after fast recovery"
        }
        let delay = delay.max(1);
        if self.delay_min == 0 || delay < self.delay_min {
            self.delay_min = delay;
        }
        if self.found || !w.in_slow_start() {
            return;
        }
        // hystart_update.
        if rtt.snd_una > self.end_seq {
            self.reset_round(now, rtt.snd_nxt);
        }
        if w.cwnd < LINUX_LOW_WINDOW_SEGS * w.mss {
            return;
        }
        if self.detect.ack_train() && now.saturating_sub(self.last_ack) <= LINUX_ACK_DELTA {
            self.last_ack = now;
            // Not paced, no TSO cushion: the train must outlast half the minimum RTT.
            if now - self.round_start > self.delay_min / 2 {
                self.found = true;
                stats.train_detections += 1;
                w.ssthresh = w.cwnd;
            }
        }
        if self.detect.delay() {
            self.curr_rtt = self.curr_rtt.min(delay);
            if self.sample_cnt < LINUX_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else if self.curr_rtt > self.delay_min + (self.delay_min / 8).clamp(LINUX_DELAY_MIN, LINUX_DELAY_MAX) {
                self.found = true;
                stats.delay_detections += 1;
                w.ssthresh = w.cwnd;
            }
        }
        if self.found {
            stats.exits += 1;
        }
    }

    /// `cubictcp_state(TCP_CA_Loss)`: everything but the detection bits starts afresh; the
    /// next ACK starts a round.
    fn on_timeout(&mut self) {
        *self = LinuxHystart::new(self.detect);
    }
}

/// HyStart++'s state (RFC 9406 section 4.2; `SimTime::MAX` stands for infinity).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rfc9406Hystart {
    /// windowEnd: an ACK beyond it ends the round (0: the first ACK ends the empty round 0).
    pub window_end: u64,
    pub last_round_min_rtt: SimTime,
    pub current_round_min_rtt: SimTime,
    pub rtt_sample_count: u32,
    /// cssBaselineMinRtt: the round minimum that started CSS (`MAX`: not in CSS).
    pub css_baseline_min_rtt: SimTime,
    /// Rounds ended in CSS.
    pub css_rounds: u32,
}

impl Default for Rfc9406Hystart {
    fn default() -> Self {
        Rfc9406Hystart {
            window_end: 0,
            last_round_min_rtt: SimTime::MAX,
            current_round_min_rtt: SimTime::MAX,
            rtt_sample_count: 0,
            css_baseline_min_rtt: SimTime::MAX,
            css_rounds: 0,
        }
    }
}

impl Rfc9406Hystart {
    pub fn in_css(&self) -> bool {
        self.css_baseline_min_rtt != SimTime::MAX
    }

    /// The initial slow start: HyStart++ runs only while ssthresh has its initial value.
    fn active(w: &Window) -> bool {
        w.ssthresh == u64::MAX
    }

    /// After the growth of an ACK in slow start: the round's end, then the RTT sample and the
    /// checks (RFC 9406 section 4.2). The ACK that passes windowEnd acknowledges a segment sent
    /// in the new round, so its sample counts there (Linux's HyStart orders it the same way).
    fn after_growth(&mut self, w: &mut Window, rtt: &RttInfo, stats: &mut HystartStats) {
        if rtt.snd_una > self.window_end {
            if self.in_css() {
                self.css_rounds += 1;
                if self.css_rounds >= CSS_ROUNDS {
                    // Congestion avoidance from here on (HyStart++ is then inactive).
                    w.ssthresh = w.cwnd;
                    stats.exits += 1;
                    return;
                }
            }
            self.window_end = rtt.snd_nxt;
            self.last_round_min_rtt = self.current_round_min_rtt;
            self.current_round_min_rtt = SimTime::MAX;
            self.rtt_sample_count = 0;
        }
        if let Some(r) = rtt.latest {
            self.current_round_min_rtt = self.current_round_min_rtt.min(r);
            self.rtt_sample_count += 1;
        }
        let enough = self.rtt_sample_count >= N_RTT_SAMPLE;
        if self.in_css() {
            if enough && self.current_round_min_rtt < self.css_baseline_min_rtt {
                // The delay increase was spurious: resume slow start, HyStart++ included.
                self.css_baseline_min_rtt = SimTime::MAX;
                self.css_rounds = 0;
                stats.css_resumes += 1;
            }
        } else if enough && self.current_round_min_rtt != SimTime::MAX && self.last_round_min_rtt != SimTime::MAX {
            let thresh = (self.last_round_min_rtt / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
            if self.current_round_min_rtt >= self.last_round_min_rtt + thresh {
                self.css_baseline_min_rtt = self.current_round_min_rtt;
                stats.css_entries += 1;
            }
        }
    }
}

/// A controller's slow-start exit: none, Linux's HyStart or HyStart++.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Hystart {
    #[default]
    Off,
    Linux(LinuxHystart),
    Rfc9406(Rfc9406Hystart),
}

impl Hystart {
    pub fn new(kind: HystartKind) -> Self {
        match kind {
            HystartKind::Off => Hystart::Off,
            HystartKind::Linux(d) => Hystart::Linux(LinuxHystart::new(d)),
            HystartKind::Rfc9406 => Hystart::Rfc9406(Rfc9406Hystart::default()),
        }
    }

    /// One ACK of new data outside recovery. Grows cwnd by the controller's slow-start
    /// `increase` (divided by CSS_GROWTH_DIVISOR in CSS) and returns true when the ACK is in
    /// slow start; returns false, cwnd untouched, when it is in congestion avoidance (also when
    /// Linux's HyStart ended slow start at this very ACK, as Linux's `cong_avoid` then runs
    /// congestion avoidance). `fresh_epoch`: within 1 s of a congestion-avoidance epoch's start.
    #[inline]
    pub fn slow_start(
        &mut self,
        w: &mut Window,
        increase: u64,
        rtt: &RttInfo,
        now: SimTime,
        fresh_epoch: bool,
        stats: &mut HystartStats,
    ) -> bool {
        match self {
            Hystart::Off => {
                if !w.in_slow_start() {
                    return false;
                }
                w.cwnd += increase;
            }
            Hystart::Linux(h) => {
                h.on_ack(w, rtt, now, fresh_epoch, stats);
                if !w.in_slow_start() {
                    return false;
                }
                w.cwnd += increase;
            }
            Hystart::Rfc9406(h) => {
                if !w.in_slow_start() {
                    return false;
                }
                if !Rfc9406Hystart::active(w) {
                    w.cwnd += increase;
                    return true;
                }
                w.cwnd += if h.in_css() { increase / CSS_GROWTH_DIVISOR } else { increase };
                h.after_growth(w, rtt, stats);
            }
        }
        true
    }

    /// A retransmission timeout.
    pub fn on_timeout(&mut self) {
        if let Hystart::Linux(h) = self {
            h.on_timeout();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const MS: SimTime = NS_PER_MS;

    fn info(latest: SimTime, snd_una: u64, snd_nxt: u64) -> RttInfo {
        RttInfo { latest: Some(latest), snd_una, snd_nxt, ..Default::default() }
    }

    /// A scripted sender: one-segment ACKs with chosen RTT samples and spacing; after each
    /// ACK it fills its window (SND.NXT = SND.UNA + cwnd).
    struct Driver {
        h: Hystart,
        w: Window,
        stats: HystartStats,
        now: SimTime,
        una: u64,
        nxt: u64,
    }

    impl Driver {
        fn new(kind: HystartKind, iw: u64) -> Self {
            Driver {
                h: Hystart::new(kind),
                w: Window { cwnd: iw * MSS, ssthresh: u64::MAX, mss: MSS },
                stats: HystartStats::default(),
                now: 0,
                una: 1,
                nxt: 1 + iw * MSS,
            }
        }

        /// One ACK of one segment with RTT sample `rtt`, `gap` after the previous one; the
        /// sender then fills its window. Returns whether it was in slow start.
        fn ack(&mut self, rtt: SimTime, gap: SimTime) -> bool {
            self.now += gap;
            self.una += MSS;
            let i = info(rtt, self.una, self.nxt);
            let ss = self.h.slow_start(&mut self.w, MSS, &i, self.now, false, &mut self.stats);
            self.nxt = self.nxt.max(self.una + self.w.cwnd);
            ss
        }

        /// A round: one ACK per segment in flight, `gap` apart, the first after `pause`.
        fn round(&mut self, rtt: impl Fn(u64) -> SimTime, pause: SimTime, gap: SimTime) {
            let n = (self.nxt - self.una) / MSS;
            for i in 0..n {
                self.ack(rtt(i), if i == 0 { pause } else { gap });
            }
        }
    }

    #[test]
    fn linux_delay_increase_ends_slow_start() {
        // delay_min 100 ms: threshold 100 + clamp(12.5, 4, 16) = 112.5 ms. ACKs 5 ms apart
        // (no train). Rounds at a flat 100 ms never trigger; a round whose samples all exceed
        // 112.5 ms triggers at its 9th sample (after HYSTART_MIN_SAMPLES), with ssthresh = cwnd.
        let mut d = Driver::new(HystartKind::Linux(HystartDetect::Delay), 10);
        for _ in 0..3 {
            d.round(|_| 100 * MS, 50 * MS, 5 * MS);
        }
        assert_eq!(d.w.ssthresh, u64::MAX);
        let before = d.w.cwnd / MSS;
        assert!(before >= 16);
        let mut exit_at = None;
        for i in 0..before {
            let ss = d.ack(113 * MS, if i == 0 { 50 * MS } else { 5 * MS });
            if !ss && exit_at.is_none() {
                exit_at = Some(i);
            }
        }
        // The round's first ACK starts the round (sample 1); samples 1-8 only count; the
        // 9th ACK (i = 8) compares.
        assert_eq!(exit_at, Some(8));
        assert_eq!(d.w.ssthresh, (before + 8) * MSS, "ssthresh = cwnd at the 9th ACK");
        assert_eq!((d.stats.exits, d.stats.delay_detections, d.stats.train_detections), (1, 1, 0));
        let Hystart::Linux(h) = &d.h else { unreachable!() };
        assert!(h.found && h.delay_min == 100 * MS);
        // 112 ms stays below the threshold: no exit.
        let mut d = Driver::new(HystartKind::Linux(HystartDetect::Delay), 10);
        for _ in 0..3 {
            d.round(|_| 100 * MS, 50 * MS, 5 * MS);
        }
        d.round(|_| 112 * MS, 50 * MS, 5 * MS);
        assert_eq!(d.w.ssthresh, u64::MAX);
    }

    #[test]
    fn linux_delay_threshold_is_clamped() {
        // delay_min 10 ms: delay_min / 8 = 1.25 ms, clamped up to 4 ms; 400 ms: 50 ms, clamped
        // down to 16 ms. Samples just above and below each threshold.
        for (base, thresh) in [(10 * MS, 4 * MS), (400 * MS, 16 * MS)] {
            for (extra, exits) in [(thresh + 1, true), (thresh, false)] {
                let mut d = Driver::new(HystartKind::Linux(HystartDetect::Delay), 16);
                d.ack(base, 0); // delay_min, first round
                d.round(|_| base + extra, base, 5 * MS);
                d.round(|_| base + extra, base, 5 * MS);
                assert_eq!(d.w.ssthresh != u64::MAX, exits, "base {base} extra {extra}");
            }
        }
    }

    #[test]
    fn linux_ack_train_ends_slow_start_past_half_the_min_rtt() {
        // delay_min 40 ms; ACKs 1 ms apart: the train passes 20 ms at the 22nd ACK of a round
        // (the first ACK starts it, 0 ms). With 3 ms spacing there is no train at all.
        let mut d = Driver::new(HystartKind::Linux(HystartDetect::AckTrain), 16);
        d.round(|_| 40 * MS, 40 * MS, MS); // 16 ACKs: 15 ms of train, no exit
        assert_eq!(d.w.ssthresh, u64::MAX);
        let n = (d.nxt - d.una) / MSS;
        assert!(n > 22);
        let mut exit_at = None;
        for i in 0..n {
            if !d.ack(40 * MS, if i == 0 { 30 * MS } else { MS }) && exit_at.is_none() {
                exit_at = Some(i);
            }
        }
        assert_eq!(exit_at, Some(21), "now - round_start = 20 ms is not > 20 ms; 21 ms is");
        assert_eq!((d.stats.train_detections, d.stats.delay_detections, d.stats.exits), (1, 0, 1));
        // Spaced beyond hystart_ack_delta (2 ms): the train never grows.
        let mut d = Driver::new(HystartKind::Linux(HystartDetect::AckTrain), 16);
        for _ in 0..4 {
            d.round(|_| 40 * MS, 40 * MS, 3 * MS);
        }
        assert_eq!(d.w.ssthresh, u64::MAX);
        // Below the low window (16 segments) nothing is detected, however long the train.
        let mut d = Driver::new(HystartKind::Linux(HystartDetect::Both), 4);
        d.round(|_| 40 * MS, 40 * MS, 30 * MS);
        d.round(|_| 200 * MS, 40 * MS, MS);
        assert_eq!(d.w.ssthresh, u64::MAX);
    }

    #[test]
    fn linux_timeout_restarts_detection_but_a_fast_recovery_does_not() {
        let mut d = Driver::new(HystartKind::Linux(HystartDetect::Delay), 16);
        d.round(|_| 100 * MS, 0, 5 * MS);
        d.round(|_| 130 * MS, 50 * MS, 5 * MS);
        assert_eq!(d.stats.exits, 1);
        // found: back in slow start (cwnd below ssthresh after a recovery), no detection.
        d.w.ssthresh = d.w.cwnd * 2;
        d.round(|_| 200 * MS, 50 * MS, 5 * MS);
        assert_eq!(d.stats.exits, 1);
        d.h.on_timeout();
        let Hystart::Linux(h) = &d.h else { unreachable!() };
        assert!(!h.found && h.delay_min == 0, "a timeout forgets delay_min too");
        d.w = Window { cwnd: 16 * MSS, ssthresh: u64::MAX, mss: MSS };
        d.round(|_| 300 * MS, 50 * MS, 5 * MS);
        d.round(|_| 340 * MS, 50 * MS, 5 * MS);
        assert_eq!(d.stats.exits, 2);
    }

    /// A HyStart++ sender that has done `rounds` rounds at a flat `base` RTT.
    fn pp_after(rounds: usize, base: SimTime) -> Driver {
        let mut d = Driver::new(HystartKind::Rfc9406, 10);
        for _ in 0..rounds {
            d.round(|_| base, base, MS);
        }
        d
    }

    fn pp(d: &Driver) -> &Rfc9406Hystart {
        let Hystart::Rfc9406(h) = &d.h else { unreachable!() };
        h
    }

    #[test]
    fn rfc9406_delay_increase_enters_css_then_congestion_avoidance_after_five_rounds() {
        // lastRoundMinRTT 100 ms: RttThresh = max(4, min(12.5, 16)) = 12.5 ms.
        let mut d = pp_after(3, 100 * MS);
        assert_eq!(pp(&d).last_round_min_rtt, 100 * MS);
        let n = (d.nxt - d.una) / MSS;
        let cwnd0 = d.w.cwnd;
        // The round's samples reach 112.5 ms: CSS begins at the 8th sample (N_RTT_SAMPLE).
        for i in 0..n {
            d.ack(113 * MS, if i == 0 { 100 * MS } else { MS });
            assert_eq!(pp(&d).in_css(), i >= 7, "ACK {i}");
        }
        assert_eq!(d.stats.css_entries, 1);
        // Eight ACKs at full growth (one SMSS each), the rest at SMSS / 4.
        assert_eq!(d.w.cwnd, cwnd0 + 8 * MSS + (n - 8) * MSS / 4);
        assert_eq!(d.w.ssthresh, u64::MAX, "CSS is still slow start");
        // That round counts as the first in CSS when it ends; four more whole rounds in CSS,
        // each growing by a quarter of slow start's growth, and the ACK that ends the fifth
        // sets ssthresh = cwnd.
        for r in 1..=4 {
            let (cwnd, n) = (d.w.cwnd, (d.nxt - d.una) / MSS);
            d.round(|_| 113 * MS, 100 * MS, MS);
            assert_eq!(d.w.cwnd, cwnd + n * MSS / 4, "CSS round {r}");
            assert_eq!((pp(&d).css_rounds, d.w.ssthresh), (r, u64::MAX));
        }
        assert!(d.ack(113 * MS, 100 * MS), "this ACK still grows in CSS");
        assert_eq!(d.w.ssthresh, d.w.cwnd, "after CSS_ROUNDS: congestion avoidance");
        assert_eq!(d.stats.exits, 1);
        // Inactive from here on: further ACKs are not slow start.
        assert!(!d.ack(113 * MS, MS));
    }

    #[test]
    fn rfc9406_returns_to_slow_start_when_the_rtt_falls_back() {
        let mut d = pp_after(3, 100 * MS);
        d.round(|_| 120 * MS, 100 * MS, MS); // enters CSS with baseline 120 ms
        assert!(pp(&d).in_css());
        assert_eq!(pp(&d).css_baseline_min_rtt, 120 * MS);
        // A round whose minimum falls below the baseline: after its 8th sample, slow start
        // resumes (full growth again) and HyStart++ keeps watching.
        let n = (d.nxt - d.una) / MSS;
        let cwnd0 = d.w.cwnd;
        for i in 0..n {
            d.ack(if i == 3 { 110 * MS } else { 125 * MS }, if i == 0 { 100 * MS } else { MS });
            assert_eq!(pp(&d).in_css(), i < 7, "ACK {i}");
        }
        assert_eq!(d.stats.css_resumes, 1);
        assert_eq!(d.w.cwnd, cwnd0 + 8 * MSS / 4 + (n - 8) * MSS, "8 CSS ACKs, then slow start");
        assert_eq!(d.w.ssthresh, u64::MAX);
        // Below 8 samples in a round nothing is decided: a 7-ACK round in CSS at a lower RTT
        // keeps CSS.
        let mut d = pp_after(3, 100 * MS);
        d.round(|_| 120 * MS, 100 * MS, MS);
        d.nxt = d.una + 7 * MSS;
        d.round(|_| 105 * MS, 100 * MS, MS);
        assert!(pp(&d).in_css());
        // A rise below RttThresh (12 ms < 12.5 ms) does not enter CSS.
        let mut d = pp_after(3, 100 * MS);
        d.round(|_| 112 * MS, 100 * MS, MS);
        assert!(!pp(&d).in_css());
    }

    #[test]
    fn rfc9406_runs_only_in_the_initial_slow_start() {
        // Once ssthresh is set (by a loss, an echo or a timeout), slow start is RFC 5681's:
        // a large RTT rise changes nothing.
        let mut d = pp_after(3, 100 * MS);
        d.w.ssthresh = 1_000 * MSS;
        for _ in 0..3 {
            let (cwnd, n) = (d.w.cwnd, (d.nxt - d.una) / MSS);
            d.round(|_| 300 * MS, 100 * MS, MS);
            assert_eq!(d.w.cwnd, cwnd + n * MSS);
        }
        assert_eq!(d.stats, HystartStats::default());
    }

    #[test]
    fn off_is_plain_slow_start() {
        let mut d = Driver::new(HystartKind::Off, 10);
        for _ in 0..4 {
            d.round(|_| 400 * MS, 100 * MS, MS);
        }
        assert_eq!(d.w.cwnd, 160 * MSS);
        assert_eq!(d.w.ssthresh, u64::MAX);
    }
}
