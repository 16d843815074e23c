//! What a run measures: link snapshots, queue and flow samples, the tables and the summary.

use super::conn::Conn;
use super::{Ev, Simulation};
use crate::aqm::{Outcome, QueueStats, Reason};
use crate::engine::time::{from_millis, from_secs, to_secs};
use crate::scenario::MetricsConfig;
use crate::engine::SimTime;
use crate::metrics::{Column, Results, StrColumn, Table, Value};
use crate::net::{LinkId, Network};
use crate::net::link::LinkStats;
use crate::packet::{Direction, PacketKind};
use crate::workload::FlowPlan;

/// Counters of a bottleneck link at one instant (for window and interval differences).
#[derive(Clone, Default)]
pub(super) struct Snapshot {
    pub(super) t: SimTime,
    pub(super) queue: QueueStats,
    pub(super) link: LinkStats,
}

#[derive(Default)]
pub(super) struct ExchangeRows {
    exchange: Vec<u64>,
    flow: Vec<u64>,
    workload: Vec<i64>,
    seq_in_flow: Vec<i64>,
    client: Vec<i64>,
    server: Vec<i64>,
    start_s: Vec<f64>,
    end_s: Vec<f64>,
    request_bytes: Vec<u64>,
    response_bytes: Vec<u64>,
    rtt_ms: Vec<f64>,
    ecn: Vec<bool>,
    syn_retx: Vec<u64>,
    synack_retx: Vec<u64>,
    synack_drops: Vec<u64>,
    synack_ce: Vec<bool>,
    handshake_wait_s: Vec<f64>,
    rtos: Vec<u64>,
    completed: Vec<bool>,
}

#[derive(Default)]
pub(super) struct FlowRows {
    flow: Vec<u64>,
    workload: Vec<i64>,
    kind: StrColumn,
    client: Vec<i64>,
    server: Vec<i64>,
    start_s: Vec<f64>,
    end_s: Vec<f64>,
    completed: Vec<bool>,
    rtt_ms: Vec<f64>,
    rwnd_bytes: Vec<u64>,
    ecn: Vec<bool>,
    bytes_sent: Vec<u64>,
    retx_bytes: Vec<u64>,
    goodput_bytes: Vec<u64>,
    throughput_bytes: Vec<u64>,
    retx_received_bytes: Vec<u64>,
    delivered_bytes: Vec<u64>,
    drops: Vec<u64>,
    marks: Vec<u64>,
    rtos: Vec<u64>,
    syn_retx: Vec<u64>,
    synack_retx: Vec<u64>,
    synack_drops: Vec<u64>,
    ce_received: Vec<u64>,
    ecn_reductions: Vec<u64>,
    loss_reductions: Vec<u64>,
    exchanges: Vec<u64>,
}

/// Rows of the `flow_samples` table: each live connection's sender, every `flow_sample_ms`.
#[derive(Default)]
pub(super) struct FlowSampleRows {
    t_s: Vec<f64>,
    flow: Vec<u64>,
    cwnd_bytes: Vec<u64>,
    ssthresh_bytes: Vec<f64>,
    srtt_ms: Vec<f64>,
    delivered_bytes: Vec<u64>,
}

