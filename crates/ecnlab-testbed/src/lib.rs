//! The emulation testbed's router: real IPv4 traffic between network namespaces through
//! ecnlab's queue disciplines, links and delay lines, used unchanged (docs/testbed.md).
//!
//! [`wire`] reads and rewrites the headers, [`forward`] is the forwarding engine (sans-IO: the
//! caller passes frames and the time, and gets frames back), [`config`] the router's
//! configuration, and the `ecnlab-router` binary the I/O (AF_PACKET sockets, a monotonic
//! clock, counters and queue samples written as JSON lines).

pub mod config;
pub mod forward;
pub mod wire;

pub use config::RouterConfig;
pub use forward::{Arrival, Path, PathConfig, PathSnapshot};
