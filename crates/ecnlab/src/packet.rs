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

/// A slab of packets with a free list: allocation and release are O(1) and reuse memory.
/// SACK blocks, which few packets carry, live in a side table indexed like the slots, so a
/// packet stays small.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PacketId>,
    sack: Vec<SackBlocks>,
}

impl PacketPool {
    pub fn new() -> Self {
        PacketPool { slots: Vec::with_capacity(4096), free: Vec::with_capacity(4096), sack: Vec::new() }
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
    fn a_packet_stays_56_bytes() {
        // Queues and links hold packets by index, but the slab's footprint per packet is this.
        assert_eq!(std::mem::size_of::<Packet>(), 56);
    }
}
