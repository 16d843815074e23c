//! The `[tcp]` table of a scenario: a profile, per-field overrides and per-side tables,
//! resolved into the [`TcpParams`] an endpoint runs with (spec sections 20-22).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cubic::{CubicParams, CubicRtt};
use super::dctcp::DctcpParams;
use super::prague::PragueParams;
use super::hystart::{HystartDetect, HystartKind, HystartName};
use super::params::{
    rfc3390_iw_segments, AccEcnOptionMode, CcKind, DelayedAckPolicy, EcnFeedback, EcnMinWindow, EcnPlus, EcnResponse, LossResponse, RtoBackoffEnd, RtoEstimator,
    TcpParams, TimeoutSsthresh,
};
use crate::config::{check, non_negative, positive, ConfigError};
use crate::engine::time::{from_millis, from_secs, NS_PER_MS};
use crate::packet::Ecn;

/// Endpoint profiles (spec sections 20.3, 21, 22).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Profile {
    /// The 2005 studies: initial RTO 3 s, min RTO 1 s, IW 2, delayed ACK 200 ms.
    #[serde(rename = "seed-2005")]
    Seed2005,
    /// RFC 6298: initial RTO 1 s, min RTO 1 s, IW per RFC 3390, delayed ACK 200 ms.
    #[default]
    #[serde(rename = "rfc6298")]
    Rfc6298,
    /// Linux (4.18 and later): initial RTO 1 s, min RTO 200 ms, max RTO 120 s, IW 10, Linux's
    /// RTO estimator and delayed ACKs (ato from 40 ms, at most 200 ms, quick ACKs), an ECN
    /// reduction that stops at two segments.
    #[serde(rename = "linux")]
    Linux,
    /// FreeBSD 10 (seed 002's NewReno hosts): initial RTO 1 s, min RTO 30 ms plus a 200 ms
    /// slop, max RTO 64 s, IW per RFC 3390, delayed ACK 100 ms, FreeBSD's RTO estimator, ABC,
    /// limited transmit, an ECN reduction that stops at two segments.
    #[serde(rename = "freebsd")]
    Freebsd,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CongestionControlName {
    /// NewReno (RFC 5681, RFC 6582).
    #[default]
    Newreno,
    /// Reno (RFC 5681 fast retransmit and fast recovery; a partial ACK ends recovery).
    Reno,
    /// CUBIC (RFC 9438).
    Cubic,
    /// DCTCP (RFC 8257): the reduction on an echo scales with the marked fraction; the
    /// receiver echoes every CE mark exactly. Turns ECN on unless `ecn = false`.
    Dctcp,
    /// TCP Prague (the iccrg draft; Linux's tcp_prague.c): DCTCP with RTT independence, ECT(1)
    /// and pacing by default, alpha from the first mark, an optional classic-ECN fallback.
    Prague,
}

/// The ECN-capable codepoint of a sender's data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EctCodepoint {
    /// ECT(0): RFC 3168, and DCTCP (RFC 8257 section 3.3).
    #[default]
    Ect0,
    /// ECT(1): an L4S sender (RFC 9331 section 4.1).
    Ect1,
}

/// ECN on SYN-ACKs (seed 000's ECN+; RFC 5562).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EcnPlusName {
    /// Classic RFC 3168: SYN-ACKs are not ECN-capable.
    #[default]
    Off,
    /// Seed 000: a server sends every SYN-ACK of an ECN-setup connection ECT(0); a client
    /// ignores CE on a SYN-ACK and proceeds as if it were unmarked.
    Seed,
    /// RFC 5562: as `seed`, but a retransmitted SYN-ACK is not ECT, a client echoes CE on a
    /// SYN-ACK with ECE on its ACK, and a server that sees it starts with a one-segment window.
    Rfc5562,
}

