//! The range of every numeric scenario field, in one table, checked in one place.
//!
//! Every number a scenario holds must be finite and within physical bounds before anything
//! computes with it: a rate that rounds to 0 b/s divides by zero, a delay of 1e300 ms
//! saturates the nanosecond clock, a sub-nanosecond period silently becomes 0. [`check`] walks
//! the decoded scenario (defaults included) and compares each number with the [`Limit`] of its
//! field, found by name: first `kind.field` (an AQM's or a workload's own meaning of a name,
//! e.g. PIE's `alpha`), then the field's name, then its unit suffix (`_s`, `_ms`, `_bps`...).
//! The parameters of a distribution (`value`, `mean`, `low`, `high`, `scale`, `max`,
//! `values`) take the limit of the quantity the distribution draws (`rtt_ms`,
//! `response_bytes`...). A test walks a scenario with every field present and fails if any
//! number has no limit, and docs/scenario.md lists the table ("Limits").
//!
//! Rules between fields (`min_th_pkts` below `max_th_pkts`, a target queue below the queue's
//! limit...) stay with the fields they relate; they run after this check, on finite numbers.

use std::collections::HashMap;

use serde::ser::{self, Serialize};

use super::{ConfigError, Scenario};

/// The lower end of a range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lower {
    /// `>= 0`.
    ZeroOrMore,
    /// `> 0`.
    Positive,
    /// `>= x` (x > 0): a smaller value is refused as "must be positive" if it is not
    /// positive, as "must be at least x" otherwise.
    AtLeast(f64),
    /// `0` (the feature is off) or `>= x`.
    ZeroOrAtLeast(f64),
    /// `>= x` for a quantity that may be negative.
    Signed(f64),
}

/// The range of a field: `lower` to `max` (inclusive), in `unit`, for `reason`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limit {
    /// `name`, `kind.name` or a unit suffix such as `_ms`.
    pub field: &'static str,
    pub lower: Lower,
    pub max: f64,
    /// Unit as written after a number in messages and docs ("" for plain numbers).
    pub unit: &'static str,
    /// Why the range is what it is.
    pub reason: &'static str,
}

const TIME: &str = "the clock counts whole nanoseconds in 64 bits: a shorter time would become 0, 11.6 days keeps every sum of times exact";
const SIZE: &str = "1 TB: byte counters are 64-bit, and a terabyte per transfer keeps their sums exact";
const PACKET: &str = "the largest IP packet (a 16-bit length)";
const RATE: &str = "slower, a 1500-byte packet outlasts every TCP timer; faster, packet times fall below the 1 ns clock's precision";
const QUEUE: &str = "10 million packets (15 GB of full-size packets) is beyond any router buffer";
const TABLE: &str = "per-flow tables are allocated when the run starts: 10 million entries per queue";
const COUNT: &str = "a million per connection, session or page keeps every count exact and a run finite";
const PROBABILITY: &str = "a probability or fraction";
const GAIN: &str = "a controller gain; no physical bound, the cap keeps its arithmetic finite";
const PACING_RATIO: &str = "Linux's net.ipv4.tcp_pacing_ss_ratio and tcp_pacing_ca_ratio range (0, which stops pacing there, is refused: set pacing = false)";
const PERIOD_HZ: &str = "an update at most every microsecond";
const CONN_RATE: &str = "a million new connections per second";

