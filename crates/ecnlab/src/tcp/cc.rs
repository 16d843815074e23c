//! Congestion controllers: pure state machines with no I/O (STYLE 5).
//!
//! The sender owns loss detection and recovery (dupacks, NewReno partial ACKs, timeouts, ECN
//! echo handling); a controller only decides the window: how it grows on an ACK of new data and
//! what it becomes after a congestion signal. Tests drive controllers with scripted ACKs, losses
//! and marks and check `cwnd` and `ssthresh` exactly.

use crate::engine::SimTime;

/// The sender's window state, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
}

impl Window {
    pub fn in_slow_start(&self) -> bool {
        // Slow start iff cwnd < ssthresh (RFC 5681 section 3.1; Linux uses the same test).
        self.cwnd < self.ssthresh
    }
}

/// What the network said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// A loss detected by duplicate ACKs.
    Loss,
    /// An ECN echo (ECE) from the receiver.
    Ecn,
}

pub trait CongestionControl {
    /// An ACK acknowledged `acked` new bytes outside loss recovery.
    fn on_ack(&mut self, w: &mut Window, acked: u64, now: SimTime);
    /// A congestion signal, at most once per window of data (the sender enforces that).
    /// `flight` is FlightSize, the bytes outstanding when the signal arrived.
    fn on_congestion_event(&mut self, w: &mut Window, signal: Signal, flight: u64, now: SimTime);
    /// A retransmission timeout.
    fn on_timeout(&mut self, w: &mut Window, flight: u64, now: SimTime);
}

/// NewReno window arithmetic (RFC 5681 sections 3.1; loss recovery itself is RFC 6582, in the
/// sender). On a loss or an ECN echo, ssthresh = max(FlightSize / 2, 2 SMSS) (RFC 5681 eq. 4,
/// RFC 3168 section 6.1.2).
#[derive(Clone, Debug, Default)]
pub struct NewReno;

impl CongestionControl for NewReno {
    fn on_ack(&mut self, w: &mut Window, acked: u64, _now: SimTime) {
        if w.in_slow_start() {
            // Slow start: cwnd += min(N, SMSS) per ACK (RFC 5681 eq. 2).
            w.cwnd += acked.min(w.mss);
        } else {
            // Congestion avoidance: cwnd += max(1, SMSS * SMSS / cwnd) per ACK (RFC 5681 eq. 3).
            w.cwnd += (w.mss * w.mss / w.cwnd).max(1);
        }
    }

    fn on_congestion_event(&mut self, w: &mut Window, _signal: Signal, flight: u64, _now: SimTime) {
        w.ssthresh = (flight / 2).max(2 * w.mss);
        w.cwnd = w.ssthresh;
    }

    fn on_timeout(&mut self, w: &mut Window, flight: u64, _now: SimTime) {
        // RFC 5681 eq. 4 and loss window LW = 1 SMSS.
        w.ssthresh = (flight / 2).max(2 * w.mss);
        w.cwnd = w.mss;
    }
}

/// The configured controller of an endpoint (enum dispatch keeps the hot path direct).
#[derive(Clone, Debug)]
pub enum Controller {
    NewReno(NewReno),
}

impl CongestionControl for Controller {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, acked: u64, now: SimTime) {
        match self {
            Controller::NewReno(c) => c.on_ack(w, acked, now),
        }
    }
    #[inline]
    fn on_congestion_event(&mut self, w: &mut Window, signal: Signal, flight: u64, now: SimTime) {
        match self {
            Controller::NewReno(c) => c.on_congestion_event(w, signal, flight, now),
        }
    }
    #[inline]
    fn on_timeout(&mut self, w: &mut Window, flight: u64, now: SimTime) {
        match self {
            Controller::NewReno(c) => c.on_timeout(w, flight, now),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn slow_start_then_congestion_avoidance() {
        let mut c = NewReno;
        let mut w = Window { cwnd: 2 * MSS, ssthresh: 4 * MSS, mss: MSS };
        c.on_ack(&mut w, 2 * MSS, 0); // a delayed ACK of two segments still adds one SMSS
        assert_eq!(w.cwnd, 3 * MSS);
        c.on_ack(&mut w, MSS, 0);
        assert_eq!(w.cwnd, 4 * MSS);
        assert!(!w.in_slow_start());
        c.on_ack(&mut w, MSS, 0);
        assert_eq!(w.cwnd, 4 * MSS + MSS * MSS / (4 * MSS));
    }

    #[test]
    fn loss_and_ecn_halve_timeout_collapses() {
        let mut c = NewReno;
        let mut w = Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS };
        c.on_congestion_event(&mut w, Signal::Loss, 20 * MSS, 0);
        assert_eq!((w.cwnd, w.ssthresh), (10 * MSS, 10 * MSS));
        c.on_congestion_event(&mut w, Signal::Ecn, 3 * MSS, 0);
        assert_eq!((w.cwnd, w.ssthresh), (2 * MSS, 2 * MSS), "floor of 2 SMSS");
        c.on_timeout(&mut w, 12 * MSS, 0);
        assert_eq!((w.cwnd, w.ssthresh), (MSS, 6 * MSS));
    }
}
