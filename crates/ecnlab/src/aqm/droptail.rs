//! DropTail: a FIFO that drops arrivals only when its hard limit is reached.
//!
//! Source: spec section 1 (ns-3 `FifoQueueDisc` semantics: drop iff the arrival would exceed the
//! limit). The limit itself belongs to the [`super::Fifo`], so DropTail has no parameters and
//! never signals.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AqmAlgorithm, Context, PacketView, QueueView, Settings, Verdict};
use crate::config::ConfigError;
use crate::engine::SimTime;

/// DropTail's `[queue.aqm]` table holds only its `kind`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DropTailParams {}

impl Settings for DropTailParams {
    fn validate(&self, _path: &str) -> Result<(), ConfigError> {
        Ok(())
    }
}

#[derive(Debug, Default, Clone)]
pub struct DropTail;

impl AqmAlgorithm for DropTail {
    type Params = DropTailParams;
    const VARIABLES: &'static [&'static str] = &[];

    fn build(_params: &DropTailParams, _ctx: Context) -> DropTail {
        DropTail
    }

    fn on_enqueue(&mut self, _q: &QueueView, _pkt: &PacketView, _now: SimTime) -> Verdict {
        Verdict::Pass
    }
    fn ecn(&self) -> bool {
        false
    }
}