/// TCP settings of the endpoints: a profile, overrides of its values, and per-side overrides
/// (`clients`, `servers`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpConfig {
    /// Endpoint profile (default `rfc6298`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
    /// Maximum segment size: payload bytes per segment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mss_bytes: Option<u32>,
    /// IP and TCP header bytes added to every segment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_bytes: Option<u32>,
    /// RTO before the first RTT sample, also for SYN and SYN-ACK (s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_rto_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rto_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rto_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_window_segments: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed_ack_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_every_segments: Option<u32>,
    /// SYN (and SYN-ACK) retransmissions before the connection is abandoned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syn_retries: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub congestion_control: Option<CongestionControlName>,
    /// One-segment initial window after a retransmitted SYN or SYN-ACK (RFC 5681 3.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iw_one_after_syn_loss: Option<bool>,
    /// RFC 3168 ECN at every endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// ECN on SYN-ACKs: `off`, `seed` or `rfc5562` (servers send, clients respond).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_plus: Option<EcnPlusName>,
    /// The ECN feedback asked for (client) or accepted (server): `rfc3168` (default) or
    /// `accecn` (RFC 9768, falling back to RFC 3168 or to no ECN by the peer's answer); only
    /// with ECN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_feedback: Option<EcnFeedback>,
    /// ECN++ (draft-ietf-tcpm-generalized-ecn) as a bundle: turns on `ect_syn`,
    /// `ect_pure_acks`, `ect_fins`, `ect_retransmissions` and `ecn_plus = "rfc5562"` unless
    /// they are set (default false); needs `ecn_feedback = "accecn"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_plus_plus: Option<bool>,
    /// ECN++: the client's first SYN is ECN-capable (only with `ecn_feedback = "accecn"`, which
    /// feeds back a mark on it; default false, or `ecn_plus_plus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ect_syn: Option<bool>,
    /// ECN++: pure ACKs are ECN-capable on AccECN connections (only with `ecn_feedback =
    /// "accecn"`; default false, or `ecn_plus_plus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ect_pure_acks: Option<bool>,
    /// ECN++: FINs are ECN-capable on ECN connections (only with ECN; default false, or
    /// `ecn_plus_plus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ect_fins: Option<bool>,
    /// When the AccECN option is sent: `rfc9768` (default: RFC 9768's recommended scheme),
    /// `full` (on every ACK, all fields), `minimum` (when the CE byte counter changed) or `off`;
    /// only with `ecn_feedback = "accecn"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accecn_option: Option<AccEcnOptionMode>,
    /// The window reduction on an ECN echo: `rfc3168` (default) or `ns2` (ns-2.35's FullTcp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_response: Option<EcnResponse>,
    /// When a backed-off retransmission timer returns to its computed value: `rtt_sample`
    /// (default, RFC 6298 with Karn's algorithm) or `new_ack` (ns-2.35's FullTcp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_backoff_end: Option<RtoBackoffEnd>,
    /// The window's answer to a loss: `rfc5681` (default) or `ns2` (ns-2.35's FullTcp, 4.4BSD's
    /// Reno: ssthresh from cwnd in whole segments, nothing new at the third duplicate ACK, the
    /// ACK that ends recovery opens the window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_response: Option<LossResponse>,
    /// ssthresh at a timeout during the recovery from an earlier reduction: `half_flight_size`
    /// (default, RFC 5681 eq. 4) or `once_per_window` (Linux's `tcp_enter_loss`: keep the
    /// reduction already made in that window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ssthresh: Option<TimeoutSsthresh>,
    /// Multiplicative decrease on a loss (NewReno 0.5, CUBIC 0.7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// ABE (RFC 8511): back off by `beta_ecn` instead of `beta` on an ECN echo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abe: Option<bool>,
    /// Multiplicative decrease on an ECN echo with ABE (NewReno 0.8, CUBIC 0.85).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta_ecn: Option<f64>,
    /// CUBIC's constant C (segments/s^3, default 0.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cubic_c: Option<f64>,
    /// DCTCP's estimation gain g (RFC 8257 section 3.3, default 1/16 = 0.0625; Linux's
    /// `dctcp_shift_g` = 4); only with `congestion_control = "dctcp"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dctcp_g: Option<f64>,
    /// DCTCP's alpha before the first observation window ends (default 1: Linux's
    /// `dctcp_alpha_on_init` = 1024 of 1024); only with `congestion_control = "dctcp"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dctcp_alpha_init: Option<f64>,
    /// Prague's reference RTT for RTT independence (ms, default 25: Linux's
    /// `prague_rtt_target`; 0: none); only with `congestion_control = "prague"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prague_rtt_target_ms: Option<f64>,
    /// Round trips outside slow start before Prague becomes RTT-independent (default 500:
    /// Linux's `prague_rtt_transition`); only with Prague.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prague_rtt_transition_rounds: Option<u64>,
    /// Prague's classic-ECN fallback: an echo while srtt - min RTT exceeds
    /// `prague_classic_delay_ms` halves the window as NewReno's (default false: Linux's
    /// `prague_ecn_fallback` = 0); only with Prague.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prague_classic_fallback: Option<bool>,
    /// The queueing delay above which Prague's fallback takes an echo to come from a classic
    /// AQM (ms, default 2: Linux's reference queue D0); only with `prague_classic_fallback`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prague_classic_delay_ms: Option<f64>,
    /// The codepoint of ECN-capable data: `ect0` (default; RFC 3168, RFC 8257) or `ect1` (an
    /// L4S sender, RFC 9331; Prague's default); only with ECN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ect_codepoint: Option<EctCodepoint>,
    /// CUBIC fast convergence (RFC 9438 4.7, default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cubic_fast_convergence: Option<bool>,
    /// The RTT in CUBIC's target W(t + RTT): `min` (Linux, ns-3; default) or `smoothed` (RFC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cubic_rtt: Option<CubicRtt>,
    /// Appropriate Byte Counting (RFC 3465, L = 2 SMSS): slow start adds up to 2 SMSS per
    /// ACK, NewReno's congestion avoidance one SMSS per cwnd acknowledged (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abc: Option<bool>,
    /// Limited transmit (RFC 3042): on each of the first two duplicate ACKs outside recovery,
    /// send one new segment beyond cwnd (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_transmit: Option<bool>,
    /// Restart after idle (RFC 5681 section 4.1; Linux's `tcp_slow_start_after_idle`): new
    /// data after more than an RTO without sending starts from min(initial window, cwnd)
    /// (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_after_idle: Option<bool>,
    /// Send retransmissions ECN-capable (ECT(0)) on an ECN connection, as ns-2.35's FullTcp
    /// and ns-3 do; RFC 3168 section 6.1.5 says they are Not-ECT (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ect_retransmissions: Option<bool>,
    /// Selective acknowledgments (RFC 2018, D-SACK per RFC 2883), negotiated in the handshake
    /// (both ends must have it): the receiver reports up to 4 blocks, and the sender recovers
    /// losses by RFC 6675 instead of NewReno's partial ACKs (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sack: Option<bool>,
    /// Proportional Rate Reduction (RFC 6937, PRR-SSRB) paces the sending during SACK-based
    /// recovery; without it RFC 6675 sends while cwnd (= ssthresh) exceeds pipe. Needs
    /// sack = true (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prr: Option<bool>,
    /// RACK-TLP loss detection (RFC 8985): time-based loss marking and tail loss probes, on
    /// connections that negotiated SACK, instead of RFC 6675's duplicate-ACK count. Needs
    /// sack = true (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rack_tlp: Option<bool>,
    /// Pace data segments as Linux does when pacing is on (the `fq` qdisc, or TCP's internal
    /// pacing when the congestion control asks for it): each segment leaves no earlier than the
    /// previous one plus its length at the pacing rate, `pacing_*_ratio_percent` of cwnd / srtt
    /// (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<bool>,
    /// The pacing rate in percent of cwnd / srtt while cwnd < ssthresh / 2 (Linux's
    /// `net.ipv4.tcp_pacing_ss_ratio`, default 200); only with `pacing = true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing_ss_ratio_percent: Option<u32>,
    /// The pacing rate in percent of cwnd / srtt from cwnd >= ssthresh / 2 on (Linux's
    /// `net.ipv4.tcp_pacing_ca_ratio`, default 120); only with `pacing = true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing_ca_ratio_percent: Option<u32>,
    /// Slow-start exit before loss: `off` (default), `linux` (HyStart as Linux's CUBIC runs
    /// it; CUBIC only) or `rfc9406` (HyStart++, any controller).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hystart: Option<HystartName>,
    /// Which of Linux HyStart's detectors run (Linux's `hystart_detect`): `ack_train` (1),
    /// `delay` (2) or `both` (3, default); only with `hystart = "linux"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hystart_detect: Option<HystartDetect>,
    /// The RTO estimator: `rfc6298` (default), `linux` or `freebsd` (their kernels' arithmetic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_estimator: Option<RtoEstimator>,
    /// When the receiver acknowledges: `rfc5681` (default: every `ack_every_segments`-th
    /// segment, else after `delayed_ack_ms`) or `linux` (quick ACKs and an adaptive timer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed_ack_policy: Option<DelayedAckPolicy>,
    /// RFC 3168's response to an echo at a one-segment window: `rfc3168_timer` (default: keep
    /// one segment, wait for the retransmission timer) or `two_segments` (Linux, FreeBSD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_min_window: Option<EcnMinWindow>,
    /// Only in `tcp.clients` / `tcp.servers`: the fraction of that side's hosts with ECN
    /// (chosen at random per seed, independently of everything else); the others have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_fraction: Option<f64>,
    /// Settings of client hosts that differ from this table's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<Box<TcpConfig>>,
    /// Settings of server hosts that differ from this table's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<Box<TcpConfig>>,
}