/// The limits, most specific first within each name (`kind.field` before `field`); unit
/// suffixes last, longest first.
pub const LIMITS: &[Limit] = &[
    // --- times (unit suffixes, last in lookup order below) ---------------------------------
    // --- top level and topology ------------------------------------------------------------
    Limit { field: "duration_s", lower: Lower::AtLeast(1e-9), max: 1e6, unit: "s", reason: TIME },
    Limit { field: "clients", lower: Lower::AtLeast(1.0), max: 1e6, unit: "hosts", reason: "every host has two access links: a million hosts is two million links" },
    Limit { field: "servers", lower: Lower::AtLeast(1.0), max: 1e6, unit: "hosts", reason: "every host has two access links: a million hosts is two million links" },
    Limit { field: "count", lower: Lower::AtLeast(1.0), max: 1e6, unit: "hosts", reason: "every host has two access links: a million hosts is two million links" },
    Limit { field: "bottlenecks", lower: Lower::AtLeast(1.0), max: 1e4, unit: "links", reason: "ten thousand bottlenecks in series, each with its queues and host groups" },
    Limit { field: "random_loss", lower: Lower::ZeroOrMore, max: 1.0, unit: "", reason: PROBABILITY },
    Limit { field: "limit_pkts", lower: Lower::AtLeast(1.0), max: 1e7, unit: "packets", reason: QUEUE },
    Limit { field: "limit_bytes", lower: Lower::AtLeast(1.0), max: 1.5e10, unit: "bytes", reason: QUEUE },
    // --- tcp ---------------------------------------------------------------------------------
    Limit { field: "mss_bytes", lower: Lower::AtLeast(1.0), max: 65_000.0, unit: "bytes", reason: "a segment and its headers must fit the largest IP packet (65535 bytes)" },
    Limit { field: "header_bytes", lower: Lower::ZeroOrMore, max: 1000.0, unit: "bytes", reason: "IP and TCP headers with every option take under 1000 bytes" },
    Limit { field: "initial_window_segments", lower: Lower::AtLeast(1.0), max: 1e6, unit: "segments", reason: "a million segments is far beyond any receiver window (2^30 bytes)" },
    Limit { field: "ack_every_segments", lower: Lower::AtLeast(1.0), max: 1e6, unit: "segments", reason: "a million segments is far beyond any receiver window (2^30 bytes)" },
    Limit { field: "syn_retries", lower: Lower::ZeroOrMore, max: 255.0, unit: "", reason: "Linux's tcp_syn_retries is at most 255" },
    Limit { field: "beta", lower: Lower::Positive, max: 1.0, unit: "", reason: "a multiplicative decrease factor" },
    Limit { field: "beta_ecn", lower: Lower::Positive, max: 1.0, unit: "", reason: "a multiplicative decrease factor" },
    Limit { field: "cubic_c", lower: Lower::Positive, max: 1e6, unit: "segments/s^3", reason: GAIN },
    Limit { field: "dctcp_g", lower: Lower::Positive, max: 1.0, unit: "", reason: "an estimation gain: the weight of the newest window's marked fraction" },
    Limit { field: "dctcp_alpha_init", lower: Lower::ZeroOrMore, max: 1.0, unit: "", reason: PROBABILITY },
    Limit { field: "prague_rtt_transition_rounds", lower: Lower::ZeroOrMore, max: 1e9, unit: "round trips", reason: "a billion round trips outlasts any run" },
    Limit { field: "ecn_fraction", lower: Lower::ZeroOrMore, max: 1.0, unit: "", reason: PROBABILITY },
    Limit { field: "pacing_ss_ratio_percent", lower: Lower::AtLeast(1.0), max: 1000.0, unit: "%", reason: PACING_RATIO },
    Limit { field: "pacing_ca_ratio_percent", lower: Lower::AtLeast(1.0), max: 1000.0, unit: "%", reason: PACING_RATIO },
    // --- workloads ---------------------------------------------------------------------------
    Limit { field: "flows", lower: Lower::AtLeast(1.0), max: 1e7, unit: "flows", reason: "ten million connections, each with its state and a row of the flows table" },
    Limit { field: "browsers", lower: Lower::AtLeast(1.0), max: 1e7, unit: "browsers", reason: "ten million browsers, each with its state" },
    Limit { field: "bytes", lower: Lower::AtLeast(1.0), max: 1e12, unit: "bytes", reason: SIZE },
    Limit { field: "host_offset", lower: Lower::ZeroOrMore, max: 1e6, unit: "hosts", reason: "at most a million hosts per side" },
    Limit { field: "rwnd_bytes", lower: Lower::ZeroOrMore, max: 1_073_741_824.0, unit: "bytes", reason: "RFC 7323's largest window (2^30 bytes)" },
    Limit { field: "size_bytes", lower: Lower::ZeroOrMore, max: 65_535.0, unit: "bytes", reason: PACKET },
    Limit { field: "p_persistent", lower: Lower::ZeroOrMore, max: 1.0, unit: "", reason: PROBABILITY },
    Limit { field: "exchanges_per_connection", lower: Lower::ZeroOrMore, max: 1e6, unit: "", reason: COUNT },
    Limit { field: "pages_per_session", lower: Lower::ZeroOrMore, max: 1e6, unit: "", reason: COUNT },
    Limit { field: "pages_per_site", lower: Lower::ZeroOrMore, max: 1e6, unit: "", reason: COUNT },
    Limit { field: "objects_per_page", lower: Lower::ZeroOrMore, max: 1e6, unit: "", reason: COUNT },
    Limit { field: "images_per_page", lower: Lower::ZeroOrMore, max: 1e4, unit: "", reason: "ten thousand images per page" },
    // --- distributions -----------------------------------------------------------------------
    Limit { field: "shape", lower: Lower::Positive, max: 1e3, unit: "", reason: "beyond a shape of 1000 the distribution is a constant" },
    Limit { field: "weights", lower: Lower::ZeroOrMore, max: 1e12, unit: "", reason: "relative weights; the cap keeps their sum exact" },
    // --- AQM parameters (docs/models/*.md) ---------------------------------------------------
    Limit { field: "max_p", lower: Lower::ZeroOrMore, max: 1.0, unit: "", reason: PROBABILITY },
    Limit { field: "in_max_p", lower: Lower::ZeroOrMore, max: 1.0, unit: "", reason: PROBABILITY },
    Limit { field: "out_max_p", lower: Lower::ZeroOrMore, max: 1.0, unit: "", reason: PROBABILITY },
    Limit { field: "max_p_cap", lower: Lower::ZeroOrMore, max: 1.0, unit: "", reason: PROBABILITY },
    Limit { field: "mark_ecnth", lower: Lower::ZeroOrMore, max: 1.0, unit: "", reason: PROBABILITY },
    Limit { field: "w_q", lower: Lower::ZeroOrMore, max: 1.0, unit: "", reason: "an EWMA weight" },
    Limit { field: "in_weight", lower: Lower::ZeroOrMore, max: 1.0, unit: "", reason: "an EWMA weight" },
    Limit { field: "dq_rate_weight", lower: Lower::ZeroOrMore, max: 1.0, unit: "", reason: "an EWMA weight" },
    Limit { field: "ared.alpha_max", lower: Lower::ZeroOrMore, max: 1.0, unit: "", reason: PROBABILITY },
    Limit { field: "ared.beta", lower: Lower::ZeroOrMore, max: 1.0, unit: "", reason: "a multiplicative decrease factor" },
    Limit { field: "top", lower: Lower::ZeroOrMore, max: 1.0, unit: "", reason: PROBABILITY },
    Limit { field: "bottom", lower: Lower::ZeroOrMore, max: 1.0, unit: "", reason: PROBABILITY },
    Limit { field: "pie.alpha", lower: Lower::ZeroOrMore, max: 1e6, unit: "1/s", reason: GAIN },
    Limit { field: "pie.beta", lower: Lower::ZeroOrMore, max: 1e6, unit: "1/s", reason: GAIN },
    Limit { field: "afd.alpha", lower: Lower::ZeroOrMore, max: 1e6, unit: "", reason: GAIN },
    Limit { field: "afd.beta", lower: Lower::ZeroOrMore, max: 1e6, unit: "", reason: GAIN },
    Limit { field: "rem.alpha", lower: Lower::ZeroOrMore, max: 1e6, unit: "", reason: GAIN },
    Limit { field: "gamma", lower: Lower::ZeroOrMore, max: 1e6, unit: "", reason: GAIN },
    Limit { field: "phi", lower: Lower::ZeroOrMore, max: 1e6, unit: "", reason: GAIN },
    Limit { field: "pi.a", lower: Lower::ZeroOrMore, max: 1e6, unit: "", reason: GAIN },
    Limit { field: "pi.b", lower: Lower::ZeroOrMore, max: 1e6, unit: "", reason: GAIN },
    Limit { field: "dcn.a", lower: Lower::Signed(-1e6), max: 1e6, unit: "", reason: GAIN },
    Limit { field: "dcn.b", lower: Lower::Signed(-1e6), max: 1e6, unit: "", reason: GAIN },
    Limit { field: "alpha_hz", lower: Lower::ZeroOrMore, max: 1e6, unit: "Hz", reason: GAIN },
    Limit { field: "beta_hz", lower: Lower::ZeroOrMore, max: 1e6, unit: "Hz", reason: GAIN },
    Limit { field: "coupling_factor", lower: Lower::Positive, max: 1e3, unit: "", reason: "a ratio of two probabilities; beyond 1000 the coupled L probability saturates at any Classic one above 1e-6" },
    Limit { field: "n_ref_flows", lower: Lower::ZeroOrMore, max: 1e7, unit: "flows", reason: "at most ten million flows" },
    Limit { field: "flow_exponent", lower: Lower::ZeroOrMore, max: 100.0, unit: "", reason: "an exponent; beyond 100 max_p is 0 or its cap" },
    Limit { field: "rate_exponent", lower: Lower::ZeroOrMore, max: 100.0, unit: "", reason: "an exponent; beyond 100 max_p is 0 or its cap" },
    Limit { field: "m_min", lower: Lower::ZeroOrMore, max: 1e7, unit: "entries", reason: TABLE },
    Limit { field: "sample_one_in", lower: Lower::ZeroOrMore, max: 1e9, unit: "", reason: "one arrival in a billion" },
    Limit { field: "candidates", lower: Lower::ZeroOrMore, max: 64.0, unit: "", reason: "CHOKe draws at most 64 packets per arrival" },
    Limit { field: "table_size", lower: Lower::ZeroOrMore, max: 1e7, unit: "entries", reason: TABLE },
    Limit { field: "sb_size", lower: Lower::ZeroOrMore, max: 1e7, unit: "entries", reason: TABLE },
    Limit { field: "hb_size", lower: Lower::ZeroOrMore, max: 1e7, unit: "entries", reason: TABLE },
    Limit { field: "hb_max_chain", lower: Lower::ZeroOrMore, max: 1e7, unit: "entries", reason: TABLE },
    Limit { field: "shadow_size", lower: Lower::ZeroOrMore, max: 1e7, unit: "entries", reason: TABLE },
    Limit { field: "fq_codel.flows", lower: Lower::AtLeast(1.0), max: 65_536.0, unit: "queues", reason: "Linux's fq_codel allows at most 65536 flow queues; each is allocated when the run starts" },
    Limit { field: "quantum_bytes", lower: Lower::AtLeast(1.0), max: 1_048_576.0, unit: "bytes", reason: "Linux's fq_codel refuses a quantum above 1 MiB (2^20 bytes)" },
    Limit { field: "mean_pkt_bytes", lower: Lower::ZeroOrMore, max: 65_535.0, unit: "bytes", reason: PACKET },
    Limit { field: "mtu_bytes", lower: Lower::ZeroOrMore, max: 65_535.0, unit: "bytes", reason: PACKET },
    Limit { field: "dq_threshold_bytes", lower: Lower::ZeroOrMore, max: 1.5e10, unit: "bytes", reason: QUEUE },
    Limit { field: "k_bytes", lower: Lower::ZeroOrMore, max: 1.5e10, unit: "bytes", reason: QUEUE },
    // --- units (suffixes): longest first ----------------------------------------------------
    Limit { field: "_per_s", lower: Lower::ZeroOrMore, max: 1e6, unit: "1/s", reason: CONN_RATE },
    Limit { field: "_pps", lower: Lower::ZeroOrMore, max: 1e9, unit: "packets/s", reason: "a 1 Tb/s link of 125-byte packets" },
    Limit { field: "_bps", lower: Lower::AtLeast(1e3), max: 1e12, unit: "bit/s", reason: RATE },
    Limit { field: "_hz", lower: Lower::ZeroOrMore, max: 1e6, unit: "Hz", reason: PERIOD_HZ },
    Limit { field: "_pkts", lower: Lower::ZeroOrMore, max: 1e7, unit: "packets", reason: QUEUE },
    Limit { field: "_bytes", lower: Lower::ZeroOrMore, max: 1e12, unit: "bytes", reason: SIZE },
    Limit { field: "_us", lower: Lower::ZeroOrAtLeast(1e-3), max: 1e12, unit: "us", reason: TIME },
    Limit { field: "_ms", lower: Lower::ZeroOrAtLeast(1e-6), max: 1e9, unit: "ms", reason: TIME },
    Limit { field: "_s", lower: Lower::ZeroOrAtLeast(1e-9), max: 1e6, unit: "s", reason: TIME },
];

