//! Random distributions used by workloads (spec workloads.md section 3).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::config::{check, ConfigError};
use crate::engine::Rng;

/// A distribution of a real value, drawn by inversion from one uniform number so each draw
/// uses exactly one value of its stream (a mixture uses one more, to pick its part).
// Decoded by `super::tagged` through the bodies in `de`, so an error inside a distribution
// names its field.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum Dist {
    /// Always `value`.
    Constant { value: f64 },
    /// Exponential with mean `mean`.
    Exponential { mean: f64 },
    /// Uniform on [`low`, `high`).
    Uniform { low: f64, high: f64 },
    /// Truncated Lomax TL(scale, shape, max) on [0, max] (workloads spec 3.1).
    Lomax { scale: f64, shape: f64, max: f64 },
    /// Pareto type I with mean `mean` and index `shape` (> 1), ns-2's `RandomVariable/Pareto`:
    /// X = k U^(-1/shape) with k = mean (shape - 1) / shape, so the mean is exact (spec 1.2).
    Pareto { mean: f64, shape: f64 },
    /// Bounded Pareto on [`low`, `high`] with index `shape`: X = L (1 - U c)^(-1/a),
    /// c = 1 - (L/H)^a (spec 3.2, the elephants of the general TCP mix).
    BoundedPareto { low: f64, high: f64, shape: f64 },
    /// `values[i]` with probability `weights[i] / sum(weights)`.
    Discrete { values: Vec<f64>, weights: Vec<f64> },
    /// `parts[i]` with probability `weights[i] / sum(weights)` (e.g. spec 3.2's mice and
    /// elephants).
    Mixture { parts: Vec<Dist>, weights: Vec<f64> },
}

impl<'de> Deserialize<'de> for Dist {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use crate::config::tagged::{body, split};
        const KINDS: &[&str] = &["constant", "exponential", "uniform", "lomax", "pareto", "bounded_pareto", "discrete", "mixture"];
        let (kind, b) = split(d, "dist", KINDS)?;
        Ok(match kind.as_str() {
            "constant" => {
                let de::Constant { value } = body(b)?;
                Dist::Constant { value }
            }
            "exponential" => {
                let de::Exponential { mean } = body(b)?;
                Dist::Exponential { mean }
            }
            "uniform" => {
                let de::Uniform { low, high } = body(b)?;
                Dist::Uniform { low, high }
            }
            "lomax" => {
                let de::Lomax { scale, shape, max } = body(b)?;
                Dist::Lomax { scale, shape, max }
            }
            "pareto" => {
                let de::Pareto { mean, shape } = body(b)?;
                Dist::Pareto { mean, shape }
            }
            "bounded_pareto" => {
                let de::BoundedPareto { low, high, shape } = body(b)?;
                Dist::BoundedPareto { low, high, shape }
            }
            "discrete" => {
                let de::Discrete { values, weights } = body(b)?;
                Dist::Discrete { values, weights }
            }
            "mixture" => {
                let de::Mixture { parts, weights } = body(b)?;
                Dist::Mixture { parts, weights }
            }
            _ => unreachable!("split checks the kind"),
        })
    }
}

