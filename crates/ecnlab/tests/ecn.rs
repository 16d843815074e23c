//! ECN at the end hosts in closed loop (DESIGN validation ladder, layer 2): what a marking
//! queue does to ECN and non-ECN flows, what ECN+ does to a SYN-ACK, and mixed populations.

mod common;

use common::{merge, run};
use ecnlab::metrics::Results;
use serde_json::{json, Value};

/// A 10 Mb/s, 20 ms-RTT dumbbell whose down queue marks ECT packets (and drops others)
/// while more than `k_pkts` wait: the threshold marker of seed 000.
fn marked_dumbbell(k_pkts: u32, tcp: Value, workloads: Value, duration_s: f64) -> Value {
    let mut v = json!({
        "duration_s": duration_s,
        "warmup_s": 0.0,
        "topology": {"clients": 4, "servers": 4, "access_rate_bps": 1e9, "access_delay_ms": 0.0,
                     "bottleneck": {"rate_bps": 10e6, "delay_ms": 10.0,
                                    "queue": {"limit_pkts": 400,
                                              "aqm": {"kind": "threshold", "k_pkts": k_pkts}}}},
        "tcp": {"profile": "seed-2005", "mss_bytes": 1000},
        "workloads": workloads,
    });
    merge(&mut v["tcp"], &tcp);
    v
}

/// Mean response time of the completed exchanges whose row index passes `keep`.
fn mean_response_time(r: &Results, keep: impl Fn(usize) -> bool) -> f64 {
    let e = r.table("exchanges");
    let (rt, done) = (e.f64s("response_time_s"), e.bools("completed"));
    let kept: Vec<f64> = (0..e.rows()).filter(|&i| done[i] && keep(i)).map(|i| rt[i]).collect();
    assert!(!kept.is_empty());
    kept.iter().sum::<f64>() / kept.len() as f64
}

fn sum_u64(r: &Results, table: &str, col: &str) -> u64 {
    r.table(table).u64s(col).iter().sum()
}

#[test]
fn a_marking_queue_spares_an_ecn_flow_and_drops_a_non_ecn_one() {
    // One 2 MB download: its slow start overshoots K = 20 many times over.
    let flow = json!([{"kind": "bulk", "flows": 1, "bytes": 2_000_000}]);
    let ecn = run(marked_dumbbell(20, json!({"ecn": true}), flow.clone(), 10.0), 1);
    let plain = run(marked_dumbbell(20, json!({"ecn": false}), flow, 10.0), 1);
    let f = ecn.table("flows");
    assert!(f.bools("completed")[0], "the ECN flow finishes");
    assert_eq!(f.u64s("retx_bytes")[0], 0, "no retransmission with ECN");
    assert_eq!(f.u64s("drops")[0], 0);
    assert!(f.u64s("marks")[0] > 0 && f.u64s("ce_received")[0] > 0);
    assert!(f.u64s("ecn_reductions")[0] >= 1);
    assert_eq!(f.u64s("loss_reductions")[0] + f.u64s("rtos")[0], 0);
    let g = plain.table("flows");
    assert!(g.u64s("drops")[0] > 0, "the non-ECN flow loses packets above K");
    assert!(g.u64s("retx_bytes")[0] > 0);
    assert_eq!(g.u64s("marks")[0] + g.u64s("ecn_reductions")[0], 0);
}

/// Workloads: one-segment exchanges at 4/s for 30 s, and an unresponsive Poisson packet source
/// at twice the link rate that keeps the down queue at K or K + 1.
fn exchanges_against_a_source() -> Value {
    json!([
        {"kind": "packet_source", "process": "poisson", "rate_pps": 2500.0,
         "size_bytes": {"dist": "constant", "value": 1000}},
        {"kind": "exchanges", "arrival_rate_per_s": 4.0, "stop_s": 30.0,
         "request_bytes": {"dist": "constant", "value": 100},
         "response_bytes": {"dist": "constant", "value": 500}},
    ])
}

/// Exchanges with one-segment responses against an unresponsive, non-ECT packet source that
/// (Poisson, twice the link rate) keeps the down queue at K or K + 1: a SYN-ACK finds it
/// above K about half of the time.
fn synack_scenario(ecn_plus: &str) -> Results {
    run(marked_dumbbell(5, json!({"ecn": true, "ecn_plus": ecn_plus}), exchanges_against_a_source(), 40.0), 7)
}

