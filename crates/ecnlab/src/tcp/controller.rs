//! The congestion controller an endpoint runs, chosen by `tcp.congestion_control`: one enum
//! over the controllers of `cc`, `cubic`, `dctcp` and `prague`, so the hot path dispatches without a virtual call.

use super::cc::{AckSignal, CongestionControl, NewReno, RttInfo, Signal, Window};
use super::cubic::Cubic;
use super::dctcp::Dctcp;
use super::prague::Prague;
use crate::engine::SimTime;

/// The configured controller of an endpoint (enum dispatch keeps the hot path direct).
#[derive(Clone, Debug)]
pub enum Controller {
    NewReno(NewReno),
    Cubic(Cubic),
    Dctcp(Dctcp),
    Prague(Prague),
}

impl Controller {
    /// DCTCP's alpha, for a DCTCP controller.
    pub fn dctcp_alpha(&self) -> Option<f64> {
        match self {
            Controller::Dctcp(c) => Some(c.alpha()),
            Controller::Prague(c) => Some(c.alpha()),
            _ => None,
        }
    }
}

impl CongestionControl for Controller {
    #[inline]
    fn on_ack(&mut self, w: &mut Window, acked: u64, rtt: RttInfo, now: SimTime) {
        match self {
            Controller::NewReno(c) => c.on_ack(w, acked, rtt, now),
            Controller::Cubic(c) => c.on_ack(w, acked, rtt, now),
            Controller::Dctcp(c) => c.on_ack(w, acked, rtt, now),
            Controller::Prague(c) => c.on_ack(w, acked, rtt, now),
        }
    }
    #[inline]
    fn on_congestion_event(&mut self, w: &mut Window, signal: Signal, flight: u64, now: SimTime) {
        match self {
            Controller::NewReno(c) => c.on_congestion_event(w, signal, flight, now),
            Controller::Cubic(c) => c.on_congestion_event(w, signal, flight, now),
            Controller::Dctcp(c) => c.on_congestion_event(w, signal, flight, now),
            Controller::Prague(c) => c.on_congestion_event(w, signal, flight, now),
        }
    }
    #[inline]
    fn on_timeout(&mut self, w: &mut Window, flight: u64, now: SimTime) {
        match self {
            Controller::NewReno(c) => c.on_timeout(w, flight, now),
            Controller::Cubic(c) => c.on_timeout(w, flight, now),
            Controller::Dctcp(c) => c.on_timeout(w, flight, now),
            Controller::Prague(c) => c.on_timeout(w, flight, now),
        }
    }
    #[inline]
    fn on_ack_signal(&mut self, w: &mut Window, signal: &AckSignal) {
        match self {
            Controller::NewReno(c) => c.on_ack_signal(w, signal),
            Controller::Cubic(c) => c.on_ack_signal(w, signal),
            Controller::Dctcp(c) => c.on_ack_signal(w, signal),
            Controller::Prague(c) => c.on_ack_signal(w, signal),
        }
    }
    #[inline]
    fn on_idle_restart(&mut self, idle: SimTime) {
        match self {
            Controller::NewReno(c) => c.on_idle_restart(idle),
            Controller::Cubic(c) => c.on_idle_restart(idle),
            Controller::Dctcp(c) => c.on_idle_restart(idle),
            Controller::Prague(c) => c.on_idle_restart(idle),
        }
    }
}
