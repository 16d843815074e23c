//! Resolved TCP endpoint parameters (all times in nanoseconds, sizes in bytes).
//!
//! Profiles (spec section 20.3, 21, 22): `seed-2005` is the endpoint of the 2005 studies
//! (initial RTO 3 s per RFC 2988, min RTO 1 s, IW 2, delayed ACK 200 ms); `rfc6298` is today's
//! standard (initial RTO 1 s, min RTO 1 s, IW per RFC 3390); `linux` has Linux's defaults
//! (min RTO 200 ms, max RTO 120 s, IW 10, its own RTO estimator and delayed-ACK engine, an ECN
//! reduction that stops at two segments); `freebsd` has FreeBSD 10's (min RTO 30 ms plus a
//! 200 ms slop, max RTO 64 s, delayed ACK 100 ms, BSD's fixed-point RTO estimator). See
//! docs/models/tcp.md for every value and its source.

pub use super::accecn::AccEcnOptionMode;
use super::cubic::CubicParams;
use super::dctcp::DctcpParams;
use super::ecn::EchoMode;
use super::prague::PragueParams;
use super::hystart::HystartKind;
use crate::engine::SimTime;
use crate::packet::Ecn;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which congestion controller an endpoint runs, with its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CcKind {
    /// Multiplicative decrease `beta` on a loss, `beta_ecn` on an ECN echo (ABE when they
    /// differ).
    NewReno { beta: f64, beta_ecn: f64 },
    /// Reno (RFC 5681 section 3.2): NewReno's window arithmetic, but fast recovery ends on the
    /// first ACK of new data, partial or full (no RFC 6582 partial-ACK rule).
    Reno { beta: f64, beta_ecn: f64 },
    Cubic(CubicParams),
    /// DCTCP (RFC 8257): NewReno's growth and loss response with `beta`, a reduction scaled by
    /// the marked fraction on an echo, DCTCP's exact echo at the receiver.
    Dctcp { beta: f64, dctcp: DctcpParams },
    /// TCP Prague (the iccrg draft): DCTCP with RTT independence, alpha from the first mark,
    /// an optional classic-ECN fallback.
    Prague { beta: f64, dctcp: DctcpParams, prague: PragueParams },
}

/// ECN on SYN-ACKs (seed 000's ECN+, RFC 5562); see `EcnPlusName` in the scenario.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcnPlus {
    #[default]
    Off,
    Seed,
    Rfc5562,
}

/// How the receiver feeds CE marks back (and how the two ends negotiate it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EcnFeedback {
    /// RFC 3168: ECE from a mark until CWR (DCTCP's and Prague's receivers: ECE per segment,
    /// RFC 8257 section 3.2).
    #[default]
    Rfc3168,
    /// AccECN (RFC 9768): asked for with (AE, CWR, ECE) = (1, 1, 1) on the SYN, falling back to
    /// RFC 3168 or no ECN by the peer's answer (Table 2); a 3-bit count of CE-marked packets
    /// on every ACK.
    Accecn,
}

/// How a sender reduces its window on an ECN echo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EcnResponse {
    /// RFC 3168 6.1.2: as for a loss (ssthresh = max(beta FlightSize, 2 SMSS), cwnd =
    /// ssthresh), so the window stops at two segments; with a one-segment window the sender
    /// keeps one segment and sends new data when the retransmission timer expires (or, with
    /// `EcnMinWindow::TwoSegments`, goes on with two).
    #[default]
    Rfc3168,
    /// ns-2.35's FullTcp (tcp.cc `TcpAgent::ecn` and `slowdown`, tcp-full.cc `recv`,
    /// `newack` and `timeout_action`, with ns-2's default `precision_reduce_`): the window is
    /// halved whatever its size, fractions of a segment kept (one segment becomes half of
    /// one; ssthresh is the whole segments of the result, at least 2); a sender with less
    /// than one segment sends nothing and restarts its retransmission timer on every echo;
    /// when it expires that counts as a timeout: one segment, ssthresh kept, the timer not
    /// backed off (nothing is outstanding). An echo at a window of one segment or less backs
    /// the timer off if the previous one did too, and such backoff is not ended by an RTT
    /// sample taken from an echoing ACK (ns-2's `ecn_backoff_`). A retransmission
    /// timeout after an ECN reduction (before any fast retransmit) keeps ssthresh. Echoes on
    /// duplicate ACKs are ignored. NewReno and Reno only, without ABE.
    Ns2,
}

