//! Closed-loop validation of the AQMs (DESIGN validation ladder, layer 3): long-lived TCP flows
//! through each controller, each test asserting the number the algorithm is designed to hold.

mod common;

use common::{aqm_series, run, strs};
use ecnlab::aqm::pi;
use ecnlab::metrics::Results;
use ecnlab::Scenario;
use serde_json::{json, Value};

/// `flows` long-lived NewReno downloads with propagation RTT `rtt_ms` over a `rate_bps`
/// bottleneck whose down queue runs `aqm`; `mss` payload bytes per packet (+40 of headers).
fn bulk(rate_bps: f64, flows: u32, rtt_ms: f64, mss: u32, limit_pkts: u32, aqm: Value, duration_s: f64) -> Value {
    json!({
        "duration_s": duration_s,
        "warmup_s": duration_s / 4.0,
        "topology": {"clients": flows, "servers": flows, "access_rate_bps": 1e9, "access_delay_ms": 0.0,
                     "bottleneck": {"rate_bps": rate_bps, "delay_ms": 10.0,
                                    "queue": {"limit_pkts": limit_pkts, "aqm": aqm}}},
        "tcp": {"mss_bytes": mss, "profile": "linux"},
        "workloads": [{"kind": "bulk", "flows": flows, "start_jitter_s": 1.0,
                       "rtt_ms": {"dist": "constant", "value": rtt_ms}}],
        "metrics": {"sojourn_bin_ms": 0.1, "queue_sample_ms": 10.0}
    })
}



fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (mut s, mut n) = (0.0, 0.0);
    for x in xs {
        s += x;
        n += 1.0;
    }
    s / n
}

/// Mean sojourn (ms) of packets through the down bottleneck, and its `q`-quantiles, from the
/// histogram (linear within a bin; the tests use 0.1 ms bins).
fn sojourn_ms(r: &Results, qs: &[f64]) -> (f64, Vec<f64>) {
    let t = r.table("sojourn");
    let links = strs(r, "sojourn", "link");
    let (lo, hi, n) = (t.f64s("bin_start_ms"), t.f64s("bin_end_ms"), t.u64s("packets"));
    let rows: Vec<usize> = (0..t.rows()).filter(|&i| links[i] == "bottleneck_down").collect();
    let total: u64 = rows.iter().map(|&i| n[i]).sum();
    let mean = rows.iter().map(|&i| (lo[i] + hi[i].min(lo[i] + 0.1)) / 2.0 * n[i] as f64).sum::<f64>() / total as f64;
    let quantile = |q: f64| {
        let mut cum = 0.0;
        for &i in &rows {
            let c = n[i] as f64;
            if cum + c >= q * total as f64 {
                return lo[i] + (q * total as f64 - cum) / c * (hi[i].min(lo[i] + 0.1) - lo[i]);
            }
            cum += c;
        }
        f64::NAN
    };
    (mean, qs.iter().map(|&q| quantile(q)).collect())
}

/// 50 flows at 10 Mb/s with 500-B packets (as in PI01's example): C = 2500 pkt/s, RTT 100 ms
/// (bandwidth-delay product 250 packets), target queue 100 packets (40 ms).
const C_PPS: f64 = 2500.0;
const TARGET_PKTS: f64 = 100.0;

#[test]
fn pi_holds_the_mean_queue_at_q_ref() {
    // Coefficients by PI01's design rules: N- = 50, R+ = 0.1 s + q_ref / C = 0.14 s, 160 Hz.
    let d = pi::design(C_PPS, 50.0, 0.1 + TARGET_PKTS / C_PPS);
    let (a, b) = pi::coefficients(d.k_pi, d.z, 160.0);
    let aqm = json!({"kind": "pi", "a": a, "b": b, "q_ref_pkts": TARGET_PKTS, "mean_pkt_bytes": 500});
    let r = run(bulk(10e6, 50, 100.0, 460, 1000, aqm, 80.0), 1);
    let q = r.get("mean_queue_pkts_down");
    let p = mean(aqm_series(&r, "p").into_iter().filter(|(t, _)| *t >= 20.0).map(|(_, v)| v));
    eprintln!("PI: a {a:.4e} b {b:.4e}; mean queue {q:.1} pkts (q_ref {TARGET_PKTS}), mean p {p:.4}, utilization {:.3}", r.get("utilization_down"));
    assert!((q / TARGET_PKTS - 1.0).abs() < 0.2, "PI mean queue {q} vs q_ref {TARGET_PKTS}");
}

