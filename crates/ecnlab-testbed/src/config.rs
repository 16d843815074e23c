//! The router's configuration: a JSON object (the Python harness writes it from its
//! arguments; the queue table is the scenario's `topology.bottleneck.queue`).

use std::net::Ipv4Addr;

use ecnlab::config::ConfigError;
use ecnlab::engine::time::from_millis;
use ecnlab::scenario::QueueConfig;
use serde::Deserialize;

use crate::forward::PathConfig;

/// The largest IPv4 packet the queue must hold (bytes): a 1500-byte MTU.
const MTU_BYTES: u64 = 1500;

/// The router between a client side and a server side. "Up" is clients to servers.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouterConfig {
    /// Interface towards the clients (frames received on it go up).
    #[serde(default)]
    pub client_interface: String,
    /// Interface towards the servers (frames received on it go down).
    #[serde(default)]
    pub server_interface: String,
    /// Rate in each direction (bit/s of IPv4 bytes).
    pub rate_bps: f64,
    /// Overrides `rate_bps` on the up direction.
    #[serde(default)]
    pub up_rate_bps: Option<f64>,
    /// One-way delay of every IPv4 packet in each direction (ms).
    #[serde(default)]
    pub delay_ms: f64,
    /// Probability that an IPv4 packet is lost before the queue (each direction).
    #[serde(default)]
    pub random_loss: f64,
    /// Queue on both directions (the scenario's `[topology.bottleneck.queue]` table).
    #[serde(default)]
    pub queue: QueueConfig,
    /// Overrides `queue` on the up direction.
    #[serde(default)]
    pub up_queue: Option<QueueConfig>,
    /// Extra one-way delays per host pair, each applied in both directions.
    #[serde(default)]
    pub pairs: Vec<PairDelay>,
    /// Seed of the disciplines' random streams.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Interval of the queue samples (ms).
    #[serde(default = "default_sample_interval")]
    pub sample_interval_ms: f64,
    /// ECN+ emulation: servers (dotted IPv4) whose ECN-setup SYN-ACKs the router makes ECT(0).
    #[serde(default)]
    pub ecn_plus_servers: Vec<String>,
}

/// An extra one-way delay between two hosts (dummynet-style per-pair RTT).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairDelay {
    /// IPv4 addresses of the two hosts, dotted.
    pub a: String,
    pub b: String,
    /// Extra one-way delay, added in each direction (ms).
    pub delay_ms: f64,
}

fn default_seed() -> u64 {
    1
}
fn default_sample_interval() -> f64 {
    10.0
}

fn err(path: &str, value: impl ToString, rule: &str) -> ConfigError {
    ConfigError { path: path.into(), value: value.to_string(), rule: rule.into() }
}

fn rate(v: f64, path: &str) -> Result<u64, ConfigError> {
    if v.is_finite() && v >= 1000.0 {
        Ok(v.round() as u64)
    } else {
        Err(err(path, v, "must be a rate of at least 1000 bit/s"))
    }
}

fn non_negative_ms(v: f64, path: &str) -> Result<u64, ConfigError> {
    if v.is_finite() && v >= 0.0 {
        Ok(from_millis(v))
    } else {
        Err(err(path, v, "must be a finite number of milliseconds, at least 0"))
    }
}

fn address(s: &str, path: &str) -> Result<u32, ConfigError> {
    s.parse::<Ipv4Addr>().map(u32::from).map_err(|_| err(path, s, "must be a dotted IPv4 address"))
}

impl RouterConfig {
    /// Decodes the JSON text; an error names the field (its path in the object).
    pub fn from_json(text: &str) -> Result<RouterConfig, String> {
        let d = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(d).map_err(|e| format!("{}: {}", e.path(), e.inner()))
    }

