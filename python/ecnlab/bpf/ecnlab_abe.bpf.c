/* ABE NewReno: Alternative Backoff with ECN (RFC 8511) on Linux's Reno, as a BPF
 * struct_ops congestion control. Written for ecnlab from RFC 8511 and RFC 5681/6582.
 *
 * Growth and undo are Reno's (the kernel's kfuncs). On a loss (fast recovery, or a timeout)
 * ssthresh = max(cwnd / 2, 2) segments; on an ECN echo (Linux enters CWR on an ACK with ECE)
 * ssthresh = max(cwnd x beta_ecn, 2), including the echo that ends slow start. beta_ecn is
 * BETA_ECN_PERMILLE / 1000, fixed when the program is compiled (clang -DBETA_ECN_PERMILLE=N);
 * the testbed compiles one program per value. CA_NAME is the congestion control's name.
 *
 * Linux calls ssthresh() before it decides which state follows (CWR after an echo, Recovery
 * after a loss), so the program remembers whether the ACK being processed carried ECE
 * (in_ack_event) and, when the state then moves to Recovery, replaces the echo's ssthresh by
 * the loss's. A loss found while an echo's reduction is under way (CWR) also turns it into a
 * loss reduction: ssthresh = max(cwnd at the reduction's start / 2, 2). */
#include "ecnlab_tcp.h"

#ifndef BETA_ECN_PERMILLE
#define BETA_ECN_PERMILLE 800
#endif
#ifndef CA_NAME
#define CA_NAME "ecnlab_abe"
#endif

/* ecnlab is MIT; the kernel lets only GPL-compatible programs call its kfuncs. */
char _license[] SEC("license") = "Dual MIT/GPL";

struct abe {
	__u32 ece;   /* the ACK being processed carried ECE */
	__u32 state; /* the last TCP_CA_* state set */
};

SEC("struct_ops/abe_init")
void BPF_PROG(abe_init, struct sock *sk)
{
	struct abe *ca = ecnlab_ca(sk);

	ca->ece = 0;
	ca->state = TCP_CA_Open;
}

SEC("struct_ops/abe_in_ack_event")
void BPF_PROG(abe_in_ack_event, struct sock *sk, __u32 flags)
{
	struct abe *ca = ecnlab_ca(sk);

	ca->ece = (flags & CA_ACK_ECE) != 0;
}

SEC("struct_ops/abe_ssthresh")
__u32 BPF_PROG(abe_ssthresh, struct sock *sk)
{
	struct abe *ca = ecnlab_ca(sk);
	__u32 cwnd = ecnlab_tp(sk)->snd_cwnd;

	if (ca->ece)
		return ecnlab_max2((__u64)cwnd * BETA_ECN_PERMILLE / 1000);
	return ecnlab_max2(cwnd >> 1);
}

SEC("struct_ops/abe_set_state")
void BPF_PROG(abe_set_state, struct sock *sk, __u8 new_state)
{
	struct abe *ca = ecnlab_ca(sk);
	struct tcp_sock *tp = ecnlab_tp(sk);

	/* Entering fast recovery: a loss, whatever the ACK's ECE said. */
	if (new_state == TCP_CA_Recovery && ca->state != TCP_CA_Recovery)
		tp->snd_ssthresh = ecnlab_max2(tp->prior_cwnd >> 1);
	ca->state = new_state;
}

SEC("struct_ops/abe_cwnd_event")
void BPF_PROG(abe_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct tcp_sock *tp = ecnlab_tp(sk);

	/* A retransmission timeout: ssthresh() has just run, the window is not cut yet. */
	if (ev == CA_EVENT_LOSS)
		tp->snd_ssthresh = ecnlab_max2(tp->snd_cwnd >> 1);
}

ECNLAB_RENO_GROWTH_AND_UNDO(abe)

SEC(".struct_ops")
struct tcp_congestion_ops ecnlab_abe = {
	.init = (void *)abe_init,
	.in_ack_event = (void *)abe_in_ack_event,
	.ssthresh = (void *)abe_ssthresh,
	.set_state = (void *)abe_set_state,
	.cwnd_event = (void *)abe_cwnd_event,
	.cong_avoid = (void *)abe_cong_avoid,
	.undo_cwnd = (void *)abe_undo_cwnd,
	.name = CA_NAME,
};
