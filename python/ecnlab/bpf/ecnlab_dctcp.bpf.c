/* DCTCP (RFC 8257) as a BPF struct_ops congestion control. Written for ecnlab from RFC 8257
 * and ecnlab's model (crates/ecnlab/src/tcp/dctcp.rs), with the same parameters: g = 1/16,
 * alpha starting at 1 (G_SHIFT and ALPHA_INIT, compiled in, change them), Reno's growth, a
 * loss halving the window.
 *
 * Sender. Each ACK adds the bytes it acknowledges to BytesAcked, and to BytesMarked when it
 * carries ECE (in_ack_event). When SND.UNA reaches the end of the observation window (the
 * SND.NXT of the window's start), alpha <- (1 - g) alpha + g BytesMarked / BytesAcked and a
 * new window starts. On an echo Linux enters CWR (at most once per window of data) and asks
 * ssthresh(): max(cwnd (1 - alpha / 2), 2) segments, which PRR then brings cwnd down to.
 * alpha is kept in units of 2^-20 (g a shift of 4).
 *
 * Loss. Entering fast recovery (also from an echo's CWR) sets ssthresh = max(cwnd at the
 * reduction's start / 2, 2); a timeout sets max(cwnd / 2, 2).
 *
 * Receiver. RFC 8257 3.2: ECE must be set on exactly the ACKs of CE-marked segments, and
 * when the CE state of arriving segments changes, a delayed ACK of the segments before must
 * go out at once with the old state. Linux reports each segment's codepoint to a
 * congestion control that needs ECN (CA_EVENT_ECN_IS_CE / _NO_CE). On a change with a delayed
 * ACK pending, the program sends that ACK (bpf_tcp_send_ack, acknowledging up to the segment
 * before); on a CE segment Linux itself sets ECE on the ACKs and ACKs at once (quick-ack
 * mode); on a not-CE segment the program clears ECE (TCP_ECN_DEMAND_CWR), where classic ECN
 * would keep it until the sender's CWR. TCP_CONG_NEEDS_ECN makes Linux negotiate ECN and
 * send ECT(0) whatever net.ipv4.tcp_ecn says. CA_NAME is the congestion control's name. */
#include "ecnlab_tcp.h"

#ifndef CA_NAME
#define CA_NAME "ecnlab_dctcp"
#endif

#define ALPHA_ONE (1u << 20) /* alpha = 1 */
#ifndef G_SHIFT
#define G_SHIFT 4 /* g = 1/2^G_SHIFT: 1/16 */
#endif
#ifndef ALPHA_INIT
#define ALPHA_INIT ALPHA_ONE /* alpha before the first window ends, in units of 2^-20 */
#endif

/* ecnlab is MIT; the kernel lets only GPL-compatible programs call its kfuncs. */
char _license[] SEC("license") = "Dual MIT/GPL";

struct dctcp {
	__u32 alpha;         /* in units of 2^-20 */
	__u32 window_end;    /* SND.NXT when the observation window started */
	__u32 prior_snd_una; /* SND.UNA at the previous ACK */
	__u32 bytes_acked;
	__u32 bytes_marked;
	__u32 state;         /* the last TCP_CA_* state set */
	__u32 prior_rcv_nxt; /* receiver: RCV.NXT before the segment being processed */
	__u32 ce;            /* receiver: the last segment was CE */
};

SEC("struct_ops/dctcp_init")
void BPF_PROG(dctcp_init, struct sock *sk)
{
	struct dctcp *ca = ecnlab_ca(sk);
	struct tcp_sock *tp = ecnlab_tp(sk);

	ca->alpha = ALPHA_INIT;
	ca->window_end = tp->snd_nxt;
	ca->prior_snd_una = tp->snd_una;
	ca->bytes_acked = 0;
	ca->bytes_marked = 0;
	ca->state = TCP_CA_Open;
	ca->prior_rcv_nxt = tp->rcv_nxt;
	ca->ce = 0;
}

