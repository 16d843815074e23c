//! A network as data: routers, one-way links between them, hosts each attached to a router by
//! an access link in each direction, and a route (a sequence of router-to-router links) for
//! every pair of routers that flows connect.
//!
//! ```text
//!  client c --access up--> R_a --core links of the route--> R_b --access down--> server s
//!  client c <--access down-- R_a <--core links of the route-- R_b <--access up-- server s
//! ```
//!
//! Each flow may have an extra delay (its propagation RTT minus its path's), split into an up
//! and a down delay line, each right after the first core link of its direction (right after
//! the access link when the route has no core link). A line is fed by one link only, in
//! order, so a packet can enter it as soon as it leaves that link's queue (its exit time is
//! known then), which saves an event per packet. A packet's `hop` counts the stages of its
//! path it has passed.

use std::collections::VecDeque;

use super::link::{DelayLine, Link};
use crate::packet::Direction;

/// Index of a link in [`Network::links`].
pub type LinkId = u32;

/// No delay line on a flow's path.
pub const NO_LINE: u32 = u32::MAX;

/// Where a packet goes next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hop {
    Link(LinkId),
    Line(u32),
    /// The packet reached the end host of its direction.
    Host,
}

/// The routes between routers: `links[start..start + len]` for each stored route.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathRef {
    pub start: u32,
    pub len: u32,
}

/// One direction of a flow's path: the source's access link, the core links, the
/// destination's access link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Leg {
    pub first: LinkId,
    pub core: PathRef,
    pub last: LinkId,
}

/// The path of one flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Route {
    /// Client and server host (indices over all client hosts and all server hosts).
    pub client: u32,
    pub server: u32,
    /// Delay lines for the up and down directions ([`NO_LINE`] when the flow has no extra delay).
    pub line_up: u32,
    pub line_down: u32,
    /// Client to server, and back.
    pub up: Leg,
    pub down: Leg,
}

/// A one-way router-to-router link as the graph sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    pub from: u32,
    pub to: u32,
    /// Propagation delay (ns), for path RTTs.
    pub delay_ns: u64,
}

/// The shape of a network: routers, core links and where hosts attach. Links are numbered
/// as in `edges`; routes are found by hop count (fewest links; ties to the lower link index
/// at each step, so the choice is deterministic) unless given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Graph {
    pub routers: u32,
    pub edges: Vec<Edge>,
    /// Given routes, (from router, to router, links), used instead of the shortest path.
    pub given: Vec<(u32, u32, Vec<LinkId>)>,
}

impl Graph {
    /// The links from router `a` to router `b`: a given route, else a shortest one; `None` if
    /// `b` cannot be reached.
    pub fn route(&self, a: u32, b: u32) -> Option<Vec<LinkId>> {
        if let Some((_, _, links)) = self.given.iter().find(|(f, t, _)| *f == a && *t == b) {
            return Some(links.clone());
        }
        // Breadth-first search; `via[r]` is the link that first reached router r.
        let mut via: Vec<Option<LinkId>> = vec![None; self.routers as usize];
        let mut seen = vec![false; self.routers as usize];
        seen[a as usize] = true;
        let mut frontier = VecDeque::from([a]);
        while let Some(r) = frontier.pop_front() {
            if r == b {
                break;
            }
            for (i, e) in self.edges.iter().enumerate().filter(|(_, e)| e.from == r) {
                if !seen[e.to as usize] {
                    seen[e.to as usize] = true;
                    via[e.to as usize] = Some(i as LinkId);
                    frontier.push_back(e.to);
                }
            }
        }
        if !seen[b as usize] {
            return None;
        }
        let mut links = Vec::new();
        let mut r = b;
        while r != a {
            let l = via[r as usize].expect("reached routers have a link");
            links.push(l);
            r = self.edges[l as usize].from;
        }
        links.reverse();
        Some(links)
    }

    /// Whether `links` lead from router `a` to router `b` one after the other (for given routes).
    pub fn connects(&self, a: u32, b: u32, links: &[LinkId]) -> bool {
        let mut at = a;
        for &l in links {
            match self.edges.get(l as usize) {
                Some(e) if e.from == at => at = e.to,
                _ => return false,
            }
        }
        at == b
    }

    /// Propagation delay of a sequence of links (ns).
    pub fn delay_ns(&self, links: &[LinkId]) -> u64 {
        links.iter().map(|&l| self.edges[l as usize].delay_ns).sum()
    }
}

/// Access links of a host: up (host to router) and down (router to host), and its router.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attachment {
    pub router: u32,
    pub up: LinkId,
    pub down: LinkId,
}

/// The network of a run: every link (core links first, in the order of the graph's edges,
/// then the hosts' access links), the delay lines, and the routes flows use.
pub struct Network {
    pub graph: Graph,
    pub links: Vec<Link>,
    pub link_names: Vec<String>,
    pub lines: Vec<DelayLine>,
    pub clients: Vec<Attachment>,
    pub servers: Vec<Attachment>,
    /// The core links of every stored route, back to back (see [`PathRef`]).
    path_links: Vec<LinkId>,
    /// Stored routes by (from router, to router), found when a flow first needs them.
    path_of: Vec<Option<PathRef>>,
    /// Whether a delay line follows the link (its packets may enter the line at dequeue).
    pub feeds_line: Vec<bool>,
}

