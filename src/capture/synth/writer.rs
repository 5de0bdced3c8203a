//! Capture file writers: legacy pcap and pcapng.
//!
//! Takes: frames (raw bytes, or a [`TcpPacket`] framed on the writer's
//! [`Link`]) with their times. Gives: the file bytes, streamed to any
//! [`Write`]. Layouts follow the libpcap file format and the pcapng draft
//! (draft-ietf-opsawg-pcapng): SHB, IDB with `if_tsresol` (option 9) and
//! `if_tsoffset` (option 14), EPB.

use std::io::{self, Write};

use super::frame::{encode_frame, Link, TcpPacket};
use crate::time::Timestamp;

/// Where [`super::TcpConversation`] and [`super::write_traffic`] put packets.
pub trait PacketSink {
    /// Writes one TCP segment captured at `ts`.
    fn write_tcp(&mut self, ts: Timestamp, packet: &TcpPacket<'_>) -> io::Result<()>;
}

/// Options of a legacy pcap file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcapOptions {
    /// Write every field big-endian (as a big-endian host would).
    pub big_endian: bool,
    /// Nanosecond time stamps (magic 0xa1b23c4d) instead of microseconds.
    pub nanos: bool,
    /// Snapshot length declared in the header; longer frames are cut to it
    /// (their original length is still recorded), as tcpdump `-s` does.
    pub snaplen: u32,
}

impl Default for PcapOptions {
    fn default() -> Self {
        PcapOptions {
            big_endian: false,
            nanos: false,
            snaplen: 262_144,
        }
    }
}

fn u16b(v: u16, be: bool) -> [u8; 2] {
    if be {
        v.to_be_bytes()
    } else {
        v.to_le_bytes()
    }
}

fn u32b(v: u32, be: bool) -> [u8; 4] {
    if be {
        v.to_be_bytes()
    } else {
        v.to_le_bytes()
    }
}

/// Writes a legacy pcap file with one link type.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
    link: Link,
    options: PcapOptions,
    scratch: Vec<u8>,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the 24-byte file header for `link`.
    pub fn new(mut out: W, link: Link, options: PcapOptions) -> io::Result<Self> {
        let be = options.big_endian;
        let magic: u32 = if options.nanos {
            0xa1b2_3c4d
        } else {
            0xa1b2_c3d4
        };
        let mut header = Vec::with_capacity(24);
        header.extend_from_slice(&u32b(magic, be));
        header.extend_from_slice(&u16b(2, be));
        header.extend_from_slice(&u16b(4, be));
        header.extend_from_slice(&[0; 8]); // thiszone, sigfigs
        header.extend_from_slice(&u32b(options.snaplen, be));
        header.extend_from_slice(&u32b(link.link_type().number(), be));
        out.write_all(&header)?;
        Ok(PcapWriter {
            out,
            link,
            options,
            scratch: Vec::with_capacity(2048),
        })
    }

    /// Writes one record holding `frame`, cut to the snaplen.
    pub fn write_frame(&mut self, ts: Timestamp, frame: &[u8]) -> io::Result<()> {
        let be = self.options.big_endian;
        let secs = ts.0.div_euclid(1_000_000_000) as u32;
        let nanos = ts.0.rem_euclid(1_000_000_000) as u32;
        let frac = if self.options.nanos {
            nanos
        } else {
            nanos / 1000
        };
        let caplen = frame.len().min(self.options.snaplen as usize);
        let mut header = [0u8; 16];
        header[0..4].copy_from_slice(&u32b(secs, be));
        header[4..8].copy_from_slice(&u32b(frac, be));
        header[8..12].copy_from_slice(&u32b(caplen as u32, be));
        header[12..16].copy_from_slice(&u32b(frame.len() as u32, be));
        self.out.write_all(&header)?;
        self.out.write_all(&frame[..caplen])
    }

    /// The underlying writer, borrowed.
    pub fn get_ref(&self) -> &W {
        &self.out
    }

    /// The underlying writer (flush it if it buffers).
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> PacketSink for PcapWriter<W> {
    fn write_tcp(&mut self, ts: Timestamp, packet: &TcpPacket<'_>) -> io::Result<()> {
        let mut frame = std::mem::take(&mut self.scratch);
        frame.clear();
        encode_frame(self.link, packet, &mut frame);
        let result = self.write_frame(ts, &frame);
        self.scratch = frame;
        result
    }
}

/// Clock settings of one pcapng interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InterfaceOptions {
    /// `if_tsresol`: high bit clear = 10^-n s units, set = 2^-n s units.
    /// `None` writes no option (the default, microseconds).
    pub tsresol: Option<u8>,
    /// `if_tsoffset`: seconds added to every time stamp. `None` writes no option.
    pub tsoffset: Option<i64>,
}

impl InterfaceOptions {
    /// Microseconds, no offset, written without options.
    pub const DEFAULT: InterfaceOptions = InterfaceOptions {
        tsresol: None,
        tsoffset: None,
    };
}

#[derive(Debug)]
struct NgInterface {
    link: Link,
    units_per_sec: u128,
    offset_secs: i64,
}