/// The bodies of the variants, decoded on their own so an error names the field.
mod de {
    use super::Dist;
    use serde::Deserialize;

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Constant {
        pub value: f64,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Exponential {
        pub mean: f64,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Uniform {
        pub low: f64,
        pub high: f64,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Lomax {
        pub scale: f64,
        pub shape: f64,
        pub max: f64,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Pareto {
        pub mean: f64,
        pub shape: f64,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct BoundedPareto {
        pub low: f64,
        pub high: f64,
        pub shape: f64,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Discrete {
        pub values: Vec<f64>,
        pub weights: Vec<f64>,
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Mixture {
        pub parts: Vec<Dist>,
        pub weights: Vec<f64>,
    }
}

impl Dist {
    pub fn constant(value: f64) -> Dist {
        Dist::Constant { value }
    }

    pub fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let fin = |name: &str, v: f64| check(v.is_finite(), format_args!("{path}.{name}"), v, "must be a finite number");
        match self {
            Dist::Constant { value } => fin("value", *value),
            Dist::Exponential { mean } => check(*mean > 0.0 && mean.is_finite(), format_args!("{path}.mean"), mean, "must be positive"),
            Dist::Uniform { low, high } => {
                fin("low", *low)?;
                fin("high", *high)?;
                check(low <= high, format_args!("{path}.low"), low, format_args!("must not exceed high ({high})"))
            }
            Dist::Lomax { scale, shape, max } => {
                check(*scale > 0.0 && scale.is_finite(), format_args!("{path}.scale"), scale, "must be positive")?;
                check(*shape > 0.0 && shape.is_finite(), format_args!("{path}.shape"), shape, "must be positive")?;
                check(*max > 0.0 && max.is_finite(), format_args!("{path}.max"), max, "must be positive")
            }
            Dist::Pareto { mean, shape } => {
                check(*mean > 0.0 && mean.is_finite(), format_args!("{path}.mean"), mean, "must be positive")?;
                check(*shape > 1.0 && shape.is_finite(), format_args!("{path}.shape"), shape, "must be above 1 (the mean is infinite otherwise)")
            }
            Dist::BoundedPareto { low, high, shape } => {
                check(*low > 0.0 && low.is_finite(), format_args!("{path}.low"), low, "must be positive")?;
                check(high.is_finite() && high > low, format_args!("{path}.high"), high, format_args!("must be above low ({low})"))?;
                check(*shape > 0.0 && shape.is_finite(), format_args!("{path}.shape"), shape, "must be positive")
            }
            Dist::Discrete { values, weights } => {
                check_weights(path, "values", values.len(), weights)?;
                for (i, v) in values.iter().enumerate() {
                    fin(&format!("values[{i}]"), *v)?;
                }
                Ok(())
            }
            Dist::Mixture { parts, weights } => {
                check_weights(path, "parts", parts.len(), weights)?;
                for (i, d) in parts.iter().enumerate() {
                    d.validate(&format!("{path}.parts[{i}]"))?;
                }
                Ok(())
            }
        }
    }

    /// The smallest value the distribution can produce.
    pub fn min_value(&self) -> f64 {
        match self {
            Dist::Constant { value } => *value,
            Dist::Exponential { .. } => 0.0,
            Dist::Uniform { low, .. } => *low,
            Dist::Lomax { .. } => 1.0,
            Dist::Pareto { mean, shape } => mean * (shape - 1.0) / shape,
            Dist::BoundedPareto { low, .. } => *low,
            Dist::Discrete { values, weights } => values
                .iter()
                .zip(weights)
                .filter(|(_, w)| **w > 0.0)
                .map(|(v, _)| *v)
                .fold(f64::INFINITY, f64::min),
            Dist::Mixture { parts, weights } => parts
                .iter()
                .zip(weights)
                .filter(|(_, w)| **w > 0.0)
                .map(|(d, _)| d.min_value())
                .fold(f64::INFINITY, f64::min),
        }
    }

    /// The mean (for load calibration and documentation).
    pub fn mean(&self) -> f64 {
        match self {
            Dist::Constant { value } => *value,
            Dist::Exponential { mean } => *mean,
            Dist::Uniform { low, high } => (low + high) / 2.0,
            Dist::Lomax { scale, shape, max } => {
                // X + s is bounded Pareto on [s, H + s] with index a.
                let (s, a, h) = (*scale, *shape, *max + *scale);
                let c = 1.0 - (s / h).powf(a);
                let m = if (a - 1.0).abs() < 1e-12 {
                    s * (h / s).ln() / c
                } else {
                    a * s.powf(a) * (s.powf(1.0 - a) - h.powf(1.0 - a)) / ((a - 1.0) * c)
                };
                m - s
            }
            Dist::Pareto { mean, .. } => *mean,
            Dist::BoundedPareto { low, high, shape } => bounded_pareto_mean(*low, *high, *shape),
            Dist::Discrete { values, weights } => {
                let total: f64 = weights.iter().sum();
                values.iter().zip(weights).map(|(v, w)| v * w).sum::<f64>() / total
            }
            Dist::Mixture { parts, weights } => {
                let total: f64 = weights.iter().sum();
                parts.iter().zip(weights).map(|(d, w)| d.mean() * w).sum::<f64>() / total
            }
        }
    }

    /// One draw.
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        match self {
            Dist::Constant { value } => *value,
            Dist::Exponential { mean } => rng.exponential(*mean),
            Dist::Uniform { low, high } => low + (high - low) * rng.uniform(),
            Dist::Lomax { scale, shape, max } => {
                // X = s [(1 - U c)^(-1/a) - 1], c = 1 - (1 + H/s)^(-a); at least 1 (spec 3.1).
                let c = 1.0 - (1.0 + max / scale).powf(-shape);
                let x = scale * ((1.0 - rng.uniform() * c).powf(-1.0 / shape) - 1.0);
                x.max(1.0)
            }
            Dist::Pareto { mean, shape } => {
                // 1 - U lies in (0, 1], so the power is finite.
                let k = mean * (shape - 1.0) / shape;
                k * (1.0 - rng.uniform()).powf(-1.0 / shape)
            }
            Dist::BoundedPareto { low, high, shape } => {
                let c = 1.0 - (low / high).powf(*shape);
                low * (1.0 - rng.uniform() * c).powf(-1.0 / shape)
            }
            Dist::Discrete { values, weights } => {
                let total: f64 = weights.iter().sum();
                let mut u = rng.uniform() * total;
                for (v, w) in values.iter().zip(weights) {
                    if u < *w {
                        return *v;
                    }
                    u -= w;
                }
                *values.last().expect("validated non-empty")
            }
            Dist::Mixture { parts, weights } => {
                let total: f64 = weights.iter().sum();
                let mut u = rng.uniform() * total;
                for (d, w) in parts.iter().zip(weights) {
                    if u < *w {
                        return d.sample(rng);
                    }
                    u -= w;
                }
                parts.last().expect("validated non-empty").sample(rng)
            }
        }
    }

    /// One draw of a size in whole bytes (rounded up).
    pub fn sample_bytes(&self, rng: &mut Rng) -> u64 {
        self.sample(rng).max(0.0).ceil() as u64
    }
}

/// The weights of `n` items called `what` (values, parts): one each, non-negative, positive sum.
fn check_weights(path: &str, what: &str, n: usize, weights: &[f64]) -> Result<(), ConfigError> {
    check(n > 0, format_args!("{path}.{what}"), "[]", "must not be empty")?;
    let one = what.trim_end_matches('s');
    check(weights.len() == n, format_args!("{path}.weights"), weights.len(), format_args!("must have one weight per {one} ({n} {what})"))?;
    for (i, w) in weights.iter().enumerate() {
        check(*w >= 0.0 && w.is_finite(), format_args!("{path}.weights[{i}]"), w, "must be non-negative")?;
    }
    let total: f64 = weights.iter().sum();
    check(total > 0.0, format_args!("{path}.weights"), total, "must have a positive sum")
}

/// Mean of the bounded Pareto on [l, h] with index a.
pub(crate) fn bounded_pareto_mean(l: f64, h: f64, a: f64) -> f64 {
    let c = 1.0 - (l / h).powf(a);
    if (a - 1.0).abs() < 1e-12 {
        l * (h / l).ln() / c
    } else {
        a * l.powf(a) * (l.powf(1.0 - a) - h.powf(1.0 - a)) / ((a - 1.0) * c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_lomax_matches_spec_moments() {
        // workloads spec 3.1: TL(1720, 1.2, 37.2 MB) has mean 7198 B and P(X <= 10 kB) = 0.900.
        let d = Dist::Lomax { scale: 1720.0, shape: 1.2, max: 37.2e6 };
        assert!((d.mean() - 7198.0).abs() < 5.0, "{}", d.mean());
        let mut r = Rng::from_seed(11);
        let n = 400_000;
        let xs: Vec<u64> = (0..n).map(|_| d.sample_bytes(&mut r)).collect();
        let below = xs.iter().filter(|&&x| x <= 10_000).count() as f64 / n as f64;
        assert!((below - 0.900).abs() < 0.003, "{below}");
        let mut sorted = xs.clone();
        sorted.sort_unstable();
        let median = sorted[n / 2];
        assert!((1330..=1360).contains(&median), "{median}");
    }

    #[test]
    fn pareto_keeps_its_mean_and_bounded_pareto_its_range() {
        let d = Dist::Pareto { mean: 10.0, shape: 2.5 };
        let mut r = Rng::from_seed(3);
        let n = 400_000;
        let m: f64 = (0..n).map(|_| d.sample(&mut r)).sum::<f64>() / n as f64;
        // Shape 2.5 has finite variance (var = k^2 a / ((a-1)^2 (a-2)) = 80): SE ~ 0.014.
        assert!((m - 10.0).abs() < 0.1, "{m}");
        assert_eq!(d.min_value(), 6.0);
        // Spec 3.2: the elephants, bounded Pareto on [100 kB, 100 MB] with index 1.1, mean 549 kB.
        let e = Dist::BoundedPareto { low: 1e5, high: 1e8, shape: 1.1 };
        assert!((e.mean() - 549e3).abs() < 1e3, "{}", e.mean());
        assert!((0..10_000).all(|_| (1e5..=1e8).contains(&e.sample(&mut r))));
    }

    #[test]
    fn general_tcp_mix_matches_spec_3_2() {
        // Spec 3.2: 94.28 % web mice TL(1720, 1.2, 37.2 MB), 5.72 % elephants bounded Pareto
        // [100 kB, 100 MB] index 1.1: exact mean 38.2 kB, P(<= 10 kB) 0.849, flows over
        // 100 kB are 6.4 % and carry 0.900 of the bytes.
        let d = Dist::Mixture {
            parts: vec![
                Dist::Lomax { scale: 1720.0, shape: 1.2, max: 37.2e6 },
                Dist::BoundedPareto { low: 1e5, high: 1e8, shape: 1.1 },
            ],
            weights: vec![0.9428, 0.0572],
        };
        assert!((d.mean() - 38.2e3).abs() < 100.0, "{}", d.mean());
        let mut r = Rng::from_seed(8);
        let n = 2_000_000;
        let xs: Vec<u64> = (0..n).map(|_| d.sample_bytes(&mut r)).collect();
        let small = xs.iter().filter(|&&x| x <= 10_000).count() as f64 / n as f64;
        assert!((small - 0.849).abs() < 0.002, "{small}");
        let big: Vec<u64> = xs.iter().copied().filter(|&x| x > 100_000).collect();
        let share = big.iter().sum::<u64>() as f64 / xs.iter().sum::<u64>() as f64;
        let frac = big.len() as f64 / n as f64;
        eprintln!("mix: P(<=10kB) {small:.4}, >100kB {frac:.4} carrying {share:.4}");
        assert!((frac - 0.064).abs() < 0.001, "{frac}");
        // Spec Monte Carlo over 3 seeds x 2e6: 0.897-0.901.
        assert!((share - 0.900).abs() < 0.01, "{share}");
        let e = Dist::Mixture { parts: vec![Dist::constant(1.0)], weights: vec![] }.validate("m").unwrap_err();
        assert!(e.to_string().starts_with("m.weights (0) must have one weight per part"), "{e}");
        let e = Dist::Mixture { parts: vec![Dist::Exponential { mean: -1.0 }], weights: vec![1.0] }.validate("m").unwrap_err();
        assert_eq!(e.to_string(), "m.parts[0].mean (-1) must be positive");
    }

    #[test]
    fn discrete_follows_weights() {
        let d = Dist::Discrete { values: vec![8192.0, 16384.0, 65536.0], weights: vec![0.2, 0.35, 0.45] };
        let mut r = Rng::from_seed(5);
        let n = 100_000;
        let small = (0..n).filter(|_| d.sample(&mut r) == 8192.0).count() as f64 / n as f64;
        assert!((small - 0.2).abs() < 0.006, "{small}");
        assert_eq!(d.min_value(), 8192.0);
    }

    #[test]
    fn invalid_distributions_are_named() {
        let e = Dist::Uniform { low: 5.0, high: 1.0 }.validate("w.rtt_ms").unwrap_err();
        assert_eq!(e.to_string(), "w.rtt_ms.low (5) must not exceed high (1)");
        let e = Dist::Discrete { values: vec![1.0], weights: vec![] }.validate("x").unwrap_err();
        assert!(e.to_string().starts_with("x.weights (0) must have one weight per value"));
    }
}
