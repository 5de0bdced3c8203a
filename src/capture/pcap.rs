//! Walking the records of a pcap or pcapng file, streaming.
//!
//! Takes: any [`Read`] (stdin included: nothing here seeks). Gives: each
//! packet record's bytes, time, frame number and link type to
//! [`super::packet::slice`], and TCP segments to the caller's callback.
//! pcap-parser is confined to this module. Its streaming readers keep one
//! circular buffer: `next` parses a block in place (zero-copy), `consume`
//! releases it, `Incomplete` asks for a `refill`, `BufferTooSmall` for a
//! bigger buffer (grown here up to [`MAX_BUFFER`], so a corrupt length cannot
//! make us allocate without bound). Blocks are released without moving the
//! bytes after them (`consume_noshift`): only a `refill` moves the unread
//! tail (at most one partial record) to the front, then reads a whole
//! buffer's worth at once, straight from the file when the caller's
//! `BufReader` is smaller than that (it then passes large reads through
//! instead of copying them).

use std::io::{self, Cursor, Read};
use std::path::PathBuf;

use pcap_parser::pcapng::{Block, OptionCode, PcapNGOption};
use pcap_parser::traits::{PcapNGPacketBlock, PcapReaderIterator};
use pcap_parser::{LegacyPcapReader, PcapBlockOwned, PcapError, PcapNGReader};

use super::format::{
    hex, is_legacy, is_pcapng, ng_timestamp, note, read_prefix, units_per_sec, Interface, Recorder,
    MAX_BUFFER,
};
use super::link::{describe_link_number, LinkType};
use super::packet::{self, Sliced};
use super::{CaptureSummary, Segment};
use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::error::{Error, Result};
use crate::time::Timestamp;

/// Starting size of the read buffer: large enough that refills are rare
/// (one a MiB) and that each refill asks for more than the input's 64 KiB
/// `BufReader` holds, so the bytes are read straight into this buffer, not
/// copied through it. It was 4 MiB, over a 1 MiB `BufReader`: 4.2 MB of
/// the dense capture's peak heap (heaptrack), and no faster.
const INITIAL_BUFFER: usize = 1 << 20;
pub(super) fn read<R: Read>(
    reader: R,
    source: &str,
    diags: &mut Diagnostics,
    on_segment: impl FnMut(Segment<'_>),
) -> Result<CaptureSummary> {
    let path = PathBuf::from(source);
    let mut input = Recorder {
        inner: reader,
        error: None,
    };
    let prefix = read_prefix(&mut input).map_err(|e| Error::Read {
        path: path.clone(),
        source: e,
    })?;
    let capacity = INITIAL_BUFFER.max(prefix.len());
    let first = prefix
        .get(..8.min(prefix.len()))
        .unwrap_or_default()
        .to_vec();
    let ng = is_pcapng(&prefix);
    if !ng && !is_legacy(&prefix) {
        return Err(Error::UnknownInput {
            path,
            magic: hex(&first),
        });
    }
    let chained = Cursor::new(prefix).chain(&mut input);
    let mut walk = Walk::new(source, diags, on_segment);
    let outcome = if ng {
        PcapNGReader::new(capacity, chained)
            .map_err(|e| header_error(&path, &e))
            .and_then(|r| walk.run(r, capacity))
    } else {
        LegacyPcapReader::new(capacity, chained)
            .map_err(|e| header_error(&path, &e))
            .and_then(|r| walk.run(r, capacity))
    };
    let summary = walk.summary;
    match outcome {
        Err(Error::Read { path, .. }) => {
            let source = input
                .error
                .take()
                .unwrap_or_else(|| io::Error::other("read failed"));
            Err(Error::Read { path, source })
        }
        Err(e) => Err(e),
        Ok(()) => Ok(summary),
    }
}

fn header_error(path: &std::path::Path, e: &PcapError<&[u8]>) -> Error {
    let detail = match e {
        PcapError::Incomplete(_) | PcapError::Eof | PcapError::UnexpectedEof => {
            "the file ends inside its header".to_string()
        }
        other => format!("unreadable file header ({})", short_error(other)),
    };
    Error::CorruptCapture {
        path: path.to_path_buf(),
        offset: 0,
        detail,
    }
}

/// pcap-parser's errors without the bytes they may quote.
fn short_error(e: &PcapError<&[u8]>) -> String {
    match e {
        PcapError::NomError(_, kind) | PcapError::OwnedNomError(_, kind) => format!("{kind:?}"),
        other => format!("{other}"),
    }
}

/// The state of one pass over a file.
struct Walk<'s, F> {
    source: &'s str,
    path: PathBuf,
    diags: &'s mut Diagnostics,
    on_segment: F,
    summary: CaptureSummary,
    interfaces: Vec<Interface>,
    legacy: Option<(LinkType, bool)>,
    /// Byte order of the legacy header or the current pcapng section.
    big_endian: bool,
}