/// The parameters of a distribution that are values of the quantity it draws.
const DIST_VALUES: &[&str] = &["value", "mean", "low", "high", "scale", "max", "values"];

/// The limit of a number named `name` (its field, or the field of the array it is in), in a
/// table tagged `kind`; in a distribution (`quantity`: the field the distribution is the value
/// of), the parameters that are values of the quantity take its limit.
fn limit_of(name: &str, kind: Option<&str>, quantity: Option<&str>) -> Option<&'static Limit> {
    match quantity {
        Some(q) if DIST_VALUES.contains(&name) => by_name(q, None),
        Some(_) => by_name(name, None),
        None => by_name(name, kind),
    }
}

fn by_name(name: &str, kind: Option<&str>) -> Option<&'static Limit> {
    if let Some(k) = kind {
        // `kind.name`, compared in place.
        let qualified = |f: &str| f.strip_prefix(k).and_then(|r| r.strip_prefix('.')) == Some(name);
        if let Some(l) = LIMITS.iter().find(|l| qualified(l.field)) {
            return Some(l);
        }
    }
    LIMITS
        .iter()
        .find(|l| l.field == name)
        .or_else(|| LIMITS.iter().find(|l| l.field.starts_with('_') && name.ends_with(l.field)))
}

impl Limit {
    /// The rule `v` breaks, if any.
    pub fn broken(&self, v: f64) -> Option<String> {
        if !v.is_finite() {
            return Some("must be a finite number".into());
        }
        let low = match self.lower {
            Lower::ZeroOrMore if v < 0.0 => Some("must be zero or positive".to_string()),
            Lower::Positive if v <= 0.0 => Some("must be positive".to_string()),
            Lower::AtLeast(_) if v <= 0.0 => Some("must be positive".to_string()),
            Lower::AtLeast(x) if v < x => Some(format!("must be at least {}{} ({})", short(x), self.unit_text(), self.reason)),
            Lower::ZeroOrAtLeast(_) if v < 0.0 => Some("must be zero or positive".to_string()),
            Lower::ZeroOrAtLeast(x) if v > 0.0 && v < x => Some(format!("must be 0 or at least {}{} ({})", short(x), self.unit_text(), self.reason)),
            Lower::Signed(x) if v < x => Some(format!("must be at least {}{} ({})", short(x), self.unit_text(), self.reason)),
            _ => None,
        };
        low.or_else(|| (v > self.max).then(|| format!("must be at most {}{} ({})", short(self.max), self.unit_text(), self.reason)))
    }

