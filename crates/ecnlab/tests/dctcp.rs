//! DCTCP (RFC 8257) and TCP Prague in closed loop: one flow through a step marker holds the
//! queue at the marker's K and keeps the link busy; Prague's RTT independence shares a link
//! between RTTs that DCTCP does not.

mod common;

use common::{merge, run};
use serde_json::{json, Value};

/// One long-lived flow of 1488-byte packets over `rate_bps` with propagation RTT `rtt_ms`
/// through a threshold marker `aqm` (Not-ECT packets let in, as DCTCP switches do).
fn one_flow(rate_bps: f64, rtt_ms: f64, aqm: Value, tcp: Value, duration_s: f64) -> Value {
    let mut marker = json!({"kind": "threshold", "nonect": "enqueue"});
    merge(&mut marker, &aqm);
    let mut v = json!({
        "duration_s": duration_s,
        "warmup_s": duration_s / 4.0,
        "topology": {"access_rate_bps": 1e10, "access_delay_ms": 0.0,
                     "bottleneck": {"rate_bps": rate_bps, "delay_ms": rtt_ms / 2.0,
                                    "queue": {"limit_pkts": 1000, "aqm": marker}}},
        "tcp": {"profile": "linux", "mss_bytes": 1448, "congestion_control": "dctcp"},
        "workloads": [{"kind": "bulk", "flows": 1}],
    });
    merge(&mut v["tcp"], &tcp);
    v
}

const PKT_BITS: f64 = 1488.0 * 8.0;

#[test]
fn a_dctcp_flow_holds_the_queue_at_k_packets_and_fills_the_link() {
    // 100 Mb/s, 1 ms RTT (a BDP of 8.4 packets), K = 20 packets. DCTCP's sawtooth
    // (Alizadeh et al. 2010, section 3.3): the window peaks at BDP + K = 28 packets, alpha
    // settles near sqrt(2 / 28) = 0.27, each echo cuts about W alpha / 2 = 3.7 packets, so the
    // queue swings between about K - 3 and K + 1: its mean stays within 25% of K, it never
    // empties, and nothing is dropped.
    for (k, rate) in [(20, 100e6), (20, 10e6)] {
        let r = run(one_flow(rate, 1.0, json!({"k_pkts": k}), json!({}), 10.0), 1);
        let (q, u) = (r.get("mean_queue_pkts_down"), r.get("utilization_down"));
        eprintln!("DCTCP, {} Mb/s, K = {k} packets: mean queue {q:.2} packets, utilization {u:.4}", rate / 1e6);
        assert!((q / k as f64 - 1.0).abs() < 0.25, "mean queue {q} vs K {k}");
        assert!(u > 0.99, "utilization {u}");
        assert_eq!(r.get("loss_rate_down"), 0.0);
    }
}

#[test]
fn a_dctcp_flow_over_accecn_holds_the_queue_at_k_packets_and_fills_the_link() {
    // The same flow with AccECN feedback (RFC 9768) instead of DCTCP's echo: the receiver
    // counts CE-marked packets in the ACE field, the sender decodes the count; alpha, the
    // queue and the link behave as with the exact echo.
    for (k, rate) in [(20, 100e6), (20, 10e6)] {
        let r = run(one_flow(rate, 1.0, json!({"k_pkts": k}), json!({"ecn_feedback": "accecn"}), 10.0), 1);
        let (q, u) = (r.get("mean_queue_pkts_down"), r.get("utilization_down"));
        eprintln!("DCTCP over AccECN, {} Mb/s, K = {k} packets: mean queue {q:.2} packets, utilization {u:.4}", rate / 1e6);
        assert!((q / k as f64 - 1.0).abs() < 0.25, "mean queue {q} vs K {k}");
        assert!(u > 0.99, "utilization {u}");
        assert_eq!(r.get("loss_rate_down"), 0.0);
    }
    // Prague (whose Linux sender needs AccECN) on the same feedback.
    let r = run(one_flow(100e6, 1.0, json!({"k_pkts": 20}), json!({"congestion_control": "prague", "ecn_feedback": "accecn"}), 20.0), 1);
    let (q, u) = (r.get("mean_queue_pkts_down"), r.get("utilization_down"));
    eprintln!("Prague over AccECN, 100 Mb/s, K = 20 packets: mean queue {q:.2} packets, utilization {u:.4}");
    assert!((q / 20.0 - 1.0).abs() < 0.25, "mean queue {q}");
    assert!(u > 0.99, "utilization {u}");
}