/// Which hosts a side table configures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Clients,
    Servers,
}

impl Side {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Side::Clients => "clients",
            Side::Servers => "servers",
        }
    }
}

impl TcpConfig {
    /// The settings of one side's hosts: this table with the side's table laid over it.
    pub fn side(&self, side: Side) -> TcpConfig {
        let over = match side {
            Side::Clients => self.clients.as_deref(),
            Side::Servers => self.servers.as_deref(),
        };
        let Some(o) = over else {
            return TcpConfig { clients: None, servers: None, ..self.clone() };
        };
        self.overlay(o)
    }

    /// This table with every value `o` sets laid over it (side tables dropped; `ecn_fraction`
    /// is `o`'s).
    pub fn overlay(&self, o: &TcpConfig) -> TcpConfig {
        TcpConfig {
            profile: o.profile.or(self.profile),
            mss_bytes: o.mss_bytes.or(self.mss_bytes),
            header_bytes: o.header_bytes.or(self.header_bytes),
            initial_rto_s: o.initial_rto_s.or(self.initial_rto_s),
            min_rto_s: o.min_rto_s.or(self.min_rto_s),
            max_rto_s: o.max_rto_s.or(self.max_rto_s),
            initial_window_segments: o.initial_window_segments.or(self.initial_window_segments),
            delayed_ack_ms: o.delayed_ack_ms.or(self.delayed_ack_ms),
            ack_every_segments: o.ack_every_segments.or(self.ack_every_segments),
            syn_retries: o.syn_retries.or(self.syn_retries),
            congestion_control: o.congestion_control.or(self.congestion_control),
            iw_one_after_syn_loss: o.iw_one_after_syn_loss.or(self.iw_one_after_syn_loss),
            ecn: o.ecn.or(self.ecn),
            ecn_plus: o.ecn_plus.or(self.ecn_plus),
            ecn_feedback: o.ecn_feedback.or(self.ecn_feedback),
            accecn_option: o.accecn_option.or(self.accecn_option),
            ecn_plus_plus: o.ecn_plus_plus.or(self.ecn_plus_plus),
            ect_syn: o.ect_syn.or(self.ect_syn),
            ect_pure_acks: o.ect_pure_acks.or(self.ect_pure_acks),
            ect_fins: o.ect_fins.or(self.ect_fins),
            ecn_response: o.ecn_response.or(self.ecn_response),
            rto_backoff_end: o.rto_backoff_end.or(self.rto_backoff_end),
            loss_response: o.loss_response.or(self.loss_response),
            timeout_ssthresh: o.timeout_ssthresh.or(self.timeout_ssthresh),
            beta: o.beta.or(self.beta),
            abe: o.abe.or(self.abe),
            beta_ecn: o.beta_ecn.or(self.beta_ecn),
            cubic_c: o.cubic_c.or(self.cubic_c),
            dctcp_g: o.dctcp_g.or(self.dctcp_g),
            dctcp_alpha_init: o.dctcp_alpha_init.or(self.dctcp_alpha_init),
            ect_codepoint: o.ect_codepoint.or(self.ect_codepoint),
            prague_rtt_target_ms: o.prague_rtt_target_ms.or(self.prague_rtt_target_ms),
            prague_rtt_transition_rounds: o.prague_rtt_transition_rounds.or(self.prague_rtt_transition_rounds),
            prague_classic_fallback: o.prague_classic_fallback.or(self.prague_classic_fallback),
            prague_classic_delay_ms: o.prague_classic_delay_ms.or(self.prague_classic_delay_ms),
            cubic_fast_convergence: o.cubic_fast_convergence.or(self.cubic_fast_convergence),
            cubic_rtt: o.cubic_rtt.or(self.cubic_rtt),
            abc: o.abc.or(self.abc),
            limited_transmit: o.limited_transmit.or(self.limited_transmit),
            restart_after_idle: o.restart_after_idle.or(self.restart_after_idle),
            ect_retransmissions: o.ect_retransmissions.or(self.ect_retransmissions),
            sack: o.sack.or(self.sack),
            prr: o.prr.or(self.prr),
            rack_tlp: o.rack_tlp.or(self.rack_tlp),
            pacing: o.pacing.or(self.pacing),
            pacing_ss_ratio_percent: o.pacing_ss_ratio_percent.or(self.pacing_ss_ratio_percent),
            pacing_ca_ratio_percent: o.pacing_ca_ratio_percent.or(self.pacing_ca_ratio_percent),
            hystart: o.hystart.or(self.hystart),
            hystart_detect: o.hystart_detect.or(self.hystart_detect),
            rto_estimator: o.rto_estimator.or(self.rto_estimator),
            delayed_ack_policy: o.delayed_ack_policy.or(self.delayed_ack_policy),
            ecn_min_window: o.ecn_min_window.or(self.ecn_min_window),
            ecn_fraction: o.ecn_fraction,
            clients: None,
            servers: None,
        }
    }