/// What the run measures besides the per-flow state.
pub(super) struct Recorder {
    pub(super) warmup: SimTime,
    pub(super) interval: SimTime,
    pub(super) sample_every: SimTime,
    /// Period of the flow samples (0: off).
    pub(super) flow_every: SimTime,
    pub(super) flow_samples: FlowSampleRows,
    pub(super) sojourn_bin: SimTime,
    pub(super) sojourn_bins: usize,
    pub(super) exchanges: ExchangeRows,
    pub(super) flows: FlowRows,
    /// The recorded links, and each network link's index among them (`NOT_RECORDED` if none).
    pub(super) links: Vec<RecordedLink>,
    slot: Vec<u32>,
    /// Links-table rows: (recorded link, previous snapshot, current snapshot).
    pub(super) intervals: Vec<(u32, Snapshot, Snapshot)>,
    pub(super) samples: (StrColumn, Vec<f64>, Vec<u64>, Vec<u64>),
    /// AQM control variables: link, time, variable, value (sampled with the queues).
    pub(super) aqm_samples: (StrColumn, Vec<f64>, StrColumn, Vec<f64>),
    /// The codes in `aqm_samples.2` of the variable names the AQMs have reported (`None` for a
    /// name `metrics.aqm_variables` leaves out), found by the name's address (the names are
    /// static): a sample writes each of them once per link, and a string search for each row
    /// took 13% of the instructions of an `l4s` run sampling DualPI2 every millisecond.
    aqm_variable_codes: Vec<(&'static str, Option<u32>)>,
    pub(super) exchanges_started: u64,
    /// Payload bytes the workloads asked to send in the window, by direction (`[up, down]`):
    /// requests and responses of exchanges that started in it, finite bulk transfers that
    /// started in it, and the packets of unresponsive sources. Long-lived bulk flows ask for
    /// no fixed amount and are not counted.
    pub(super) offered_bytes: [u64; 2],
    /// In-order payload bytes delivered to the applications in the window, by direction.
    pub(super) goodput_bytes: [u64; 2],
    pub(super) response_bytes_delivered: u64,
    pub(super) next_exchange: u64,
}

/// A link whose queue the run records.
pub(super) struct RecordedLink {
    pub(super) id: LinkId,
    /// Its name in the tables, and the suffix of its summary keys.
    pub(super) name: String,
    pub(super) key: String,
    pub(super) last: Snapshot,
    pub(super) at_warmup: Snapshot,
    /// Sojourn-time histogram of the packets that left its queue in the window.
    pub(super) sojourn: Vec<u64>,
    /// Its codes in the link columns of `samples` and `aqm_samples`, from its first row there.
    sample_code: Option<u32>,
    aqm_sample_code: Option<u32>,
}

const NOT_RECORDED: u32 = u32::MAX;

impl Recorder {
    /// `recorded`: the links to record, with the suffix of their summary keys.
    pub(super) fn new(m: &MetricsConfig, warmup: SimTime, net: &Network, recorded: Vec<(LinkId, String)>) -> Recorder {
        let sojourn_bin = from_millis(m.sojourn_bin_ms).max(1);
        let sojourn_bins = (from_millis(m.sojourn_max_ms) / sojourn_bin) as usize + 1;
        let mut slot = vec![NOT_RECORDED; net.links.len()];
        for (i, (l, _)) in recorded.iter().enumerate() {
            slot[*l as usize] = i as u32;
        }
        let links = recorded
            .into_iter()
            .map(|(id, key)| RecordedLink {
                id,
                name: net.link_names[id as usize].clone(),
                key,
                last: Snapshot::default(),
                at_warmup: Snapshot::default(),
                sojourn: vec![0; sojourn_bins],
                sample_code: None,
                aqm_sample_code: None,
            })
            .collect();
        Recorder {
            links,
            slot,
            warmup,
            interval: from_secs(m.interval_s).max(1),
            sample_every: from_millis(m.queue_sample_ms),
            flow_every: from_millis(m.flow_sample_ms),
            flow_samples: FlowSampleRows::default(),
            sojourn_bin,
            sojourn_bins,
            exchanges: ExchangeRows::default(),
            flows: FlowRows::default(),
            intervals: Vec::new(),
            samples: Default::default(),
            aqm_samples: Default::default(),
            aqm_variable_codes: Vec::new(),
            exchanges_started: 0,
            offered_bytes: [0; 2],
            goodput_bytes: [0; 2],
            response_bytes_delivered: 0,
            next_exchange: 0,
        }
    }

    /// The index of link `l` among the recorded links, if it is one.
    #[inline]
    pub(super) fn slot_of(&self, l: LinkId) -> Option<u32> {
        let s = self.slot[l as usize];
        (s != NOT_RECORDED).then_some(s)
    }

    /// A packet left the queue of recorded link `slot` after `waited` in it.
    #[inline]
    pub(super) fn count_sojourn(&mut self, slot: u32, waited: SimTime) {
        let bin = ((waited / self.sojourn_bin) as usize).min(self.sojourn_bins - 1);
        self.links[slot as usize].sojourn[bin] += 1;
    }
}

impl Simulation {
    pub(super) fn snapshot(&mut self, l: LinkId) -> Snapshot {
        let link = &mut self.net.links[l as usize];
        Snapshot { t: self.now, queue: link.queue.stats(self.now).clone(), link: link.stats_at(self.now) }
    }

