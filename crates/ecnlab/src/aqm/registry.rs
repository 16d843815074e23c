//! Every queue discipline, by the `kind` that selects it in a scenario's `[queue.aqm]` table.
//!
//! Adding a discipline takes its own file (parameters with [`Settings`], the discipline with
//! [`Discipline`] and [`QueueDisc`], or an [`AqmAlgorithm`] run by a [`Fifo`]) and one line in
//! the list at the bottom of this file. From that list [`disciplines!`] makes the
//! configuration enum [`AqmConfig`] (its JSON Schema, its decoding by
//! [`tagged`](crate::config::tagged), which names the field of an error, its validation), the
//! runtime enum [`Disc`] and the dispatch of every [`QueueDisc`] call over it (a `match`, so
//! the per-packet path has no virtual call). Disciplines with state are boxed so that every
//! queue (most are DropTail access queues) stays small: one enum of hundreds of bytes per link
//! measurably slowed DropTail runs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    Aecn, Afd, Ared, Choke, CoDel, Context, Dcn, Discipline, DropTail, DualPi2, Enqueue, Fifo, FqCodel, Pi, Pi2, Pie,
    QueueDisc, QueueStats, Red, Rem, Rio, Settings, Threshold,
};
use super::{AecnParams, AfdParams, AredParams, ChokeParams, CodelParams, DcnParams, DropTailParams, FqCodelParams};
use super::{DualPi2Params, Pi2Params, PiParams, PieParams, RedParams, RemParams, RioParams, ThresholdParams};
use crate::config::{tagged, ConfigError};
use crate::engine::SimTime;
use crate::packet::{PacketId, PacketPool};

/// Makes [`AqmConfig`] and [`Disc`] from the list of disciplines: for each, its doc (the
/// schema's description), its variant name, its `kind`, its parameter type and its discipline
/// type (which builds from those parameters).
macro_rules! disciplines {
    ($( $(#[doc = $doc:literal])* $variant:ident = $kind:literal : $params:ty => $disc:ty, )*) => {
        /// Queue disciplines (docs/models/), selected by `kind`. Each variant wraps its
        /// discipline's parameter struct (defined beside the discipline in `aqm/`). Decoded by
        /// [`tagged`], so an error inside a variant names its field.
        #[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
        #[serde(tag = "kind", deny_unknown_fields)]
        pub enum AqmConfig {
            $( $(#[doc = $doc])* #[serde(rename = $kind)] $variant($params), )*
        }

        impl AqmConfig {
            /// Every `kind`, in the order of the list.
            pub const KINDS: &'static [&'static str] = &[$($kind),*];
            /// Each kind with the control variables its discipline reports to `aqm_samples`.
            pub const VARIABLES: &'static [(&'static str, &'static [&'static str])] =
                &[$(($kind, <$disc as Discipline>::VARIABLES)),*];

            fn settings(&self) -> &dyn Settings {
                match self {
                    $( AqmConfig::$variant(p) => p, )*
                }
            }

            /// The control variables this discipline reports to `aqm_samples`.
            pub fn variables(&self) -> &'static [&'static str] {
                match self {
                    $( AqmConfig::$variant(_) => <$disc as Discipline>::VARIABLES, )*
                }
            }

            /// Builds the discipline.
            pub fn build(&self, ctx: Context) -> Disc {
                match self {
                    $( AqmConfig::$variant(p) => Disc::$variant(<$disc as Discipline>::build(p, ctx)), )*
                }
            }
        }

        impl<'de> Deserialize<'de> for AqmConfig {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let (kind, body) = tagged::split(d, "kind", AqmConfig::KINDS)?;
                Ok(match kind.as_str() {
                    $( $kind => AqmConfig::$variant(tagged::body(body)?), )*
                    _ => unreachable!("split checks the kind"),
                })
            }
        }

        /// A queue discipline, as built from its [`AqmConfig`].
        #[derive(Debug)]
        pub enum Disc {
            $( $variant($disc), )*
        }

        impl Disc {
            /// [`QueueDisc::enqueue`], then the occupancy (packets, bytes) it left: one
            /// dispatch for both on every packet's way into a link.
            #[inline]
            pub fn enqueue_len(&mut self, pool: &mut PacketPool, id: PacketId, now: SimTime, stats: &mut QueueStats, dropped: &mut Vec<PacketId>) -> (Enqueue, (u32, u64)) {
                match self {
                    $( Disc::$variant(d) => {
                        let e = d.enqueue(pool, id, now, stats, dropped);
                        (e, (d.len_pkts(), d.len_bytes()))
                    } )*
                }
            }
            /// [`QueueDisc::enqueue_idle`], then the occupancy it left.
            #[inline]
            pub fn enqueue_idle_len(&mut self, pool: &mut PacketPool, id: PacketId, now: SimTime, idle_since: Option<SimTime>, stats: &mut QueueStats, dropped: &mut Vec<PacketId>) -> ((Enqueue, Option<(PacketId, bool)>), (u32, u64)) {
                match self {
                    $( Disc::$variant(d) => {
                        let r = d.enqueue_idle(pool, id, now, idle_since, stats, dropped);
                        (r, (d.len_pkts(), d.len_bytes()))
                    } )*
                }
            }
            /// [`QueueDisc::dequeue`], then the occupancy it left.
            #[inline]
            pub fn dequeue_len(&mut self, pool: &mut PacketPool, now: SimTime, stats: &mut QueueStats, dropped: &mut Vec<PacketId>) -> (Option<(PacketId, bool)>, (u32, u64)) {
                match self {
                    $( Disc::$variant(d) => {
                        let p = d.dequeue(pool, now, stats, dropped);
                        (p, (d.len_pkts(), d.len_bytes()))
                    } )*
                }
            }
        }

        // The queue reaches a discipline through these and the `_len` methods above, one
        // dispatch each.
        impl Disc {
            /// [`QueueDisc::went_idle`].
            pub fn went_idle(&mut self, at: SimTime) {
                match self {
                    $( Disc::$variant(d) => d.went_idle(at), )*
                }
            }
            /// [`QueueDisc::sample`].
            pub fn sample(&mut self, now: SimTime, out: &mut dyn FnMut(&'static str, f64)) {
                match self {
                    $( Disc::$variant(d) => d.sample(now, out), )*
                }
            }
        }
    };
}

