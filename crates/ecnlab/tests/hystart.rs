//! Slow-start exit before loss in closed loop (`tcp.hystart`, docs/models/tcp.md): one bulk
//! flow over a drop-tail bottleneck whose buffer holds four times the path's BDP.

mod common;

use common::scenario;
use ecnlab::aqm::Outcome;
use ecnlab::metrics::Results;
use ecnlab::Simulation;
use serde_json::{json, Value};

/// 10 Mb/s, 100 ms propagation RTT: BDP = 125 kB, 83 packets of 1500 B; the buffer holds 333
/// packets (4 BDP, 400 ms of queueing).
const RATE_BPS: f64 = 10e6;
const PKT_BYTES: f64 = 1500.0;
const BUFFER_PKTS: u64 = 333;

fn deep_buffer(tcp: Value) -> Value {
    json!({
        "duration_s": 8.0,
        "warmup_s": 0.0,
        "topology": {"clients": 1, "servers": 1, "access_rate_bps": 1e9, "access_delay_ms": 0.0,
                     "bottleneck": {"rate_bps": RATE_BPS, "delay_ms": 50.0,
                                    "queue": {"limit_pkts": BUFFER_PKTS}}},
        "tcp": tcp,
        "workloads": [{"kind": "bulk", "flows": 1}],
        "metrics": {"flow_sample_ms": 1.0},
    })
}

/// What happened when slow start ended.
#[derive(Debug)]
struct Exit {
    t_s: f64,
    cwnd_pkts: f64,
    /// Packets dropped at the bottleneck before the exit.
    drops_before: u64,
    /// Packets held by the bottleneck at the exit, and the queueing delay they make.
    held_pkts: u64,
    queue_delay_ms: f64,
}

/// Runs the scenario in 1 ms steps, watching the down bottleneck; slow start ends at the
/// first flow sample with a finite ssthresh.
fn run(tcp: Value) -> Exit {
    let mut sim = Simulation::new(scenario(&deep_buffer(tcp)), 1).unwrap();
    let mut trace = Vec::new(); // (t_ns, drops so far, packets held)
    let step = 1_000_000;
    let mut t = 0;
    while !sim.run_until(t) {
        let (q, _, held) = sim.link_counters("bottleneck_down").unwrap();
        trace.push((t, q.total(Outcome::Dropped, None), held));
        t += step;
    }
    let r: Results = sim.finish();
    let fs = r.table("flow_samples");
    let (ts, ss, cw) = (fs.f64s("t_s"), fs.f64s("ssthresh_bytes"), fs.u64s("cwnd_bytes"));
    let i = (0..fs.rows()).find(|&i| ss[i].is_finite()).expect("slow start ends in the run");
    let t_ns = (ts[i] * 1e9).round() as u64;
    // The last trace point at or before the sample (both on the 1 ms grid).
    let &(_, drops_before, held) = trace.iter().rev().find(|p| p.0 <= t_ns).unwrap();
    Exit {
        t_s: ts[i],
        cwnd_pkts: cw[i] as f64 / 1460.0,
        drops_before,
        held_pkts: held,
        queue_delay_ms: held as f64 * PKT_BYTES * 8.0 / RATE_BPS * 1e3,
    }
}

fn tcp(cc: &str, hystart: &str, extra: Value) -> Value {
    let mut t = json!({"profile": "linux", "congestion_control": cc, "hystart": hystart});
    common::merge(&mut t, &extra);
    t
}

#[test]
fn hystart_exits_slow_start_before_loss_on_a_deep_buffer() {
    let buffer_delay_ms = BUFFER_PKTS as f64 * PKT_BYTES * 8.0 / RATE_BPS * 1e3;
    // Without a slow-start exit, slow start runs until the buffer overflows.
    for cc in ["newreno", "cubic"] {
        let e = run(tcp(cc, "off", json!({})));
        println!("{cc}, off: {e:?}");
        assert!(e.drops_before > 0, "{cc}: slow start ends at a loss: {e:?}");
        assert!(e.held_pkts >= BUFFER_PKTS - 2, "{cc}: with the buffer full: {e:?}");
    }

    // Linux's HyStart, delay detection (an ACK every two segments, 2.4 ms apart at this rate:
    // never a train). Slow start grows 1.5x per round (delayed ACKs) and the samples of a round
    // are those of the window sent in the previous one, so the exit comes when a window sent
    // one round earlier saw a standing queue of clamp(100 ms / 8) = 12.5 ms: a window above
    // BDP + 10 = 93 packets, grown twice since, 1.5^2 * 93 + 9 = 218 packets at most; the
    // queue then holds at most 218 - 83 = 135 packets, 162 ms: under half the buffer.
    let mut linux_exit = None;
    for detect in ["both", "delay"] {
        let e = run(tcp("cubic", "linux", json!({"hystart_detect": detect})));
        println!("cubic, linux, {detect}: {e:?}");
        assert_eq!(e.drops_before, 0, "linux {detect}: no loss before the exit: {e:?}");
        assert!(e.queue_delay_ms < 0.5 * buffer_delay_ms, "linux {detect}: {e:?}");
        assert!(e.cwnd_pkts > 83.0 && e.cwnd_pkts < 218.0, "linux {detect}: {e:?}");
        linux_exit = Some(e);
    }
    let linux_exit = linux_exit.unwrap();

    // The ACK train (an ACK per segment, 1.2 ms apart): slow start ends once the ACKs of one
    // window last more than half the minimum RTT, i.e. a window of half the BDP has gone
    // through the bottleneck back to back: before any standing queue, with only the burst of
    // the round in the buffer.
    // (Linux's own receiver ACKs every second full segment: the RFC 5681 policy with
    // ack_every_segments = 1 gives the ACK per segment.)
    let e = run(tcp("cubic", "linux", json!({"hystart_detect": "ack_train", "ack_every_segments": 1, "delayed_ack_policy": "rfc5681"})));
    println!("cubic, linux, ack_train, per-segment ACKs: {e:?}");
    assert_eq!(e.drops_before, 0, "ack train: {e:?}");
    assert!(e.queue_delay_ms < 0.2 * buffer_delay_ms, "ack train: {e:?}");
    assert!(e.cwnd_pkts < 2.0 * 83.0, "ack train: {e:?}");

    // HyStart++: the same delay threshold (RttThresh = 100 ms / 8) starts Conservative Slow
    // Start near Linux's exit point; then 5 rounds at a quarter of the growth (1.125x per round
    // instead of 1.5x: 1.125^5 = 1.8x) before ssthresh = cwnd. No loss on the way: the
    // buffer holds BDP + 333 = 416 packets. The same for every controller (slow start is the
    // same until ssthresh is set).
    for cc in ["cubic", "newreno", "reno"] {
        let e = run(tcp(cc, "rfc9406", json!({})));
        println!("{cc}, rfc9406: {e:?}");
        assert_eq!(e.drops_before, 0, "{cc} rfc9406: no loss before the exit: {e:?}");
        assert!(e.held_pkts < BUFFER_PKTS, "{cc} rfc9406: the buffer is not full: {e:?}");
        let growth = e.cwnd_pkts / linux_exit.cwnd_pkts;
        assert!(growth > 1.3 && growth < 2.0, "{cc} rfc9406: CSS grew {growth}x: {e:?}");
        assert!(e.t_s - linux_exit.t_s > 0.5, "{cc} rfc9406: five CSS rounds of at least 100 ms: {e:?}");
    }
}
