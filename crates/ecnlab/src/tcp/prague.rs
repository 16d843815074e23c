//! TCP Prague's sender (the iccrg draft "Prague Congestion Control",
//! draft-briscoe-iccrg-prague-congestion-control; the L4S team's Linux net/ipv4/tcp_prague.c).
//!
//! Prague is DCTCP ([`Dctcp`]: alpha per round trip, cwnd (1 - alpha / 2) on an echo, NewReno's
//! loss response) with the changes an L4S sender on the public Internet makes:
//!
//! * **ECT(1)** on its data, and pacing (Linux's `prague_init` sets `SK_PACING_NEEDED`; the
//!   rate is cwnd / srtt in congestion avoidance, twice that in slow start:
//!   `prague_update_pacing_rate`). Both are the defaults of `congestion_control = "prague"` in
//!   the scenario (`ect_codepoint`, `pacing`, `pacing_ca_ratio_percent` = 100).
//! * **alpha waits for a mark**: it is not updated before the first CE echo (`saw_ce` in
//!   `prague_update_alpha`), so the first reduction, with alpha = 1, halves.
//! * **RTT independence** (Linux's default heuristic `RTT_CONTROL_RATE`,
//!   `prague_rate_scaled_ai_ack_increase`): once `rtt_transition` round trips have passed
//!   outside slow start, a flow whose srtt is below the reference RTT `rtt_target` (25 ms,
//!   `prague_rtt_target`) grows by (srtt / rtt_target)^2 segments per round trip instead of one,
//!   so its rate grows as a flow's at the reference RTT would; reductions on echoes are then at
//!   most one per `rtt_target` (`prague_enter_cwr`).
//! * **Classic ECN fallback** (off by default, as Linux's `prague_ecn_fallback` = 0): with
//!   `classic_fallback` an echo while the smoothed queueing delay (srtt - min RTT) exceeds
//!   `classic_delay` is taken to come from a classic (RFC 3168) AQM, whose marks are as rare
//!   as drops: the window is halved as NewReno's (`beta`) instead of cut by alpha / 2. This is
//!   the simplest detection the draft describes (a queue deeper than an L4S queue keeps; Linux
//!   scores the delay depth and its variation, `prague_classic_ecn_detection`, and raises alpha
//!   towards a classic response); ours is a switch on the depth alone.
//!
//! AccECN feedback, which Linux's Prague requires, is `ecn_feedback = "accecn"` (`tcp::accecn`);
//! by default the receiver's DCTCP echo gives the same count of marked bytes. Not modelled: the
//! alpha update's rate limit of one per
//! `rtt_target` in RTT-independent mode, fractional cwnd below a byte, and the TSO burst limit.

use super::cc::{reduced_window, CongestionControl};
use super::dctcp::Dctcp;
use super::window::{AckSignal, RttInfo, Signal, Window};
use crate::engine::SimTime;

/// Prague's own parameters (DCTCP's are in [`Dctcp`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PragueParams {
    /// The reference RTT of RTT independence (Linux's `prague_rtt_target`, 25 ms); 0: none.
    pub rtt_target: SimTime,
    /// Round trips outside slow start before RTT independence starts (Linux's
    /// `prague_rtt_transition`, 500).
    pub rtt_transition: u64,
    /// Classic ECN fallback on (Linux's `prague_ecn_fallback`, default 0: off).
    pub classic_fallback: bool,
    /// The queueing delay (srtt - min RTT) above which an echo is taken to come from a classic
    /// AQM.
    pub classic_delay: SimTime,
}

