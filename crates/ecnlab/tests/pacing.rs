//! TCP pacing (`tcp.pacing`, Linux's pacing; docs/models/tcp.md) through the whole simulator:
//! the pacing timer is scheduled and fires, and a paced slow start queues less at a
//! bottleneck behind a fast access link.

mod common;

use common::{run, strs};
use ecnlab::metrics::Results;
use serde_json::{json, Value};

/// One 3 MB download over a 10 Mb/s bottleneck behind 1 Gb/s access links, 100 ms RTT, a
/// queue large enough that nothing is lost: the transfer is slow start and then line rate.
fn download(pacing: bool) -> Value {
    json!({
        "duration_s": 10.0,
        "topology": {"clients": 1, "servers": 1, "access_rate_bps": 1e9, "access_delay_ms": 0.0,
                     "bottleneck": {"rate_bps": 1e7, "delay_ms": 10.0, "queue": {"limit_pkts": 5000}}},
        // An ACK every two segments (RFC 5681's receiver; Linux's quick-ACKs its first 16
        // segments, which doubles the first rounds' growth), as the reasoning below assumes.
        "tcp": {"profile": "linux", "congestion_control": "cubic", "pacing": pacing, "delayed_ack_policy": "rfc5681"},
        "workloads": [{"kind": "bulk", "flows": 1, "bytes": 3_000_000,
                       "rtt_ms": {"dist": "constant", "value": 100.0}, "rwnd_bytes": {"dist": "constant", "value": 4_000_000}}],
        "metrics": {"queue_sample_ms": 1.0}
    })
}

/// The largest sampled queue (packets) of the downstream bottleneck before `until_s`.
fn peak_queue(r: &Results, until_s: f64) -> u64 {
    let t = r.table("queue_samples");
    let links = strs(r, "queue_samples", "link");
    let (ts, q) = (t.f64s("t_s"), t.u64s("queue_pkts"));
    (0..t.rows()).filter(|&i| links[i] == "bottleneck_down" && ts[i] < until_s).map(|i| q[i]).max().unwrap()
}

#[test]
fn a_paced_slow_start_completes_and_queues_less_at_the_bottleneck() {
    let (plain, paced) = (run(download(false), 1), run(download(true), 1));
    for r in [&plain, &paced] {
        let f = r.table("flows");
        assert!(f.bools("completed")[0], "the transfer completes (the pacing timer fires)");
        assert_eq!(f.u64s("delivered_bytes")[0], 3_000_000);
        assert_eq!(f.u64s("drops")[0], 0);
    }
    // Both runs send the initial window of 10 segments as one burst (Linux paces from the tenth
    // data segment on): 9 wait. Then, while cwnd is below about half the path's BDP (42
    // segments; cwnd grows 1.5 times a round with an ACK every two segments, so until about
    // 0.6 s), a paced round arrives at 2 cwnd / srtt, at most the bottleneck's rate: the
    // queue never exceeds that first burst. Unpaced, each ACK releases two segments at once
    // and the queue grows round after round.
    let (q_plain, q_paced) = (peak_queue(&plain, 0.6), peak_queue(&paced, 0.6));
    assert!(q_paced <= 10 && q_plain > 10, "peak queue before 0.6 s: paced {q_paced} packets, unpaced {q_plain}");
    // The paced run is not slower by more than a few RTTs (pacing spreads each round over at
    // most half an RTT in slow start).
    let end = |r: &Results| r.table("flows").f64s("end_s")[0];
    assert!(end(&paced) < end(&plain) + 0.3, "paced {} s, unpaced {} s", end(&paced), end(&plain));
}
