//! The packet: what a link carries and a queue discipline inspects.
//!
//! Packets live in a slab ([`PacketPool`]) and are referred to by index, so moving one through
//! queues, links and delay lines never allocates. Only what the models need is kept: TCP
//! sequence numbers count bytes, flags are bits, and the IP ECN field is a two-bit codepoint.

use crate::engine::SimTime;

/// Index of a packet in the [`PacketPool`].
pub type PacketId = u32;

/// The IP ECN field (RFC 3168 section 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Ecn {
    NotEct = 0b00,
    Ect1 = 0b01,
    Ect0 = 0b10,
    Ce = 0b11,
}

impl Ecn {
    pub fn is_ect_or_ce(self) -> bool {
        self != Ecn::NotEct
    }
}

/// TCP header flags used by the model, and bits for the options a segment carries.
pub mod flags {
    pub const SYN: u16 = 1 << 0;
    pub const ACK: u16 = 1 << 1;
    pub const FIN: u16 = 1 << 2;
    pub const ECE: u16 = 1 << 3;
    pub const CWR: u16 = 1 << 4;
    /// SACK-permitted option (RFC 2018), on a SYN or SYN-ACK.
    pub const SACK_PERM: u16 = 1 << 5;
    /// The segment carries SACK blocks, kept beside it in the [`super::PacketPool`].
    pub const SACK: u16 = 1 << 6;
    /// AE, the Accurate ECN flag (RFC 9768 section 3.1.1; the former NS flag of RFC 3540).
    /// With ECE and CWR it forms the 3-bit ACE field once AccECN is negotiated.
    pub const AE: u16 = 1 << 7;
    /// The segment carries an AccECN option (RFC 9768 section 3.2.3), kept beside it in the
    /// [`super::PacketPool`].
    pub const ACCECN_OPT: u16 = 1 << 8;
}

/// What a packet is, for the per-kind statistics every queue keeps (DESIGN, modelling rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PacketKind {
    Syn = 0,
    SynAck = 1,
    /// A segment without payload, SYN or FIN.
    Ack = 2,
    /// New data.
    Data = 3,
    /// Data sent again (after a loss or a timeout).
    Retx = 4,
    Fin = 5,
    /// Not TCP (unresponsive packet sources).
    Other = 6,
}

impl PacketKind {
    pub const COUNT: usize = 7;
    pub const ALL: [PacketKind; 7] = [
        PacketKind::Syn,
        PacketKind::SynAck,
        PacketKind::Ack,
        PacketKind::Data,
        PacketKind::Retx,
        PacketKind::Fin,
        PacketKind::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PacketKind::Syn => "syn",
            PacketKind::SynAck => "synack",
            PacketKind::Ack => "ack",
            PacketKind::Data => "data",
            PacketKind::Retx => "retx",
            PacketKind::Fin => "fin",
            PacketKind::Other => "other",
        }
    }
}

/// Which way a packet crosses the dumbbell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Direction {
    /// Client to server (through the bottleneck's up link).
    Up = 0,
    /// Server to client.
    Down = 1,
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Flow (connection) id, or the source id for [`PacketKind::Other`].
    pub flow: u32,
    /// Generation of the flow slot, so a late packet of a closed connection is recognised.
    pub flow_gen: u32,
    /// First sequence number carried (bytes; SYN and FIN occupy one).
    pub seq: u64,
    /// Cumulative acknowledgment (next byte expected), valid when `ACK` is set.
    pub ack: u64,
    /// Payload bytes.
    pub payload: u32,
    /// Bytes on the wire (payload plus headers).
    pub size: u32,
    /// Advertised receiver window (bytes).
    pub wnd: u32,
    pub flags: u16,
    pub ecn: Ecn,
    pub kind: PacketKind,
    pub dir: Direction,
    /// Position along the path (see `net::dumbbell`).
    pub hop: u8,
    /// When it entered the queue it is in (for sojourn times).
    pub enqueued_at: SimTime,
}