/// How a sender's window answers a loss (a fast retransmit or a retransmission timeout).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LossResponse {
    /// RFC 5681: ssthresh = max(beta FlightSize, 2 SMSS) in bytes; at the third duplicate ACK
    /// the inflated window (ssthresh + 3 SMSS) may release new data at once (section 3.2,
    /// steps 3-5); the ACK that ends recovery sets cwnd (Reno: to ssthresh; NewReno, RFC 6582:
    /// to min(ssthresh, FlightSize + SMSS)) and does not grow it.
    #[default]
    Rfc5681,
    /// ns-2.35's FullTcp, which follows 4.4BSD's Reno: ssthresh = beta min(cwnd, rwnd) in whole
    /// segments, at least 2, also after a timeout (tcp.cc, `slowdown` with
    /// `CLOSE_SSTHRESH_HALF`: `ssthresh_ = (int) halfwin`, halfwin = windowd() / 2); at the
    /// third duplicate ACK only the retransmission is sent, new data waits for the fourth
    /// (tcp-full.cc, `recv`: `dupack_action()` then `goto drop`, as BSD's tcp_input); the ACK
    /// that ends recovery retracts cwnd to ssthresh and then opens it as any new ACK does
    /// (`recv`: `ack_action` or `pack_action`, then `opencwnd()`, with
    /// `open_cwnd_on_pack_` true). NewReno and Reno only.
    Ns2,
}

/// What a retransmission timeout does to ssthresh when it comes during the recovery from an
/// earlier reduction (a fast retransmit whose window is not yet acknowledged, or an ECN echo's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TimeoutSsthresh {
    /// RFC 5681 eq. 4 at every timeout: ssthresh = max(beta FlightSize, 2 SMSS), with
    /// FlightSize = snd_max - snd_una. During a long NewReno recovery the cumulative ACK stays
    /// below the holes while the inflated window sends new data, so FlightSize can be many
    /// times the window the recovery started from.
    #[default]
    HalfFlightSize,
    /// Linux (net/ipv4/tcp_input.c, `tcp_enter_loss`: "Reduce ssthresh if it has not yet been
    /// made inside this window"): a timeout before the ACK passes the data outstanding at the
    /// last fast retransmit or ECN reduction keeps that reduction's ssthresh; other timeouts
    /// follow RFC 5681. cwnd still restarts from one segment.
    OncePerWindow,
}

/// When a backed-off retransmission timer returns to its computed value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RtoBackoffEnd {
    /// RFC 6298 section 5.7 with Karn's algorithm: the backoff is kept until an RTT sample,
    /// which only an ACK of a segment sent once can give.
    #[default]
    RttSample,
    /// ns-2.35's FullTcp (tcp-full.cc, `newack`): every ACK of new data ends it (with
    /// `ecn_response = "ns2"`, except an echoing ACK while ns-2's ECN backoff holds).
    NewAck,
}

/// How the retransmission timeout is computed from RTT samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RtoEstimator {
    /// RFC 6298 section 2: RTO = SRTT + max(G, 4 RTTVAR), clamped to [min RTO, max RTO].
    #[default]
    Rfc6298,
    /// Linux (net/ipv4/tcp_input.c `tcp_clean_rtx_queue`, `tcp_rtt_estimator`, `tcp_set_rto`;
    /// include/net/tcp.h `__tcp_set_rto`): a sample at every ACK of new data (from the oldest
    /// segment it acknowledges; none if it acknowledges retransmitted data); in microseconds, srtt scaled by 8 and mdev by 4; rttvar is the largest
    /// mdev of the last flight of data but never below min RTO (`tcp_rto_min`), and decays by a
    /// quarter toward it once per flight; RTO = srtt + rttvar, rounded up to the clock
    /// granularity (a jiffy), at most max RTO. Min RTO is never applied to the RTO itself.
    Linux,
    /// FreeBSD (sys/netinet/tcp_input.c `tcp_xmit_timer`, tcp_var.h `TCP_REXMTVAL`,
    /// tcp_timer.h `TCPT_RANGESET`): in 1 ms ticks, srtt scaled by 32 and rttvar by 16;
    /// RTO = max(min RTO, srtt + 4 rttvar) + 200 ms (`net.inet.tcp.rexmit_slop`), at least
    /// max(min RTO, rtt + 2 ticks), at most max RTO; a backoff multiplies the part before the
    /// slop.
    Freebsd,
}

