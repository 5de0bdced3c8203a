//! Writing captures: the test, benchmark and fixture generator side of
//! [`crate::capture`].
//!
//! Takes: TCP segments described in plain fields ([`TcpPacket`]), or a whole
//! client↔server exchange scripted with [`TcpConversation`]. Gives: frames on
//! any link type kgtrace reads ([`Link`]), written as legacy pcap (either
//! byte order, µs or ns: [`PcapWriter`]) or pcapng (several interfaces, each
//! with its own link type, `if_tsresol` and `if_tsoffset`: [`PcapNgWriter`]),
//! and bulk Kafka-like traffic for throughput runs ([`write_traffic`]).
//!
//! ```
//! use kgtrace::capture::synth::{Link, PcapWriter, PcapOptions, Side, TcpConversation};
//!
//! let mut conv = TcpConversation::new("10.0.0.1:50000", "10.0.0.2:9092");
//! conv.handshake()
//!     .client_sends(b"request bytes")
//!     .server_sends(b"response")
//!     .fin(Side::Client)
//!     .fin(Side::Server);
//! let mut pcap = PcapWriter::new(Vec::new(), Link::Ethernet, PcapOptions::default()).unwrap();
//! conv.write_to(&mut pcap).unwrap();
//! let bytes = pcap.into_inner();
//! assert!(kgtrace::capture::is_capture_magic(&bytes));
//! ```
//!
//! Packets are built with etherparse's `PacketBuilder` (IP + TCP, valid
//! checksums); link headers are written by hand because the builder knows
//! neither SLL2 nor BSD loopback. This module is test tooling: it panics on
//! impossible requests (an IPv4 source with an IPv6 destination, a payload
//! larger than an IP packet), which are programming errors, not input.

mod conversation;
mod frame;
mod traffic;
mod writer;

pub use conversation::{Side, SynthPacket, TcpConversation};
pub use frame::{encode_frame, Link, TcpPacket};
pub use traffic::{kafka_like_exchange, write_traffic, TrafficSpec, TrafficStats};
pub use writer::{InterfaceOptions, PacketSink, PcapNgWriter, PcapOptions, PcapWriter};
