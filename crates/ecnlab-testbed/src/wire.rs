//! Ethernet II and IPv4 headers as the router reads and rewrites them.
//!
//! Only what the queue disciplines see is read: the IPv4 total length (the packet's size, as
//! the simulator counts it: IP header and everything after, no Ethernet framing), the ECN field
//! (RFC 3168 section 5), the addresses (for the per-pair delay) and, for TCP, the ports and
//! flags (for the flow key and the packet kind of the per-kind counters). The one rewrite is
//! ECT to CE, with the header checksum updated incrementally (RFC 1624 equation 3).

use ecnlab::packet::{Ecn, PacketKind};

/// Ethernet II header length (no VLAN tag).
pub const ETH_HLEN: usize = 14;
/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
const PROTO_TCP: u8 = 6;
/// TCP flags: ECN-Echo and Congestion Window Reduced (RFC 3168 section 6.1).
pub const TCP_ECE: u8 = 0x40;
pub const TCP_CWR: u8 = 0x80;
const PROTO_UDP: u8 = 17;

/// What the router reads of an IPv4 packet inside a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Info {
    /// IPv4 total length (bytes): the packet's size for rates, limits and the AQMs.
    pub total_len: u16,
    /// Header length (bytes).
    pub header_len: u8,
    pub ecn: Ecn,
    pub proto: u8,
    pub src: u32,
    pub dst: u32,
    /// TCP/UDP ports (0 for other protocols and for fragments after the first).
    pub src_port: u16,
    pub dst_port: u16,
    /// TCP flags byte (FIN 0x01, SYN 0x02, ACK 0x10), if TCP.
    pub tcp_flags: Option<u8>,
    /// TCP payload bytes, if TCP.
    pub tcp_payload: u32,
}

/// A frame the router cannot treat as IPv4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotIpv4 {
    /// Another EtherType (ARP, IPv6, ...): forwarded as it is, outside the queue.
    OtherEtherType(u16),
    /// Claims IPv4 but its header is cut short or inconsistent: dropped and counted.
    Malformed(&'static str),
}

#[inline]
fn be16(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}