impl Network {
    /// `links` and `link_names` hold the core links (one per graph edge, same order), then
    /// the access links that `clients` and `servers` name.
    pub fn new(graph: Graph, links: Vec<Link>, link_names: Vec<String>, clients: Vec<Attachment>, servers: Vec<Attachment>) -> Network {
        assert_eq!(links.len(), link_names.len());
        assert!(graph.edges.len() <= links.len());
        let (n, pairs) = (links.len(), (graph.routers * graph.routers) as usize);
        Network { graph, links, link_names, lines: Vec::new(), clients, servers, path_links: Vec::new(), path_of: vec![None; pairs], feeds_line: vec![false; n] }
    }

    /// The stored route from router `a` to router `b` (found and stored on first use).
    fn path(&mut self, a: u32, b: u32) -> Option<PathRef> {
        let k = (a * self.graph.routers + b) as usize;
        if self.path_of[k].is_none() {
            let links = self.graph.route(a, b)?;
            let p = PathRef { start: self.path_links.len() as u32, len: links.len() as u32 };
            self.path_links.extend(links);
            self.path_of[k] = Some(p);
        }
        self.path_of[k]
    }

    /// The route between client host `client` and server host `server`, without delay
    /// lines; `None` if a router of theirs cannot reach the other's.
    pub fn route(&mut self, client: u32, server: u32) -> Option<Route> {
        let (c, s) = (self.clients[client as usize], self.servers[server as usize]);
        let (up, down) = (self.path(c.router, s.router)?, self.path(s.router, c.router)?);
        Some(Route {
            client,
            server,
            line_up: NO_LINE,
            line_down: NO_LINE,
            up: Leg { first: c.up, core: up, last: s.down },
            down: Leg { first: s.up, core: down, last: c.down },
        })
    }

    /// The propagation RTT of a route without its delay lines (ns): every link's delay, both
    /// ways.
    pub fn path_delay_ns(&self, r: &Route) -> u64 {
        let leg = |g: &Leg| {
            let core = &self.path_links[g.core.start as usize..(g.core.start + g.core.len) as usize];
            core.iter().chain([&g.first, &g.last]).map(|&l| self.links[l as usize].delay_ns).sum::<u64>()
        };
        leg(&r.up) + leg(&r.down)
    }

    /// The link after which a flow's delay line sits in direction `dir`.
    pub fn line_after(&self, dir: Direction, r: &Route) -> LinkId {
        let leg = match dir {
            Direction::Up => &r.up,
            Direction::Down => &r.down,
        };
        if leg.core.len == 0 {
            leg.first
        } else {
            self.path_links[leg.core.start as usize]
        }
    }

    /// The stage at position `hop` of a packet's path, and the position after it (a route
    /// without a delay line skips that position). The path is the source's access link, the
    /// core links, then the destination's access link; the line sits after the first core
    /// link (after the access link if there is none). For a route of one core link:
    /// 0 access up, 1 core, 2 line, 3 access down, 4 host.
    #[inline]
    pub fn stage(&self, dir: Direction, hop: u8, r: &Route) -> (Hop, u8) {
        let (leg, line) = match dir {
            Direction::Up => (&r.up, r.line_up),
            Direction::Down => (&r.down, r.line_down),
        };
        // Links L_0 (first), L_1..L_n (core), L_{n+1} (last); the line after L_j.
        let n = leg.core.len as u8;
        let j = n.min(1);
        if hop <= j {
            let l = if hop == 0 { leg.first } else { self.path_links[leg.core.start as usize] };
            return (Hop::Link(l), hop + 1);
        }
        if hop == j + 1 && line != NO_LINE {
            return (Hop::Line(line), hop + 1);
        }
        // Position p >= j + 1 (past the line) holds L_{p-1}.
        let i = hop.max(j + 2) - 1;
        if i <= n {
            (Hop::Link(self.path_links[(leg.core.start + i as u32 - 1) as usize]), i + 2)
        } else if i == n + 1 {
            (Hop::Link(leg.last), i + 2)
        } else {
            (Hop::Host, hop)
        }
    }

    /// Packets on links and in delay lines.
    pub fn packets_inside(&self) -> u64 {
        self.links.iter().map(|l| l.packets_inside()).sum::<u64>() + self.lines.iter().map(|l| l.len() as u64).sum::<u64>()
    }