    /// The profile's values with this table's overrides applied (side tables ignored).
    pub fn resolve(&self) -> TcpParams {
        let mss = self.mss_bytes.unwrap_or(1460);
        let profile = self.profile.unwrap_or_default();
        let (init_rto, min_rto, max_rto, iw, delack) = match profile {
            Profile::Seed2005 => (3.0, 1.0, 60.0, 2, 200.0),
            Profile::Rfc6298 => (1.0, 1.0, 60.0, rfc3390_iw_segments(mss), 200.0),
            // include/net/tcp.h: TCP_TIMEOUT_INIT, TCP_RTO_MIN, TCP_RTO_MAX, TCP_INIT_CWND,
            // TCP_ATO_MIN (= TCP_DELACK_MIN).
            Profile::Linux => (1.0, 0.2, 120.0, 10, 40.0),
            // sys/netinet/tcp_timer.h: TCPTV_RTOBASE, TCPTV_MIN (net.inet.tcp.rexmit_min),
            // TCPTV_REXMTMAX, TCPTV_DELACK (net.inet.tcp.delacktime); RFC 3390's IW
            // (net.inet.tcp.rfc3390).
            Profile::Freebsd => (1.0, 0.03, 64.0, rfc3390_iw_segments(mss), 100.0),
        };
        // The kernels' own estimators, receivers and one-segment ECN rule; FreeBSD's ABC
        // (net.inet.tcp.rfc3465) and limited transmit (net.inet.tcp.rfc3042) are on by default.
        let (estimator, ack_policy, min_window, stack_abc_lt) = match profile {
            Profile::Seed2005 | Profile::Rfc6298 => (RtoEstimator::Rfc6298, DelayedAckPolicy::Rfc5681, EcnMinWindow::Rfc3168Timer, false),
            Profile::Linux => (RtoEstimator::Linux, DelayedAckPolicy::Linux, EcnMinWindow::TwoSegments, false),
            Profile::Freebsd => (RtoEstimator::Freebsd, DelayedAckPolicy::Rfc5681, EcnMinWindow::TwoSegments, true),
        };
        // Loss recovery and slow start as the stacks run them: Linux (4.18 and later) negotiates
        // SACK (net.ipv4.tcp_sack = 1), reduces with PRR (tcp_input.c, tcp_cwnd_reduction),
        // detects losses with RACK-TLP (net.ipv4.tcp_recovery = 1, tcp_early_retrans = 3),
        // keeps a recovery's ssthresh at a timeout in the same window (tcp_enter_loss) and runs
        // HyStart in CUBIC (tcp_cubic.c, hystart = 1, hystart_detect = 3); FreeBSD 10-13
        // negotiates SACK (net.inet.tcp.sack.enable = 1) and recovers by its RFC 6675 code
        // (tcp_sack.c), without PRR (net.inet.tcp.do_prr, from FreeBSD 14) or RACK (an
        // alternate stack).
        let cubic = self.congestion_control == Some(CongestionControlName::Cubic);
        let (stack_sack, stack_prr_rack, stack_timeout_ssthresh, stack_hystart) = match profile {
            Profile::Seed2005 | Profile::Rfc6298 => (false, false, TimeoutSsthresh::HalfFlightSize, HystartName::Off),
            Profile::Linux => (true, true, TimeoutSsthresh::OncePerWindow, if cubic { HystartName::Linux } else { HystartName::Off }),
            Profile::Freebsd => (true, false, TimeoutSsthresh::HalfFlightSize, HystartName::Off),
        };
        let sack = self.sack.unwrap_or(stack_sack);
        TcpParams {
            mss_bytes: mss,
            header_bytes: self.header_bytes.unwrap_or(40),
            initial_rto: from_secs(self.initial_rto_s.unwrap_or(init_rto)),
            min_rto: from_secs(self.min_rto_s.unwrap_or(min_rto)),
            max_rto: from_secs(self.max_rto_s.unwrap_or(max_rto)),
            clock_granularity: NS_PER_MS,
            initial_window_segments: self.initial_window_segments.unwrap_or(iw),
            delayed_ack: from_millis(self.delayed_ack_ms.unwrap_or(delack)),
            ack_every_segments: self.ack_every_segments.unwrap_or(2),
            syn_retries: self.syn_retries.unwrap_or(6),
            cc: {
                let abe = self.abe.unwrap_or(false);
                // (beta, beta_ecn with ABE): RFC 5681 / RFC 8511 for NewReno, RFC 9438 and
                // ns-3's BetaEcn for CUBIC.
                let defaults = match self.congestion_control.unwrap_or_default() {
                    CongestionControlName::Newreno
                    | CongestionControlName::Reno
                    | CongestionControlName::Dctcp
                    | CongestionControlName::Prague => (0.5, 0.8),
                    CongestionControlName::Cubic => (0.7, 0.85),
                };
                let beta = self.beta.unwrap_or(defaults.0);
                let beta_ecn = if abe { self.beta_ecn.unwrap_or(defaults.1) } else { beta };
                match self.congestion_control.unwrap_or_default() {
                    CongestionControlName::Newreno => CcKind::NewReno { beta, beta_ecn },
                    CongestionControlName::Reno => CcKind::Reno { beta, beta_ecn },
                    CongestionControlName::Cubic => CcKind::Cubic(CubicParams {
                        c: self.cubic_c.unwrap_or(0.4),
                        beta,
                        beta_ecn,
                        fast_convergence: self.cubic_fast_convergence.unwrap_or(true),
                        rtt: self.cubic_rtt.unwrap_or_default(),
                    }),
                    CongestionControlName::Dctcp => CcKind::Dctcp { beta, dctcp: self.dctcp_params() },
                    CongestionControlName::Prague => {
                        let d = PragueParams::default();
                        CcKind::Prague {
                            beta,
                            dctcp: self.dctcp_params(),
                            prague: PragueParams {
                                rtt_target: self.prague_rtt_target_ms.map_or(d.rtt_target, from_millis),
                                rtt_transition: self.prague_rtt_transition_rounds.unwrap_or(d.rtt_transition),
                                classic_fallback: self.prague_classic_fallback.unwrap_or(d.classic_fallback),
                                classic_delay: self.prague_classic_delay_ms.map_or(d.classic_delay, from_millis),
                            },
                        }
                    }
                }
            },
            iw_one_after_syn_loss: self.iw_one_after_syn_loss.unwrap_or(true),
            abc: self.abc.unwrap_or(stack_abc_lt),
            limited_transmit: self.limited_transmit.unwrap_or(stack_abc_lt),
            restart_after_idle: self.restart_after_idle.unwrap_or(false),
            // ECN++ turns on ECT for retransmissions, SYNs, pure ACKs and FINs, and RFC 5562's
            // ECN-capable SYN-ACK, unless set one by one.
            ect_retransmissions: self.ect_retransmissions.unwrap_or(self.ecn_plus_plus()),
            ect_syn: self.ect_syn.unwrap_or(self.ecn_plus_plus()),
            ect_pure_acks: self.ect_pure_acks.unwrap_or(self.ecn_plus_plus()),
            ect_fins: self.ect_fins.unwrap_or(self.ecn_plus_plus()),
            // Prague sends ECT(1) and paces at cwnd / srtt in congestion avoidance (Linux's
            // tcp_prague.c: TCP_ECN_ECT_1, SK_PACING_NEEDED, prague_update_pacing_rate).
            ect_codepoint: match self.ect_codepoint.unwrap_or(if self.prague() { EctCodepoint::Ect1 } else { EctCodepoint::Ect0 }) {
                EctCodepoint::Ect0 => Ecn::Ect0,
                EctCodepoint::Ect1 => Ecn::Ect1,
            },
            sack,
            prr: self.prr.unwrap_or(stack_prr_rack && sack),
            rack_tlp: self.rack_tlp.unwrap_or(stack_prr_rack && sack),
            pacing: self.pacing.unwrap_or(self.prague()),
            // Linux's sysctl defaults (net/ipv4/tcp_ipv4.c, tcp_sk_init).
            pacing_ss_ratio_percent: self.pacing_ss_ratio_percent.unwrap_or(200),
            pacing_ca_ratio_percent: self.pacing_ca_ratio_percent.unwrap_or(if self.prague() { 100 } else { 120 }),
            hystart: match self.hystart.unwrap_or(stack_hystart) {
                HystartName::Off => HystartKind::Off,
                HystartName::Linux => HystartKind::Linux(self.hystart_detect.unwrap_or_default()),
                HystartName::Rfc9406 => HystartKind::Rfc9406,
            },
            rto_estimator: self.rto_estimator.unwrap_or(estimator),
            delayed_ack_policy: self.delayed_ack_policy.unwrap_or(ack_policy),
            ecn_min_window: self.ecn_min_window.unwrap_or(min_window),
            // DCTCP asks for ECN whatever the host's setting (Linux: TCP_CONG_NEEDS_ECN); with
            // ecn = false it runs as NewReno (Linux's fallback, `dctcp_reno`).
            ecn: self.ecn.unwrap_or(self.needs_ecn()),
            ecn_plus: match self.ecn_plus_name() {
                EcnPlusName::Off => EcnPlus::Off,
                EcnPlusName::Seed => EcnPlus::Seed,
                EcnPlusName::Rfc5562 => EcnPlus::Rfc5562,
            },
            ecn_feedback: self.ecn_feedback.unwrap_or_default(),
            accecn_option: self.accecn_option.unwrap_or_default(),
            ecn_response: self.ecn_response.unwrap_or_default(),
            rto_backoff_end: self.rto_backoff_end.unwrap_or_default(),
            loss_response: self.loss_response.unwrap_or_default(),
            timeout_ssthresh: self.timeout_ssthresh.unwrap_or(stack_timeout_ssthresh),
        }
    }