    pub(super) fn on_warmup(&mut self) {
        for i in 0..self.rec.links.len() {
            let s = self.snapshot(self.rec.links[i].id);
            self.rec.links[i].at_warmup = s.clone();
            self.rec.links[i].last = s;
        }
        for c in self.conns.iter_mut().filter(|c| c.live) {
            c.delivered_at_warmup = c.delivered_by_direction();
            c.received_at_warmup = c.received();
        }
        if self.now + self.rec.interval <= self.end {
            self.events.push(self.now + self.rec.interval, Ev::Interval);
        }
        if self.rec.sample_every > 0 {
            self.events.push(self.now, Ev::Sample);
        }
        if self.rec.flow_every > 0 {
            self.events.push(self.now, Ev::FlowSample);
        }
    }

    pub(super) fn on_interval(&mut self) {
        self.close_interval();
        if self.now + self.rec.interval <= self.end {
            self.events.push(self.now + self.rec.interval, Ev::Interval);
        }
    }

    pub(super) fn close_interval(&mut self) {
        for i in 0..self.rec.links.len() {
            let s = self.snapshot(self.rec.links[i].id);
            let prev = std::mem::replace(&mut self.rec.links[i].last, s.clone());
            if s.t > prev.t {
                self.rec.intervals.push((i as u32, prev, s));
            }
        }
    }

    pub(super) fn on_sample(&mut self) {
        for rl in &mut self.rec.links {
            let l = rl.id;
            let q = &self.net.links[l as usize].queue;
            let s = &mut self.rec.samples;
            let code = *rl.sample_code.get_or_insert_with(|| s.0.code_of(&rl.name));
            s.0.push_code(code);
            s.1.push(to_secs(self.now));
            s.2.push(q.len_pkts() as u64);
            s.3.push(q.len_bytes());
            let (now, a, codes, metrics) =
                (self.now, &mut self.rec.aqm_samples, &mut self.rec.aqm_variable_codes, &self.scenario.metrics);
            self.net.links[l as usize].sync_idle(now);
            self.net.links[l as usize].queue.sample_aqm(now, &mut |name, v| {
                let known = codes.iter().find(|(n, _)| std::ptr::eq(*n, name)).map(|&(_, c)| c);
                let variable = known.unwrap_or_else(|| {
                    let c = metrics.keeps_aqm_variable(name).then(|| a.2.code_of(name));
                    codes.push((name, c));
                    c
                });
                let Some(variable) = variable else { return };
                // Coded at its first variable: a link with none has no rows.
                let link = *rl.aqm_sample_code.get_or_insert_with(|| a.0.code_of(&rl.name));
                a.0.push_code(link);
                a.1.push(to_secs(now));
                a.2.push_code(variable);
                a.3.push(v);
            });
        }
        if self.now + self.rec.sample_every <= self.end {
            self.events.push(self.now + self.rec.sample_every, Ev::Sample);
        }
    }

    /// One row per live connection: its sender's window, slow-start threshold and smoothed RTT,
    /// and the bytes its receiver has delivered in order (a timer, never per packet).
    pub(super) fn on_flow_sample(&mut self) {
        let t = to_secs(self.now);
        let r = &mut self.rec.flow_samples;
        for c in self.conns.iter().filter(|c| c.live) {
            let (sender, receiver) = if c.sender_is_client() { (&c.client, &c.server) } else { (&c.server, &c.client) };
            let w = sender.window();
            r.t_s.push(t);
            r.flow.push(c.flow_id);
            r.cwnd_bytes.push(w.cwnd);
            r.ssthresh_bytes.push(if w.ssthresh == u64::MAX { f64::INFINITY } else { w.ssthresh as f64 });
            r.srtt_ms.push(sender.srtt().map_or(f64::NAN, |s| s as f64 / 1e6));
            r.delivered_bytes.push(receiver.delivered_bytes());
        }
        if self.now + self.rec.flow_every <= self.end {
            self.events.push(self.now + self.rec.flow_every, Ev::FlowSample);
        }
    }


