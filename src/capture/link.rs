//! Link-layer types kgtrace reads, and the link headers it strips by hand.
//!
//! Takes: a capture's link type number and a packet's bytes. Gives: a
//! [`LinkType`] (with its libpcap name) and, via [`strip`], where the network
//! layer starts. Ethernet and its VLAN tags are left to etherparse in
//! [`super::packet`]; Linux SLL2 (which etherparse lacks), SLL and BSD
//! loopback are peeled here because each is a fixed-size header with the
//! protocol at a known place. Numbers and layouts follow
//! <https://www.tcpdump.org/linktypes.html>.

/// A link type kgtrace can slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkType {
    /// LINKTYPE_NULL (0): BSD loopback, a 4-byte address family in the
    /// capturing host's byte order.
    Null,
    /// LINKTYPE_ETHERNET (1), with optional 802.1Q / QinQ tags.
    Ethernet,
    /// LINKTYPE_RAW (101): an IPv4 or IPv6 header, told apart by its version.
    Raw,
    /// LINKTYPE_LOOP (108): OpenBSD loopback, family in network byte order
    /// (read in either order here, as Wireshark does).
    Loop,
    /// LINKTYPE_LINUX_SLL (113): Linux "cooked" v1 (`tcpdump -i any`, old).
    LinuxSll,
    /// LINKTYPE_IPV4 (228): raw IPv4.
    Ipv4,
    /// LINKTYPE_IPV6 (229): raw IPv6.
    Ipv6,
    /// LINKTYPE_LINUX_SLL2 (276): Linux "cooked" v2 (`tcpdump -i any`, new).
    LinuxSll2,
}

impl LinkType {
    /// Every supported link type, for tests and help text.
    pub const ALL: [LinkType; 8] = [
        LinkType::Null,
        LinkType::Ethernet,
        LinkType::Raw,
        LinkType::Loop,
        LinkType::LinuxSll,
        LinkType::Ipv4,
        LinkType::Ipv6,
        LinkType::LinuxSll2,
    ];

    /// The link type for a LINKTYPE_ number, if kgtrace reads it.
    pub fn from_number(number: u32) -> Option<LinkType> {
        LinkType::ALL.into_iter().find(|l| l.number() == number)
    }

    /// Its LINKTYPE_ number.
    pub fn number(self) -> u32 {
        match self {
            LinkType::Null => 0,
            LinkType::Ethernet => 1,
            LinkType::Raw => 101,
            LinkType::Loop => 108,
            LinkType::LinuxSll => 113,
            LinkType::Ipv4 => 228,
            LinkType::Ipv6 => 229,
            LinkType::LinuxSll2 => 276,
        }
    }

    /// Its libpcap name without the `LINKTYPE_` prefix.
    pub fn name(self) -> &'static str {
        match self {
            LinkType::Null => "NULL",
            LinkType::Ethernet => "ETHERNET",
            LinkType::Raw => "RAW",
            LinkType::Loop => "LOOP",
            LinkType::LinuxSll => "LINUX_SLL",
            LinkType::Ipv4 => "IPV4",
            LinkType::Ipv6 => "IPV6",
            LinkType::LinuxSll2 => "LINUX_SLL2",
        }
    }
}

/// Names a link type number for an error message: `IEEE802_11_RADIOTAP (127)`,
/// or just the number when it is not a common one.
pub fn describe_link_number(number: u32) -> String {
    if let Some(link) = LinkType::from_number(number) {
        return format!("LINKTYPE_{} ({number})", link.name());
    }
    let name = match number {
        6 => Some("IEEE802_5"),
        9 => Some("PPP"),
        10 => Some("FDDI"),
        50 => Some("PPP_HDLC"),
        105 => Some("IEEE802_11"),
        127 => Some("IEEE802_11_RADIOTAP"),
        147..=162 => Some("USERn"),
        189 => Some("USB_LINUX"),
        220 => Some("USB_LINUX_MMAPPED"),
        239 => Some("NFLOG"),
        249 => Some("USBPCAP"),
        252 => Some("WIRESHARK_UPPER_PDU"),
        253 => Some("NETLINK"),
        _ => None,
    };
    match name {
        Some(name) => format!("LINKTYPE_{name} ({number})"),
        None => format!("{number}"),
    }
}