impl Default for AqmConfig {
    fn default() -> Self {
        AqmConfig::Droptail(DropTailParams {})
    }
}

impl AqmConfig {
    /// Checks the parameters; `path` is the table's path in the scenario.
    pub fn validate(&self, path: &str) -> Result<(), ConfigError> {
        self.settings().validate(path)
    }

    /// The queue lengths (packets) the discipline aims at or starts signalling at, by field.
    pub fn targets_pkts(&self) -> Vec<(&'static str, f64)> {
        self.settings().targets_pkts()
    }

    /// The same in bytes.
    pub fn targets_bytes(&self) -> Vec<(&'static str, u64)> {
        self.settings().targets_bytes()
    }
}

disciplines! {
    /// No AQM: the queue only enforces its hard limits.
    Droptail = "droptail": DropTailParams => Fifo<DropTail>,
    /// RED (Floyd and Jacobson 1993), RED* (`above_max = "mark"`), ECNM (`above_max = "ecnm"`).
    Red = "red": RedParams => Box<Fifo<Red>>,
    /// Adaptive RED (Floyd, Gummadi, Shenker 2001).
    Ared = "ared": AredParams => Box<Fifo<Ared>>,
    /// REM (Athuraliya, Li, Low, Yin 2001).
    Rem = "rem": RemParams => Box<Fifo<Rem>>,
    /// PI controller (Hollot, Misra, Towsley, Gong 2001).
    Pi = "pi": PiParams => Box<Fifo<Pi>>,
    /// PIE (RFC 8033, or the early Linux implementation).
    Pie = "pie": PieParams => Box<Fifo<Pie>>,
    /// CoDel (RFC 8289).
    Codel = "codel": CodelParams => Box<Fifo<CoDel>>,
    /// Mark ECN-capable packets while the instantaneous queue exceeds K.
    Threshold = "threshold": ThresholdParams => Box<Fifo<Threshold>>,
    /// DCN: signal only long-lived high-bandwidth flows (seed 004 section 3).
    Dcn = "dcn": DcnParams => Box<Fifo<Dcn>>,
    /// AFD: approximate fair dropping (Pan, Breslau, Prabhakar, Shenker 2003).
    Afd = "afd": AfdParams => Box<Fifo<Afd>>,
    /// RIO with RIO-PS's short-flow classification (Clark and Fang 1998; Guo and Matta 2001).
    RioPs = "rio_ps": RioParams => Box<Fifo<Rio>>,
    /// CHOKe (Pan, Prabhakar, Psounis 2000).
    Choke = "choke": ChokeParams => Box<Choke>,
    /// Adaptive ECN: RED with ECN whose max_p follows the number of flows and each flow's rate
    /// (our reading of seed 001's proposal).
    Aecn = "aecn": AecnParams => Box<Fifo<Aecn>>,
    /// FQ-CoDel: flow queueing with CoDel on each queue (RFC 8290).
    FqCodel = "fq_codel": FqCodelParams => Box<FqCodel>,
    /// PI2: PI on queue delay, Classic signalled with p'^2, Scalable (ECT(1)) with k p'
    /// (De Schepper et al. 2016; RFC 9332 Appendix A).
    Pi2 = "pi2": Pi2Params => Box<Pi2>,
    /// DualPI2: the DualQ Coupled AQM with PI2 (RFC 9332).
    DualPi2 = "dualpi2": DualPi2Params => Box<DualPi2>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::tests::{queue, sim_packet};
    use crate::aqm::Outcome;
    use crate::packet::{Ecn, PacketKind};

    #[test]
    fn every_kind_decodes_its_defaults_builds_and_passes_a_packet() {
        for kind in AqmConfig::KINDS {
            // The threshold marker has no default K.
            let extra = if *kind == "threshold" { r#", "k_pkts": 50"# } else { "" };
            let cfg: AqmConfig = serde_json::from_str(&format!(r#"{{"kind": "{kind}"{extra}}}"#)).unwrap();
            cfg.validate("aqm").unwrap();
            // The variant serializes back under the same kind.
            assert_eq!(serde_json::to_value(&cfg).unwrap()["kind"], *kind);
            let mut q = queue(cfg, (Some(100), None));
            let mut pool = PacketPool::new();
            let mut dropped = Vec::new();
            let id = pool.alloc(sim_packet(PacketKind::Data, 1000, Ecn::NotEct));
            assert_eq!(q.enqueue(&mut pool, id, 0, &mut dropped), Enqueue::Queued { marked: false }, "{kind}");
            assert_eq!((q.len_pkts(), q.len_bytes()), (1, 1000), "{kind}");
            assert_eq!(q.dequeue(&mut pool, 1, &mut dropped), Some((id, false)), "{kind}");
            assert!(q.is_empty() && dropped.is_empty(), "{kind}");
            assert_eq!(q.stats(1).total(Outcome::Enqueued, None), 1, "{kind}");
        }
    }

    #[test]
    fn every_kind_reports_the_variables_it_declares_in_order() {
        assert_eq!(AqmConfig::VARIABLES.iter().map(|&(k, _)| k).collect::<Vec<_>>(), AqmConfig::KINDS);
        for &(kind, declared) in AqmConfig::VARIABLES {
            let extra = if kind == "threshold" { r#", "k_pkts": 50"# } else { "" };
            let cfg: AqmConfig = serde_json::from_str(&format!(r#"{{"kind": "{kind}"{extra}}}"#)).unwrap();
            let mut q = queue(cfg, (Some(100), None));
            let mut reported = Vec::new();
            q.sample_aqm(1_000_000, &mut |name, _| reported.push(name));
            assert_eq!(reported, declared, "{kind}");
        }
    }
}
