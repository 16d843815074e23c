//! Closed-loop tests of the differential and fair AQMs (issue 5): DCN, AFD, RIO-PS, CHOKe.
//! Each asserts the number the mechanism is designed to achieve, against a baseline run in the
//! same scenario.

mod common;

use common::{aqm_series, run, strs};
use ecnlab::metrics::Results;
use serde_json::{json, Value};

/// `flows` long-lived NewReno downloads over a 10 Mb/s bottleneck (1500-B packets, C = 833
/// pkt/s) with round-trip times drawn from `rtt`, the down queue running `aqm`.
fn bulk(flows: u32, rtt: Value, limit_pkts: u32, aqm: Value, duration_s: f64) -> Value {
    json!({
        "duration_s": duration_s,
        "warmup_s": duration_s / 4.0,
        "topology": {"clients": flows, "servers": flows, "access_rate_bps": 1e9, "access_delay_ms": 0.0,
                     "bottleneck": {"rate_bps": 10e6, "delay_ms": 1.0,
                                    "queue": {"limit_pkts": limit_pkts, "aqm": aqm}}},
        "tcp": {"mss_bytes": 1460, "profile": "linux"},
        "workloads": [{"kind": "bulk", "flows": flows, "start_jitter_s": 1.0, "rtt_ms": rtt}],
        "metrics": {"queue_sample_ms": 10.0}
    })
}



/// Jain's index of the flows' goodputs.
fn jain(r: &Results) -> f64 {
    let g: Vec<f64> = r.table("flows").u64s("goodput_bytes").iter().map(|&b| b as f64).collect();
    let (s, s2) = (g.iter().sum::<f64>(), g.iter().map(|x| x * x).sum::<f64>());
    s * s / (g.len() as f64 * s2)
}

/// Packets of `kind` at the down bottleneck with `outcome`.
fn counted(r: &Results, kind: &str, outcome: &str) -> f64 {
    let t = r.table("queue_counts");
    let (l, k, o) = (strs(r, "queue_counts", "link"), strs(r, "queue_counts", "kind"), strs(r, "queue_counts", "outcome"));
    let n = t.u64s("packets");
    (0..t.rows()).filter(|&i| l[i] == "bottleneck_down" && k[i] == kind && o[i] == outcome).map(|i| n[i] as f64).sum()
}

fn drop_rate(r: &Results, kind: &str) -> f64 {
    let d = counted(r, kind, "dropped");
    d / (d + counted(r, kind, "enqueued") + counted(r, kind, "marked"))
}

#[test]
fn dcn_holds_the_queue_near_q_ref_under_50_flows_with_bounded_tables() {
    let aqm = json!({"kind": "dcn"});
    let r = run(bulk(50, json!({"dist": "constant", "value": 100.0}), 1000, aqm, 60.0), 1);
    let q = r.get("mean_queue_pkts_down");
    let hb = aqm_series(&r, "hb_entries");
    let sb = aqm_series(&r, "sb_entries");
    let hb_max = hb.iter().map(|x| x.1).fold(0.0, f64::max);
    let sb_max = sb.iter().map(|x| x.1).fold(0.0, f64::max);
    let p_ref: Vec<f64> = aqm_series(&r, "p_ref").iter().filter(|x| x.0 > 15.0).map(|x| x.1).collect();
    let p_mean = p_ref.iter().sum::<f64>() / p_ref.len() as f64;
    let dt = r.get("mean_queue_pkts_down");
    eprintln!("DCN: mean queue {q:.1} pkts (q_ref 24), mean p_ref {p_mean:.1}, HB max {hb_max}, SB max {sb_max}, utilization {:.3}, jain {:.3}, {dt}", r.get("utilization_down"), jain(&r));
    assert!(hb_max <= 4096.0 && sb_max <= 1024.0);
    assert!(hb_max >= 25.0, "the long-lived flows are classified high-bandwidth: {hb_max}");
    // Against DropTail in the same scenario (1000-packet buffer): DCN's queue is near q_ref.
    assert!((q / 24.0 - 1.0).abs() < 0.5, "DCN mean queue {q} vs q_ref 24");
}