/// What to do after an error from `next`.
enum Step {
    Again,
    Stop,
}

impl<'s, F: FnMut(Segment<'_>)> Walk<'s, F> {
    fn new(source: &'s str, diags: &'s mut Diagnostics, on_segment: F) -> Self {
        Walk {
            source,
            path: PathBuf::from(source),
            diags,
            on_segment,
            summary: CaptureSummary::default(),
            interfaces: Vec::new(),
            legacy: None,
            big_endian: false,
        }
    }

    fn run(&mut self, mut reader: impl PcapReaderIterator, mut capacity: usize) -> Result<()> {
        loop {
            let offset = reader.consumed() as u64;
            let step = match reader.next() {
                Ok((len, block)) => {
                    self.block(block, offset)?;
                    // Not `consume`: past half the buffer it moves every
                    // unread byte to the front, block after block.
                    reader.consume_noshift(len);
                    Step::Again
                }
                Err(PcapError::Eof) => Step::Stop,
                Err(PcapError::Incomplete(_)) => {
                    let before = reader.data().len();
                    reader.refill().map_err(|_| self.read_error())?;
                    if reader.data().len() == before && !reader.reader_exhausted() {
                        self.grow(&mut reader, &mut capacity, offset)?
                    } else {
                        Step::Again
                    }
                }
                Err(PcapError::BufferTooSmall) => self.grow(&mut reader, &mut capacity, offset)?,
                Err(PcapError::UnexpectedEof) => {
                    self.truncated(offset, "the file ends in the middle of a record");
                    Step::Stop
                }
                Err(PcapError::ReadError) => return Err(self.read_error()),
                Err(e) => {
                    let detail = format!("corrupt record ({})", short_error(&e));
                    self.corrupt(offset, detail)?
                }
            };
            if let Step::Stop = step {
                return Ok(());
            }
        }
    }

    fn read_error(&self) -> Error {
        let source = io::Error::other("read failed");
        Error::Read {
            path: self.path.clone(),
            source,
        }
    }

    /// The length the record at the front of `data` claims: legacy records
    /// have a 16-byte header then `caplen` (at 8); pcapng blocks carry their
    /// total length at 4.
    fn claimed_len(&self, data: &[u8]) -> Option<usize> {
        let at = if self.legacy.is_some() { 8 } else { 4 };
        let field: [u8; 4] = data.get(at..at + 4)?.try_into().ok()?;
        let n = if self.big_endian {
            u32::from_be_bytes(field)
        } else {
            u32::from_le_bytes(field)
        } as usize;
        Some(if self.legacy.is_some() {
            n.saturating_add(16)
        } else {
            n
        })
    }

    fn grow(
        &mut self,
        reader: &mut impl PcapReaderIterator,
        capacity: &mut usize,
        offset: u64,
    ) -> Result<Step> {
        let claimed = self.claimed_len(reader.data()).unwrap_or(*capacity * 2);
        if *capacity >= MAX_BUFFER || claimed > MAX_BUFFER {
            let detail = format!(
                "a record claims {claimed} bytes, more than the {} MiB limit",
                MAX_BUFFER >> 20
            );
            return self.corrupt(offset, detail);
        }
        *capacity = (*capacity * 2)
            .max(claimed.next_power_of_two())
            .min(MAX_BUFFER);
        reader.grow(*capacity);
        reader.refill().map_err(|_| self.read_error())?;
        Ok(Step::Again)
    }

    /// Corruption before the first packet is fatal (the file is not what it
    /// claims); after it, everything before is kept and reported.
    fn corrupt(&mut self, offset: u64, detail: String) -> Result<Step> {
        if self.summary.frames == 0 {
            return Err(Error::CorruptCapture {
                path: self.path.clone(),
                offset,
                detail,
            });
        }
        self.truncated(offset, &detail);
        Ok(Step::Stop)
    }

    fn truncated(&mut self, offset: u64, why: &str) {
        let frames = self.summary.frames;
        let detail = format!("{why}; kept the {frames} packets before it, the rest is unreadable");
        self.diags.add(
            DiagnosticKind::TruncatedCapture,
            self.source,
            format!("offset {offset}"),
            detail,
        );
    }

    fn block(&mut self, block: PcapBlockOwned<'_>, offset: u64) -> Result<()> {
        match block {
            PcapBlockOwned::LegacyHeader(h) => {
                let number = h.network.0 as u32;
                let link = self.supported(number)?;
                self.legacy = Some((link, h.is_nanosecond_precision()));
                self.big_endian = h.is_bigendian();
                self.note_link(link);
            }
            PcapBlockOwned::Legacy(b) => {
                let Some((link, nanos)) = self.legacy else {
                    return Ok(());
                };
                let frac = if nanos {
                    b.ts_usec
                } else {
                    b.ts_usec.saturating_mul(1000)
                };
                let ts = Timestamp::from_secs_nanos(i64::from(b.ts_sec), frac);
                self.packet(link, ts, b.data);
            }
            PcapBlockOwned::NG(block) => self.ng_block(block, offset)?,
        }
        Ok(())
    }

    fn ng_block(&mut self, block: Block<'_>, offset: u64) -> Result<()> {
        match block {
            Block::SectionHeader(shb) => {
                self.big_endian = shb.big_endian();
                self.interfaces.clear();
            }
            Block::InterfaceDescription(idb) => {
                let units = units_per_sec(idb.if_tsresol);
                if units.is_none() {
                    let detail = format!(
                        "invalid if_tsresol {:#04x}; read as microseconds",
                        idb.if_tsresol
                    );
                    self.diags.add(
                        DiagnosticKind::MalformedPacket,
                        self.source,
                        format!("offset {offset}"),
                        detail,
                    );
                }
                self.interfaces.push(Interface {
                    link: idb.linktype.0 as u32,
                    units_per_sec: units.unwrap_or(1_000_000),
                    offset_secs: ts_offset(&idb.options, self.big_endian),
                });
            }
            Block::EnhancedPacket(epb) => {
                let ts_units = (u64::from(epb.ts_high) << 32) | u64::from(epb.ts_low);
                self.ng_packet(epb.if_id, Some(ts_units), epb.packet_data(), offset)?;
            }
            Block::SimplePacket(spb) => self.ng_packet(0, None, spb.packet_data(), offset)?,
            _ => {}
        }
        Ok(())
    }

    fn ng_packet(
        &mut self,
        if_id: u32,
        ts_units: Option<u64>,
        data: &[u8],
        offset: u64,
    ) -> Result<()> {
        let Some(iface) = self.interfaces.get(if_id as usize).copied() else {
            let detail = format!("packet on interface {if_id}, which the file never described");
            self.summary.frames += 1;
            let at = format!("frame {} (offset {offset})", self.summary.frames);
            self.diags
                .add(DiagnosticKind::MalformedPacket, self.source, at, detail);
            return Ok(());
        };
        // An interface kgtrace cannot slice (USB, Bluetooth beside the
        // Ethernet one) is skipped packet by packet; the others are read.
        let Some(link) = LinkType::from_number(iface.link) else {
            self.summary.frames += 1;
            let detail = format!(
                "packet on interface {if_id} of unsupported link type {}: skipped",
                describe_link_number(iface.link)
            );
            let frame = self.summary.frames;
            note(
                self.diags,
                DiagnosticKind::NonTcpPacket,
                self.source,
                frame,
                &detail,
            );
            return Ok(());
        };
        self.note_link(link);
        // A Simple Packet Block has no time; it is taken as the last one seen.
        let ts = match ts_units {
            Some(units) => ng_timestamp(units, iface),
            None => self.summary.last_ts.unwrap_or_default(),
        };
        self.packet(link, ts, data);
        Ok(())
    }

    fn supported(&self, number: u32) -> Result<LinkType> {
        LinkType::from_number(number).ok_or_else(|| Error::UnsupportedLinkType {
            path: self.path.clone(),
            linktype: describe_link_number(number),
        })
    }

    fn note_link(&mut self, link: LinkType) {
        if !self.summary.link_types.iter().any(|l| l == link.name()) {
            self.summary.link_types.push(link.name().to_string());
        }
    }

    fn packet(&mut self, link: LinkType, ts: Timestamp, data: &[u8]) {
        let ts = self.monotonic(ts);
        let s = &mut self.summary;
        s.frames += 1;
        s.bytes += data.len() as u64;
        s.first_ts.get_or_insert(ts);
        s.last_ts = Some(ts);
        let frame = s.frames;
        match packet::slice(link, frame, ts, data) {
            Sliced::Tcp { segment, cut } => {
                // Not an anomaly of the packet: the stream keeps its
                // sequence space (see `Segment::missing`); counted for one
                // note per input.
                if cut {
                    let s = &mut self.summary;
                    s.cut_packets += 1;
                    let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
                    s.snap_len = s.snap_len.max(Some(len));
                }
                self.summary.tcp_segments += 1;
                (self.on_segment)(segment);
            }
            Sliced::NotTcp => note(
                self.diags,
                DiagnosticKind::NonTcpPacket,
                self.source,
                frame,
                "not TCP over IP",
            ),
            Sliced::Malformed(why) => note(
                self.diags,
                DiagnosticKind::MalformedPacket,
                self.source,
                frame,
                why,
            ),
        }
    }
}

