//! The forwarding engine's own cost (no sockets): frames per second through `Path::arrive` and
//! `Path::poll` for drop-tail, RED with ECN and FQ-CoDel, 1500-byte TCP frames of 64 flows at
//! 90% of a 100 Gb/s link, so the queue is short and every frame is forwarded.
//!
//! `cargo run --release -p ecnlab-testbed --example engine_bench` (docs/testbed.md, limits).

use std::time::Instant;

use ecnlab::packet::Direction;
use ecnlab::scenario::QueueConfig;
use ecnlab_testbed::wire::{ipv4_header_checksum, ETH_HLEN, ETHERTYPE_IPV4};
use ecnlab_testbed::{Path, PathConfig};

fn frame(flow: u16) -> Vec<u8> {
    let mut f = vec![0u8; ETH_HLEN + 1500];
    f[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    let ip = &mut f[ETH_HLEN..];
    ip[0] = 0x45;
    ip[1] = 0b10; // ECT(0)
    ip[2..4].copy_from_slice(&1500u16.to_be_bytes());
    ip[8] = 64;
    ip[9] = 6;
    ip[12..16].copy_from_slice(&[10, 77, 2, 1]);
    ip[16..20].copy_from_slice(&[10, 77, 1, 1]);
    ip[20..22].copy_from_slice(&5001u16.to_be_bytes());
    ip[22..24].copy_from_slice(&(40000 + flow).to_be_bytes());
    ip[32] = 5 << 4;
    ip[33] = 0x10;
    let c = ipv4_header_checksum(&ip[..20]);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f
}

fn main() {
    let frames: Vec<_> = (0..64).map(frame).collect();
    let queues = [
        ("droptail", r#"{"limit_pkts": 1000}"#),
        ("red ecn", r#"{"limit_pkts": 1000, "aqm": {"kind": "red", "ecn": true, "min_th_pkts": 20, "max_th_pkts": 60}}"#),
        ("fq_codel", r#"{"limit_pkts": 1000, "aqm": {"kind": "fq_codel"}}"#),
    ];
    let n: u64 = 2_000_000;
    for (name, q) in queues {
        let queue: QueueConfig = serde_json::from_str(q).unwrap();
        let cfg = PathConfig { rate_bps: 100_000_000_000, queue, base_delay_ns: 0, pair_delays: Vec::new(), random_loss: 0.0, seed: 1, ect_synack_sources: Vec::new() };
        let mut p = Path::new(&cfg, Direction::Down);
        // 1500 bytes at 100 Gb/s take 120 ns: one arrival every 133 ns is 90% load.
        let mut sent = 0u64;
        let t = Instant::now();
        for i in 0..n {
            let now = i * 133;
            p.arrive(&frames[(i % 64) as usize], now);
            p.poll(now, |f| sent += f.len() as u64);
        }
        let s = t.elapsed().as_secs_f64();
        println!("{name:10} {:6.2} Mframes/s ({:5.1} Gb/s of 1500-byte frames), {} forwarded", n as f64 / s / 1e6, n as f64 * 1500.0 * 8.0 / s / 1e9, sent / 1514);
    }
}