#[test]
fn rem_holds_the_mean_queue_at_b_star() {
    let aqm = json!({"kind": "rem", "b_star_pkts": TARGET_PKTS, "mean_pkt_bytes": 500});
    let r = run(bulk(10e6, 50, 100.0, 460, 1000, aqm, 80.0), 1);
    let q = r.get("mean_queue_pkts_down");
    let price = mean(aqm_series(&r, "price").into_iter().filter(|(t, _)| *t >= 20.0).map(|(_, v)| v));
    eprintln!("REM: mean queue {q:.1} pkts (b* {TARGET_PKTS}), mean price {price:.2}, utilization {:.3}", r.get("utilization_down"));
    assert!((q / TARGET_PKTS - 1.0).abs() < 0.2, "REM mean queue {q} vs b* {TARGET_PKTS}");
}

/// Seed 002's setting: CoDel at its defaults, 1000-packet buffer, one NewReno flow, 100 ms RTT,
/// 10 Mb/s (1500-B packets: C = 833 pkt/s, bandwidth-delay product 83 packets).
fn codel_run() -> Results {
    run(bulk(10e6, 1, 100.0, 1460, 1000, json!({"kind": "codel"}), 60.0), 1)
}

#[test]
#[ignore = "not met, by physics: CoDel's 5 ms target (4 packets) is far below the 83-packet \
            BDP, so after each halving the window stays below the BDP for most of the cycle and \
            packets wait at most behind their delayed-ACK twin (1.2 ms); measured median 1.15 ms (see codel_one_newreno_flow_follows_the_sawtooth)"]
fn codel_keeps_one_newreno_flow_near_its_target() {
    let (_, q) = sojourn_ms(&codel_run(), &[0.5]);
    assert!((5.0..=10.0).contains(&q[0]), "CoDel median sojourn {} ms", q[0]);
}

#[test]
fn codel_one_newreno_flow_follows_the_sawtooth() {
    let r = codel_run();
    let (mean_ms, q) = sojourn_ms(&r, &[0.5, 0.9, 0.99]);
    let u = r.get("utilization_down");
    eprintln!("CoDel: sojourn median {:.2} p90 {:.2} p99 {:.2} mean {mean_ms:.2} ms; utilization {u:.3}", q[0], q[1], q[2]);
    // CoDel drops once sojourn has exceeded 5 ms for 100 ms (one RTT, in which the window grows
    // by at most one packet), so the window peaks near W = BDP + 5 packets and halves: it
    // sweeps [W/2, W] linearly and the link is busy min(w, BDP)/BDP of the time. Predicted
    // utilization 0.788 for BDP 83.4 (RTT 100 ms plus transmission times) and W 88.
    let (bdp, w) = (833.33 * 0.1008, 88.0);
    let busy = ((bdp * bdp - w * w / 4.0) / (2.0 * bdp) + (w - bdp)) / (w / 2.0);
    assert!((u - busy).abs() < 0.02, "utilization {u} vs sawtooth {busy}");
    // Delay control: sojourn exceeds the target only during the interval before a drop.
    assert!(q[2] <= 10.0, "p99 sojourn {} ms", q[2]);
}

fn pie_case(variant: &str, target_ms: f64) {
    let aqm = json!({"kind": "pie", "variant": variant, "drop_above_mark_ecnth": false});
    let r = run(bulk(10e6, 20, 100.0, 1460, 1000, aqm, 60.0), 1);
    let (mean_ms, q) = sojourn_ms(&r, &[0.5]);
    eprintln!("PIE {variant}: mean sojourn {mean_ms:.2} ms (target {target_ms}), median {:.2}, utilization {:.3}", q[0], r.get("utilization_down"));
    assert!((mean_ms / target_ms - 1.0).abs() < 0.5, "PIE {variant} mean queueing delay {mean_ms} ms vs target {target_ms}");
}

