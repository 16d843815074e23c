//! DCN: Differential Congestion Notification (seed 004 section 3; Le, Aikat, Jeffay, Smith).
//! Only flows classified as long-lived and high-bandwidth are ever signalled early.
//!
//! Classification (3.1): a scoreboard SB (direct-mapped, a colliding flow *overwrites* the
//! entry, footnote 1) counts each non-HB flow's packets within a clearing interval; when the
//! count exceeds `threshold_pkts` the flow moves to the high-bandwidth table HB (collisions
//! resolved by a hash chain, footnote 2: here linear probing bounded to `hb_max_chain` slots).
//! Packets of flows not in HB are always passed to the queue.
//! Signal (3.2): an HB flow's arrival is dropped with probability 1 - p_ref / pktcount, with
//! pktcount the flow's arrivals (counting this one) since entry, less p_ref every T_dec; when
//! pktcount turns negative the flow leaves HB. p_ref follows the PI law every T_update:
//!   p_ref(k) = p_ref(k-1) + a (q(k) - q_ref) - b (q(k-1) - q_ref),  a < b,
//! with q the instantaneous queue (packets), clamped here to [0, p_ref_max_pkts].
//!
//! Parameters: `q_ref_pkts` 24 and `t_dec_ms` 800 (the seed); the seed gives no values for
//! a, b, T_update, the table sizes, the threshold or the clearing interval ([U], see
//! docs/models/dcn.md): `a` -1.8, `b` -1.7, `t_update_ms` 6.25 (AFD's law and 160 Hz, which the
//! seed says DCN shares), `sb_size` 1024, `hb_size` 4096 ("a few thousand"), `hb_max_chain` 16,
//! `threshold_pkts` 7 (a 10-kB response, seed 004's 90th percentile, is 7 packets: never
//! classified), `clearing_interval_ms` 1000, `p_ref_max_pkts` 1000, `ecn` false.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::pi::pi_law;
use super::{flow_slot, valid, AqmAlgorithm, Context, PacketView, Periodic, QueueView, Reason, Settings, Verdict};
use crate::engine::time::from_millis;
use crate::engine::{Rng, SimTime};
use crate::config::{check, ConfigError};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DcnParams {
    /// Mark ECN-capable packets instead of dropping them (the seed runs DCN without ECN).
    pub ecn: bool,
    /// Scoreboard entries (direct-mapped, overwrite on collision).
    pub sb_size: u32,
    /// High-bandwidth table entries.
    pub hb_size: u32,
    /// Longest hash chain (probe sequence) in HB; an insert finding no free slot fails.
    pub hb_max_chain: u32,
    /// A flow enters HB when its packets within one clearing interval exceed this.
    pub threshold_pkts: u32,
    /// Clearing interval of the scoreboard counts (ms).
    pub clearing_interval_ms: f64,
    /// PI coefficient of the current error (packets per T_dec per packet of queue).
    pub a: f64,
    /// PI coefficient of the previous error; the seed requires a < b.
    pub b: f64,
    /// Period of the p_ref update (ms).
    pub t_update_ms: f64,
    /// Target queue (packets).
    pub q_ref_pkts: f64,
    /// Period of the pktcount decrement (ms).
    pub t_dec_ms: f64,
    /// Upper clamp and initial value of p_ref (packets per T_dec).
    pub p_ref_max_pkts: f64,
}

impl Default for DcnParams {
    fn default() -> Self {
        DcnParams {
            ecn: false,
            sb_size: 1024,
            hb_size: 4096,
            hb_max_chain: 16,
            threshold_pkts: 7,
            clearing_interval_ms: 1000.0,
            a: -1.8,
            b: -1.7,
            t_update_ms: 6.25,
            q_ref_pkts: 24.0,
            t_dec_ms: 800.0,
            p_ref_max_pkts: 1000.0,
        }
    }
}

impl Settings for DcnParams {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        check(self.sb_size >= 1, valid::field(path, "sb_size"), self.sb_size, "must be at least 1")?;
        check(self.hb_size >= 1, valid::field(path, "hb_size"), self.hb_size, "must be at least 1")?;
        check(
            self.hb_max_chain >= 1 && self.hb_max_chain <= self.hb_size,
            valid::field(path, "hb_max_chain"),
            self.hb_max_chain,
            format_args!("must be in [1, hb_size ({})]", self.hb_size),
        )?;
        valid::period_ms(self.clearing_interval_ms, path, "clearing_interval_ms")?;
        check(self.a.is_finite(), valid::field(path, "a"), self.a, "must be finite")?;
        check(self.a < self.b && self.b.is_finite(), valid::field(path, "b"), self.b, format_args!("must be above a ({}) (seed 004: a < b)", self.a))?;
        valid::period_ms(self.t_update_ms, path, "t_update_ms")?;
        valid::non_negative(self.q_ref_pkts, path, "q_ref_pkts")?;
        valid::period_ms(self.t_dec_ms, path, "t_dec_ms")?;
        valid::positive(self.p_ref_max_pkts, path, "p_ref_max_pkts")
    }

    fn targets_pkts(&self) -> Vec<(&'static str, f64)> {
        vec![("q_ref_pkts", self.q_ref_pkts)]
    }
}

