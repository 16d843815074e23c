//! TPC-W-like emulated browsers (workloads spec section 4; seeds 000 section 7 and 003): a
//! fixed population of browsers, each walking the TPC-W browsing-mix transition table (as in
//! the University of Wisconsin Remote Browser Emulator), thinking between pages.
//!
//! A browser's session starts at Home on a new persistent connection. Each interaction is one
//! request for the HTML page followed by its images, all on that connection in sequence; the
//! think time runs from the last image's arrival to the next page request (spec 4.2: "fully
//! received" means the HTML plus its images). Think times are exponential with mean 7 s,
//! capped at 70 s. A session lasts at least its user session minimum duration (exponential,
//! mean 15 min, capped at 60 min) and ends at the first transition to Home after it; the
//! browser then closes the connection, thinks, and starts a new session. Each browser starts
//! once, at a uniform time in [0.1, 20.1) s (the RBE's stagger).
//!
//! Departure from the RBE (and spec 4.2's suggested mapping): images travel on the page's
//! connection one after the other, not on up to three extra parallel connections.
//! Page and image sizes are parameters: the spec found no per-interaction HTML sizes or
//! image counts, so their defaults are ours [unsourced], except the 5 kB thumbnail size.
//!
//! Random numbers: each browser draws from its own stream (forked per browser at set-up), in
//! interaction order; only the times at which it draws depend on the network (closed loop).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::driver::{Action, Context, Owner, PlanEnd, Wake, WorkloadDriver};
use super::{ConnSpec, ExchangeSpec, FlowPlan};
use crate::engine::rng::{purpose, StreamId};
use crate::engine::time::{from_millis, from_secs};
use crate::engine::{Rng, SimTime};
use crate::config::{check, ConfigError};
use crate::dist::Dist;

/// The 14 TPC-W web interactions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Interaction {
    Home,
    NewProducts,
    BestSellers,
    ProductDetail,
    SearchRequest,
    SearchResults,
    ShoppingCart,
    CustomerRegistration,
    BuyRequest,
    BuyConfirm,
    OrderInquiry,
    OrderDisplay,
    AdminRequest,
    AdminConfirm,
}

use Interaction::*;

/// Browsing-mix transitions (spec 4.1, from the RBE's cumulative table): (next, percent).
fn transitions(from: Interaction) -> &'static [(Interaction, f64)] {
    match from {
        Home => &[(BestSellers, 37.92), (NewProducts, 37.93), (OrderInquiry, 1.03), (SearchRequest, 18.71), (ShoppingCart, 4.40)],
        NewProducts => &[(Home, 2.99), (ProductDetail, 95.69), (SearchRequest, 0.74), (ShoppingCart, 0.58)],
        BestSellers => &[(Home, 46.07), (ProductDetail, 6.52), (SearchRequest, 46.83), (ShoppingCart, 0.57)],
        ProductDetail => &[(AdminRequest, 0.47), (Home, 83.00), (ProductDetail, 14.03), (SearchRequest, 1.41), (ShoppingCart, 1.09)],
        SearchRequest => &[(Home, 7.88), (SearchResults, 91.68), (ShoppingCart, 0.44)],
        SearchResults => &[(Home, 36.74), (ProductDetail, 61.95), (SearchRequest, 0.74), (ShoppingCart, 0.57)],
        ShoppingCart => &[(CustomerRegistration, 40.99), (Home, 47.84), (ShoppingCart, 11.16)],
        CustomerRegistration => &[(BuyRequest, 91.46), (Home, 4.74), (SearchRequest, 3.80)],
        BuyRequest => &[(BuyConfirm, 92.00), (Home, 3.96), (ShoppingCart, 4.04)],
        BuyConfirm => &[(Home, 3.42), (SearchRequest, 96.58)],
        OrderInquiry => &[(Home, 5.23), (OrderDisplay, 83.34), (SearchRequest, 11.43)],
        OrderDisplay => &[(Home, 8.02), (SearchRequest, 91.98)],
        AdminRequest => &[(AdminConfirm, 90.00), (Home, 10.00)],
        AdminConfirm => &[(Home, 98.78), (SearchRequest, 1.22)],
    }
}

fn next_interaction(from: Interaction, rng: &mut Rng) -> Interaction {
    let row = transitions(from);
    let total: f64 = row.iter().map(|(_, p)| p).sum();
    let mut u = rng.uniform() * total;
    for &(to, p) in row {
        if u < p {
            return to;
        }
        u -= p;
    }
    row[row.len() - 1].0
}