impl Default for PragueParams {
    fn default() -> Self {
        PragueParams { rtt_target: 25_000_000, rtt_transition: 500, classic_fallback: false, classic_delay: 2_000_000 }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Prague {
    pub params: PragueParams,
    pub dctcp: Dctcp,
    /// A CE echo has arrived: alpha is updated from then on.
    saw_ce: bool,
    /// Round trips (DCTCP observation windows) completed outside slow start.
    rounds: u64,
    /// The RTTs at the last ACK.
    srtt: SimTime,
    min_rtt: SimTime,
    /// Growth carried below one byte.
    frac: f64,
    /// When the last reduction on an echo was made (RTT independence limits them).
    last_cwr: Option<SimTime>,
    /// Echoes answered by the classic fallback.
    pub classic_reductions: u64,
}

impl Prague {
    pub fn new(params: PragueParams, dctcp: Dctcp) -> Self {
        Prague { params, dctcp, saw_ce: false, rounds: 0, srtt: 0, min_rtt: 0, frac: 0.0, last_cwr: None, classic_reductions: 0 }
    }

    /// RTT independence is in force (past the transition, out of slow start).
    fn rtt_independent(&self, w: &Window) -> bool {
        self.params.rtt_target > 0 && !w.in_slow_start() && self.rounds >= self.params.rtt_transition
    }

    /// The factor on the classic one-segment-per-round-trip increase: (srtt / target)^2 below
    /// the target, 1 at or above it (`prague_rate_scaled_ai_ack_increase`).
    pub fn increase_factor(&self, w: &Window) -> f64 {
        if !self.rtt_independent(w) || self.srtt == 0 || self.srtt >= self.params.rtt_target {
            return 1.0;
        }
        let r = self.srtt as f64 / self.params.rtt_target as f64;
        r * r
    }

    pub fn alpha(&self) -> f64 {
        self.dctcp.alpha()
    }
}

impl CongestionControl for Prague {
    fn on_ack(&mut self, w: &mut Window, acked: u64, rtt: RttInfo, now: SimTime) {
        if w.in_slow_start() {
            self.dctcp.on_ack(w, acked, rtt, now);
            return;
        }
        // Congestion avoidance per ACK: SMSS * acked / cwnd, scaled for RTT independence
        // (RFC 5681 eq. 3 counts per ACK; Prague per acknowledged segment, as here).
        let grow = self.increase_factor(w) * (w.mss * acked) as f64 / w.cwnd as f64 + self.frac;
        let whole = grow.floor();
        self.frac = grow - whole;
        w.cwnd += whole as u64;
    }

    fn on_congestion_event(&mut self, w: &mut Window, signal: Signal, flight: u64, now: SimTime) {
        if signal == Signal::Loss {
            self.dctcp.on_congestion_event(w, signal, flight, now);
            return;
        }
        let queue = self.srtt.saturating_sub(self.min_rtt);
        if self.params.classic_fallback && self.min_rtt > 0 && queue > self.params.classic_delay {
            // A classic AQM's mark: respond as to a loss (RFC 9331 section 4.3's fallback).
            w.ssthresh = reduced_window(flight, self.dctcp.reno.beta, w.mss);
            w.cwnd = w.ssthresh;
            self.dctcp.reno.restart_byte_count();
            self.classic_reductions += 1;
            return;
        }
        if self.rtt_independent(w) {
            if let Some(t) = self.last_cwr {
                if now < t + self.params.rtt_target {
                    return; // at most one reduction per reference RTT (`prague_enter_cwr`)
                }
            }
        }
        self.last_cwr = Some(now);
        self.dctcp.on_congestion_event(w, signal, flight, now);
    }

    fn on_timeout(&mut self, w: &mut Window, flight: u64, now: SimTime) {
        self.dctcp.on_timeout(w, flight, now);
    }

    fn on_idle_restart(&mut self, idle: SimTime) {
        self.dctcp.on_idle_restart(idle);
    }

    fn on_ack_signal(&mut self, w: &mut Window, s: &AckSignal) {
        self.srtt = s.rtt.srtt;
        self.min_rtt = s.rtt.min_rtt;
        self.saw_ce |= s.ce_bytes > 0;
        if self.saw_ce {
            let before = self.dctcp.windows();
            self.dctcp.on_ack_signal(w, s);
            if self.dctcp.windows() > before && !w.in_slow_start() {
                self.rounds += 1;
            }
        } else if s.rtt.snd_una >= self.dctcp.window_end() {
            // No AQM seen yet: alpha stays, rounds still count (`prague_new_round`).
            self.dctcp.start_window(s.rtt.snd_nxt);
            if !w.in_slow_start() {
                self.rounds += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::NewReno;
    use crate::tcp::dctcp::DctcpParams;

    const MSS: u64 = 1000;
    const MS: SimTime = 1_000_000;

    fn prague(p: PragueParams) -> Prague {
        Prague::new(p, Dctcp::new(DctcpParams::default(), NewReno::default()))
    }

    fn sig(delivered: u64, ce: bool, una: u64, nxt: u64, srtt: SimTime) -> AckSignal {
        AckSignal {
            delivered_bytes: delivered,
            ce_bytes: if ce { delivered } else { 0 },
            ece: ce,
            rtt: RttInfo { srtt, min_rtt: srtt, snd_una: una, snd_nxt: nxt, ..RttInfo::default() },
        }
    }

    /// Congestion-avoidance growth over `rounds` windows of one-segment ACKs at `srtt`.
    fn growth(srtt: SimTime, transition: u64, rounds: u64) -> f64 {
        let mut c = prague(PragueParams { rtt_transition: transition, ..PragueParams::default() });
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 50 * MSS, mss: MSS };
        let mut una = 1;
        let mut grown = 0.0;
        for _ in 0..rounds {
            let segs = w.cwnd / MSS;
            let start = w.cwnd;
            for _ in 0..segs {
                una += MSS;
                c.on_ack_signal(&mut w, &sig(MSS, false, una, una + segs * MSS, srtt));
                c.on_ack(&mut w, MSS, RttInfo::default(), 0);
            }
            grown = (w.cwnd - start) as f64 / MSS as f64;
        }
        grown
    }

    #[test]
    fn growth_per_round_trip_is_scaled_by_the_square_of_the_rtt_ratio() {
        // Before the transition: one segment per round trip whatever the RTT; after it, a 5 ms
        // flow grows (5 / 25)^2 = 0.04 segments per round trip, 25 times per 125 ms as a 25 ms
        // flow does once: the same rate increase per second. At or above the target: one.
        assert!((growth(5 * MS, 500, 10) - 1.0).abs() < 0.05);
        assert!((growth(5 * MS, 0, 10) - 0.04).abs() < 0.01, "{}", growth(5 * MS, 0, 10));
        assert!((growth(25 * MS, 0, 10) - 1.0).abs() < 0.05);
        assert!((growth(50 * MS, 0, 10) - 1.0).abs() < 0.05);
    }

    #[test]
    fn alpha_waits_for_the_first_mark_then_tracks_the_marked_fraction() {
        let mut c = prague(PragueParams::default());
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 5 * MSS, mss: MSS };
        let mut una = 1;
        for _ in 0..100 {
            una += MSS;
            c.on_ack_signal(&mut w, &sig(MSS, false, una, una + 10 * MSS, 10 * MS));
        }
        assert_eq!(c.alpha(), 1.0, "no AQM seen: alpha stays at its start");
        // Then one segment in ten marked: alpha falls towards 0.1.
        for n in 0..4000u64 {
            una += MSS;
            c.on_ack_signal(&mut w, &sig(MSS, n % 10 == 0, una, una + 10 * MSS, 10 * MS));
        }
        assert!((c.alpha() - 0.1).abs() < 0.01, "{}", c.alpha());
    }

    #[test]
    fn a_deep_queue_makes_the_classic_fallback_halve_and_reductions_are_rate_limited() {
        let p = PragueParams { classic_fallback: true, rtt_transition: 0, ..PragueParams::default() };
        let mut c = prague(p);
        c.dctcp = Dctcp::new(DctcpParams { g: 1.0 / 16.0, alpha_init: 0.2 }, NewReno::default());
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 50 * MSS, mss: MSS };
        // Queue of 1 ms (srtt 11 ms over a 10 ms minimum): L4S, cut by alpha / 2.
        let mut s = sig(MSS, true, 1, 2, 11 * MS);
        s.rtt.min_rtt = 10 * MS;
        c.on_ack_signal(&mut w, &s);
        c.on_congestion_event(&mut w, Signal::Ecn, 100 * MSS, 100 * MS);
        let alpha = c.alpha();
        assert_eq!(w.cwnd, (100.0 * MSS as f64 * (1.0 - alpha / 2.0)) as u64);
        // A second echo within the reference RTT (25 ms) is ignored once RTT-independent.
        let before = w.cwnd;
        c.on_congestion_event(&mut w, Signal::Ecn, 100 * MSS, 110 * MS);
        assert_eq!(w.cwnd, before);
        // Queue of 5 ms: a classic AQM: halve FlightSize, as NewReno.
        s.rtt.srtt = 15 * MS;
        c.on_ack_signal(&mut w, &s);
        c.on_congestion_event(&mut w, Signal::Ecn, 80 * MSS, 200 * MS);
        assert_eq!((w.cwnd, c.classic_reductions), (40 * MSS, 1));
        // Without the fallback the same echo is cut by alpha / 2.
        let mut c = prague(PragueParams::default());
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 50 * MSS, mss: MSS };
        c.on_ack_signal(&mut w, &s);
        c.on_congestion_event(&mut w, Signal::Ecn, 80 * MSS, 200 * MS);
        assert!(w.cwnd > 40 * MSS && c.classic_reductions == 0);
    }
}
