//! Capture files in, TCP segments out.
//!
//! Takes: the bytes of a legacy pcap or a pcapng file from any [`Read`]
//! (a file, or stdin for `tcpdump -w - | kgtrace ...`: nothing here seeks).
//! Gives: one [`Segment`] per TCP packet, borrowed from the read buffer and
//! handed to a callback, plus a [`CaptureSummary`]. Anomalies (truncated
//! file, malformed or non-TCP packets) are [`Diagnostics`]; only an input
//! that cannot be read at all is an [`Error`].
//!
//! The work is split by layer, as pcap-analyzer splits it:
//! [`pcap`](self::pcap) walks the file's records (pcap-parser only there),
//! [`link`] strips link-layer headers etherparse does not know (SLL2, BSD
//! loopback), [`packet`] slices IP and TCP (etherparse only there), and
//! [`synth`] writes captures for tests and benchmarks.

use std::io::Read;
use std::net::SocketAddr;

use crate::diagnostic::Diagnostics;
use crate::error::Result;
use crate::time::Timestamp;

mod format;
pub mod link;
pub mod packet;
mod pcap;
pub mod synth;

pub use link::LinkType;

/// The TCP flags the reassembler needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TcpFlags {
    /// Synchronize: opens a direction; the segment's sequence number is the ISN.
    pub syn: bool,
    /// The acknowledgment number is valid.
    pub ack: bool,
    /// Finish: the sender has no more data.
    pub fin: bool,
    /// Reset: the connection is aborted.
    pub rst: bool,
}

/// One TCP packet, as captured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment<'a> {
    /// 1-based number of the packet in the file, counted as Wireshark does
    /// (every packet record, TCP or not).
    pub frame: u64,
    /// When it was captured (UTC).
    pub ts: Timestamp,
    /// Sender.
    pub src: SocketAddr,
    /// Receiver.
    pub dst: SocketAddr,
    /// Sequence number as on the wire.
    pub seq: u32,
    /// Acknowledgment number as on the wire (meaningful only with `flags.ack`).
    pub ack: u32,
    /// SYN, ACK, FIN, RST.
    pub flags: TcpFlags,
    /// TCP payload, trimmed to the IP total length (no Ethernet padding or
    /// FCS); shorter than sent when the capture's snaplen cut the packet.
    pub payload: &'a [u8],
    /// Payload bytes that were sent (the IP length says so) but cut off by
    /// the capture's snaplen: a hole of known length right after `payload`.
    /// 0 when the whole payload was captured or the length is unknown.
    pub missing: u32,
}

/// What a capture held, for the run summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CaptureSummary {
    /// Packet records read (TCP or not).
    pub frames: u64,
    /// Captured bytes of those records.
    pub bytes: u64,
    /// Records that were TCP segments and were handed on.
    pub tcp_segments: u64,
    /// Time of the first record.
    pub first_ts: Option<Timestamp>,
    /// Time of the last record.
    pub last_ts: Option<Timestamp>,
    /// Link types seen, libpcap names (`ETHERNET`, `LINUX_SLL2`...), in order.
    pub link_types: Vec<String>,
    /// TCP packets whose payload the capture's snap length cut short.
    pub cut_packets: u64,
    /// The snap length those packets show: the largest captured length of
    /// a cut packet (`None` when none was cut).
    pub snap_len: Option<u32>,
}

/// True if `first_bytes` start like a legacy pcap (either byte order, µs or
/// ns, or the old "modified" format) or a pcapng Section Header Block.
pub fn is_capture_magic(first_bytes: &[u8]) -> bool {
    format::is_capture_magic(first_bytes)
}

/// Reads a whole capture, calling `on_segment` for every TCP packet in file
/// order. `source` names the input in diagnostics and errors (`-` for stdin).
///
/// Errors only when the input cannot be read at all: not a capture
/// ([`crate::Error::UnknownInput`]), corrupt before the first packet
/// ([`crate::Error::CorruptCapture`]), a link type kgtrace cannot slice
/// ([`crate::Error::UnsupportedLinkType`]) or an I/O error. A file that ends
/// mid-record keeps every packet before it and adds a
/// [`crate::DiagnosticKind::TruncatedCapture`] with the byte offset.
pub fn read_capture<R: Read>(
    reader: R,
    source: &str,
    diags: &mut Diagnostics,
    on_segment: impl FnMut(Segment<'_>),
) -> Result<CaptureSummary> {
    pcap::read(reader, source, diags, on_segment)
}