#[test]
fn ecn_plus_marks_the_synack_where_plain_ecn_drops_it_and_waits_an_initial_rto() {
    let plus = synack_scenario("seed");
    let ecn = synack_scenario("off");
    let (p, e) = (plus.table("exchanges"), ecn.table("exchanges"));
    let n = p.rows();
    assert!(n >= 100 && e.rows() == n, "{n} exchanges");

    // ECN+: SYN-ACKs above K are marked, never dropped; no handshake waits.
    let marked = p.bools("synack_ce").iter().filter(|m| **m).count();
    assert!(marked >= n / 5, "only {marked} of {n} SYN-ACKs marked");
    assert_eq!(sum_u64(&plus, "exchanges", "synack_drops"), 0);
    assert!(p.f64s("handshake_wait_s").iter().all(|w| *w == 0.0));
    assert!(p.bools("completed").iter().all(|c| *c));

    // Plain ECN: the same congestion drops SYN-ACKs, and each drop costs the 3 s initial RTO.
    assert!(e.bools("synack_ce").iter().all(|m| !*m));
    let waits: Vec<f64> = (0..n).filter(|&i| e.u64s("synack_drops")[i] > 0).map(|i| e.f64s("handshake_wait_s")[i]).collect();
    assert!(waits.len() >= n / 5, "only {} SYN-ACK drops in {n} exchanges", waits.len());
    assert!(waits.iter().all(|w| *w >= 3.0 - 1e-9), "a dropped SYN-ACK waits the initial RTO: {waits:?}");
    let mean = |r: &Results| mean_response_time(r, |_| true);
    assert!(mean(&ecn) > mean(&plus) + 0.5, "ECN {} s vs ECN+ {} s", mean(&ecn), mean(&plus));
}

#[test]
fn rfc5562_clients_echo_a_marked_synack_and_servers_start_from_one_segment() {
    let r = synack_scenario("rfc5562");
    let e = r.table("exchanges");
    let marked = e.bools("synack_ce").iter().filter(|m| **m).count();
    assert!(marked > 0);
    // A marked SYN-ACK is the server's first ECN reduction (IW = 1), recorded per flow.
    let flows = r.table("flows");
    let reductions: u64 = flows.u64s("ecn_reductions").iter().sum();
    assert!(reductions >= marked as u64, "{reductions} reductions for {marked} marked SYN-ACKs");
    assert_eq!(sum_u64(&r, "exchanges", "synack_drops"), 0, "first SYN-ACKs are ECT and marked");
}

#[test]
fn a_mixed_population_reports_each_class() {
    // Half of the 4 clients have ECN (chosen from the seed); servers accept ECN and use ECN+.
    let tcp = json!({"ecn": true, "ecn_plus": "seed", "clients": {"ecn_fraction": 0.5}});
    let r = run(marked_dumbbell(5, tcp, exchanges_against_a_source(), 40.0), 7);
    let e = r.table("exchanges");
    let (ecn, client) = (e.bools("ecn"), e.i64s("client"));
    // Whole hosts are in one class: every exchange of a client has the same ECN capability.
    let mut class = [None; 4];
    for i in 0..e.rows() {
        let c = client[i] as usize;
        assert!(class[c].is_none_or(|k| k == ecn[i]), "client {c} is in both classes");
        class[c] = Some(ecn[i]);
    }
    assert_eq!(class.iter().filter(|k| **k == Some(true)).count(), 2, "{class:?}");
    // ECN clients' SYN-ACKs are marked, the others' dropped.
    let drops = e.u64s("synack_drops");
    let (mut ecn_drops, mut plain_drops) = (0, 0);
    for i in 0..e.rows() {
        if ecn[i] { ecn_drops += drops[i] } else { plain_drops += drops[i] }
    }
    assert_eq!(ecn_drops, 0);
    assert!(plain_drops > 0);
    let mean = |want: bool| mean_response_time(&r, |i| ecn[i] == want);
    assert!(mean(false) > mean(true) + 0.3, "non-ECN {} s vs ECN {} s", mean(false), mean(true));
}