/// Counters of the classifier and the signal.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DcnStats {
    /// SB entries taken over by another flow (footnote 1).
    pub sb_overwrites: u64,
    pub hb_inserts: u64,
    /// Flows removed from HB because pktcount turned negative.
    pub hb_removals: u64,
    /// Inserts that found no free slot within `hb_max_chain` (the flow stays in SB).
    pub hb_insert_failures: u64,
    /// Longest probe sequence an insert needed (1 = its home slot).
    pub hb_max_chain_seen: u32,
    /// Arrivals of HB flows, and how many of them were signalled.
    pub hb_arrivals: u64,
    pub hb_signals: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct SbEntry {
    /// Flow key + 1 (0: empty).
    key: u64,
    count: u32,
    /// Start of the flow's current clearing interval.
    since: SimTime,
}

#[derive(Clone, Copy, Debug, Default)]
struct HbEntry {
    key: u64,
    pktcount: f64,
    /// Probe distance from the home slot (1 = home), for the chain statistics.
    chain: u32,
}

#[derive(Debug)]
pub struct Dcn {
    pub params: DcnParams,
    sb: Vec<SbEntry>,
    hb: Vec<HbEntry>,
    /// Occupied HB entries.
    hb_len: u32,
    /// Fair share (packets per T_dec).
    pub p_ref: f64,
    q_old: f64,
    update: Periodic,
    dec: Periodic,
    clearing: SimTime,
    last: QueueView,
    rng: Rng,
    pub stats: DcnStats,
}

impl Dcn {
    pub fn new(params: DcnParams, rng: Rng) -> Dcn {
        Dcn {
            sb: vec![SbEntry::default(); params.sb_size as usize],
            hb: vec![HbEntry::default(); params.hb_size as usize],
            hb_len: 0,
            p_ref: params.p_ref_max_pkts,
            q_old: 0.0,
            update: Periodic::new(from_millis(params.t_update_ms)),
            dec: Periodic::new(from_millis(params.t_dec_ms)),
            clearing: from_millis(params.clearing_interval_ms),
            last: QueueView::default(),
            rng,
            stats: DcnStats::default(),
            params,
        }
    }

    /// Flows in HB now.
    pub fn hb_len(&self) -> u32 {
        self.hb_len
    }

    /// Flows with a live scoreboard entry (count within its clearing interval) at `now`.
    pub fn sb_len(&self, now: SimTime) -> u32 {
        self.sb.iter().filter(|e| e.key != 0 && now - e.since < self.clearing).count() as u32
    }

    /// Whether the flow of `pkt` is in HB, and its pktcount.
    pub fn hb_count(&self, pkt: &PacketView) -> Option<f64> {
        self.hb_find(pkt.flow + 1).map(|i| self.hb[i].pktcount)
    }

    /// HB lookup: probe the bounded chain (deletions leave holes, so no early stop).
    fn hb_find(&self, key: u64) -> Option<usize> {
        let n = self.hb.len();
        let home = flow_slot(key, n);
        (0..self.params.hb_max_chain as usize).map(|d| (home + d) % n).find(|&i| self.hb[i].key == key)
    }

    fn hb_insert(&mut self, key: u64, count: f64) -> bool {
        let n = self.hb.len();
        let home = flow_slot(key, n);
        for d in 0..self.params.hb_max_chain as usize {
            let i = (home + d) % n;
            if self.hb[i].key == 0 {
                self.hb[i] = HbEntry { key, pktcount: count, chain: d as u32 + 1 };
                self.hb_len += 1;
                self.stats.hb_inserts += 1;
                self.stats.hb_max_chain_seen = self.stats.hb_max_chain_seen.max(d as u32 + 1);
                return true;
            }
        }
        self.stats.hb_insert_failures += 1;
        false
    }