    /// Cumulative counters of the link named `name` (e.g. `bottleneck_up`) and the packets it
    /// holds now, queued or being serialized (for tests and tools).
    pub fn link_counters(&mut self, name: &str) -> Option<(QueueStats, LinkStats, u64)> {
        let l = self.net.link_id(name)?;
        let s = self.snapshot(l);
        Some((s.queue, s.link, self.net.links[l as usize].held_at(self.now)))
    }

    /// Ends the run at the current time and returns its tables and summary. Connections still
    /// open are recorded as not completed.
    pub fn finish(&mut self) -> Results {
        assert!(!self.finished, "finish() called twice");
        self.finished = true;
        if self.now < self.rec.warmup {
            // Stopped before the window opened: an empty window at the stop time.
            self.rec.warmup = self.now;
            self.on_warmup();
        }
        self.close_interval();
        for i in 0..self.conns.len() {
            if self.conns[i].live {
                let c = &mut self.conns[i];
                if let FlowPlan::Exchanges(ex) = &c.plan {
                    if c.waiting && (c.client_cur as usize) < ex.len() {
                        record_exchange(&mut self.rec, c, None);
                    }
                }
                record_flow(&mut self.rec, self.now, c, None);
            }
        }
        let mut results = Results::default();
        results.tables.push(self.exchanges_table());
        results.tables.push(self.flows_table());
        results.tables.push(self.links_table());
        results.tables.push(self.queue_counts_table());
        results.tables.push(self.samples_table());
        results.tables.push(self.aqm_samples_table());
        results.tables.push(self.sojourn_table());
        results.tables.push(self.flow_samples_table());
        results.summary = self.summary(&results);
        results
    }

    pub(super) fn exchanges_table(&mut self) -> Table {
        let r = std::mem::take(&mut self.rec.exchanges);
        let rt: Vec<f64> = r.start_s.iter().zip(&r.end_s).map(|(s, e)| e - s).collect();
        // An unfinished exchange (still waiting, or its connection gave up) is observed until
        // the end of the run: a right-censored response time.
        let end_s = to_secs(self.now);
        let elapsed: Vec<f64> = r.start_s.iter().zip(&rt).map(|(s, t)| if t.is_nan() { end_s - s } else { *t }).collect();
        Table::new("exchanges")
            .with("exchange", Column::U64(r.exchange))
            .with("flow", Column::U64(r.flow))
            .with("workload", Column::I64(r.workload))
            .with("seq_in_flow", Column::I64(r.seq_in_flow))
            .with("client", Column::I64(r.client))
            .with("server", Column::I64(r.server))
            .with("start_s", Column::F64(r.start_s))
            .with("end_s", Column::F64(r.end_s))
            .with("response_time_s", Column::F64(rt))
            .with("elapsed_s", Column::F64(elapsed))
            .with("request_bytes", Column::U64(r.request_bytes))
            .with("response_bytes", Column::U64(r.response_bytes))
            .with("rtt_ms", Column::F64(r.rtt_ms))
            .with("ecn", Column::Bool(r.ecn))
            .with("syn_retx", Column::U64(r.syn_retx))
            .with("synack_retx", Column::U64(r.synack_retx))
            .with("synack_drops", Column::U64(r.synack_drops))
            .with("synack_ce", Column::Bool(r.synack_ce))
            .with("handshake_wait_s", Column::F64(r.handshake_wait_s))
            .with("rtos", Column::U64(r.rtos))
            .with("completed", Column::Bool(r.completed))
    }

    pub(super) fn flows_table(&mut self) -> Table {
        let r = std::mem::take(&mut self.rec.flows);
        Table::new("flows")
            .with("flow", Column::U64(r.flow))
            .with("workload", Column::I64(r.workload))
            .with("kind", Column::Str(r.kind))
            .with("client", Column::I64(r.client))
            .with("server", Column::I64(r.server))
            .with("start_s", Column::F64(r.start_s))
            .with("end_s", Column::F64(r.end_s))
            .with("completed", Column::Bool(r.completed))
            .with("rtt_ms", Column::F64(r.rtt_ms))
            .with("rwnd_bytes", Column::U64(r.rwnd_bytes))
            .with("ecn", Column::Bool(r.ecn))
            .with("bytes_sent", Column::U64(r.bytes_sent))
            .with("retx_bytes", Column::U64(r.retx_bytes))
            .with("goodput_bytes", Column::U64(r.goodput_bytes))
            .with("throughput_bytes", Column::U64(r.throughput_bytes))
            .with("retx_received_bytes", Column::U64(r.retx_received_bytes))
            .with("delivered_bytes", Column::U64(r.delivered_bytes))
            .with("drops", Column::U64(r.drops))
            .with("marks", Column::U64(r.marks))
            .with("rtos", Column::U64(r.rtos))
            .with("syn_retx", Column::U64(r.syn_retx))
            .with("synack_retx", Column::U64(r.synack_retx))
            .with("synack_drops", Column::U64(r.synack_drops))
            .with("ce_received", Column::U64(r.ce_received))
            .with("ecn_reductions", Column::U64(r.ecn_reductions))
            .with("loss_reductions", Column::U64(r.loss_reductions))
            .with("exchanges", Column::U64(r.exchanges))
    }

