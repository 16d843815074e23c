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
