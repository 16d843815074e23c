//! TCP: the connection state machine and its parts.
//!
//! * [`endpoint`]: one end of a connection (RFC 793 states, handshake with SYN and SYN-ACK
//!   retransmission, byte sequence numbers, cumulative ACKs with out-of-order buffering,
//!   delayed ACKs, NewReno loss recovery, RFC 3168 ECN, FIN exchange);
//! * [`ecn`]: ECN feedback (RFC 3168: negotiation, the echo, CWR) and the per-ACK signal the
//!   congestion controller sees;
//! * [`accecn`]: Accurate ECN feedback (RFC 9768): the handshake encodings, the ACE counter,
//!   the sender's decoding;
//! * [`window`]: the window, congestion signals, RTTs and per-ACK signal a controller works on
//!   (a leaf the other parts share);
//! * [`rtt`]: the RFC 6298 retransmission-timeout estimator;
//! * [`sack`]: SACK blocks (RFC 2018, RFC 2883), the sender's scoreboard and RFC 6675 loss
//!   recovery with Proportional Rate Reduction (RFC 6937);
//! * [`cc`]: congestion controllers, pure state machines behind one trait (STYLE 5);
//! * [`cubic`]: CUBIC (RFC 9438), one of those controllers;
//! * [`dctcp`]: DCTCP's sender (RFC 8257), another;
//! * [`prague`]: TCP Prague's sender (the iccrg draft), DCTCP with L4S's changes;
//! * [`hystart`]: slow-start exit before loss (Linux's HyStart, HyStart++ of RFC 9406);
//! * [`params`]: endpoint profiles and their resolved parameters.

pub mod accecn;
pub mod cc;
pub mod config;
pub mod controller;
pub mod cubic;
pub mod dctcp;
pub mod ecn;
pub mod endpoint;
pub mod hystart;
pub mod params;
pub mod prague;
pub mod rack;
pub mod rtt;
pub mod sack;
pub mod window;

pub use endpoint::{Endpoint, Role, SegmentCtx, TcpEvents, TcpState};
pub use params::TcpParams;