/// Writes a pcapng file: one section, any number of interfaces.
#[derive(Debug)]
pub struct PcapNgWriter<W: Write> {
    out: W,
    big_endian: bool,
    interfaces: Vec<NgInterface>,
    current: u32,
    scratch: Vec<u8>,
}

impl<W: Write> PcapNgWriter<W> {
    /// Writes the Section Header Block.
    pub fn new(mut out: W, big_endian: bool) -> io::Result<Self> {
        let mut body = Vec::new();
        body.extend_from_slice(&u32b(0x1a2b_3c4d, big_endian));
        body.extend_from_slice(&u16b(1, big_endian));
        body.extend_from_slice(&u16b(0, big_endian));
        body.extend_from_slice(&[0xff; 8]); // section length unknown
        write_block(&mut out, big_endian, 0x0a0d_0d0a, &body)?;
        Ok(PcapNgWriter {
            out,
            big_endian,
            interfaces: Vec::new(),
            current: 0,
            scratch: Vec::new(),
        })
    }

    /// Writes an Interface Description Block; returns its interface id.
    pub fn add_interface(&mut self, link: Link, options: InterfaceOptions) -> io::Result<u32> {
        let be = self.big_endian;
        let mut body = Vec::new();
        body.extend_from_slice(&u16b(link.link_type().number() as u16, be));
        body.extend_from_slice(&[0, 0]);
        body.extend_from_slice(&u32b(262_144, be));
        if let Some(r) = options.tsresol {
            push_option(&mut body, be, 9, &[r]);
        }
        if let Some(o) = options.tsoffset {
            let bytes = if be { o.to_be_bytes() } else { o.to_le_bytes() };
            push_option(&mut body, be, 14, &bytes);
        }
        if options.tsresol.is_some() || options.tsoffset.is_some() {
            push_option(&mut body, be, 0, &[]);
        }
        write_block(&mut self.out, be, 1, &body)?;
        let units_per_sec = units_per_sec(options.tsresol.unwrap_or(6));
        let offset_secs = options.tsoffset.unwrap_or(0);
        self.interfaces.push(NgInterface {
            link,
            units_per_sec,
            offset_secs,
        });
        Ok(self.interfaces.len() as u32 - 1)
    }

    /// Makes [`PacketSink::write_tcp`] write on interface `id`.
    pub fn use_interface(&mut self, id: u32) {
        self.current = id;
    }

    /// Writes an Enhanced Packet Block on interface `id` (which must exist).
    pub fn write_frame(&mut self, id: u32, ts: Timestamp, frame: &[u8]) -> io::Result<()> {
        let be = self.big_endian;
        let iface = self
            .interfaces
            .get(id as usize)
            .expect("synth: write on an interface never added");
        let since_offset = i128::from(ts.0) - i128::from(iface.offset_secs) * 1_000_000_000;
        let units = (since_offset.max(0) as u128 * iface.units_per_sec / 1_000_000_000) as u64;
        let mut body = Vec::with_capacity(frame.len() + 24);
        body.extend_from_slice(&u32b(id, be));
        body.extend_from_slice(&u32b((units >> 32) as u32, be));
        body.extend_from_slice(&u32b(units as u32, be));
        body.extend_from_slice(&u32b(frame.len() as u32, be));
        body.extend_from_slice(&u32b(frame.len() as u32, be));
        body.extend_from_slice(frame);
        write_block(&mut self.out, be, 6, &body)
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> PacketSink for PcapNgWriter<W> {
    fn write_tcp(&mut self, ts: Timestamp, packet: &TcpPacket<'_>) -> io::Result<()> {
        let link = match self.interfaces.get(self.current as usize) {
            Some(i) => i.link,
            None => panic!("synth: pcapng interface {} was never added", self.current),
        };
        let mut frame = std::mem::take(&mut self.scratch);
        frame.clear();
        encode_frame(link, packet, &mut frame);
        let result = self.write_frame(self.current, ts, &frame);
        self.scratch = frame;
        result
    }
}

fn units_per_sec(tsresol: u8) -> u128 {
    let n = u32::from(tsresol & 0x7f);
    if tsresol & 0x80 != 0 {
        1u128 << n.min(63)
    } else {
        10u128.pow(n.min(19))
    }
}

fn push_option(body: &mut Vec<u8>, be: bool, code: u16, value: &[u8]) {
    body.extend_from_slice(&u16b(code, be));
    body.extend_from_slice(&u16b(value.len() as u16, be));
    body.extend_from_slice(value);
    body.resize(body.len().next_multiple_of(4), 0);
}

/// type, total length, body padded to 4, total length again.
fn write_block(out: &mut impl Write, be: bool, block_type: u32, body: &[u8]) -> io::Result<()> {
    let padded = body.len().next_multiple_of(4);
    let total = (12 + padded) as u32;
    out.write_all(&u32b(block_type, be))?;
    out.write_all(&u32b(total, be))?;
    out.write_all(body)?;
    out.write_all(&[0u8; 3][..padded - body.len()])?;
    out.write_all(&u32b(total, be))
}
