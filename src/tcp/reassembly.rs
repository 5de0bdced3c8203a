//! One direction of one TCP connection, put back in order.
//!
//! Takes: that direction's segments (wire sequence numbers, payloads, FIN)
//! in capture order. Gives: [`Released`] runs of contiguous bytes as soon as
//! they are contiguous, and gaps where bytes never came. Sequence numbers
//! become 64-bit offsets from the first byte seen, unwrapped around the next
//! expected byte (RFC 793 arithmetic), so an ISN near 2^32 is no special
//! case. Out-of-order data waits in a [`BTreeMap`] keyed by offset;
//! retransmitted and overlapping bytes are trimmed (first copy wins, as
//! Linux's receive queue does). Memory is bounded by [`Limits`]: past them
//! the oldest hole is given up on. A segment the capture's snaplen cut
//! short still occupies its whole sequence range: its uncaptured tail is
//! released as a [`Released::Snapped`] hole of known length, never waited
//! for.

use std::collections::BTreeMap;

use crate::time::Timestamp;

/// When to stop waiting for a missing byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Out-of-order bytes buffered per direction before a hole is skipped.
    pub max_buffered: usize,
    /// Out-of-order segments buffered per direction before a hole is skipped.
    pub max_pending_segments: usize,
    /// Capture time a segment may wait behind a hole before it is skipped.
    pub hole_timeout_nanos: i64,
}

/// What a direction gives back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Released<'a> {
    /// Bytes, next in the stream, with the time and frame of the packet that
    /// made them available.
    Data {
        /// Time.
        ts: Timestamp,
        /// Frame.
        frame: u64,
        /// Bytes.
        bytes: &'a [u8],
    },
    /// Bytes that never arrived; the stream continues after them.
    Gap {
        /// Time of the first packet after the hole.
        ts: Timestamp,
        /// Frame of the first packet after the hole.
        frame: u64,
        /// How many bytes are missing.
        missing: u64,
        /// Why the hole was given up on.
        reason: &'static str,
    },
    /// Bytes that were sent and are in sequence, but that the capture's
    /// snaplen cut off: the stream continues after them, and nothing was
    /// lost on the wire.
    Snapped {
        /// Time of the cut packet.
        ts: Timestamp,
        /// Frame of the cut packet.
        frame: u64,
        /// How many bytes were not captured.
        missing: u64,
    },
}

#[derive(Debug)]
struct Pending {
    ts: Timestamp,
    frame: u64,
    data: Vec<u8>,
    /// Uncaptured bytes right after `data` (snaplen).
    missing: u64,
}

impl Pending {
    /// Sequence space the segment covers, captured or not.
    fn span(&self) -> u64 {
        self.data.len() as u64 + self.missing
    }
}

/// The reassembly state of one direction.
#[derive(Debug, Default)]
pub struct HalfStream {
    started: bool,
    /// Wire sequence number of offset 0.
    base: u32,
    /// Offset of the next byte to release.
    next: u64,
    pending: BTreeMap<u64, Pending>,
    pending_bytes: usize,
    fin_at: Option<u64>,
}

/// One segment of this direction, as [`HalfStream::segment`] takes it.
#[derive(Clone, Copy, Debug)]
pub struct Incoming<'a> {
    /// Wire sequence number of the first payload byte.
    pub seq: u32,
    /// Payload as captured.
    pub payload: &'a [u8],
    /// Payload bytes after `payload` that were sent but not captured.
    pub missing: u32,
    /// FIN set.
    pub fin: bool,
    /// Capture time.
    pub ts: Timestamp,
    /// Frame number.
    pub frame: u64,
}

/// Emits one released item.
pub type Sink<'s> = dyn FnMut(Released<'_>) + 's;

impl HalfStream {
    /// True once the first segment fixed where the stream starts.
    pub fn started(&self) -> bool {
        self.started
    }

    /// The stream starts with the byte whose sequence number is `seq`.
    pub fn start(&mut self, seq: u32) {
        self.started = true;
        self.base = seq;
        self.next = 0;
    }

    /// Wire sequence number of the stream's first byte.
    pub fn base(&self) -> u32 {
        self.base
    }

    /// Wire sequence number of the next byte expected.
    pub fn next_seq(&self) -> u32 {
        self.base.wrapping_add(self.next as u32)
    }

    /// True if out-of-order data waits behind a hole.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// True once every byte up to a FIN has been released.
    pub fn finished(&self) -> bool {
        self.fin_at.is_some_and(|f| self.next >= f)
    }

    /// Offset of `seq`, unwrapped around the next expected byte; negative for
    /// bytes before the stream's start.
    fn offset(&self, seq: u32) -> i64 {
        let diff = seq.wrapping_sub(self.next_seq()) as i32;
        self.next as i64 + i64::from(diff)
    }

