//! Links, delay lines and the network they form.
//!
//! A link serializes one packet at a time at its rate, then the packet propagates for the
//! link's delay. Packets on the wire leave in the order they entered it, so the link keeps them
//! in its own FIFO and the simulator needs only one pending event per link for arrivals (the
//! "pipe" technique, DESIGN decision 5). A delay line is a pure delay shared by all flows with
//! the same extra delay after the same link; it too is a FIFO with one pending event.

pub mod link;
pub mod topology;

pub use link::{DelayLine, Link, LinkWake, Offer};
pub use topology::{Hop, LinkId, Network, Route};
