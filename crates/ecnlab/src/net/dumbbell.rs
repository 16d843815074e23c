//! The dumbbell: client hosts - R1 - bottleneck - R2 - server hosts.
//!
//! ```text
//!  client c --client_up[c]--> R1 --bottleneck_up--> [delay line] --> R2 --server_down[s]--> server s
//!  client c <--client_down[c]-- R1 <--[delay line] <--bottleneck_down-- R2 <--server_up[s]-- server s
//! ```
//!
//! Each flow may have an extra delay (its propagation RTT minus the path's), split into an
//! up and a down delay line, each right after the bottleneck in its direction. A line is then
//! fed by one link only, in order, so a packet can enter it as soon as it leaves the
//! bottleneck's queue (its exit time is known then), which saves an event per packet. Routing
//! is a fixed walk along this path: a packet's `hop` counts the stages it has passed.

use super::link::{DelayLine, Link};
use crate::packet::Direction;

/// Index of a link in [`Dumbbell::links`].
pub type LinkId = u32;

/// The stages of a flow's path, from the flow's own record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Route {
    pub client: u32,
    pub server: u32,
    /// Delay lines for the up and down directions (`NO_LINE` when the flow has no extra delay).
    pub line_up: u32,
    pub line_down: u32,
}

pub const NO_LINE: u32 = u32::MAX;

/// Where a packet goes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hop {
    Link(LinkId),
    Line(u32),
    /// The packet reached the end host of its direction.
    Host,
}

pub struct Dumbbell {
    pub clients: u32,
    pub servers: u32,
    /// `[bottleneck_up, bottleneck_down, client_up.., client_down.., server_up.., server_down..]`
    pub links: Vec<Link>,
    pub lines: Vec<DelayLine>,
}

pub const BOTTLENECK_UP: LinkId = 0;
pub const BOTTLENECK_DOWN: LinkId = 1;
/// The hop at which a packet of either direction enters the bottleneck (for packets injected
/// at the router, e.g. unresponsive sources).
pub const BOTTLENECK_HOP: u8 = 1;

impl Dumbbell {
    /// `links` must follow the layout documented on [`Dumbbell::links`].
    pub fn new(clients: u32, servers: u32, links: Vec<Link>) -> Dumbbell {
        assert_eq!(links.len(), 2 + 2 * clients as usize + 2 * servers as usize);
        Dumbbell { clients, servers, links, lines: Vec::new() }
    }

    pub fn client_up(&self, c: u32) -> LinkId {
        2 + c
    }
    pub fn client_down(&self, c: u32) -> LinkId {
        2 + self.clients + c
    }
    pub fn server_up(&self, s: u32) -> LinkId {
        2 + 2 * self.clients + s
    }
    pub fn server_down(&self, s: u32) -> LinkId {
        2 + 2 * self.clients + self.servers + s
    }

    /// The stage at position `hop` of a packet's path, and the position after it (a route
    /// without a delay line skips that position).
    /// Up: 0 client_up, 1 bottleneck_up, 2 line_up, 3 server_down, 4 host.
    /// Down: 0 server_up, 1 bottleneck_down, 2 line_down, 3 client_down, 4 host.
    #[inline]
    pub fn stage(&self, dir: Direction, hop: u8, r: &Route) -> (Hop, u8) {
        match (dir, hop) {
            (Direction::Up, 0) => (Hop::Link(self.client_up(r.client)), 1),
            (Direction::Up, 1) => (Hop::Link(BOTTLENECK_UP), 2),
            (Direction::Up, 2) if r.line_up != NO_LINE => (Hop::Line(r.line_up), 3),
            (Direction::Up, 2) | (Direction::Up, 3) => (Hop::Link(self.server_down(r.server)), 4),
            (Direction::Down, 0) => (Hop::Link(self.server_up(r.server)), 1),
            (Direction::Down, 1) => (Hop::Link(BOTTLENECK_DOWN), 2),
            (Direction::Down, 2) if r.line_down != NO_LINE => (Hop::Line(r.line_down), 3),
            (Direction::Down, 2) | (Direction::Down, 3) => (Hop::Link(self.client_down(r.client)), 4),
            _ => (Hop::Host, 4),
        }
    }

    /// Packets on links and in delay lines.
    pub fn packets_inside(&self) -> u64 {
        self.links.iter().map(|l| l.packets_inside()).sum::<u64>()
            + self.lines.iter().map(|l| l.len() as u64).sum::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(d: &Dumbbell, dir: Direction, r: &Route) -> Vec<Hop> {
        let mut hops = Vec::new();
        let mut h = 0u8;
        loop {
            let (s, next) = d.stage(dir, h, r);
            hops.push(s);
            if s == Hop::Host {
                return hops;
            }
            h = next;
        }
    }

    #[test]
    fn paths_visit_the_expected_stages() {
        // Link construction is not needed to check the walk: build the index arithmetic only.
        let d = Dumbbell { clients: 2, servers: 3, links: Vec::new(), lines: Vec::new() };
        let r = Route { client: 1, server: 2, line_up: 7, line_down: 8 };
        assert_eq!(
            walk(&d, Direction::Up, &r),
            vec![Hop::Link(3), Hop::Link(BOTTLENECK_UP), Hop::Line(7), Hop::Link(2 + 4 + 3 + 2), Hop::Host]
        );
        assert_eq!(
            walk(&d, Direction::Down, &r),
            vec![Hop::Link(2 + 4 + 2), Hop::Link(BOTTLENECK_DOWN), Hop::Line(8), Hop::Link(5), Hop::Host]
        );
        let direct = Route { line_up: NO_LINE, line_down: NO_LINE, ..r };
        assert_eq!(
            walk(&d, Direction::Up, &direct),
            vec![Hop::Link(3), Hop::Link(BOTTLENECK_UP), Hop::Link(11), Hop::Host]
        );
        assert_eq!(
            walk(&d, Direction::Down, &direct),
            vec![Hop::Link(8), Hop::Link(BOTTLENECK_DOWN), Hop::Link(5), Hop::Host]
        );
    }
}
