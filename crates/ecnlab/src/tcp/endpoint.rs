//! One end of a TCP connection.
//!
//! Sources: RFC 793 (states, handshake, FIN), RFC 5681 (congestion control, delayed ACKs,
//! duplicate ACKs, Reno fast recovery), RFC 6582 (NewReno fast recovery with partial ACKs,
//! "impatient" timer),
//! RFC 6298 (RTO, Karn, backoff), RFC 3168 section 6.1 (ECN negotiation, ECE/CWR), spec
//! sections 14, 15, 17, 20-22.
//!
//! Model choices, stated once:
//! * Sequence numbers count bytes from ISS = 0; the SYN occupies 0, data starts at 1, the FIN
//!   occupies the byte after the data. Segments carry at most one MSS.
//! * The application reads immediately, so the advertised window is constant (the flow's
//!   receiver window).
//! * Nothing is sent from inside `on_segment` or the timer handlers: they update state and the
//!   caller then runs the application and calls [`Endpoint::flush`], which sends data (with the
//!   ACK piggybacked) and any ACK still owed. So a request written as soon as the handshake
//!   completes rides on the ACK of the SYN-ACK, as in real stacks.
//! * cwnd does not grow while it is at or above the peer's window (RFC 7661's point: growth
//!   that the window cannot use is not validated).
//! * Entering fast retransmit requires the cumulative ACK to exceed `recover` (the highest
//!   sequence number sent when the last recovery or timeout began), RFC 6582 section 3.2 step 2.
//!   Reno keeps this rule too: a second loss in a window that Reno's recovery left on a partial
//!   ACK is repaired by the retransmission timer. ns-2's FullTcp applies it only after a
//!   timeout, and its Reno fast-retransmits again (`loss_response = "ns2"`).
//! * With a slow-start exit (`hystart`) the sender also takes an RTT sample from every ACK of
//!   new data: from the send time of the newest segment it acknowledges, none when any byte it
//!   acknowledges was retransmitted (Linux's `ca_rtt_us`); the RFC 6298 estimator still times
//!   one segment per round trip.

use std::collections::VecDeque;

use super::cc::{CongestionControl, NewReno, RttInfo, Signal, Window};
use super::controller::Controller;
use super::cubic::Cubic;
use super::dctcp::Dctcp;
use super::prague::Prague;
use super::ecn::{AckFacts, Echo, EchoMode, Feedback};
use super::hystart::{HystartKind, HystartStats};
use super::params::{
    CcKind, DelayedAckPolicy, EcnFeedback, EcnMinWindow, EcnPlus, EcnResponse, LossResponse, RtoBackoffEnd, RtoEstimator, TcpParams, TimeoutSsthresh,
};
use super::rtt::RttEstimator;
use super::rack::{probe_timeout, Rack, Tlp};
use super::sack::{insert_range, NextSeg, Prr, SackBlocks, SackReceiver, Scoreboard};
use crate::engine::SimTime;
use crate::packet::{flags, AccEcnOption, Direction, Ecn, Packet, PacketId, PacketKind, PacketPool};

/// Connection states, spelled as in RFC 793.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpState {
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Client,
    Server,
}

/// What a call changed that the application must react to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpEvents {
    /// The handshake completed at this end.
    pub established: bool,
    /// New bytes were delivered in order to the application.
    pub delivered: bool,
    /// The peer's FIN arrived in order: the peer will send nothing more.
    pub peer_closed: bool,
    /// This end reached CLOSED or TIME-WAIT.
    pub closed: bool,
    /// The handshake gave up after `syn_retries` retransmissions.
    pub aborted: bool,
}

/// What an endpoint needs from the simulator while it handles one event.
pub struct SegmentCtx<'a> {
    pub now: SimTime,
    pub pool: &'a mut PacketPool,
    /// Packets to send, in order; the caller injects them into the network.
    pub out: &'a mut Vec<PacketId>,
    pub params: &'a TcpParams,
}

/// Counters of one endpoint (whole run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EndpointStats {
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    pub retx_bytes: u64,
    /// Retransmission timeouts on data (handshake timeouts are in `handshake_retx`).
    pub rtos: u32,
    /// SYN (client) or SYN-ACK (server) retransmissions.
    pub handshake_retx: u32,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u32,
    /// Window reductions in response to ECE.
    pub ecn_reductions: u32,
    /// Window reductions in response to a loss found by duplicate ACKs (a loss in a window
    /// already reduced for ECN is repaired without one).
    pub loss_reductions: u32,
    /// Data segments received with CE.
    pub ce_received: u32,
    /// Tail loss probes sent (RFC 8985 section 7).
    pub tlp_probes: u32,
    /// Payload bytes of every data segment that arrived, duplicates and retransmissions
    /// included (seed 001's receiver throughput, against goodput).
    pub bytes_received: u64,
    /// Payload bytes of the retransmitted segments among them (seed 001's goodput excludes
    /// them).
    pub retx_bytes_received: u64,
    /// Client: the SYN-ACK that completed the handshake carried CE.
    pub synack_ce: bool,
    /// When the first and the last SYN (client) or SYN-ACK (server) were sent.
    pub first_syn_at: SimTime,
    pub last_syn_at: SimTime,
}

pub struct Endpoint {
    pub role: Role,
    pub state: TcpState,
    flow: u32,
    flow_gen: u32,
    /// Direction of the packets this end sends.
    dir: Direction,

    // --- sender ---
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// One past the last byte the application has written (data starts at 1).
    app_end: u64,
    /// The application has closed: a FIN follows the data.
    fin_queued: bool,
    w: Window,
    cc: Controller,
    peer_wnd: u64,
    dupacks: u32,
    /// Bytes sent by limited transmit (RFC 3042) since `snd_una` last advanced: left out of
    /// FlightSize at a fast retransmit (RFC 5681 section 3.2 step 2).
    limited_sent: u64,
    /// RFC 6582 `recover`: highest sequence number sent when recovery (or a timeout) began.
    recover: u64,
    in_recovery: bool,
    /// NewReno (RFC 6582) recovery: partial ACKs retransmit the next hole. Off for Reno
    /// (RFC 5681), whose recovery ends on the first ACK of new data.
    partial_ack_recovery: bool,
    /// The first partial ACK of this recovery has been seen (impatient timer variant).
    partial_seen: bool,
    /// SACK was negotiated (RFC 2018): the receiver sends blocks, and the sender's loss
    /// recovery is RFC 6675's (with PRR when `params.prr`) instead of RFC 6582's.
    sack_ok: bool,
    /// The sender's scoreboard (RFC 6675).
    board: Scoreboard,
    /// The receiver's choice of blocks (RFC 2018 section 4, RFC 2883).
    sack_rx: SackReceiver,
    /// PRR state of the current recovery (RFC 6937).
    prr: Prr,
    /// Bytes PRR lets the next flush send (sndcnt).
    prr_sndcnt: u64,
    /// RACK-TLP (RFC 8985) runs: SACK was negotiated and `params.rack_tlp` is on.
    rack_on: bool,
    rack: Rack,
    tlp: Tlp,
    /// Deadlines of TLP's probe timeout and RACK's reordering timer (`SimTime::MAX` when off);
    /// they share the retransmission timer's event with `rto_at`, as in Linux.
    pto_at: SimTime,
    reo_at: SimTime,
    /// An ACK of new data or new data sent: TLP's probe timer is armed again at the flush.
    pto_rearm: bool,
    /// What caused the last window reduction (ns-2's `last_cwnd_action_`).
    last_reduction: Reduction,
    /// ns-2's loss response only: the segment being processed triggered a fast retransmit,
    /// and the flush that follows sends nothing new (tcp-full.cc sends nothing else at the
    /// third duplicate ACK).
    new_data_held: bool,
    rtt: RttEstimator,
    /// The segment being timed for an RTT sample: ACK at or beyond `rtt_seq` completes it.
    rtt_timing: bool,
    /// With Linux's estimator or a slow-start exit: the data segments not yet acknowledged,
    /// oldest first; every ACK of new data samples the RTT from them.
    sent_times: VecDeque<SentSeg>,
    rtt_seq: u64,
    rtt_sent: SimTime,
    /// A slow-start exit needs each ACK's own RTT sample (`ack_rtt`).
    per_ack_rtt: bool,
    /// `sent_times` is kept (Linux's estimator or `per_ack_rtt`).
    track_sent: bool,
    /// This ACK's own RTT sample, for the controller.
    ack_rtt: Option<SimTime>,
    /// Deadline of the retransmission timer (`SimTime::MAX` when off).
    pub rto_at: SimTime,
    /// When the last data segment was sent (0: none yet).
    last_data_at: SimTime,

    // --- pacing (`TcpParams::pacing`; Linux's EDT pacing, see `pace_after_send`) ---
    /// Earliest departure of the next paced segment (Linux's `tcp_wstamp_ns`).
    pace_next: SimTime,
    /// The pacing rate as nanoseconds per byte, `pace_num / pace_den`: 100 srtt over
    /// ratio-percent times max(cwnd, FlightSize) bytes. `pace_den == 0`: no rate (no RTT
    /// sample yet), nothing is held.
    pace_num: u64,
    pace_den: u64,
    /// Data segments sent, retransmissions included (Linux's `data_segs_out`): the first ten
    /// are not paced.
    segs_out: u64,
    /// A fast retransmission (or a partial ACK's) that pacing held back: sent before anything
    /// else once pacing allows.
    retx_held: bool,
    /// The next segment goes out whatever the pacing time (the retransmission of a
    /// retransmission timeout: Linux's `tcp_retransmit_timer` sends it without
    /// `tcp_pacing_check`).
    pace_exempt: bool,
    /// When this end wants to be woken to send what pacing held back (`SimTime::MAX`: never).
    pub pace_at: SimTime,

    // --- ECN (RFC 3168) ---
    /// Negotiation, the receiver's echo and the sender's CWR (`tcp/ecn.rs`).
    ecn: Feedback,
    /// The first byte after the window of data the last reduction answered (snd_max then): an
    /// echo is new only on an ACK beyond it (RFC 3168 6.1.2, once per window of data; the ACK
    /// of exactly that window still carries the echo of the mark that caused the reduction),
    /// and a loss is in a new window when its hole starts at or beyond it.
    ecn_recover: u64,
    /// RFC 3168 6.1.2: an echo arrived with a one-segment window: send no new data until the
    /// retransmission timer expires. With ns-2's response: the window is below one segment
    /// after an echo, and the timer runs until the window opens or it expires.
    ecn_hold: bool,
    /// ns-2's response only: the last echo came at a window of at most one segment (ns-2's
    /// `ecn_backoff_`): another such echo backs the timer off, and an echoing ACK's RTT
    /// sample does not end the backoff.
    ecn_backoff: bool,

    // --- receiver ---
    rcv_nxt: u64,
    /// Out-of-order byte ranges [start, end), sorted and disjoint.
    ooo: Vec<(u64, u64)>,
    /// Sequence number of the peer's FIN, once seen.
    peer_fin: Option<u64>,
    fin_consumed: bool,
    rcv_wnd: u32,
    segs_unacked: u32,
    /// Deadline of the delayed-ACK timer (`SimTime::MAX` when off).
    pub delack_at: SimTime,
    ack_now: bool,
    /// Unacknowledged in-order payload bytes (Linux: `rcv_nxt - rcv_wup`).
    bytes_unacked: u64,
    /// Linux's delayed-ACK engine (`icsk_ack`), used with `DelayedAckPolicy::Linux`.
    lx: LinuxAck,

    pub stats: EndpointStats,
}

const OFF: SimTime = SimTime::MAX;

/// A data segment in flight, for per-ACK RTT samples.
#[derive(Clone, Copy, Debug)]
struct SentSeg {
    start: u64,
    end: u64,
    sent: SimTime,
    retx: bool,
}

/// Linux's TCP_MAX_QUICKACKS (include/net/tcp.h).
const LINUX_MAX_QUICKACKS: u32 = 16;
/// Linux's TCP_DELACK_MAX (include/net/tcp.h, HZ / 5): the longest delayed-ACK timer.
const LINUX_DELACK_MAX: SimTime = 200_000_000;

/// The receiver state of Linux's delayed ACKs (struct inet_connection_sock, `icsk_ack`).
#[derive(Clone, Copy, Debug, Default)]
struct LinuxAck {
    /// ACKs still to send at once (`quick`).
    quick: u32,
    /// The delayed-ACK timeout (`ato`); 0 before the first data segment.
    ato: SimTime,
    /// When the last data segment arrived (`lrcvtime`).
    lrcvtime: SimTime,
    /// An ECT segment has arrived (`TCP_ECN_SEEN`).
    ecn_seen: bool,
    /// This segment must be acknowledged at once (`ICSK_ACK_NOW`).
    ack_now_once: bool,
}

/// The cause of a window reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reduction {
    None,
    FastRetransmit,
    Timeout,
    Ecn,
}

/// ns-2's ssthresh: the whole segments of `bytes`, at least two (tcp.cc, `slowdown`:
/// `ssthresh_ = (int) halfwin`, then `if (ssthresh_ < 2) ssthresh_ = 2`).
fn whole_segments(bytes: u64, mss: u64) -> u64 {
    (bytes / mss).max(2) * mss
}

impl Endpoint {
    pub fn new(role: Role, flow: u32, flow_gen: u32, rcv_wnd: u32, p: &TcpParams) -> Endpoint {
        let mss = p.mss_bytes as u64;
        Endpoint {
            role,
            state: match role {
                Role::Client => TcpState::Closed,
                Role::Server => TcpState::Listen,
            },
            flow,
            flow_gen,
            dir: match role {
                Role::Client => Direction::Up,
                Role::Server => Direction::Down,
            },
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            app_end: 1,
            fin_queued: false,
            w: Window { cwnd: p.initial_window_bytes(), ssthresh: u64::MAX, mss },
            cc: match p.cc {
                CcKind::NewReno { beta, beta_ecn } | CcKind::Reno { beta, beta_ecn } => {
                    Controller::NewReno(NewReno::new(beta, beta_ecn, p.abc).with_hystart(p.hystart))
                }
                CcKind::Cubic(c) => Controller::Cubic(Cubic::new(c).with_abc(p.abc).with_hystart(p.hystart)),
                CcKind::Dctcp { beta, dctcp } => {
                    Controller::Dctcp(Dctcp::new(dctcp, NewReno::new(beta, beta, p.abc).with_hystart(p.hystart)))
                }
                CcKind::Prague { beta, dctcp, prague } => Controller::Prague(Prague::new(
                    prague,
                    Dctcp::new(dctcp, NewReno::new(beta, beta, p.abc).with_hystart(p.hystart)),
                )),
            },
            partial_ack_recovery: p.cc.partial_ack_recovery(),
            peer_wnd: mss,
            dupacks: 0,
            limited_sent: 0,
            recover: 0,
            in_recovery: false,
            partial_seen: false,
            last_reduction: Reduction::None,
            sack_ok: false,
            board: Scoreboard::default(),
            sack_rx: SackReceiver::default(),
            prr: Prr::default(),
            prr_sndcnt: 0,
            rack_on: false,
            rack: Rack::new(),
            tlp: Tlp::default(),
            pto_at: OFF,
            reo_at: OFF,
            pto_rearm: false,
            new_data_held: false,
            rtt: RttEstimator::with_kind(p.rto_estimator, p.initial_rto, p.min_rto, p.max_rto, p.clock_granularity),
            rtt_timing: false,
            sent_times: VecDeque::new(),
            rtt_seq: 0,
            rtt_sent: 0,
            per_ack_rtt: p.hystart != HystartKind::Off,
            track_sent: p.hystart != HystartKind::Off || p.rto_estimator == RtoEstimator::Linux,
            ack_rtt: None,
            rto_at: OFF,
            ecn: Feedback::new(p.cc.echo_mode(), p.ect_codepoint),
            ecn_recover: 0,
            ecn_hold: false,
            ecn_backoff: false,
            last_data_at: 0,
            pace_next: 0,
            pace_num: 0,
            pace_den: 0,
            segs_out: 0,
            retx_held: false,
            pace_exempt: false,
            pace_at: OFF,
            rcv_nxt: 0,
            ooo: Vec::new(),
            peer_fin: None,
            fin_consumed: false,
            rcv_wnd,
            segs_unacked: 0,
            delack_at: OFF,
            ack_now: false,
            bytes_unacked: 0,
            lx: LinuxAck::default(),
            stats: EndpointStats::default(),
        }
    }

    // ----- what the application and the metrics see -----

    /// Payload bytes delivered in order to the application.
    pub fn delivered_bytes(&self) -> u64 {
        self.rcv_nxt.saturating_sub(1 + self.fin_consumed as u64)
    }

    /// Payload bytes written by the application so far.
    pub fn written_bytes(&self) -> u64 {
        self.app_end - 1
    }

    /// Payload bytes the peer has acknowledged.
    pub fn acked_bytes(&self) -> u64 {
        self.snd_una.saturating_sub(1).min(self.written_bytes())
    }

    pub fn ecn_negotiated(&self) -> bool {
        self.ecn.negotiated
    }

    /// AccECN (RFC 9768) was negotiated.
    pub fn accecn_negotiated(&self) -> bool {
        self.ecn.accecn()
    }

    /// With AccECN: the CE-marked packets the peer has reported so far (s.cep less its initial
    /// value), and the CE marks this end has received and counted (r.cep less its initial value).
    pub fn accecn_ce_counts(&self) -> Option<(u64, u64)> {
        self.ecn.accecn_state().map(|a| (a.s_cep - 5, (a.r_cep - 5) as u64))
    }

    /// With AccECN: the CE-marked bytes the sender has given its controller, and the CE-marked
    /// payload bytes this end has received (r.ceb).
    pub fn accecn_ce_bytes(&self) -> Option<(u64, u64)> {
        self.ecn.accecn_state().map(|a| (a.ce_bytes_reported, a.r_ceb))
    }

    /// DCTCP's estimate of the marked fraction (alpha), for a DCTCP sender.
    pub fn dctcp_alpha(&self) -> Option<f64> {
        self.cc.dctcp_alpha()
    }

    pub fn window(&self) -> Window {
        self.w
    }

    pub fn srtt(&self) -> Option<SimTime> {
        self.rtt.srtt()
    }

    /// What the slow-start exit (`hystart`) did.
    pub fn hystart_stats(&self) -> HystartStats {
        match &self.cc {
            Controller::NewReno(c) => c.hystart_stats,
            Controller::Cubic(c) => c.hystart_stats,
            Controller::Dctcp(c) => c.reno.hystart_stats,
            Controller::Prague(c) => c.dctcp.reno.hystart_stats,
        }
    }

    pub fn is_done(&self) -> bool {
        matches!(self.state, TcpState::Closed | TcpState::TimeWait) && self.snd_una >= self.snd_max
    }

    // ----- application calls -----

    /// Active open: send the SYN (an ECN-setup SYN, with ECE and CWR, if ECN is on).
    pub fn connect(&mut self, ctx: &mut SegmentCtx) {
        debug_assert_eq!(self.state, TcpState::Closed);
        self.state = TcpState::SynSent;
        self.send_syn(ctx);
        self.snd_nxt = 1;
        self.snd_max = 1;
    }

    /// The application writes `bytes` more (sent on the next [`Endpoint::flush`]).
    pub fn write(&mut self, bytes: u64) {
        self.app_end = self.app_end.saturating_add(bytes);
    }

    /// The application closes: a FIN follows the data written so far (RFC 793 CLOSE call).
    pub fn close(&mut self) {
        self.fin_queued = true;
        self.state = match self.state {
            TcpState::Established => TcpState::FinWait1,
            TcpState::CloseWait => TcpState::LastAck,
            s => s,
        };
    }

    // ----- segment arrival -----

    /// Processes one arriving segment with its SACK blocks. Nothing new is sent here (only
    /// retransmissions that loss recovery starts): call [`Endpoint::flush`] after the
    /// application has reacted to the returned events.
    pub fn on_segment(&mut self, pkt: &Packet, sack: &SackBlocks, ctx: &mut SegmentCtx) -> TcpEvents {
        self.on_segment_with(pkt, sack, None, ctx)
    }

    /// [`Endpoint::on_segment`] for a segment that may carry an AccECN option.
    pub fn on_segment_with(&mut self, pkt: &Packet, sack: &SackBlocks, opt: Option<&AccEcnOption>, ctx: &mut SegmentCtx) -> TcpEvents {
        let mut ev = TcpEvents::default();
        let syn = pkt.has(flags::SYN);
        let ack = pkt.has(flags::ACK);
        match (self.state, syn, ack) {
            // Passive open: SYN in LISTEN -> SYN-RECEIVED, answer with a SYN-ACK.
            (TcpState::Listen, true, false) => {
                self.rcv_nxt = 1;
                self.peer_wnd = pkt.wnd as u64;
                // RFC 3168 6.1.1: an ECN-setup SYN has both ECE and CWR; RFC 9768 Table 2.
                self.ecn.accept_syn(ctx.params.ecn, ctx.params.ecn_feedback == EcnFeedback::Accecn, pkt);
                self.set_sack(ctx.params.sack && pkt.has(flags::SACK_PERM), ctx.params);
                self.state = TcpState::SynReceived;
                self.send_syn(ctx);
                self.snd_nxt = 1;
                self.snd_max = 1;
            }
            // A retransmitted SYN: our SYN-ACK was lost or is late; send it again.
            (TcpState::SynReceived, true, false) => {
                self.stats.handshake_retx += 1;
                self.ecn.syn_again(pkt);
                self.rtt_timing = false;
                self.send_syn(ctx);
            }
            // SYN-ACK in SYN-SENT -> ESTABLISHED; the ACK goes out on flush (maybe with data).
            (TcpState::SynSent, true, true) if pkt.ack == 1 => {
                self.rcv_nxt = 1;
                self.peer_wnd = pkt.wnd as u64;
                // RFC 3168 6.1.1: an ECN-setup SYN-ACK has ECE without CWR; RFC 9768 Table 2.
                // With AccECN the flush sends a pure ACK in the handshake encoding first.
                self.ecn.accept_synack(ctx.params.ecn, ctx.params.ecn_feedback == EcnFeedback::Accecn, pkt);
                self.set_sack(ctx.params.sack && pkt.has(flags::SACK_PERM), ctx.params);
                self.stats.synack_ce = pkt.ecn == Ecn::Ce;
                let syn_ce = self.ecn.synack_reports_ce(pkt);
                // RFC 5562 3.2: echo a CE-marked SYN-ACK on the ACK (seed 000's client ignores it).
                // AccECN feeds it back in the ACK's handshake encoding and in its counter.
                if self.stats.synack_ce && self.ecn.negotiated && !self.ecn.accecn() && ctx.params.ecn_plus == EcnPlus::Rfc5562 {
                    self.ecn.start_echo();
                }
                self.handshake_done(ctx);
                if syn_ce {
                    // ECN++ (draft-ietf-tcpm-generalized-ecn, the SYN's congestion response):
                    // the SYN-ACK says the ECT SYN was CE-marked: start from one segment.
                    self.w.cwnd = self.w.mss;
                    self.ecn_recover = self.snd_max;
                    self.stats.ecn_reductions += 1;
                }
                self.ack_now = true;
                ev.established = true;
            }
            // A duplicate SYN-ACK: our ACK was lost; acknowledge again (with AccECN in the
            // handshake encoding, RFC 9768 3.2.2.1).
            (_, true, true) => {
                self.ecn.synack_again(pkt);
                self.ack_now = true;
            }
            // Any other SYN is stale.
            (_, true, false) => {}
            (TcpState::Listen | TcpState::SynSent | TcpState::Closed, false, _) => {}
            // ACK of our SYN-ACK (possibly carrying the request) -> ESTABLISHED.
            (TcpState::SynReceived, false, true) if pkt.ack >= 1 => {
                // RFC 9768 Table 4: a pure ACK carries the SYN-ACK's IP-ECN field.
                let synack_ce = self.ecn.on_first_ack(pkt);
                self.ecn.count_arrival(pkt);
                self.handshake_done(ctx);
                if (self.ecn.echoes(pkt) || synack_ce) && ctx.params.ecn_plus == EcnPlus::Rfc5562 {
                    // RFC 5562 3.2: the SYN-ACK was marked: start from one segment and say CWR
                    // on the first data; echoes of that mark on later ACKs are not new.
                    self.w.cwnd = self.w.mss;
                    self.ecn.window_reduced(true);
                    self.ecn_recover = self.snd_max;
                    self.stats.ecn_reductions += 1;
                }
                ev.established = true;
                self.process_ack(pkt, sack, opt, ctx, &mut ev);
                self.process_data(pkt, ctx, &mut ev);
                self.accecn_ack_check();
            }
            (TcpState::SynReceived, false, _) => {}
            (_, false, _) => {
                self.ecn.count_arrival(pkt);
                if ack {
                    self.process_ack(pkt, sack, opt, ctx, &mut ev);
                }
                self.process_data(pkt, ctx, &mut ev);
                self.accecn_ack_check();
            }
        }
        ev
    }