/// When a receiver sends an ACK for in-order data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DelayedAckPolicy {
    /// RFC 5681 section 4.2 (and FreeBSD's `DELAY_ACK`): every `ack_every_segments`-th
    /// segment at once, otherwise within `delayed_ack_ms` of the first unacknowledged one.
    #[default]
    Rfc5681,
    /// Linux (net/ipv4/tcp_input.c `__tcp_ack_snd_check`, `tcp_event_data_recv`,
    /// `tcp_incr_quickack`, `tcp_enter_quickack_mode`, `tcp_ecn_check_ce`; tcp_output.c
    /// `tcp_send_delayed_ack`; tcp_timer.c `tcp_delack_timer_handler`): ACK at once when more
    /// than one full segment is unacknowledged, in quick-ACK mode (the first
    /// min(16, rcv_wnd / 2 MSS) ACKs of a connection, after an arrival gap longer than the
    /// RTO, after a duplicate segment; two ACKs after the first CE mark and after a Not-ECT
    /// segment on an ECN connection, i.e. a retransmission), for out-of-order data, for the
    /// segment that fills a gap and for a data segment with CWR; otherwise a timer of `ato`
    /// (starts at `delayed_ack_ms`, TCP_ATO_MIN, adapts to the arrival gaps, doubles when the
    /// timer fires), at most min(srtt, 200 ms) and at least `delayed_ack_ms`.
    Linux,
}

/// What RFC 3168's ECN response does when the window is already one segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EcnMinWindow {
    /// RFC 3168 section 6.1.2: keep one segment and send nothing new until the retransmission
    /// timer expires.
    #[default]
    Rfc3168Timer,
    /// Linux (`tcp_reno_ssthresh`, cubic's `bictcp_recalc_ssthresh`: max(..., 2) segments,
    /// then CWR ends at ssthresh) and FreeBSD (cc_newreno.c `newreno_cong_signal`, CC_ECN:
    /// max(cwnd / 2, 2 segments)): the window after an echo is ssthresh, at least two
    /// segments, even when it was one; nothing waits for the timer.
    TwoSegments,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TcpParams {
    pub mss_bytes: u32,
    pub header_bytes: u32,
    pub initial_rto: SimTime,
    pub min_rto: SimTime,
    pub max_rto: SimTime,
    /// RFC 6298 clock granularity G.
    pub clock_granularity: SimTime,
    pub initial_window_segments: u32,
    pub delayed_ack: SimTime,
    pub ack_every_segments: u32,
    pub syn_retries: u32,
    pub cc: CcKind,
    /// RFC 5681 section 3.1: one-segment initial window after a lost SYN or SYN-ACK.
    pub iw_one_after_syn_loss: bool,
    /// Appropriate Byte Counting (RFC 3465, L = 2 SMSS): slow start of NewReno and CUBIC,
    /// NewReno's congestion avoidance.
    pub abc: bool,
    /// Limited transmit (RFC 3042): a new segment on each of the first two duplicate ACKs.
    pub limited_transmit: bool,
    /// RFC 5681 section 4.1: after more than an RTO without sending, restart from
    /// min(IW, cwnd).
    pub restart_after_idle: bool,
    /// Pacing (Linux's TCP pacing: `tcp_update_pacing_rate` in tcp_input.c, the departure
    /// times of `tcp_update_skb_after_send` in tcp_output.c): each data segment leaves no
    /// earlier than the previous one plus its length at the pacing rate.
    pub pacing: bool,
    /// The pacing rate in percent of cwnd / srtt while cwnd < ssthresh / 2 (Linux's
    /// `tcp_pacing_ss_ratio`, 200) and otherwise (`tcp_pacing_ca_ratio`, 120).
    pub pacing_ss_ratio_percent: u32,
    pub pacing_ca_ratio_percent: u32,
    /// Retransmissions are ECN-capable (ns-2's FullTcp, ns-3; ECN++); RFC 3168 6.1.5 says they
    /// are not.
    pub ect_retransmissions: bool,
    /// ECN++ (draft-ietf-tcpm-generalized-ecn): the first SYN of a client that asks for AccECN
    /// is ECN-capable.
    pub ect_syn: bool,
    /// ECN++: pure ACKs are ECN-capable on AccECN connections.
    pub ect_pure_acks: bool,
    /// ECN++: FINs are ECN-capable on ECN connections.
    pub ect_fins: bool,
    /// The codepoint of ECN-capable data: ECT(0) (RFC 3168, RFC 8257) or ECT(1) (L4S, RFC 9331).
    pub ect_codepoint: Ecn,
    /// SACK (RFC 2018) offered in the handshake; when both ends have it, RFC 6675 recovery.
    pub sack: bool,
    /// PRR (RFC 6937) during SACK-based recovery.
    pub prr: bool,
    /// RACK-TLP loss detection (RFC 8985) on SACK connections.
    pub rack_tlp: bool,
    /// Slow-start exit before loss: Linux's HyStart (CUBIC only) or HyStart++ (RFC 9406).
    pub hystart: HystartKind,
    pub rto_estimator: RtoEstimator,
    pub delayed_ack_policy: DelayedAckPolicy,
    pub ecn_min_window: EcnMinWindow,
    /// The endpoint is ECN-capable (RFC 3168): it asks for ECN (client) or accepts it (server).
    pub ecn: bool,
    pub ecn_plus: EcnPlus,
    /// The feedback asked for (client) or accepted (server) when `ecn` is on.
    pub ecn_feedback: EcnFeedback,
    /// With AccECN: when this end's receiver sends the AccECN option.
    pub accecn_option: AccEcnOptionMode,
    pub ecn_response: EcnResponse,
    pub rto_backoff_end: RtoBackoffEnd,
    pub loss_response: LossResponse,
    pub timeout_ssthresh: TimeoutSsthresh,
}