/// One long-lived flow over `rate_bps` with propagation RTT `rtt_ms` through `aqm`.
fn one_flow(rate_bps: f64, rtt_ms: f64, limit_pkts: u32, aqm: Value, tcp: Value, duration_s: f64) -> Value {
    let mut v = json!({
        "duration_s": duration_s,
        "warmup_s": duration_s / 4.0,
        "topology": {"access_rate_bps": 1e9, "access_delay_ms": 0.0,
                     "bottleneck": {"rate_bps": rate_bps, "delay_ms": rtt_ms / 2.0,
                                    "queue": {"limit_pkts": limit_pkts, "aqm": aqm}}},
        "tcp": {"profile": "linux", "mss_bytes": 1448},
        "workloads": [{"kind": "bulk", "flows": 1}],
    });
    merge(&mut v["tcp"], &tcp);
    v
}

#[test]
fn a_cubic_flow_fills_the_link_with_a_bdp_of_buffer() {
    // 20 Mb/s, 40 ms: a BDP of 67 packets of 1488 bytes.
    let r = run(one_flow(20e6, 40.0, 67, json!({"kind": "droptail"}), json!({"congestion_control": "cubic"}), 60.0), 1);
    assert!(r.get("utilization_down") > 0.97, "utilization {}", r.get("utilization_down"));
    assert!(r.table("flows").u64s("loss_reductions")[0] > 0, "CUBIC probed and backed off");
}

#[test]
fn abe_recovers_throughput_that_ecn_alone_loses_over_codel() {
    // Seed 002: one NewReno flow at 10 Mb/s, 100 ms RTT, through CoDel with ECN. Halving on
    // each mark leaves the link idle after every reduction; backing off by 0.8 keeps it busy.
    let codel = json!({"kind": "codel", "ecn": true});
    let classic = run(one_flow(10e6, 100.0, 1000, codel.clone(), json!({"ecn": true}), 120.0), 1);
    let abe = run(one_flow(10e6, 100.0, 1000, codel, json!({"ecn": true, "abe": true}), 120.0), 1);
    let (u0, u1) = (classic.get("utilization_down"), abe.get("utilization_down"));
    assert!(classic.get("loss_rate_down") == 0.0 && abe.get("loss_rate_down") == 0.0, "marks, no drops");
    assert!(u0 < 0.9, "ECN with beta 0.5 under-uses the link: {u0}");
    assert!(u1 > u0 + 0.05, "ABE {u1} vs ECN {u0}");
}

#[test]
fn flow_samples_trace_the_window_without_changing_the_run() {
    // One NewReno ABE flow through CoDel with ECN, sampled every 50 ms.
    let codel = json!({"kind": "codel", "ecn": true});
    let base = one_flow(10e6, 100.0, 1000, codel, json!({"ecn": true, "abe": true, "beta_ecn": 0.8}), 20.0);
    let mut sampled = base.clone();
    merge(&mut sampled, &json!({"warmup_s": 0.0, "metrics": {"flow_sample_ms": 50.0}}));
    let mut plain = base;
    merge(&mut plain, &json!({"warmup_s": 0.0}));
    let (a, b) = (run(sampled, 1), run(plain, 1));
    assert_eq!(b.table("flow_samples").rows(), 0, "off by default");
    for t in ["flows", "links", "sojourn", "queue_samples"] {
        assert_eq!(a.table(t), b.table(t), "sampling changed the {t} table");
    }
    let s = a.table("flow_samples");
    // One row per 50 ms from 0 to 20 s, except before the flow opens at 0 (it opens at once).
    assert_eq!(s.rows(), 401);
    let (cwnd, ss, delivered) = (s.u64s("cwnd_bytes"), s.f64s("ssthresh_bytes"), s.u64s("delivered_bytes"));
    assert!(delivered.windows(2).all(|w| w[0] <= w[1]), "in-order bytes never decrease");
    assert_eq!(cwnd[0], 10 * 1448, "the linux profile's initial window");
    assert!(ss[0].is_infinite(), "no ssthresh before the first reduction");
    // After slow start ends on a mark, ssthresh is 0.8 x FlightSize and cwnd saws around it.
    let first = ss.iter().position(|x| x.is_finite()).expect("slow start ended");
    let reductions = a.table("flows").u64s("ecn_reductions")[0];
    assert!(reductions > 3 && a.table("flows").u64s("drops")[0] == 0);
    assert!(cwnd[first..].iter().all(|&c| c >= 2 * 1448));
    let last = delivered[s.rows() - 1];
    let total = a.table("flows").u64s("delivered_bytes")[0];
    assert!(last <= total && total - last < 10e6 as u64 / 8 / 20, "last sample within 50 ms of the end");
    let srtt = s.f64s("srtt_ms");
    assert!(srtt[s.rows() - 1] >= 100.0 && srtt[s.rows() - 1] < 130.0, "srtt {}", srtt[s.rows() - 1]);
}