impl Packet {
    pub fn has(&self, flag: u16) -> bool {
        self.flags & flag != 0
    }

    /// For tests: a pure ACK of `ack` from client to server with flags ACK and `f`, 40 bytes,
    /// Not-ECT.
    #[cfg(test)]
    pub fn test_ack(ack: u64, f: u16) -> Packet {
        Packet {
            flow: 0,
            flow_gen: 0,
            seq: 1,
            ack,
            payload: 0,
            size: 40,
            wnd: 64_000,
            flags: flags::ACK | f,
            ecn: Ecn::NotEct,
            kind: PacketKind::Ack,
            dir: Direction::Up,
            hop: 0,
            enqueued_at: 0,
        }
    }
}

/// SACK option blocks (RFC 2018) of a segment: see `tcp::sack`.
/// Most SACK blocks an ACK carries: four fit in the 40 bytes of TCP options when timestamps are
/// off (RFC 2018 section 3), which ecnlab does not model.
pub const MAX_BLOCKS: usize = 4;

/// The SACK blocks of one ACK: [start, end) byte ranges, the first one D-SACK when it reports a
/// duplicate (RFC 2883).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    pub len: u8,
    pub blocks: [(u64, u64); MAX_BLOCKS],
}

impl SackBlocks {
    pub const EMPTY: SackBlocks = SackBlocks { len: 0, blocks: [(0, 0); MAX_BLOCKS] };

    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.len as usize]
    }

    /// Adds a block unless it is there or the option is full.
    pub fn push(&mut self, b: (u64, u64)) {
        if (self.len as usize) < MAX_BLOCKS && !self.as_slice().contains(&b) {
            self.blocks[self.len as usize] = b;
            self.len += 1;
        }
    }

    /// TCP option bytes on the wire: kind and length (2), 8 per block, two NOPs to align.
    pub fn option_bytes(&self) -> u32 {
        if self.len == 0 {
            0
        } else {
            4 + 8 * self.len as u32
        }
    }
}

/// An AccECN option (RFC 9768 section 3.2.3, Figure 4): the 24 low bits of the receiver's byte
/// counters r.e0b, r.ceb and r.e1b, of which the first `fields` in the option's order are
/// present (order 0, kind 172: EE0B, ECEB, EE1B; order 1, kind 174: EE1B, ECEB, EE0B).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccEcnOption {
    /// Order 1 (kind 174) instead of order 0 (kind 172).
    pub order1: bool,
    /// Fields present: 0 to 3 (length 2, 5, 8 or 11 bytes, Table 5).
    pub fields: u8,
    pub ee0b: u32,
    pub eceb: u32,
    pub ee1b: u32,
}

impl AccEcnOption {
    /// The option's length field: kind and length, then 3 bytes per field.
    pub fn length(&self) -> u32 {
        2 + 3 * self.fields as u32
    }

    /// TCP option bytes on the wire: the option padded with NOPs to a multiple of 4 (4, 8, 8,
    /// 12 bytes for 0 to 3 fields; the TCP header counts 32-bit words).
    pub fn option_bytes(&self) -> u32 {
        self.length().div_ceil(4) * 4
    }

    /// The ECEB field, if present.
    pub fn eceb(&self) -> Option<u32> {
        (self.fields >= 2).then_some(self.eceb)
    }

    /// The EE0B field, if present (first in order 0, last in order 1).
    pub fn ee0b(&self) -> Option<u32> {
        (if self.order1 { self.fields >= 3 } else { self.fields >= 1 }).then_some(self.ee0b)
    }

    /// The EE1B field, if present (first in order 1, last in order 0).
    pub fn ee1b(&self) -> Option<u32> {
        (if self.order1 { self.fields >= 1 } else { self.fields >= 3 }).then_some(self.ee1b)
    }
}

