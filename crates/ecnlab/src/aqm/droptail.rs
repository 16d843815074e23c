//! DropTail: a FIFO that drops arrivals only when its hard limit is reached.
//!
//! Source: spec section 1 (ns-3 `FifoQueueDisc` semantics: drop iff the arrival would exceed the
//! limit). The limit itself belongs to the [`super::Queue`], so DropTail has no parameters and
//! never signals.

use super::{AqmAlgorithm, QueueView, Verdict};
use crate::engine::SimTime;
use crate::packet::Packet;

#[derive(Debug, Default, Clone)]
pub struct DropTail;

impl AqmAlgorithm for DropTail {
    fn on_enqueue(&mut self, _q: &QueueView, _pkt: &Packet, _now: SimTime) -> Verdict {
        Verdict::Pass
    }
    fn ecn(&self) -> bool {
        false
    }
}