#[test]
fn a_bulk_workload_can_carry_tcp_settings_of_its_own() {
    // Seed 002 section IV-D: ECN CUBIC flows with ABE against NewReno flows without ECN, each
    // group on hosts of its own, through CoDel with ECN.
    let v = json!({
        "duration_s": 30.0,
        "topology": {"clients": 4, "servers": 4, "access_rate_bps": 1e9,
                     "bottleneck": {"rate_bps": 10e6, "delay_ms": 20.0,
                                    "queue": {"limit_pkts": 1000, "aqm": {"kind": "codel", "ecn": true}}}},
        "tcp": {"profile": "linux"},
        "workloads": [
            {"kind": "bulk", "flows": 2,
             "tcp": {"congestion_control": "cubic", "ecn": true, "abe": true, "beta_ecn": 0.85}},
            {"kind": "bulk", "flows": 2, "host_offset": 2},
        ],
    });
    let r = run(v.clone(), 1);
    let f = r.table("flows");
    let (ecn, w) = (f.bools("ecn"), f.i64s("workload"));
    for i in 0..f.rows() {
        assert_eq!(ecn[i], w[i] == 0, "only the first group negotiates ECN");
        if w[i] == 0 {
            assert!(f.u64s("ecn_reductions")[i] > 0 && f.u64s("drops")[i] == 0);
        } else {
            assert!(f.u64s("drops")[i] > 0 && f.u64s("marks")[i] == 0);
        }
    }
    // The override is checked like the tcp table, naming its path.
    let mut bad = v.clone();
    bad["workloads"][0]["tcp"]["beta_ecn"] = json!(1.5);
    let e = ecnlab::Scenario::from_json(&bad.to_string()).unwrap_err().to_string();
    assert!(e.contains("workloads[0].tcp.beta_ecn"), "{e}");
    let mut bad = v;
    bad["tcp"]["clients"] = json!({"ecn_fraction": 0.5});
    let e = ecnlab::Scenario::from_json(&bad.to_string()).unwrap_err().to_string();
    assert!(e.contains("workloads[0].tcp") && e.contains("ecn_fraction"), "{e}");
}

/// Segments per round trip a NewReno flow's cwnd grows in congestion avoidance, from its
/// flow samples.
fn ca_growth_per_rtt(abc: bool) -> f64 {
    // 10 Mb/s, 200 ms (BDP 167 packets), a 60-packet DropTail buffer: after slow start the
    // window climbs from about half of 227 packets back to 227 in congestion avoidance.
    let mut v = one_flow(10e6, 200.0, 60, json!({"kind": "droptail"}), json!({"abc": abc}), 60.0);
    merge(&mut v, &json!({"warmup_s": 0.0, "metrics": {"flow_sample_ms": 100.0}}));
    let r = run(v, 1);
    let s = r.table("flow_samples");
    let (t, cwnd, ss, srtt) = (s.f64s("t_s"), s.u64s("cwnd_bytes"), s.f64s("ssthresh_bytes"), s.f64s("srtt_ms"));
    // The longest stretch of congestion avoidance (ssthresh unchanged, cwnd above it and not
    // falling) after the first 5 s (slow start, its losses and recovery), at least 5 s long.
    let in_ca = |i: usize| cwnd[i] as f64 > ss[i];
    let (mut a, mut b) = (0, 0);
    let mut i = 50;
    while i < t.len() {
        let start = i;
        while i + 1 < t.len() && in_ca(i) && in_ca(i + 1) && ss[i + 1] == ss[start] && cwnd[i + 1] >= cwnd[i] {
            i += 1;
        }
        if i - start > b - a {
            (a, b) = (start, i);
        }
        i += 1;
    }
    assert!(b - a >= 50, "5 s of congestion avoidance: {:.1} s from {:.1} s", t[b] - t[a], t[a]);
    let rtts: f64 = (a..b).map(|i| (t[i + 1] - t[i]) * 1000.0 / srtt[i]).sum();
    (cwnd[b] - cwnd[a]) as f64 / 1448.0 / rtts
}

