//! One TCP segment to bytes on a chosen link.
//!
//! Takes: a [`TcpPacket`] and a [`Link`]. Gives: the frame's bytes, link
//! header + IP + TCP + payload, with valid IP and TCP checksums.

use std::net::{IpAddr, SocketAddr};

use etherparse::{PacketBuilder, PacketBuilderStep, TcpHeader};

use crate::capture::link::{LinkType, ETHERTYPE_IPV4, ETHERTYPE_IPV6};
use crate::capture::TcpFlags;

/// A link encapsulation to write frames with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    /// Ethernet II.
    Ethernet,
    /// Ethernet II with one 802.1Q tag (the VLAN id).
    EthernetVlan(u16),
    /// Ethernet II with an 802.1ad outer and an 802.1Q inner tag (QinQ).
    EthernetQinQ(u16, u16),
    /// Linux cooked capture v1 (LINKTYPE_LINUX_SLL).
    LinuxSll,
    /// Linux cooked capture v2 (LINKTYPE_LINUX_SLL2).
    LinuxSll2,
    /// LINKTYPE_RAW: the IP header first, IPv4 or IPv6.
    Raw,
    /// LINKTYPE_IPV4 (the packets must be IPv4).
    RawIpv4,
    /// LINKTYPE_IPV6 (the packets must be IPv6).
    RawIpv6,
    /// LINKTYPE_NULL with the family in little- or big-endian order, as
    /// written by hosts of either byte order.
    Null {
        /// Write the 4-byte family big-endian.
        big_endian: bool,
    },
    /// LINKTYPE_LOOP (family in network byte order).
    Loop,
}

impl Link {
    /// The LINKTYPE a file of these frames declares.
    pub fn link_type(self) -> LinkType {
        match self {
            Link::Ethernet | Link::EthernetVlan(_) | Link::EthernetQinQ(..) => LinkType::Ethernet,
            Link::LinuxSll => LinkType::LinuxSll,
            Link::LinuxSll2 => LinkType::LinuxSll2,
            Link::Raw => LinkType::Raw,
            Link::RawIpv4 => LinkType::Ipv4,
            Link::RawIpv6 => LinkType::Ipv6,
            Link::Null { .. } => LinkType::Null,
            Link::Loop => LinkType::Loop,
        }
    }
}

/// A TCP segment to write, borrowing its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpPacket<'a> {
    /// Sender.
    pub src: SocketAddr,
    /// Receiver (same IP version as `src`).
    pub dst: SocketAddr,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number (written only with `flags.ack`).
    pub ack: u32,
    /// Flags; PSH is added to every segment with a payload.
    pub flags: TcpFlags,
    /// Payload bytes.
    pub payload: &'a [u8],
}

/// Appends `packet` framed for `link` to `out`.
///
/// # Panics
/// If `src` and `dst` differ in IP version, if the payload does not fit in
/// one IP packet, or if `link` is [`Link::RawIpv4`]/[`Link::RawIpv6`] and the
/// packet is of the other IP version.
pub fn encode_frame(link: Link, packet: &TcpPacket<'_>, out: &mut Vec<u8>) {
    let v6 = packet.src.is_ipv6();
    let ethertype = if v6 { ETHERTYPE_IPV6 } else { ETHERTYPE_IPV4 };
    match link {
        Link::Ethernet => ethernet(out, &[], ethertype),
        Link::EthernetVlan(id) => ethernet(out, &[(0x8100, id)], ethertype),
        Link::EthernetQinQ(outer, inner) => {
            ethernet(out, &[(0x88a8, outer), (0x8100, inner)], ethertype)
        }
        Link::LinuxSll => sll(out, ethertype),
        Link::LinuxSll2 => sll2(out, ethertype),
        Link::Raw => {}
        Link::RawIpv4 => assert!(!v6, "LINKTYPE_IPV4 frames must be IPv4"),
        Link::RawIpv6 => assert!(v6, "LINKTYPE_IPV6 frames must be IPv6"),
        Link::Null { big_endian } => {
            // AF_INET6 is 30 on macOS, one of the values readers must accept.
            let family: u32 = if v6 { 30 } else { 2 };
            let bytes = if big_endian {
                family.to_be_bytes()
            } else {
                family.to_le_bytes()
            };
            out.extend_from_slice(&bytes);
        }
        Link::Loop => out.extend_from_slice(&(if v6 { 24u32 } else { 2 }).to_be_bytes()),
    }
    ip_tcp(packet, out);
}

fn ethernet(out: &mut Vec<u8>, tags: &[(u16, u16)], ethertype: u16) {
    out.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x02]); // destination MAC
    out.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x01]); // source MAC
    for (tpid, id) in tags {
        out.extend_from_slice(&tpid.to_be_bytes());
        out.extend_from_slice(&(id & 0x0fff).to_be_bytes());
    }
    out.extend_from_slice(&ethertype.to_be_bytes());
}

/// SLL v1: packet type (4 = sent by us), ARPHRD_ETHER, address length 6,
/// 8 address bytes, protocol.
fn sll(out: &mut Vec<u8>, ethertype: u16) {
    out.extend_from_slice(&[0, 4, 0, 1, 0, 6]);
    out.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x01, 0, 0]);
    out.extend_from_slice(&ethertype.to_be_bytes());
}

/// SLL v2: protocol, reserved, interface index, ARPHRD_ETHER, packet type,
/// address length 6, 8 address bytes.
fn sll2(out: &mut Vec<u8>, ethertype: u16) {
    out.extend_from_slice(&ethertype.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0, 0, 2, 0, 1, 4, 6]);
    out.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x01, 0, 0]);
}

fn ip_tcp(p: &TcpPacket<'_>, out: &mut Vec<u8>) {
    let (sport, dport) = (p.src.port(), p.dst.port());
    let builder = match (p.src.ip(), p.dst.ip()) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            PacketBuilder::ipv4(s.octets(), d.octets(), 64).tcp(sport, dport, p.seq, 65535)
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            PacketBuilder::ipv6(s.octets(), d.octets(), 64).tcp(sport, dport, p.seq, 65535)
        }
        _ => panic!(
            "synth: {} and {} are of different IP versions",
            p.src, p.dst
        ),
    };
    let builder = with_flags(builder, p);
    if let Err(e) = builder.write(out, p.payload) {
        panic!(
            "synth: cannot build a {}-byte segment: {e}",
            p.payload.len()
        );
    }
}

fn with_flags(
    mut b: PacketBuilderStep<TcpHeader>,
    p: &TcpPacket<'_>,
) -> PacketBuilderStep<TcpHeader> {
    if p.flags.syn {
        b = b.syn();
    }
    if p.flags.ack {
        b = b.ack(p.ack);
    }
    if p.flags.fin {
        b = b.fin();
    }
    if p.flags.rst {
        b = b.rst();
    }
    if !p.payload.is_empty() {
        b = b.psh();
    }
    b
}