    /// Takes one segment; returns true if a buffer limit forced a skip.
    pub fn segment(&mut self, seg: Incoming<'_>, limits: &Limits, out: &mut Sink<'_>) -> bool {
        let start = self.offset(seg.seq);
        let end = start + seg.payload.len() as i64 + i64::from(seg.missing);
        if seg.fin && end >= self.next as i64 {
            self.fin_at = Some(end as u64);
        }
        if end <= self.next as i64 {
            return false; // a retransmission of released bytes
        }
        let skip = (self.next as i64 - start).max(0) as usize;
        let start = start + skip as i64;
        let data = seg.payload.get(skip..).unwrap_or_default();
        let missing = (end - start) as u64 - data.len() as u64;
        if data.is_empty() && missing == 0 {
            return false; // a bare FIN beyond a hole: noted above
        }
        let start = start as u64;
        if start == self.next {
            self.release(data, missing, (seg.ts, seg.frame), out);
            self.drain(Some((seg.ts, seg.frame)), out);
            return false;
        }
        self.buffer(start, data, missing, seg.ts, seg.frame);
        self.enforce(limits, out)
    }

    /// Releases captured bytes at `next`, then the snapped hole after them.
    fn release(&mut self, data: &[u8], missing: u64, at: (Timestamp, u64), out: &mut Sink<'_>) {
        let (ts, frame) = at;
        if !data.is_empty() {
            out(Released::Data {
                ts,
                frame,
                bytes: data,
            });
            self.next += data.len() as u64;
        }
        if missing > 0 {
            out(Released::Snapped { ts, frame, missing });
            self.next += missing;
        }
    }

    fn buffer(&mut self, start: u64, data: &[u8], missing: u64, ts: Timestamp, frame: u64) {
        if let Some(old) = self.pending.get(&start) {
            if old.span() >= data.len() as u64 + missing {
                return;
            }
            self.pending_bytes -= old.data.len();
        }
        self.pending_bytes += data.len();
        let data = data.to_vec();
        let p = Pending {
            ts,
            frame,
            data,
            missing,
        };
        self.pending.insert(start, p);
    }

    fn enforce(&mut self, limits: &Limits, out: &mut Sink<'_>) -> bool {
        let mut overflowed = false;
        while self.pending_bytes > limits.max_buffered
            || self.pending.len() > limits.max_pending_segments
        {
            let reason = if self.pending_bytes > limits.max_buffered {
                "out-of-order buffer cap reached"
            } else {
                "too many out-of-order segments"
            };
            self.skip_hole(reason, out);
            overflowed = true;
        }
        overflowed
    }

    /// Gives up on holes whose next data has waited longer than the timeout.
    pub fn expire(&mut self, now: Timestamp, limits: &Limits, out: &mut Sink<'_>) {
        while let Some((_, first)) = self.pending.first_key_value() {
            if now.0.saturating_sub(first.ts.0) <= limits.hole_timeout_nanos {
                break;
            }
            self.skip_hole("no retransmission came in time", out);
        }
    }

    /// Releases everything buffered, skipping every hole (end of capture,
    /// reset, eviction).
    pub fn flush(&mut self, reason: &'static str, out: &mut Sink<'_>) {
        while !self.pending.is_empty() {
            self.skip_hole(reason, out);
        }
    }

    fn skip_hole(&mut self, reason: &'static str, out: &mut Sink<'_>) {
        let Some((&at, first)) = self.pending.first_key_value() else {
            return;
        };
        if at > self.next {
            let (ts, frame, missing) = (first.ts, first.frame, at - self.next);
            out(Released::Gap {
                ts,
                frame,
                missing,
                reason,
            });
            self.next = at;
        }
        self.drain(None, out);
    }

