//! Retransmission timeout (RFC 6298 sections 2-5, or Linux's or FreeBSD's arithmetic).
//!
//! RFC 6298: SRTT and RTTVAR follow section 2 (alpha 1/8, beta 1/4, K = 4); RTO = SRTT +
//! max(G, 4 RTTVAR), clamped to [min RTO, max RTO]. Before the first sample the RTO is the
//! initial RTO (1 s in RFC 6298, 3 s in RFC 2988 and the 2005 studies). Each expiry doubles the
//! RTO (section 5.5) up to max RTO; the backoff is kept until a new sample arrives (section 5.7,
//! Karn's algorithm: the caller never samples a retransmitted segment).
//!
//! Linux and FreeBSD keep the same gains (1/8, 1/4) in scaled integers; what differs is where
//! the minimum applies (see [`RtoEstimator`]). Their arithmetic is reproduced in their units
//! (Linux: microseconds, rounded up to a jiffy of `granularity`; FreeBSD: ticks of
//! `granularity`, 1 ms at FreeBSD's default hz = 1000), so hand computations from the kernel
//! sources match exactly.

use super::params::RtoEstimator;
pub use super::window::RttInfo;
use crate::engine::SimTime;

/// FreeBSD's `net.inet.tcp.rexmit_slop` (tcp_timer.h `TCPTV_CPU_VAR`, hz / 5): 200 ms added to
/// every computed RTO by `TCPT_RANGESET`.
pub const FREEBSD_REXMIT_SLOP: SimTime = 200_000_000;
/// FreeBSD's scaling (tcp_var.h): srtt << 5, rttvar << 4, arithmetic with 2 fractional bits.
const BSD_RTT_SHIFT: u32 = 5;
const BSD_RTTVAR_SHIFT: u32 = 4;
const BSD_DELTA_SHIFT: u32 = 2;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: SimTime,
    rttvar: SimTime,
    /// Smallest sample so far (0 before the first).
    min_rtt: SimTime,
    has_sample: bool,
    /// Number of consecutive backoffs (RTO doublings).
    backoff: u32,
    initial: SimTime,
    min: SimTime,
    max: SimTime,
    granularity: SimTime,
    kind: RtoEstimator,
    /// Linux: srtt_us (microseconds << 3), mdev_us, mdev_max_us, rttvar_us (all << 2 of a mean
    /// deviation), and rtt_seq (snd_nxt when the last flight's rttvar update was made).
    /// FreeBSD: t_srtt (ticks << 5), t_rttvar (ticks << 4) and the last sample in ticks.
    k_srtt: i64,
    k_mdev: i64,
    k_mdev_max: i64,
    k_rttvar: i64,
    k_rtt_seq: u64,
    k_last: i64,
}

impl RttEstimator {
    pub fn new(initial: SimTime, min: SimTime, max: SimTime, granularity: SimTime) -> Self {
        Self::with_kind(RtoEstimator::Rfc6298, initial, min, max, granularity)
    }

    pub fn with_kind(kind: RtoEstimator, initial: SimTime, min: SimTime, max: SimTime, granularity: SimTime) -> Self {
        RttEstimator {
            srtt: 0,
            rttvar: 0,
            min_rtt: 0,
            has_sample: false,
            backoff: 0,
            initial,
            min,
            max,
            granularity,
            kind,
            k_srtt: 0,
            k_mdev: 0,
            k_mdev_max: 0,
            k_rttvar: 0,
            k_rtt_seq: 0,
            k_last: 0,
        }
    }

    /// Feeds one round-trip measurement (never from a retransmitted segment).
    pub fn sample(&mut self, r: SimTime) {
        self.sample_at(r, 0, 0);
    }