    pub(super) fn links_table(&self) -> Table {
        let names = link_column_names();
        let mut cols: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
        let mut links = StrColumn::default();
        for (i, a, b) in &self.rec.intervals {
            links.push(&self.rec.links[*i as usize].name);
            let row = link_row(a, b);
            debug_assert_eq!(row.len(), names.len());
            for (c, v) in cols.iter_mut().zip(row) {
                c.push(v);
            }
        }
        let mut t = Table::new("links").with("link", Column::Str(links));
        for (name, v) in names.iter().zip(cols) {
            let is_float = matches!(name.as_str(), "t_start_s" | "t_end_s" | "utilization" | "mean_queue_pkts" | "mean_queue_bytes");
            t = if is_float {
                t.with(name, Column::F64(v))
            } else {
                t.with(name, Column::U64(v.into_iter().map(|x| x as u64).collect()))
            };
        }
        t
    }

    /// The counters of recorded link `i` over the measurement window.
    pub(super) fn window_queue(&mut self, i: usize) -> (QueueStats, LinkStats) {
        let now = self.snapshot(self.rec.links[i].id);
        let w = &self.rec.links[i].at_warmup;
        (diff_queue(&now.queue, &w.queue), diff_link(&now.link, &w.link))
    }

    pub(super) fn queue_counts_table(&mut self) -> Table {
        let (mut link, mut kind, mut outcome, mut reason) =
            (StrColumn::default(), StrColumn::default(), StrColumn::default(), StrColumn::default());
        let mut packets = vec![];
        for i in 0..self.rec.links.len() {
            let (q, _) = self.window_queue(i);
            for k in PacketKind::ALL {
                for o in Outcome::ALL {
                    for r in Reason::ALL {
                        let n = q.count(k, o, r);
                        if n > 0 {
                            link.push(&self.rec.links[i].name);
                            kind.push(k.name());
                            outcome.push(o.name());
                            reason.push(r.name());
                            packets.push(n);
                        }
                    }
                }
            }
        }
        Table::new("queue_counts")
            .with("link", Column::Str(link))
            .with("kind", Column::Str(kind))
            .with("outcome", Column::Str(outcome))
            .with("reason", Column::Str(reason))
            .with("packets", Column::U64(packets))
    }

    pub(super) fn samples_table(&mut self) -> Table {
        let s = std::mem::take(&mut self.rec.samples);
        self.rec.links.iter_mut().for_each(|rl| rl.sample_code = None); // codes of the column taken
        Table::new("queue_samples")
            .with("link", Column::Str(s.0))
            .with("t_s", Column::F64(s.1))
            .with("queue_pkts", Column::U64(s.2))
            .with("queue_bytes", Column::U64(s.3))
    }

    pub(super) fn aqm_samples_table(&mut self) -> Table {
        let s = std::mem::take(&mut self.rec.aqm_samples);
        self.rec.aqm_variable_codes.clear(); // codes of the columns taken
        self.rec.links.iter_mut().for_each(|rl| rl.aqm_sample_code = None);
        Table::new("aqm_samples")
            .with("link", Column::Str(s.0))
            .with("t_s", Column::F64(s.1))
            .with("variable", Column::Str(s.2))
            .with("value", Column::F64(s.3))
    }