    /// The unit as written after a number: ` ms`, or nothing for a plain number (built only
    /// for a message: `broken` runs for every number of every scenario).
    fn unit_text(&self) -> String {
        if self.unit.is_empty() { String::new() } else { format!(" {}", self.unit) }
    }

    /// The range as written in docs/scenario.md, e.g. `0 or [1e-06, 1e+09] ms`.
    pub fn range(&self) -> String {
        let (max, unit) = (short(self.max), self.unit_text());
        match self.lower {
            Lower::ZeroOrMore => format!("[0, {max}]{unit}"),
            Lower::Positive => format!("(0, {max}]{unit}"),
            Lower::AtLeast(x) | Lower::Signed(x) => format!("[{}, {max}]{unit}", short(x)),
            Lower::ZeroOrAtLeast(x) => format!("0 or [{}, {max}]{unit}", short(x)),
        }
    }
}

fn short(x: f64) -> String {
    if x != 0.0 && (x.abs() >= 1e5 || x.abs() < 1e-3) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// A value as messages show it: whole numbers in full below 1e15, else compact.
fn value_text(x: f64) -> String {
    if x.is_finite() && (x.abs() >= 1e15 || (x != 0.0 && x.abs() < 1e-4)) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// Checks every number of `scenario` against its limit; the first out of range is the error.
pub fn check(scenario: &Scenario) -> Result<(), ConfigError> {
    let w = Walker::walk(scenario);
    // Numbers of the same field in tables of the same kind share a limit: look it up once.
    let mut memo: HashMap<LookupKey, Option<&'static Limit>> = HashMap::new();
    for n in &w.numbers {
        let limit = w.lookup_key(n).and_then(|key| *memo.entry(key).or_insert_with(|| limit_of(key.0, key.1, key.2)));
        let rule = match limit {
            Some(l) => l.broken(n.value),
            None => (!n.value.is_finite()).then(|| "must be a finite number".to_string()),
        };
        if let Some(rule) = rule {
            return Err(ConfigError { path: w.path_text(n), value: value_text(n.value), rule });
        }
    }
    Ok(())
}

/// What the limit of a number depends on: the name of its field, the kind of its table, and in
/// a distribution the quantity drawn ([`limit_of`]).
type LookupKey<'a> = (&'a str, Option<&'a str>, Option<&'a str>);

/// A segment of a path: a field or variant name, a map key (index into `Walker::keys`) or an
/// array index.
#[derive(Clone, Copy, Debug)]
enum Seg {
    Name(&'static str),
    Key(u32),
    Index(u32),
}

/// A table (struct, map or struct variant) met on the walk.
#[derive(Clone, Debug, Default)]
struct Table {
    /// Length of its path.
    depth: usize,
    /// Its `kind` tag, and whether it is a distribution (it has a `dist` tag).
    kind: Option<String>,
    dist: bool,
}

/// A number met on the walk: its path (`Walker::segs[start..start + len]`), the table it is a
/// field of (`None` if the field's container is no table, e.g. a tuple variant), its value.
#[derive(Clone, Copy, Debug)]
struct Num {
    start: u32,
    len: u32,
    table: Option<u32>,
    value: f64,
}

/// A serde serializer that records every number with its path and the table it belongs to,
/// and the tags of the tables (it sees f64 values as they are, NaN included, which a JSON
/// value cannot hold). Paths are kept as segments back to back, without a string per number.
#[derive(Default)]
struct Walker {
    path: Vec<Seg>,
    index: Vec<u32>,
    /// Tables being walked, innermost last (indices into `tables`).
    open: Vec<u32>,
    tables: Vec<Table>,
    keys: Vec<String>,
    segs: Vec<Seg>,
    numbers: Vec<Num>,
}

impl Walker {
    fn walk(scenario: &Scenario) -> Walker {
        let mut w = Walker::default();
        scenario.serialize(&mut w).expect("the walker accepts every value");
        w
    }

    fn text_of(&self, s: Seg) -> Option<&str> {
        match s {
            Seg::Name(n) => Some(n),
            Seg::Key(k) => Some(&self.keys[k as usize]),
            Seg::Index(_) => None,
        }
    }

    fn segments(&self, n: &Num) -> &[Seg] {
        &self.segs[n.start as usize..(n.start + n.len) as usize]
    }

    /// What the limit of `n` depends on: its name (the last field of its path), the kind of
    /// its table, and in a distribution the quantity drawn (the nearest field above the
    /// distribution that is not one of a mixture's `parts`); `None` for a number outside any
    /// field (it has no limit).
    fn lookup_key(&self, n: &Num) -> Option<LookupKey<'_>> {
        let segs = self.segments(n);
        let at = segs.iter().rposition(|&s| self.text_of(s).is_some())?;
        let name = self.text_of(segs[at])?;
        let table = n.table.map(|t| &self.tables[t as usize]);
        if table.is_some_and(|t| t.dist) {
            let quantity = segs[..at]
                .iter()
                .rev()
                .filter_map(|&s| self.text_of(s))
                .find(|&s| s != "parts")
                .expect("a distribution is a field's value");
            return Some((name, None, Some(quantity)));
        }
        Some((name, table.and_then(|t| t.kind.as_deref()), None))
    }

    /// The path as messages write it: `a.b[2].c`.
    fn path_text(&self, n: &Num) -> String {
        let mut out = String::new();
        for &s in self.segments(n) {
            match (s, self.text_of(s)) {
                (Seg::Index(i), _) => out.push_str(&format!("[{i}]")),
                (_, Some(t)) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(t);
                }
                (_, None) => unreachable!("only indices have no text"),
            }
        }
        out
    }

    /// The innermost open table if the current path's first `depth` segments are its path.
    fn table_at(&self, depth: usize) -> Option<u32> {
        self.open.last().copied().filter(|&t| self.tables[t as usize].depth == depth)
    }

    fn number(&mut self, value: f64) {
        let at = self.path.iter().rposition(|&s| !matches!(s, Seg::Index(_)));
        let start = self.segs.len() as u32;
        self.segs.extend_from_slice(&self.path);
        let table = at.and_then(|at| self.table_at(at));
        self.numbers.push(Num { start, len: self.path.len() as u32, table, value });
    }

    /// A string value: the `kind` or `dist` tag of the table it is a field of.
    fn text(&mut self, v: &str) {
        let Some((&last, table)) = self.path.split_last() else { return };
        let kind = match self.text_of(last) {
            Some("kind") => true,
            Some("dist") => false,
            _ => return,
        };
        if let Some(t) = self.table_at(table.len()) {
            let t = &mut self.tables[t as usize];
            if kind {
                t.kind = Some(v.to_string());
            } else {
                t.dist = true;
            }
        }
    }

    fn open_table(&mut self) {
        self.open.push(self.tables.len() as u32);
        self.tables.push(Table { depth: self.path.len(), ..Table::default() });
    }

    fn field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<(), serde_json::Error> {
        self.path.push(Seg::Name(key));
        value.serialize(&mut *self)?;
        self.path.pop();
        Ok(())
    }

    fn element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), serde_json::Error> {
        let i = self.index.last_mut().expect("in a sequence");
        let seg = Seg::Index(*i);
        *i += 1;
        self.path.push(seg);
        value.serialize(&mut *self)?;
        self.path.pop();
        Ok(())
    }
}