    /// The link named `name`.
    pub fn link_id(&self, name: &str) -> Option<LinkId> {
        self.link_names.iter().position(|n| n == name).map(|i| i as LinkId)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::{AqmConfig, Queue};
    use crate::engine::Rng;

    fn link() -> Link {
        Link::new(1_000_000, 0, Queue::build(&AqmConfig::default(), (Some(10), None), 1_000_000, Rng::from_seed(0)), 0.0, Rng::from_seed(0))
    }

    /// A chain of `k` routers with a link each way between neighbours (2i up, 2i+1 down), one
    /// client at router 0 and one at router 1, one server at the last router and one at router 1.
    fn chain(k: u32) -> Network {
        let mut edges = Vec::new();
        for i in 0..k - 1 {
            edges.push(Edge { from: i, to: i + 1, delay_ns: 1 });
            edges.push(Edge { from: i + 1, to: i, delay_ns: 1 });
        }
        let core = edges.len() as u32;
        let graph = Graph { routers: k, edges, given: Vec::new() };
        let n = core as usize + 8;
        let names = (0..n).map(|i| format!("l{i}")).collect();
        let at = |router, i: u32| Attachment { router, up: core + 2 * i, down: core + 2 * i + 1 };
        Network::new(graph, (0..n).map(|_| link()).collect(), names, vec![at(0, 0), at(1, 1)], vec![at(k - 1, 2), at(1, 3)])
    }

    fn walk(net: &Network, dir: Direction, r: &Route) -> Vec<Hop> {
        let mut hops = Vec::new();
        let mut h = 0u8;
        loop {
            let (s, next) = net.stage(dir, h, r);
            hops.push(s);
            if s == Hop::Host {
                return hops;
            }
            assert!(next > h, "the walk must advance");
            h = next;
        }
    }

    fn route(net: &mut Network, client: u32, server: u32, lines: (u32, u32)) -> Route {
        Route { line_up: lines.0, line_down: lines.1, ..net.route(client, server).unwrap() }
    }

    #[test]
    fn a_one_link_route_walks_as_the_dumbbell_did() {
        let mut net = chain(2);
        let r = route(&mut net, 0, 0, (7, 8));
        // Core: 0 up, 1 down; access: client 0 (2, 3), server 0 (6, 7).
        assert_eq!(walk(&net, Direction::Up, &r), vec![Hop::Link(2), Hop::Link(0), Hop::Line(7), Hop::Link(7), Hop::Host]);
        assert_eq!(walk(&net, Direction::Down, &r), vec![Hop::Link(6), Hop::Link(1), Hop::Line(8), Hop::Link(3), Hop::Host]);
        let direct = Route { line_up: NO_LINE, line_down: NO_LINE, ..r };
        assert_eq!(walk(&net, Direction::Up, &direct), vec![Hop::Link(2), Hop::Link(0), Hop::Link(7), Hop::Host]);
        // The positions are those of the dumbbell's fixed walk (packets injected at 1 enter the core).
        assert_eq!(net.stage(Direction::Up, 1, &r), (Hop::Link(0), 2));
        assert_eq!(net.stage(Direction::Up, 3, &r), (Hop::Link(7), 4));
        assert_eq!(net.line_after(Direction::Down, &r), 1);
    }

    #[test]
    fn a_route_through_three_links_visits_each_in_order() {
        let mut net = chain(4);
        let r = route(&mut net, 0, 0, (5, NO_LINE));
        assert_eq!(
            walk(&net, Direction::Up, &r),
            vec![Hop::Link(6), Hop::Link(0), Hop::Line(5), Hop::Link(2), Hop::Link(4), Hop::Link(6 + 2 * 2 + 1), Hop::Host]
        );
        assert_eq!(walk(&net, Direction::Down, &r), vec![Hop::Link(6 + 4), Hop::Link(5), Hop::Link(3), Hop::Link(1), Hop::Link(7), Hop::Host]);
    }

    #[test]
    fn hosts_on_one_router_meet_there_and_the_line_follows_the_access_link() {
        let mut net = chain(3);
        let r = route(&mut net, 1, 1, (4, NO_LINE));
        assert_eq!(r.up.core.len, 0);
        assert_eq!(net.line_after(Direction::Up, &r), net.clients[1].up);
        assert_eq!(walk(&net, Direction::Up, &r), vec![Hop::Link(net.clients[1].up), Hop::Line(4), Hop::Link(net.servers[1].down), Hop::Host]);
    }

    #[test]
    fn shortest_routes_are_found_and_given_ones_win() {
        // A triangle 0-1-2 with a direct link 0->2 and a detour 0->1->2; router 3 unconnected.
        let e = |from, to| Edge { from, to, delay_ns: 10 };
        let mut g = Graph { routers: 4, edges: vec![e(0, 1), e(1, 2), e(0, 2), e(2, 0)], given: Vec::new() };
        assert_eq!(g.route(0, 2), Some(vec![2]));
        assert_eq!(g.route(2, 1), Some(vec![3, 0]));
        assert_eq!(g.route(1, 0), Some(vec![1, 3]));
        assert_eq!(g.route(0, 0), Some(vec![]));
        assert_eq!(g.route(0, 3), None);
        assert!(g.connects(0, 2, &[0, 1]) && !g.connects(0, 2, &[1, 0]));
        g.given.push((0, 2, vec![0, 1]));
        assert_eq!(g.route(0, 2), Some(vec![0, 1]));
        assert_eq!(g.delay_ns(&[0, 1]), 20);
    }
}