    /// The (up, down) directions' configurations, after checking every field.
    pub fn paths(&self) -> Result<(PathConfig, PathConfig), ConfigError> {
        let down_rate = rate(self.rate_bps, "rate_bps")?;
        let up_rate = match self.up_rate_bps {
            Some(r) => rate(r, "up_rate_bps")?,
            None => down_rate,
        };
        let base = non_negative_ms(self.delay_ms, "delay_ms")?;
        if !(0.0..1.0).contains(&self.random_loss) {
            return Err(err("random_loss", self.random_loss, "must be in [0, 1)"));
        }
        if !(self.sample_interval_ms.is_finite() && self.sample_interval_ms >= 0.1) {
            return Err(err("sample_interval_ms", self.sample_interval_ms, "must be at least 0.1"));
        }
        self.queue.validate("queue", MTU_BYTES)?;
        let up_queue = self.up_queue.clone().unwrap_or_else(|| self.queue.clone());
        up_queue.validate("up_queue", MTU_BYTES)?;
        let mut pairs = Vec::new();
        for (i, p) in self.pairs.iter().enumerate() {
            let a = address(&p.a, &format!("pairs[{i}].a"))?;
            let b = address(&p.b, &format!("pairs[{i}].b"))?;
            let d = non_negative_ms(p.delay_ms, &format!("pairs[{i}].delay_ms"))?;
            pairs.push(((a, b), d));
            pairs.push(((b, a), d));
        }
        let ect_synack_sources = self
            .ecn_plus_servers
            .iter()
            .enumerate()
            .map(|(i, a)| address(a, &format!("ecn_plus_servers[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        let path = |rate_bps, queue: QueueConfig, seed| PathConfig {
            rate_bps,
            queue,
            base_delay_ns: base,
            pair_delays: pairs.clone(),
            random_loss: self.random_loss,
            seed,
            ect_synack_sources: ect_synack_sources.clone(),
        };
        Ok((path(up_rate, up_queue, self.seed), path(down_rate, self.queue.clone(), self.seed ^ 0x9e37_79b9_7f4a_7c15)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_a_config_with_the_scenarios_queue_table() {
        let c = RouterConfig::from_json(
            r#"{"rate_bps": 10e6, "delay_ms": 5, "queue": {"limit_pkts": 50, "aqm": {"kind": "red", "ecn": true}},
                "pairs": [{"a": "10.77.1.1", "b": "10.77.2.1", "delay_ms": 20}]}"#,
        )
        .unwrap();
        let (up, down) = c.paths().unwrap();
        assert_eq!((up.rate_bps, down.base_delay_ns), (10_000_000, 5_000_000));
        assert_eq!(down.queue.limit_pkts, Some(50));
        let a = u32::from(Ipv4Addr::new(10, 77, 1, 1));
        let b = u32::from(Ipv4Addr::new(10, 77, 2, 1));
        assert_eq!(up.pair_delays, vec![((a, b), 20_000_000), ((b, a), 20_000_000)]);
    }

    #[test]
    fn errors_name_the_field() {
        let e = RouterConfig::from_json(r#"{"rate_bps": 1e7, "queue": {"limit_pkt": 5}}"#).unwrap_err();
        assert!(e.contains("limit_pkt"), "{e}");
        let bad = |json: &str| RouterConfig::from_json(json).unwrap().paths().unwrap_err().path;
        assert_eq!(bad(r#"{"rate_bps": 0}"#), "rate_bps");
        assert_eq!(bad(r#"{"rate_bps": 1e7, "pairs": [{"a": "10.1", "b": "10.0.0.2", "delay_ms": 1}]}"#), "pairs[0].a");
        assert_eq!(bad(r#"{"rate_bps": 1e7, "queue": {"limit_bytes": 100}}"#), "queue.limit_bytes");
        assert_eq!(bad(r#"{"rate_bps": 1e7, "delay_ms": -1}"#), "delay_ms");
        assert_eq!(bad(r#"{"rate_bps": 1e7, "ecn_plus_servers": ["10.77.2.1", "x"]}"#), "ecn_plus_servers[1]");
    }
}