#[inline]
fn be32(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// Reads the IPv4 header of an Ethernet II frame.
pub fn parse(frame: &[u8]) -> Result<Ipv4Info, NotIpv4> {
    if frame.len() < ETH_HLEN {
        return Err(NotIpv4::Malformed("frame shorter than an Ethernet header"));
    }
    let ethertype = be16(frame, 12);
    if ethertype != ETHERTYPE_IPV4 {
        return Err(NotIpv4::OtherEtherType(ethertype));
    }
    let ip = &frame[ETH_HLEN..];
    if ip.len() < 20 {
        return Err(NotIpv4::Malformed("IPv4 header cut short"));
    }
    if ip[0] >> 4 != 4 {
        return Err(NotIpv4::Malformed("IP version is not 4"));
    }
    let header_len = (ip[0] & 0x0f) * 4;
    let total_len = be16(ip, 2);
    if header_len < 20 || (total_len as usize) < header_len as usize || ip.len() < total_len as usize {
        return Err(NotIpv4::Malformed("IPv4 header or total length inconsistent with the frame"));
    }
    let ecn = match ip[1] & 0b11 {
        0b00 => Ecn::NotEct,
        0b01 => Ecn::Ect1,
        0b10 => Ecn::Ect0,
        _ => Ecn::Ce,
    };
    let proto = ip[9];
    let mut info = Ipv4Info {
        total_len,
        header_len,
        ecn,
        proto,
        src: be32(ip, 12),
        dst: be32(ip, 16),
        src_port: 0,
        dst_port: 0,
        tcp_flags: None,
        tcp_payload: 0,
    };
    // Ports only in the first fragment (fragment offset 0).
    let first_fragment = be16(ip, 6) & 0x1fff == 0;
    let l4 = &ip[header_len as usize..total_len as usize];
    if first_fragment && (proto == PROTO_TCP || proto == PROTO_UDP) && l4.len() >= 4 {
        info.src_port = be16(l4, 0);
        info.dst_port = be16(l4, 2);
    }
    if first_fragment && proto == PROTO_TCP && l4.len() >= 20 {
        let data_offset = (l4[12] >> 4) as u32 * 4;
        info.tcp_flags = Some(l4[13]);
        info.tcp_payload = (l4.len() as u32).saturating_sub(data_offset);
    }
    Ok(info)
}

impl Ipv4Info {
    /// The packet's kind for the per-kind counters. A retransmission cannot be told from new
    /// data without per-flow state, so both count as data.
    pub fn kind(&self) -> PacketKind {
        const FIN: u8 = 0x01;
        const SYN: u8 = 0x02;
        const ACK: u8 = 0x10;
        match self.tcp_flags {
            None => PacketKind::Other,
            Some(f) if f & SYN != 0 && f & ACK != 0 => PacketKind::SynAck,
            Some(f) if f & SYN != 0 => PacketKind::Syn,
            Some(f) if f & FIN != 0 => PacketKind::Fin,
            Some(_) if self.tcp_payload > 0 => PacketKind::Data,
            Some(_) => PacketKind::Ack,
        }
    }

    /// A 64-bit key of the 5-tuple (addresses, protocol, ports) for the per-flow AQMs.
    pub fn flow_key(&self) -> u64 {
        let a = ((self.src as u64) << 32) | self.dst as u64;
        let b = ((self.proto as u64) << 32) | ((self.src_port as u64) << 16) | self.dst_port as u64;
        mix64(a ^ mix64(b))
    }
}

/// SplitMix64's finalizer: a cheap, well-spread 64-bit mix.
#[inline]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The Internet checksum (RFC 1071) of an IPv4 header whose checksum field is taken as zero.
pub fn ipv4_header_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for i in (0..header.len()).step_by(2) {
        if i != 10 {
            sum += be16(header, i) as u32;
        }
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Sets the ECN field of the IPv4 packet in `frame` (parsed as `info`) to `ecn`, updating the
/// header checksum incrementally: HC' = ~(~HC + ~m + m') in one's complement arithmetic, with
/// m and m' the old and new 16-bit word holding the field (RFC 1624 equation 3, which, unlike
/// equation 2, never yields a -0 the full computation would not).
pub fn set_ecn(frame: &mut [u8], ecn: Ecn) {
    let ip = &mut frame[ETH_HLEN..];
    let old_word = be16(ip, 0);
    ip[1] = (ip[1] & !0b11) | ecn as u8;
    let new_word = be16(ip, 0);
    let hc = be16(ip, 10);
    let mut sum = (!hc) as u32 + (!old_word) as u32 + new_word as u32;
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use ecnlab::engine::Rng;

    /// An Ethernet frame holding an IPv4/TCP packet of `total_len` bytes (20-byte IP and TCP
    /// headers) from `src` to `dst`, with a valid header checksum.
    pub(crate) fn tcp_frame(src: u32, dst: u32, total_len: u16, ecn: Ecn, flags: u8) -> Vec<u8> {
        let mut f = vec![0u8; ETH_HLEN + total_len as usize];
        f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        f[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let ip = &mut f[ETH_HLEN..];
        ip[0] = 0x45;
        ip[1] = ecn as u8;
        ip[2..4].copy_from_slice(&total_len.to_be_bytes());
        ip[4..6].copy_from_slice(&0x1234u16.to_be_bytes());
        ip[6] = 0x40; // don't fragment
        ip[8] = 64;
        ip[9] = PROTO_TCP;
        ip[12..16].copy_from_slice(&src.to_be_bytes());
        ip[16..20].copy_from_slice(&dst.to_be_bytes());
        ip[20..22].copy_from_slice(&40000u16.to_be_bytes());
        ip[22..24].copy_from_slice(&5001u16.to_be_bytes());
        ip[32] = 5 << 4;
        ip[33] = flags;
        let c = ipv4_header_checksum(&ip[..20]);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        f
    }

    #[test]
    fn parses_a_tcp_segment() {
        let f = tcp_frame(0x0a4d_0101, 0x0a4d_0201, 1500, Ecn::Ect0, 0x10);
        let i = parse(&f).unwrap();
        assert_eq!((i.total_len, i.header_len, i.ecn, i.proto), (1500, 20, Ecn::Ect0, PROTO_TCP));
        assert_eq!((i.src, i.dst, i.src_port, i.dst_port), (0x0a4d_0101, 0x0a4d_0201, 40000, 5001));
        assert_eq!((i.tcp_flags, i.tcp_payload, i.kind()), (Some(0x10), 1460, PacketKind::Data));
        assert_eq!(parse(&tcp_frame(1, 2, 40, Ecn::NotEct, 0x12)).unwrap().kind(), PacketKind::SynAck);
        assert_eq!(parse(&tcp_frame(1, 2, 40, Ecn::NotEct, 0x10)).unwrap().kind(), PacketKind::Ack);
        assert_eq!(parse(&tcp_frame(1, 2, 40, Ecn::NotEct, 0x11)).unwrap().kind(), PacketKind::Fin);
    }

    #[test]
    fn refuses_what_is_not_ipv4() {
        let mut arp = tcp_frame(1, 2, 40, Ecn::NotEct, 0);
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert_eq!(parse(&arp), Err(NotIpv4::OtherEtherType(0x0806)));
        let f = tcp_frame(1, 2, 100, Ecn::NotEct, 0);
        assert!(matches!(parse(&f[..60]), Err(NotIpv4::Malformed(_))), "total length beyond the frame");
        let mut v6 = f.clone();
        v6[ETH_HLEN] = 0x65;
        assert!(matches!(parse(&v6), Err(NotIpv4::Malformed(_))));
        assert!(matches!(parse(&f[..10]), Err(NotIpv4::Malformed(_))));
    }

    #[test]
    fn the_checksum_verifies_and_a_corrupted_header_does_not() {
        let f = tcp_frame(0xc0a8_0001, 0xc0a8_0002, 60, Ecn::NotEct, 0x02);
        let ip = &f[ETH_HLEN..ETH_HLEN + 20];
        assert_eq!(ipv4_header_checksum(ip), be16(ip, 10));
        let mut bad = ip.to_vec();
        bad[8] ^= 1;
        assert_ne!(ipv4_header_checksum(&bad), be16(&bad, 10));
    }

    #[test]
    fn incremental_update_equals_full_recomputation() {
        // Random headers (options included) and every ECN transition: RFC 1624's update must
        // give the very checksum a full computation gives.
        let mut rng = Rng::from_seed(7);
        for _ in 0..20_000 {
            let ihl = 5 + rng.below(11) as usize;
            let total = (ihl * 4 + rng.below(200) as usize) as u16;
            let mut f = vec![0u8; ETH_HLEN + total as usize];
            f[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
            for b in f[ETH_HLEN..ETH_HLEN + ihl * 4].iter_mut() {
                *b = rng.below(256) as u8;
            }
            f[ETH_HLEN] = 0x40 | ihl as u8;
            f[ETH_HLEN + 2..ETH_HLEN + 4].copy_from_slice(&total.to_be_bytes());
            let c = ipv4_header_checksum(&f[ETH_HLEN..ETH_HLEN + ihl * 4]);
            f[ETH_HLEN + 10..ETH_HLEN + 12].copy_from_slice(&c.to_be_bytes());
            let to = [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce][rng.below(4) as usize];
            set_ecn(&mut f, to);
            let hdr = &f[ETH_HLEN..ETH_HLEN + ihl * 4];
            assert_eq!(parse(&f).unwrap().ecn, to);
            assert_eq!(be16(hdr, 10), ipv4_header_checksum(hdr), "header {hdr:02x?}");
        }
    }
}
