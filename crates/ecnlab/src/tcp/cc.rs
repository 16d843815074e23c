//! Congestion controllers: pure state machines with no I/O (STYLE 5).
//!
//! The sender owns loss detection and recovery (dupacks, NewReno partial ACKs, timeouts, ECN
//! echo handling); a controller only decides the window: how it grows on an ACK of new data and
//! what it becomes after a congestion signal. Tests drive controllers with scripted ACKs, losses
//! and marks and check `cwnd` and `ssthresh` exactly.

use super::hystart::{Hystart, HystartKind, HystartStats};
use crate::engine::SimTime;

pub use super::window::{AckSignal, RttInfo, Signal, Window};

pub trait CongestionControl {
    /// An ACK acknowledged `acked` new bytes outside loss recovery.
    fn on_ack(&mut self, w: &mut Window, acked: u64, rtt: RttInfo, now: SimTime);
    /// A congestion signal, at most once per window of data (the sender enforces that).
    /// `flight` is FlightSize, the bytes outstanding when the signal arrived.
    fn on_congestion_event(&mut self, w: &mut Window, signal: Signal, flight: u64, now: SimTime);
    /// A retransmission timeout.
    fn on_timeout(&mut self, w: &mut Window, flight: u64, now: SimTime);
    /// The sender sends new data with nothing in flight, `idle` after its previous segment.
    fn on_idle_restart(&mut self, _idle: SimTime) {}
    /// Every ACK, duplicate or in recovery, echoing or not: the bytes it delivered, the bytes
    /// the ECN feedback reports marked, and the RTTs (`tcp/ecn.rs`). The controllers here act
    /// on the events above and ignore it; controllers that scale their answer to the marked
    /// fraction (DCTCP, RFC 8257) read it.
    fn on_ack_signal(&mut self, _w: &mut Window, _signal: &AckSignal) {}
}

/// NewReno window arithmetic (RFC 5681 section 3.1; loss recovery itself is RFC 6582, in the
/// sender). On a loss, ssthresh = max(beta FlightSize, 2 SMSS) with beta = 1/2 by default
/// (RFC 5681 eq. 4); on an ECN echo the same with `beta_ecn` (RFC 3168 section 6.1.2 uses 1/2;
/// ABE, RFC 8511, a milder factor such as 0.8), including the echo that ends slow start.
///
/// With `abc` (Appropriate Byte Counting, RFC 3465 with L = 2 SMSS, as FreeBSD and Linux
/// count): slow start adds min(acked, 2 SMSS) per ACK and congestion avoidance one SMSS per
/// cwnd of acknowledged bytes, so delayed ACKs no longer halve the growth per round trip.
///
/// With a slow-start exit (`hystart`, HyStart++ of RFC 9406 for NewReno and Reno) slow start
/// may end, or slow down (Conservative Slow Start), before any loss; see `hystart`.
#[derive(Clone, Debug, PartialEq)]
pub struct NewReno {
    /// Multiplicative decrease on a loss.
    pub beta: f64,
    /// Multiplicative decrease on an ECN echo.
    pub beta_ecn: f64,
    /// Appropriate Byte Counting (RFC 3465).
    pub abc: bool,
    /// Bytes acknowledged in congestion avoidance since cwnd last grew (RFC 3465 bytes_acked).
    bytes_acked: u64,
    /// The slow-start exit (off by default).
    pub hystart: Hystart,
    pub hystart_stats: HystartStats,
}

impl NewReno {
    pub fn new(beta: f64, beta_ecn: f64, abc: bool) -> Self {
        NewReno { beta, beta_ecn, abc, bytes_acked: 0, hystart: Hystart::Off, hystart_stats: HystartStats::default() }
    }

    /// Forgets the bytes counted toward the next congestion-avoidance step (after a
    /// reduction another controller made, as DCTCP's).
    pub fn restart_byte_count(&mut self) {
        self.bytes_acked = 0;
    }

    /// The same controller with a slow-start exit.
    pub fn with_hystart(mut self, kind: HystartKind) -> Self {
        self.hystart = Hystart::new(kind);
        self
    }
}

impl Default for NewReno {
    fn default() -> Self {
        NewReno::new(0.5, 0.5, false)
    }
}

/// Slow-start growth for an ACK of `acked` bytes: min(acked, SMSS) (RFC 5681 eq. 2), or
/// min(acked, 2 SMSS) with Appropriate Byte Counting (RFC 3465, L = 2).
pub fn slow_start_increase(acked: u64, mss: u64, abc: bool) -> u64 {
    acked.min(if abc { 2 * mss } else { mss })
}

/// `max(beta * flight, 2 SMSS)` in whole bytes (rounded down, as integer window arithmetic).
pub fn reduced_window(flight: u64, beta: f64, mss: u64) -> u64 {
    ((flight as f64 * beta) as u64).max(2 * mss)
}

impl CongestionControl for NewReno {
    fn on_ack(&mut self, w: &mut Window, acked: u64, rtt: RttInfo, now: SimTime) {
        let increase = slow_start_increase(acked, w.mss, self.abc);
        if self.hystart.slow_start(w, increase, &rtt, now, false, &mut self.hystart_stats) {
            // Slow start (RFC 5681 eq. 2, or RFC 3465's), already applied.
        } else if self.abc {
            // RFC 3465 section 2.1: one SMSS once a whole cwnd of bytes has been acknowledged.
            self.bytes_acked += acked;
            if self.bytes_acked >= w.cwnd {
                self.bytes_acked -= w.cwnd;
                w.cwnd += w.mss;
            }
        } else {
            // Congestion avoidance: cwnd += max(1, SMSS * SMSS / cwnd) per ACK (RFC 5681 eq. 3).
            w.cwnd += (w.mss * w.mss / w.cwnd).max(1);
        }
    }