    /// The same settings with every value the profile supplies written out (side tables are
    /// kept as written: they hold only what differs).
    pub fn filled(&self) -> TcpConfig {
        let p = self.resolve();
        let secs = |t: u64| t as f64 / 1e9;
        let (beta, beta_ecn, cubic, dctcp, prague) = match p.cc {
            CcKind::NewReno { beta, beta_ecn } | CcKind::Reno { beta, beta_ecn } => (beta, beta_ecn, None, None, None),
            CcKind::Cubic(c) => (c.beta, c.beta_ecn, Some(c), None, None),
            CcKind::Dctcp { beta, dctcp } => (beta, beta, None, Some(dctcp), None),
            CcKind::Prague { beta, dctcp, prague } => (beta, beta, None, Some(dctcp), Some(prague)),
        };
        let abe = self.abe.unwrap_or(false);
        // The switches below are written out only where they differ from RFC 6298's endpoint
        // or from what the profile gives (so runs stored before a switch existed keep their
        // ids, and a value that overrides the profile survives a round trip).
        let standard = TcpConfig { congestion_control: self.congestion_control, ..TcpConfig::default() }.resolve();
        let stack_table = TcpConfig { profile: self.profile, congestion_control: self.congestion_control, ..TcpConfig::default() };
        let stack = stack_table.resolve();
        let with_sack = TcpConfig { sack: Some(p.sack), ..stack_table }.resolve();
        fn keep<T: PartialEq>(v: T, standard: T, stack: T) -> Option<T> {
            (v != standard || v != stack).then_some(v)
        }
        let ect_name = |e: Ecn| if e == Ecn::Ect1 { EctCodepoint::Ect1 } else { EctCodepoint::Ect0 };
        let hystart_name = |h: HystartKind| match h {
            HystartKind::Off => HystartName::Off,
            HystartKind::Linux(_) => HystartName::Linux,
            HystartKind::Rfc9406 => HystartName::Rfc9406,
        };
        TcpConfig {
            profile: Some(self.profile.unwrap_or_default()),
            mss_bytes: Some(p.mss_bytes),
            header_bytes: Some(p.header_bytes),
            initial_rto_s: Some(secs(p.initial_rto)),
            min_rto_s: Some(secs(p.min_rto)),
            max_rto_s: Some(secs(p.max_rto)),
            initial_window_segments: Some(p.initial_window_segments),
            delayed_ack_ms: Some(p.delayed_ack as f64 / 1e6),
            ack_every_segments: Some(p.ack_every_segments),
            syn_retries: Some(p.syn_retries),
            congestion_control: Some(self.congestion_control.unwrap_or_default()),
            iw_one_after_syn_loss: Some(p.iw_one_after_syn_loss),
            ecn: Some(p.ecn),
            ecn_plus: Some(self.ecn_plus_name()),
            // Written only when not the default, so that runs stored before the option existed
            // keep their identity (a run's id hashes its filled scenario).
            ecn_feedback: self.ecn_feedback.filter(|f| *f != EcnFeedback::Rfc3168),
            accecn_option: (p.ecn_feedback == EcnFeedback::Accecn).then_some(p.accecn_option),
            // Written only when on, so that stored runs keep their identity.
            // (With ECN++ on, a switch turned off apart is written out too.)
            ecn_plus_plus: self.ecn_plus_plus().then_some(true),
            ect_syn: (p.ect_syn || self.ecn_plus_plus()).then_some(p.ect_syn),
            ect_pure_acks: (p.ect_pure_acks || self.ecn_plus_plus()).then_some(p.ect_pure_acks),
            ect_fins: (p.ect_fins || self.ecn_plus_plus()).then_some(p.ect_fins),
            ecn_response: self.ecn_response.filter(|r| *r != EcnResponse::Rfc3168),
            rto_backoff_end: self.rto_backoff_end.filter(|r| *r != RtoBackoffEnd::RttSample),
            loss_response: self.loss_response.filter(|r| *r != LossResponse::Rfc5681),
            timeout_ssthresh: keep(p.timeout_ssthresh, standard.timeout_ssthresh, stack.timeout_ssthresh),
            beta: Some(beta),
            abe: Some(abe),
            beta_ecn: abe.then_some(beta_ecn),
            cubic_c: cubic.map(|c| c.c),
            dctcp_g: dctcp.map(|d| d.g),
            dctcp_alpha_init: dctcp.map(|d| d.alpha_init),
            prague_rtt_target_ms: prague.map(|q| q.rtt_target as f64 / 1e6),
            prague_rtt_transition_rounds: prague.map(|q| q.rtt_transition),
            prague_classic_fallback: prague.map(|q| q.classic_fallback),
            prague_classic_delay_ms: prague.filter(|q| q.classic_fallback).map(|q| q.classic_delay as f64 / 1e6),
            // Written only when not ECT(0) or not the controller's default (Prague's is ECT(1)),
            // so that stored runs keep their identity.
            ect_codepoint: keep(ect_name(p.ect_codepoint), EctCodepoint::Ect0, ect_name(standard.ect_codepoint)),
            cubic_fast_convergence: cubic.map(|c| c.fast_convergence),
            cubic_rtt: cubic.map(|c| c.rtt),
            abc: Some(p.abc),
            // Written only when on, so that stored runs keep their identity.
            limited_transmit: keep(p.limited_transmit, standard.limited_transmit, stack.limited_transmit),
            restart_after_idle: keep(p.restart_after_idle, standard.restart_after_idle, stack.restart_after_idle),
            ect_retransmissions: if self.ecn_plus_plus() {
                Some(p.ect_retransmissions)
            } else {
                keep(p.ect_retransmissions, standard.ect_retransmissions, stack.ect_retransmissions)
            },
            sack: keep(p.sack, standard.sack, stack.sack),
            prr: keep(p.prr, standard.prr, with_sack.prr),
            rack_tlp: keep(p.rack_tlp, standard.rack_tlp, with_sack.rack_tlp),
            pacing: keep(p.pacing, standard.pacing, stack.pacing),
            pacing_ss_ratio_percent: p.pacing.then_some(p.pacing_ss_ratio_percent),
            pacing_ca_ratio_percent: p.pacing.then_some(p.pacing_ca_ratio_percent),
            hystart: keep(hystart_name(p.hystart), hystart_name(standard.hystart), hystart_name(stack.hystart)),
            hystart_detect: match p.hystart {
                HystartKind::Linux(d) => Some(d),
                _ => None,
            },
            rto_estimator: keep(p.rto_estimator, standard.rto_estimator, stack.rto_estimator),
            delayed_ack_policy: keep(p.delayed_ack_policy, standard.delayed_ack_policy, stack.delayed_ack_policy),
            ecn_min_window: keep(p.ecn_min_window, standard.ecn_min_window, stack.ecn_min_window),
            ecn_fraction: None,
            clients: self.clients.clone(),
            servers: self.servers.clone(),
        }
    }

