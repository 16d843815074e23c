/* Shared definitions of ecnlab's BPF congestion controls (docs/testbed.md, "BPF congestion
 * controls"). Built with clang -target bpf against a vmlinux.h dumped from the running
 * kernel's BTF; the constants below are #defines in the kernel headers, so not in BTF. */
#ifndef ECNLAB_TCP_H
#define ECNLAB_TCP_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define ECNLAB_CONG_NEEDS_ECN 0x2  /* TCP_CONG_NEEDS_ECN: ECT on data, ECN negotiated */
#define ECNLAB_ECN_DEMAND_CWR 0x4  /* TCP_ECN_DEMAND_CWR: the receiver sets ECE on its ACKs */
/* ICSK_ACK_TIMER (a delayed ACK is pending) is an enum, so in vmlinux.h. */

/* Reno's growth and undo, exported by the kernel to BPF congestion controls as kfuncs. */
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

static __always_inline struct tcp_sock *ecnlab_tp(struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

/* The connection's private congestion-control state (icsk_ca_priv, 104 bytes). */
static __always_inline void *ecnlab_ca(struct sock *sk)
{
	return (void *)((struct inet_connection_sock *)sk)->icsk_ca_priv;
}

static __always_inline __u32 ecnlab_max2(__u32 segments)
{
	return segments > 2 ? segments : 2;
}

/* Reno's growth and undo as the program's PREFIX_cong_avoid and PREFIX_undo_cwnd. */
#define ECNLAB_RENO_GROWTH_AND_UNDO(prefix)                                        \
	SEC("struct_ops/" #prefix "_cong_avoid")                                   \
	void BPF_PROG(prefix##_cong_avoid, struct sock *sk, __u32 ack, __u32 acked) \
	{                                                                           \
		tcp_reno_cong_avoid(sk, ack, acked);                                \
	}                                                                           \
	SEC("struct_ops/" #prefix "_undo_cwnd")                                    \
	__u32 BPF_PROG(prefix##_undo_cwnd, struct sock *sk)                         \
	{                                                                           \
		return tcp_reno_undo_cwnd(sk);                                      \
	}

#endif