#[test]
fn dcn_and_afd_split_the_link_more_fairly_than_droptail_across_rtts() {
    // 8 flows, RTT 10 or 200 ms: DropTail favours the short RTTs (throughput ~ 1/RTT).
    let rtt = json!({"dist": "discrete", "values": [10.0, 200.0], "weights": [1.0, 1.0]});
    let dt = run(bulk(8, rtt.clone(), 100, json!({"kind": "droptail"}), 60.0), 3);
    let red = run(bulk(8, rtt.clone(), 100, json!({"kind": "red", "min_th_pkts": 20, "max_th_pkts": 60}), 60.0), 3);
    let dcn = run(bulk(8, rtt.clone(), 100, json!({"kind": "dcn"}), 60.0), 3);
    let afd = run(bulk(8, rtt, 100, json!({"kind": "afd", "q_target_pkts": 24}), 60.0), 3);
    let (j_dt, j_red, j_dcn, j_afd) = (jain(&dt), jain(&red), jain(&dcn), jain(&afd));
    eprintln!("Jain: droptail {j_dt:.3}, red {j_red:.3}, dcn {j_dcn:.3}, afd {j_afd:.3}; util {:.3} {:.3} {:.3} {:.3}",
        dt.get("utilization_down"), red.get("utilization_down"), dcn.get("utilization_down"), afd.get("utilization_down"));
    assert!(j_afd > j_dt + 0.05 && j_afd > j_red + 0.05, "AFD {j_afd} vs DropTail {j_dt} / RED {j_red}");
    assert!(j_dcn > j_dt + 0.05 && j_dcn > j_red + 0.05, "DCN {j_dcn} vs DropTail {j_dt} / RED {j_red}");
}

#[test]
fn choke_penalises_an_unresponsive_source_relative_to_red() {
    // 10 TCP flows plus a constant 600 pkt/s (7.2 Mb/s of 10) unresponsive source.
    let mk = |aqm: Value| {
        let mut v = bulk(10, json!({"dist": "constant", "value": 60.0}), 300, aqm, 40.0);
        v["workloads"].as_array_mut().unwrap().push(json!({"kind": "packet_source", "process": "cbr", "rate_pps": 600.0, "size_bytes": {"dist": "constant", "value": 1500.0}}));
        run(v, 4)
    };
    let red = mk(json!({"kind": "red", "min_th_pkts": 20, "max_th_pkts": 60}));
    let choke = mk(json!({"kind": "choke", "min_th_pkts": 20, "max_th_pkts": 60}));
    let (u_red, u_choke) = (drop_rate(&red, "other"), drop_rate(&choke, "other"));
    let (t_red, t_choke) = (drop_rate(&red, "data"), drop_rate(&choke, "data"));
    eprintln!("unresponsive drop rate: RED {u_red:.3}, CHOKe {u_choke:.3}; TCP drop rate: RED {t_red:.4}, CHOKe {t_choke:.4}");
    // Its delivered share falls from ~(1 - u_red) to (1 - u_choke) of 600 pkt/s.
    assert!(u_choke > u_red + 0.2, "CHOKe {u_choke} vs RED {u_red}");
    assert!(u_choke > 5.0 * t_choke, "CHOKe drops the unresponsive flow far more often: {u_choke} vs TCP {t_choke}");
}

/// Seed 001's heterogeneous groups: N flows in three equal groups with propagation RTTs 300,
/// 100 and 20 ms, 1000-byte packets, windows capped at 30 packets, access links sharing
/// 600 Mb/s, a 10 Mb/s bottleneck with a 50-packet queue; all flows ECN-capable.
fn heterogeneous(n: u32, aqm: Value) -> Value {
    let groups: Vec<Value> = [300.0, 100.0, 20.0]
        .iter()
        .map(|rtt| {
            json!({"kind": "bulk", "flows": n / 3, "start_jitter_s": 2.0,
                   "rtt_ms": {"dist": "constant", "value": rtt},
                   "rwnd_bytes": {"dist": "constant", "value": 30 * 960}})
        })
        .collect();
    json!({
        "duration_s": 100.0,
        "warmup_s": 20.0,
        "topology": {"clients": n, "servers": n, "access_rate_bps": 600e6 / n as f64, "access_delay_ms": 0.0,
                     "bottleneck": {"rate_bps": 10e6, "delay_ms": 5.0, "queue": {"limit_pkts": 50, "aqm": aqm}}},
        "tcp": {"mss_bytes": 960, "ecn": true},
        "workloads": groups,
    })
}