type R = Result<(), serde_json::Error>;

impl<'a> ser::Serializer for &'a mut Walker {
    type Ok = ();
    type Error = serde_json::Error;
    type SerializeSeq = &'a mut Walker;
    type SerializeTuple = &'a mut Walker;
    type SerializeTupleStruct = &'a mut Walker;
    type SerializeTupleVariant = &'a mut Walker;
    type SerializeMap = &'a mut Walker;
    type SerializeStruct = &'a mut Walker;
    type SerializeStructVariant = &'a mut Walker;

    fn serialize_bool(self, _: bool) -> R {
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> R {
        self.serialize_f64(v as f64)
    }
    fn serialize_i16(self, v: i16) -> R {
        self.serialize_f64(v as f64)
    }
    fn serialize_i32(self, v: i32) -> R {
        self.serialize_f64(v as f64)
    }
    fn serialize_i64(self, v: i64) -> R {
        self.serialize_f64(v as f64)
    }
    fn serialize_u8(self, v: u8) -> R {
        self.serialize_f64(v as f64)
    }
    fn serialize_u16(self, v: u16) -> R {
        self.serialize_f64(v as f64)
    }
    fn serialize_u32(self, v: u32) -> R {
        self.serialize_f64(v as f64)
    }
    fn serialize_u64(self, v: u64) -> R {
        self.serialize_f64(v as f64)
    }
    fn serialize_f32(self, v: f32) -> R {
        self.serialize_f64(v as f64)
    }
    fn serialize_f64(self, v: f64) -> R {
        self.number(v);
        Ok(())
    }
    fn serialize_char(self, _: char) -> R {
        Ok(())
    }
    fn serialize_str(self, v: &str) -> R {
        self.text(v);
        Ok(())
    }
    fn serialize_bytes(self, _: &[u8]) -> R {
        Ok(())
    }
    fn serialize_none(self) -> R {
        Ok(())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> R {
        value.serialize(self)
    }
    fn serialize_unit(self) -> R {
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> R {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> R {
        self.text(variant);
        Ok(())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, value: &T) -> R {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(self, _: &'static str, _: u32, variant: &'static str, value: &T) -> R {
        self.field(variant, value)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, serde_json::Error> {
        self.index.push(0);
        Ok(self)
    }
    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, serde_json::Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Self::SerializeTupleStruct, serde_json::Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, variant: &'static str, len: usize) -> Result<Self::SerializeTupleVariant, serde_json::Error> {
        self.path.push(Seg::Name(variant));
        self.serialize_seq(Some(len))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, serde_json::Error> {
        self.open_table();
        Ok(self)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, serde_json::Error> {
        self.open_table();
        Ok(self)
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, variant: &'static str, _: usize) -> Result<Self::SerializeStructVariant, serde_json::Error> {
        self.path.push(Seg::Name(variant));
        self.open_table();
        Ok(self)
    }
}

/// Sequences of every kind: each element at the next index.
macro_rules! sequence {
    ($trait:ident, $method:ident) => {
        impl ser::$trait for &mut Walker {
            type Ok = ();
            type Error = serde_json::Error;
            fn $method<T: ?Sized + Serialize>(&mut self, value: &T) -> R {
                self.element(value)
            }
            fn end(self) -> R {
                self.index.pop();
                Ok(())
            }
        }
    };
}

sequence!(SerializeSeq, serialize_element);
sequence!(SerializeTuple, serialize_element);
sequence!(SerializeTupleStruct, serialize_field);

impl ser::SerializeTupleVariant for &mut Walker {
    type Ok = ();
    type Error = serde_json::Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> R {
        self.element(value)
    }
    fn end(self) -> R {
        self.index.pop();
        self.path.pop();
        Ok(())
    }
}

impl ser::SerializeMap for &mut Walker {
    type Ok = ();
    type Error = serde_json::Error;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> R {
        // Map keys are strings in a scenario; keep the key as the next path segment.
        let key = serde_json::to_value(key)?;
        self.keys.push(key.as_str().map_or_else(|| key.to_string(), str::to_string));
        self.path.push(Seg::Key(self.keys.len() as u32 - 1));
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> R {
        value.serialize(&mut **self)?;
        self.path.pop();
        Ok(())
    }
    fn end(self) -> R {
        self.open.pop();
        Ok(())
    }
}

impl ser::SerializeStruct for &mut Walker {
    type Ok = ();
    type Error = serde_json::Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> R {
        self.field(key, value)
    }
    fn end(self) -> R {
        self.open.pop();
        Ok(())
    }
}

impl ser::SerializeStructVariant for &mut Walker {
    type Ok = ();
    type Error = serde_json::Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> R {
        self.field(key, value)
    }
    fn end(self) -> R {
        self.open.pop();
        self.path.pop();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scenarios that between them hold every field of every table, optional ones included
    /// (decoded without validation: only their numbers matter here).
    const EVERY_FIELD: &[&str] = &[
        r#"{"name": "a", "duration_s": 10, "warmup_s": 1,
            "topology": {"clients": 2, "servers": 2, "access_rate_bps": 1e8, "access_delay_ms": 1,
                "access_queue": {"limit_pkts": 10, "limit_bytes": 15000, "aqm": {"kind": "droptail"}},
                "delay_resolution_us": 100,
                "bottleneck": {"rate_bps": 1e7, "delay_ms": 1, "random_loss": 0.1,
                    "queue": {"limit_pkts": 100, "aqm": {"kind": "red", "min_th_pkts": 5, "max_th_pkts": 15, "max_p": 0.1, "w_q": 0.002, "mean_pkt_bytes": 1000, "min_queue_pkts": 2}},
                    "up_queue": {"limit_bytes": 150000, "aqm": {"kind": "ared", "target_delay_ms": 5, "interval_ms": 500, "max_p": 0.1, "alpha_max": 0.01, "beta": 0.9, "top": 0.5, "bottom": 0.01, "min_th_pkts": 5, "max_th_pkts": 15, "w_q": 0.002, "mean_pkt_bytes": 1000}}}},
            "tcp": {"profile": "linux", "mss_bytes": 1460, "header_bytes": 40, "initial_rto_s": 1, "min_rto_s": 0.2, "max_rto_s": 60,
                "initial_window_segments": 10, "delayed_ack_ms": 40, "ack_every_segments": 2, "syn_retries": 6, "congestion_control": "cubic",
                "ecn": true, "ecn_plus": "seed", "beta": 0.7, "abe": true, "beta_ecn": 0.85, "cubic_c": 0.4, "abc": true, "dctcp_g": 0.0625, "dctcp_alpha_init": 1,
                "prague_rtt_target_ms": 25, "prague_rtt_transition_rounds": 500, "prague_classic_delay_ms": 2,
                "pacing": true, "pacing_ss_ratio_percent": 200, "pacing_ca_ratio_percent": 120,
                "clients": {"ecn_fraction": 0.5}, "servers": {"mss_bytes": 1000}},
            "workloads": [
                {"kind": "bulk", "flows": 2, "bytes": 1000, "start_s": 1, "start_jitter_s": 1, "host_offset": 1,
                 "rtt_ms": {"dist": "uniform", "low": 10, "high": 20}, "rwnd_bytes": {"dist": "discrete", "values": [1e4, 2e4], "weights": [1, 2]},
                 "tcp": {"ecn": true}},
                {"kind": "exchanges", "arrival_rate_per_s": 10, "start_s": 0, "stop_s": 5,
                 "exchanges_per_connection": {"dist": "exponential", "mean": 2}, "request_bytes": {"dist": "constant", "value": 300},
                 "response_bytes": {"dist": "mixture", "weights": [1, 1], "parts": [{"dist": "lomax", "scale": 1720, "shape": 1.2, "max": 1e6}, {"dist": "bounded_pareto", "low": 1e5, "high": 1e8, "shape": 1.1}]},
                 "server_delay_ms": {"dist": "pareto", "mean": 1, "shape": 2}, "think_time_s": {"dist": "constant", "value": 0},
                 "rtt_ms": {"dist": "constant", "value": 40}, "rwnd_bytes": {"dist": "constant", "value": 65536}},
                {"kind": "web_sessions", "session_rate_per_s": 1, "start_s": 0, "stop_s": 5, "rtt_ms": {"dist": "constant", "value": 40}},
                {"kind": "packmime_http", "rate_per_s": 10, "p_persistent": 0.1, "start_s": 0, "stop_s": 5, "rtt_ms": {"dist": "constant", "value": 40}},
                {"kind": "tpcw_browsers", "browsers": 3, "think_mean_s": 7, "think_max_s": 70, "session_min_mean_s": 900, "session_min_max_s": 3600, "rtt_ms": {"dist": "constant", "value": 40}},
                {"kind": "packet_source", "rate_pps": 100, "size_bytes": {"dist": "constant", "value": 1000}, "start_s": 0, "stop_s": 5}
            ],
            "metrics": {"interval_s": 1, "queue_sample_ms": 10, "sojourn_bin_ms": 0.1, "sojourn_max_ms": 2000, "flow_sample_ms": 10}}"#,
        r#"{"duration_s": 10,
            "topology": {"kind": "parking_lot", "bottlenecks": 2, "clients": 2, "servers": 1, "bottleneck": {"rate_bps": 1e7}, "record": ["b2_up"]},
            "workloads": [{"kind": "bulk", "flows": 2, "client_group": "long", "server_group": "long"},
                          {"kind": "packet_source", "rate_pps": 100, "link": "b1_up", "direction": "up"}]}"#,
        r#"{"duration_s": 10,
            "topology": {"kind": "graph", "routers": ["a", "b", "c"],
                "links": [{"name": "ab", "from": "a", "to": "b", "rate_bps": 1e7, "delay_ms": 2, "random_loss": 0.01,
                           "queue": {"limit_pkts": 50}, "up_queue": {"limit_pkts": 60}},
                          {"name": "bc", "from": "b", "to": "c", "rate_bps": 2e7}],
                "client_groups": [{"name": "left", "router": "a", "count": 3}],
                "server_groups": [{"name": "right", "router": "c", "count": 2}],
                "routes": [{"from": "a", "to": "c", "links": ["ab_up", "bc_up"]}]},
            "workloads": [{"kind": "exchanges", "arrival_rate_per_s": 10, "response_bytes": {"dist": "constant", "value": 1000}, "client_group": "left", "server_group": "right"}]}"#,
    ];

    /// The same scenario with each other AQM on the bottleneck, every optional field set.
    const AQMS: &[&str] = &[
        r#"{"kind": "rem", "phi": 1.001, "gamma": 0.001, "alpha": 0.1, "b_star_pkts": 20, "update_ms": 2, "in_weight": 1, "mean_pkt_bytes": 1000}"#,
        r#"{"kind": "pi", "a": 1.822e-5, "b": 1.816e-5, "sample_hz": 170, "q_ref_pkts": 50, "mean_pkt_bytes": 1000}"#,
        r#"{"kind": "pie", "target_ms": 15, "tupdate_ms": 15, "alpha": 0.125, "beta": 1.25, "max_burst_ms": 150, "dq_threshold_bytes": 16384, "dq_rate_weight": 0.125, "mark_ecnth": 0.1, "mean_pkt_bytes": 1500}"#,
        r#"{"kind": "codel", "target_ms": 5, "interval_ms": 100, "mtu_bytes": 1514}"#,
        r#"{"kind": "threshold", "k_pkts": 20, "k_bytes": 30000, "k_us": 1000}"#,
        r#"{"kind": "dcn", "sb_size": 1000, "hb_size": 100, "hb_max_chain": 10, "threshold_pkts": 10, "clearing_interval_ms": 500, "a": 1e-5, "b": 2e-5, "t_update_ms": 10, "q_ref_pkts": 50, "t_dec_ms": 10, "p_ref_max_pkts": 100}"#,
        r#"{"kind": "afd", "shadow_size": 1000, "sample_one_in": 10, "alpha": 1.7, "beta": 1.8, "update_hz": 160, "q_target_pkts": 50, "m_min": 1}"#,
        r#"{"kind": "rio_ps", "in_min_th_pkts": 5, "in_max_th_pkts": 15, "in_max_p": 0.02, "out_min_th_pkts": 5, "out_max_th_pkts": 15, "out_max_p": 0.1, "w_q": 0.002, "short_flow_pkts": 20, "idle_timeout_ms": 500, "table_size": 1000, "mean_pkt_bytes": 1000}"#,
        r#"{"kind": "choke", "min_th_pkts": 5, "max_th_pkts": 15, "max_p": 0.1, "w_q": 0.002, "candidates": 1, "mean_pkt_bytes": 1000}"#,
        r#"{"kind": "fq_codel", "flows": 1024, "quantum_bytes": 1514, "target_ms": 5, "interval_ms": 100, "mtu_bytes": 1514, "ce_threshold_ms": 1}"#,
        r#"{"kind": "pi2", "ecn": true, "target_us": 15000, "t_update_us": 16000, "alpha_hz": 0.16, "beta_hz": 3.2, "coupling_factor": 2, "scalable": true, "drop_on_overload": true, "min_backlog_bytes": 3000}"#,
        r#"{"kind": "dualpi2", "ecn": true, "target_us": 15000, "t_update_us": 16000, "alpha_hz": 0.16, "beta_hz": 3.2, "coupling_factor": 2, "l_min_th_us": 800, "l_range_us": 400, "l_th_len_pkts": 1, "tshift_us": 40000, "classifier": "ect1_or_ce", "pi_delay": "max", "drop_on_overload": true, "min_backlog_bytes": 3000}"#,
        r#"{"kind": "aecn", "n_ref_flows": 10, "flow_exponent": 1, "rate_exponent": 1, "max_p_cap": 0.5, "window_ms": 1000, "table_size": 1000}"#,
    ];

    fn scenarios() -> Vec<Scenario> {
        let base: serde_json::Value = serde_json::from_str(EVERY_FIELD[0]).unwrap();
        let mut out = vec![serde_json::from_value(base.clone()).unwrap()];
        for aqm in AQMS {
            let mut v = base.clone();
            v["topology"]["bottleneck"]["queue"]["aqm"] = serde_json::from_str(aqm).unwrap();
            out.push(serde_json::from_value(v).unwrap_or_else(|e| panic!("{aqm}: {e}")));
        }
        out.extend(EVERY_FIELD[1..].iter().map(|s| Scenario::from_json(s).unwrap_or_else(|e| panic!("{e}"))));
        out
    }

    /// Names of the numeric fields in the JSON Schema (arrays of numbers included).
    fn schema_numbers() -> std::collections::BTreeSet<String> {
        fn numeric(node: &serde_json::Value) -> bool {
            let ty = |t: &serde_json::Value| t == "number" || t == "integer";
            match &node["type"] {
                serde_json::Value::Array(a) if a.iter().any(ty) => true,
                serde_json::Value::String(_) if ty(&node["type"]) => true,
                _ => node["type"] == "array" && numeric(&node["items"]),
            }
        }
        fn walk(node: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
            match node {
                serde_json::Value::Object(m) => {
                    if let Some(serde_json::Value::Object(props)) = m.get("properties") {
                        for (k, v) in props {
                            if numeric(v) {
                                out.insert(k.clone());
                            }
                        }
                    }
                    m.values().for_each(|v| walk(v, out));
                }
                serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
                _ => {}
            }
        }
        let mut out = std::collections::BTreeSet::new();
        walk(&serde_json::from_str(&super::super::json_schema()).unwrap(), &mut out);
        out
    }

    /// Every number of the scenario: its path as messages write it (`workloads[0].rtt_ms.value`),
    /// its limit, and its value.
    fn numbers(scenario: &Scenario) -> Vec<(String, Option<&'static Limit>, f64)> {
        let w = Walker::walk(scenario);
        w.numbers
            .iter()
            .map(|n| (w.path_text(n), w.lookup_key(n).and_then(|(name, kind, quantity)| limit_of(name, kind, quantity)), n.value))
            .collect()
    }

    /// The field a number is the value of (or of the array it is in): `values` for
    /// `workloads[0].rwnd_bytes.values[1]`.
    fn name_of(path: &str) -> &str {
        path.rsplit('.').next().unwrap().split('[').next().unwrap()
    }

    #[test]
    fn every_numeric_field_has_a_limit() {
        let mut seen = std::collections::BTreeSet::new();
        for s in scenarios() {
            for (path, limit, _) in numbers(&s) {
                seen.insert(name_of(&path).to_string());
                assert!(limit.is_some(), "no limit for {path}");
            }
        }
        // The fixtures hold every numeric field the schema knows.
        let missing: Vec<_> = schema_numbers().into_iter().filter(|n| !seen.contains(n)).collect();
        assert!(missing.is_empty(), "fields missing from EVERY_FIELD/AQMS: {missing:?}");
    }

    #[test]
    fn lookup_prefers_kind_then_name_then_unit_and_distributions_take_their_quantity() {
        let numbers = numbers(&scenarios()[3]); // PIE
        let find = |path: &str| {
            let (_, limit, _) = numbers.iter().find(|(p, _, _)| p == path).unwrap_or_else(|| panic!("{path}"));
            limit.unwrap().field
        };
        assert_eq!(find("topology.bottleneck.queue.aqm.beta"), "pie.beta");
        assert_eq!(find("tcp.beta"), "beta");
        assert_eq!(find("topology.bottleneck.queue.aqm.target_ms"), "_ms");
        assert_eq!(find("workloads[0].rtt_ms.low"), "_ms");
        assert_eq!(find("workloads[0].rwnd_bytes.values[1]"), "rwnd_bytes");
        assert_eq!(find("workloads[0].rwnd_bytes.weights[0]"), "weights");
        assert_eq!(find("workloads[1].response_bytes.parts[1].low"), "_bytes");
        assert_eq!(find("workloads[1].response_bytes.parts[0].shape"), "shape");
        assert_eq!(find("workloads[1].arrival_rate_per_s"), "_per_s");
        assert_eq!(find("workloads[5].rate_pps"), "_pps");
        assert_eq!(name_of("workloads[0].rwnd_bytes.values[1]"), "values");
    }

    #[test]
    fn messages_name_the_bound_and_its_reason() {
        let l = by_name("rate_bps", None).unwrap();
        assert_eq!(l.broken(-5.0).unwrap(), "must be positive");
        assert!(l.broken(0.5).unwrap().starts_with("must be at least 1000 bit/s ("));
        assert!(l.broken(2e12).unwrap().starts_with("must be at most 1e12 bit/s ("));
        assert_eq!(l.broken(f64::NAN).unwrap(), "must be a finite number");
        assert_eq!(l.broken(1e7), None);
        let t = by_name("interval_ms", None).unwrap();
        assert_eq!(t.broken(0.0), None);
        assert!(t.broken(1e-7).unwrap().starts_with("must be 0 or at least 1e-6 ms ("));
        assert_eq!(t.broken(-1.0).unwrap(), "must be zero or positive");
        // A NaN that a JSON scenario cannot carry, set through the Rust API, is caught too.
        let mut s = scenarios().remove(0);
        s.topology.bottleneck.as_mut().unwrap().random_loss = f64::NAN;
        let e = s.validate().unwrap_err();
        assert_eq!(e.to_string(), "topology.bottleneck.random_loss (NaN) must be a finite number");
    }

    #[test]
    fn docs_list_every_limit() {
        let docs = include_str!("../../../../docs/scenario.md");
        let rows: Vec<String> = LIMITS.iter().map(|l| format!("| `{}` | {} | {} |", l.field, l.range(), l.reason)).collect();
        let missing: Vec<&String> = rows.iter().filter(|r| !docs.contains(r.as_str())).collect();
        assert!(missing.is_empty(), "docs/scenario.md lacks these rows of its Limits table:\n{}", rows.join("\n"));
    }
}