/// A slab of packets with a free list: allocation and release are O(1) and reuse memory.
/// SACK blocks and AccECN options, which few packets carry, live in side tables indexed like
/// the slots, so a packet stays small.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
    sack: Vec<SackBlocks>,
    accecn: Vec<AccEcnOption>,
}

impl PacketPool {
    pub fn new() -> Self {
        PacketPool { slots: Vec::with_capacity(4096), free: Vec::with_capacity(4096), sack: Vec::new(), accecn: Vec::new() }
    }

    /// Attaches an AccECN option to an allocated packet (sets [`flags::ACCECN_OPT`]; the
    /// caller has counted its bytes in the packet's size).
    pub fn set_accecn(&mut self, id: PacketId, opt: AccEcnOption) {
        self.slots[id as usize].flags |= flags::ACCECN_OPT;
        if self.accecn.len() <= id as usize {
            self.accecn.resize(id as usize + 1, AccEcnOption::default());
        }
        self.accecn[id as usize] = opt;
    }

    /// The AccECN option of a packet (none unless it has [`flags::ACCECN_OPT`]).
    #[inline]
    pub fn accecn(&self, id: PacketId) -> Option<AccEcnOption> {
        if self.slots[id as usize].has(flags::ACCECN_OPT) {
            Some(self.accecn[id as usize])
        } else {
            None
        }
    }

    /// Allocates a segment that carries SACK blocks (sets [`flags::SACK`]).
    pub fn alloc_with_sack(&mut self, mut p: Packet, blocks: &SackBlocks) -> PacketId {
        p.flags |= flags::SACK;
        let id = self.alloc(p);
        if self.sack.len() <= id as usize {
            self.sack.resize(id as usize + 1, SackBlocks::EMPTY);
        }
        self.sack[id as usize] = *blocks;
        id
    }

    /// The SACK blocks of a packet (none unless it has [`flags::SACK`]).
    #[inline]
    pub fn sack(&self, id: PacketId) -> SackBlocks {
        if self.slots[id as usize].has(flags::SACK) {
            self.sack[id as usize]
        } else {
            SackBlocks::EMPTY
        }
    }

    pub fn alloc(&mut self, p: Packet) -> PacketId {
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            id
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as PacketId
        }
    }

    pub fn free(&mut self, id: PacketId) {
        self.free.push(id);
    }

    #[inline]
    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Packets currently allocated (in queues, on links, in delay lines).
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accecn_options_have_the_lengths_of_table_5_and_ride_beside_their_packet() {
        let opt = |order1, fields| AccEcnOption { order1, fields, ee0b: 1, eceb: 2, ee1b: 3 };
        let sizes: Vec<(u32, u32)> = (0..4).map(|n| (opt(false, n).length(), opt(false, n).option_bytes())).collect();
        assert_eq!(sizes, [(2, 4), (5, 8), (8, 8), (11, 12)]);
        assert_eq!((opt(false, 1).ee0b(), opt(false, 1).ee1b(), opt(false, 1).eceb()), (Some(1), None, None));
        assert_eq!((opt(true, 2).ee0b(), opt(true, 2).ee1b(), opt(true, 2).eceb()), (None, Some(3), Some(2)));
        assert_eq!((opt(true, 3).ee0b(), opt(false, 3).ee1b()), (Some(1), Some(3)));
        let mut pool = PacketPool::new();
        let p = Packet::test_ack(0, 0);
        let a = pool.alloc(p);
        let b = pool.alloc(p);
        pool.set_accecn(b, opt(true, 2));
        assert_eq!((pool.accecn(a), pool.accecn(b)), (None, Some(opt(true, 2))));
        pool.free(b);
        let c = pool.alloc(p);
        assert_eq!((c, pool.accecn(c)), (b, None), "a reused slot carries no stale option");
    }

    #[test]
    fn a_packet_stays_56_bytes() {
        // Queues and links hold packets by index, but the slab's footprint per packet is this.
        assert_eq!(std::mem::size_of::<Packet>(), 56);
    }
}
