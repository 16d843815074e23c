//! ecnlab: a packet-level discrete-event simulator for Explicit Congestion Notification, active
//! queue management and TCP congestion control.
//!
//! Layers, each using only those above it in this list (DESIGN.md): [`engine`] (time, events,
//! random streams), [`packet`], [`aqm`] (queue disciplines), [`net`] (links, topology), [`tcp`],
//! [`workload`] (traffic generators), [`metrics`] (result tables), [`scenario`] (configuration),
//! and [`sim`], which wires a scenario into a runnable simulation.

pub mod aqm;
pub mod config;
pub mod dist;
pub mod engine;
pub mod metrics;
pub mod net;
pub mod packet;
pub mod scenario;
pub mod sim;
pub mod tcp;
pub mod workload;

pub use config::ConfigError;
pub use scenario::Scenario;
pub use sim::Simulation;

/// Whether this build of the crate used the profile-guided optimization profile
/// (`crates/ecnlab/pgo/rustc-wrapper` sets `--cfg ecnlab_pgo` when it passes the profile).
pub const BUILT_WITH_PGO: bool = cfg!(ecnlab_pgo);

/// Read so that cargo rebuilds the crate when `ECNLAB_PGO` changes (the wrapper reads it, and
/// cargo tracks the variables a crate reads at compile time).
const _PGO_SWITCH: Option<&str> = option_env!("ECNLAB_PGO");