    /// AccECN's receiver ACKs at once on a change to CE and every few CE marks (RFC 9768
    /// 3.2.2.5.1).
    fn accecn_ack_check(&mut self) {
        if self.ecn.accecn_ack_due(self.segs_unacked > 0) {
            self.ack_now = true;
        }
    }

    /// Whether SACK was negotiated; RACK-TLP runs on it when configured.
    fn set_sack(&mut self, sack_ok: bool, p: &TcpParams) {
        self.sack_ok = sack_ok;
        self.rack_on = sack_ok && p.rack_tlp;
        self.board.explicit_loss = self.rack_on;
    }

    /// When the retransmission timer's event must fire: the earliest of the RTO, TLP's probe
    /// timeout and RACK's reordering timer (`SimTime::MAX` when none is armed).
    pub fn retransmit_timer_at(&self) -> SimTime {
        self.rto_at.min(self.pto_at).min(self.reo_at)
    }

    /// Handshake completed at this end: take the RTT sample, stop the handshake timer and set
    /// the initial window (one segment after a lost SYN or SYN-ACK, RFC 5681 section 3.1).
    fn handshake_done(&mut self, ctx: &mut SegmentCtx) {
        if self.rtt_timing {
            self.rtt.sample_at(ctx.now - self.rtt_sent, 1, self.snd_max);
            self.rtt_timing = false;
        }
        self.snd_una = 1;
        self.rto_at = OFF;
        self.state = TcpState::Established;
        let p = ctx.params;
        self.w.cwnd = if self.stats.handshake_retx > 0 && p.iw_one_after_syn_loss {
            p.mss_bytes as u64
        } else {
            p.initial_window_bytes()
        };
        // Linux sets the pacing rate when the handshake completes (the client in `tcp_ack` of
        // the SYN-ACK, the server in `tcp_rcv_state_process`, SYN-RECV).
        self.update_pacing_rate(p);
    }

    fn process_ack(&mut self, pkt: &Packet, sack: &SackBlocks, opt: Option<&AccEcnOption>, ctx: &mut SegmentCtx, ev: &mut TcpEvents) {
        let ack = pkt.ack;
        if ack > self.snd_max {
            return; // acknowledges something never sent
        }
        // Linux's `tcp_ack` updates the pacing rate (`tcp_cong_control`) on every ACK that
        // finds data outstanding and is not older than snd_una, after the window's change.
        let prior_outstanding = ack >= self.snd_una && self.snd_max > self.snd_una;
        self.process_ack_inner(pkt, sack, opt, ctx, ev);
        if prior_outstanding {
            self.update_pacing_rate(ctx.params);
        }
    }