/// Mean goodput of the flows with propagation RTT `rtt_ms`.
fn group_goodput(r: &Results, rtt_ms: f64) -> f64 {
    let f = r.table("flows");
    let (rtt, good) = (f.f64s("rtt_ms"), f.u64s("goodput_bytes"));
    let g: Vec<f64> = (0..f.rows()).filter(|&i| (rtt[i] - rtt_ms).abs() < 0.5).map(|i| good[i] as f64).collect();
    g.iter().sum::<f64>() / g.len() as f64
}

#[test]
fn aecn_narrows_the_gap_between_rtt_groups_that_red_with_ecn_leaves() {
    let red = json!({"ecn": true, "min_th_pkts": 5, "max_th_pkts": 30, "max_p": 0.1, "gentle": false});
    let mut plain = red.clone();
    plain["kind"] = json!("red");
    let ecn = run(heterogeneous(30, plain), 1);
    let aecn = run(heterogeneous(30, json!({"kind": "aecn", "red": red, "n_ref_flows": 30})), 1);
    let gap = |r: &Results| group_goodput(r, 20.0) / group_goodput(r, 300.0);
    eprintln!("RED+ECN: Jain {:.3}, robust/fragile {:.2}; AECN: Jain {:.3}, robust/fragile {:.2}", jain(&ecn), gap(&ecn), jain(&aecn), gap(&aecn));
    assert!(jain(&aecn) > jain(&ecn) + 0.1, "Jain AECN {} vs RED+ECN {}", jain(&aecn), jain(&ecn));
    assert!(gap(&aecn) < gap(&ecn) / 2.0, "goodput ratio of the 20 ms to the 300 ms group");
    assert!(aecn.get("utilization_down") > 0.95);
}

#[test]
fn rio_ps_gives_short_transfers_shorter_response_times_than_rio_without_preference() {
    // 10 long-lived downloads plus 10 kB responses at 20/s (16% of the link), all 60 ms RTT.
    let scenario = |short_flow_pkts: u32| {
        json!({
            "duration_s": 60.0,
            "warmup_s": 10.0,
            "topology": {"clients": 20, "servers": 20,
                         "bottleneck": {"rate_bps": 10e6, "delay_ms": 10.0,
                                        "queue": {"limit_pkts": 100,
                                                  "aqm": {"kind": "rio_ps", "short_flow_pkts": short_flow_pkts}}}},
            "tcp": {"mss_bytes": 1460},
            "workloads": [
                {"kind": "bulk", "flows": 10, "rtt_ms": {"dist": "constant", "value": 60}},
                {"kind": "exchanges", "arrival_rate_per_s": 20.0,
                 "request_bytes": {"dist": "constant", "value": 200},
                 "response_bytes": {"dist": "constant", "value": 10000},
                 "rtt_ms": {"dist": "constant", "value": 60}},
            ],
        })
    };
    let response_times = |r: &Results| {
        let e = r.table("exchanges");
        let (rt, done) = (e.f64s("response_time_s"), e.bools("completed"));
        let mut v: Vec<f64> = (0..e.rows()).filter(|&i| done[i]).map(|i| rt[i]).collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let (rio, ps) = (response_times(&run(scenario(0), 1)), response_times(&run(scenario(20), 1)));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let p90 = |v: &[f64]| v[v.len() * 9 / 10];
    eprintln!("RIO: mean {:.3} s, p90 {:.3} s; RIO-PS: mean {:.3} s, p90 {:.3} s", mean(&rio), p90(&rio), mean(&ps), p90(&ps));
    assert!(rio.len() > 900 && ps.len() > 900);
    assert!(mean(&ps) < 0.8 * mean(&rio), "mean response time");
    assert!(p90(&ps) < 0.5 * p90(&rio), "90th percentile: the short flows' losses are avoided");
}