/// RFC 3390's initial window in segments for a given MSS: min(4 MSS, max(2 MSS, 4380 B)).
pub fn rfc3390_iw_segments(mss: u32) -> u32 {
    // An MSS of 0 is refused by validation; max(1) keeps this total for any input.
    (4380 / mss.max(1)).clamp(2, 4)
}

impl CcKind {
    /// Whether fast recovery follows RFC 6582 (retransmit on partial ACKs) or RFC 5681 (Reno:
    /// leave recovery on the first new ACK). CUBIC uses the NewReno sender.
    pub fn partial_ack_recovery(&self) -> bool {
        !matches!(self, CcKind::Reno { .. })
    }

    /// How this end's receiver echoes CE: DCTCP's exact echo for DCTCP (Linux: the receiving
    /// host's congestion control module does it, `dctcp_cwnd_event`), RFC 3168's otherwise.
    pub fn echo_mode(&self) -> EchoMode {
        match self {
            CcKind::Dctcp { .. } | CcKind::Prague { .. } => EchoMode::Dctcp,
            _ => EchoMode::Rfc3168,
        }
    }

    /// A controller whose answer to an echo scales with the marked fraction: RFC 3168's rule
    /// for a one-segment window does not apply (DCTCP's floor is two segments).
    pub fn scalable(&self) -> bool {
        matches!(self, CcKind::Dctcp { .. } | CcKind::Prague { .. })
    }
}

impl TcpParams {
    /// Bytes of the initial window.
    pub fn initial_window_bytes(&self) -> u64 {
        self.initial_window_segments as u64 * self.mss_bytes as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3390_table() {
        // Spec Part V: SMSS 1460 -> 3 segments; 4 if SMSS <= 1095; 2 above 2190.
        assert_eq!(rfc3390_iw_segments(1460), 3);
        assert_eq!(rfc3390_iw_segments(1095), 4);
        assert_eq!(rfc3390_iw_segments(536), 4);
        assert_eq!(rfc3390_iw_segments(2191), 2);
    }
}