#[test]
fn pie_rfc8033_holds_mean_delay_near_target() {
    pie_case("rfc8033", 15.0);
}

#[test]
fn pie_linux_early_holds_mean_delay_near_target() {
    pie_case("linux_early", 20.0);
}

/// 20 Classic ECN flows (ECT(0)) at 10 Mb/s, RTT 100 ms, through `aqm` for 60 s: the mean
/// queueing delay, the means of the sampled `p` and `p_c`, and the mark rate.
fn pi2_case(aqm: Value) -> (f64, f64, f64, f64) {
    let mut v = bulk(10e6, 20, 100.0, 1460, 1000, aqm.clone(), 60.0);
    v["tcp"]["ecn"] = json!(true);
    let r = run(v, 1);
    let (mean_ms, q) = sojourn_ms(&r, &[0.5, 0.99]);
    let p = mean(aqm_series(&r, "p").into_iter().map(|(_, v)| v));
    let p_c = mean(aqm_series(&r, "p_c").into_iter().map(|(_, v)| v));
    eprintln!("{aqm}: mean sojourn {mean_ms:.2} ms, median {:.2}, p99 {:.2}, mean p' {p:.4}, mean p_C {p_c:.4}, marks {:.4}, losses {:.4}, utilization {:.3}",
        q[0], q[1], r.get("mark_rate_down"), r.get("loss_rate_down"), r.get("utilization_down"));
    assert!(r.get("utilization_down") > 0.95, "{aqm}: utilization {}", r.get("utilization_down"));
    (mean_ms, p, p_c, r.get("mark_rate_down"))
}

#[test]
fn pi2_and_dualpi2_hold_classic_ecn_flows_near_their_target_delay() {
    // Classic flows see p_C = p'^2 in both (DualPI2 puts ECT(0) in its C queue): the PI
    // controller holds the queueing delay near its 15 ms target (RFC 9332 A.1; measured
    // 15.9 ms), and the flows' data packets are marked at the sampled p_C (measured mark rate
    // 0.0254, mean p' 0.159).
    let pi2 = pi2_case(json!({"kind": "pi2"}));
    let (mean_ms, p, p_c, marks) = pi2;
    assert!((mean_ms / 15.0 - 1.0).abs() < 0.25, "mean queueing delay {mean_ms} ms vs target 15");
    assert!(p > 0.0 && p < 0.5, "mean p' {p}");
    assert!((marks / p_c - 1.0).abs() < 0.2, "mark rate {marks} against mean sampled p_C {p_c}");
    // With Classic traffic alone DualPI2's L queue stays empty: it is PI2 on its C queue, draw
    // for draw.
    assert_eq!(pi2_case(json!({"kind": "dualpi2"})), pi2);
}

#[test]
fn adaptive_red_settles_max_p_in_its_band_and_the_average_at_the_target_delay() {
    // 100 Mb/s, 1500-B packets: C = 8333 pkt/s; target 5 ms -> min_th 20.8, max_th 62.5, target
    // average 41.7 packets and band [37.5, 45.8]. 50 flows at RTT 40 ms need p of a few %.
    let aqm = json!({"kind": "ared", "mean_pkt_bytes": 1500});
    let r = run(bulk(100e6, 50, 40.0, 1460, 1000, aqm, 60.0), 1);
    let c = 100e6 / (8.0 * 1500.0);
    let target = 0.005 * c;
    let max_p = aqm_series(&r, "max_p");
    let last = max_p.last().unwrap().1;
    let avg = mean(aqm_series(&r, "avg").into_iter().filter(|(t, _)| *t >= 30.0).map(|(_, v)| v));
    eprintln!("ARED: final max_p {last:.4}, mean avg {avg:.1} pkts (target {target:.1}), utilization {:.3}", r.get("utilization_down"));
    assert!((0.01..=0.5).contains(&last), "final max_p {last} outside [0.01, 0.5]");
    // The band is +-10 % of the target; the time average of avg over the last half of the run
    // must lie within +-20 % (the band plus the excursions of a 0.5 s adaptation loop).
    assert!((avg / target - 1.0).abs() < 0.2, "ARED average queue {avg} vs target {target}");
}