    /// Releases buffered segments that are now contiguous. Each carries the
    /// later of its own packet and the packet that completed it (`by`): it
    /// was not available to the receiver before both had arrived.
    fn drain(&mut self, by: Option<(Timestamp, u64)>, out: &mut Sink<'_>) {
        let mut by = by;
        while let Some(entry) = self.pending.first_entry() {
            if *entry.key() > self.next {
                break;
            }
            let (at, p) = entry.remove_entry();
            self.pending_bytes -= p.data.len();
            let skip = self.next - at;
            if skip >= p.span() {
                continue;
            }
            let fresh = p.data.get(skip as usize..).unwrap_or_default();
            let missing = p.span() - skip - fresh.len() as u64;
            let when = match by {
                Some((ts, frame)) if frame > p.frame => (ts, frame),
                _ => (p.ts, p.frame),
            };
            self.release(fresh, missing, when, out);
            by = Some(when);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        max_buffered: 1 << 20,
        max_pending_segments: 64,
        hole_timeout_nanos: 2_000_000_000,
    };

    /// Feeds (seq, payload, fin, frame) and returns what was released, as
    /// ("data", frame, bytes) or ("gap", frame, missing as text).
    fn feed(
        half: &mut HalfStream,
        segs: &[(u32, &[u8], bool, u64)],
    ) -> Vec<(&'static str, u64, Vec<u8>)> {
        let mut got = Vec::new();
        for &(seq, payload, fin, frame) in segs {
            let seg = Incoming {
                seq,
                payload,
                missing: 0,
                fin,
                ts: Timestamp(frame as i64),
                frame,
            };
            half.segment(seg, &LIMITS, &mut |r| got.push(item(r)));
        }
        got
    }

    fn item(r: Released<'_>) -> (&'static str, u64, Vec<u8>) {
        match r {
            Released::Data { frame, bytes, .. } => ("data", frame, bytes.to_vec()),
            Released::Gap { frame, missing, .. } => {
                ("gap", frame, missing.to_string().into_bytes())
            }
            Released::Snapped { frame, missing, .. } => {
                ("snapped", frame, missing.to_string().into_bytes())
            }
        }
    }

    #[test]
    fn offsets_unwrap_across_the_sequence_space_edge() {
        let mut half = HalfStream::default();
        half.start(u32::MAX - 1);
        let got = feed(
            &mut half,
            &[
                (u32::MAX - 1, b"ab", false, 1),
                (0, b"cd", false, 2),
                (2, b"ef", true, 3),
            ],
        );
        let all: Vec<u8> = got.iter().flat_map(|g| g.2.clone()).collect();
        assert_eq!(all, b"abcdef");
        assert!(half.finished());
    }

    #[test]
    fn a_fin_beyond_a_hole_finishes_only_once_the_hole_is_filled() {
        let mut half = HalfStream::default();
        half.start(100);
        feed(&mut half, &[(100, b"aa", false, 1), (104, b"", true, 2)]);
        assert!(!half.finished());
        feed(&mut half, &[(102, b"bb", false, 3)]);
        assert!(half.finished());
    }

    #[test]
    fn bytes_before_the_start_and_duplicates_are_trimmed() {
        let mut half = HalfStream::default();
        half.start(1000);
        let segs: [(u32, &[u8], bool, u64); 4] = [
            (990, b"0123456789abc", false, 1),
            (1005, b"xyz", false, 2),
            (1005, b"xy", false, 3),
            (1003, b"de", false, 4),
        ];
        let got = feed(&mut half, &segs);
        assert_eq!(
            got,
            [
                ("data", 1, b"abc".to_vec()),
                ("data", 4, b"de".to_vec()),
                ("data", 4, b"xyz".to_vec())
            ]
        );
    }

    #[test]
    fn expiry_skips_only_holes_whose_data_waited_too_long() {
        let mut half = HalfStream::default();
        half.start(0);
        feed(&mut half, &[(10, b"late", false, 1)]);
        let mut got = Vec::new();
        half.expire(Timestamp(1_000), &LIMITS, &mut |r| got.push(item(r)));
        assert!(got.is_empty());
        half.expire(Timestamp(3_000_000_000), &LIMITS, &mut |r| {
            got.push(item(r))
        });
        assert_eq!(
            got,
            [("gap", 1, b"10".to_vec()), ("data", 1, b"late".to_vec())]
        );
    }

    fn cut(
        half: &mut HalfStream,
        seq: u32,
        payload: &[u8],
        missing: u32,
        frame: u64,
    ) -> Vec<(&'static str, u64, Vec<u8>)> {
        let mut got = Vec::new();
        let seg = Incoming {
            seq,
            payload,
            missing,
            fin: false,
            ts: Timestamp(frame as i64),
            frame,
        };
        half.segment(seg, &LIMITS, &mut |r| got.push(item(r)));
        got
    }

    #[test]
    fn a_snapped_tail_is_a_known_hole_and_the_stream_runs_on_without_waiting() {
        let mut half = HalfStream::default();
        half.start(0);
        let mut got = cut(&mut half, 0, b"head", 96, 1);
        got.extend(feed(&mut half, &[(100, b"next", false, 2)]));
        assert_eq!(
            got,
            [
                ("data", 1, b"head".to_vec()),
                ("snapped", 1, b"96".to_vec()),
                ("data", 2, b"next".to_vec())
            ]
        );
        assert!(!half.has_pending(), "nothing waits for the cut bytes");
    }

    #[test]
    fn a_cut_segment_out_of_order_is_released_with_its_hole_once_contiguous() {
        let mut half = HalfStream::default();
        half.start(0);
        let mut got = cut(&mut half, 10, b"ab", 8, 2);
        assert!(got.is_empty());
        got.extend(feed(
            &mut half,
            &[(0, b"0123456789", false, 1), (20, b"z", false, 3)],
        ));
        assert_eq!(
            got,
            [
                ("data", 1, b"0123456789".to_vec()),
                ("data", 2, b"ab".to_vec()),
                ("snapped", 2, b"8".to_vec()),
                ("data", 3, b"z".to_vec())
            ]
        );
        // A whole retransmission of the cut range adds nothing.
        assert!(feed(&mut half, &[(10, b"abcdefghij", false, 4)]).is_empty());
    }
}