    /// Checks a bulk workload's `tcp` table `o` (named `path`), laid over each side's settings.
    pub(crate) fn validate_workload(&self, o: &TcpConfig, path: &str) -> Result<(), ConfigError> {
        for (nested, name) in [(o.clients.is_some(), "clients"), (o.servers.is_some(), "servers")] {
            check(!nested, format_args!("{path}.{name}"), "{...}", "a workload's tcp table applies to both ends: it has no side tables")?;
        }
        check(o.ecn_fraction.is_none(), format_args!("{path}.ecn_fraction"), o.ecn_fraction.unwrap_or(0.0), "belongs in tcp.clients or tcp.servers")?;
        for side in [Side::Clients, Side::Servers] {
            let s = self.side(side);
            check(
                s.ecn_fraction.is_none(),
                path,
                "{...}",
                format_args!("cannot be combined with tcp.{}.ecn_fraction (which hosts have ECN would be ambiguous)", side.name()),
            )?;
            s.overlay(o).validate_values(path)?;
        }
        Ok(())
    }

    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        check(self.ecn_fraction.is_none(), "tcp.ecn_fraction", self.ecn_fraction.unwrap_or(0.0), "belongs in tcp.clients or tcp.servers")?;
        self.validate_values("tcp")?;
        for side in [Side::Clients, Side::Servers] {
            let over = match side {
                Side::Clients => self.clients.as_deref(),
                Side::Servers => self.servers.as_deref(),
            };
            let Some(o) = over else { continue };
            let path = format!("tcp.{}", side.name());
            for (nested, name) in [(o.clients.is_some(), "clients"), (o.servers.is_some(), "servers")] {
                check(!nested, format_args!("{path}.{name}"), "{...}", "side tables do not nest")?;
            }
            if let Some(f) = o.ecn_fraction {
                check((0.0..=1.0).contains(&f), format_args!("{path}.ecn_fraction"), f, "must be in [0, 1]")?;
                check(o.ecn.is_none(), format_args!("{path}.ecn"), o.ecn.unwrap_or(false), "conflicts with ecn_fraction: set one")?;
            }
            self.side(side).validate_values(&path)?;
        }
        Ok(())
    }

    fn ecn_plus_plus(&self) -> bool {
        self.ecn_plus_plus == Some(true)
    }

    /// ECN+ as set, or RFC 5562's with ECN++ (the draft makes the SYN-ACK ECN-capable).
    fn ecn_plus_name(&self) -> EcnPlusName {
        self.ecn_plus.unwrap_or(if self.ecn_plus_plus() { EcnPlusName::Rfc5562 } else { EcnPlusName::Off })
    }

    /// Whether the congestion control asks for ECN whatever `ecn` says (DCTCP, Prague).
    fn needs_ecn(&self) -> bool {
        matches!(self.congestion_control, Some(CongestionControlName::Dctcp | CongestionControlName::Prague))
    }

    fn prague(&self) -> bool {
        self.congestion_control == Some(CongestionControlName::Prague)
    }

    fn dctcp_params(&self) -> DctcpParams {
        let d = DctcpParams::default();
        DctcpParams { g: self.dctcp_g.unwrap_or(d.g), alpha_init: self.dctcp_alpha_init.unwrap_or(d.alpha_init) }
    }

    /// ECN+, ABE and ns-2's ECN response change only connections that use ECN: set for hosts
    /// without it, they would be recorded but do nothing. `layers` are the tables this one is
    /// made of (see `Scenario::tcp_in_use`); an error names the one that set the option.
    pub(crate) fn validate_ecn_options(&self, layers: &[(String, &TcpConfig)]) -> Result<(), ConfigError> {
        let ecn = self.ecn.unwrap_or(self.needs_ecn()) || self.ecn_fraction.is_some_and(|f| f > 0.0);
        let set_in = |is_set: &dyn Fn(&TcpConfig) -> bool| {
            layers.iter().rev().find(|(_, t)| is_set(t)).map_or("tcp", |(p, _)| p.as_str()).to_string()
        };
        let hosts = layers.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>().join(", ");
        if let Some(plus) = self.ecn_plus.filter(|p| *p != EcnPlusName::Off) {
            let name = serde_json::to_value(plus).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            let path = set_in(&|t| t.ecn_plus.is_some());
            let rule = format!("needs ecn = true (or an ecn_fraction above 0) in {hosts}: ECN+ changes only connections that negotiate ECN");
            check(ecn, format_args!("{path}.ecn_plus"), name, &rule)?;
        }
        if self.abe == Some(true) {
            let path = set_in(&|t| t.abe.is_some());
            let rule = format!("needs ecn = true (or an ecn_fraction above 0) in {hosts}: ABE changes only the reaction to ECN echoes");
            check(ecn, format_args!("{path}.abe"), true, &rule)?;
        }
        if let Some(c) = self.ect_codepoint {
            let name = serde_json::to_value(c).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            let path = set_in(&|t| t.ect_codepoint.is_some());
            let rule = format!("needs ecn = true (or an ecn_fraction above 0) in {hosts}: it is the codepoint of ECN-capable data");
            check(ecn, format_args!("{path}.ect_codepoint"), name, &rule)?;
        }
        if self.ecn_feedback == Some(EcnFeedback::Accecn) {
            let path = set_in(&|t| t.ecn_feedback.is_some());
            let rule = format!("needs ecn = true (or an ecn_fraction above 0) in {hosts}: AccECN is a kind of ECN feedback, negotiated only by hosts with ECN");
            check(ecn, format_args!("{path}.ecn_feedback"), "accecn", &rule)?;
        }
        if self.ect_fins == Some(true) {
            let path = set_in(&|t| t.ect_fins.is_some());
            let rule = format!("needs ecn = true (or an ecn_fraction above 0) in {hosts}: it makes FINs ECN-capable on ECN connections");
            check(ecn, format_args!("{path}.ect_fins"), true, &rule)?;
        }
        if self.ecn_response == Some(EcnResponse::Ns2) {
            let path = set_in(&|t| t.ecn_response.is_some());
            let rule = format!("needs ecn = true (or an ecn_fraction above 0) in {hosts}: it changes only the reaction to ECN echoes");
            check(ecn, format_args!("{path}.ecn_response"), "ns2", &rule)?;
        }
        Ok(())
    }

    /// Checks the values of one resolved table; `path` names it in errors.
    fn validate_values(&self, path: &str) -> Result<(), ConfigError> {
        let p = self.resolve();
        for (v, name) in [(self.beta, "beta"), (self.beta_ecn, "beta_ecn")] {
            if let Some(v) = v {
                check(v > 0.0 && v < 1.0, format_args!("{path}.{name}"), v, "must be in (0, 1)")?;
            }
        }
        if let Some(v) = self.beta_ecn {
            check(self.abe == Some(true), format_args!("{path}.beta_ecn"), v, "applies only with abe = true")?;
        }
        let cubic = self.congestion_control == Some(CongestionControlName::Cubic);
        for (set, name) in [
            (self.cubic_c.is_some(), "cubic_c"),
            (self.cubic_fast_convergence.is_some(), "cubic_fast_convergence"),
            (self.cubic_rtt.is_some(), "cubic_rtt"),
        ] {
            check(!set || cubic, format_args!("{path}.{name}"), "set", "applies only with congestion_control = \"cubic\"")?;
        }
        for (v, name) in [(self.pacing_ss_ratio_percent, "pacing_ss_ratio_percent"), (self.pacing_ca_ratio_percent, "pacing_ca_ratio_percent")] {
            if let Some(v) = v {
                check(v > 0, format_args!("{path}.{name}"), v, "must be above 0 (percent of cwnd / srtt)")?;
                check(p.pacing, format_args!("{path}.{name}"), v, "applies only with pacing = true")?;
            }
        }
        if let Some(v) = self.cubic_c {
            check(v > 0.0 && v.is_finite(), format_args!("{path}.cubic_c"), v, "must be positive")?;
        }
        let dctcp = self.needs_ecn();
        for (v, name) in [(self.dctcp_g, "dctcp_g"), (self.dctcp_alpha_init, "dctcp_alpha_init")] {
            if let Some(v) = v {
                check(dctcp, format_args!("{path}.{name}"), v, "applies only with congestion_control = \"dctcp\" or \"prague\"")?;
            }
        }
        for (set, name) in [
            (self.prague_rtt_target_ms.is_some(), "prague_rtt_target_ms"),
            (self.prague_rtt_transition_rounds.is_some(), "prague_rtt_transition_rounds"),
            (self.prague_classic_fallback.is_some(), "prague_classic_fallback"),
            (self.prague_classic_delay_ms.is_some(), "prague_classic_delay_ms"),
        ] {
            check(!set || self.prague(), format_args!("{path}.{name}"), "set", "applies only with congestion_control = \"prague\"")?;
        }
        if let Some(v) = self.prague_classic_delay_ms {
            check(self.prague_classic_fallback == Some(true), format_args!("{path}.prague_classic_delay_ms"), v, "applies only with prague_classic_fallback = true")?;
        }
        if let Some(g) = self.dctcp_g {
            check(g > 0.0 && g <= 1.0, format_args!("{path}.dctcp_g"), g, "must be in (0, 1] (RFC 8257: 1/16)")?;
        }
        if let Some(a) = self.dctcp_alpha_init {
            check((0.0..=1.0).contains(&a), format_args!("{path}.dctcp_alpha_init"), a, "must be in [0, 1] (a fraction of marked bytes)")?;
        }
        if dctcp && self.abe == Some(true) {
            check(false, format_args!("{path}.abe"), true, "DCTCP and Prague scale their own reduction on an echo (RFC 8257): ABE does not apply")?;
        }
        if self.hystart == Some(HystartName::Linux) {
            let rule = "Linux's HyStart is part of its CUBIC (tcp_cubic.c): needs congestion_control = \"cubic\" (\"rfc9406\", HyStart++, works with any controller)";
            check(cubic, format_args!("{path}.hystart"), "linux", rule)?;
        }
        if let Some(d) = self.hystart_detect {
            let name = serde_json::to_value(d).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            check(self.hystart == Some(HystartName::Linux), format_args!("{path}.hystart_detect"), name, "applies only with hystart = \"linux\"")?;
        }
        if self.ecn_response == Some(EcnResponse::Ns2) {
            check(!cubic && !dctcp, format_args!("{path}.ecn_response"), "ns2", "ns-2's FullTcp response needs congestion_control = \"newreno\" or \"reno\"")?;
            check(self.abe != Some(true), format_args!("{path}.ecn_response"), "ns2", "ns-2's FullTcp response halves the window: it cannot be combined with abe = true")?;
        }
        if let Some(m) = self.accecn_option {
            let name = serde_json::to_value(m).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            check(p.ecn_feedback == EcnFeedback::Accecn, format_args!("{path}.accecn_option"), name, "applies only with ecn_feedback = \"accecn\"")?;
        }
        // ECN++ (draft-ietf-tcpm-generalized-ecn): a mark on a SYN or a pure ACK can only be fed
        // back by AccECN.
        for (v, name, why) in [
            (self.ecn_plus_plus, "ecn_plus_plus", "ECN++ makes SYNs and pure ACKs ECN-capable, whose marks only AccECN feeds back"),
            (self.ect_syn, "ect_syn", "only AccECN feeds back a mark on the SYN (RFC 9768 Table 2; the ECN++ draft)"),
            (self.ect_pure_acks, "ect_pure_acks", "only AccECN counts marks on pure ACKs (RFC 9768 3.2; the ECN++ draft)"),
        ] {
            if v == Some(true) {
                check(p.ecn_feedback == EcnFeedback::Accecn, format_args!("{path}.{name}"), true, format_args!("needs ecn_feedback = \"accecn\": {why}"))?;
            }
        }
        if p.ecn_feedback == EcnFeedback::Accecn && p.ecn_response == EcnResponse::Ns2 {
            check(false, format_args!("{path}.ecn_response"), "ns2", "ns-2's FullTcp response answers RFC 3168's echo: it cannot be combined with ecn_feedback = \"accecn\"")?;
        }
        if self.ecn_min_window == Some(EcnMinWindow::TwoSegments) {
            check(
                p.ecn_response == EcnResponse::Rfc3168,
                format_args!("{path}.ecn_min_window"),
                "two_segments",
                "applies to ecn_response = \"rfc3168\" only (ns-2's response has its own rule below one segment)",
            )?;
        }
        if self.loss_response == Some(LossResponse::Ns2) {
            check(!cubic && !dctcp, format_args!("{path}.loss_response"), "ns2", "ns-2's FullTcp loss response needs congestion_control = \"newreno\" or \"reno\"")?;
            check(!p.sack, format_args!("{path}.loss_response"), "ns2", "ns-2's FullTcp loss response is for NewReno and Reno without SACK: it cannot be combined with sack = true")?;
        }
        if p.prr {
            check(p.sack, format_args!("{path}.prr"), true, "PRR paces SACK-based recovery (RFC 6675): it needs sack = true")?;
        }
        if p.rack_tlp {
            check(p.sack, format_args!("{path}.rack_tlp"), true, "RACK-TLP reads SACK feedback (RFC 8985): it needs sack = true")?;
        }
        let path = |field: &str| format!("{path}.{field}");
        if let Some(v) = self.initial_rto_s {
            positive(v, path("initial_rto_s"))?;
        }
        if let Some(v) = self.min_rto_s {
            non_negative(v, path("min_rto_s"))?;
        }
        if let Some(v) = self.max_rto_s {
            positive(v, path("max_rto_s"))?;
        }
        check(
            p.max_rto >= p.min_rto,
            path("max_rto_s"),
            p.max_rto as f64 / 1e9,
            format_args!("must not be below min_rto_s ({})", p.min_rto as f64 / 1e9),
        )?;
        check(
            p.max_rto >= p.initial_rto,
            path("max_rto_s"),
            p.max_rto as f64 / 1e9,
            format_args!("must not be below initial_rto_s ({})", p.initial_rto as f64 / 1e9),
        )?;
        check(p.initial_window_segments >= 1, path("initial_window_segments"), p.initial_window_segments, "must be at least 1")?;
        if let Some(v) = self.delayed_ack_ms {
            non_negative(v, path("delayed_ack_ms"))?;
        }
        check(p.ack_every_segments >= 1, path("ack_every_segments"), p.ack_every_segments, "must be at least 1")?;
        if let Some(n) = self.ack_every_segments.filter(|&n| n != 2) {
            let rule = "Linux's receiver acknowledges every second full segment: set delayed_ack_policy = \"rfc5681\" to choose another count";
            check(p.delayed_ack_policy != DelayedAckPolicy::Linux, path("ack_every_segments"), n, rule)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(v: serde_json::Value) -> TcpConfig {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn ecn_plus_plus_is_a_bundle_of_switches_each_of_which_can_be_set_apart() {
        let t = table(serde_json::json!({"ecn": true, "ecn_feedback": "accecn", "ecn_plus_plus": true}));
        let p = t.resolve();
        assert!(p.ect_syn && p.ect_pure_acks && p.ect_fins && p.ect_retransmissions);
        assert_eq!((p.ecn_plus, p.accecn_option), (EcnPlus::Rfc5562, AccEcnOptionMode::Rfc9768));
        let t = table(serde_json::json!({"ecn": true, "ecn_feedback": "accecn", "ecn_plus_plus": true, "ect_fins": false, "ecn_plus": "off"}));
        let p = t.resolve();
        assert!(p.ect_syn && !p.ect_fins && p.ecn_plus == EcnPlus::Off);
        // The filled table resolves to the same parameters; the defaults write nothing new.
        assert_eq!(t.filled().resolve(), p);
        let f = TcpConfig::default().filled();
        assert!(f.ecn_feedback.is_none() && f.accecn_option.is_none() && f.ecn_plus_plus.is_none() && f.ect_syn.is_none());
        assert_eq!(f.ecn_plus, Some(EcnPlusName::Off));
    }

    #[test]
    fn ecn_plus_plus_options_need_accecn_and_name_themselves() {
        let err = |v: serde_json::Value| table(v).validate().unwrap_err().to_string();
        for (name, v) in [
            ("tcp.ect_syn", serde_json::json!({"ecn": true, "ect_syn": true})),
            ("tcp.ect_pure_acks", serde_json::json!({"ecn": true, "ect_pure_acks": true})),
            ("tcp.ecn_plus_plus", serde_json::json!({"ecn": true, "ecn_plus_plus": true})),
            ("tcp.accecn_option", serde_json::json!({"ecn": true, "accecn_option": "full"})),
        ] {
            let e = err(v);
            assert!(e.starts_with(name) && e.contains("ecn_feedback = \"accecn\""), "{e}");
        }
        assert!(table(serde_json::json!({"ecn": true, "ecn_feedback": "accecn", "ecn_plus_plus": true})).validate().is_ok());
    }
}