#[test]
fn every_kind_runs_from_a_scenario_and_reports_its_variables() {
    let cases = [
        (json!({"kind": "red", "ecn": true, "above_max": "mark"}), vec!["avg", "max_p"]),
        (json!({"kind": "red", "ecn": true, "above_max": "ecnm", "byte_mode": true}), vec!["avg", "max_p"]),
        (json!({"kind": "ared"}), vec!["avg", "max_p"]),
        (json!({"kind": "rem", "ecn": true}), vec!["price", "prob"]),
        (json!({"kind": "pi"}), vec!["p"]),
        (json!({"kind": "pie", "variant": "linux_early", "ecn": true}), vec!["p", "qdelay_ms", "burst_ms"]),
        (json!({"kind": "pie", "derandomize": true, "byte_mode": true}), vec!["p", "qdelay_ms", "burst_ms"]),
        (json!({"kind": "codel", "ecn": true}), vec!["dropping", "count", "sojourn_ms"]),
        (json!({"kind": "threshold", "k_pkts": 20}), vec![]),
        (json!({"kind": "pi2"}), vec!["p", "p_c", "p_l", "qdelay_ms"]),
        (json!({"kind": "dualpi2"}), vec!["p", "p_c", "p_cl", "p_l", "l_delay_ms", "c_delay_ms"]),
    ];
    for (aqm, vars) in cases {
        let mut v = bulk(10e6, 5, 50.0, 1460, 200, aqm.clone(), 5.0);
        v["tcp"]["ecn"] = json!(true);
        let r = run(v, 2);
        let names = strs(&r, "aqm_samples", "variable");
        for var in &vars {
            assert!(!aqm_series(&r, var).is_empty(), "{aqm}: no samples of {var}");
        }
        assert_eq!(names.is_empty(), vars.is_empty(), "{aqm}: {names:?}");
        // Each run is congested (5 flows, 50 ms, 200-packet buffer): every AQM signals.
        let signals = r.get("mark_rate_down") + r.get("loss_rate_down");
        assert!(signals > 0.0, "{aqm}: no congestion signal");
    }
}

#[test]
fn aqm_variables_keeps_only_the_variables_named_and_changes_nothing_else() {
    let mut all = bulk(10e6, 5, 50.0, 1460, 200, json!({"kind": "dualpi2"}), 5.0);
    all["tcp"]["ecn"] = json!(true);
    all["metrics"] = json!({"queue_sample_ms": 1.0});
    let mut some = all.clone();
    some["metrics"]["aqm_variables"] = json!(["c_delay_ms", "l_delay_ms", "avg"]);
    let mut none = all.clone();
    none["metrics"]["aqm_variables"] = json!([]);
    let (a, s, n) = (run(all, 3), run(some, 3), run(none, 3));
    let mut kept = strs(&s, "aqm_samples", "variable");
    kept.dedup();
    assert_eq!(kept[..2], ["l_delay_ms", "c_delay_ms"], "in the order DualPI2 reports them");
    kept.sort();
    kept.dedup();
    assert_eq!(kept, ["c_delay_ms", "l_delay_ms"]);
    assert!(a.table("aqm_samples").rows() > s.table("aqm_samples").rows());
    assert_eq!(n.table("aqm_samples").rows(), 0);
    for var in ["l_delay_ms", "c_delay_ms"] {
        assert_eq!(aqm_series(&a, var), aqm_series(&s, var), "{var}");
    }
    // Sampling fewer variables changes no other table and no measure.
    for r in [&s, &n] {
        for (x, y) in a.tables.iter().zip(&r.tables).filter(|(x, _)| x.name != "aqm_samples") {
            assert_eq!(format!("{:?}", x.columns), format!("{:?}", y.columns), "{}", x.name);
        }
        for ((k, x), (_, y)) in a.summary.iter().zip(&r.summary).filter(|((k, _), _)| k != "wall_s_core") {
            assert_eq!(format!("{x:?}"), format!("{y:?}"), "{k}");
        }
    }
}