    /// Runs the p_ref updates and pktcount decrements due at or before `now`, in time order
    /// (an update and a decrement at the same instant: the update first).
    fn catch_up(&mut self, now: SimTime) {
        loop {
            let (u, d) = (self.update.next, self.dec.next);
            if u.min(d) > now {
                return;
            }
            if u <= d {
                self.update.due(now);
                let (q, r) = (self.last.len_pkts as f64, self.params.q_ref_pkts);
                self.p_ref = pi_law(self.p_ref, self.params.a, self.params.b, q, self.q_old, r)
                    .clamp(0.0, self.params.p_ref_max_pkts);
                self.q_old = q;
            } else {
                self.dec.due(now);
                let p_ref = self.p_ref;
                for e in self.hb.iter_mut().filter(|e| e.key != 0) {
                    e.pktcount -= p_ref;
                    if e.pktcount < 0.0 {
                        *e = HbEntry::default();
                        self.hb_len -= 1;
                        self.stats.hb_removals += 1;
                    }
                }
            }
        }
    }

    /// The signal decision for an arrival: classification, then 1 - p_ref / pktcount for HB flows.
    fn classify_and_decide(&mut self, pkt: &PacketView, now: SimTime) -> Verdict {
        let key = pkt.flow + 1;
        if let Some(i) = self.hb_find(key) {
            let e = &mut self.hb[i];
            e.pktcount += 1.0;
            self.stats.hb_arrivals += 1;
            let p = (1.0 - self.p_ref / e.pktcount).max(0.0);
            if p > 0.0 && self.rng.uniform() < p {
                self.stats.hb_signals += 1;
                return Verdict::Signal(Reason::Early);
            }
            return Verdict::Pass;
        }
        // Not high-bandwidth: the packet passes; its flow is scored (3.1).
        let clearing = self.clearing;
        let si = flow_slot(key, self.sb.len());
        let s = &mut self.sb[si];
        if s.key != key {
            if s.key != 0 && now - s.since < clearing {
                self.stats.sb_overwrites += 1;
            }
            *s = SbEntry { key, count: 0, since: now };
        } else if now - s.since >= clearing {
            // A new clearing interval: the count restarts.
            s.count = 0;
            s.since = now;
        }
        s.count += 1;
        if s.count > self.params.threshold_pkts {
            let count = s.count as f64;
            if self.hb_insert(key, count) {
                self.sb[si] = SbEntry::default();
            }
        }
        Verdict::Pass
    }
}