    /// Feeds one round-trip measurement taken by an ACK that moved snd_una to `snd_una`, with
    /// `snd_nxt` the next sequence number to send (Linux's estimator updates rttvar once per
    /// flight: when snd_una passes the snd_nxt of the last update).
    pub fn sample_at(&mut self, r: SimTime, snd_una: u64, snd_nxt: u64) {
        match self.kind {
            RtoEstimator::Rfc6298 => self.sample_rfc6298(r),
            RtoEstimator::Linux => self.sample_linux(r, snd_una, snd_nxt),
            RtoEstimator::Freebsd => self.sample_freebsd(r),
        }
        if !self.has_sample {
            self.min_rtt = r;
        }
        self.has_sample = true;
        self.min_rtt = self.min_rtt.min(r);
        self.backoff = 0;
    }

    /// net/ipv4/tcp_input.c, `tcp_rtt_estimator` (Linux 3.15 and later, in microseconds).
    fn sample_linux(&mut self, r: SimTime, snd_una: u64, snd_nxt: u64) {
        let rto_min = (self.min / 1000) as i64;
        let mut m = (r / 1000).max(1) as i64;
        if self.k_srtt != 0 {
            m -= self.k_srtt >> 3; // the error of the estimate
            self.k_srtt += m; // srtt = 7/8 srtt + 1/8 sample
            if m < 0 {
                m = -m;
                m -= self.k_mdev >> 2;
                // A falling RTT moves mdev with a gain of 1/32 instead of 1/4.
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= self.k_mdev >> 2;
            }
            self.k_mdev += m; // mdev = 3/4 mdev + 1/4 |error|
            if self.k_mdev > self.k_mdev_max {
                self.k_mdev_max = self.k_mdev;
                if self.k_mdev_max > self.k_rttvar {
                    self.k_rttvar = self.k_mdev_max;
                }
            }
            // Once per flight (snd_una after rtt_seq): rttvar decays toward the flight's
            // largest mdev, which restarts from tcp_rto_min.
            if snd_una > self.k_rtt_seq {
                if self.k_mdev_max < self.k_rttvar {
                    self.k_rttvar -= (self.k_rttvar - self.k_mdev_max) >> 2;
                }
                self.k_rtt_seq = snd_nxt;
                self.k_mdev_max = rto_min;
            }
        } else {
            self.k_srtt = m << 3;
            self.k_mdev = m << 1; // rto = 3 rtt
            self.k_rttvar = self.k_mdev.max(rto_min);
            self.k_mdev_max = self.k_rttvar;
            self.k_rtt_seq = snd_nxt;
        }
        self.k_srtt = self.k_srtt.max(1);
        self.srtt = (self.k_srtt >> 3) as SimTime * 1000;
        self.rttvar = self.k_rttvar as SimTime * 1000 / 4;
    }

    /// sys/netinet/tcp_input.c, `tcp_xmit_timer` (FreeBSD 4 to 14), in ticks of `granularity`.
    fn sample_freebsd(&mut self, r: SimTime) {
        let tick = self.granularity.max(1);
        // The tick counter's difference (`ticks - t_rtttime`) for a segment sent on a tick.
        let rtt = (r / tick) as i64;
        if self.k_srtt != 0 {
            // Origin 0: the sample counts one tick less (`rtt - 1`).
            let mut delta = ((rtt - 1) << BSD_DELTA_SHIFT) - (self.k_srtt >> (BSD_RTT_SHIFT - BSD_DELTA_SHIFT));
            self.k_srtt += delta;
            if self.k_srtt <= 0 {
                self.k_srtt = 1;
            }
            delta = delta.abs();
            delta -= self.k_rttvar >> (BSD_RTTVAR_SHIFT - BSD_DELTA_SHIFT);
            self.k_rttvar += delta;
            if self.k_rttvar <= 0 {
                self.k_rttvar = 1;
            }
        } else {
            self.k_srtt = rtt << BSD_RTT_SHIFT;
            self.k_rttvar = rtt << (BSD_RTTVAR_SHIFT - 1); // the first timeout at 3 rtt
        }
        self.k_last = rtt;
        self.srtt = (self.k_srtt as SimTime * tick) >> BSD_RTT_SHIFT;
        self.rttvar = (self.k_rttvar as SimTime * tick) >> BSD_RTTVAR_SHIFT;
    }