#[test]
fn an_unknown_aqm_variable_is_an_error_naming_it() {
    let mut v = bulk(10e6, 1, 50.0, 1460, 200, json!({"kind": "dualpi2"}), 5.0);
    v["metrics"] = json!({"aqm_variables": ["l_delay_ms", "l_dealy_ms"]});
    let e = Scenario::from_json(&v.to_string()).and_then(|s| s.validate().map(|_| s)).unwrap_err().to_string();
    assert!(e.starts_with("metrics.aqm_variables[1] (\"l_dealy_ms\") is not a variable of any AQM; known: "), "{e}");
    assert!(e.contains("known: avg, avg_in, ") && e.contains(", l_delay_ms, "), "{e}");
}

#[test]
fn bad_parameters_are_errors_naming_the_field() {
    let v = bulk(10e6, 1, 50.0, 1460, 200, json!({"kind": "red", "min_th_pkts": 30, "max_th_pkts": 20}), 5.0);
    let e = Scenario::from_json(&v.to_string()).and_then(|s| s.validate().map(|_| s)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "topology.bottleneck.queue.aqm.min_th_pkts (30) must not be above max_th_pkts (20)"
    );
    let v = bulk(10e6, 1, 50.0, 1460, 200, json!({"kind": "pie", "tupdate_ms": 0}), 5.0);
    let e = Scenario::from_json(&v.to_string()).and_then(|s| s.validate().map(|_| s)).unwrap_err();
    assert_eq!(e.to_string(), "topology.bottleneck.queue.aqm.tupdate_ms (0) must be at least 0.001 (1 us)");
    for (aqm, want) in [
        (json!({"kind": "dualpi2", "coupling_factor": 0}), "topology.bottleneck.queue.aqm.coupling_factor (0) must be positive"),
        (json!({"kind": "pi2", "target_us": 0}), "topology.bottleneck.queue.aqm.target_us (0) must be positive"),
        (json!({"kind": "dualpi2", "tshift_us": -1}), "topology.bottleneck.queue.aqm.tshift_us (-1) must be zero or positive"),
    ] {
        let v = bulk(10e6, 1, 50.0, 1460, 200, aqm, 5.0);
        let e = Scenario::from_json(&v.to_string()).and_then(|s| s.validate().map(|_| s)).unwrap_err();
        assert_eq!(e.to_string(), want);
    }
    let v = bulk(10e6, 1, 50.0, 1460, 200, json!({"kind": "red", "min_th": 5}), 5.0);
    assert!(Scenario::from_json(&v.to_string()).unwrap_err().to_string().contains("unknown field `min_th`"));
}

#[test]
fn sampling_does_not_change_the_run_and_runs_repeat() {
    // The periodic controllers catch up lazily at packet events and at samples: sampling at a
    // different period (or not at all) must leave every decision unchanged.
    for aqm in [json!({"kind": "pi", "q_ref_pkts": 20}), json!({"kind": "pie"}), json!({"kind": "ared"}), json!({"kind": "rem"}), json!({"kind": "pi2"}), json!({"kind": "dualpi2"})] {
        let mut a = bulk(10e6, 10, 60.0, 1460, 300, aqm.clone(), 8.0);
        a["metrics"]["queue_sample_ms"] = json!(0.0);
        let mut b = a.clone();
        b["metrics"]["queue_sample_ms"] = json!(3.7);
        let (ra, rb) = (run(a, 5), run(b.clone(), 5));
        for t in ["flows", "links", "queue_counts", "sojourn"] {
            assert!(ra.table(t) == rb.table(t), "{aqm}: table {t} changed with sampling");
        }
        assert!(ra.table("aqm_samples").rows() == 0 && rb.table("aqm_samples").rows() > 0);
        let rc = run(b, 5);
        assert!(rb.table("aqm_samples") == rc.table("aqm_samples"), "{aqm}: samples differ between runs");
    }
}
