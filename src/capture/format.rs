//! Recognising a capture file and reading its clock, before and beside
//! pcap-parser.
//!
//! Takes: the first bytes of an input, and pcapng time fields. Gives: which
//! format it is ([`is_pcapng`], [`is_legacy`]), the whole file header read
//! ahead of the parser ([`read_prefix`]: pcap-parser wants it in one `read`,
//! and a pipe may deliver it in pieces), I/O errors kept for the report
//! ([`Recorder`]), and timestamps from `if_tsresol`/`if_tsoffset`.

use std::io::{self, Read};

use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::time::Timestamp;

/// Largest block accepted. libpcap's own snaplen cap is 256 KiB; pcapng
/// blocks with big options can be larger, but 16 MiB is only ever corruption.
pub(super) const MAX_BUFFER: usize = 16 << 20;

const PCAPNG_MAGIC: [u8; 4] = [0x0a, 0x0d, 0x0d, 0x0a];
/// Legacy magics as they appear on disk: µs, ns, and the "modified" format,
/// in both byte orders.
const LEGACY_MAGICS: [[u8; 4]; 6] = [
    [0xd4, 0xc3, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xc3, 0xd4],
    [0x4d, 0x3c, 0xb2, 0xa1],
    [0xa1, 0xb2, 0x3c, 0x4d],
    [0x34, 0xcd, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xcd, 0x34],
];

pub(super) fn is_pcapng(b: &[u8]) -> bool {
    b.starts_with(&PCAPNG_MAGIC)
}

pub(super) fn is_legacy(b: &[u8]) -> bool {
    LEGACY_MAGICS.iter().any(|m| b.starts_with(m))
}

pub(super) fn is_capture_magic(b: &[u8]) -> bool {
    is_pcapng(b) || is_legacy(b)
}

/// Forwards reads and keeps the last I/O error, which pcap-parser reduces to
/// a bare `ReadError`.
pub(super) struct Recorder<R> {
    /// The input.
    pub inner: R,
    /// The last error it returned.
    pub error: Option<io::Error>,
}

impl<R: Read> Read for Recorder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.inner.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let copy = io::Error::new(e.kind(), e.to_string());
                    self.error = Some(e);
                    return Err(copy);
                }
                ok => return ok,
            }
        }
    }
}

/// Reads until `buf` holds `want` bytes or the input ends.
pub(super) fn fill_to(input: &mut impl Read, buf: &mut Vec<u8>, want: usize) -> io::Result<()> {
    let mut chunk = [0u8; 4096];
    while buf.len() < want {
        let n = input.read(&mut chunk[..(want - buf.len()).min(4096)])?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(())
}

/// The first bytes of the input: a whole legacy header, or a whole pcapng
/// Section Header Block, because pcap-parser's readers insist on finding the
/// header in their very first `read` and a pipe may deliver it in pieces.
pub(super) fn read_prefix(input: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut prefix = Vec::with_capacity(256);
    fill_to(input, &mut prefix, 24)?;
    if is_pcapng(&prefix) && prefix.len() >= 12 {
        let len = [prefix[4], prefix[5], prefix[6], prefix[7]];
        let big_endian = prefix[8..12] == [0x1a, 0x2b, 0x3c, 0x4d];
        let len = if big_endian {
            u32::from_be_bytes(len)
        } else {
            u32::from_le_bytes(len)
        };
        fill_to(input, &mut prefix, (len as usize).min(MAX_BUFFER))?;
    }
    Ok(prefix)
}

pub(super) fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "nothing (empty input)".to_string();
    }
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One pcapng interface: its link type number and how to read its clock.
#[derive(Clone, Copy, Debug)]
pub(super) struct Interface {
    /// LINKTYPE_ number.
    pub link: u32,
    /// Clock ticks per second (`if_tsresol`).
    pub units_per_sec: u64,
    /// Seconds added to every time (`if_tsoffset`).
    pub offset_secs: i64,
}

/// Counts a per-packet diagnostic, building its strings only while examples
/// are still being kept (these can fire on every packet of a capture).
pub(super) fn note(
    diags: &mut Diagnostics,
    kind: DiagnosticKind,
    source: &str,
    frame: u64,
    detail: &str,
) {
    if diags.count(kind) < Diagnostics::EXAMPLES_PER_KIND {
        diags.add(kind, source, format!("frame {frame}"), detail);
    } else {
        *diags.counts.entry(kind).or_insert(0) += 1;
    }
}

/// Ticks per second from `if_tsresol` (pcapng spec 4.2): high bit clear,
/// 10^-n s; set, 2^-n s. pcap-parser's own `build_ts_resolution` rejects
/// every power-of-two value (it range-checks the byte with the flag bit
/// still set), hence this. `None` when the unit does not fit in a u64.
pub(super) fn units_per_sec(tsresol: u8) -> Option<u64> {
    let n = u32::from(tsresol & 0x7f);
    if tsresol & 0x80 == 0 {
        10u64.checked_pow(n)
    } else {
        1u64.checked_shl(n).filter(|_| n < 64)
    }
}

/// A pcapng time: `units` ticks of `1/units_per_sec` s, plus `if_tsoffset`
/// seconds (pcapng spec, section 4.2). Done in u128 so no resolution
/// overflows.
pub(super) fn ng_timestamp(units: u64, iface: Interface) -> Timestamp {
    let per_sec = u128::from(iface.units_per_sec);
    let secs = u128::from(units) / per_sec;
    let nanos = (u128::from(units) % per_sec) * 1_000_000_000 / per_sec;
    let secs = i64::try_from(secs)
        .unwrap_or(i64::MAX)
        .saturating_add(iface.offset_secs);
    Timestamp::from_secs_nanos(secs, nanos as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsresol_covers_powers_of_ten_and_of_two() {
        assert_eq!(units_per_sec(6), Some(1_000_000));
        assert_eq!(units_per_sec(9), Some(1_000_000_000));
        assert_eq!(units_per_sec(0x80 | 10), Some(1024));
        assert_eq!(units_per_sec(0x80 | 63), Some(1 << 63));
        assert_eq!(units_per_sec(20), None);
        assert_eq!(units_per_sec(0x80 | 64), None);
    }
}