#[test]
fn byte_counting_doubles_growth_under_delayed_acks_in_closed_loop() {
    // RFC 5681 per-ACK growth with an ACK every 2 segments: half a segment per round trip;
    // RFC 3465 byte counting (FreeBSD, Linux): one.
    let (plain, abc) = (ca_growth_per_rtt(false), ca_growth_per_rtt(true));
    assert!((0.4..0.6).contains(&plain), "RFC 5681: {plain} segments per RTT");
    assert!((0.85..1.15).contains(&abc), "RFC 3465: {abc} segments per RTT");
}

#[test]
fn flows_count_the_marks_an_aqm_makes_at_enqueue_and_at_dequeue() {
    // CoDel marks as packets leave the queue, the threshold marker as they arrive: either way
    // every mark on the bottleneck is charged to one flow.
    let flows = json!([{"kind": "bulk", "flows": 4}]);
    for aqm in [json!({"kind": "codel", "ecn": true}), json!({"kind": "threshold", "k_pkts": 20})] {
        let mut v = marked_dumbbell(20, json!({"ecn": true}), flows.clone(), 20.0);
        v["topology"]["bottleneck"]["queue"]["aqm"] = aqm.clone();
        let r = run(v, 1);
        let q = r.table("queue_counts");
        let outcome = common::strs(&r, "queue_counts", "outcome");
        let queue_marks: u64 = (0..q.rows()).filter(|&i| outcome[i] == "marked").map(|i| q.u64s("packets")[i]).sum();
        assert!(queue_marks > 100, "{aqm}: {queue_marks} marks");
        assert_eq!(sum_u64(&r, "flows", "marks"), queue_marks, "{aqm}");
        assert_eq!(sum_u64(&r, "flows", "drops"), 0, "{aqm}: ECN flows, no overflow");
    }
}

/// The marker on the up queue instead (SYNs and requests cross it), with the packet source
/// sending up: a SYN finds the up queue above K about half of the time.
fn syn_scenario(tcp: Value) -> Results {
    let mut v = marked_dumbbell(5, tcp, exchanges_against_a_source(), 40.0);
    let marker = v["topology"]["bottleneck"]["queue"].clone();
    v["topology"]["bottleneck"]["up_queue"] = marker;
    v["topology"]["bottleneck"]["queue"] = json!({"limit_pkts": 400});
    v["workloads"][0]["direction"] = json!("up");
    run(v, 7)
}

#[test]
fn ecn_plus_plus_marks_the_syn_where_accecn_alone_drops_it() {
    // ECN++ over AccECN: the first SYN is ECT(0), so the marker marks it instead of dropping
    // it: no handshake waits an initial RTO (a marked SYN costs its client a one-segment
    // start, counted among the ECN reductions with those for marked requests). AccECN without
    // ECN++ sends Not-ECT SYNs: some are dropped and their exchanges wait 3 s.
    let plus = syn_scenario(json!({"ecn": true, "ecn_feedback": "accecn", "ecn_plus_plus": true}));
    let acc = syn_scenario(json!({"ecn": true, "ecn_feedback": "accecn"}));
    let (p, a) = (plus.table("exchanges"), acc.table("exchanges"));
    let n = p.rows();
    assert!(n >= 100 && a.rows() == n, "{n} exchanges");
    assert!(p.f64s("handshake_wait_s").iter().all(|w| *w == 0.0), "an ECN++ SYN waited");
    assert!(p.bools("completed").iter().all(|c| *c));
    let waited = a.f64s("handshake_wait_s").iter().filter(|w| **w >= 3.0 - 1e-9).count();
    let reductions = sum_u64(&plus, "flows", "ecn_reductions");
    eprintln!("{n} exchanges: {waited} AccECN handshakes waited the initial RTO; ECN++ clients made {reductions} ECN reductions");
    assert!(waited >= n / 10, "only {waited} AccECN SYNs dropped");
    assert!(reductions as usize >= n / 10, "marks answered: {reductions}");
    let mean = |r: &Results| mean_response_time(r, |_| true);
    assert!(mean(&acc) > mean(&plus) + 0.3, "AccECN {} s vs ECN++ {} s", mean(&acc), mean(&plus));
}