    /// FreeBSD's `TCP_REXMTVAL`: max(t_rttmin, srtt + 4 rttvar), in ticks.
    fn freebsd_rexmtval(&self) -> i64 {
        let tick = self.granularity.max(1);
        let rttmin = (self.min / tick) as i64;
        let v = ((self.k_srtt >> (BSD_RTT_SHIFT - BSD_DELTA_SHIFT)) + self.k_rttvar) >> BSD_DELTA_SHIFT;
        v.max(rttmin)
    }

    fn sample_rfc6298(&mut self, r: SimTime) {
        if self.has_sample {
            let err = self.srtt.abs_diff(r);
            // RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R'|, then SRTT <- 7/8 SRTT + 1/8 R'.
            self.rttvar = (3 * self.rttvar + err) / 4;
            self.srtt = (7 * self.srtt + r) / 8;
        } else {
            self.srtt = r;
            self.rttvar = r / 2;
        }
    }

    /// The RTO before backoff.
    fn base(&self) -> SimTime {
        if !self.has_sample {
            return self.initial;
        }
        match self.kind {
            RtoEstimator::Rfc6298 => (self.srtt + self.granularity.max(4 * self.rttvar)).clamp(self.min, self.max),
            RtoEstimator::Linux => {
                // __tcp_set_rto: (srtt_us >> 3) + rttvar_us, usecs_to_jiffies (rounds up);
                // tcp_bound_rto: at most TCP_RTO_MAX.
                let us = ((self.k_srtt >> 3) + self.k_rttvar) as SimTime;
                let jiffy = self.granularity.max(1);
                (us * 1000).div_ceil(jiffy).saturating_mul(jiffy).min(self.max)
            }
            RtoEstimator::Freebsd => self.freebsd_rto(1),
        }
    }

    /// FreeBSD's `TCPT_RANGESET(t_rxtcur, TCP_REXMTVAL(tp) * backoff, tvmin, TCPTV_REXMTMAX)`:
    /// the value plus the slop, raised to tvmin (max(t_rttmin, rtt + 2) after a sample,
    /// t_rttmin on a backed-off timeout, tcp_timer.c `tcp_timer_rexmt`), capped at max RTO.
    fn freebsd_rto(&self, mult: i64) -> SimTime {
        let tick = self.granularity.max(1);
        let rttmin = (self.min / tick) as i64;
        let tvmin = if mult == 1 { rttmin.max(self.k_last + 2) } else { rttmin };
        let v = (self.freebsd_rexmtval().saturating_mul(mult) as SimTime).saturating_mul(tick) + FREEBSD_REXMIT_SLOP;
        v.max(tvmin as SimTime * tick).min(self.max)
    }

    /// The RTO before backoff (Linux's `icsk_rto`).
    pub fn rto_unbacked(&self) -> SimTime {
        self.base()
    }

    /// The timeout to arm now.
    pub fn rto(&self) -> SimTime {
        if self.kind == RtoEstimator::Freebsd && self.has_sample {
            // tcp_timer.c `tcp_backoff`: 1, 2, 4, ... 512 times TCP_REXMTVAL, then the slop.
            return self.freebsd_rto(1i64 << self.backoff.min(9));
        }
        let mut r = self.base();
        for _ in 0..self.backoff {
            r = r.saturating_mul(2).min(self.max);
        }
        r
    }

    /// Consecutive backoffs so far.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    /// Sets the backoff count: ns-2's ECN response keeps it across an RTT sample, and
    /// `RtoBackoffEnd::NewAck` ends it (0) at an ACK of new data.
    pub fn set_backoff(&mut self, backoff: u32) {
        self.backoff = backoff;
    }

    /// An expiry: double the timeout.
    pub fn back_off(&mut self) {
        if self.rto() < self.max {
            self.backoff += 1;
        }
    }