    pub(super) fn flow_samples_table(&mut self) -> Table {
        let r = std::mem::take(&mut self.rec.flow_samples);
        Table::new("flow_samples")
            .with("t_s", Column::F64(r.t_s))
            .with("flow", Column::U64(r.flow))
            .with("cwnd_bytes", Column::U64(r.cwnd_bytes))
            .with("ssthresh_bytes", Column::F64(r.ssthresh_bytes))
            .with("srtt_ms", Column::F64(r.srtt_ms))
            .with("delivered_bytes", Column::U64(r.delivered_bytes))
    }

    pub(super) fn sojourn_table(&self) -> Table {
        let (mut link, mut lo, mut hi, mut n) = (StrColumn::default(), vec![], vec![], vec![]);
        let bin_ms = self.rec.sojourn_bin as f64 / 1e6;
        for rl in &self.rec.links {
            for (i, &c) in rl.sojourn.iter().enumerate() {
                if c > 0 {
                    link.push(&rl.name);
                    lo.push(i as f64 * bin_ms);
                    let last = i + 1 == self.rec.sojourn_bins;
                    hi.push(if last { f64::INFINITY } else { (i + 1) as f64 * bin_ms });
                    n.push(c);
                }
            }
        }
        Table::new("sojourn")
            .with("link", Column::Str(link))
            .with("bin_start_ms", Column::F64(lo))
            .with("bin_end_ms", Column::F64(hi))
            .with("packets", Column::U64(n))
    }