#[test]
fn a_dctcp_flow_holds_the_sojourn_at_k_in_time() {
    // K = 1 ms of sojourn, marked at dequeue (the L4S step of RFC 9332), 100 Mb/s, 1 ms RTT:
    // the mean queue delay stays within 25% of 1 ms.
    let r = run(one_flow(100e6, 1.0, json!({"k_us": 1000.0, "mark_at": "dequeue"}), json!({}), 10.0), 1);
    let (q, u) = (r.get("mean_queue_pkts_down"), r.get("utilization_down"));
    let delay_ms = q * PKT_BITS / 100e6 * 1e3;
    eprintln!("DCTCP, 100 Mb/s, K = 1 ms: mean queue {q:.2} packets = {delay_ms:.3} ms, utilization {u:.4}");
    assert!((delay_ms - 1.0).abs() < 0.25, "mean queue delay {delay_ms} ms vs K 1 ms");
    assert!(u > 0.99, "utilization {u}");
}

#[test]
fn newreno_with_the_same_marker_loses_throughput_where_dctcp_does_not() {
    // The contrast that motivates DCTCP: RFC 3168's halving at a step marker with K below the
    // BDP (K = 3 packets, BDP 8.4) empties the queue after every echo; DCTCP does not.
    let aqm = json!({"k_pkts": 3});
    let reno = run(one_flow(100e6, 1.0, aqm.clone(), json!({"congestion_control": "newreno", "ecn": true}), 10.0), 1);
    let dctcp = run(one_flow(100e6, 1.0, aqm, json!({}), 10.0), 1);
    let (ur, ud) = (reno.get("utilization_down"), dctcp.get("utilization_down"));
    eprintln!("K = 3 packets: NewReno utilization {ur:.4}, DCTCP {ud:.4}");
    assert!(ud > ur + 0.02, "DCTCP {ud} vs NewReno {ur}");
}

#[test]
fn a_prague_flow_holds_the_queue_at_k_reducing_at_most_once_per_reference_rtt() {
    // Prague (ECT(1), paced, RTT-independent after 500 round trips, under 2 s here) through
    // the same step: the queue stays within 25% of K and the link full, and after the
    // transition it answers at most one echo per 25 ms (20 s: at most 800, plus at most one
    // per round trip before), where DCTCP answers one every few round trips.
    let prague = run(one_flow(100e6, 1.0, json!({"k_pkts": 20}), json!({"congestion_control": "prague"}), 20.0), 1);
    let dctcp = run(one_flow(100e6, 1.0, json!({"k_pkts": 20}), json!({}), 20.0), 1);
    let (q, u) = (prague.get("mean_queue_pkts_down"), prague.get("utilization_down"));
    let (np, nd) = (prague.table("flows").u64s("ecn_reductions")[0], dctcp.table("flows").u64s("ecn_reductions")[0]);
    eprintln!("Prague, 100 Mb/s, 1 ms, K = 20 packets: mean queue {q:.2} packets, utilization {u:.4}, {np} reductions (DCTCP {nd})");
    assert!((q / 20.0 - 1.0).abs() < 0.25, "mean queue {q}");
    assert!(u > 0.99, "utilization {u}");
    assert!(np <= 800 + 500 && np * 2 < nd, "Prague {np} reductions, DCTCP {nd}");
}

#[test]
fn prague_shares_a_step_marked_link_across_rtts_where_dctcp_starves_the_longer_flow() {
    // Two flows, 2 ms and 20 ms RTT, through a 1 ms step (K in sojourn time) at 100 Mb/s.
    // DCTCP's flows see the same marks and hold similar windows, so the shorter one takes
    // far more than its RTT share of the link; Prague's RTT independence (reference RTT 25 ms, here after 50 round trips)
    // grows the shorter flow's window by (2 / 25)^2 segments per round trip, the rate a
    // 25 ms flow would gain.
    let share = |cc: Value| {
        let mut v = one_flow(100e6, 1.0, json!({"k_us": 1000.0, "mark_at": "dequeue"}), cc, 40.0);
        v["topology"]["clients"] = json!(2);
        v["topology"]["servers"] = json!(2);
        v["workloads"] = json!([{"kind": "bulk", "flows": 1, "rtt_ms": {"dist": "constant", "value": 2.0}},
                                {"kind": "bulk", "flows": 1, "rtt_ms": {"dist": "constant", "value": 20.0}}]);
        let r = run(v, 1);
        let g = r.table("flows").u64s("goodput_bytes");
        assert!(r.get("utilization_down") > 0.99);
        g[0] as f64 / g[1] as f64
    };
    let dctcp = share(json!({}));
    let prague = share(json!({"congestion_control": "prague", "prague_rtt_transition_rounds": 50}));
    eprintln!("goodput ratio of the 2 ms flow to the 20 ms flow: DCTCP {dctcp:.1}, Prague {prague:.2}");
    assert!(dctcp > 10.0, "DCTCP {dctcp}");
    assert!(prague > 0.5 && prague < 2.0, "Prague {prague}");
}