    fn on_congestion_event(&mut self, w: &mut Window, signal: Signal, flight: u64, _now: SimTime) {
        let beta = match signal {
            Signal::Loss => self.beta,
            Signal::Ecn => self.beta_ecn,
        };
        w.ssthresh = reduced_window(flight, beta, w.mss);
        w.cwnd = w.ssthresh;
        self.bytes_acked = 0;
    }

    fn on_timeout(&mut self, w: &mut Window, flight: u64, _now: SimTime) {
        self.bytes_acked = 0;
        self.hystart.on_timeout();
        // RFC 5681 eq. 4 and loss window LW = 1 SMSS.
        w.ssthresh = reduced_window(flight, self.beta, w.mss);
        w.cwnd = w.mss;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn slow_start_then_congestion_avoidance() {
        let mut c = NewReno::default();
        let mut w = Window { cwnd: 2 * MSS, ssthresh: 4 * MSS, mss: MSS };
        c.on_ack(&mut w, 2 * MSS, RttInfo::default(), 0); // a delayed ACK of two segments still adds one SMSS
        assert_eq!(w.cwnd, 3 * MSS);
        c.on_ack(&mut w, MSS, RttInfo::default(), 0);
        assert_eq!(w.cwnd, 4 * MSS);
        assert!(!w.in_slow_start());
        c.on_ack(&mut w, MSS, RttInfo::default(), 0);
        assert_eq!(w.cwnd, 4 * MSS + MSS * MSS / (4 * MSS));
    }

    #[test]
    fn loss_and_ecn_halve_timeout_collapses() {
        let mut c = NewReno::default();
        let mut w = Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS };
        c.on_congestion_event(&mut w, Signal::Loss, 20 * MSS, 0);
        assert_eq!((w.cwnd, w.ssthresh), (10 * MSS, 10 * MSS));
        c.on_congestion_event(&mut w, Signal::Ecn, 3 * MSS, 0);
        assert_eq!((w.cwnd, w.ssthresh), (2 * MSS, 2 * MSS), "floor of 2 SMSS");
        c.on_timeout(&mut w, 12 * MSS, 0);
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 6 * MSS));
    }

    #[test]
    fn abe_backs_off_less_on_an_echo_than_on_a_loss() {
        // RFC 8511 with beta_ecn 0.8: an echo keeps 80% of FlightSize, a loss still halves.
        let mut c = NewReno::new(0.5, 0.8, false);
        let mut w = Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS };
        // The echo that ends slow start uses beta_ecn too.
        assert!(w.in_slow_start());
        c.on_congestion_event(&mut w, Signal::Ecn, 20 * MSS, 0);
        assert_eq!((w.cwnd, w.ssthresh), (16 * MSS, 16 * MSS));
        c.on_congestion_event(&mut w, Signal::Loss, 16 * MSS, 0);
        assert_eq!((w.cwnd, w.ssthresh), (8 * MSS, 8 * MSS));
        c.on_congestion_event(&mut w, Signal::Ecn, 2 * MSS + 500, 0);
        assert_eq!((w.cwnd, w.ssthresh), (2 * MSS, 2 * MSS), "floor of 2 SMSS");
        // A timeout uses the loss factor.
        c.on_timeout(&mut w, 10 * MSS, 0);
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 5 * MSS));
    }

    #[test]
    fn byte_counting_grows_one_segment_per_window_whatever_the_ack_size() {
        // RFC 3465: with delayed ACKs (2 segments each) RFC 5681 grows cwnd by about half a
        // segment per window; byte counting by one. Slow start adds up to 2 SMSS per ACK.
        let rtt = RttInfo::default();
        for (abc, ss_growth, ca_growth) in [(false, MSS, 5 * MSS), (true, 2 * MSS, 10 * MSS)] {
            let mut c = NewReno::new(0.5, 0.5, abc);
            let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS };
            c.on_ack(&mut w, 2 * MSS, rtt, 0);
            assert_eq!(w.cwnd, 10 * MSS + ss_growth, "slow start, abc {abc}");
            // Congestion avoidance at 100 segments: 10 windows of 50 two-segment ACKs.
            let mut w = Window { cwnd: 100 * MSS, ssthresh: 50 * MSS, mss: MSS };
            for _ in 0..500 {
                c.on_ack(&mut w, 2 * MSS, rtt, 0);
            }
            let grown = w.cwnd - 100 * MSS;
            assert!(grown.abs_diff(ca_growth) <= MSS, "abc {abc}: grew {} segments", grown as f64 / MSS as f64);
        }
        // A reduction forgets the bytes counted so far.
        let mut c = NewReno::new(0.5, 0.5, true);
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 5 * MSS, mss: MSS };
        for _ in 0..4 {
            c.on_ack(&mut w, 2 * MSS, rtt, 0);
        }
        assert_eq!(w.cwnd, 10 * MSS);
        c.on_congestion_event(&mut w, Signal::Ecn, 10 * MSS, 0);
        for _ in 0..2 {
            c.on_ack(&mut w, 2 * MSS, rtt, 0);
        }
        assert_eq!(w.cwnd, 5 * MSS, "4 segments acked since the reduction: below cwnd");
        c.on_ack(&mut w, MSS, rtt, 0);
        assert_eq!(w.cwnd, 6 * MSS);
    }
}
