//! The discrete-event engine: integer time, the pending-event set, and random streams.
//!
//! Nothing here knows about packets or protocols. Time is a `u64` count of nanoseconds
//! (DESIGN decision 2); events are ordered by (time, insertion sequence) so that ties are
//! resolved first-in-first-out and every run is deterministic.

pub mod bench;
pub mod queue;
pub mod rng;
pub mod time;

pub use queue::{EventQueue, Heap4};
pub use rng::Rng;
pub use time::SimTime;