SEC("struct_ops/dctcp_in_ack_event")
void BPF_PROG(dctcp_in_ack_event, struct sock *sk, __u32 flags)
{
	struct dctcp *ca = ecnlab_ca(sk);
	struct tcp_sock *tp = ecnlab_tp(sk);
	__u32 acked = tp->snd_una - ca->prior_snd_una;
	__u64 fraction;

	ca->prior_snd_una = tp->snd_una;
	ca->bytes_acked += acked;
	if (flags & CA_ACK_ECE)
		ca->bytes_marked += acked;
	if ((__s32)(tp->snd_una - ca->window_end) < 0)
		return; /* the window is not over */
	fraction = ca->bytes_acked ? ((__u64)ca->bytes_marked << 20) / ca->bytes_acked : 0;
	ca->alpha = ca->alpha - (ca->alpha >> G_SHIFT) + (__u32)(fraction >> G_SHIFT);
	if (ca->alpha > ALPHA_ONE)
		ca->alpha = ALPHA_ONE;
	ca->window_end = tp->snd_nxt;
	ca->bytes_acked = 0;
	ca->bytes_marked = 0;
}

SEC("struct_ops/dctcp_ssthresh")
__u32 BPF_PROG(dctcp_ssthresh, struct sock *sk)
{
	struct dctcp *ca = ecnlab_ca(sk);
	__u32 cwnd = ecnlab_tp(sk)->snd_cwnd;

	/* cwnd (1 - alpha / 2), alpha / 2 being alpha >> 21 in these units. */
	return ecnlab_max2(cwnd - (__u32)(((__u64)cwnd * ca->alpha) >> 21));
}

SEC("struct_ops/dctcp_set_state")
void BPF_PROG(dctcp_set_state, struct sock *sk, __u8 new_state)
{
	struct dctcp *ca = ecnlab_ca(sk);
	struct tcp_sock *tp = ecnlab_tp(sk);

	if (new_state == TCP_CA_Recovery && ca->state != TCP_CA_Recovery)
		tp->snd_ssthresh = ecnlab_max2(tp->prior_cwnd >> 1);
	ca->state = new_state;
}

/* The receiver's side: ECE on the ACKs of CE segments only (RFC 8257 3.2). */
static __always_inline void dctcp_segment(struct sock *sk, __u32 ce)
{
	struct dctcp *ca = ecnlab_ca(sk);
	struct tcp_sock *tp = ecnlab_tp(sk);

	if (ce != ca->ce &&
	    (((struct inet_connection_sock *)sk)->icsk_ack.pending & ICSK_ACK_TIMER))
		bpf_tcp_send_ack(tp, ca->prior_rcv_nxt); /* with the old ECE state */
	if (!ce)
		tp->ecn_flags &= ~ECNLAB_ECN_DEMAND_CWR;
	ca->ce = ce;
	ca->prior_rcv_nxt = tp->rcv_nxt;
}

SEC("struct_ops/dctcp_cwnd_event")
void BPF_PROG(dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct tcp_sock *tp = ecnlab_tp(sk);

	switch (ev) {
	case CA_EVENT_ECN_IS_CE:
		dctcp_segment(sk, 1);
		break;
	case CA_EVENT_ECN_NO_CE:
		dctcp_segment(sk, 0);
		break;
	case CA_EVENT_LOSS:
		tp->snd_ssthresh = ecnlab_max2(tp->snd_cwnd >> 1);
		break;
	default:
		break;
	}
}

ECNLAB_RENO_GROWTH_AND_UNDO(dctcp)

SEC(".struct_ops")
struct tcp_congestion_ops ecnlab_dctcp = {
	.init = (void *)dctcp_init,
	.in_ack_event = (void *)dctcp_in_ack_event,
	.ssthresh = (void *)dctcp_ssthresh,
	.set_state = (void *)dctcp_set_state,
	.cwnd_event = (void *)dctcp_cwnd_event,
	.cong_avoid = (void *)dctcp_cong_avoid,
	.undo_cwnd = (void *)dctcp_undo_cwnd,
	.flags = ECNLAB_CONG_NEEDS_ECN,
	.name = CA_NAME,
};