/// Where the network layer of a packet starts, as the link header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkStart<'a> {
    /// A whole Ethernet II frame (etherparse reads MACs and VLAN tags).
    Ethernet(&'a [u8]),
    /// A payload of the given EtherType (0x0800 IPv4, 0x86DD IPv6, VLAN...).
    EtherType(u16, &'a [u8]),
    /// An IP packet whose version nibble says which IP.
    Ip(&'a [u8]),
    /// Not IP (ARP, netlink, IPX...): counted, not sliced.
    NotIp,
}

/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of IPv6.
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
/// Linux `ARPHRD_NETLINK`: SLL/SLL2 frames that carry netlink, not IP.
const ARPHRD_NETLINK: u16 = 824;

/// Peels the link header of `link` off `frame`; `None` if the frame is too
/// short to hold it.
pub fn strip(link: LinkType, frame: &[u8]) -> Option<NetworkStart<'_>> {
    match link {
        LinkType::Ethernet => Some(NetworkStart::Ethernet(frame)),
        LinkType::Raw => Some(NetworkStart::Ip(frame)),
        LinkType::Ipv4 => Some(NetworkStart::EtherType(ETHERTYPE_IPV4, frame)),
        LinkType::Ipv6 => Some(NetworkStart::EtherType(ETHERTYPE_IPV6, frame)),
        LinkType::Null | LinkType::Loop => strip_loopback(frame),
        LinkType::LinuxSll => strip_sll(frame),
        LinkType::LinuxSll2 => strip_sll2(frame),
    }
}

/// The big-endian 16 bits at `at`, if there.
pub(super) fn be16(bytes: &[u8], at: usize) -> Option<u16> {
    let pair = bytes.get(at..at + 2)?;
    Some(u16::from_be_bytes([pair[0], pair[1]]))
}

/// BSD loopback: a 4-byte address family. AF_INET is 2 everywhere; AF_INET6
/// is 24 (NetBSD/OpenBSD), 28 (FreeBSD), 30 (macOS) or 10 (Linux). The field
/// is in the capturing host's byte order, so both orders are tried.
fn strip_loopback(frame: &[u8]) -> Option<NetworkStart<'_>> {
    let family: [u8; 4] = frame.get(..4)?.try_into().ok()?;
    let rest = &frame[4..];
    let le = u32::from_le_bytes(family);
    let value = if le > 0xFFFF {
        u32::from_be_bytes(family)
    } else {
        le
    };
    Some(match value {
        2 => NetworkStart::EtherType(ETHERTYPE_IPV4, rest),
        10 | 24 | 28 | 30 => NetworkStart::EtherType(ETHERTYPE_IPV6, rest),
        _ => NetworkStart::NotIp,
    })
}

/// Linux SLL v1: 16 bytes; ARPHRD type at 2, protocol (EtherType) at 14.
fn strip_sll(frame: &[u8]) -> Option<NetworkStart<'_>> {
    let arphrd = be16(frame, 2)?;
    let protocol = be16(frame, 14)?;
    if arphrd == ARPHRD_NETLINK {
        return Some(NetworkStart::NotIp);
    }
    Some(NetworkStart::EtherType(protocol, &frame[16..]))
}

/// Linux SLL v2: 20 bytes; protocol (EtherType) at 0, ARPHRD type at 8.
fn strip_sll2(frame: &[u8]) -> Option<NetworkStart<'_>> {
    let protocol = be16(frame, 0)?;
    let arphrd = be16(frame, 8)?;
    let rest = frame.get(20..)?;
    if arphrd == ARPHRD_NETLINK {
        return Some(NetworkStart::NotIp);
    }
    Some(NetworkStart::EtherType(protocol, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_supported_link_type_round_trips_through_its_number() {
        for link in LinkType::ALL {
            assert_eq!(LinkType::from_number(link.number()), Some(link));
        }
        assert_eq!(LinkType::from_number(127), None);
    }

    #[test]
    fn unsupported_link_numbers_are_named_when_common() {
        assert_eq!(
            describe_link_number(127),
            "LINKTYPE_IEEE802_11_RADIOTAP (127)"
        );
        assert_eq!(describe_link_number(4242), "4242");
    }

    #[test]
    fn loopback_family_is_read_in_either_byte_order() {
        let le = [2, 0, 0, 0, 0x45];
        let be = [0, 0, 0, 30, 0x60];
        assert_eq!(
            strip(LinkType::Null, &le),
            Some(NetworkStart::EtherType(ETHERTYPE_IPV4, &[0x45][..]))
        );
        assert_eq!(
            strip(LinkType::Loop, &be),
            Some(NetworkStart::EtherType(ETHERTYPE_IPV6, &[0x60][..]))
        );
        assert_eq!(
            strip(LinkType::Null, &[7, 0, 0, 0]),
            Some(NetworkStart::NotIp)
        );
    }

    #[test]
    fn short_cooked_headers_are_refused_not_indexed() {
        assert_eq!(strip(LinkType::LinuxSll2, &[0x08, 0x00, 0, 0]), None);
        assert_eq!(strip(LinkType::LinuxSll, &[0; 10]), None);
        assert_eq!(strip(LinkType::Null, &[2, 0]), None);
    }
}