/// Parameters of `kind = "tpcw_browsers"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TpcwParams {
    /// Number of emulated browsers (the load knob of a closed population).
    pub browsers: u32,
    /// Mean think time (s) (TPC-W 5.3.2.1: 7 s).
    #[serde(default = "default_think")]
    pub think_mean_s: f64,
    /// Think times above this are clamped (s) (TPC-W: 70 s, ten means).
    #[serde(default = "default_think_max")]
    pub think_max_s: f64,
    /// Mean user session minimum duration (s) (TPC-W 6.1.9.2: 15 min).
    #[serde(default = "default_usmd")]
    pub session_min_mean_s: f64,
    /// USMD cap (s) (60 min).
    #[serde(default = "default_usmd_max")]
    pub session_min_max_s: f64,
    /// Request size of a page or an image (bytes) (default 400; spec 4.2: 300-500 B).
    #[serde(default = "default_request")]
    pub request_bytes: Dist,
    /// HTML size of a page (bytes) (default constant 8000) [unsourced].
    #[serde(default = "default_html")]
    pub html_bytes: Dist,
    /// Images fetched per page, rounded to the nearest integer (default constant 5) [unsourced].
    #[serde(default = "default_images")]
    pub images_per_page: Dist,
    /// Size of an image (bytes) (default constant 5000: the RBE's thumbnails).
    #[serde(default = "default_image")]
    pub image_bytes: Dist,
    /// Server time before answering (ms) (default 0).
    #[serde(default = "default_zero")]
    pub server_delay_ms: Dist,
    /// Per-browser propagation RTT (ms); the path RTT when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_ms: Option<Dist>,
    /// Receiver window of both ends (bytes) (default 65536).
    #[serde(default = "default_rwnd")]
    pub rwnd_bytes: Dist,
    /// The client host group its connections start from (`topology`: the dumbbell's
    /// `clients`, a parking lot's `long` or `cross{i}`, a graph's `client_groups`); default:
    /// every client host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_group: Option<String>,
    /// The server host group its connections go to; default: every server host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_group: Option<String>,
}

fn default_think() -> f64 {
    7.0
}
fn default_think_max() -> f64 {
    70.0
}
fn default_usmd() -> f64 {
    900.0
}
fn default_usmd_max() -> f64 {
    3600.0
}
fn default_request() -> Dist {
    Dist::constant(400.0)
}
fn default_html() -> Dist {
    Dist::constant(8000.0)
}
fn default_images() -> Dist {
    Dist::constant(5.0)
}
fn default_image() -> Dist {
    Dist::constant(5000.0)
}
fn default_zero() -> Dist {
    Dist::constant(0.0)
}
fn default_rwnd() -> Dist {
    Dist::constant(65536.0)
}

impl TpcwParams {
    pub fn with_browsers(browsers: u32) -> TpcwParams {
        TpcwParams {
            client_group: None,
            server_group: None,
            browsers,
            think_mean_s: default_think(),
            think_max_s: default_think_max(),
            session_min_mean_s: default_usmd(),
            session_min_max_s: default_usmd_max(),
            request_bytes: default_request(),
            html_bytes: default_html(),
            images_per_page: default_images(),
            image_bytes: default_image(),
            server_delay_ms: default_zero(),
            rtt_ms: None,
            rwnd_bytes: default_rwnd(),
        }
    }

    pub(crate) fn validate(&self, path: &str) -> Result<(), ConfigError> {
        for (v, name) in [
            (self.think_mean_s, "think_mean_s"),
            (self.think_max_s, "think_max_s"),
            (self.session_min_mean_s, "session_min_mean_s"),
            (self.session_min_max_s, "session_min_max_s"),
        ] {
            check(v > 0.0 && v.is_finite(), format_args!("{path}.{name}"), v, "must be positive")?;
        }
        for (d, name, min) in [
            (&self.request_bytes, "request_bytes", 0.0),
            (&self.html_bytes, "html_bytes", 0.0),
            (&self.images_per_page, "images_per_page", 0.0),
            (&self.image_bytes, "image_bytes", 0.0),
            (&self.server_delay_ms, "server_delay_ms", 0.0),
            (&self.rwnd_bytes, "rwnd_bytes", 1.0),
        ] {
            let p = format!("{path}.{name}");
            d.validate(&p)?;
            check(d.min_value() >= min, &p, d.min_value(), format_args!("must not produce values below {min}"))?;
        }
        if let Dist::Constant { value } = &self.images_per_page {
            check(*value <= 1e4, format_args!("{path}.images_per_page.value"), value, "must be at most 10000")?;
        }
        Ok(())
    }

    /// The mean think time after clamping: m (1 - e^(-max/m)).
    pub fn effective_think_s(&self) -> f64 {
        self.think_mean_s * (1.0 - (-self.think_max_s / self.think_mean_s).exp())
    }
}

struct Browser {
    rng: Rng,
    client: u32,
    server: u32,
    rtt: Option<SimTime>,
    rwnd: u32,
    state: Interaction,
    session_start: SimTime,
    usmd: SimTime,
}

