//! DCTCP's sender (RFC 8257 section 3.3; Linux's net/ipv4/tcp_dctcp.c).
//!
//! The sender estimates the fraction of its bytes that were marked, once per observation
//! window of about one round trip, and on an echo scales its reduction to it:
//!
//! * Every ACK adds its newly delivered bytes to `DCTCP.BytesAcked`, and to
//!   `DCTCP.BytesMarked` when it echoes (`on_ack_signal`, from [`AckSignal`]).
//! * The window ends when SND.UNA reaches the SND.NXT recorded at its start (Linux's
//!   `dctcp_update_alpha`: `!before(snd_una, next_seq)`; RFC 8257 writes SND.UNA >
//!   WindowEnd). Then F = BytesMarked / BytesAcked, alpha <- (1 - g) alpha + g F, both counters
//!   restart and the new window ends at today's SND.NXT (`dctcp_reset`).
//! * An echo (at most once per window of data, which the sender enforces as for RFC 3168)
//!   sets ssthresh = cwnd = max(cwnd (1 - alpha / 2), 2 SMSS) (Linux's `dctcp_ssthresh`; Linux
//!   then lowers cwnd to it by PRR over the next round trip, here it is set at once as the RFC
//!   writes it).
//! * Growth, and the answer to a loss or a timeout, are NewReno's (Linux builds DCTCP on Reno:
//!   `tcp_reno_cong_avoid`, and `dctcp_react_to_loss` halves cwnd).
//!
//! alpha is kept as a float; Linux keeps it in 1/1024 units (`DCTCP_MAX_ALPHA`) with g a shift
//! (`dctcp_shift_g`, 4 for 1/16), and starts it at `dctcp_alpha_on_init` = 1024 (alpha = 1).

use super::cc::{CongestionControl, NewReno};
use super::window::{AckSignal, RttInfo, Signal, Window};
use crate::engine::SimTime;

/// DCTCP's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DctcpParams {
    /// The estimation gain g (RFC 8257: 1/16).
    pub g: f64,
    /// alpha before the first window ends (Linux's `dctcp_alpha_on_init` / 1024: 1).
    pub alpha_init: f64,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams { g: 1.0 / 16.0, alpha_init: 1.0 }
    }
}

/// The DCTCP controller: NewReno's growth and loss response, alpha's reduction on an echo.
#[derive(Clone, Debug, PartialEq)]
pub struct Dctcp {
    pub params: DctcpParams,
    pub reno: NewReno,
    alpha: f64,
    /// SND.NXT when the current observation window started (`DCTCP.WindowEnd`; Linux's
    /// `next_seq`).
    window_end: u64,
    /// Bytes acknowledged and bytes acknowledged by echoing ACKs in the window.
    bytes_acked: u64,
    bytes_marked: u64,
    /// Windows completed (alpha updates), for tests and statistics.
    windows: u64,
}

impl Dctcp {
    /// `reno` carries the loss response (beta) and growth (ABC, slow-start exit).
    pub fn new(params: DctcpParams, reno: NewReno) -> Self {
        Dctcp { params, reno, alpha: params.alpha_init, window_end: 0, bytes_acked: 0, bytes_marked: 0, windows: 0 }
    }

    /// The current estimate of the marked fraction.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// SND.NXT at the start of the current observation window.
    pub fn window_end(&self) -> u64 {
        self.window_end
    }

    /// Starts a new observation window ending at `snd_nxt` without updating alpha (Prague
    /// before its first mark).
    pub fn start_window(&mut self, snd_nxt: u64) {
        self.bytes_acked = 0;
        self.bytes_marked = 0;
        self.window_end = snd_nxt;
    }

    /// Observation windows completed so far.
    pub fn windows(&self) -> u64 {
        self.windows
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, w: &mut Window, acked: u64, rtt: RttInfo, now: SimTime) {
        self.reno.on_ack(w, acked, rtt, now);
    }