    pub(super) fn summary(&mut self, results: &Results) -> Vec<(String, Value)> {
        let window = self.now.saturating_sub(self.rec.warmup);
        let window_s = to_secs(window);
        let mut s: Vec<(String, Value)> = Vec::new();
        let mut f = |k: &str, v: f64| s.push((k.to_string(), Value::F64(v)));
        // Per recorded link: utilization, loss rate, mark rate, mean queue, delivered bit/s.
        let mut per_link = Vec::new();
        for i in 0..self.rec.links.len() {
            let (q, link) = self.window_queue(i);
            let arrivals = q.arrivals() + link.random_losses;
            let lost = q.total(Outcome::Dropped, None) + link.random_losses;
            per_link.push([
                link.busy_ns as f64 / window as f64,
                ratio(lost, arrivals),
                ratio(q.total(Outcome::Marked, None), arrivals),
                q.area_pkts_ns as f64 / window as f64,
                link.delivered_bytes as f64 * 8.0 / window_s,
            ]);
        }
        let ex = results.table("exchanges");
        let completed = ex.bools("completed").iter().filter(|c| **c).count() as u64;
        let rts: Vec<f64> = ex.f64s("response_time_s").iter().copied().filter(|x| x.is_finite()).collect();
        let flows = results.table("flows");
        let goodput: u64 = flows.u64s("goodput_bytes").iter().sum();
        f("sim_s", to_secs(self.now));
        f("warmup_s", to_secs(self.rec.warmup));
        f("window_s", window_s);
        for (m, measure) in ["utilization", "loss_rate", "mark_rate", "mean_queue_pkts"].iter().enumerate() {
            for (rl, v) in self.rec.links.iter().zip(&per_link) {
                f(&format!("{measure}_{}", rl.key), v[m]);
            }
        }
        f("goodput_bps", goodput as f64 * 8.0 / window_s);
        let (up, down) = (Direction::Up as usize, Direction::Down as usize);
        let bps = |bytes: u64| bytes as f64 * 8.0 / window_s;
        f("offered_bps_down", bps(self.rec.offered_bytes[down]));
        f("offered_bps_up", bps(self.rec.offered_bytes[up]));
        f("goodput_bps_down", bps(self.rec.goodput_bytes[down]));
        f("goodput_bps_up", bps(self.rec.goodput_bytes[up]));
        for (rl, v) in self.rec.links.iter().zip(&per_link) {
            f(&format!("delivered_bps_{}", rl.key), v[4]);
        }
        f(
            "normalized_throughput",
            if self.rec.offered_bytes[Direction::Down as usize] > 0 {
                self.rec.response_bytes_delivered as f64 / self.rec.offered_bytes[Direction::Down as usize] as f64
            } else {
                f64::NAN
            },
        );
        f("mean_response_time_s", if rts.is_empty() { f64::NAN } else { rts.iter().sum::<f64>() / rts.len() as f64 });
        f("wall_s_core", self.wall_start.elapsed().as_secs_f64());
        // Since the start of the run (the benchmark's measure of work), over the recorded links.
        let data_pkts: u64 = self.rec.links.iter().map(|rl| self.net.links[rl.id as usize].stats_at(self.now).delivered_data_pkts).sum();
        let flows_started = flows.rows() as u64;
        let flows_completed = flows.bools("completed").iter().filter(|c| **c).count() as u64;
        let mut u = |k: &str, v: u64| s.push((k.to_string(), Value::U64(v)));
        u("events", self.n_events);
        u("exchanges_started", self.rec.exchanges_started);
        u("exchanges_completed", completed);
        u("flows_started", flows_started);
        u("flows_completed", flows_completed);
        u("bottleneck_data_pkts", data_pkts);
        u("orphan_packets", self.orphans);
        s.push(("name".into(), Value::Str(self.scenario.name.clone())));
        s
    }
}

/// Columns of the links table after `link`, in the order [`link_row`] fills them.
fn link_column_names() -> Vec<String> {
    let mut n: Vec<String> = ["t_start_s", "t_end_s", "arrivals_pkts", "delivered_pkts", "delivered_bytes", "utilization", "drops", "marks"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    n.extend(["drops_early", "drops_forced", "drops_overflow", "marks_early", "marks_forced"].iter().map(|s| s.to_string()));
    n.extend(PacketKind::ALL.iter().map(|k| format!("drops_{}", k.name())));
    n.extend(PacketKind::ALL.iter().map(|k| format!("marks_{}", k.name())));
    n.extend(["random_losses", "mean_queue_pkts", "mean_queue_bytes"].iter().map(|s| s.to_string()));
    n
}

/// One links-table row for the interval between snapshots `a` and `b`.
fn link_row(a: &Snapshot, b: &Snapshot) -> Vec<f64> {
    let dq = diff_queue(&b.queue, &a.queue);
    let dl = diff_link(&b.link, &a.link);
    let dt = (b.t - a.t) as f64;
    let mut v = vec![
        to_secs(a.t),
        to_secs(b.t),
        dq.arrivals() as f64,
        dl.delivered_pkts as f64,
        dl.delivered_bytes as f64,
        dl.busy_ns as f64 / dt,
        dq.total(Outcome::Dropped, None) as f64,
        dq.total(Outcome::Marked, None) as f64,
    ];
    for r in [Reason::Early, Reason::Forced, Reason::Overflow] {
        v.push(dq.total(Outcome::Dropped, Some(r)) as f64);
    }
    for r in [Reason::Early, Reason::Forced] {
        v.push(dq.total(Outcome::Marked, Some(r)) as f64);
    }
    v.extend(PacketKind::ALL.iter().map(|k| dq.by_kind(*k, Outcome::Dropped) as f64));
    v.extend(PacketKind::ALL.iter().map(|k| dq.by_kind(*k, Outcome::Marked) as f64));
    v.extend([dl.random_losses as f64, dq.area_pkts_ns as f64 / dt, dq.area_bytes_ns as f64 / dt]);
    v
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

fn diff_queue(b: &QueueStats, a: &QueueStats) -> QueueStats {
    let mut d = b.clone();
    for k in 0..PacketKind::COUNT {
        for o in 0..Outcome::COUNT {
            for r in 0..Reason::COUNT {
                // Wrapping: one count can go down between snapshots (QueueStats).
                d.packets[k][o][r] = d.packets[k][o][r].wrapping_sub(a.packets[k][o][r]);
            }
        }
    }
    d.dequeued_pkts -= a.dequeued_pkts;
    d.area_pkts_ns -= a.area_pkts_ns;
    d.area_bytes_ns -= a.area_bytes_ns;
    d
}

fn diff_link(b: &LinkStats, a: &LinkStats) -> LinkStats {
    LinkStats {
        delivered_pkts: b.delivered_pkts - a.delivered_pkts,
        delivered_bytes: b.delivered_bytes - a.delivered_bytes,
        delivered_data_pkts: b.delivered_data_pkts - a.delivered_data_pkts,
        random_losses: b.random_losses - a.random_losses,
        busy_ns: b.busy_ns - a.busy_ns,
    }
}

/// Appends the current exchange of `c` (completed at `end`, or unfinished).
pub(super) fn record_exchange(rec: &mut Recorder, c: &Conn, end: Option<SimTime>) {
    if c.ex_start < rec.warmup {
        return;
    }
    let FlowPlan::Exchanges(ex) = &c.plan else { return };
    let e = ex[c.client_cur as usize];
    let first = c.client_cur == 0;
    let r = &mut rec.exchanges;
    r.exchange.push(c.ex_index);
    r.flow.push(c.flow_id);
    r.workload.push(c.workload as i64);
    r.seq_in_flow.push(c.client_cur as i64);
    r.client.push(c.route.client as i64);
    r.server.push(c.route.server as i64);
    r.start_s.push(to_secs(c.ex_start));
    r.end_s.push(end.map_or(f64::NAN, to_secs));
    r.request_bytes.push(e.request_bytes);
    r.response_bytes.push(e.response_bytes);
    r.rtt_ms.push(c.rtt_ms);
    r.ecn.push(c.client.ecn_negotiated());
    r.syn_retx.push(if first { c.client.stats.handshake_retx as u64 } else { 0 });
    r.synack_retx.push(if first { c.server.stats.handshake_retx as u64 } else { 0 });
    r.synack_drops.push(if first { c.synack_drops } else { 0 });
    r.synack_ce.push(first && c.client.stats.synack_ce);
    r.handshake_wait_s.push(if first { to_secs(c.handshake_wait()) } else { 0.0 });
    r.rtos.push((c.rtos() - c.ex_rtos) as u64);
    r.completed.push(end.is_some());
}

pub(super) fn record_flow(rec: &mut Recorder, now: SimTime, c: &Conn, end: Option<SimTime>) {
    let r = &mut rec.flows;
    r.flow.push(c.flow_id);
    r.workload.push(c.workload as i64);
    r.kind.push(match c.plan {
        FlowPlan::Bulk { .. } => "bulk",
        FlowPlan::Exchanges(_) => "exchanges",
    });
    r.client.push(c.route.client as i64);
    r.server.push(c.route.server as i64);
    r.start_s.push(to_secs(c.start));
    r.end_s.push(end.map_or(f64::NAN, to_secs));
    r.completed.push(end.is_some());
    r.rtt_ms.push(c.rtt_ms);
    r.rwnd_bytes.push(c.rwnd as u64);
    r.ecn.push(c.client.ecn_negotiated());
    r.bytes_sent.push(c.client.stats.bytes_sent + c.server.stats.bytes_sent);
    r.retx_bytes.push(c.client.stats.retx_bytes + c.server.stats.retx_bytes);
    let delivered = c.delivered();
    // Bytes delivered inside the window: none if the flow ended before it opened.
    let received = c.received();
    let by_dir = c.delivered_by_direction();
    let (goodput, received) = if now < rec.warmup {
        ([0, 0], (0, 0))
    } else if c.start < rec.warmup {
        let (at, d0) = (c.received_at_warmup, c.delivered_at_warmup);
        ([by_dir[0] - d0[0], by_dir[1] - d0[1]], (received.0 - at.0, received.1 - at.1))
    } else {
        (by_dir, received)
    };
    rec.goodput_bytes[0] += goodput[0];
    rec.goodput_bytes[1] += goodput[1];
    let r = &mut rec.flows;
    r.goodput_bytes.push(goodput[0] + goodput[1]);
    r.throughput_bytes.push(received.0);
    r.retx_received_bytes.push(received.1);
    r.delivered_bytes.push(delivered);
    r.drops.push(c.drops);
    r.marks.push(c.marks);
    r.rtos.push(c.rtos() as u64);
    r.syn_retx.push(c.client.stats.handshake_retx as u64);
    r.synack_retx.push(c.server.stats.handshake_retx as u64);
    r.synack_drops.push(c.synack_drops);
    let (a, b) = (&c.client.stats, &c.server.stats);
    r.ce_received.push((a.ce_received + b.ce_received) as u64);
    r.ecn_reductions.push((a.ecn_reductions + b.ecn_reductions) as u64);
    r.loss_reductions.push((a.loss_reductions + b.loss_reductions) as u64);
    r.exchanges.push(c.exchanges_done as u64);
}