/// The population of one `tpcw_browsers` workload.
pub struct Browsers {
    index: u32,
    browsers: Vec<Browser>,
    /// Start time of each browser's first session.
    pub starts: Vec<SimTime>,
    /// Interactions started so far.
    pub interactions: u64,
}

impl Browsers {
    pub fn new(index: u32, p: &TpcwParams, seed: u64, clients: u32, servers: u32) -> Browsers {
        let mut root = Rng::stream(seed, StreamId { purpose: purpose::BROWSER, a: index, b: 0 });
        let mut browsers = Vec::with_capacity(p.browsers as usize);
        let mut starts = Vec::with_capacity(p.browsers as usize);
        for b in 0..p.browsers {
            let mut rng = root.fork();
            starts.push(from_secs(0.1 + 20.0 * rng.uniform()));
            let rtt = p.rtt_ms.as_ref().map(|d| from_millis(d.sample(&mut rng)));
            let rwnd = p.rwnd_bytes.sample_bytes(&mut rng).clamp(1, u32::MAX as u64) as u32;
            browsers.push(Browser {
                client: b % clients,
                server: rng.below(servers as u64) as u32,
                rng,
                rtt,
                rwnd,
                state: Home,
                session_start: 0,
                usmd: 0,
            });
        }
        Browsers { index, browsers, starts, interactions: 0 }
    }

    fn think(p: &TpcwParams, rng: &mut Rng) -> SimTime {
        from_secs(rng.exponential(p.think_mean_s).min(p.think_max_s))
    }

    /// The exchanges of one interaction: the page, then its images.
    fn page(&mut self, p: &TpcwParams, b: u32) -> Vec<ExchangeSpec> {
        self.interactions += 1;
        let r = &mut self.browsers[b as usize].rng;
        let ex = |resp: &Dist, r: &mut Rng| ExchangeSpec {
            request_bytes: p.request_bytes.sample_bytes(r).max(1),
            response_bytes: resp.sample_bytes(r).max(1),
            server_delay: from_millis(p.server_delay_ms.sample(r).max(0.0)),
            think: 0,
        };
        let mut v = vec![ex(&p.html_bytes, r)];
        let images = p.images_per_page.sample(r).round().clamp(0.0, 1e4) as usize;
        for _ in 0..images {
            v.push(ex(&p.image_bytes, r));
        }
        v
    }

    /// A new session of browser `b` starts now at Home: its connection.
    pub fn start_session(&mut self, p: &TpcwParams, b: u32, now: SimTime) -> ConnSpec {
        let br = &mut self.browsers[b as usize];
        br.state = Home;
        br.session_start = now;
        br.usmd = from_secs(br.rng.exponential(p.session_min_mean_s).min(p.session_min_max_s));
        let (client, server, rtt, rwnd) = (br.client, br.server, br.rtt, br.rwnd);
        let plan = FlowPlan::Exchanges(self.page(p, b));
        ConnSpec { workload: self.index, client, server, rtt, rwnd_bytes: rwnd, plan, owner: Some((b, 0)) }
    }

    /// Browser `b` has received its page now: the think time, and the next page's exchanges
    /// (None: the session is over; start a new one after the think time).
    pub fn page_done(&mut self, p: &TpcwParams, b: u32, now: SimTime) -> (SimTime, Option<Vec<ExchangeSpec>>) {
        let br = &mut self.browsers[b as usize];
        let think = Self::think(p, &mut br.rng);
        let next = next_interaction(br.state, &mut br.rng);
        if next == Home && now.saturating_sub(br.session_start) >= br.usmd {
            return (think, None);
        }
        br.state = next;
        (think, Some(self.page(p, b)))
    }

    /// A think time for a browser whose connection failed.
    pub fn retry_after(&mut self, p: &TpcwParams, b: u32) -> SimTime {
        Self::think(p, &mut self.browsers[b as usize].rng)
    }
}

/// The wake-up at which browser `b` starts a session.
fn session_start(b: u32) -> Wake {
    Wake { kind: 0, a: b, b: 0 }
}

/// Each browser owns its session's connection (handle (browser, 0)).
impl WorkloadDriver for Browsers {
    type Params = TpcwParams;

    fn start(&mut self, _p: &TpcwParams, ctx: &Context, out: &mut Vec<Action>) {
        for (b, &at) in self.starts.iter().enumerate() {
            ctx.wake_at(at, session_start(b as u32), out);
        }
    }

    /// A browser starts a session: its connection opens with the Home page.
    fn wake(&mut self, p: &TpcwParams, ctx: &Context, wake: Wake, out: &mut Vec<Action>) {
        out.push(Action::Open(self.start_session(p, wake.a, ctx.now)));
    }