    fn process_ack_inner(&mut self, pkt: &Packet, sack: &SackBlocks, opt: Option<&AccEcnOption>, ctx: &mut SegmentCtx, ev: &mut TcpEvents) {
        let ack = pkt.ack;
        // RFC 6937 DeliveredData: the change in snd_una plus the change in SACKed bytes.
        let delivered_before = self.snd_una + self.board.sacked_bytes;
        let mut rack_lost = false;
        if self.sack_ok {
            if ack > self.snd_una {
                self.board.advance(ack);
            }
            let dsacks = self.board.dsacks;
            self.board.update(sack.as_slice(), ack.max(self.snd_una), self.snd_max);
            if self.rack_on {
                let dsack = self.board.dsacks > dsacks;
                rack_lost = self.rack_ack(ctx.now, ack.max(self.snd_una), true, dsack, ctx);
            }
        }
        let delivered = (ack.max(self.snd_una) + self.board.sacked_bytes).saturating_sub(delivered_before);
        let wnd_changed = pkt.wnd as u64 != self.peer_wnd;
        self.peer_wnd = pkt.wnd as u64;
        let mss = self.w.mss;
        let is_dupack = ack == self.snd_una
            && pkt.payload == 0
            && !pkt.has(flags::FIN)
            && self.snd_max > self.snd_una
            && !wnd_changed;
        // RFC 3168's ECE, or AccECN's count (decoded unless the ACK is superseded).
        let facts = AckFacts { delivered, fresh: ack >= self.snd_una, dupack: is_dupack && !self.sack_ok, advanced: ack > self.snd_una, mss };
        let echo = self.ecn.on_ack(pkt, opt, facts);
        let ece = echo.ece;
        let ns2_loss = ctx.params.loss_response == LossResponse::Ns2;
        let mut signalled = false;
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            // An echo answers the window that was outstanding when it was sent: the data in
            // flight before this ACK (as a loss at the third duplicate ACK sees it).
            let flight_before = self.snd_max - self.snd_una;
            let ns2 = ctx.params.ecn_response == EcnResponse::Ns2;
            // ns-2 (tcp-full.cc, newack): an echoing ACK does not end an ECN backoff.
            let keep_backoff = ns2 && ece && self.ecn_backoff;
            if ns2 && !keep_backoff {
                self.ecn_backoff = false;
            }
            let rtts = if self.track_sent { self.acked_segment_rtts(ack, ctx.now) } else { None };
            if self.per_ack_rtt {
                self.ack_rtt = rtts.map(|r| r.1);
            }
            if ctx.params.rto_estimator == RtoEstimator::Linux {
                // Linux (tcp_clean_rtx_queue, tcp_ack_update_rtt): every ACK of new data
                // samples the time since the oldest segment it acknowledges was sent.
                if let Some((oldest, _)) = rtts {
                    let backoff = self.rtt.backoff();
                    self.rtt.sample_at(oldest, ack, self.snd_max);
                    if keep_backoff {
                        self.rtt.set_backoff(backoff);
                    }
                }
            } else if self.rtt_timing && ack >= self.rtt_seq {
                // Karn: the timed segment is never a retransmission (timing stops on any).
                let backoff = self.rtt.backoff();
                self.rtt.sample_at(ctx.now - self.rtt_sent, ack, self.snd_max);
                if keep_backoff {
                    self.rtt.set_backoff(backoff);
                }
                self.rtt_timing = false;
            }
            if ctx.params.rto_backoff_end == RtoBackoffEnd::NewAck && !keep_backoff {
                self.rtt.set_backoff(0);
            }
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            // The controller hears of the ACK before the sender acts on it (Linux: DCTCP updates
            // alpha in `tcp_in_ack_event`, before an echo's `tcp_enter_cwr` takes ssthresh).
            self.ack_signal(delivered, echo);
            signalled = true;
            self.pto_rearm = self.rack_on;
            // A held retransmission of the old head is obsolete (a partial ACK holds the next).
            self.retx_held = false;
            self.dupacks = 0;
            self.limited_sent = 0;
            let mut restart_timer = true;
            if self.in_recovery && self.sack_ok {
                if ack > self.recover {
                    // RFC 6675: recovery ends when the cumulative ACK passes RecoveryPoint;
                    // RFC 6937: cwnd = ssthresh.
                    self.in_recovery = false;
                    self.w.cwnd = self.w.ssthresh;
                    if self.rack_on {
                        self.rack.on_recovery_exit();
                    }
                } else {
                    self.sack_recovery_ack(delivered, ctx.params.prr);
                }
            } else if self.in_recovery {
                if !self.partial_ack_recovery {
                    // Reno (RFC 5681 section 3.2 step 6): the first ACK of new data, partial or
                    // full, ends recovery and deflates the window to ssthresh.
                    self.in_recovery = false;
                    self.w.cwnd = self.w.ssthresh;
                    if ns2_loss {
                        self.open_window(acked, ece, ctx.now);
                    }
                } else if ack > self.recover {
                    self.in_recovery = false;
                    if ns2_loss {
                        // FullTcp: retract the inflated window to ssthresh, then open it.
                        self.w.cwnd = self.w.cwnd.min(self.w.ssthresh);
                        self.open_window(acked, ece, ctx.now);
                    } else {
                        // Full ACK (RFC 6582 step 5): deflate to min(ssthresh, FlightSize + SMSS).
                        let flight = self.snd_max - self.snd_una;
                        self.w.cwnd = self.w.ssthresh.min(flight.max(mss) + mss);
                    }
                } else {
                    // Partial ACK: retransmit the next hole, deflate by the amount acked and
                    // add back one SMSS if at least one SMSS was acked.
                    self.retransmit_head(ctx);
                    let add_back = if acked >= mss { mss } else { 0 };
                    self.w.cwnd = (self.w.cwnd.saturating_sub(acked) + add_back).max(mss);
                    restart_timer = !self.partial_seen;
                    self.partial_seen = true;
                }
            } else if rack_lost && self.may_fast_retransmit(ack, ctx.params) {
                // RACK found a loss on an ACK of new data (RFC 8985 section 6.2).
                self.enter_fast_recovery(ctx, delivered);
            } else if ece && self.snd_una > self.ecn_recover {
                self.ecn_response(ctx, flight_before);
            } else {
                self.open_window(acked, ece, ctx.now);
            }
            if ns2 && self.w.cwnd < mss {
                // ns-2 (tcp-full.cc, recv): every echo restarts the timer of a sender with less
                // than one segment; an ACK without one opens the window (slow start) instead.
                if ece {
                    self.ecn_hold = true;
                    self.rto_at = ctx.now + self.rtt.rto();
                    restart_timer = false;
                }
            } else if ns2 {
                self.ecn_hold = false;
            }
            if self.snd_una >= self.snd_max {
                if !self.ecn_hold {
                    self.rto_at = OFF;
                }
            } else if restart_timer {
                self.rto_at = ctx.now + self.rtt.rto();
            }
            self.on_fin_acked(ev);
        } else if is_dupack {
            // Duplicate ACK (RFC 5681 section 2).
            self.dupacks += 1;
            if self.in_recovery && self.sack_ok {
                self.sack_recovery_ack(delivered, ctx.params.prr);
            } else if self.in_recovery {
                // Each further dupack: a segment has left the network (RFC 6582 step 4).
                self.w.cwnd += mss;
            } else if self.rack_on {
                if rack_lost && self.may_fast_retransmit(ack, ctx.params) {
                    self.enter_fast_recovery(ctx, delivered);
                }
            } else if (self.dupacks == 3 || self.sack_ok && self.board.lost_end(self.snd_una, mss) > self.snd_una)
                && self.may_fast_retransmit(ack, ctx.params)
            {
                // RFC 6675 section 5: DupThresh duplicate ACKs, or SACKs that make the first
                // unacknowledged segment lost.
                self.enter_fast_recovery(ctx, delivered);
            }
            let rfc3168 = ctx.params.ecn_response == EcnResponse::Rfc3168;
            if ece && rfc3168 && !self.in_recovery && self.snd_una > self.ecn_recover {
                self.ecn_response(ctx, self.snd_max - self.snd_una);
            }
        }
        if !signalled {
            self.ack_signal(delivered, echo);
        }
    }

    /// Every ACK, whatever the sender makes of it, reaches the controller (`tcp/ecn.rs`), with
    /// SND.UNA after it and SND.NXT (one past the highest byte sent).
    fn ack_signal(&mut self, delivered: u64, echo: Echo) {
        let rtt = RttInfo { snd_una: self.snd_una, snd_nxt: self.snd_max, ..self.rtt.info() };
        let signal = self.ecn.signal(delivered, echo, rtt);
        self.cc.on_ack_signal(&mut self.w, &signal);
    }

    /// Forgets the segments an ACK up to `ack` covers and returns the time since the oldest
    /// and since the newest of them was sent (Linux's `seq_rtt_us` and `ca_rtt_us` in
    /// tcp_clean_rtx_queue); none if any was retransmitted (no timestamps: Karn's rule).
    fn acked_segment_rtts(&mut self, ack: u64, now: SimTime) -> Option<(SimTime, SimTime)> {
        let mut sent = None;
        let mut retx = false;
        while let Some(seg) = self.sent_times.front().copied() {
            if seg.end > ack {
                break;
            }
            self.sent_times.pop_front();
            retx |= seg.retx;
            let (oldest, _) = sent.unwrap_or((seg.sent, seg.sent));
            sent = Some((oldest, seg.sent));
        }
        sent.filter(|_| !retx).map(|(oldest, newest)| (now - oldest, now - newest))
    }

    /// Whether a third duplicate ACK of `ack` starts a fast retransmit. RFC 6582: when it is
    /// beyond `recover`. ns-2's FullTcp (tcp-full.cc, `dupack_action`): always, unless the last
    /// reduction was a timeout and the ACK has not passed everything sent before it (FullTcp's
    /// `recover_` is then `maxseq_`, the next sequence number to send); after a fast retransmit
    /// Reno halves again, after an echo the loss is repaired.
    fn may_fast_retransmit(&self, ack: u64, params: &TcpParams) -> bool {
        match params.loss_response {
            LossResponse::Rfc5681 => ack > self.recover,
            LossResponse::Ns2 => self.last_reduction != Reduction::Timeout || ack > self.recover + 1,
        }
    }

    /// The controller's answer to a loss (a fast retransmit, or a timeout when `timeout`), with
    /// `flight` the data outstanding. RFC 5681 halves FlightSize; ns-2's FullTcp halves
    /// min(cwnd, peer window) and keeps whole segments of ssthresh (tcp.cc, `slowdown`).
    fn reduce_for_loss(&mut self, ctx: &SegmentCtx, flight: u64, timeout: bool) {
        let ns2 = ctx.params.loss_response == LossResponse::Ns2;
        let basis = if ns2 { self.w.cwnd.min(self.peer_wnd) } else { flight };
        if timeout {
            self.cc.on_timeout(&mut self.w, basis, ctx.now);
        } else {
            self.cc.on_congestion_event(&mut self.w, Signal::Loss, basis, ctx.now);
        }
        if ns2 {
            self.w.ssthresh = whole_segments(self.w.ssthresh, self.w.mss);
        }
    }

    /// Third duplicate ACK: fast retransmit and enter fast recovery (RFC 5681 section 3.2 steps
    /// 2-4, RFC 6582 steps 2-3; with SACK, RFC 6675 section 5 steps 4.1-4.3 and RFC 6937's
    /// initialisation). `delivered`: the bytes this ACK delivered (RFC 6937 DeliveredData).
    fn enter_fast_recovery(&mut self, ctx: &mut SegmentCtx, delivered: u64) {
        let flight = self.snd_max - self.snd_una - self.limited_sent;
        self.recover = self.snd_max - 1;
        self.stats.fast_retransmits += 1;
        // A loss in a window already reduced for ECN is repaired without a second reduction
        // (spec 17.4, as ns-2's FullTcp does). FullTcp's Reno halves again at a fast
        // retransmit in the window of the last one (dupack_action).
        let ns2_loss = ctx.params.loss_response == LossResponse::Ns2;
        let again = ns2_loss && self.last_reduction == Reduction::FastRetransmit;
        if self.snd_una >= self.ecn_recover || again {
            self.reduce_for_loss(ctx, flight, false);
            self.stats.loss_reductions += 1;
            self.ecn.window_reduced(false);
        }
        self.ecn_recover = self.ecn_recover.max(self.snd_max);
        self.last_reduction = Reduction::FastRetransmit;
        if self.sack_ok {
            // RFC 6675 4.2: cwnd = ssthresh (PRR replaces it on every ACK); RFC 6937: RecoverFS
            // is the FlightSize that ssthresh was taken from (so RFC 6937's example, with
            // limited transmit, has RecoverFS 20 and ssthresh 10).
            self.in_recovery = true;
            self.w.cwnd = self.w.ssthresh;
            self.board.high_rxt = self.snd_una;
            self.prr = Prr::start(flight);
            self.sack_recovery_ack(delivered, ctx.params.prr);
            // RFC 6675 4.3: the first unacknowledged segment goes now, whatever the window.
            let (start, len) = match self.board.next_seg(self.snd_una, self.snd_max, self.w.mss, false) {
                NextSeg::Retransmit { start, len, rescue: false } => (start, len),
                _ => (self.snd_una, self.board.hole_len(self.snd_una, self.snd_max, self.w.mss)),
            };
            let sent = self.sack_retransmit(ctx, start, len);
            self.board.high_rxt = start + sent;
            self.prr_sndcnt = self.prr_sndcnt.saturating_sub(sent);
            return;
        }
        self.retransmit_head(ctx);
        self.w.cwnd = self.w.ssthresh + 3 * self.w.mss;
        self.new_data_held = ns2_loss;
        self.in_recovery = true;
        self.partial_seen = false;
    }

    /// RACK on an ACK (RFC 8985 6.2 steps 2-5) and TLP's check of its probe (7.4): returns
    /// whether RACK marked a segment lost. `newly_sacked`: the scoreboard has just taken an
    /// ACK's blocks (false when RACK's timer calls).
    fn rack_ack(&mut self, now: SimTime, snd_una: u64, newly_sacked: bool, dsack: bool, ctx: &SegmentCtx) -> bool {
        let info = self.rtt.info();
        let board = &self.board;
        let pieces: &[(u64, u64)] = if newly_sacked { &board.newly_sacked } else { &[] };
        self.rack.on_ack(snd_una, pieces, |s, e| board.covers(s, e), now, info.min_rtt);
        let sacked_segs = self.board.sacked_bytes / self.w.mss;
        let reo_wnd = self.rack.reo_wnd(dsack, (snd_una, self.snd_max), self.in_recovery, sacked_segs, info);
        let board = &mut self.board;
        let mut lost = false;
        let timer = self.rack.detect_loss(now, reo_wnd, |s, e| {
            board.mark_lost(s, e);
            lost = true;
        });
        self.reo_at = timer.unwrap_or(OFF);
        // TLP (RFC 8985 7.4): a D-SACK shows the probe's retransmission was not needed; an ACK
        // past the probe without one shows it repaired a loss, which the window must answer.
        if let Some(end) = self.tlp.end_seq {
            self.tlp.dsacked |= dsack;
            if snd_una >= end {
                if self.tlp.is_retrans && !self.tlp.dsacked && !self.in_recovery && self.snd_una >= self.ecn_recover {
                    let flight = self.snd_max - self.snd_una;
                    self.reduce_for_loss(ctx, flight, false);
                    self.stats.loss_reductions += 1;
                    self.ecn.window_reduced(false);
                    self.ecn_recover = self.snd_max;
                    self.last_reduction = Reduction::FastRetransmit;
                }
                self.tlp.end_seq = None;
            }
        }
        lost
    }

    /// TLP's probe timeout expired (RFC 8985 7.3): send one new segment if the receiver's
    /// window allows, else retransmit the last segment in flight; then the RTO runs again.
    fn send_probe(&mut self, ctx: &mut SegmentCtx) {
        self.stats.tlp_probes += 1;
        let mss = self.w.mss;
        let new_len = mss.min(self.app_end.saturating_sub(self.snd_max));
        if new_len > 0 && self.snd_max + new_len <= self.snd_una + self.peer_wnd {
            let seq = self.snd_max;
            self.send_segment(ctx, seq, new_len, false);
            self.snd_max += new_len;
            self.snd_nxt = self.snd_max;
            self.tlp.is_retrans = false;
        } else if let Some(seg) = self.rack.last_unsacked() {
            self.sack_retransmit(ctx, seg.start, seg.end - seg.start);
            self.tlp.is_retrans = true;
        } else {
            return;
        }
        self.tlp.end_seq = Some(self.snd_max);
        self.tlp.dsacked = false;
        self.rto_at = ctx.now + self.rtt.rto();
    }

    /// Arms TLP's probe timer (RFC 8985 7.2) when data is in flight outside recovery and no
    /// probe is outstanding, unless the RTO would fire first.
    fn arm_probe_timer(&mut self, now: SimTime) {
        self.pto_rearm = false;
        let open = matches!(self.state, TcpState::Established | TcpState::CloseWait | TcpState::FinWait1 | TcpState::LastAck);
        if !open || self.in_recovery || self.tlp.end_seq.is_some() || self.snd_una >= self.snd_max {
            self.pto_at = OFF;
            return;
        }
        let flight_segs = (self.snd_max - self.snd_una).div_ceil(self.w.mss);
        let at = now + probe_timeout(self.rtt.srtt(), flight_segs);
        self.pto_at = if at < self.rto_at { at } else { OFF };
    }

    /// An ACK during SACK-based recovery: PRR's sndcnt (RFC 6937) for the next flush, or with
    /// plain RFC 6675 nothing (the flush sends while cwnd - pipe >= 1 SMSS).
    fn sack_recovery_ack(&mut self, delivered: u64, prr: bool) {
        if prr {
            let mss = self.w.mss;
            let pipe = self.board.pipe(self.snd_una, self.snd_max, mss);
            self.prr_sndcnt = self.prr.on_ack(delivered, pipe, self.w.ssthresh, mss);
            // RFC 6937: cwnd = pipe + sndcnt (what the flow samples show during recovery).
            self.w.cwnd = pipe + self.prr_sndcnt;
        }
    }

    /// Retransmits [start, start + len) during SACK-based recovery, or the FIN if it is there;
    /// returns the sequence space sent.
    fn sack_retransmit(&mut self, ctx: &mut SegmentCtx, start: u64, len: u64) -> u64 {
        self.rtt_timing = false;
        let sent = if start < self.app_end {
            let len = len.min(self.app_end - start);
            self.send_segment(ctx, start, len, true);
            len
        } else {
            self.send_fin(ctx);
            1
        };
        self.board.retransmitted(start, start + sent);
        self.prr.on_send(sent);
        sent
    }

    /// RFC 6675 section 5 step (C): send what NextSeg chooses while the window allows: PRR's
    /// sndcnt, or without PRR cwnd - pipe >= 1 SMSS.
    fn send_in_sack_recovery(&mut self, ctx: &mut SegmentCtx) {
        let mss = self.w.mss;
        loop {
            let pipe = self.board.pipe(self.snd_una, self.snd_max, mss);
            let budget = if ctx.params.prr { self.prr_sndcnt } else { self.w.cwnd.saturating_sub(pipe) / mss * mss };
            if budget == 0 || self.pacing_holds(ctx.now, ctx.params) {
                break; // with pacing, the pacing timer's flush sends the rest (Linux paces them)
            }
            let unsent = self.snd_max < self.app_end || self.fin_queued && self.snd_max == self.app_end;
            let new_len = if self.snd_max < self.app_end { mss.min(self.app_end - self.snd_max) } else { 1 };
            let new_data = unsent && self.snd_max + new_len <= self.snd_una + self.peer_wnd.max(mss);
            let sent = match self.board.next_seg(self.snd_una, self.snd_max, mss, new_data) {
                NextSeg::Retransmit { start, len, rescue } => {
                    let sent = self.sack_retransmit(ctx, start, len);
                    if rescue {
                        self.board.rescue_rxt = self.recover;
                    } else {
                        self.board.high_rxt = self.board.high_rxt.max(start + sent);
                    }
                    sent
                }
                NextSeg::NewData => {
                    self.snd_nxt = self.snd_max;
                    if self.snd_max < self.app_end {
                        self.send_segment(ctx, self.snd_max, new_len, false);
                    } else {
                        self.send_fin(ctx);
                    }
                    self.snd_nxt += new_len;
                    self.snd_max = self.snd_nxt;
                    self.prr.on_send(new_len);
                    new_len
                }
                NextSeg::Nothing => break,
            };
            self.prr_sndcnt = self.prr_sndcnt.saturating_sub(sent);
        }
    }

    /// RFC 3168 6.1.2: reduce as for a loss, without retransmitting, once per window of data;
    /// CWR goes on the next new segment. `flight`: the data outstanding before the echoing
    /// ACK acknowledged anything, so a window-limited sender halves its window, as RFC 3168
    /// says (a FlightSize taken after the ACK would cut one more segment per echo).
    /// With a one-segment window the sender cannot go lower: it keeps one segment, restarts
    /// the retransmission timer and sends new data only when it expires (RFC 3168 6.1.2).
    /// With ns-2's response (`EcnResponse::Ns2`) the window is halved whatever its size, to
    /// below one segment too (the caller then holds the sender until its timer expires).
    fn ecn_response(&mut self, ctx: &SegmentCtx, flight: u64) {
        let now = ctx.now;
        let mss = self.w.mss;
        let at_one_segment = self.w.cwnd <= mss;
        match ctx.params.ecn_response {
            EcnResponse::Rfc3168 => {
                self.cc.on_congestion_event(&mut self.w, Signal::Ecn, flight, now);
                // With `EcnMinWindow::TwoSegments` (Linux, FreeBSD) the window is the
                // controller's ssthresh, at least two segments, and the sender goes on.
                // DCTCP's reduction stops at two segments (Linux's `dctcp_ssthresh`).
                if at_one_segment && ctx.params.ecn_min_window == EcnMinWindow::Rfc3168Timer && !ctx.params.cc.scalable() {
                    self.w.cwnd = mss;
                    self.ecn_hold = true;
                    self.rto_at = now + self.rtt.rto();
                }
            }
            EcnResponse::Ns2 => {
                // tcp.cc, TcpAgent::ecn: a second echo at one segment or less backs off.
                if at_one_segment && self.ecn_backoff {
                    self.rtt.back_off();
                }
                self.ecn_backoff = at_one_segment;
                // slowdown(CLOSE_CWND_HALF | CLOSE_SSTHRESH_HALF) with precision_reduce_ (the
                // default): cwnd_ = windowd() / 2, windowd() = min(cwnd_, wnd_), fractions
                // kept; ssthresh_ = int(cwnd_) segments, at least 2.
                let half = self.w.cwnd.min(self.peer_wnd) / 2;
                self.cc.on_congestion_event(&mut self.w, Signal::Ecn, flight, now);
                self.w.cwnd = half;
                self.w.ssthresh = whole_segments(half, mss);
            }
        }
        self.ecn_recover = self.snd_max;
        self.last_reduction = Reduction::Ecn;
        self.ecn.window_reduced(true);
        self.stats.ecn_reductions += 1;
    }

    /// State changes when our FIN has been acknowledged.
    fn on_fin_acked(&mut self, ev: &mut TcpEvents) {
        let fin_acked = self.fin_queued && self.snd_una == self.app_end + 1;
        if !fin_acked {
            return;
        }
        self.state = match self.state {
            TcpState::FinWait1 => TcpState::FinWait2,
            TcpState::Closing => TcpState::TimeWait,
            TcpState::LastAck => TcpState::Closed,
            s => s,
        };
        if matches!(self.state, TcpState::TimeWait | TcpState::Closed) {
            ev.closed = true;
        }
    }

    fn process_data(&mut self, pkt: &Packet, ctx: &mut SegmentCtx, ev: &mut TcpEvents) {
        let len = pkt.payload as u64;
        let fin = pkt.has(flags::FIN);
        if len == 0 && !fin {
            return; // a pure ACK
        }
        self.stats.bytes_received += len;
        if pkt.kind == PacketKind::Retx {
            self.stats.retx_bytes_received += len;
        }
        let linux = ctx.params.delayed_ack_policy == DelayedAckPolicy::Linux;
        // RFC 3168 6.1.3: CWR stops the echo, CE (re)starts it. DCTCP's CE state changes below,
        // with new data only.
        // With AccECN the segment was counted on arrival, CWR is part of the ACE field, and
        // the change-triggered ACK replaces Linux's quick ACKs at a first mark.
        let accecn = self.ecn.accecn();
        let exact_echo = !accecn && ctx.params.cc.echo_mode() == EchoMode::Dctcp;
        let mut demanding_cwr = if exact_echo || accecn { accecn } else { self.ecn.on_segment(pkt) };
        if pkt.has(flags::CWR) && !accecn {
            // Linux (tcp_ecn_accept_cwr): a data segment with CWR is acknowledged at once, the
            // sender's window may be tiny.
            if linux && len > 0 && self.ecn.negotiated {
                self.lx.ack_now_once = true;
            }
        }
        if pkt.ecn == Ecn::Ce {
            self.stats.ce_received += 1;
        }
        let seq = pkt.seq;
        let end = seq + len;
        if fin {
            self.peer_fin = Some(end);
        }
        let seg_end = end + fin as u64;
        if seg_end <= self.rcv_nxt {
            self.ack_now = true; // a duplicate: re-acknowledge at once
            if self.sack_ok && end > seq {
                self.sack_rx.on_duplicate(seq, end); // RFC 2883
            }
            if linux {
                // tcp_data_queue: "A retransmit ... Force an immediate ack".
                self.linux_enter_quickack(ctx, LINUX_MAX_QUICKACKS);
            }
            return;
        }
        if exact_echo && len > 0 {
            if self.ecn.ce_state_changes(pkt) {
                // RFC 8257 3.2: the CE state changes: what arrived before this segment and is
                // not yet acknowledged is acknowledged now, with the old ECE (Linux's
                // `dctcp_ece_ack_update`, when its delayed-ACK timer is pending).
                if self.segs_unacked > 0 {
                    self.emit(ctx, self.snd_nxt, 0, flags::ACK, PacketKind::Ack, Ecn::NotEct);
                }
                if linux {
                    // Linux also acknowledges the segment that changed it at once
                    // (ICSK_ACK_NOW); the RFC lets it wait for the delayed-ACK rule.
                    self.lx.ack_now_once = true;
                }
            }
            demanding_cwr = self.ecn.on_segment(pkt);
        }
        if linux && self.ecn.negotiated && len > 0 {
            self.linux_check_ce(pkt.ecn, demanding_cwr, ctx);
        }
        if seq > self.rcv_nxt {
            // Out of order: keep it and send an immediate duplicate ACK (RFC 5681 4.2).
            if end > seq {
                let new = insert_range(&mut self.ooo, seq, end);
                if self.sack_ok {
                    if new == 0 {
                        self.sack_rx.on_duplicate(seq, end);
                    }
                    let i = self.ooo.partition_point(|r| r.1 < seq);
                    self.sack_rx.on_out_of_order(self.ooo[i].0);
                }
            }
            self.ack_now = true;
            return;
        }
        let filled_gap = !self.ooo.is_empty();
        self.bytes_unacked += end.saturating_sub(self.rcv_nxt);
        self.rcv_nxt = self.rcv_nxt.max(end);
        while let Some(&(s, e)) = self.ooo.first() {
            if s > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(e);
            self.ooo.remove(0);
        }
        ev.delivered = true;
        if self.peer_fin == Some(self.rcv_nxt) && !self.fin_consumed {
            self.rcv_nxt += 1;
            self.fin_consumed = true;
            self.ack_now = true;
            ev.peer_closed = true;
            self.state = match self.state {
                TcpState::Established => TcpState::CloseWait,
                TcpState::FinWait1 => TcpState::Closing,
                TcpState::FinWait2 => TcpState::TimeWait,
                s => s,
            };
            if self.state == TcpState::TimeWait {
                ev.closed = true;
            }
        } else if filled_gap {
            self.ack_now = true; // a segment that fills a gap is acknowledged at once
        } else if linux {
            self.linux_data_recv(ctx);
        } else {
            self.segs_unacked += 1;
            if self.segs_unacked >= ctx.params.ack_every_segments {
                self.ack_now = true;
            } else if self.delack_at == OFF {
                self.delack_at = ctx.now + ctx.params.delayed_ack;
            }
        }
    }

    /// Linux's `tcp_incr_quickack`: at least min(max, rcv_wnd / (2 rcv_mss), or 2 when that is
    /// 0) quick ACKs.
    fn linux_incr_quickack(&mut self, ctx: &SegmentCtx, max: u32) {
        let mut q = self.rcv_wnd / (2 * ctx.params.mss_bytes.max(1));
        if q == 0 {
            q = 2;
        }
        self.lx.quick = self.lx.quick.max(q.min(max));
    }

    /// Linux's `tcp_enter_quickack_mode`: quick ACKs, and the ACK timeout back to its minimum.
    fn linux_enter_quickack(&mut self, ctx: &SegmentCtx, max: u32) {
        self.linux_incr_quickack(ctx, max);
        self.lx.ato = ctx.params.delayed_ack;
    }

    /// Linux's `__tcp_ecn_check_ce` (4.18 and later): two quick ACKs at the first CE mark (the
    /// sender may have a tiny window) and at a Not-ECT segment after ECT ones (most likely a
    /// retransmission).
    fn linux_check_ce(&mut self, ecn: Ecn, demanding_cwr: bool, ctx: &SegmentCtx) {
        match ecn {
            Ecn::NotEct => {
                if self.lx.ecn_seen {
                    self.linux_enter_quickack(ctx, 2);
                }
            }
            Ecn::Ce => {
                if !demanding_cwr {
                    self.linux_enter_quickack(ctx, 2);
                }
                self.lx.ecn_seen = true;
            }
            _ => self.lx.ecn_seen = true,
        }
    }

    /// In-order data under Linux's policy: `tcp_event_data_recv` (the ACK timeout follows the
    /// arrival gaps), then `__tcp_ack_snd_check` and `tcp_send_delayed_ack`.
    fn linux_data_recv(&mut self, ctx: &SegmentCtx) {
        let now = ctx.now;
        let ato_min = ctx.params.delayed_ack;
        let rto = self.rtt.rto_unbacked();
        self.segs_unacked += 1;
        if self.lx.ato == 0 {
            // The first data segment: quick ACKs while the sender's slow start begins.
            self.linux_incr_quickack(ctx, LINUX_MAX_QUICKACKS);
            self.lx.ato = ato_min;
        } else {
            let m = now - self.lx.lrcvtime;
            if m <= ato_min / 2 {
                self.lx.ato = self.lx.ato / 2 + ato_min / 2;
            } else if m < self.lx.ato {
                self.lx.ato = (self.lx.ato / 2 + m).min(rto);
            } else if m > rto {
                // A long gap: the sender probably restarted from a small window.
                self.linux_incr_quickack(ctx, LINUX_MAX_QUICKACKS);
            }
        }
        self.lx.lrcvtime = now;
        // More than one full segment unacknowledged, quick-ACK mode, or a one-time demand.
        if self.bytes_unacked > ctx.params.mss_bytes as u64 || self.lx.quick > 0 || self.lx.ack_now_once {
            self.ack_now = true;
            return;
        }
        let mut ato = self.lx.ato;
        if ato > ato_min {
            // tcp_send_delayed_ack: at most HZ / 2 and, once there is an RTT estimate, at most
            // srtt (but not below TCP_DELACK_MIN).
            let mut max_ato: SimTime = 500_000_000;
            if let Some(srtt) = self.rtt.srtt() {
                max_ato = max_ato.min(srtt.max(ato_min));
            }
            ato = ato.min(max_ato);
        }
        ato = ato.min(LINUX_DELACK_MAX);
        let mut timeout = now + ato;
        if self.delack_at != OFF {
            // A timer about to fire: acknowledge now; otherwise keep the earlier deadline.
            if self.delack_at <= now + ato / 4 {
                self.ack_now = true;
                return;
            }
            timeout = timeout.min(self.delack_at);
        }
        self.delack_at = timeout;
    }

    // ----- timers -----

    /// The retransmission timer expired (the caller checked `rto_at <= now`).
    pub fn on_rto(&mut self, ctx: &mut SegmentCtx) -> TcpEvents {
        let mut ev = TcpEvents::default();
        if self.reo_at <= ctx.now {
            // RACK's reordering timer (RFC 8985 6.3): the segments whose time is up are lost.
            self.reo_at = OFF;
            let lost = self.rack_ack(ctx.now, self.snd_una, false, false, ctx);
            if lost && !self.in_recovery && self.may_fast_retransmit(self.snd_una, ctx.params) {
                self.enter_fast_recovery(ctx, 0); // a timer delivers nothing
            }
            return ev;
        }
        if self.pto_at <= ctx.now {
            self.pto_at = OFF;
            self.send_probe(ctx);
            return ev;
        }
        self.rto_at = OFF;
        self.pto_at = OFF;
        self.reo_at = OFF;
        self.tlp.end_seq = None;
        match self.state {
            TcpState::SynSent | TcpState::SynReceived => {
                if self.stats.handshake_retx >= ctx.params.syn_retries {
                    self.state = TcpState::Closed;
                    ev.aborted = true;
                    return ev;
                }
                self.stats.handshake_retx += 1;
                self.rtt.back_off();
                self.rtt_timing = false;
                self.send_syn(ctx);
            }
            // The wait after an echo at one segment is over: new data may go (no loss).
            _ if self.ecn_hold && self.snd_una == self.snd_max => {
                self.ecn_hold = false;
                if ctx.params.ecn_response == EcnResponse::Ns2 {
                    // ns-2 (tcp-full.cc, timeout_action): the wait is a timeout: one segment,
                    // ssthresh kept. With nothing outstanding the timer is not backed off
                    // (reset_rtx_timer with restart_bugfix_, ns-2's default).
                    self.stats.rtos += 1;
                    self.w.cwnd = self.w.mss;
                }
            }
            _ if self.snd_una < self.snd_max => {
                self.ecn_hold = false;
                // RFC 6298 5.4-5.6 and RFC 5681 eq. 4: collapse to one segment, back off, and
                // resend from snd_una (go-back-N); RFC 6582 step 6: recover = highest sent.
                self.stats.rtos += 1;
                let ssthresh = self.w.ssthresh;
                // Linux (tcp_enter_loss) reduces ssthresh at most once per window: a timeout
                // before the ACK passes the data outstanding at the last fast retransmit or ECN
                // reduction (`ecn_recover`) keeps that reduction's ssthresh.
                let keep = ctx.params.timeout_ssthresh == TimeoutSsthresh::OncePerWindow
                    && matches!(self.last_reduction, Reduction::FastRetransmit | Reduction::Ecn)
                    && self.snd_una < self.ecn_recover;
                self.reduce_for_loss(ctx, self.snd_max - self.snd_una, true);
                if self.last_reduction == Reduction::Ecn && ctx.params.ecn_response == EcnResponse::Ns2 {
                    // ns-2's response: after an ECN reduction a timeout does not halve ssthresh
                    // again, and the last reduction stays the echo's (timeout_action).
                    self.w.ssthresh = ssthresh;
                } else {
                    if keep {
                        self.w.ssthresh = ssthresh;
                    }
                    self.last_reduction = Reduction::Timeout;
                }
                self.recover = self.snd_max - 1;
                self.ecn_recover = self.ecn_recover.max(self.snd_max);
                self.ecn.window_reduced(false);
                self.in_recovery = false;
                self.prr_sndcnt = 0;
                if self.rack_on {
                    // RFC 8985 6.3: everything not SACKed is lost and is resent from snd_una.
                    self.rack.mark_all_lost();
                    self.board.clear_lost();
                }
                self.dupacks = 0;
                self.snd_nxt = self.snd_una;
                self.rtt.back_off();
                self.rtt_timing = false;
                // Go-back-N resends the head; Linux's timer sends it at once, paced or not.
                self.retx_held = false;
                self.pace_exempt = true;
            }
            _ => {}
        }
        ev
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack(&mut self) {
        self.delack_at = OFF;
        if self.segs_unacked > 0 {
            self.ack_now = true;
            if self.lx.ato > 0 {
                // Linux (tcp_delack_timer_handler): the delayed ACK was missed, inflate ato.
                self.lx.ato = (self.lx.ato * 2).min(self.rtt.rto_unbacked());
            }
        }
    }

    /// The pacing timer expired (the caller checked `pace_at <= now`): what pacing held back
    /// goes out on the flush that follows (Linux's `tcp_pace_kick`).
    pub fn on_pace(&mut self) {
        self.pace_at = OFF;
    }

    // ----- pacing -----

    /// Linux's `tcp_update_pacing_rate` (net/ipv4/tcp_input.c): rate = ratio * max(cwnd,
    /// packets_out) * mss / srtt, with `tcp_pacing_ss_ratio` while cwnd < ssthresh / 2 and
    /// `tcp_pacing_ca_ratio` otherwise. Windows are in bytes here (Linux counts segments).
    /// Without an RTT sample Linux does not divide by srtt, a rate so high that nothing waits:
    /// here no rate at all.
    fn update_pacing_rate(&mut self, p: &TcpParams) {
        if !p.pacing {
            return;
        }
        let Some(srtt) = self.rtt.srtt() else {
            self.pace_den = 0;
            return;
        };
        let ratio = if self.w.cwnd < self.w.ssthresh / 2 { p.pacing_ss_ratio_percent } else { p.pacing_ca_ratio_percent };
        let w = self.w.cwnd.max(self.snd_max - self.snd_una).max(1);
        self.pace_num = srtt.saturating_mul(100);
        self.pace_den = ratio as u64 * w;
    }

    /// Whether pacing holds the next segment at `now`; if so, asks to be woken at its time
    /// (Linux's `tcp_pacing_check`, in `tcp_write_xmit` and `tcp_xmit_retransmit_queue`).
    fn pacing_holds(&mut self, now: SimTime, p: &TcpParams) -> bool {
        if !p.pacing || self.pace_next <= now || self.pace_exempt {
            return false;
        }
        self.pace_at = self.pace_next;
        true
    }

    /// Advances the pacing time after a segment of `len` payload bytes left at `now`
    /// (Linux's EDT model: `__tcp_transmit_skb` stamps the segment max(`tcp_wstamp_ns`, now),
    /// then `tcp_update_skb_after_send` adds len / rate, less up to half of it as credit for
    /// the time the segment was late, and nothing for the first ten data segments). The `fq`
    /// qdisc releases a segment at its stamp; TCP's internal pacing sends when the stamp is
    /// reached: the departures are the same.
    fn pace_after_send(&mut self, now: SimTime, len: u64, p: &TcpParams) {
        if !p.pacing {
            return;
        }
        self.pace_exempt = false;
        let prior = self.pace_next;
        self.pace_next = prior.max(now);
        if len == 0 {
            return; // a FIN alone: no data segment, no length
        }
        self.segs_out += 1;
        if self.pace_den > 0 && self.segs_out >= 10 {
            let len_ns = (len as u128 * self.pace_num as u128 / self.pace_den as u128).min(u64::MAX as u128) as u64;
            let credit = self.pace_next - prior;
            self.pace_next = self.pace_next.saturating_add(len_ns - (len_ns / 2).min(credit));
        }
    }

    // ----- sending -----

    /// Sends what the windows allow, then any ACK still owed.
    pub fn flush(&mut self, ctx: &mut SegmentCtx) {
        if self.ecn.handshake_ack_owed() {
            // RFC 9768 3.2.2.1: the SYN-ACK's IP-ECN field goes back on a pure ACK before any
            // data (the request then follows on its own segment).
            let ecn = self.pure_ack_codepoint(ctx.params);
            self.emit(ctx, self.snd_nxt, 0, flags::ACK, PacketKind::Ack, ecn);
        }
        if matches!(
            self.state,
            TcpState::Established
                | TcpState::CloseWait
                | TcpState::FinWait1
                | TcpState::Closing
                | TcpState::LastAck
        ) && !self.new_data_held
        {
            self.send_data(ctx);
        }
        self.new_data_held = false;
        if self.ack_now {
            let ecn = self.pure_ack_codepoint(ctx.params);
            self.emit(ctx, self.snd_nxt, 0, flags::ACK, PacketKind::Ack, ecn);
        }
        if self.rack_on && (self.pto_rearm || self.in_recovery || self.snd_una >= self.snd_max) {
            self.arm_probe_timer(ctx.now);
        }
    }

    /// The codepoint of a pure ACK: Not-ECT (RFC 3168 6.1.4), ECT on AccECN connections with
    /// ECN++'s `ect_pure_acks` (only AccECN counts marks on pure ACKs).
    #[inline]
    fn pure_ack_codepoint(&self, p: &TcpParams) -> Ecn {
        if p.ect_pure_acks && self.ecn.accecn() {
            self.ecn.data_codepoint()
        } else {
            Ecn::NotEct
        }
    }

    fn send_data(&mut self, ctx: &mut SegmentCtx) {
        if self.pace_at <= ctx.now {
            self.pace_at = OFF; // due: this call sends what it held
        }
        if self.retx_held {
            if self.pacing_holds(ctx.now, ctx.params) {
                return; // the held retransmission goes first
            }
            self.retx_held = false;
            self.retransmit_head(ctx);
        }
        if self.in_recovery && self.sack_ok {
            self.send_in_sack_recovery(ctx);
            return;
        }
        let mss = self.w.mss;
        // Limited transmit (RFC 3042): on the first and second duplicate ACK outside recovery,
        // one new segment each beyond cwnd (at most cwnd + 2 SMSS outstanding), cwnd unchanged.
        let limited = if ctx.params.limited_transmit && !self.in_recovery && self.dupacks <= 2 {
            self.dupacks as u64 * mss
        } else {
            0
        };
        loop {
            let wnd = self.w.cwnd.min(self.peer_wnd);
            let limit = self.snd_una + wnd;
            // New data only, and only as far as the receiver's window allows.
            let limited_limit = if self.snd_nxt == self.snd_max { (self.snd_una + self.w.cwnd + limited).min(self.snd_una + self.peer_wnd) } else { limit };
            let in_flight = self.snd_nxt > self.snd_una;
            if self.ecn_hold && self.snd_nxt >= self.snd_max {
                break; // RFC 3168 6.1.2: no new data until the timer expires
            }
            if self.sack_ok && self.snd_nxt < self.snd_max {
                // Resending after a timeout: skip what the receiver has SACKed (RFC 6675 5.1).
                if let Some(r) = self.board.sacked_at(self.snd_nxt) {
                    self.snd_nxt = r.1;
                    continue;
                }
            }
            if self.snd_nxt < self.app_end {
                let mut len = mss.min(self.app_end - self.snd_nxt);
                if self.sack_ok && self.snd_nxt < self.snd_max {
                    len = self.board.hole_len(self.snd_nxt, self.snd_max, mss).min(len);
                }
                let mut beyond_cwnd = false;
                if self.snd_nxt + len > limit {
                    if self.snd_nxt + len <= limited_limit {
                        beyond_cwnd = true;
                    } else if in_flight || wnd == 0 {
                        break;
                    } else {
                        // With nothing in flight, send what the window allows rather than stall.
                        len = wnd;
                    }
                }
                // Pacing is checked once the windows allow the segment (Linux checks it first,
                // but a wake-up for a segment the windows hold would send nothing).
                if self.pacing_holds(ctx.now, ctx.params) {
                    break;
                }
                if beyond_cwnd {
                    self.limited_sent += len;
                }
                let retx = self.snd_nxt < self.snd_max;
                self.send_segment(ctx, self.snd_nxt, len, retx);
                self.snd_nxt += len;
            } else if self.fin_queued && self.snd_nxt == self.app_end {
                if in_flight && self.snd_nxt + 1 > limit {
                    break;
                }
                if self.pacing_holds(ctx.now, ctx.params) {
                    break;
                }
                self.send_fin(ctx);
                self.snd_nxt += 1;
            } else {
                break;
            }
            self.snd_max = self.snd_max.max(self.snd_nxt);
        }
    }

    /// Resends the first unacknowledged segment (fast retransmit, partial ACK).
    /// An ACK of new data without an echo grows the window (slow start or congestion
    /// avoidance), unless it is already at the peer's window (RFC 7661's point, above).
    fn open_window(&mut self, acked: u64, ece: bool, now: SimTime) {
        if !ece && self.w.cwnd < self.peer_wnd {
            let rtt = RttInfo { latest: self.ack_rtt, snd_una: self.snd_una, snd_nxt: self.snd_max, ..self.rtt.info() };
            self.cc.on_ack(&mut self.w, acked, rtt, now);
        }
    }

    fn retransmit_head(&mut self, ctx: &mut SegmentCtx) {
        self.rtt_timing = false;
        if self.pacing_holds(ctx.now, ctx.params) {
            // Linux's `tcp_xmit_retransmit_queue` checks pacing too: it goes when allowed.
            self.retx_held = true;
            return;
        }
        if self.snd_una < self.app_end {
            let len = self.w.mss.min(self.app_end - self.snd_una);
            self.send_segment(ctx, self.snd_una, len, true);
        } else if self.fin_queued && self.snd_una == self.app_end {
            self.send_fin(ctx);
        }
    }

    fn send_segment(&mut self, ctx: &mut SegmentCtx, seq: u64, len: u64, retx: bool) {
        let mut f = flags::ACK;
        let (kind, ecn) = if retx {
            // RFC 3168 6.1.5: retransmissions are not ECN-capable (unless the stack's choice,
            // `ect_retransmissions`, is ns-2's and ns-3's: ECT like new data).
            self.stats.retx_bytes += len;
            self.rtt_timing = false;
            if self.track_sent {
                // Mark the segments this one covers: an ACK of them gives no sample.
                let first = self.sent_times.partition_point(|g| g.end <= seq);
                for g in self.sent_times.range_mut(first..) {
                    if g.start >= seq + len {
                        break;
                    }
                    g.retx = true;
                }
            }
            let ect = self.ecn.negotiated && ctx.params.ect_retransmissions;
            (PacketKind::Retx, if ect { self.ecn.data_codepoint() } else { Ecn::NotEct })
        } else {
            if self.snd_una == self.snd_max && self.last_data_at > 0 && ctx.now > self.last_data_at {
                // New data after an idle period (nothing in flight).
                let idle = ctx.now - self.last_data_at;
                if ctx.params.restart_after_idle && idle > self.rtt.rto() {
                    // RFC 5681 section 4.1: the restart window, min(IW, cwnd).
                    self.w.cwnd = self.w.cwnd.min(ctx.params.initial_window_bytes());
                }
                self.cc.on_idle_restart(idle);
            }
            f |= self.ecn.take_cwr();
            if self.track_sent {
                self.sent_times.push_back(SentSeg { start: seq, end: seq + len, sent: ctx.now, retx: false });
            }
            if ctx.params.rto_estimator != RtoEstimator::Linux && !self.rtt_timing {
                self.rtt_timing = true;
                self.rtt_seq = seq + len;
                self.rtt_sent = ctx.now;
            }
            (PacketKind::Data, self.ecn.data_codepoint())
        };
        self.stats.bytes_sent += len;
        self.last_data_at = ctx.now;
        if self.rack_on {
            self.rack.on_send(seq, seq + len, ctx.now, retx);
            self.pto_rearm |= !retx;
        }
        self.pace_after_send(ctx.now, len, ctx.params);
        self.emit(ctx, seq, len as u32, f, kind, ecn);
        if self.rto_at == OFF {
            self.rto_at = ctx.now + self.rtt.rto();
        }
    }

    fn send_fin(&mut self, ctx: &mut SegmentCtx) {
        if self.rack_on {
            let again = self.snd_max > self.app_end;
            self.rack.on_send(self.app_end, self.app_end + 1, ctx.now, again);
            self.pto_rearm |= !again;
        }
        self.pace_after_send(ctx.now, 0, ctx.params);
        // ECN++: an ECN-capable FIN with `ect_fins`, else Not-ECT (RFC 3168 6.1.4).
        let ecn = if ctx.params.ect_fins { self.ecn.data_codepoint() } else { Ecn::NotEct };
        self.emit(ctx, self.app_end, 0, flags::ACK | flags::FIN, PacketKind::Fin, ecn);
        if self.rto_at == OFF {
            self.rto_at = ctx.now + self.rtt.rto();
        }
    }

    /// The SYN (client) or SYN-ACK (server), first or again. Not ECN-capable (RFC 3168 6.1.1)
    /// unless ECN+ is on.
    fn send_syn(&mut self, ctx: &mut SegmentCtx) {
        let (f, kind) = match self.role {
            Role::Client => {
                let ecn_setup = Feedback::syn_flags(ctx.params.ecn, ctx.params.ecn_feedback == EcnFeedback::Accecn);
                let sack = if ctx.params.sack { flags::SACK_PERM } else { 0 };
                (flags::SYN | ecn_setup | sack, PacketKind::Syn)
            }
            Role::Server => {
                let ecn_setup = self.ecn.synack_flags();
                let sack = if self.sack_ok { flags::SACK_PERM } else { 0 };
                (flags::SYN | flags::ACK | ecn_setup | sack, PacketKind::SynAck)
            }
        };
        if self.stats.handshake_retx == 0 {
            self.rtt_timing = true;
            self.rtt_seq = 1;
            self.rtt_sent = ctx.now;
            self.stats.first_syn_at = ctx.now;
        }
        self.stats.last_syn_at = ctx.now;
        // ECN++ (the generalized-ECN draft): a client that asks for AccECN may send its first
        // SYN ECN-capable (a retransmitted one goes Not-ECT, in case ECT SYNs are what is lost).
        let p = ctx.params;
        if kind == PacketKind::Syn && p.ect_syn && p.ecn && p.ecn_feedback == EcnFeedback::Accecn && self.stats.handshake_retx == 0 {
            self.emit(ctx, 0, 0, f, kind, p.ect_codepoint);
            self.rto_at = ctx.now + self.rtt.rto();
            return;
        }
        // ECN+ (seed 000, RFC 5562): the SYN-ACK of an ECN-setup connection is ECT(0); RFC 5562
        // sends a retransmitted one Not-ECT.
        let ect = kind == PacketKind::SynAck
            && self.ecn.negotiated
            && match ctx.params.ecn_plus {
                EcnPlus::Off => false,
                EcnPlus::Seed => true,
                EcnPlus::Rfc5562 => self.stats.handshake_retx == 0,
            };
        self.emit(ctx, 0, 0, f, kind, if ect { Ecn::Ect0 } else { Ecn::NotEct });
        self.rto_at = ctx.now + self.rtt.rto();
    }

    /// On an AccECN connection: the ACE field of an ACK (the handshake encoding on the client's
    /// pure ACK of the SYN-ACK) and the AccECN option it carries, if any (RFC 9768 3.2.2 and
    /// 3.2.3); the SYN-ACK's option. Kept out of `emit`'s path for other connections.
    #[inline(never)]
    fn accecn_flags_and_option(&mut self, p: &TcpParams, payload: u32, mut f: u16, sack_bytes: u32) -> (u16, Option<AccEcnOption>) {
        let opt = if f & (flags::ACK | flags::SYN) == flags::ACK {
            let pure = payload == 0 && f & flags::FIN == 0 && sack_bytes == 0;
            f |= self.ecn.take_ack_flags(pure);
            self.ecn.take_option(p.accecn_option, sack_bytes)
        } else if f & flags::ACK != 0 {
            self.ecn.synack_option(p.accecn_option)
        } else {
            None
        };
        (f, opt)
    }

    fn emit(&mut self, ctx: &mut SegmentCtx, seq: u64, payload: u32, mut f: u16, kind: PacketKind, ecn: Ecn) {
        let sack = self.sack_ok && f & flags::ACK != 0 && (!self.ooo.is_empty() || self.sack_rx.has_dsack());
        let mut opt = None;
        if self.ecn.accecn() {
            let sack_bytes = if sack { self.sack_rx.blocks(&self.ooo).option_bytes() } else { 0 };
            (f, opt) = self.accecn_flags_and_option(ctx.params, payload, f, sack_bytes);
        } else if f & flags::ACK != 0 {
            f |= self.ecn.echo_flag();
        }
        let p = Packet {
            flow: self.flow,
            flow_gen: self.flow_gen,
            seq,
            ack: self.rcv_nxt,
            payload,
            size: payload + ctx.params.header_bytes + opt.map_or(0, |o| o.option_bytes()),
            wnd: self.rcv_wnd,
            flags: f,
            ecn,
            kind,
            dir: self.dir,
            hop: 0,
            enqueued_at: 0,
        };
        let id = if sack {
            let blocks = self.sack_rx.blocks(&self.ooo);
            ctx.pool.alloc_with_sack(Packet { size: p.size + blocks.option_bytes(), ..p }, &blocks)
        } else {
            ctx.pool.alloc(p)
        };
        if let Some(o) = opt {
            ctx.pool.set_accecn(id, o);
        }
        ctx.out.push(id);
        if f & flags::ACK != 0 {
            // Linux (tcp_event_ack_sent, tcp_dec_quickack_mode): an ACK that was owed uses up
            // one quick ACK; the last one deflates ato to its minimum.
            if self.lx.quick > 0 && (self.ack_now || self.segs_unacked > 0) {
                self.lx.quick -= 1;
                if self.lx.quick == 0 {
                    self.lx.ato = ctx.params.delayed_ack;
                }
            }
            self.lx.ack_now_once = false;
            self.bytes_unacked = 0;
            // Every segment carries the cumulative ACK, so nothing is owed any more.
            self.segs_unacked = 0;
            self.delack_at = OFF;
            self.ack_now = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::{NS_PER_MS, NS_PER_S};
    use crate::tcp::accecn;
    use crate::tcp::params::AccEcnOptionMode;

    fn params() -> TcpParams {
        TcpParams {
            mss_bytes: 1000,
            header_bytes: 40,
            initial_rto: 3 * NS_PER_S,
            min_rto: NS_PER_S,
            max_rto: 60 * NS_PER_S,
            clock_granularity: 0,
            initial_window_segments: 2,
            delayed_ack: 200 * NS_PER_MS,
            ack_every_segments: 2,
            syn_retries: 6,
            cc: CcKind::NewReno { beta: 0.5, beta_ecn: 0.5 },
            iw_one_after_syn_loss: true,
            abc: false,
            limited_transmit: false,
            restart_after_idle: false,
            ect_retransmissions: false,
            ect_syn: false,
            ect_pure_acks: false,
            ect_fins: false,
            ect_codepoint: Ecn::Ect0,
            sack: false,
            prr: false,
            rack_tlp: false,
            pacing: false,
            pacing_ss_ratio_percent: 200,
            pacing_ca_ratio_percent: 120,
            hystart: HystartKind::Off,
            rto_estimator: RtoEstimator::Rfc6298,
            delayed_ack_policy: DelayedAckPolicy::Rfc5681,
            ecn_min_window: EcnMinWindow::Rfc3168Timer,
            ecn: false,
            ecn_plus: EcnPlus::Off,
            ecn_feedback: EcnFeedback::Rfc3168,
            accecn_option: AccEcnOptionMode::Rfc9768,
            ecn_response: EcnResponse::Rfc3168,
            rto_backoff_end: RtoBackoffEnd::RttSample,
            loss_response: LossResponse::Rfc5681,
            timeout_ssthresh: TimeoutSsthresh::HalfFlightSize,
        }
    }

    /// A segment on the scripted wire: the packet and its SACK blocks.
    #[derive(Clone, Copy, Debug)]
    struct Seg {
        pkt: Packet,
        sack: SackBlocks,
        opt: Option<AccEcnOption>,
    }

    impl std::ops::Deref for Seg {
        type Target = Packet;
        fn deref(&self) -> &Packet {
            &self.pkt
        }
    }

    /// Two endpoints wired back to back with a scripted network in between.
    struct Pair {
        pool: PacketPool,
        p: TcpParams,
        c: Endpoint,
        s: Endpoint,
        now: SimTime,
    }

    impl Pair {
        fn new(p: TcpParams) -> Pair {
            let c = Endpoint::new(Role::Client, 0, 0, 64_000, &p);
            let s = Endpoint::new(Role::Server, 0, 0, 64_000, &p);
            Pair { pool: PacketPool::new(), p, c, s, now: 0 }
        }
        /// Runs `f` on one end and returns the packets it sent.
        fn on(&mut self, server: bool, f: impl FnOnce(&mut Endpoint, &mut SegmentCtx)) -> Vec<Seg> {
            let mut out = Vec::new();
            let mut ctx = SegmentCtx { now: self.now, pool: &mut self.pool, out: &mut out, params: &self.p };
            let e = if server { &mut self.s } else { &mut self.c };
            f(e, &mut ctx);
            e.flush(&mut ctx);
            out.iter().map(|&id| Seg { pkt: *self.pool.get(id), sack: self.pool.sack(id), opt: self.pool.accecn(id) }).collect()
        }
        /// Delivers a packet without SACK blocks.
        fn deliver(&mut self, to_server: bool, pkt: &Packet) -> Vec<Seg> {
            self.deliver_seg(to_server, &Seg { pkt: *pkt, sack: SackBlocks::EMPTY, opt: None })
        }
        fn deliver_seg(&mut self, to_server: bool, seg: &Seg) -> Vec<Seg> {
            self.on(to_server, |e, ctx| {
                e.on_segment_with(&seg.pkt, &seg.sack, seg.opt.as_ref(), ctx);
            })
        }
        /// Handshake without loss; returns the client's first segment after it.
        fn establish(&mut self) {
            let syn = self.on(false, |e, ctx| e.connect(ctx));
            let synack = self.deliver(true, &syn[0]);
            let ack = self.deliver(false, &synack[0]);
            self.deliver(true, &ack[0]);
            assert_eq!(self.c.state, TcpState::Established);
            assert_eq!(self.s.state, TcpState::Established);
        }
    }

    #[test]
    fn handshake_negotiates_ecn_only_when_both_ends_want_it() {
        for (ecn, want) in [(false, false), (true, true)] {
            let mut pair = Pair::new(TcpParams { ecn, ..params() });
            let syn = pair.on(false, |e, ctx| e.connect(ctx));
            assert_eq!(syn[0].kind, PacketKind::Syn);
            assert_eq!(syn[0].has(flags::ECE) && syn[0].has(flags::CWR), ecn);
            let synack = pair.deliver(true, &syn[0]);
            assert_eq!(synack[0].kind, PacketKind::SynAck);
            assert_eq!(synack[0].ecn, Ecn::NotEct);
            pair.deliver(false, &synack[0]);
            assert_eq!(pair.c.ecn_negotiated(), want);
            assert_eq!(pair.s.ecn_negotiated(), want);
        }
    }

    #[test]
    fn request_rides_on_the_handshake_ack() {
        let mut pair = Pair::new(params());
        let syn = pair.on(false, |e, ctx| e.connect(ctx));
        let synack = pair.deliver(true, &syn[0]);
        let out = pair.on(false, |e, ctx| {
            e.on_segment(&synack[0], &SackBlocks::EMPTY, ctx);
            e.write(300);
        });
        assert_eq!(out.len(), 1, "one segment: the request with the ACK piggybacked");
        assert_eq!((out[0].kind, out[0].payload, out[0].ack), (PacketKind::Data, 300, 1));
    }

    #[test]
    fn lost_syn_is_retransmitted_after_initial_rto_and_iw_drops_to_one() {
        let mut pair = Pair::new(params());
        pair.on(false, |e, ctx| e.connect(ctx));
        assert_eq!(pair.c.rto_at, 3 * NS_PER_S);
        pair.now = 3 * NS_PER_S;
        let syn2 = pair.on(false, |e, ctx| {
            e.on_rto(ctx);
        });
        assert_eq!(syn2[0].kind, PacketKind::Syn);
        assert_eq!(pair.c.rto_at, 9 * NS_PER_S, "backed off to 6 s");
        let synack = pair.deliver(true, &syn2[0]);
        pair.deliver(false, &synack[0]);
        assert_eq!(pair.c.window().cwnd, 1000, "RFC 5681: IW of one segment after SYN loss");
        assert_eq!(pair.s.window().cwnd, 2000);
    }

    #[test]
    fn handshake_gives_up_after_syn_retries() {
        let mut pair = Pair::new(TcpParams { syn_retries: 2, ..params() });
        pair.on(false, |e, ctx| e.connect(ctx));
        let mut aborted = false;
        for _ in 0..3 {
            pair.now = pair.c.rto_at;
            let mut ev = TcpEvents::default();
            pair.on(false, |e, ctx| ev = e.on_rto(ctx));
            aborted = ev.aborted;
        }
        assert!(aborted);
        assert_eq!(pair.c.stats.handshake_retx, 2);
    }

    #[test]
    fn receiver_acks_every_second_segment_and_dupacks_out_of_order() {
        let mut pair = Pair::new(params());
        pair.establish();
        let seg = |seq: u64| data_to_client(seq, Ecn::NotEct, 0);
        assert!(pair.deliver(false, &seg(1)).is_empty(), "first segment: ACK delayed");
        assert_eq!(pair.c.delack_at, 200 * NS_PER_MS);
        let a = pair.deliver(false, &seg(1001));
        assert_eq!((a.len(), a[0].ack), (1, 2001), "second segment: ACK now");
        let d = pair.deliver(false, &seg(3001));
        assert_eq!(d[0].ack, 2001, "out of order: immediate duplicate ACK");
        let f = pair.deliver(false, &seg(2001));
        assert_eq!(f[0].ack, 4001, "gap filled: immediate ACK covering the buffered data");
        assert_eq!(pair.c.delivered_bytes(), 4000);
    }

    #[test]
    fn three_dupacks_fast_retransmit_and_partial_ack_retransmits_next_hole() {
        let mut pair = Pair::new(TcpParams { initial_window_segments: 10, ..params() });
        pair.establish();
        let sent = pair.on(true, |e, _| e.write(10_000));
        assert_eq!(sent.len(), 10);
        let ackp = |ack: u64| ack_to_server(ack, 0);
        // Segments 1 (seq 1) and 4 (seq 3001) are lost: the receiver acks 1 repeatedly.
        for _ in 0..2 {
            assert!(pair.deliver(true, &ackp(1)).is_empty());
        }
        let fr = pair.deliver(true, &ackp(1));
        assert_eq!((fr[0].kind, fr[0].seq), (PacketKind::Retx, 1), "fast retransmit");
        assert_eq!(pair.s.window().ssthresh, 5000);
        assert_eq!(pair.s.window().cwnd, 8000);
        assert_eq!(pair.s.stats.rtos, 0);
        // The retransmission fills the first hole: a partial ACK up to the second hole.
        let pa = pair.deliver(true, &ackp(3001));
        assert_eq!((pa[0].kind, pa[0].seq), (PacketKind::Retx, 3001), "partial ACK: next hole");
        // Full ACK: cwnd = min(ssthresh, FlightSize + SMSS) with nothing left in flight.
        pair.deliver(true, &ackp(10_001));
        assert_eq!(pair.s.window().cwnd, 2000);
        assert!(!pair.s.in_recovery);
    }

    #[test]
    fn per_ack_rtt_samples_come_from_the_newest_segment_acked_and_never_from_retransmissions() {
        // Without a slow-start exit no per-ACK sample is taken at all.
        let mut pair = Pair::new(TcpParams { initial_window_segments: 4, ..params() });
        pair.establish();
        pair.on(true, |e, _| e.write(4000));
        pair.now += 50 * NS_PER_MS;
        pair.deliver(true, &ack_to_server(2001, 0));
        assert_eq!((pair.s.ack_rtt, pair.s.sent_times.len()), (None, 0));

        let p = TcpParams { initial_window_segments: 4, hystart: HystartKind::Rfc9406, ..params() };
        let mut pair = Pair::new(p);
        pair.establish();
        pair.on(true, |e, _| e.write(2000)); // segments 1 and 2 at t = 0
        pair.now = 10 * NS_PER_MS;
        pair.on(true, |e, _| e.write(2000)); // segments 3 and 4 at 10 ms
        pair.now = 100 * NS_PER_MS;
        // Acknowledges segments 1-3: the newest, sent at 10 ms, gives 90 ms (the RFC 6298
        // estimator timed segment 1, sent at 0).
        pair.deliver(true, &ack_to_server(3001, 0));
        assert_eq!(pair.s.ack_rtt, Some(90 * NS_PER_MS));
        // Segment 4 is lost, then retransmitted after three duplicate ACKs: the ACK that covers
        // it gives no sample (Karn), a later one of new data does.
        for _ in 0..3 {
            pair.deliver(true, &ack_to_server(3001, 0));
        }
        assert!(pair.s.in_recovery);
        pair.now = 150 * NS_PER_MS;
        pair.deliver(true, &ack_to_server(4001, 0));
        assert_eq!(pair.s.ack_rtt, None, "the ACK of a retransmission gives no sample");
        pair.on(true, |e, _| e.write(1000)); // segment 5 at 150 ms
        pair.now = 230 * NS_PER_MS;
        pair.deliver(true, &ack_to_server(5001, 0));
        assert_eq!(pair.s.ack_rtt, Some(80 * NS_PER_MS));
        assert!(pair.s.sent_times.is_empty(), "every acknowledged segment forgotten");
    }

    #[test]
    fn retransmissions_are_ect_only_when_the_stack_sends_them_so() {
        for ect_retransmissions in [false, true] {
            let mut pair = Pair::new(TcpParams { ecn: true, initial_window_segments: 4, ect_retransmissions, ..params() });
            pair.establish();
            let sent = pair.on(true, |e, _| e.write(4000));
            assert!(sent.iter().all(|p| p.ecn == Ecn::Ect0), "new data is ECT(0)");
            let fr: Vec<Seg> = (0..3).flat_map(|_| pair.deliver(true, &ack_to_server(1, 0))).collect();
            let want = if ect_retransmissions { Ecn::Ect0 } else { Ecn::NotEct };
            assert_eq!((fr[0].kind, fr[0].ecn), (PacketKind::Retx, want), "RFC 3168 6.1.5 unless switched");
        }
    }

    /// A retransmission the server sent: when, which byte, and whether it was in fast recovery.
    #[derive(Debug, PartialEq)]
    struct Retx {
        at: SimTime,
        seq: u64,
        in_recovery: bool,
    }

    /// Closed loop over a zero-delay network: the server sends `bytes` to the real client
    /// receiver, the first transmission of each segment starting at a byte of `lost` is
    /// dropped, and timers fire when nothing is in transit. Returns the server's counters and
    /// its retransmissions.
    fn transfer_with_losses(cc: CcKind, lost: &[u64], bytes: u64) -> (EndpointStats, Vec<Retx>) {
        transfer_with_losses_as(TcpParams { cc, ..params() }, lost, bytes)
    }

    /// The same with any parameters (initial window 10 segments).
    fn transfer_with_losses_as(p: TcpParams, lost: &[u64], bytes: u64) -> (EndpointStats, Vec<Retx>) {
        let mut pair = Pair::new(TcpParams { initial_window_segments: 10, ..p });
        pair.establish();
        let mut lost = lost.to_vec();
        let mut retx = Vec::new();
        let mut wire: std::collections::VecDeque<(bool, Seg)> = std::collections::VecDeque::new();
        let first = pair.on(true, |e, _| e.write(bytes));
        wire.extend(first.into_iter().map(|p| (false, p)));
        loop {
            while let Some((to_server, pkt)) = wire.pop_front() {
                if !to_server {
                    if pkt.kind == PacketKind::Retx {
                        retx.push(Retx { at: pair.now, seq: pkt.seq, in_recovery: pair.s.in_recovery });
                    } else if let Some(i) = lost.iter().position(|&l| l == pkt.seq) {
                        lost.remove(i);
                        continue;
                    }
                }
                let out = pair.deliver_seg(to_server, &pkt);
                wire.extend(out.into_iter().map(|p| (!to_server, p)));
            }
            if pair.s.acked_bytes() == bytes {
                return (pair.s.stats, retx);
            }
            let next = pair.s.rto_at.min(pair.c.delack_at);
            assert!(next != OFF && next < 60 * NS_PER_S, "stalled: {retx:?}");
            pair.now = next;
            let to_server = next == pair.c.delack_at;
            let out = if to_server {
                pair.on(false, |e, _| e.on_delack())
            } else {
                pair.on(true, |e, ctx| {
                    e.on_rto(ctx);
                })
            };
            wire.extend(out.into_iter().map(|p| (to_server, p)));
        }
    }

    #[test]
    fn two_losses_in_a_window_reno_leaves_recovery_on_the_partial_ack_newreno_does_not() {
        // Ten segments in flight; the 1st (byte 1) and the 4th (byte 3001) are lost. Eight
        // duplicate ACKs: fast retransmit of byte 1 on the third, three new segments on the
        // inflated window, then the partial ACK 3001.
        let lost = [1, 3001];
        let (nr, nr_retx) = transfer_with_losses(CcKind::NewReno { beta: 0.5, beta_ecn: 0.5 }, &lost, 20_000);
        // NewReno (RFC 6582): the partial ACK retransmits the second hole at once, still in
        // recovery; no timeout.
        assert_eq!(
            nr_retx,
            vec![Retx { at: 0, seq: 1, in_recovery: true }, Retx { at: 0, seq: 3001, in_recovery: true }]
        );
        assert_eq!((nr.fast_retransmits, nr.rtos, nr.loss_reductions), (1, 0, 1));

        // Reno (RFC 5681): the partial ACK ends recovery (cwnd = ssthresh = 5000, with 10000
        // bytes still in flight, so nothing is sent); the three duplicate ACKs of 3001 that the
        // new segments raise do not start a second fast retransmit (3001 is not beyond
        // `recover`), so the second hole waits for the retransmission timer (1 s, the minimum).
        let (reno, reno_retx) = transfer_with_losses(CcKind::Reno { beta: 0.5, beta_ecn: 0.5 }, &lost, 20_000);
        assert_eq!(reno_retx[0], Retx { at: 0, seq: 1, in_recovery: true });
        assert_eq!(reno_retx[1], Retx { at: NS_PER_S, seq: 3001, in_recovery: false });
        assert_eq!((reno.fast_retransmits, reno.rtos, reno.loss_reductions), (1, 1, 1));
    }

    #[test]
    fn ns2_loss_response_lets_reno_fast_retransmit_again_after_a_fast_retransmit() {
        // The losses of the test above with FullTcp's rule: the duplicate ACKs of 3001 start a
        // second fast retransmit (dupack_action: the last reduction was a fast retransmit), so
        // no timeout; after a timeout `recover` holds until an ACK passes all data sent before.
        let reno = CcKind::Reno { beta: 0.5, beta_ecn: 0.5 };
        let p = TcpParams { cc: reno, loss_response: LossResponse::Ns2, ..params() };
        let (stats, retx) = transfer_with_losses_as(p, &[1, 3001], 20_000);
        assert_eq!(retx[..2], [Retx { at: 0, seq: 1, in_recovery: true }, Retx { at: 0, seq: 3001, in_recovery: true }]);
        assert_eq!((stats.fast_retransmits, stats.rtos, stats.loss_reductions), (2, 0, 2));
    }

    #[test]
    fn reno_partial_ack_deflates_to_ssthresh_and_leaves_recovery() {
        let mut pair = Pair::new(TcpParams {
            initial_window_segments: 10,
            cc: CcKind::Reno { beta: 0.5, beta_ecn: 0.5 },
            ..params()
        });
        pair.establish();
        pair.on(true, |e, _| e.write(10_000));
        for _ in 0..2 {
            pair.deliver(true, &ack_to_server(1, 0));
        }
        let fr = pair.deliver(true, &ack_to_server(1, 0));
        assert_eq!((fr[0].kind, fr[0].seq), (PacketKind::Retx, 1), "fast retransmit as NewReno");
        assert_eq!((pair.s.window().cwnd, pair.s.window().ssthresh), (8000, 5000));
        pair.deliver(true, &ack_to_server(1, 0));
        assert_eq!(pair.s.window().cwnd, 9000, "inflation by one SMSS per further duplicate ACK");
        let pa = pair.deliver(true, &ack_to_server(3001, 0));
        assert!(pa.is_empty(), "no retransmission on the partial ACK");
        assert!(!pair.s.in_recovery);
        assert_eq!(pair.s.window().cwnd, 5000, "RFC 5681 step 6: cwnd = ssthresh");
    }

    /// A Reno sender with `iw` segments in flight, its first segment lost, after `dupacks`
    /// duplicate ACKs: the packets each duplicate ACK released.
    fn reno_after_dupacks(loss_response: LossResponse, iw: u32, dupacks: usize) -> (Pair, Vec<Vec<Seg>>) {
        let mut pair = Pair::new(TcpParams {
            initial_window_segments: iw,
            cc: CcKind::Reno { beta: 0.5, beta_ecn: 0.5 },
            loss_response,
            ..params()
        });
        pair.establish();
        pair.on(true, |e, _| e.write(20_000));
        let out = (0..dupacks).map(|_| pair.deliver(true, &ack_to_server(1, 0))).collect();
        (pair, out)
    }

    #[test]
    fn restart_after_idle_sends_the_restart_window_after_an_rto_of_silence() {
        // The server's window grows to 6000 (IW 2, four ACKs in slow start), all is
        // acknowledged, then the application writes again after an idle period.
        // `idle_rtos`: the pause in units of the sender's RTO at that moment.
        let run = |restart_after_idle: bool, idle_rtos: f64| {
            let mut pair = Pair::new(TcpParams { restart_after_idle, ack_every_segments: 1, ..params() });
            pair.establish();
            pair.now = NS_PER_MS;
            pair.on(true, |e, _| e.write(4000));
            for ack in [1001, 2001, 3001, 4001] {
                pair.deliver(true, &ack_to_server(ack, 0));
            }
            assert_eq!(pair.s.window().cwnd, 6000);
            pair.now += (pair.s.rtt.rto() as f64 * idle_rtos) as SimTime;
            let sent = pair.on(true, |e, _| e.write(20_000)).len();
            (sent, pair.s.window().cwnd)
        };
        assert_eq!(run(false, 2.0), (6, 6000), "off: the grown window, whatever the idle time");
        assert_eq!(run(true, 2.0), (2, 2000), "RFC 5681 4.1: min(IW, cwnd) after more than an RTO");
        assert_eq!(run(true, 0.5), (6, 6000), "a shorter pause keeps the window");
    }

    #[test]
    fn limited_transmit_sends_a_new_segment_on_each_of_the_first_two_dupacks() {
        // Four segments in flight (cwnd 4000), the first lost.
        let run = |limited_transmit: bool| {
            let mut pair = Pair::new(TcpParams { initial_window_segments: 4, limited_transmit, ..params() });
            pair.establish();
            pair.on(true, |e, _| e.write(20_000));
            let out: Vec<Vec<(PacketKind, u64)>> = (0..3)
                .map(|_| pair.deliver(true, &ack_to_server(1, 0)).iter().map(|p| (p.kind, p.seq)).collect())
                .collect();
            (pair, out)
        };
        let (off, out) = run(false);
        assert_eq!(out[..2], [vec![], vec![]], "RFC 5681 alone: nothing before the third");
        assert_eq!(out[2], vec![(PacketKind::Retx, 1), (PacketKind::Data, 4001)], "the inflated window's first new segment");
        assert_eq!(off.s.window().ssthresh, 2000);
        let (on, out) = run(true);
        assert_eq!(out[0], vec![(PacketKind::Data, 4001)], "RFC 3042: one new segment per duplicate ACK");
        assert_eq!(out[1], vec![(PacketKind::Data, 5001)]);
        // The third: fast retransmit; 6000 bytes out against cwnd 5000, so nothing new.
        assert_eq!(out[2], vec![(PacketKind::Retx, 1)]);
        // ssthresh from the FlightSize before limited transmit (RFC 5681 3.2 step 2): 4000 / 2.
        assert_eq!((on.s.window().ssthresh, on.s.window().cwnd), (2000, 5000));
    }

    #[test]
    fn ns2_loss_response_holds_new_data_at_the_third_dupack_and_opens_on_the_exit() {
        // Four segments in flight, the first lost: ssthresh 2000 either way, cwnd 5000.
        let seqs = |out: &Vec<Seg>| out.iter().map(|p| (p.kind, p.seq)).collect::<Vec<_>>();
        let (mut rfc, out) = reno_after_dupacks(LossResponse::Rfc5681, 4, 4);
        assert_eq!(seqs(&out[2]), vec![(PacketKind::Retx, 1), (PacketKind::Data, 4001)], "RFC 5681: new data on the inflated window");
        assert_eq!(seqs(&out[3]), vec![(PacketKind::Data, 5001)]);
        let (mut ns2, out) = reno_after_dupacks(LossResponse::Ns2, 4, 4);
        assert_eq!(seqs(&out[2]), vec![(PacketKind::Retx, 1)], "FullTcp: the retransmission alone");
        assert_eq!(seqs(&out[3]), vec![(PacketKind::Data, 4001), (PacketKind::Data, 5001)], "the fourth releases both");
        for pair in [&rfc, &ns2] {
            assert_eq!((pair.s.window().cwnd, pair.s.window().ssthresh), (6000, 2000));
        }
        // The ACK that ends recovery: RFC 5681 sets cwnd = ssthresh; FullTcp then opens it.
        rfc.deliver(true, &ack_to_server(6001, 0));
        ns2.deliver(true, &ack_to_server(6001, 0));
        assert_eq!(rfc.s.window().cwnd, 2000);
        assert_eq!(ns2.s.window().cwnd, 2000 + 1000 * 1000 / 2000);
    }

    #[test]
    fn cwr_follows_a_loss_reduction_too() {
        // RFC 3168 6.1.2: CWR on the first new data segment after a reduction "for any reason".
        let mut pair = Pair::new(TcpParams {
            initial_window_segments: 4,
            cc: CcKind::Reno { beta: 0.5, beta_ecn: 0.5 },
            ecn: true,
            ..params()
        });
        pair.establish();
        assert!(pair.s.ecn_negotiated());
        let first = pair.on(true, |e, _| e.write(20_000));
        assert!(first.iter().all(|p| !p.has(flags::CWR)));
        for _ in 0..2 {
            pair.deliver(true, &ack_to_server(1, 0));
        }
        let fr = pair.deliver(true, &ack_to_server(1, 0));
        let cwr = fr.iter().map(|p| (p.kind, p.seq, p.has(flags::CWR))).collect::<Vec<_>>();
        assert_eq!(cwr, vec![(PacketKind::Retx, 1, false), (PacketKind::Data, 4001, true)]);
        let next = pair.deliver(true, &ack_to_server(1, 0));
        assert_eq!((next[0].seq, next[0].has(flags::CWR)), (5001, false), "once");
        // A timeout: the retransmission goes without it, the first new segment carries it.
        pair.now = pair.s.rto_at;
        let retx = pair.on(true, |e, ctx| {
            e.on_rto(ctx);
        });
        assert_eq!((retx[0].kind, retx[0].has(flags::CWR)), (PacketKind::Retx, false));
        let after = pair.deliver(true, &ack_to_server(6001, 0));
        assert_eq!((after[0].kind, after[0].has(flags::CWR)), (PacketKind::Data, true));
    }

    #[test]
    fn ns2_loss_response_holds_only_the_flush_after_the_fast_retransmit() {
        // No ACK after the third duplicate: the timer's go-back-N retransmission still goes.
        let (mut pair, _) = reno_after_dupacks(LossResponse::Ns2, 4, 3);
        pair.now = pair.s.rto_at;
        let out = pair.on(true, |e, ctx| {
            e.on_rto(ctx);
        });
        assert_eq!(out.iter().map(|p| (p.kind, p.seq)).collect::<Vec<_>>(), vec![(PacketKind::Retx, 1)]);
    }

    #[test]
    fn ns2_loss_response_takes_ssthresh_from_cwnd_in_whole_segments() {
        // Seven segments in flight: RFC 5681 halves FlightSize (3500 bytes); FullTcp keeps the
        // whole segments of half of cwnd (3).
        for (response, want) in [(LossResponse::Rfc5681, 3500), (LossResponse::Ns2, 3000)] {
            let (pair, _) = reno_after_dupacks(response, 7, 3);
            assert_eq!(pair.s.window().ssthresh, want, "{response:?}");
        }
        // Timeouts: the first halves the same window; the second, at a window of one segment,
        // leaves RFC 5681's half of FlightSize (still 7 segments outstanding) but FullTcp's 2.
        for (response, first, second) in [(LossResponse::Rfc5681, 3500, 3500), (LossResponse::Ns2, 3000, 2000)] {
            let mut pair = Pair::new(TcpParams { initial_window_segments: 7, loss_response: response, ..params() });
            pair.establish();
            pair.on(true, |e, _| e.write(20_000));
            let mut ssthresh = vec![];
            for _ in 0..2 {
                pair.now = pair.s.rto_at;
                let retx = pair.on(true, |e, ctx| {
                    e.on_rto(ctx);
                });
                assert_eq!((retx.len(), retx[0].seq), (1, 1));
                ssthresh.push(pair.s.window().ssthresh);
            }
            assert_eq!(ssthresh, vec![first, second], "{response:?}");
        }
    }

    #[test]
    fn ece_halves_once_per_window_and_cwr_follows() {
        let mut pair = Pair::new(TcpParams { ecn: true, initial_window_segments: 10, ..params() });
        pair.establish();
        let sent = pair.on(true, |e, _| e.write(20_000));
        assert!(sent.iter().all(|p| p.ecn == Ecn::Ect0));
        let ece = |ack: u64| ack_to_server(ack, flags::ECE);
        // 10 segments were in flight when the echo was sent (the ACK acknowledges 2 of them):
        // the window is halved, ssthresh = cwnd = 5000, and nothing new may go yet (8 in flight).
        assert!(pair.deliver(true, &ece(2001)).is_empty());
        assert_eq!(pair.s.window().cwnd, 5000);
        pair.deliver(true, &ece(4001));
        assert_eq!(pair.s.window().cwnd, 5000, "no second reduction, no growth, in the same window");
        assert_eq!(pair.s.stats.ecn_reductions, 1);
        let plain = ack_to_server(8001, 0);
        let out = pair.deliver(true, &plain);
        assert_eq!(out.len(), 3, "2000 bytes in flight, cwnd 5000");
        assert!(out[0].has(flags::CWR) && !out[1].has(flags::CWR), "CWR on the next new segment only");
        assert_eq!(out[0].seq, 10_001, "the first segment after the reduced window");
        // The ACK of exactly the window outstanding at the reduction still carries the echo of
        // the mark that caused it (the CWR segment is not acknowledged yet): not a new echo.
        pair.deliver(true, &ece(10_001));
        assert_eq!(pair.s.stats.ecn_reductions, 1, "the reduced window's last ACK");
        // An echo on an ACK beyond it answers a mark on data sent after the reduction.
        pair.deliver(true, &ece(11_001));
        assert_eq!(pair.s.stats.ecn_reductions, 2, "a new window");
    }

    /// A pure ACK from the client (towards the server).
    fn ack_to_server(ack: u64, f: u16) -> Packet {
        Packet::test_ack(ack, f)
    }

    #[test]
    fn ecn_plus_seed_marks_synacks_and_the_client_ignores_ce() {
        let p = TcpParams { ecn: true, ecn_plus: EcnPlus::Seed, ..params() };
        let mut pair = Pair::new(p);
        let syn = pair.on(false, |e, ctx| e.connect(ctx));
        let synack = pair.deliver(true, &syn[0]);
        assert_eq!(synack[0].ecn, Ecn::Ect0, "ECN+: the SYN-ACK is ECN-capable");
        // A retransmitted SYN-ACK stays ECN-capable in the seed's variant.
        pair.now = 3 * NS_PER_S;
        let again = pair.on(true, |e, ctx| {
            e.on_rto(ctx);
        });
        assert_eq!((again[0].kind, again[0].ecn), (PacketKind::SynAck, Ecn::Ect0));
        // The router marks it; the client proceeds as if it were not marked.
        let marked = Packet { ecn: Ecn::Ce, ..*synack[0] };
        let ack = pair.deliver(false, &marked);
        assert!(pair.c.stats.synack_ce);
        assert!(!ack[0].has(flags::ECE), "no echo of a marked SYN-ACK");
        pair.deliver(true, &ack[0]);
        assert_eq!(pair.s.window().cwnd, 1000, "one segment after the SYN-ACK timeout (RFC 5681)");
        // Without ECN negotiated, no ECN+ either.
        let mut plain = Pair::new(TcpParams { ecn: false, ecn_plus: EcnPlus::Seed, ..params() });
        let syn = plain.on(false, |e, ctx| e.connect(ctx));
        assert_eq!(plain.deliver(true, &syn[0])[0].ecn, Ecn::NotEct);
    }

    #[test]
    fn ecn_plus_rfc5562_echoes_the_mark_and_starts_from_one_segment() {
        let p = TcpParams { ecn: true, ecn_plus: EcnPlus::Rfc5562, ..params() };
        let mut pair = Pair::new(p.clone());
        let syn = pair.on(false, |e, ctx| e.connect(ctx));
        let synack = pair.deliver(true, &syn[0]);
        assert_eq!(synack[0].ecn, Ecn::Ect0);
        let marked = Packet { ecn: Ecn::Ce, ..*synack[0] };
        let ack = pair.deliver(false, &marked);
        assert!(ack[0].has(flags::ECE), "RFC 5562 3.2: the ACK echoes the mark");
        pair.deliver(true, &ack[0]);
        // The server starts with one segment (not the IW of 2) and sets CWR on it.
        assert_eq!(pair.s.window().cwnd, 1000);
        let data = pair.on(true, |e, _| e.write(5000));
        assert_eq!(data.len(), 1);
        assert!(data[0].has(flags::CWR));
        assert_eq!(pair.s.stats.ecn_reductions, 1);
        // An echo still riding on ACKs of nothing new is not a second signal.
        pair.deliver(true, &ack_to_server(1, flags::ECE));
        assert_eq!(pair.s.stats.ecn_reductions, 1);

        // A retransmitted SYN-ACK is sent Not-ECT (RFC 5562 3.1).
        let mut lost = Pair::new(p);
        let syn = lost.on(false, |e, ctx| e.connect(ctx));
        lost.deliver(true, &syn[0]);
        lost.now = 3 * NS_PER_S;
        let again = lost.on(true, |e, ctx| {
            e.on_rto(ctx);
        });
        assert_eq!((again[0].kind, again[0].ecn), (PacketKind::SynAck, Ecn::NotEct));
    }

    #[test]
    fn an_echo_at_one_segment_waits_for_the_timer() {
        let mut pair = Pair::new(TcpParams { ecn: true, initial_window_segments: 1, ..params() });
        pair.establish();
        let first = pair.on(true, |e, _| e.write(5000));
        assert_eq!(first.len(), 1);
        // The only segment is acknowledged with ECE while cwnd is one segment: keep one
        // segment, send nothing new until the retransmission timer expires.
        pair.now = 100 * NS_PER_MS;
        let out = pair.deliver(true, &ack_to_server(1001, flags::ECE));
        assert!(out.is_empty(), "RFC 3168 6.1.2: no new data before the timer");
        assert_eq!(pair.s.window().cwnd, 1000);
        let deadline = pair.s.rto_at;
        assert!(deadline > pair.now && deadline != OFF);
        pair.now = deadline;
        let out = pair.on(true, |e, ctx| {
            e.on_rto(ctx);
        });
        assert_eq!(out.len(), 1, "the next segment goes when the timer expires");
        assert_eq!(out[0].kind, PacketKind::Data, "new data, not a retransmission");
        assert!(out[0].has(flags::CWR));
        assert_eq!(pair.s.stats.rtos, 0, "the wait is not a timeout");
    }

    #[test]
    fn an_echo_at_one_segment_keeps_two_segments_with_the_linux_rule() {
        let p = TcpParams { ecn: true, initial_window_segments: 1, ecn_min_window: EcnMinWindow::TwoSegments, ..params() };
        let mut pair = Pair::new(p);
        pair.establish();
        let first = pair.on(true, |e, _| e.write(5000));
        assert_eq!(first.len(), 1);
        pair.now = 100 * NS_PER_MS;
        // The same echo as above: ssthresh = max(beta FlightSize, 2 SMSS) = 2 segments, and the
        // window is ssthresh, so two new segments go at once.
        let out = pair.deliver(true, &ack_to_server(1001, flags::ECE));
        assert_eq!(pair.s.window().cwnd, 2000);
        assert_eq!(pair.s.stats.ecn_reductions, 1);
        assert_eq!(out.len(), 2, "no wait for the timer");
        assert!(out.iter().all(|p| p.kind == PacketKind::Data));
        assert!(out[0].has(flags::CWR));
        assert!(!pair.s.ecn_hold);
    }

    #[test]
    fn linux_estimator_samples_every_ack_but_not_retransmitted_data() {
        let p = TcpParams { initial_window_segments: 4, rto_estimator: RtoEstimator::Linux, min_rto: 200 * NS_PER_MS, ..params() };
        let mut pair = Pair::new(p);
        pair.establish(); // the scripted handshake takes no time: a sample of 1 us
        let sent = pair.on(true, |e, _| e.write(8000));
        assert_eq!(sent.len(), 4);
        // Two ACKs, 100 ms and 150 ms after the segments left: two samples. srtt_us = 8 + (100000
        // - 1) = 100007 (12.5 ms), then + (150000 - 12500) = 237507 (29.688 ms).
        pair.now = 100 * NS_PER_MS;
        pair.deliver(true, &ack_to_server(2001, 0));
        assert_eq!(pair.s.srtt(), Some(12_500_000));
        pair.now = 150 * NS_PER_MS;
        pair.deliver(true, &ack_to_server(4001, 0));
        assert_eq!(pair.s.srtt(), Some(29_688_000));
        // RFC 6298 timing would have sampled once (the first segment only).
        let mut rfc = Pair::new(TcpParams { initial_window_segments: 4, ..params() });
        rfc.establish();
        rfc.on(true, |e, _| e.write(8000));
        rfc.now = 100 * NS_PER_MS;
        rfc.deliver(true, &ack_to_server(2001, 0));
        let rfc_one = rfc.s.srtt().unwrap();
        rfc.now = 150 * NS_PER_MS;
        rfc.deliver(true, &ack_to_server(4001, 0));
        assert_eq!((rfc_one, rfc.s.srtt().unwrap()), (12_500_000, 12_500_000), "one timed segment per round trip");
        // A retransmitted segment: its ACK gives no sample (Karn), later new data does.
        let before = pair.s.srtt();
        pair.now = 2 * NS_PER_S;
        pair.on(true, |e, ctx| {
            e.on_rto(ctx);
        });
        pair.now += 300 * NS_PER_MS;
        pair.deliver(true, &ack_to_server(5001, 0));
        assert_eq!(pair.s.srtt(), before, "the ACK of a retransmission is not sampled");
    }

    /// A data segment from the server to the client.
    fn data_to_client(seq: u64, ecn: Ecn, f: u16) -> Packet {
        Packet {
            flow: 0,
            flow_gen: 0,
            seq,
            ack: 1,
            payload: 1000,
            size: 1040,
            wnd: 64_000,
            flags: flags::ACK | f,
            ecn,
            kind: PacketKind::Data,
            dir: Direction::Down,
            hop: 0,
            enqueued_at: 0,
        }
    }

    fn linux_receiver(ecn: bool, rcv_wnd: u32) -> Pair {
        let p = TcpParams { ecn, delayed_ack: 40 * NS_PER_MS, delayed_ack_policy: DelayedAckPolicy::Linux, ..params() };
        let mut pair = Pair::new(p);
        pair.c.rcv_wnd = rcv_wnd;
        pair.establish();
        pair
    }

    #[test]
    fn linux_receiver_quick_acks_the_first_segments_then_every_second() {
        // rcv_wnd / (2 MSS) = 4 quick ACKs (fewer than TCP_MAX_QUICKACKS).
        let mut pair = linux_receiver(false, 8000);
        let mut seq = 1;
        for i in 0..4 {
            pair.now += NS_PER_MS;
            let a = pair.deliver(false, &data_to_client(seq, Ecn::NotEct, 0));
            seq += 1000;
            assert_eq!(a.len(), 1, "quick ACK {i}");
        }
        pair.now += NS_PER_MS;
        assert!(pair.deliver(false, &data_to_client(seq, Ecn::NotEct, 0)).is_empty(), "quick ACKs used up");
        assert_eq!(pair.c.delack_at, pair.now + 40 * NS_PER_MS, "ato = TCP_ATO_MIN");
        seq += 1000;
        pair.now += NS_PER_MS;
        let a = pair.deliver(false, &data_to_client(seq, Ecn::NotEct, 0));
        assert_eq!((a.len(), a[0].ack), (1, seq + 1000), "more than one full segment unacknowledged");
        // With the full window, TCP_MAX_QUICKACKS (16) bounds the count.
        let mut big = linux_receiver(false, 64_000);
        let mut quick = 0;
        for k in 0..20u64 {
            big.now += NS_PER_MS;
            if !big.deliver(false, &data_to_client(1 + 1000 * k, Ecn::NotEct, 0)).is_empty() && k < 17 {
                quick += 1;
            }
            if big.c.delack_at != OFF {
                break;
            }
        }
        assert_eq!(quick, 16);
    }

    #[test]
    fn linux_receiver_quick_acks_again_after_a_loss() {
        let mut pair = linux_receiver(true, 4000); // 2 quick ACKs at the start
        let mut seq = 1;
        let send = |pair: &mut Pair, seq: u64, ecn: Ecn| {
            pair.now += NS_PER_MS;
            pair.deliver(false, &data_to_client(seq, ecn, 0))
        };
        for _ in 0..2 {
            assert_eq!(send(&mut pair, seq, Ecn::Ect0).len(), 1);
            seq += 1000;
        }
        assert!(send(&mut pair, seq, Ecn::Ect0).is_empty(), "delayed: quick ACKs used up");
        seq += 1000;
        assert_eq!(send(&mut pair, seq, Ecn::Ect0).len(), 1);
        seq += 1000;
        // A loss: the next segment is missing, the one after it arrives out of order and is
        // acknowledged at once (a duplicate ACK).
        let hole = seq;
        let d = send(&mut pair, hole + 1000, Ecn::Ect0);
        assert_eq!((d.len(), d[0].ack), (1, hole));
        // The retransmission (Not-ECT on an ECN connection) fills the gap: ACK at once, and
        // two quick ACKs (tcp_ecn_check_ce), so the next single segment is acknowledged too.
        let f = send(&mut pair, hole, Ecn::NotEct);
        assert_eq!((f.len(), f[0].ack), (1, hole + 2000));
        let n = send(&mut pair, hole + 2000, Ecn::Ect0);
        assert_eq!(n.len(), 1, "quick ACK after the retransmission");
        assert!(send(&mut pair, hole + 3000, Ecn::Ect0).is_empty(), "back to delayed ACKs");
        // The RFC 5681 receiver delays the segment after the gap was filled.
        let p = TcpParams { ecn: true, ..params() };
        let mut rfc = Pair::new(p);
        rfc.establish();
        for (k, want) in [(0u64, 0usize), (1, 1), (3, 1), (2, 1), (4, 0)] {
            let ecn = if k == 2 { Ecn::NotEct } else { Ecn::Ect0 };
            assert_eq!(send(&mut rfc, 1 + 1000 * k, ecn).len(), want, "segment {k}");
        }
    }

    #[test]
    fn linux_receiver_acks_a_duplicate_and_a_cwr_at_once_and_adapts_ato() {
        let mut pair = linux_receiver(true, 1000); // rcv_wnd / (2 MSS) = 0 -> 2 quick ACKs
        for k in 0..3u64 {
            pair.now += NS_PER_MS;
            let a = pair.deliver(false, &data_to_client(1 + 1000 * k, Ecn::Ect0, 0));
            assert_eq!(a.len(), usize::from(k < 2), "segment {k}");
        }
        assert_eq!(pair.c.delack_at, pair.now + 40 * NS_PER_MS);
        // The timer fires: the delayed ACK was missed, so ato doubles (tcp_delack_timer_handler).
        pair.now = pair.c.delack_at;
        let a = pair.on(false, |e, _| e.on_delack());
        assert_eq!(a.len(), 1);
        assert_eq!(pair.c.lx.ato, 80 * NS_PER_MS);
        // A duplicate (already received) segment: ACK at once and quick-ACK mode (two quick
        // ACKs, ato back to its minimum); its own ACK uses one, the next in-order segment the
        // other.
        pair.now += 100 * NS_PER_MS;
        assert_eq!(pair.deliver(false, &data_to_client(1001, Ecn::Ect0, 0)).len(), 1);
        assert_eq!(pair.c.lx.ato, 40 * NS_PER_MS);
        pair.now += NS_PER_MS;
        assert_eq!(pair.deliver(false, &data_to_client(3001, Ecn::Ect0, 0)).len(), 1, "quick ACK");
        pair.now += NS_PER_MS;
        assert!(pair.deliver(false, &data_to_client(4001, Ecn::Ect0, 0)).is_empty());
        pair.now += NS_PER_MS;
        assert_eq!(pair.deliver(false, &data_to_client(5001, Ecn::Ect0, 0)).len(), 1);
        // A data segment with CWR is acknowledged at once (tcp_ecn_accept_cwr).
        pair.now += NS_PER_MS;
        let c = pair.deliver(false, &data_to_client(6001, Ecn::Ect0, flags::CWR));
        assert_eq!(c.len(), 1);
        // Without CWR the same segment would wait.
        pair.now += NS_PER_MS;
        assert!(pair.deliver(false, &data_to_client(7001, Ecn::Ect0, 0)).is_empty());
    }

    #[test]
    fn ns2_response_halves_below_one_segment_and_waits_out_a_timeout() {
        let p = TcpParams { ecn: true, ecn_response: EcnResponse::Ns2, ..params() };
        let mut pair = Pair::new(p);
        pair.establish();
        assert_eq!(pair.on(true, |e, _| e.write(20_000)).len(), 2);
        let ece = |ack: u64| ack_to_server(ack, flags::ECE);
        // Two segments: one (RFC 3168's rule stops at two).
        pair.now = 100 * NS_PER_MS;
        assert!(pair.deliver(true, &ece(1001)).is_empty());
        assert_eq!((pair.s.window().cwnd, pair.s.window().ssthresh), (1000, 2000));
        let one = pair.deliver(true, &ece(2001));
        assert_eq!(one.len(), 1, "the echo of the same window: no reduction, no growth");
        assert!(one[0].has(flags::CWR));
        // One segment: half a segment. Nothing may go; the timer runs.
        pair.now = 200 * NS_PER_MS;
        assert!(pair.deliver(true, &ece(3001)).is_empty());
        assert_eq!((pair.s.window().cwnd, pair.s.window().ssthresh), (500, 2000));
        assert_eq!(pair.s.stats.ecn_reductions, 2);
        let rto = pair.s.rto_at - pair.now;
        assert_eq!(pair.s.rtt.backoff(), 0);
        // Its expiry is a timeout: one segment of new data, ssthresh kept; with nothing
        // outstanding the timer is not backed off.
        pair.now = pair.s.rto_at;
        let out = pair.on(true, |e, ctx| {
            e.on_rto(ctx);
        });
        assert_eq!((out.len(), out[0].kind, out[0].seq), (1, PacketKind::Data, 3001));
        assert_eq!((pair.s.window().cwnd, pair.s.window().ssthresh), (1000, 2000));
        assert_eq!((pair.s.stats.rtos, pair.s.rtt.backoff()), (1, 0));
        // A second echo at one segment backs the timer off (ns-2's ecn_backoff_)...
        pair.now += 100 * NS_PER_MS;
        assert!(pair.deliver(true, &ece(4001)).is_empty());
        assert_eq!(pair.s.window().cwnd, 500);
        assert_eq!(pair.s.rtt.backoff(), 1);
        assert!(pair.s.rto_at - pair.now > rto * 3 / 2, "the wait grows: {} against {rto}", pair.s.rto_at - pair.now);
        pair.now = pair.s.rto_at;
        pair.on(true, |e, ctx| {
            e.on_rto(ctx);
        });
        assert_eq!(pair.s.rtt.backoff(), 1, "not backed off at the expiry");
        // ...and an echoing ACK's RTT sample does not end that backoff: a third echo doubles it.
        pair.now += 100 * NS_PER_MS;
        assert!(pair.deliver(true, &ece(5001)).is_empty());
        assert_eq!(pair.s.rtt.backoff(), 2);
        pair.now = pair.s.rto_at;
        pair.on(true, |e, ctx| {
            e.on_rto(ctx);
        });
        // An ACK without an echo ends the backoff and the window grows again (slow start).
        pair.now += 100 * NS_PER_MS;
        let out = pair.deliver(true, &ack_to_server(6001, 0));
        assert_eq!(pair.s.rtt.backoff(), 0);
        assert_eq!((out.len(), pair.s.window().cwnd), (2, 2000));
        assert_eq!(pair.s.stats.rtos, 3);
        // A window of 2.5 segments halves to 1.25: one segment may go, ssthresh 2.
        let p = TcpParams { ecn: true, ecn_response: EcnResponse::Ns2, initial_window_segments: 3, ..params() };
        let mut pair = Pair::new(p);
        pair.establish();
        pair.on(true, |e, _| e.write(20_000));
        pair.s.w.cwnd = 2500;
        pair.deliver(true, &ece(1001));
        assert_eq!((pair.s.window().cwnd, pair.s.window().ssthresh), (1250, 2000));
    }

    #[test]
    fn ns2_response_keeps_ssthresh_on_a_timeout_after_an_echo() {
        // ns-2's timeout_action after an ECN reduction: one segment, ssthresh kept. RFC 5681
        // halves FlightSize again (9 segments outstanding: 4500).
        for (response, ssthresh_after_rto) in [(EcnResponse::Ns2, 5000), (EcnResponse::Rfc3168, 4500)] {
            let p = TcpParams { ecn: true, initial_window_segments: 10, ecn_response: response, ..params() };
            let mut pair = Pair::new(p);
            pair.establish();
            pair.on(true, |e, _| e.write(20_000));
            pair.deliver(true, &ack_to_server(1001, flags::ECE));
            assert_eq!((pair.s.window().cwnd, pair.s.window().ssthresh), (5000, 5000), "{response:?}");
            pair.now = pair.s.rto_at;
            let out = pair.on(true, |e, ctx| {
                e.on_rto(ctx);
            });
            assert_eq!((out[0].kind, out[0].seq), (PacketKind::Retx, 1001));
            assert_eq!(pair.s.window().cwnd, 1000);
            assert_eq!(pair.s.window().ssthresh, ssthresh_after_rto, "{response:?}");
        }
    }

    #[test]
    fn a_timeout_in_a_long_recovery_halves_flight_size_or_keeps_the_recovery_ssthresh() {
        // Ten segments out, the first lost: the fast retransmit sets ssthresh 5000; twelve more
        // duplicate ACKs inflate the window to 20 segments, which sends new data, so FlightSize
        // doubles while the cumulative ACK stays at the hole. The timer expires: RFC 5681 eq. 4
        // halves that FlightSize (10000, the whole window the recovery started from), Linux's
        // tcp_enter_loss keeps the reduction of this window (5000).
        for (rule, ssthresh_after_rto) in
            [(TimeoutSsthresh::HalfFlightSize, 10_000), (TimeoutSsthresh::OncePerWindow, 5000)]
        {
            let mut pair = Pair::new(TcpParams { initial_window_segments: 10, timeout_ssthresh: rule, ..params() });
            pair.establish();
            pair.on(true, |e, _| e.write(40_000));
            for _ in 0..3 {
                pair.deliver(true, &ack_to_server(1, 0));
            }
            assert_eq!((pair.s.window().cwnd, pair.s.window().ssthresh), (8000, 5000), "{rule:?}");
            for _ in 0..12 {
                pair.deliver(true, &ack_to_server(1, 0));
            }
            assert_eq!(pair.s.snd_max - pair.s.snd_una, 20_000, "{rule:?}");
            pair.now = pair.s.rto_at;
            let out = pair.on(true, |e, ctx| {
                e.on_rto(ctx);
            });
            assert_eq!((out[0].kind, out[0].seq), (PacketKind::Retx, 1), "{rule:?}");
            assert_eq!(pair.s.window().cwnd, 1000, "{rule:?}");
            assert_eq!(pair.s.window().ssthresh, ssthresh_after_rto, "{rule:?}");
        }
    }

    #[test]
    fn once_per_window_keeps_an_echo_reduction_and_halves_after_the_window() {
        // An echo at ten segments sets ssthresh 5000; a timeout before its window is
        // acknowledged keeps it (Linux: still in CWR), where RFC 5681 halves FlightSize (9
        // segments: 4500). Once the ACK has passed that window a timeout halves FlightSize
        // under either rule.
        let once = TcpParams {
            ecn: true,
            initial_window_segments: 10,
            timeout_ssthresh: TimeoutSsthresh::OncePerWindow,
            ..params()
        };
        for (p, ssthresh_after_rto) in [(once.clone(), 5000), (TcpParams { timeout_ssthresh: TimeoutSsthresh::HalfFlightSize, ..once.clone() }, 4500)] {
            let mut pair = Pair::new(p);
            pair.establish();
            pair.on(true, |e, _| e.write(20_000));
            pair.deliver(true, &ack_to_server(1001, flags::ECE));
            assert_eq!(pair.s.window().ssthresh, 5000);
            pair.now = pair.s.rto_at;
            pair.on(true, |e, ctx| {
                e.on_rto(ctx);
            });
            assert_eq!(pair.s.window().ssthresh, ssthresh_after_rto);
        }
        let mut pair = Pair::new(once);
        pair.establish();
        pair.on(true, |e, _| e.write(40_000));
        pair.deliver(true, &ack_to_server(1001, flags::ECE));
        // The whole window of the echo (up to 10001) acknowledged, then new data outstanding.
        pair.deliver(true, &ack_to_server(10_001, 0));
        let flight = pair.s.snd_max - pair.s.snd_una;
        assert!(flight >= 4000, "{flight}");
        pair.now = pair.s.rto_at;
        pair.on(true, |e, ctx| {
            e.on_rto(ctx);
        });
        assert_eq!(pair.s.window().ssthresh, flight / 2);
    }

    #[test]
    fn a_backed_off_timer_ends_at_an_rtt_sample_or_at_any_new_ack() {
        // After a timeout the retransmitted segment gives no RTT sample (Karn): RFC 6298 keeps
        // the backoff through its ACK; ns-2's FullTcp ends it there.
        for (end, backoff_after) in [(RtoBackoffEnd::RttSample, 1), (RtoBackoffEnd::NewAck, 0)] {
            let p = TcpParams { initial_window_segments: 4, rto_backoff_end: end, ..params() };
            let mut pair = Pair::new(p);
            pair.establish();
            pair.on(true, |e, _| e.write(20_000));
            pair.now = pair.s.rto_at;
            let out = pair.on(true, |e, ctx| {
                e.on_rto(ctx);
            });
            assert_eq!((out[0].kind, out[0].seq), (PacketKind::Retx, 1));
            assert_eq!(pair.s.rtt.backoff(), 1);
            pair.now += 100 * NS_PER_MS;
            pair.deliver(true, &ack_to_server(1001, 0));
            assert_eq!(pair.s.rtt.backoff(), backoff_after, "{end:?}");
        }
    }

    #[test]
    fn the_receiver_counts_ce_and_echoes_until_cwr() {
        let mut pair = Pair::new(TcpParams { ecn: true, ..params() });
        pair.establish();
        let data = pair.on(true, |e, _| e.write(2000));
        let ce = Packet { ecn: Ecn::Ce, ..*data[0] };
        pair.deliver(false, &ce);
        let acks = pair.deliver(false, &data[1]);
        assert!(acks[0].has(flags::ECE));
        assert_eq!(pair.c.stats.ce_received, 1);
        // CWR on a later segment stops the echo.
        let cwr = Packet { seq: 2001, flags: data[1].flags | flags::CWR, ..*data[1] };
        pair.deliver(false, &cwr);
        pair.now += 300 * NS_PER_MS;
        let acks = pair.on(false, |e, _| e.on_delack());
        assert!(!acks.is_empty() && !acks[0].has(flags::ECE));
    }

    #[test]
    fn fin_exchange_closes_both_ends() {
        let mut pair = Pair::new(params());
        pair.establish();
        let fin = pair.on(false, |e, _| e.close());
        assert_eq!(fin[0].kind, PacketKind::Fin);
        assert_eq!(pair.c.state, TcpState::FinWait1);
        let mut ev = TcpEvents::default();
        let ack = pair.on(true, |e, ctx| ev = e.on_segment(&fin[0], &SackBlocks::EMPTY, ctx));
        assert!(ev.peer_closed);
        assert_eq!(pair.s.state, TcpState::CloseWait);
        pair.deliver(false, &ack[0]);
        assert_eq!(pair.c.state, TcpState::FinWait2);
        let sfin = pair.on(true, |e, _| e.close());
        assert_eq!(pair.s.state, TcpState::LastAck);
        let last = pair.deliver(false, &sfin[0]);
        assert_eq!(pair.c.state, TcpState::TimeWait);
        pair.deliver(true, &last[0]);
        assert_eq!(pair.s.state, TcpState::Closed);
        assert!(pair.c.is_done() && pair.s.is_done());
    }

    // ----- pacing -----

    fn paced(pacing: bool) -> TcpParams {
        TcpParams { pacing, initial_window_segments: 10, ack_every_segments: 1, ..params() }
    }

    /// What one event sent by the server: its time, whether a retransmission timeout caused
    /// it, the server's pacing time and data segments sent before it, and the data segments.
    struct ServerEvent {
        at: SimTime,
        rto: bool,
        pace_next_before: SimTime,
        segs_before: u64,
        data: Vec<Packet>,
    }

    /// An event loop over a path with `one_way` delay each way and no serialization: the server
    /// sends `bytes` to the client; a segment starting at a byte of `lost` is dropped on its
    /// first transmission. Timers (the server's RTO and pacing, the client's delayed ACK) fire
    /// at their deadlines. Returns the pair at the end and every server event that sent data.
    fn path_transfer(p: TcpParams, one_way: SimTime, bytes: u64, lost: &[u64]) -> (Pair, Vec<ServerEvent>) {
        use std::cmp::Reverse;
        let mut pair = Pair::new(p);
        let syn = pair.on(false, |e, ctx| e.connect(ctx));
        pair.now += one_way;
        let synack = pair.deliver(true, &syn[0]);
        pair.now += one_way;
        let ack = pair.deliver(false, &synack[0]);
        pair.now += one_way;
        pair.deliver(true, &ack[0]);
        let mut lost = lost.to_vec();
        // Packets in transit: (arrival, index into `pkts`, to_server), earliest first.
        type Wire = std::collections::BinaryHeap<Reverse<(SimTime, usize, bool)>>;
        let mut wire = Wire::new();
        let mut pkts: Vec<Seg> = Vec::new();
        let put = |wire: &mut Wire, pkts: &mut Vec<Seg>, at: SimTime, to_server: bool, out: Vec<Seg>| {
            for pkt in out {
                pkts.push(pkt);
                wire.push(Reverse((at, pkts.len() - 1, to_server)));
            }
        };
        let mut events = Vec::new();
        let record = |at, rto, before: (SimTime, u64), out: &[Seg], events: &mut Vec<ServerEvent>| {
            let data: Vec<Packet> = out.iter().filter(|p| p.payload > 0).map(|s| s.pkt).collect();
            if !data.is_empty() {
                events.push(ServerEvent { at, rto, pace_next_before: before.0, segs_before: before.1, data });
            }
        };
        let before = (pair.s.pace_next, pair.s.segs_out);
        let first = pair.on(true, |e, _| e.write(bytes));
        record(pair.now, false, before, &first, &mut events);
        put(&mut wire, &mut pkts, pair.now + one_way, false, first);
        while pair.s.acked_bytes() < bytes {
            let next_pkt = wire.peek().map_or(OFF, |Reverse((t, _, _))| *t);
            let next = next_pkt.min(pair.s.rto_at).min(pair.s.pace_at).min(pair.c.delack_at);
            assert!(next != OFF && next < 60 * NS_PER_S, "stalled");
            pair.now = next;
            if next_pkt == next {
                let Reverse((_, i, to_server)) = wire.pop().unwrap();
                let pkt = pkts[i];
                if !to_server && pkt.kind == PacketKind::Data {
                    if let Some(k) = lost.iter().position(|&l| l == pkt.seq) {
                        lost.remove(k);
                        continue;
                    }
                }
                let before = (pair.s.pace_next, pair.s.segs_out);
                let out = pair.deliver_seg(to_server, &pkt);
                if to_server {
                    record(next, false, before, &out, &mut events);
                }
                put(&mut wire, &mut pkts, next + one_way, !to_server, out);
            } else if next == pair.c.delack_at {
                let out = pair.on(false, |e, _| e.on_delack());
                put(&mut wire, &mut pkts, next + one_way, true, out);
            } else {
                let rto = next == pair.s.rto_at;
                let before = (pair.s.pace_next, pair.s.segs_out);
                let out = pair.on(true, |e, ctx| {
                    if rto {
                        e.on_rto(ctx);
                    } else {
                        e.on_pace();
                    }
                });
                record(next, rto, before, &out, &mut events);
                put(&mut wire, &mut pkts, next + one_way, false, out);
            }
        }
        (pair, events)
    }

    #[test]
    fn pacing_spreads_a_window_over_the_rtt() {
        // 100 ms RTT, IW 10, an ACK per segment: the ten segments of the initial window leave
        // together (Linux paces from the tenth data segment on), their ACKs arrive together
        // 100 ms later and each opens the window by one segment and releases two: 20 segments.
        let rtt = 100 * NS_PER_MS;
        let round_two = |pacing: bool| -> (Pair, Vec<SimTime>) {
            let (pair, events) = path_transfer(paced(pacing), rtt / 2, 30_000, &[]);
            let t0 = events[0].at;
            let times: Vec<SimTime> = events
                .iter()
                .flat_map(|e| e.data.iter().map(move |p| (e.at, p.seq)))
                .filter(|&(at, _)| at >= t0 + rtt && at < t0 + 2 * rtt)
                .map(|(at, _)| at)
                .collect();
            (pair, times)
        };
        let (_, unpaced) = round_two(false);
        assert_eq!(unpaced.len(), 20);
        assert!(unpaced.iter().all(|&t| t == unpaced[0]), "without pacing the window leaves in one burst");

        let (pair, times) = round_two(true);
        assert_eq!(times.len(), 20);
        let gaps: Vec<SimTime> = times.windows(2).map(|w| w[1] - w[0]).collect();
        // The expected gap: one segment at 200 % (slow start: cwnd < ssthresh / 2) of
        // cwnd / srtt, with cwnd 20 segments (it grew by the ten ACKs of round one, which all
        // arrived before the second segment of the round left) and srtt the path's RTT.
        let srtt = pair.s.srtt().unwrap();
        assert_eq!(srtt, rtt);
        let cwnd = 20_000u64;
        let want = 1000 * 100 * srtt / (200 * cwnd);
        assert_eq!(want, 2_500_000, "srtt / 40: the window spreads over half the RTT");
        // The first gap is shorter: the round's first segment left long after its pacing time
        // (the idle wait for the ACKs), and Linux credits up to half an interval for such
        // lateness (tcp_update_skb_after_send); its interval used the rate of the first ACK
        // (cwnd 11 segments).
        let first = 1000 * 100 * srtt / (200 * 11_000);
        assert_eq!(gaps[0], first - first / 2);
        // Every later gap is the interval; the tolerance of 1 ns is the floor of the integer
        // division len * 100 srtt / (ratio max(cwnd, flight)).
        for (i, &g) in gaps[1..].iter().enumerate() {
            assert!(g.abs_diff(want) <= 1, "gap {} = {g} ns, want {want}", i + 1);
        }
        let span = times[19] - times[0];
        assert!(span > rtt * 45 / 100 && span < rtt / 2, "the window spans about half an RTT: {span}");
    }

    #[test]
    fn pacing_never_sends_a_segment_before_its_time_and_repairs_losses() {
        // Two losses (a fast retransmit and a partial ACK) and enough data for congestion
        // avoidance: every event sends at most one paced segment, and never before the
        // pacing time it found (an RTO's retransmission excepted, as in Linux).
        // Also with SACK recovery and PRR, whose sends the pacing timer releases.
        for p in [paced(true), TcpParams { sack: true, prr: true, ..paced(true) }] {
            let (pair, events) = path_transfer(p.clone(), 20 * NS_PER_MS, 200_000, &[30_001, 33_001]);
            assert_eq!(pair.s.acked_bytes(), 200_000);
            assert!(pair.s.stats.fast_retransmits >= 1);
            let mut retx = 0;
            for e in &events {
                retx += e.data.iter().filter(|p| p.kind == PacketKind::Retx).count();
                if e.rto {
                    continue;
                }
                assert!(e.at >= e.pace_next_before, "sent at {} before its time {} (sack {})", e.at, e.pace_next_before, p.sack);
                // Data segments 1 to 9 do not move the pacing time; from the tenth on each does.
                let unpaced = 9u64.saturating_sub(e.segs_before) as usize;
                assert!(e.data.len() <= unpaced + 1, "{} segments at {} (segs before {}, sack {})", e.data.len(), e.at, e.segs_before, p.sack);
            }
            assert!(retx >= 2, "both holes retransmitted: {retx} (sack {})", p.sack);
        }
        // The same transfer without pacing sends bursts.
        let (_, unpaced) = path_transfer(paced(false), 20 * NS_PER_MS, 200_000, &[30_001, 33_001]);
        assert!(unpaced[1..].iter().any(|e| e.data.len() > 1));
    }

    #[test]
    fn the_pacing_timer_wakes_the_sender_and_it_sends() {
        let mut pair = Pair::new(paced(true));
        pair.now = 10 * NS_PER_MS;
        let syn = pair.on(false, |e, ctx| e.connect(ctx));
        pair.now = 20 * NS_PER_MS;
        let synack = pair.deliver(true, &syn[0]);
        pair.now = 30 * NS_PER_MS;
        let ack = pair.deliver(false, &synack[0]);
        pair.now = 40 * NS_PER_MS;
        pair.deliver(true, &ack[0]);
        assert_eq!(pair.s.srtt(), Some(20 * NS_PER_MS));
        assert_eq!(pair.s.pace_at, OFF, "nothing held yet");
        // IW 10: all ten leave now; the tenth sets the next time (cwnd 10 segments, 200 %).
        let sent = pair.on(true, |e, _| e.write(12_000));
        assert_eq!(sent.len(), 10);
        let interval = 1000 * 100 * 20 * NS_PER_MS / (200 * 10_000);
        assert_eq!(pair.s.pace_next, pair.now + interval);
        // An ACK of two segments opens the window, but pacing holds what it releases.
        let out = pair.deliver(true, &ack_to_server(2001, 0));
        assert!(out.iter().all(|p| p.payload == 0), "held: {out:?}");
        assert_eq!(pair.s.pace_at, pair.s.pace_next, "it asks to be woken at the pacing time");
        // A flush one nanosecond early sends nothing.
        pair.now = pair.s.pace_at - 1;
        assert!(pair.on(true, |_, _| {}).is_empty());
        // The timer: one segment, and a new wake-up one interval later at the rate the ACK
        // set: max(cwnd, FlightSize) = cwnd, 11 segments, and the srtt with the ACK's sample.
        assert_eq!(pair.s.window().cwnd, 11_000);
        let srtt = pair.s.srtt().unwrap();
        pair.now = pair.s.pace_at;
        let woke = pair.on(true, |e, _| e.on_pace());
        assert_eq!(woke.len(), 1);
        assert_eq!((woke[0].kind, woke[0].seq), (PacketKind::Data, 10_001));
        let next = 1000 * 100 * srtt / (200 * 11_000);
        assert_eq!(pair.s.pace_next, pair.now + next);
        // The window allows two more (cwnd 11, 9 in flight): the next waits for its time.
        assert_eq!(pair.s.pace_at, pair.s.pace_next);
    }

    #[test]
    fn the_pacing_rate_is_linux_s() {
        // Oracle: Linux's tcp_update_pacing_rate in its own units (srtt_us is srtt in
        // microseconds << 3, the rate in bytes per second, windows in segments) and the
        // interval tcp_update_skb_after_send derives from it. Ours works in nanoseconds and
        // bytes: the two agree within the rounding of srtt to 1/8 us and of the rate to a
        // whole byte per second, far below 0.1 % at these values.
        let linux = |mss: u64, cwnd: u64, ssthresh: u64, packets_out: u64, srtt_ns: u64| -> u64 {
            let srtt_us = (srtt_ns / 1000) << 3;
            let mut rate = mss * ((1_000_000 / 100) << 3);
            rate *= if cwnd < ssthresh / 2 { 200 } else { 120 };
            rate *= cwnd.max(packets_out);
            rate /= srtt_us;
            mss * 1_000_000_000 / rate
        };
        for (cwnd, ssthresh, out, srtt_ms) in [(10, u64::MAX / 1000, 4, 100), (20, 30, 5, 100), (14, 30, 20, 37), (40, 80, 0, 3)] {
            let mut pair = Pair::new(paced(true));
            pair.establish();
            pair.s.rtt = RttEstimator::new(params().initial_rto, 0, 60 * NS_PER_S, 0);
            pair.s.rtt.sample(srtt_ms * NS_PER_MS);
            pair.s.w.cwnd = cwnd * 1000;
            pair.s.w.ssthresh = ssthresh.saturating_mul(1000);
            pair.s.snd_max = pair.s.snd_una + out * 1000;
            pair.s.update_pacing_rate(&pair.p);
            let ours = (1000u128 * pair.s.pace_num as u128 / pair.s.pace_den as u128) as u64;
            let theirs = linux(1000, cwnd, ssthresh, out, srtt_ms * NS_PER_MS);
            assert!(ours.abs_diff(theirs) * 1000 <= theirs, "cwnd {cwnd} ssthresh {ssthresh}: {ours} vs {theirs}");
        }
        // Before an RTT sample (a retransmitted SYN gives none, Karn) nothing is paced.
        let mut pair = Pair::new(paced(true));
        pair.s.update_pacing_rate(&pair.p);
        assert_eq!(pair.s.pace_den, 0);
        // With pacing off no rate is kept.
        let mut pair = Pair::new(paced(false));
        pair.establish();
        assert_eq!((pair.s.pace_num, pair.s.pace_den), (0, 0));
    }

    #[test]
    fn a_timeout_retransmission_is_not_held_by_pacing() {
        // Linux's tcp_retransmit_timer sends the head without tcp_pacing_check; what follows
        // in go-back-N is paced again.
        let mut pair = Pair::new(TcpParams { initial_window_segments: 2, ..paced(true) });
        pair.establish();
        pair.now = NS_PER_MS;
        let sent = pair.on(true, |e, _| e.write(20_000));
        assert_eq!(sent.len(), 2);
        pair.now = pair.s.rto_at;
        pair.s.pace_next = pair.now + NS_PER_S; // far ahead, as after a long burst
        let out = pair.on(true, |e, ctx| {
            e.on_rto(ctx);
        });
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].kind, out[0].seq), (PacketKind::Retx, 1));
        assert!(pair.s.pace_next >= pair.now + NS_PER_S, "the pacing time is kept");
    }

    // ----- SACK (RFC 2018, RFC 2883), RFC 6675 recovery, PRR (RFC 6937) -----

    fn sack_params(prr: bool) -> TcpParams {
        TcpParams { sack: true, prr, ..params() }
    }

    #[test]
    fn sack_is_negotiated_only_when_both_ends_offer_it() {
        for (client, server) in [(true, true), (true, false), (false, true)] {
            let mut pair = Pair::new(TcpParams { sack: client, ..params() });
            let syn = pair.on(false, |e, ctx| e.connect(ctx));
            assert_eq!(syn[0].has(flags::SACK_PERM), client);
            pair.p.sack = server;
            let synack = pair.deliver(true, &syn[0]);
            assert_eq!(synack[0].has(flags::SACK_PERM), client && server);
            pair.p.sack = client;
            pair.deliver(false, &synack[0]);
            assert_eq!((pair.c.sack_ok, pair.s.sack_ok), (client && server, client && server));
        }
    }

    #[test]
    fn the_receiver_reports_blocks_and_a_duplicate_as_dsack() {
        let mut pair = Pair::new(sack_params(false));
        pair.establish();
        let data = pair.on(true, |e, _| e.write(5000));
        assert_eq!(data.len(), 2, "initial window of two segments");
        let more: Vec<Seg> = vec![];
        let _ = more;
        // The first segment is lost: the second is out of order and reported in a block.
        let ack = pair.deliver_seg(false, &data[1]);
        assert_eq!(ack[0].ack, 1);
        assert_eq!(ack[0].sack.as_slice(), &[(1001, 2001)]);
        assert_eq!(ack[0].size, 40 + 12, "SACK option: 2 + 8 bytes and two NOPs");
        // The same segment again: a D-SACK block first, then the block that holds it.
        let ack = pair.deliver_seg(false, &data[1]);
        assert_eq!(ack[0].sack.as_slice(), &[(1001, 2001), (1001, 2001)][..1]);
        // The hole filled: a cumulative ACK without blocks.
        let ack = pair.deliver_seg(false, &data[0]);
        assert_eq!((ack[0].ack, ack[0].sack.len), (2001, 0));
        assert!(!ack[0].has(flags::SACK));
        // A segment below the cumulative ACK: D-SACK below it (RFC 2883 section 4.1.1).
        let ack = pair.deliver_seg(false, &data[0]);
        assert_eq!(ack[0].sack.as_slice(), &[(1, 1001)]);
    }

    /// The server sends `bytes` with an initial window of 10 segments over a scripted network
    /// that loses one copy of a data segment per entry of `lost` (first copies first);
    /// delivery goes in rounds, everything sent in answer to one round travelling in the next,
    /// so two rounds make a round trip. Returns the round trip in which each retransmission
    /// arrived (the first window arrives in round trip 0) and the server's counters.
    fn retransmission_rounds(p: TcpParams, lost: &[u64], bytes: u64) -> (Vec<(u32, u64)>, EndpointStats) {
        let mut pair = Pair::new(TcpParams { initial_window_segments: 10, ..p });
        pair.establish();
        let mut lost = lost.to_vec();
        let mut rounds = Vec::new();
        let mut flight: Vec<(bool, Seg)> = pair.on(true, |e, _| e.write(bytes)).into_iter().map(|s| (false, s)).collect();
        for round in 0..100 {
            let mut next = Vec::new();
            for (to_server, seg) in flight {
                if !to_server && seg.payload > 0 {
                    if let Some(i) = lost.iter().position(|&l| l == seg.seq) {
                        lost.remove(i);
                        continue;
                    }
                    if seg.kind == PacketKind::Retx {
                        rounds.push((round / 2, seg.seq));
                    }
                }
                next.extend(pair.deliver_seg(to_server, &seg).into_iter().map(|s| (!to_server, s)));
            }
            if next.is_empty() {
                if pair.s.acked_bytes() == bytes {
                    return (rounds, pair.s.stats);
                }
                // Nothing in transit: the earliest timer fires.
                let at = pair.s.retransmit_timer_at().min(pair.c.delack_at);
                assert!(at != OFF, "stalled");
                pair.now = at;
                next = if at == pair.c.delack_at {
                    pair.on(false, |e, _| e.on_delack()).into_iter().map(|s| (true, s)).collect()
                } else {
                    pair.on(true, |e, ctx| {
                        e.on_rto(ctx);
                    })
                    .into_iter()
                    .map(|s| (false, s))
                    .collect()
                };
            }
            flight = next;
        }
        panic!("not done in 100 rounds");
    }

    #[test]
    fn sack_recovery_repairs_three_losses_in_one_round_trip_where_newreno_needs_three() {
        let lost = [1, 3001, 6001]; // segments 1, 4 and 7 of a 10-segment window
        let (newreno, s) = retransmission_rounds(params(), &lost, 20_000);
        assert_eq!(newreno, vec![(1, 1), (2, 3001), (3, 6001)], "NewReno: one hole per round trip");
        assert_eq!(s.rtos, 0);
        for prr in [true, false] {
            let (sack, s) = retransmission_rounds(sack_params(prr), &lost, 20_000);
            assert_eq!(sack, vec![(1, 1), (1, 3001), (1, 6001)], "SACK (prr = {prr}): all three in the first round trip");
            assert_eq!((s.rtos, s.fast_retransmits, s.loss_reductions), (0, 1, 1));
        }
    }

    #[test]
    fn prr_sends_as_in_rfc6937s_example() {
        // RFC 6937 section 3.1: cwnd = FlightSize = 20 segments, segment 0 lost, limited
        // transmit on; the table shows what each of the 19 duplicate ACKs of the first round
        // trip releases. ssthresh = 10, RecoverFS = 20: new data on every second ACK, so the
        // flight falls to ssthresh over the round trip instead of pausing for half of it.
        let p = TcpParams { initial_window_segments: 20, limited_transmit: true, ..sack_params(true) };
        let mut pair = Pair::new(p);
        pair.establish();
        let window = pair.on(true, |e, _| e.write(100_000));
        assert_eq!(window.len(), 20);
        let mut sent = Vec::new();
        for (i, seg) in window[1..].iter().enumerate() {
            let acks = pair.deliver_seg(false, seg);
            assert_eq!(acks.len(), 1);
            let out = pair.deliver_seg(true, &acks[0]);
            for s in out {
                sent.push((i + 1, if s.kind == PacketKind::Retx { 'R' } else { 'N' }));
            }
        }
        // The RFC's row: N N R, then N on ACKs 5, 7, ..., 15; ours continues with 17. (The
        // RFC's sent row puts its last two on ACKs 18 and 19, but its own pipe row - 12 after
        // ACK 17, 11 and 10 after 18 and 19 - needs a segment sent on 17 and none after, which
        // is what RFC 6937's formula gives: CEIL(15 * 10 / 20) - 7 = 1 on ACK 17, and pipe
        // reaches ssthresh on 19.)
        let expected: Vec<(usize, char)> =
            [(1, 'N'), (2, 'N'), (3, 'R'), (5, 'N'), (7, 'N'), (9, 'N'), (11, 'N'), (13, 'N'), (15, 'N'), (17, 'N')].to_vec();
        assert_eq!(sent, expected);
        let s = &pair.s;
        assert_eq!(s.window().ssthresh, 10_000);
        assert_eq!(s.board.pipe(s.snd_una, s.snd_max, 1000), 10_000, "the flight is ssthresh at the end of the round trip");
    }

    #[test]
    fn after_a_timeout_sack_resends_only_what_was_not_sacked() {
        // Segment 1 and its fast retransmission are lost: the timer fires; go-back-N skips the
        // segments the receiver SACKed.
        let (retx, s) = retransmission_rounds(sack_params(true), &[1, 1, 5001], 10_000);
        assert_eq!(s.rtos, 1);
        // Recovery repaired 5001 (and sent RFC 6675's rescue retransmission of the last
        // segment); after the timeout only segment 1 goes again: all the others are SACKed.
        let after_rto: Vec<u64> = retx.iter().filter(|r| r.0 >= 2).map(|r| r.1).collect();
        assert_eq!(after_rto, vec![1], "{retx:?}");
        assert!(retx.contains(&(1, 5001)), "{retx:?}");
    }

    /// A wire with a fixed one-way delay and no rate limit: segments arrive in the order sent,
    /// `one_way` after they were sent.
    struct Wire {
        /// (arrival, order) -> (to_server, segment)
        q: std::collections::BTreeMap<(SimTime, u64), (bool, Seg)>,
        order: u64,
        one_way: SimTime,
    }

    impl Wire {
        fn new(one_way: SimTime) -> Wire {
            Wire { q: std::collections::BTreeMap::new(), order: 0, one_way }
        }
        fn send(&mut self, at: SimTime, to_server: bool, segs: Vec<Seg>) {
            for s in segs {
                self.order += 1;
                self.q.insert((at + self.one_way, self.order), (to_server, s));
            }
        }
        /// When the next segment arrives (`OFF`: none on the wire).
        fn next_at(&self) -> SimTime {
            self.q.keys().next().map_or(OFF, |k| k.0)
        }
        fn pop(&mut self) -> (bool, Seg) {
            self.q.pop_first().unwrap().1
        }
    }

    /// The server sends `bytes` to the client over a network with `one_way` delay each way that
    /// loses one copy of a data segment per entry of `lost`; every timer of both ends runs.
    /// Returns the server's counters, its retransmissions (time, seq) and when it processed
    /// each ACK.
    fn transfer_with_delay(p: TcpParams, lost: &[u64], bytes: u64, one_way: SimTime) -> (EndpointStats, Vec<(SimTime, u64)>, Vec<SimTime>) {
        let mut pair = Pair::new(p);
        let mut lost = lost.to_vec();
        let (mut retx, mut acks_at) = (Vec::new(), Vec::new());
        let mut wire = Wire::new(one_way);
        let syn = pair.on(false, |e, ctx| e.connect(ctx));
        wire.send(0, true, syn);
        let mut written = false;
        while pair.s.acked_bytes() < bytes || !written {
            let next_pkt = wire.next_at();
            let timers = [pair.s.retransmit_timer_at(), pair.c.retransmit_timer_at(), pair.c.delack_at, pair.s.delack_at];
            let next_timer = timers.iter().copied().min().unwrap();
            let now = next_pkt.min(next_timer);
            assert!(now < 60 * NS_PER_S, "stalled");
            pair.now = now;
            if next_pkt <= next_timer {
                let (to_server, seg) = wire.pop();
                if !to_server && seg.payload > 0 {
                    if let Some(i) = lost.iter().position(|&l| l == seg.seq) {
                        lost.remove(i);
                        continue;
                    }
                    if seg.kind == PacketKind::Retx {
                        retx.push((now, seg.seq));
                    }
                }
                if to_server && seg.has(flags::ACK) && pair.s.state == TcpState::Established {
                    acks_at.push(now);
                }
                let out = pair.deliver_seg(to_server, &seg);
                wire.send(now, !to_server, out);
            } else {
                let (server, delack) = match timers.iter().position(|&t| t == now).unwrap() {
                    0 => (true, false),
                    1 => (false, false),
                    2 => (false, true),
                    _ => (true, true),
                };
                let out = pair.on(server, |e, ctx| {
                    if delack {
                        e.on_delack();
                    } else {
                        e.on_rto(ctx);
                    }
                });
                wire.send(now, !server, out);
            }
            if !written && pair.s.state == TcpState::Established {
                written = true;
                let out = pair.on(true, |e, _| e.write(bytes));
                wire.send(now, false, out);
            }
        }
        (pair.s.stats, retx, acks_at)
    }

    #[test]
    fn a_tail_loss_probe_fires_at_its_timeout_and_repairs_a_lost_last_segment_without_an_rto() {
        const MS: SimTime = NS_PER_MS;
        let base = TcpParams { initial_window_segments: 10, ..sack_params(true) };
        // Ten segments, the last (byte 9001) lost; 50 ms each way.
        let (s, retx, _) = transfer_with_delay(base.clone(), &[9001], 10_000, 50 * MS);
        assert_eq!((s.rtos, retx.len()), (1, 1), "without TLP the timer repairs it");
        let (s, retx, acks_at) = transfer_with_delay(TcpParams { rack_tlp: true, ..base }, &[9001], 10_000, 50 * MS);
        assert_eq!((s.rtos, s.tlp_probes), (0, 1), "{retx:?}");
        assert_eq!(retx.iter().map(|r| r.1).collect::<Vec<_>>(), vec![9001]);
        // The probe goes at the PTO after the last ACK: 2 SRTT plus the worst-case delayed-ACK
        // time with one segment in flight (RFC 8985 7.2). SRTT: the handshake's and the data's
        // samples, all 100 ms here except those that waited for a delayed ACK.
        let probe_at = retx[0].0;
        let last_ack = *acks_at.iter().rfind(|&&t| t < probe_at).unwrap();
        let pto = probe_at - last_ack;
        assert!((2 * 100 * MS + 200 * MS..2 * 200 * MS + 200 * MS).contains(&pto), "PTO {} ms", pto / MS);
        assert!(probe_at < last_ack + NS_PER_S, "before the RTO (min 1 s) would fire");
    }

    #[test]
    fn rack_marks_losses_by_time_and_recovers_them_in_one_round_trip() {
        const MS: SimTime = NS_PER_MS;
        let p = TcpParams { initial_window_segments: 10, rack_tlp: true, ..sack_params(true) };
        let (s, retx, _) = transfer_with_delay(p, &[1, 3001, 6001], 20_000, 50 * MS);
        assert_eq!((s.rtos, s.fast_retransmits, s.loss_reductions), (0, 1, 1));
        let seqs: Vec<u64> = retx.iter().map(|r| r.1).collect();
        assert_eq!(seqs, vec![1, 3001, 6001]);
        assert!(retx[2].0 - retx[0].0 < 100 * MS, "all three within one round trip: {retx:?}");
    }

    fn dctcp(g: f64, alpha_init: f64) -> TcpParams {
        TcpParams { ecn: true, cc: CcKind::Dctcp { beta: 0.5, dctcp: crate::tcp::dctcp::DctcpParams { g, alpha_init } }, ..params() }
    }

    /// The ACKs (ack number, ECE) a receiver sends for data segments marked by `ce` (one per
    /// segment, in order), then at its delayed-ACK timer.
    fn echoes(p: TcpParams, ce: &[bool]) -> Vec<Vec<(u64, bool)>> {
        let mut pair = Pair::new(p);
        pair.establish();
        let mut out = Vec::new();
        for (k, &c) in ce.iter().enumerate() {
            let seg = data_to_client(1 + 1000 * k as u64, if c { Ecn::Ce } else { Ecn::Ect0 }, 0);
            out.push(pair.deliver(false, &seg).iter().map(|a| (a.ack, a.has(flags::ECE))).collect());
        }
        pair.now = pair.c.delack_at;
        out.push(pair.on(false, |e, _| e.on_delack()).iter().map(|a| (a.ack, a.has(flags::ECE))).collect());
        out
    }

    #[test]
    fn dctcp_receiver_echoes_the_ce_state_of_every_segment_with_delayed_acks() {
        // RFC 8257 section 3.2, Figure 1: one ACK per two segments while the CE state holds;
        // when it changes, the segment before the change is acknowledged at once with the old
        // ECE, and the changing segment waits for the next ACK.
        let (n, c) = (false, true);
        let got = echoes(dctcp(1.0 / 16.0, 1.0), &[n, n, c, c, c, n, n, c, n]);
        let want: Vec<Vec<(u64, bool)>> = vec![
            vec![],
            vec![(2001, false)],
            vec![], // the state changes with nothing unacknowledged: nothing to send early
            vec![(4001, true)],
            vec![],
            vec![(5001, true)], // segment 5 (CE) acknowledged alone, before segment 6 counts
            vec![(7001, false)],
            vec![],
            vec![(8001, true)],
            vec![(9001, false)], // the delayed-ACK timer: segment 9, not marked
        ];
        assert_eq!(got, want);
        // RFC 3168's receiver latches the echo from the first mark until a CWR: every ACK from
        // segment 3 on says ECE, unmarked data included.
        let classic = echoes(TcpParams { ecn: true, ..params() }, &[n, n, c, c, c, n, n, c, n]);
        let flat: Vec<(u64, bool)> = classic.into_iter().flatten().collect();
        assert_eq!(flat, vec![(2001, false), (4001, true), (6001, true), (8001, true), (9001, true)]);
        // CWR does not clear DCTCP's state: a CE segment with CWR keeps the echo on.
        let mut pair = Pair::new(dctcp(1.0 / 16.0, 1.0));
        pair.establish();
        pair.deliver(false, &data_to_client(1, Ecn::Ce, 0));
        let a = pair.deliver(false, &data_to_client(1001, Ecn::Ce, flags::CWR));
        assert_eq!((a[0].ack, a[0].has(flags::ECE)), (2001, true));
        // A Not-ECT segment (a retransmission) leaves the state as it is.
        pair.deliver(false, &data_to_client(2001, Ecn::NotEct, 0));
        let a = pair.deliver(false, &data_to_client(3001, Ecn::Ce, 0));
        assert_eq!((a.len(), a[0].ack, a[0].has(flags::ECE)), (1, 4001, true));
    }

    #[test]
    fn dctcp_receiver_under_linux_acks_the_changing_segment_at_once_too() {
        // Linux (dctcp_ece_ack_update): the earlier segment with the old ECE, then the segment
        // that changed the state at once (ICSK_ACK_NOW), with the new one.
        let p = TcpParams { delayed_ack: 40 * NS_PER_MS, delayed_ack_policy: DelayedAckPolicy::Linux, ..dctcp(1.0 / 16.0, 1.0) };
        let mut pair = Pair::new(p);
        pair.c.rcv_wnd = 2000; // one quick ACK at the start
        pair.establish();
        pair.deliver(false, &data_to_client(1, Ecn::Ect0, 0)); // the quick ACK
        assert!(pair.deliver(false, &data_to_client(1001, Ecn::Ect0, 0)).is_empty(), "delayed");
        let a = pair.deliver(false, &data_to_client(2001, Ecn::Ce, 0));
        let got: Vec<(u64, bool)> = a.iter().map(|a| (a.ack, a.has(flags::ECE))).collect();
        assert_eq!(got, vec![(2001, false), (3001, true)]);
    }

    #[test]
    fn dctcp_sender_reduces_by_half_alpha_once_per_window_and_sends_ect_and_cwr() {
        let g = 1.0 / 16.0;
        let mut pair = Pair::new(TcpParams { initial_window_segments: 10, ..dctcp(g, 0.0) });
        pair.establish();
        let sent = pair.on(true, |e, _| e.write(40_000));
        assert_eq!(sent.len(), 10);
        assert!(sent.iter().all(|p| p.ecn == Ecn::Ect0));
        let ece = |ack: u64| ack_to_server(ack, flags::ECE);
        // The first ACK ends the first observation window (all of its 2000 bytes marked):
        // alpha = g, and the echo then cuts cwnd to cwnd (1 - alpha / 2), not to half.
        let out = pair.deliver(true, &ece(2001));
        assert_eq!(pair.s.dctcp_alpha(), Some(g));
        let cwnd1 = (10_000.0 * (1.0 - g / 2.0)) as u64;
        assert_eq!((pair.s.window().cwnd, pair.s.window().ssthresh), (cwnd1, cwnd1));
        assert_eq!(pair.s.stats.ecn_reductions, 1);
        // 8000 bytes in flight, cwnd 9687: one more segment, and it carries CWR (RFC 8257 3.3
        // keeps RFC 3168's CWR).
        assert_eq!(out.len(), 1);
        assert!(out[0].has(flags::CWR) && out[0].seq == 10_001);
        // A second echo in the same window of data: no second reduction (and no growth).
        pair.deliver(true, &ece(4001));
        assert_eq!(pair.s.window().cwnd, cwnd1);
        assert_eq!(pair.s.stats.ecn_reductions, 1);
        let plain = pair.deliver(true, &ack_to_server(8001, 0));
        assert!(plain.iter().all(|p| !p.has(flags::CWR)), "CWR once");
        let cwnd2 = pair.s.window().cwnd;
        assert!(cwnd2 > cwnd1, "congestion avoidance between echoes");
        // An echo beyond the reduced window (snd_max was 10001): the observation window that
        // started at the first ACK (SND.NXT 10001) ends too, with 9000 bytes acked, 5000 of
        // them marked; the reduction uses that alpha.
        pair.deliver(true, &ece(11_001));
        let alpha = (1.0 - g) * g + g * 5000.0 / 9000.0;
        assert!((pair.s.dctcp_alpha().unwrap() - alpha).abs() < 1e-12, "{:?} vs {alpha}", pair.s.dctcp_alpha());
        assert_eq!(pair.s.window().cwnd, (cwnd2 as f64 * (1.0 - alpha / 2.0)) as u64);
        assert_eq!(pair.s.stats.ecn_reductions, 2);
    }

    #[test]
    fn dctcp_sender_sends_ect1_when_set_and_without_ecn_runs_as_newreno() {
        let mut pair = Pair::new(TcpParams { initial_window_segments: 4, ect_codepoint: Ecn::Ect1, ..dctcp(1.0 / 16.0, 1.0) });
        pair.establish();
        let sent = pair.on(true, |e, _| e.write(8000));
        assert!(sent.iter().all(|p| p.ecn == Ecn::Ect1));
        let mut pair = Pair::new(TcpParams { ecn: false, initial_window_segments: 4, ..dctcp(1.0 / 16.0, 1.0) });
        pair.establish();
        let sent = pair.on(true, |e, _| e.write(8000));
        assert!(sent.iter().all(|p| p.ecn == Ecn::NotEct));
    }

    #[test]
    fn dctcp_alpha_converges_to_the_marking_probability_end_to_end() {
        // A zero-delay loop through the real receiver; each data segment is CE-marked with
        // probability 0.1. The exact echo lets the sender count marked bytes exactly, so alpha
        // (g = 1/16) settles at 0.1. With RFC 3168's latched echo the sender would count far
        // more (every ACK until its CWR arrives).
        let mut pair = Pair::new(TcpParams { initial_window_segments: 10, ..dctcp(1.0 / 16.0, 1.0) });
        pair.establish();
        let mut rng = crate::engine::rng::Rng::from_seed(11);
        let bytes = 4_000_000;
        let mut wire: std::collections::VecDeque<(bool, Seg)> = pair.on(true, |e, _| e.write(bytes)).into_iter().map(|p| (false, p)).collect();
        let (mut sum, mut n, mut marked, mut data) = (0.0, 0u64, 0u64, 0u64);
        loop {
            while let Some((to_server, mut seg)) = wire.pop_front() {
                if !to_server && seg.payload > 0 {
                    data += 1;
                    if rng.uniform() < 0.1 {
                        seg.pkt.ecn = Ecn::Ce;
                        marked += 1;
                    }
                }
                let out = pair.deliver_seg(to_server, &seg);
                if to_server && pair.s.acked_bytes() > bytes / 2 {
                    sum += pair.s.dctcp_alpha().unwrap();
                    n += 1;
                }
                wire.extend(out.into_iter().map(|p| (!to_server, p)));
            }
            if pair.s.acked_bytes() == bytes {
                break;
            }
            let next = pair.s.rto_at.min(pair.c.delack_at);
            assert!(next != OFF && next < 600 * NS_PER_S, "stalled");
            pair.now = next;
            let to_server = next == pair.c.delack_at;
            let out = if to_server { pair.on(false, |e, _| e.on_delack()) } else { pair.on(true, |e, ctx| { e.on_rto(ctx); }) };
            wire.extend(out.into_iter().map(|p| (to_server, p)));
        }
        let f = marked as f64 / data as f64;
        let mean = sum / n as f64;
        eprintln!("marked fraction {f:.4} of {data} segments; mean alpha over the second half {mean:.4}; reductions {}", pair.s.stats.ecn_reductions);
        assert!((f - 0.1).abs() < 0.01);
        assert!((mean - 0.1).abs() < 0.015, "mean alpha {mean}");
        assert_eq!(pair.s.stats.rtos, 0);
    }

    fn accecn(p: TcpParams) -> TcpParams {
        TcpParams { ecn: true, ecn_feedback: EcnFeedback::Accecn, ..p }
    }

    /// The handshake between a client with `pc` and a server with `ps`; returns both ends, the
    /// SYN, the SYN-ACK and what the client sent on the SYN-ACK (the request is written then).
    fn handshake(pc: &TcpParams, ps: &TcpParams) -> (Endpoint, Endpoint, Packet, Packet, Vec<Packet>) {
        let mut pool = PacketPool::new();
        let mut c = Endpoint::new(Role::Client, 0, 0, 64_000, pc);
        let mut s = Endpoint::new(Role::Server, 0, 0, 64_000, ps);
        let mut run = |e: &mut Endpoint, p: &TcpParams, f: &mut dyn FnMut(&mut Endpoint, &mut SegmentCtx)| -> Vec<Packet> {
            let mut out = Vec::new();
            let mut ctx = SegmentCtx { now: 0, pool: &mut pool, out: &mut out, params: p };
            f(e, &mut ctx);
            e.flush(&mut ctx);
            let ids = std::mem::take(ctx.out);
            ids.iter().map(|&id| *ctx.pool.get(id)).collect()
        };
        let syn = run(&mut c, pc, &mut |e, ctx| e.connect(ctx))[0];
        let synack = run(&mut s, ps, &mut |e, ctx| {
            e.on_segment(&syn, &SackBlocks::EMPTY, ctx);
        })[0];
        let after = run(&mut c, pc, &mut |e, ctx| {
            e.on_segment(&synack, &SackBlocks::EMPTY, ctx);
            e.write(1000);
        });
        for a in &after {
            run(&mut s, ps, &mut |e, ctx| {
                e.on_segment(a, &SackBlocks::EMPTY, ctx);
            });
        }
        (c, s, syn, synack, after)
    }

    #[test]
    fn accecn_negotiation_falls_back_by_rfc9768_table_2() {
        // (client, server) in {no ECN, RFC 3168, AccECN}: AccECN only when both ask for it,
        // RFC 3168's ECN when both have ECN and one has only RFC 3168 (Table 2's second and
        // third blocks), none when either has no ECN.
        let off = params();
        let classic = TcpParams { ecn: true, ..params() };
        let acc = accecn(params());
        let sides = [("off", &off), ("rfc3168", &classic), ("accecn", &acc)];
        for (cn, pc) in sides {
            for (sn, ps) in sides {
                let (c, s, syn, synack, after) = handshake(pc, ps);
                let want = match (cn, sn) {
                    ("off", _) | (_, "off") => "off",
                    ("accecn", "accecn") => "accecn",
                    _ => "rfc3168",
                };
                let got = |e: &Endpoint| match (e.ecn_negotiated(), e.accecn_negotiated()) {
                    (false, _) => "off",
                    (true, false) => "rfc3168",
                    (true, true) => "accecn",
                };
                assert_eq!((got(&c), got(&s)), (want, want), "client {cn}, server {sn}");
                let ace = |p: &Packet| (p.has(flags::AE), p.has(flags::CWR), p.has(flags::ECE));
                assert_eq!(ace(&syn), match cn { "off" => (false, false, false), "rfc3168" => (false, true, true), _ => (true, true, true) });
                let expect_synack = match (want, sn) {
                    ("off", _) => (false, false, false),
                    ("accecn", _) => (false, true, false), // Not-ECT SYN fed back as 0b010
                    _ => (false, false, true),
                };
                assert_eq!(ace(&synack), expect_synack, "client {cn}, server {sn}");
                if want == "accecn" {
                    // A pure ACK with the handshake encoding of the Not-ECT SYN-ACK (Table 3),
                    // then the request carrying r.cep = 5 (0b101).
                    assert_eq!(after.len(), 2);
                    assert_eq!((after[0].payload, ace(&after[0])), (0, (false, true, false)));
                    assert_eq!((after[1].payload, ace(&after[1])), (1000, (true, false, true)));
                    assert_eq!(after[1].ecn, Ecn::Ect0);
                    assert_eq!(s.accecn_ce_counts(), Some((0, 0)));
                } else {
                    assert_eq!(after.len(), 1, "the request rides on the handshake ACK");
                }
            }
        }
        // A server that reflects the SYN's flags is broken (Table 2's last block): no ECN.
        let mut fb = Feedback::default();
        let mut reflected = handshake(&acc, &acc).2;
        reflected.flags |= flags::ACK;
        fb.accept_synack(true, true, &reflected);
        assert!(!fb.negotiated);
    }

    #[test]
    fn accecn_feeds_back_the_handshake_ip_ecn_fields() {
        // The SYN's codepoint comes back on the SYN-ACK (Table 2), the SYN-ACK's on the pure
        // ACK (Table 3); a CE SYN-ACK raises the client's r.cep to 6 and tells the server.
        let p = accecn(TcpParams { ecn_plus: EcnPlus::Rfc5562, ..params() });
        let mut c = Endpoint::new(Role::Client, 0, 0, 64_000, &p);
        let mut s = Endpoint::new(Role::Server, 0, 0, 64_000, &p);
        let mut pool = PacketPool::new();
        let mut out = Vec::new();
        let mut ctx = SegmentCtx { now: 0, pool: &mut pool, out: &mut out, params: &p };
        c.connect(&mut ctx);
        let mut syn = *ctx.pool.get(ctx.out[0]);
        syn.ecn = Ecn::Ect0; // as if the SYN had been sent ECT(0) (ECN++)
        ctx.out.clear();
        s.on_segment(&syn, &SackBlocks::EMPTY, &mut ctx);
        s.flush(&mut ctx);
        let mut synack = *ctx.pool.get(ctx.out[0]);
        assert_eq!((synack.has(flags::AE), synack.has(flags::CWR), synack.has(flags::ECE)), (true, false, false));
        assert_eq!(synack.ecn, Ecn::Ect0, "ECN+ sends the SYN-ACK ECT(0)");
        synack.ecn = Ecn::Ce;
        ctx.out.clear();
        c.on_segment(&synack, &SackBlocks::EMPTY, &mut ctx);
        c.flush(&mut ctx);
        let ack = *ctx.pool.get(ctx.out[0]);
        assert_eq!((ack.payload, accecn::ace_of(&ack)), (0, 0b110));
        assert_eq!(c.accecn_ce_counts(), Some((0, 1)));
        ctx.out.clear();
        s.on_segment(&ack, &SackBlocks::EMPTY, &mut ctx);
        assert_eq!(s.accecn_ce_counts(), Some((1, 0)));
        assert_eq!(s.window().cwnd, 1000, "RFC 5562's response: one segment");
        // Later ACKs carry the counter (6 = 0b110 from now on).
        c.write(1000);
        ctx.out.clear();
        c.flush(&mut ctx);
        assert_eq!(accecn::ace_of(ctx.pool.get(ctx.out[0])), 6);
    }

    /// A transfer of `bytes` from server to client over AccECN, with a one-way delay of 5 ms
    /// and no rate limit (a window's segments, and its ACKs, travel together): `mark(k)`
    /// CE-marks the k-th new data segment, `drop_ack(k, ack, superseded)` loses the k-th ACK
    /// (`superseded`: another ACK is on the wire behind it). Returns the pair, the marks made,
    /// and the mean alpha over the second half (DCTCP senders).
    fn accecn_transfer(p: TcpParams, bytes: u64, mut mark: impl FnMut(u64) -> bool, mut drop_ack: impl FnMut(u64, u64, bool) -> bool) -> (Pair, u64, f64) {
        let one_way = 5 * NS_PER_MS;
        let mut pair = Pair::new(TcpParams { initial_window_segments: p.initial_window_segments.max(10), ..accecn(p) });
        pair.establish();
        let mut wire = Wire::new(one_way);
        let first = pair.on(true, |e, _| e.write(bytes));
        wire.send(0, false, first);
        let (mut marked, mut data, mut acks, mut sum, mut n) = (0u64, 0u64, 0u64, 0.0, 0u64);
        while pair.s.acked_bytes() < bytes {
            let next_pkt = wire.next_at();
            let timers = [pair.s.retransmit_timer_at(), pair.c.delack_at];
            let now = next_pkt.min(timers[0]).min(timers[1]);
            assert!(now < 600 * NS_PER_S, "stalled");
            pair.now = now;
            if next_pkt == now {
                let (to_server, mut seg) = wire.pop();
                if !to_server && seg.kind == PacketKind::Data {
                    if mark(data) {
                        seg.pkt.ecn = Ecn::Ce;
                        marked += 1;
                    }
                    data += 1;
                }
                if to_server {
                    acks += 1;
                    let superseded = wire.q.values().any(|(up, _)| *up);
                    if drop_ack(acks - 1, seg.ack, superseded) {
                        continue;
                    }
                }
                let out = pair.deliver_seg(to_server, &seg);
                if to_server && pair.s.acked_bytes() > bytes / 2 {
                    if let Some(a) = pair.s.dctcp_alpha() {
                        sum += a;
                        n += 1;
                    }
                }
                wire.send(now, !to_server, out);
            } else if timers[0] == now {
                let out = pair.on(true, |e, ctx| {
                    e.on_rto(ctx);
                });
                wire.send(now, false, out);
            } else {
                let out = pair.on(false, |e, _| e.on_delack());
                wire.send(now, true, out);
            }
        }
        (pair, marked, sum / n.max(1) as f64)
    }

    #[test]
    fn accecn_counts_every_mark_through_ack_thinning_and_runs_of_lost_acks() {
        // A DCTCP sender whose alpha starts at 0 and moves slowly (g = 1/256) hardly reduces its
        // window for the marks, so from the start windows of 64 segments (the receiver's
        // window) and their ACKs are in flight. The ACE field alone: no AccECN option.
        let bytes = 1_000_000;
        let sender = TcpParams { initial_window_segments: 64, accecn_option: AccEcnOptionMode::Off, ..dctcp(1.0 / 256.0, 0.0) };
        let counts = |pair: &Pair| (pair.s.accecn_ce_counts().unwrap().0, pair.c.accecn_ce_counts().unwrap().1);
        // ACK thinning as a middlebox does it: of the ACKs with a later one behind them, two of
        // every three are dropped; 30% of the segments marked at random.
        let mut rng = crate::engine::rng::Rng::from_seed(5);
        let mut thinned = 0;
        let thin = |k, _, superseded| {
            let lose = superseded && k % 3 != 2;

            thinned += lose as u32;
            lose
        };
        let (pair, marked, _) = accecn_transfer(sender.clone(), bytes, |_| rng.uniform() < 0.3, thin);
        let (sent, received) = counts(&pair);
        eprintln!("thinned ({thinned} ACKs lost): {marked} marks, receiver counted {received}, sender {sent}, {} timeouts", pair.s.stats.rtos);
        assert!(marked > 50 && thinned > 100);
        assert_eq!((received, sent), (marked, marked));
        // Runs of lost ACKs that hide wraps of the 3-bit field: every ACK of segments 300-319
        // (all 20 CE-marked: the ACE field wraps twice and a half) and of 500-523 (24 marks,
        // exactly three wraps) is lost, with marks before and after (every seventh segment).
        // The longest run of consecutive lost ACKs is at least 10. (An ACK number seen before,
        // the answer to a retransmission, gets through: the sender is not stalled.)
        let mss = 1000;
        let runs = [(300u64, 320u64), (500, 524)];
        let in_run = |ack: u64| runs.iter().any(|&(a, b)| ack > 1 + a * mss && ack <= 1 + b * mss);
        let first_time = |seen: &mut std::collections::HashSet<u64>, ack| seen.insert(ack);
        let (mut lost_run, mut longest, mut seen) = (0, 0, std::collections::HashSet::new());
        let lose = |_, ack, _| {
            let lose = in_run(ack) && first_time(&mut seen, ack);
            lost_run = if lose { lost_run + 1 } else { 0 };
            longest = longest.max(lost_run);
            lose
        };
        let marks = |k: u64| runs.iter().any(|&(a, b)| k >= a && k < b) || k.is_multiple_of(7);
        let (pair, marked, _) = accecn_transfer(sender.clone(), bytes, marks, lose);
        let (sent, received) = counts(&pair);
        eprintln!("runs of lost ACKs (longest {longest}): {marked} marks, receiver counted {received}, sender {sent}");
        assert!(longest >= 10, "longest run of lost ACKs {longest}");
        assert_eq!((received, sent), (marked, marked));
        // The same runs over sparse marks: the counter is ambiguous and the sender takes the
        // safest case (Appendix A.2.1), more marks than there were, never fewer.
        let mut seen = std::collections::HashSet::new();
        let (pair, marked, _) = accecn_transfer(sender, bytes, |k| k.is_multiple_of(7), |_, ack, _| in_run(ack) && first_time(&mut seen, ack));
        let (sent, received) = counts(&pair);
        eprintln!("sparse marks behind lost ACKs: {marked} marks, sender {sent}");
        assert_eq!(received, marked);
        assert!(sent > marked, "the conservative count");
    }

    #[test]
    fn dctcp_alpha_converges_over_accecn() {
        // As `dctcp_alpha_converges_to_the_marking_probability_end_to_end`, with AccECN's
        // counter instead of DCTCP's echo: alpha settles at the marking probability, 0.1.
        let mut rng = crate::engine::rng::Rng::from_seed(11);
        let (pair, marked, alpha) = accecn_transfer(dctcp(1.0 / 16.0, 1.0), 4_000_000, |_| rng.uniform() < 0.1, |_, _, _| false);
        eprintln!("AccECN: marked {marked} of 4000 segments; mean alpha {alpha:.4}; reductions {}", pair.s.stats.ecn_reductions);
        assert!((alpha - 0.1).abs() < 0.015, "mean alpha {alpha}");
        assert_eq!(pair.s.accecn_ce_counts().unwrap().0, marked);
        assert_eq!(pair.s.stats.rtos, 0);
    }

    #[test]
    fn the_accecn_option_makes_the_ce_byte_count_exact_across_ack_loss() {
        // The runs of lost ACKs over sparse marks that the ACE field alone over-counts: with
        // RFC 9768's option scheme (and with `full`) the ECEB field gives the marked bytes
        // exactly, and Appendix A.2.2 the packets too; with the option off the sender
        // over-counts both.
        let sender = TcpParams { initial_window_segments: 64, ..dctcp(1.0 / 256.0, 0.0) };
        let (mss, bytes) = (1000, 1_000_000);
        let runs = [(300u64, 320u64), (500, 524)];
        let in_run = |ack: u64| runs.iter().any(|&(a, b)| ack > 1 + a * mss && ack <= 1 + b * mss);
        let mut results = Vec::new();
        for mode in [AccEcnOptionMode::Rfc9768, AccEcnOptionMode::Full, AccEcnOptionMode::Minimum, AccEcnOptionMode::Off] {
            let mut seen = std::collections::HashSet::new();
            let p = TcpParams { accecn_option: mode, ..sender.clone() };
            let (pair, marked, _) = accecn_transfer(p, bytes, |k| k.is_multiple_of(7), |_, ack, _| in_run(ack) && seen.insert(ack));
            let (reported, r_ceb) = (pair.s.accecn_ce_bytes().unwrap().0, pair.c.accecn_ce_bytes().unwrap().1);
            let packets = pair.s.accecn_ce_counts().unwrap().0;
            eprintln!("{mode:?}: {marked} marks = {r_ceb} bytes; the sender counted {packets} marks, {reported} bytes");
            assert_eq!(r_ceb, marked * mss);
            results.push((mode, marked, packets, reported, r_ceb));
        }
        // `minimum` sends the option only when r.ceb moved since the last option, so an ACK
        // after the run may lack it: in between.
        let off = results[3].3;
        for &(mode, marked, packets, reported, r_ceb) in &results {
            match mode {
                AccEcnOptionMode::Off => assert!(reported > r_ceb && packets > marked, "{mode:?}: the ACE field alone over-counts"),
                AccEcnOptionMode::Minimum => assert!(reported >= r_ceb && reported < off, "{mode:?}"),
                _ => assert_eq!((packets, reported), (marked, r_ceb), "{mode:?}"),
            }
        }
    }

    #[test]
    fn accecn_options_ride_where_the_scheme_says_and_count_in_the_segment_size() {
        // RFC 9768's scheme: the SYN-ACK, the client's first ACK and first data segment carry
        // all three fields (12 bytes); afterwards a segment carries the option only when a byte
        // counter moved since the last ACK, with the fields that ever moved (EE0B alone: 8
        // bytes, length 5), and the option's bytes are in the segment's size.
        let p = accecn(TcpParams { initial_window_segments: 4, ..params() });
        let mut pair = Pair::new(p.clone());
        let syn = pair.on(false, |e, ctx| e.connect(ctx));
        let synack = pair.deliver(true, &syn[0]);
        assert_eq!(synack[0].opt.map(|o| (o.fields, o.ee0b, o.eceb, o.ee1b)), Some((3, 1, 0, 1)));
        assert_eq!(synack[0].size, 40 + 12);
        let after = pair.deliver_seg(false, &synack[0]);
        assert_eq!(after[0].opt.map(|o| o.fields), Some(3), "the first ACK");
        pair.deliver_seg(true, &after[0]);
        let request = pair.on(false, |e, _| e.write(1000));
        assert_eq!((request[0].opt.map(|o| o.fields), request[0].size), (Some(3), 1000 + 40 + 12), "the first data segment");
        pair.deliver_seg(true, &request[0]);
        let d = pair.on(true, |e, _| e.write(4000));
        let o = d[0].opt.unwrap();
        assert_eq!((o.order1, o.fields, o.ee0b, d[0].size), (false, 1, 1001, 1000 + 40 + 8), "EE0B has moved");
        assert!(d[1..].iter().all(|s| s.opt.is_none() && s.size == 1040), "nothing new received: no option");
        let mut acks: Vec<Seg> = d[..2].iter().flat_map(|s| pair.deliver_seg(false, s)).collect();
        assert_eq!(acks.iter().map(|a| (a.opt.map(|o| (o.fields, o.ee0b)), a.size)).collect::<Vec<_>>(), [(Some((1, 2001)), 48)]);
        // A CE mark adds ECEB: the fields up to it (length 8, 8 bytes).
        let mut seg = d[2];
        seg.pkt.ecn = Ecn::Ce;
        acks = pair.deliver_seg(false, &seg);
        let o = acks.iter().find_map(|a| a.opt).unwrap();
        assert_eq!((o.fields, o.eceb(), o.ee0b()), (2, Some(1000), Some(2001)));
        // Full: all three fields on every ACK.
        let mut pair = Pair::new(TcpParams { accecn_option: AccEcnOptionMode::Full, ..p });
        pair.establish();
        let d = pair.on(true, |e, _| e.write(4000));
        let acks: Vec<Seg> = d.iter().flat_map(|s| pair.deliver_seg(false, s)).collect();
        assert!(!acks.is_empty() && acks.iter().all(|a| a.opt.map(|o| o.fields) == Some(3) && a.size == 52));
    }

    /// ECN++ on both ends as `ecn_plus_plus = true` resolves it, over AccECN.
    fn ecn_plus_plus() -> TcpParams {
        accecn(TcpParams { ect_syn: true, ect_pure_acks: true, ect_fins: true, ect_retransmissions: true, ecn_plus: EcnPlus::Rfc5562, ..params() })
    }

    #[test]
    fn ecn_plus_plus_answers_a_ce_marked_syn_as_the_draft_says() {
        // The client's first SYN is ECT(0); a CE mark on it comes back in the SYN-ACK's flags
        // (AccECN's (1, 1, 0)) and the client starts from one segment; the server, whose
        // SYN-ACK was not marked, keeps its initial window. Unmarked, both keep theirs.
        for marked in [true, false] {
            let p = ecn_plus_plus();
            let mut pair = Pair::new(p.clone());
            let mut syn = pair.on(false, |e, ctx| e.connect(ctx))[0];
            assert_eq!((syn.ecn, accecn::ace_of(&syn)), (Ecn::Ect0, 0b111));
            if marked {
                syn.pkt.ecn = Ecn::Ce;
            }
            let synack = pair.deliver_seg(true, &syn);
            assert_eq!(accecn::ace_of(&synack[0]), if marked { 0b110 } else { 0b100 });
            assert_eq!(synack[0].ecn, Ecn::Ect0, "ECN++ implies RFC 5562's ECT SYN-ACK");
            let after = pair.deliver_seg(false, &synack[0]);
            let iw = p.initial_window_bytes();
            assert_eq!(pair.c.window().cwnd, if marked { 1000 } else { iw });
            assert_eq!(pair.c.stats.ecn_reductions, marked as u32);
            // The pure ACK of the SYN-ACK is ECT(0) and feeds back the SYN-ACK's ECT(0).
            assert_eq!((after[0].payload, after[0].ecn, accecn::ace_of(&after[0])), (0, Ecn::Ect0, 0b100));
            pair.deliver_seg(true, &after[0]);
            assert_eq!(pair.s.window().cwnd, iw);
            assert_eq!(pair.s.accecn_ce_counts(), Some((0, 0)), "a CE SYN is not counted in r.cep");
        }
        // A retransmitted SYN is Not-ECT; without ECN++ the SYN is Not-ECT.
        let mut pair = Pair::new(ecn_plus_plus());
        pair.on(false, |e, ctx| e.connect(ctx));
        pair.now = pair.c.rto_at;
        let again = pair.on(false, |e, ctx| {
            e.on_rto(ctx);
        });
        assert_eq!((again[0].kind, again[0].ecn), (PacketKind::Syn, Ecn::NotEct));
        let mut pair = Pair::new(accecn(params()));
        assert_eq!(pair.on(false, |e, ctx| e.connect(ctx))[0].ecn, Ecn::NotEct);
    }

    #[test]
    fn ecn_plus_plus_sends_pure_acks_and_fins_ecn_capable_and_counts_marks_on_acks() {
        let mut pair = Pair::new(TcpParams { initial_window_segments: 10, ..ecn_plus_plus() });
        pair.establish();
        // Server data, client ACKs: ECT(0) pure ACKs; three CE-marked ones raise the server's
        // r.cep by three and, with no data unacknowledged, make it acknowledge them (RFC 9768
        // 3.2.2.5.1, n = 3), carrying the count back.
        let data = pair.on(true, |e, _| e.write(10_000));
        let acks: Vec<Seg> = data.iter().flat_map(|s| pair.deliver_seg(false, s)).collect();
        assert!(acks.len() >= 3 && acks.iter().all(|a| a.payload == 0 && a.ecn == Ecn::Ect0));
        let mut replies = Vec::new();
        for a in acks.iter().take(3) {
            let mut a = *a;
            a.pkt.ecn = Ecn::Ce;
            replies.extend(pair.deliver_seg(true, &a));
        }
        assert_eq!(pair.s.accecn_ce_counts().map(|c| c.1), Some(3));
        let ack_of_acks = replies.iter().find(|r| r.payload == 0).expect("an ACK of the marked ACKs");
        assert_eq!(accecn::ace_of(ack_of_acks), (5 + 3) % 8);
        // FINs are ECT(0).
        let fin = pair.on(true, |e, _| e.close());
        assert!(fin.iter().any(|s| s.has(flags::FIN) && s.ecn == Ecn::Ect0));
        // Without ECN++ the same ACKs are Not-ECT.
        let mut pair = Pair::new(accecn(params()));
        pair.establish();
        let data = pair.on(true, |e, _| e.write(6000));
        let acks: Vec<Seg> = data.iter().flat_map(|s| pair.deliver_seg(false, s)).collect();
        assert!(acks.iter().all(|a| a.ecn == Ecn::NotEct));
    }
}