    fn on_congestion_event(&mut self, w: &mut Window, signal: Signal, flight: u64, now: SimTime) {
        match signal {
            Signal::Loss => self.reno.on_congestion_event(w, signal, flight, now),
            Signal::Ecn => {
                // RFC 8257 3.3: cwnd = cwnd (1 - alpha / 2), from cwnd, not FlightSize.
                let reduced = (w.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64;
                w.ssthresh = reduced.max(2 * w.mss);
                w.cwnd = w.ssthresh;
                // Congestion avoidance counts afresh from the new window (as NewReno's).
                self.reno.restart_byte_count();
            }
        }
    }

    fn on_timeout(&mut self, w: &mut Window, flight: u64, now: SimTime) {
        self.reno.on_timeout(w, flight, now);
    }

    fn on_idle_restart(&mut self, idle: SimTime) {
        self.reno.on_idle_restart(idle);
    }

    fn on_ack_signal(&mut self, _w: &mut Window, s: &AckSignal) {
        self.bytes_acked += s.delivered_bytes;
        self.bytes_marked += s.ce_bytes;
        if s.rtt.snd_una >= self.window_end {
            let f = self.bytes_marked as f64 / self.bytes_acked.max(1) as f64;
            let g = self.params.g;
            self.alpha = ((1.0 - g) * self.alpha + g * f).min(1.0);
            self.bytes_acked = 0;
            self.bytes_marked = 0;
            self.window_end = s.rtt.snd_nxt;
            self.windows += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Rng;

    const MSS: u64 = 1000;

    fn signal(delivered: u64, ce: bool, snd_una: u64, snd_nxt: u64) -> AckSignal {
        AckSignal {
            delivered_bytes: delivered,
            ce_bytes: if ce { delivered } else { 0 },
            ece: ce,
            rtt: RttInfo { snd_una, snd_nxt, ..RttInfo::default() },
        }
    }

    /// Runs `windows` observation windows of `segs` one-segment ACKs each, segment n marked
    /// when `mark(n)`; returns the controller.
    fn run(g: f64, windows: usize, segs: u64, mark: &mut dyn FnMut(u64) -> bool) -> Dctcp {
        let mut c = Dctcp::new(DctcpParams { g, alpha_init: 1.0 }, NewReno::default());
        let mut w = Window { cwnd: segs * MSS, ssthresh: u64::MAX, mss: MSS };
        // The first ACK ends the empty window that starts the connection (Linux: next_seq =
        // snd_nxt at init); then each window is `segs` segments.
        let mut una = 1;
        c.on_ack_signal(&mut w, &signal(0, false, una, una + segs * MSS));
        let mut n = 0;
        for _ in 0..windows {
            for _ in 0..segs {
                una += MSS;
                c.on_ack_signal(&mut w, &signal(MSS, mark(n), una, una + segs * MSS));
                n += 1;
            }
        }
        c
    }

    #[test]
    fn alpha_follows_the_marked_fraction_with_gain_g() {
        // Exactly one segment in ten marked. The first ACK ends the empty window open since the
        // connection started (F = 0: alpha = 1 - g; Linux the same, next_seq being snd_nxt at
        // dctcp_init); after k more windows RFC 8257 3.3's recursion gives
        // alpha_k = F + (1 - g - F)(1 - g)^k with F = 0.1.
        for (g, k) in [(1.0 / 16.0, 10), (1.0 / 16.0, 40), (1.0 / 8.0, 10), (1.0 / 4.0, 5)] {
            let c = run(g, k, 20, &mut |n| n % 10 == 9);
            let want = 0.1 + (0.9 - g) * (1.0 - g).powi(k as i32);
            assert!((c.alpha() - want).abs() < 1e-9, "g {g}, {k} windows: alpha {} want {want}", c.alpha());
            assert_eq!(c.windows(), k as u64 + 1);
        }
        // With g = 1/16, ten windows leave alpha at 0.539; g = 1/8 would give 0.304, g = 1/32
        // 0.728: the value tells g apart.
        let c = run(1.0 / 16.0, 10, 20, &mut |n| n % 10 == 9);
        assert!((c.alpha() - 0.539).abs() < 1e-3, "{}", c.alpha());
        // After 200 windows alpha is F to within 1e-5 (0.84 (15/16)^200 = 2e-6).
        let c = run(1.0 / 16.0, 200, 20, &mut |n| n % 10 == 9);
        assert!((c.alpha() - 0.1).abs() < 1e-5, "{}", c.alpha());
    }

    #[test]
    fn alpha_converges_to_a_random_marking_probability() {
        // Each segment marked with probability 0.1, 50 segments per window, 400 windows: alpha
        // is an exponential average with weight g = 1/16 (about 31 windows' memory) of window
        // fractions whose standard deviation is sqrt(0.09 / 50) = 0.042, so alpha's is about
        // 0.042 sqrt(g / (2 - g)) = 0.0076. Averaged over the last 200 windows it is within
        // 0.01 of 0.1.
        let mut rng = Rng::from_seed(7);
        let mut c = Dctcp::new(DctcpParams::default(), NewReno::default());
        let mut w = Window { cwnd: 50 * MSS, ssthresh: u64::MAX, mss: MSS };
        let mut una = 1;
        let (mut sum, mut n) = (0.0, 0);
        for win in 0..400 {
            for _ in 0..50 {
                una += MSS;
                c.on_ack_signal(&mut w, &signal(MSS, rng.uniform() < 0.1, una, una + 50 * MSS));
            }
            if win >= 200 {
                sum += c.alpha();
                n += 1;
            }
            if win == 399 {
                assert!((c.alpha() - 0.1).abs() < 0.03, "alpha at the end {}", c.alpha());
            }
        }
        let mean = sum / n as f64;
        assert!((mean - 0.1).abs() < 0.01, "mean alpha {mean}");
    }

    #[test]
    fn an_echo_cuts_cwnd_by_half_alpha_and_a_loss_halves() {
        let mut c = Dctcp::new(DctcpParams { g: 1.0 / 16.0, alpha_init: 0.2 }, NewReno::default());
        let mut w = Window { cwnd: 100 * MSS, ssthresh: 50 * MSS, mss: MSS };
        c.on_congestion_event(&mut w, Signal::Ecn, 120 * MSS, 0);
        assert_eq!((w.cwnd, w.ssthresh), (90 * MSS, 90 * MSS), "cwnd (1 - 0.2 / 2), from cwnd not FlightSize");
        c.on_congestion_event(&mut w, Signal::Loss, 80 * MSS, 0);
        assert_eq!((w.cwnd, w.ssthresh), (40 * MSS, 40 * MSS), "a loss halves FlightSize");
        let mut w = Window { cwnd: 2 * MSS + 10, ssthresh: 50 * MSS, mss: MSS };
        let mut c = Dctcp::new(DctcpParams::default(), NewReno::default());
        c.on_congestion_event(&mut w, Signal::Ecn, 2 * MSS, 0);
        assert_eq!(w.cwnd, 2 * MSS, "floor of two segments (Linux's dctcp_ssthresh)");
    }
}