    /// The browser has its whole page: the next page on the same connection after a think
    /// time, or the end of its session (the connection closes and a new session starts after
    /// the think time).
    fn plan_done(&mut self, p: &TpcwParams, ctx: &Context, (b, _): Owner, out: &mut Vec<Action>) -> PlanEnd {
        let (think, next) = self.page_done(p, b, ctx.now);
        match next {
            Some(exchanges) => PlanEnd::More { think, exchanges },
            None => {
                ctx.wake_at(ctx.now + think, session_start(b), out);
                PlanEnd::Close
            }
        }
    }

    /// The browser's connection failed: it starts a new session after a think time.
    fn conn_ended(&mut self, p: &TpcwParams, ctx: &Context, (b, _): Owner, out: &mut Vec<Action>) {
        let at = ctx.now + self.retry_after(p, b);
        ctx.wake_at(at, session_start(b), out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browsing_mix_matches_spec_4_1() {
        // Long-run interaction mix of the browsing table (spec 4.1): Home 29.00 %, New
        // Products 11.00 %, Best Sellers 11.00 %, Product Detail 21.01 %, Search Request
        // 12.00 %, Search Results 11.00 %, Shopping Cart 2.00 %; browse/order 95/5.
        let mut r = Rng::from_seed(1);
        let mut s = Home;
        let mut counts = [0u64; 14];
        let n = 2_000_000;
        for _ in 0..n {
            s = next_interaction(s, &mut r);
            counts[s as usize] += 1;
        }
        let share = |i: Interaction| counts[i as usize] as f64 / n as f64 * 100.0;
        for (i, want) in [(Home, 29.00), (NewProducts, 11.00), (BestSellers, 11.00), (ProductDetail, 21.01), (SearchRequest, 12.00), (SearchResults, 11.00), (ShoppingCart, 2.00)] {
            assert!((share(i) - want).abs() < 0.15, "{i:?}: {} vs {want}", share(i));
        }
        let browse: f64 = [Home, NewProducts, BestSellers, ProductDetail, SearchRequest, SearchResults].iter().map(|&i| share(i)).sum();
        assert!((browse - 95.0).abs() < 0.2, "{browse}");
    }

    #[test]
    fn think_times_are_capped_exponentials() {
        let p = TpcwParams::with_browsers(1);
        let mut r = Rng::from_seed(2);
        let n = 400_000;
        let xs: Vec<f64> = (0..n).map(|_| Browsers::think(&p, &mut r) as f64 / 1e9).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        assert!((mean - p.effective_think_s()).abs() < 0.04, "{mean}");
        assert!(xs.iter().all(|&x| x <= 70.0));
    }

    #[test]
    fn a_browser_answers_a_page_with_the_next_or_a_close_and_retries_after_a_failure() {
        let mut p = TpcwParams::with_browsers(2);
        p.session_min_mean_s = 1e-6;
        let mut b = Browsers::new(0, &p, 3, 2, 1);
        let end = from_secs(1e5);
        let ctx = |now| Context { now, end, clients: 2, servers: 1 };
        let mut out = Vec::new();
        b.start(&p, &ctx(0), &mut out);
        assert_eq!(out.len(), 2);
        let Action::Wake { at, wake } = out[1].clone() else { panic!("{out:?}") };
        assert!((from_secs(0.1)..from_secs(20.1)).contains(&at));
        out.clear();
        b.wake(&p, &ctx(at), wake, &mut out);
        let Some(Action::Open(spec)) = out.pop() else { panic!("{out:?}") };
        assert_eq!((spec.client, spec.owner), (1, Some((1, 0))));
        // Pages follow on the same connection until the walk returns Home (the session's
        // minimum duration is over at once): then it closes and a session starts later.
        let mut now = at;
        let mut pages = 0;
        loop {
            now += from_secs(1.0);
            match b.plan_done(&p, &ctx(now), (1, 0), &mut out) {
                PlanEnd::More { think, exchanges } => {
                    assert!(out.is_empty() && think <= from_secs(70.0) && !exchanges.is_empty());
                    pages += 1;
                }
                PlanEnd::Close => break,
            }
        }
        assert!(pages < 100, "{pages}");
        assert!(matches!(&out[..], [Action::Wake { at: t, wake: w }] if *t >= now && *w == wake), "{out:?}");
        out.clear();
        // A failed connection: a new session after a think time.
        b.conn_ended(&p, &ctx(now), (1, 0), &mut out);
        assert!(matches!(&out[..], [Action::Wake { at: t, wake: w }] if *t >= now && *t <= now + from_secs(70.0) && *w == wake), "{out:?}");
        // No wake-up at or after the end.
        out.clear();
        b.conn_ended(&p, &ctx(end), (1, 0), &mut out);
        assert!(out.is_empty());
    }
}