    pub fn srtt(&self) -> Option<SimTime> {
        self.has_sample.then_some(self.srtt)
    }

    /// What a congestion controller may know of the path's round-trip time (the per-ACK
    /// fields are the sender's to fill).
    pub fn info(&self) -> RttInfo {
        RttInfo { srtt: self.srtt, min_rtt: self.min_rtt, ..Default::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::super::params::RtoEstimator;
    use super::*;
    use crate::engine::time::{NS_PER_MS, NS_PER_S};

    #[test]
    fn first_sample_matches_spec_vector() {
        // Spec Part V: R = 100 ms -> SRTT 0.1, RTTVAR 0.05, RTO 0.3 s, clamped to 1 s by RFC 6298.
        let mut e = RttEstimator::new(NS_PER_S, NS_PER_S, 60 * NS_PER_S, 0);
        assert_eq!(e.rto(), NS_PER_S);
        e.sample(100 * NS_PER_MS);
        assert_eq!(e.srtt(), Some(100 * NS_PER_MS));
        assert_eq!(e.rttvar, 50 * NS_PER_MS);
        assert_eq!(e.rto(), NS_PER_S);
        let mut linux = RttEstimator::new(NS_PER_S, 200 * NS_PER_MS, 120 * NS_PER_S, 0);
        linux.sample(100 * NS_PER_MS);
        assert_eq!(linux.rto(), 300 * NS_PER_MS);
    }

    #[test]
    fn later_samples_use_old_srtt_for_rttvar() {
        let mut e = RttEstimator::new(NS_PER_S, 0, 60 * NS_PER_S, 0);
        e.sample(100 * NS_PER_MS);
        e.sample(200 * NS_PER_MS);
        // RTTVAR = 3/4 * 50 + 1/4 * |100 - 200| = 62.5 ms; SRTT = 7/8 * 100 + 1/8 * 200 = 112.5 ms.
        assert_eq!(e.rttvar, 62_500_000);
        assert_eq!(e.srtt(), Some(112_500_000));
        assert_eq!(e.rto(), 112_500_000 + 250_000_000);
    }

    const MS: u64 = NS_PER_MS;

    #[test]
    fn linux_estimator_matches_the_kernel_arithmetic() {
        // tcp_rtt_estimator in microseconds: srtt_us = 8 srtt, mdev_us and rttvar_us = 4 mean
        // deviations; rttvar never below tcp_rto_min (200 ms); RTO = srtt + rttvar.
        let mut e = RttEstimator::with_kind(RtoEstimator::Linux, NS_PER_S, 200 * MS, 120 * NS_PER_S, MS);
        assert_eq!(e.rto(), NS_PER_S);
        // 20 ms: srtt_us 160000, mdev_us 40000, rttvar_us max(40000, 200000) = 200000.
        e.sample_at(20 * MS, 1, 1);
        assert_eq!(e.rto(), 220 * MS, "20 ms + rttvar 200 ms (RFC 6298: max(60 ms, min RTO))");
        // 30 ms, a new flight: m = 30000 - 20000 = 10000; srtt_us 170000; m - mdev/4 = 0,
        // mdev 40000; rttvar stays 200000. RTO = 21250 us + 200000 us, rounded up to 222 ms.
        e.sample_at(30 * MS, 1001, 2001);
        assert_eq!(e.rto(), 222 * MS);
        // 10 ms: m = -11250, srtt_us 158750; |m| - mdev/4 = 1250, >> 3 = 156 (the falling-RTT
        // gain); RTO = 19843 + 200000 us -> 220 ms.
        e.sample_at(10 * MS, 2001, 3001);
        assert_eq!(e.rto(), 220 * MS);

        let mut e = RttEstimator::with_kind(RtoEstimator::Linux, NS_PER_S, 200 * MS, 120 * NS_PER_S, MS);
        e.sample_at(100 * MS, 1, 1); // srtt_us 800000, mdev 200000, rttvar 200000
        assert_eq!(e.rto(), 300 * MS);
        // 300 ms: m = 200000, srtt_us 1000000, mdev 200000 + 150000 = 350000 > mdev_max: rttvar
        // 350000. RTO = 125000 + 350000 us.
        e.sample_at(300 * MS, 1001, 5001);
        assert_eq!(e.rto(), 475 * MS);
        // 100 ms in the same flight (snd_una 3001 is not after rtt_seq 5001): m = -25000,
        // srtt_us 975000; |m| - mdev/4 = -62500 (not shifted), mdev 287500 = mdev_max; no decay.
        e.sample_at(100 * MS, 3001, 5001);
        assert_eq!(e.rto(), 472 * MS, "121875 + 350000 us, rounded up");
        // 100 ms, next flight: srtt_us 953125, mdev 237500; rttvar decays by a quarter of
        // (350000 - 287500): 334375. RTO = 119140 + 334375 us -> 454 ms.
        e.sample_at(100 * MS, 5002, 9001);
        assert_eq!(e.rto(), 454 * MS);
        assert_eq!(e.srtt(), Some(119_140_000));
        e.back_off();
        assert_eq!(e.rto(), 908 * MS);
    }

    #[test]
    fn freebsd_estimator_matches_the_kernel_arithmetic() {
        // tcp_xmit_timer in 1 ms ticks: t_srtt = 32 srtt, t_rttvar = 16 rttvar; TCP_REXMTVAL =
        // max(rexmit_min, srtt + 4 rttvar); TCPT_RANGESET adds rexmit_slop (200 ms).
        let mut e = RttEstimator::with_kind(RtoEstimator::Freebsd, NS_PER_S, 30 * MS, 64 * NS_PER_S, MS);
        assert_eq!(e.rto(), NS_PER_S);
        // 100 ticks: t_srtt 3200, t_rttvar 800; REXMTVAL = (400 + 800) >> 2 = 300.
        e.sample(100 * MS);
        assert_eq!(e.rto(), 500 * MS);
        // 100 again: delta = (99 << 2) - 400 = -4, t_srtt 3196; 4 - 200 = -196, t_rttvar 604;
        // REXMTVAL = (399 + 604) >> 2 = 250.
        e.sample(100 * MS);
        assert_eq!(e.rto(), 450 * MS);
        // delta = 396 - 399 = -3, t_srtt 3193; 3 - 151, t_rttvar 456; (399 + 456) >> 2 = 213.
        e.sample(100 * MS);
        assert_eq!(e.rto(), 413 * MS);
        // A backoff doubles REXMTVAL, then the slop: 2 * 213 + 200.
        e.back_off();
        assert_eq!(e.rto(), 626 * MS);
        // A short path: the slop keeps the RTO above 200 ms where RFC 6298 with FreeBSD's
        // 30 ms minimum would give 60 ms.
        let mut s = RttEstimator::with_kind(RtoEstimator::Freebsd, NS_PER_S, 30 * MS, 64 * NS_PER_S, MS);
        for _ in 0..50 {
            s.sample(10 * MS);
        }
        // Converged: t_srtt -> 9 ticks (origin 0), t_rttvar small; RTO = 200 ms + REXMTVAL,
        // and REXMTVAL = max(30, ...) = 30 ticks.
        assert_eq!(s.rto(), 230 * MS);
    }

    #[test]
    fn backoff_doubles_up_to_max_and_resets_on_sample() {
        let mut e = RttEstimator::new(3 * NS_PER_S, NS_PER_S, 60 * NS_PER_S, 0);
        let mut seen = vec![e.rto()];
        for _ in 0..6 {
            e.back_off();
            seen.push(e.rto());
        }
        let s: Vec<u64> = seen.iter().map(|t| t / NS_PER_S).collect();
        assert_eq!(s, vec![3, 6, 12, 24, 48, 60, 60]);
        e.sample(100 * NS_PER_MS);
        assert_eq!(e.rto(), NS_PER_S);
    }
}