impl AqmAlgorithm for Dcn {
    type Params = DcnParams;
    const VARIABLES: &'static [&'static str] = &["p_ref", "hb_entries", "sb_entries", "hb_longest_chain", "hb_insert_failures"];

    fn build(params: &DcnParams, ctx: Context) -> Dcn {
        Dcn::new(params.clone(), ctx.rng)
    }

    fn on_enqueue(&mut self, _q: &QueueView, pkt: &PacketView, now: SimTime) -> Verdict {
        self.catch_up(now);
        self.classify_and_decide(pkt, now)
    }

    fn after_enqueue(&mut self, q: &QueueView, _kept: bool) {
        self.last = *q;
    }

    fn on_dequeue(&mut self, q: &QueueView, _pkt: &PacketView, now: SimTime) -> Verdict {
        self.catch_up(now);
        self.last = *q;
        Verdict::Pass
    }

    fn ecn(&self) -> bool {
        self.params.ecn
    }

    fn sample(&mut self, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
        self.catch_up(now);
        out("p_ref", self.p_ref);
        out("hb_entries", self.hb_len as f64);
        out("sb_entries", self.sb_len(now) as f64);
        let longest = self.hb.iter().filter(|e| e.key != 0).map(|e| e.chain).max().unwrap_or(0);
        out("hb_longest_chain", longest as f64);
        out("hb_insert_failures", self.stats.hb_insert_failures as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::tests::flow_packet;
    use crate::packet::Ecn;

    fn pkt(flow: u32) -> PacketView {
        flow_packet(flow, 1500, Ecn::NotEct)
    }
    const MS: SimTime = 1_000_000;

    #[test]
    fn flow_enters_hb_on_the_packet_that_exceeds_the_threshold_and_small_flows_pass() {
        let mut d = Dcn::new(DcnParams { threshold_pkts: 5, clearing_interval_ms: 100.0, ..Default::default() }, Rng::from_seed(1));
        let q = QueueView::default();
        // Flow 1: 6 packets 1 ms apart: the 6th exceeds 5 and moves the flow to HB.
        for i in 0..6 {
            assert_eq!(d.on_enqueue(&q, &pkt(1), i * MS), Verdict::Pass);
            assert_eq!(d.hb_count(&pkt(1)).is_some(), i == 5, "packet {i}");
        }
        assert_eq!(d.hb_count(&pkt(1)), Some(6.0));
        // Flow 2: 5 packets per 100-ms clearing interval for 10 s: never in HB, never signalled.
        for i in 0..500 {
            assert_eq!(d.on_enqueue(&q, &pkt(2), i * 20 * MS), Verdict::Pass);
        }
        assert!(d.hb_count(&pkt(2)).is_none());
    }

    #[test]
    fn pktcount_decrements_by_p_ref_and_the_flow_leaves_hb_when_negative() {
        // p_ref pinned at its maximum: an empty queue and a tiny gain keep it there.
        let p = DcnParams { threshold_pkts: 2, p_ref_max_pkts: 12.0, a: -1e-9, b: 0.0, ..Default::default() };
        let mut d = Dcn::new(p, Rng::from_seed(1));
        let q = QueueView::default();
        // The third packet moves the flow to HB with pktcount 3; pktcount counts every arrival
        // (dropped or not): 20 after 20 packets.
        for i in 0..20 {
            d.on_enqueue(&q, &pkt(7), i * MS);
        }
        assert_eq!(d.hb_count(&pkt(7)), Some(20.0));
        // q = 0 < q_ref: p_ref rises but is clamped at 12. At 800 ms: 20 - 12 = 8 (kept);
        // at 1600 ms: -4, removed.
        d.sample(800 * MS, &mut |_, _| {});
        assert_eq!(d.hb_count(&pkt(7)), Some(8.0));
        d.sample(1600 * MS, &mut |_, _| {});
        assert_eq!(d.hb_count(&pkt(7)), None);
        assert_eq!((d.stats.hb_inserts, d.stats.hb_removals, d.hb_len()), (1, 1, 0));
    }

    #[test]
    fn p_ref_follows_the_seed_equation() {
        let p = DcnParams { a: -1.8, b: -1.7, q_ref_pkts: 24.0, p_ref_max_pkts: 1000.0, ..Default::default() };
        let mut d = Dcn::new(p, Rng::from_seed(1));
        // 40 packets queued before the first update at 6.25 ms.
        let mut q = QueueView::default();
        for _ in 0..40 {
            d.on_enqueue(&q, &pkt(100), 0);
            q.len_pkts += 1;
            d.after_enqueue(&q, true);
        }
        d.sample(6_250_000, &mut |_, _| {});
        // 1000 + (-1.8)(40 - 24) - (-1.7)(0 - 24) = 1000 - 28.8 - 40.8 = 930.4
        assert!((d.p_ref - 930.4).abs() < 1e-9, "{}", d.p_ref);
        d.sample(12_500_000, &mut |_, _| {});
        // 930.4 + (-1.8)(16) - (-1.7)(16) = 930.4 - 1.6 = 928.8
        assert!((d.p_ref - 928.8).abs() < 1e-9, "{}", d.p_ref);
    }

    #[test]
    fn hb_drop_probability_is_one_minus_p_ref_over_pktcount() {
        // p_ref 10 held (b = a + tiny, q = q_ref); a flow with pktcount near 40 is dropped with 1 - 10/40.
        let p = DcnParams { threshold_pkts: 1, p_ref_max_pkts: 10.0, q_ref_pkts: 0.0, a: -1e-12, b: 0.0, t_dec_ms: 1e9, ..Default::default() };
        let mut d = Dcn::new(p, Rng::from_seed(3));
        let q = QueueView::default();
        d.on_enqueue(&q, &pkt(1), 0);
        d.on_enqueue(&q, &pkt(1), 0);
        let (mut drops, mut expect) = (0u32, 0.0);
        for _ in 0..40_000 {
            let c = d.hb_count(&pkt(1)).unwrap() + 1.0;
            expect += 1.0 - 10.0 / c;
            if d.on_enqueue(&q, &pkt(1), 0) != Verdict::Pass {
                drops += 1;
            }
        }
        assert!((drops as f64 / expect - 1.0).abs() < 0.01, "{drops} vs {expect}");
    }

    #[test]
    fn sb_overwrites_on_collision_and_hb_chains_are_bounded() {
        let p = DcnParams { sb_size: 1, hb_size: 4, hb_max_chain: 4, threshold_pkts: 1, ..Default::default() };
        let mut d = Dcn::new(p, Rng::from_seed(1));
        let q = QueueView::default();
        // One SB slot: alternating flows overwrite each other and never reach 2 packets.
        for i in 0..10 {
            d.on_enqueue(&q, &pkt(i % 2), i as u64 * MS);
        }
        assert_eq!((d.hb_len(), d.stats.sb_overwrites), (0, 9));
        // Six flows with 2 back-to-back packets each: 4 fit in HB, 2 inserts fail.
        for f in 10..16 {
            d.on_enqueue(&q, &pkt(f), 20 * MS);
            d.on_enqueue(&q, &pkt(f), 20 * MS);
        }
        assert_eq!((d.hb_len(), d.stats.hb_insert_failures), (4, 2));
        assert!(d.stats.hb_max_chain_seen <= 4);
    }
}