/// Time going backwards by more than this is said; less (multi-queue NICs
/// reorder by microseconds) is clamped quietly.
const BACKWARDS_SAID: i64 = 1_000_000_000;

impl<F: FnMut(Segment<'_>)> Walk<'_, F> {
    /// A packet time that never wraps and never goes back: a time outside
    /// 1970–2199 (a wild `if_tsoffset`, a corrupt record) or before the last
    /// packet's is taken as the last packet's, so no duration is negative.
    fn monotonic(&mut self, ts: Timestamp) -> Timestamp {
        let last = self.summary.last_ts;
        let frame = self.summary.frames + 1;
        if !ts.is_plausible() {
            let detail = format!(
                "time {} s since 1970 is outside 1970-2199 (a wild if_tsoffset or a corrupt record): taken as the previous packet's",
                ts.0.div_euclid(1_000_000_000)
            );
            note(
                self.diags,
                DiagnosticKind::MalformedPacket,
                self.source,
                frame,
                &detail,
            );
            return last.unwrap_or(Timestamp::PLAUSIBLE_FROM);
        }
        match last {
            Some(last) if ts < last => {
                if last.0 - ts.0 > BACKWARDS_SAID {
                    let detail = format!(
                        "time goes back {:.3} s: taken as the previous packet's",
                        (last.0 - ts.0) as f64 / 1e9
                    );
                    note(
                        self.diags,
                        DiagnosticKind::MalformedPacket,
                        self.source,
                        frame,
                        &detail,
                    );
                }
                last
            }
            _ => ts,
        }
    }
}

/// `if_tsoffset` in the section's byte order. pcap-parser's own
/// `if_tsoffset` field always reads it little-endian.
fn ts_offset(options: &[PcapNGOption<'_>], big_endian: bool) -> i64 {
    let Some(opt) = options.iter().find(|o| o.code == OptionCode::IfTsoffset) else {
        return 0;
    };
    let Some(bytes) = opt
        .value()
        .get(..8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
    else {
        return 0;
    };
    if big_endian {
        i64::from_be_bytes(bytes)
    } else {
        i64::from_le_bytes(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::read_capture;
    use crate::capture::synth::{
        InterfaceOptions, Link, PacketSink, PcapNgWriter, PcapOptions, PcapWriter, TcpConversation,
    };

    /// What one read produced: (frame, time, payload) per segment.
    struct Got {
        segments: Vec<(u64, Timestamp, Vec<u8>)>,
        summary: CaptureSummary,
        diags: Diagnostics,
    }

    fn read_from(input: impl Read) -> Result<Got> {
        let mut diags = Diagnostics::default();
        let mut segments = Vec::new();
        let summary = read_capture(input, "test.pcap", &mut diags, |s| {
            segments.push((s.frame, s.ts, s.payload.to_vec()))
        })?;
        Ok(Got {
            segments,
            summary,
            diags,
        })
    }

    fn read_bytes(bytes: &[u8]) -> Result<Got> {
        read_from(bytes)
    }

    fn conversation() -> TcpConversation {
        let mut conv =
            TcpConversation::new("10.0.0.1:50000", "10.0.0.2:9092").step_nanos(1_234_567);
        conv.handshake()
            .client_sends(b"hello")
            .server_sends(b"world");
        conv
    }

    fn legacy(options: PcapOptions, link: Link) -> Vec<u8> {
        let mut w = PcapWriter::new(Vec::new(), link, options).unwrap();
        conversation().write_to(&mut w).unwrap();
        w.into_inner()
    }

    fn payloads(got: &Got) -> Vec<&[u8]> {
        got.segments
            .iter()
            .map(|s| s.2.as_slice())
            .filter(|p| !p.is_empty())
            .collect()
    }

    #[test]
    fn legacy_pcap_reads_in_both_byte_orders_and_both_resolutions() {
        let conv = conversation();
        let sent: Vec<Timestamp> = conv.packets().iter().map(|p| p.ts).collect();
        for big_endian in [false, true] {
            for nanos in [false, true] {
                let bytes = legacy(
                    PcapOptions {
                        big_endian,
                        nanos,
                        ..PcapOptions::default()
                    },
                    Link::Ethernet,
                );
                let got = read_bytes(&bytes).unwrap();
                assert_eq!(
                    payloads(&got),
                    [&b"hello"[..], b"world"],
                    "be={big_endian} ns={nanos}"
                );
                let times: Vec<Timestamp> = got.segments.iter().map(|s| s.1).collect();
                let expected: Vec<Timestamp> = if nanos {
                    sent.clone()
                } else {
                    sent.iter().map(|t| Timestamp(t.0 / 1000 * 1000)).collect()
                };
                assert_eq!(times, expected, "be={big_endian} ns={nanos}");
                assert_eq!(got.summary.frames, 5);
                assert_eq!(got.summary.tcp_segments, 5);
                assert_eq!(
                    got.segments.iter().map(|s| s.0).collect::<Vec<_>>(),
                    [1, 2, 3, 4, 5]
                );
            }
        }
    }

    #[test]
    fn every_link_type_reads_from_a_legacy_file() {
        let links = [
            Link::Ethernet,
            Link::EthernetVlan(7),
            Link::EthernetQinQ(10, 20),
            Link::LinuxSll,
            Link::LinuxSll2,
            Link::Raw,
            Link::RawIpv4,
            Link::Null { big_endian: true },
            Link::Null { big_endian: false },
            Link::Loop,
        ];
        for link in links {
            let got = read_bytes(&legacy(PcapOptions::default(), link)).unwrap();
            assert_eq!(payloads(&got), [&b"hello"[..], b"world"], "{link:?}");
            assert_eq!(got.summary.link_types, [link.link_type().name()]);
            assert_eq!(got.diags.total(), 0, "{link:?}: {:?}", got.diags);
        }
    }

    #[test]
    fn pcapng_interfaces_keep_their_own_link_type_resolution_and_offset() {
        for big_endian in [false, true] {
            let mut w = PcapNgWriter::new(Vec::new(), big_endian).unwrap();
            let eth = w
                .add_interface(Link::Ethernet, InterfaceOptions::DEFAULT)
                .unwrap();
            let ns = InterfaceOptions {
                tsresol: Some(9),
                tsoffset: Some(1_000),
            };
            let sll2 = w.add_interface(Link::LinuxSll2, ns).unwrap();
            let pow2 = InterfaceOptions {
                tsresol: Some(0x80 | 20),
                tsoffset: Some(-5),
            };
            let raw = w.add_interface(Link::Raw, pow2).unwrap();
            let conv = conversation();
            let t = Timestamp::from_secs_nanos(1_714_564_800, 123_456_789);
            let packet = conv.packets()[3].as_tcp();
            for id in [eth, sll2, raw] {
                w.use_interface(id);
                w.write_tcp(t, &packet).unwrap();
            }
            let got = read_bytes(&w.into_inner()).unwrap();
            assert_eq!(payloads(&got), [&b"hello"[..]; 3]);
            assert_eq!(got.summary.link_types, ["ETHERNET", "LINUX_SLL2", "RAW"]);
            assert_eq!(
                got.segments[0].1,
                Timestamp::from_secs_nanos(1_714_564_800, 123_456_000)
            );
            assert_eq!(got.segments[1].1, t, "nanosecond interface with an offset");
            // 2^-20 s ticks: the nearest tick at or below .123456789 s.
            let tick = 1e9 / f64::from(1u32 << 20);
            let err = (t.0 - got.segments[2].1 .0) as f64;
            assert!(
                (0.0..tick).contains(&err),
                "power-of-two resolution off by {err} ns"
            );
        }
    }

    #[test]
    fn a_file_ending_mid_record_keeps_what_came_before_and_says_where() {
        let bytes = legacy(PcapOptions::default(), Link::Ethernet);
        let last_record = bytes.len() - (16 + 14 + 20 + 20 + 5);
        let cut = &bytes[..bytes.len() - 3];
        let got = read_bytes(cut).unwrap();
        assert_eq!(payloads(&got), [&b"hello"[..]]);
        assert_eq!(got.diags.count(DiagnosticKind::TruncatedCapture), 1);
        assert_eq!(got.diags.examples[0].at, format!("offset {last_record}"));
    }

    #[test]
    fn a_pcapng_ending_mid_block_keeps_the_packets_before_it() {
        let mut w = PcapNgWriter::new(Vec::new(), false).unwrap();
        w.add_interface(Link::Ethernet, InterfaceOptions::DEFAULT)
            .unwrap();
        conversation().write_to(&mut w).unwrap();
        let bytes = w.into_inner();
        let got = read_bytes(&bytes[..bytes.len() - 10]).unwrap();
        assert_eq!(payloads(&got), [&b"hello"[..]]);
        assert_eq!(got.summary.frames, 4);
        assert_eq!(got.diags.count(DiagnosticKind::TruncatedCapture), 1);
    }

    #[test]
    fn a_pcapng_interface_of_an_unsupported_link_type_is_skipped_while_the_others_are_read() {
        let mut w = PcapNgWriter::new(Vec::new(), false).unwrap();
        w.add_interface(Link::Ethernet, InterfaceOptions::DEFAULT)
            .unwrap();
        let usb = w
            .add_interface(Link::Ethernet, InterfaceOptions::DEFAULT)
            .unwrap();
        conversation().write_to(&mut w).unwrap();
        w.use_interface(usb);
        conversation().write_to(&mut w).unwrap();
        let mut bytes = w.into_inner();
        // The IDBs follow the 28-byte SHB (20 bytes each); link type at +8.
        bytes[56..58].copy_from_slice(&239u16.to_le_bytes());
        let got = read_bytes(&bytes).unwrap();
        assert_eq!(payloads(&got), [&b"hello"[..], &b"world"[..]]);
        let skipped = got.diags.count(DiagnosticKind::NonTcpPacket);
        assert_eq!(skipped * 2, got.summary.frames);
        let said = format!("{:?}", got.diags.examples);
        assert!(
            said.contains("unsupported link type LINKTYPE_NFLOG (239)"),
            "{said}"
        );
    }

    #[test]
    fn a_wild_if_tsoffset_never_wraps_or_goes_back() {
        for offset in [i64::MAX, i64::MIN] {
            let mut w = PcapNgWriter::new(Vec::new(), false).unwrap();
            w.add_interface(Link::Ethernet, InterfaceOptions::DEFAULT)
                .unwrap();
            let mut bytes = Vec::new();
            conversation().write_to(&mut w).unwrap();
            bytes.extend(w.into_inner());
            let mut w2 = PcapNgWriter::new(Vec::new(), false).unwrap();
            let options = InterfaceOptions {
                tsoffset: Some(offset),
                ..InterfaceOptions::DEFAULT
            };
            w2.add_interface(Link::Ethernet, options).unwrap();
            conversation().write_to(&mut w2).unwrap();
            bytes.extend(w2.into_inner());
            let got = read_bytes(&bytes).unwrap();
            let times: Vec<_> = got.segments.iter().map(|s| s.1).collect();
            assert!(times.iter().all(|t| t.is_plausible()), "{times:?}");
            assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
            let said = format!("{:?}", got.diags.examples);
            assert!(said.contains("outside 1970-2199"), "{said}");
        }
    }

    /// Hands out a few bytes per read, like a pipe.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.step = self.step % 7 + 1;
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_non_seekable_trickling_reader_gives_the_same_segments() {
        let bytes = legacy(PcapOptions::default(), Link::LinuxSll2);
        let whole = read_bytes(&bytes).unwrap();
        let trickled = read_from(Trickle {
            data: &bytes,
            step: 0,
        })
        .unwrap();
        assert_eq!(trickled.segments, whole.segments);
        let mut w = PcapNgWriter::new(Vec::new(), false).unwrap();
        w.add_interface(
            Link::Ethernet,
            InterfaceOptions {
                tsresol: Some(9),
                tsoffset: None,
            },
        )
        .unwrap();
        conversation().write_to(&mut w).unwrap();
        let ng = w.into_inner();
        assert_eq!(
            read_from(Trickle { data: &ng, step: 0 }).unwrap().segments,
            read_bytes(&ng).unwrap().segments
        );
    }

    #[test]
    fn an_unsupported_link_type_is_an_error_naming_it() {
        let mut bytes = legacy(PcapOptions::default(), Link::Ethernet);
        bytes[20..24].copy_from_slice(&127u32.to_le_bytes());
        let err = read_bytes(&bytes).err().expect("must fail");
        let text = err.to_string();
        assert!(
            text.contains("unsupported link type LINKTYPE_IEEE802_11_RADIOTAP (127)"),
            "{text}"
        );
    }

    #[test]
    fn garbage_is_not_a_capture_and_a_bad_first_record_is_corrupt_at_its_offset() {
        let err = read_bytes(b"GET / HTTP/1.1\r\n").err().unwrap();
        assert!(matches!(err, Error::UnknownInput { .. }), "{err}");
        assert!(err.to_string().contains("47 45 54 20"), "{err}");
        let mut ng = PcapNgWriter::new(Vec::new(), false).unwrap().into_inner();
        ng.extend_from_slice(&[0xff; 64]);
        let err = read_bytes(&ng).err().unwrap();
        assert!(
            matches!(err, Error::CorruptCapture { offset: 28, .. }),
            "{err}"
        );
        let mut huge = legacy(PcapOptions::default(), Link::Ethernet);
        huge[24 + 8..24 + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        let err = read_bytes(&huge).err().unwrap();
        assert!(
            matches!(err, Error::CorruptCapture { offset: 24, .. }),
            "{err}"
        );
    }

    #[test]
    fn an_empty_input_is_unknown_and_a_header_only_file_is_empty() {
        assert!(matches!(read_bytes(b""), Err(Error::UnknownInput { .. })));
        let header = PcapWriter::new(Vec::new(), Link::Ethernet, PcapOptions::default())
            .unwrap()
            .into_inner();
        let got = read_bytes(&header).unwrap();
        assert_eq!((got.summary.frames, got.diags.total()), (0, 0));
        assert!(matches!(
            read_bytes(&header[..10]),
            Err(Error::CorruptCapture { offset: 0, .. })
        ));
    }

    /// xorshift64*: deterministic randomness without a crate.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    #[test]
    fn random_garbage_mutations_and_truncations_never_panic() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let mut ng = PcapNgWriter::new(Vec::new(), false).unwrap();
        ng.add_interface(
            Link::LinuxSll2,
            InterfaceOptions {
                tsresol: Some(9),
                tsoffset: Some(3),
            },
        )
        .unwrap();
        conversation().write_to(&mut ng).unwrap();
        let valid = [
            legacy(PcapOptions::default(), Link::EthernetQinQ(1, 2)),
            ng.into_inner(),
        ];
        for round in 0..400 {
            let mut bytes = valid[round % 2].clone();
            match round % 4 {
                0 => bytes.truncate(rng.below(bytes.len())),
                1 => {
                    for _ in 0..1 + rng.below(8) {
                        let i = rng.below(bytes.len());
                        bytes[i] = rng.next() as u8;
                    }
                }
                2 => bytes = (0..rng.below(300)).map(|_| rng.next() as u8).collect(),
                _ => {
                    let keep = 24 + rng.below(bytes.len() - 24);
                    bytes.truncate(keep);
                    bytes.extend((0..rng.below(200)).map(|_| rng.next() as u8));
                }
            }
            let _ = read_bytes(&bytes);
            let _ = read_from(Trickle {
                data: &bytes,
                step: round,
            });
        }
    }
}
