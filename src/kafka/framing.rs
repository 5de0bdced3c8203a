//! One direction of a Kafka connection → size-delimited frames.
//!
//! Takes: contiguous stream bytes (and gaps) of one direction. Gives:
//! [`Piece`]s: whole frames for the APIs kgtrace decodes, header-only frames
//! for the rest, and notes about lost and regained sync. Kafka frames are a
//! 4-byte big-endian size followed by that many bytes (Kafka's
//! `NetworkReceive`). Memory stays bounded: bodies of APIs kgtrace does not
//! decode (Produce, Fetch...) are skipped by count keeping only their header
//! bytes, decoded frames are buffered up to `max_frame_len`, and the
//! resynchronisation window is capped at [`SEARCH_WINDOW`]. The decisions
//! that need the connection's state (is this API decoded? is this
//! correlation id in flight?) are asked of a [`FrameRules`], one per
//! direction, in the manner of Suricata's `parse_request` loop.

use crate::time::Timestamp;

use crate::event::PartitionWatermark;

use super::data_path::FetchSkim;
use super::header;
use super::resync::{self, Scan};
use super::rules::{FrameRules, Plan};

/// Bytes kept while searching for a plausible header; older bytes are
/// dropped (and counted as skipped).
pub(crate) const SEARCH_WINDOW: usize = 64 * 1024;

/// Bytes of a frame kept when a gap hits its body: enough for any request
/// header with its client id.
const KEEP_AFTER_GAP: usize = header::REQUEST_FIXED + 1024;

/// One frame's worth of bytes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct SplitFrame {
    /// Body size as the size prefix states it.
    pub size: usize,
    /// The whole body when `complete`, else its kept prefix.
    pub bytes: Vec<u8>,
    /// Whether `bytes` is the whole body.
    pub complete: bool,
    /// A stream hole (bytes lost, or cut off by the capture's snaplen) fell
    /// inside this frame: `bytes` is the captured prefix, the rest of the
    /// body is unknown (not empty).
    pub cut: bool,
    /// Time of the packet that completed the frame.
    pub ts: Timestamp,
    /// Frame number of that packet.
    pub frame: u64,
    /// A Fetch response's partition headers, read as it was skipped
    /// (`None` for other frames, or when a gap hit it).
    pub skimmed: Option<Vec<PartitionWatermark>>,
}

/// What the splitter hands on.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// A frame.
    Frame(SplitFrame),
    /// Sync regained after skipping bytes.
    Resynced {
        /// Bytes skipped before the plausible header.
        skipped: u64,
        /// Whether this follows a TCP gap (else a mid-stream start or a bad header).
        after_gap: bool,
    },
    /// A header made no sense; the splitter is searching again.
    LostSync {
        /// The size prefix that was read.
        size: usize,
    },
    /// A decoded API's frame is larger than `max_frame_len`: its body was
    /// skipped and it is reported as incomplete.
    Oversized {
        /// Its size.
        size: usize,
    },
}

#[derive(Debug)]
enum State {
    Size,
    Head { size: usize, want: usize },
    Body { size: usize },
    Skip { size: usize, remaining: usize },
    Search { after_gap: bool, skipped: u64 },
}

/// Splits one direction of a connection into frames.
#[derive(Debug)]
pub(crate) struct FrameSplitter {
    state: State,
    buf: Vec<u8>,
    /// Bytes found after a regained header, still to be split.
    replay: Vec<u8>,
    /// A mid-connection start whose first bytes were not looked at yet.
    fresh: bool,
    max_frame_len: usize,
    /// The Fetch response skimmer (kept between frames for its buffer).
    skim: Option<Box<FetchSkim>>,
    /// Whether the frame being skipped is being skimmed.
    skimming: bool,
    /// A hole fell inside the frame being read.
    cut: bool,
}

impl FrameSplitter {
    /// A splitter at a frame boundary (`in_sync`) or searching for one.
    pub(crate) fn new(in_sync: bool, max_frame_len: usize) -> Self {
        let state = if in_sync {
            State::Size
        } else {
            State::Search {
                after_gap: false,
                skipped: 0,
            }
        };
        FrameSplitter {
            state,
            buf: Vec::new(),
            replay: Vec::new(),
            fresh: !in_sync,
            max_frame_len,
            skim: None,
            skimming: false,
            cut: false,
        }
    }

    /// Bytes currently held (header prefixes, decoded bodies, search window).
    pub(crate) fn buffered_bytes(&self) -> usize {
        self.buf.len() + self.replay.len() + self.skim.as_ref().map_or(0, |s| s.buffered_bytes())
    }

    /// Feeds contiguous bytes that arrived at `ts` in packet `frame`.
    pub(crate) fn push(
        &mut self,
        data: &[u8],
        ts: Timestamp,
        frame: u64,
        rules: &dyn FrameRules,
        out: &mut Vec<Piece>,
    ) {
        self.run(data, ts, frame, rules, out);
        // A search that found its header hands back the bytes after it;
        // replaying them in a loop (not by recursion) keeps the stack flat
        // however often garbage makes the splitter lose and regain sync.
        while !self.replay.is_empty() {
            let replay = std::mem::take(&mut self.replay);
            self.run(&replay, ts, frame, rules, out);
        }
    }

    fn run(
        &mut self,
        mut data: &[u8],
        ts: Timestamp,
        frame: u64,
        rules: &dyn FrameRules,
        out: &mut Vec<Piece>,
    ) {
        while !data.is_empty() {
            let used = match self.state {
                State::Size => self.read_size(data, out),
                State::Head { size, want } => {
                    let used = self.read_head(data, size, want, rules, out);
                    self.finish_empty_body(ts, frame, out);
                    used
                }
                State::Body { size } => self.read_body(data, size, ts, frame, out),
                State::Skip { size, remaining } => self.skip(data, size, remaining, ts, frame, out),
                State::Search { .. } => self.search(data, rules, out),
            };
            data = data.get(used..).unwrap_or_default();
        }
    }

    /// `missing` bytes were lost. A hole inside the current frame keeps
    /// sync: the frame boundary is still known, only its content is lost,
    /// so the rest of the frame is skipped and the frame is handed on as
    /// incomplete (its header, if read, still pairs it). A hole that runs
    /// past the frame's end, or hits a size prefix, loses sync: the frame
    /// read so far is handed on and the splitter searches for a header.
    pub(crate) fn gap(&mut self, missing: u64, ts: Timestamp, frame: u64, out: &mut Vec<Piece>) {
        let (size, left) = match self.state {
            State::Skip { size, remaining } => (size, remaining as u64),
            State::Head { size, .. } | State::Body { size } => {
                (size, size.saturating_sub(self.buf.len()) as u64)
            }
            State::Size | State::Search { .. } => (0, 0),
        };
        // The skimmed headers cannot be trusted past lost bytes.
        self.skimming = false;
        if size > 0 && missing < left {
            // Keep the captured prefix (bounded): the fields it holds are
            // decoded, the rest of the body is skipped by count.
            self.buf.truncate(KEEP_AFTER_GAP);
            self.cut = true;
            let remaining = (left - missing) as usize;
            self.state = State::Skip { size, remaining };
            return;
        }
        if size > 0 {
            let bytes = std::mem::take(&mut self.buf);
            let f = SplitFrame {
                size,
                bytes,
                complete: false,
                cut: true,
                ts,
                frame,
                skimmed: None,
            };
            out.push(Piece::Frame(f));
        }
        // A hole ending exactly at the frame's end leaves us at a boundary.
        self.buf.clear();
        self.cut = false;
        self.state = if size > 0 && missing == left {
            State::Size
        } else {
            State::Search {
                after_gap: true,
                skipped: 0,
            }
        };
    }

    fn read_size(&mut self, data: &[u8], out: &mut Vec<Piece>) -> usize {
        // The whole size prefix in this piece of stream (nearly always):
        // read in place, so the frame's buffer is allocated once at its
        // room, not first for the four size bytes and then grown.
        if self.buf.is_empty() {
            if let Some(size) = header::size_at(data).filter(|s| header::plausible_frame_size(*s)) {
                self.start_frame(size);
                return 4;
            }
        }
        let used = fill(&mut self.buf, data, 4);
        if let Some(size) = header::size_at(&self.buf) {
            if header::plausible_frame_size(size) {
                self.buf.clear();
                self.start_frame(size);
            } else {
                out.push(Piece::LostSync { size });
                self.lose_sync();
            }
        }
        used
    }

    /// A frame of `size` bytes (after its size prefix) begins.
    fn start_frame(&mut self, size: usize) {
        // Room for the head and a small body at once (a group API's frame
        // is usually whole in it), instead of growing the buffer a few
        // bytes at a time; capped, as `size` is the wire's word.
        self.buf.reserve(size.min(FIRST_ROOM));
        let want = size.min(header::REQUEST_FIXED);
        self.state = State::Head { size, want };
    }

    /// Goes back to searching, keeping what was read after its first byte
    /// (the next frame may start inside a header we misread).
    fn lose_sync(&mut self) {
        let dropped = self.buf.len().min(1);
        self.buf.drain(..dropped);
        self.state = State::Search {
            after_gap: false,
            skipped: dropped as u64,
        };
    }

    fn read_head(
        &mut self,
        data: &[u8],
        size: usize,
        want: usize,
        rules: &dyn FrameRules,
        out: &mut Vec<Piece>,
    ) -> usize {
        let used = fill(&mut self.buf, data, want);
        if self.buf.len() < want {
            return used;
        }
        match rules.plan(&self.buf, size) {
            Plan::NeedMore(n) if n > self.buf.len() && self.buf.len() < size => {
                self.state = State::Head {
                    size,
                    want: n.min(size),
                };
            }
            Plan::Lost => {
                out.push(Piece::LostSync { size });
                let mut with_size = (size as u32).to_be_bytes().to_vec();
                with_size.extend_from_slice(&self.buf);
                self.buf = with_size;
                self.lose_sync();
            }
            Plan::Buffer | Plan::NeedMore(_) if size <= self.max_frame_len => {
                // The body is buffered whole: its room is taken once (up to
                // a cap: a frame cut short must not cost its stated size).
                let room = size.min(BODY_ROOM).saturating_sub(self.buf.len());
                self.buf.reserve_exact(room);
                self.state = State::Body { size };
            }
            Plan::Buffer | Plan::NeedMore(_) => {
                out.push(Piece::Oversized { size });
                self.state = State::Skip {
                    size,
                    remaining: size - self.buf.len(),
                };
            }
            Plan::Skip { keep } => {
                let remaining = size - self.buf.len();
                self.buf.truncate(keep);
                self.state = State::Skip { size, remaining };
            }
            Plan::Skim { keep, version } => {
                let skim = self
                    .skim
                    .get_or_insert_with(|| Box::new(FetchSkim::new(version)));
                skim.reset(version);
                skim.feed(&self.buf);
                self.skimming = true;
                let remaining = size - self.buf.len();
                self.buf.truncate(keep);
                self.state = State::Skip { size, remaining };
            }
        }
        used
    }

    /// A frame whose header was its whole body (or whose skipped rest is
    /// empty) is complete without waiting for more bytes.
    fn finish_empty_body(&mut self, ts: Timestamp, frame: u64, out: &mut Vec<Piece>) {
        match self.state {
            State::Body { size } if self.buf.len() == size => {
                self.read_body(&[], size, ts, frame, out);
            }
            State::Skip { size, remaining: 0 } => {
                self.skip(&[], size, 0, ts, frame, out);
            }
            _ => {}
        }
    }

    fn read_body(
        &mut self,
        data: &[u8],
        size: usize,
        ts: Timestamp,
        frame: u64,
        out: &mut Vec<Piece>,
    ) -> usize {
        let used = fill(&mut self.buf, data, size);
        if self.buf.len() == size {
            let bytes = std::mem::take(&mut self.buf);
            out.push(Piece::Frame(SplitFrame {
                size,
                bytes,
                complete: true,
                cut: false,
                ts,
                frame,
                skimmed: None,
            }));
            self.state = State::Size;
        }
        used
    }

    fn skip(
        &mut self,
        data: &[u8],
        size: usize,
        remaining: usize,
        ts: Timestamp,
        frame: u64,
        out: &mut Vec<Piece>,
    ) -> usize {
        let used = remaining.min(data.len());
        let remaining = remaining - used;
        if let (true, Some(skim)) = (self.skimming, self.skim.as_mut()) {
            skim.feed(&data[..used]);
        }
        if remaining == 0 {
            let bytes = std::mem::take(&mut self.buf);
            out.push(Piece::Frame(SplitFrame {
                size,
                bytes,
                complete: false,
                cut: std::mem::take(&mut self.cut),
                ts,
                frame,
                skimmed: self.take_skimmed(),
            }));
            self.state = State::Size;
        } else {
            self.state = State::Skip { size, remaining };
        }
        used
    }

    /// Appends `data` to the search window and looks for the first offset
    /// where a frame plausibly starts. Consumes all of `data`; once a header
    /// is found, the bytes after it are replayed through the normal path.
    fn search(&mut self, data: &[u8], rules: &dyn FrameRules, out: &mut Vec<Piece>) -> usize {
        let State::Search {
            after_gap,
            mut skipped,
        } = self.state
        else {
            return 0;
        };
        self.buf.extend_from_slice(data);
        let aligned = std::mem::take(&mut self.fresh)
            && rules.trust_aligned_start()
            && resync::aligned_start(&self.buf);
        let scanned = if aligned {
            Scan::Found(0)
        } else {
            resync::scan(&self.buf, rules)
        };
        let (found, drop) = match scanned {
            Scan::Found(at) => (true, at),
            // Keep the window bounded even while waiting for more bytes.
            Scan::Waiting(from) => (
                false,
                from.max(self.buf.len().saturating_sub(SEARCH_WINDOW)),
            ),
        };
        self.buf.drain(..drop);
        skipped += drop as u64;
        if !found {
            self.state = State::Search { after_gap, skipped };
            return data.len();
        }
        if skipped > 0 || after_gap {
            out.push(Piece::Resynced { skipped, after_gap });
        }
        self.state = State::Size;
        self.replay = std::mem::take(&mut self.buf);
        data.len()
    }
}

impl FrameSplitter {
    fn take_skimmed(&mut self) -> Option<Vec<PartitionWatermark>> {
        let skimming = std::mem::take(&mut self.skimming);
        self.skim.as_mut().filter(|_| skimming).map(|s| s.take())
    }
}

/// Room taken for a frame once its size is read.
const FIRST_ROOM: usize = 512;

/// Room taken at most for a body to be buffered, before its bytes came.
const BODY_ROOM: usize = 1 << 20;

/// Moves bytes from `data` into `buf` until it holds `want`; returns how
/// many were used.
fn fill(buf: &mut Vec<u8>, data: &[u8], want: usize) -> usize {
    let n = want.saturating_sub(buf.len()).min(data.len());
    buf.extend_from_slice(&data[..n]);
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::header::Read;

    /// Requests of API 12 are kept, everything else skipped keeping 10 bytes.
    struct Rules;

    impl FrameRules for Rules {
        fn plan(&self, head: &[u8], _size: usize) -> Plan {
            match header::peek_request(head) {
                Read::NeedMore(n) => Plan::NeedMore(n),
                Read::Invalid => Plan::Lost,
                Read::Done(p) if p.api_key == 12 => Plan::Buffer,
                Read::Done(_) => Plan::Skip {
                    keep: header::REQUEST_FIXED,
                },
            }
        }

        fn plausible(&self, at: &[u8]) -> Read<()> {
            header::plausible_request(at)
        }
    }

    fn frame(api: i16, corr: i32, body_len: usize) -> Vec<u8> {
        let mut body = api.to_be_bytes().to_vec();
        body.extend(1i16.to_be_bytes());
        body.extend(corr.to_be_bytes());
        body.extend([0, 2, b'c', b'1']);
        body.extend(std::iter::repeat_n(0xab, body_len));
        let mut f = (body.len() as u32).to_be_bytes().to_vec();
        f.extend(body);
        f
    }

    fn frames(pieces: &[Piece]) -> Vec<(usize, bool, u64)> {
        pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Frame(f) => Some((f.size, f.complete, f.frame)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn completes_a_frame_in_the_packet_that_brings_its_last_byte() {
        let f = frame(12, 1, 30);
        let mut s = FrameSplitter::new(true, 1 << 20);
        let mut out = Vec::new();
        for (i, b) in f.iter().enumerate() {
            s.push(
                std::slice::from_ref(b),
                Timestamp(i as i64),
                i as u64 + 1,
                &Rules,
                &mut out,
            );
        }
        assert_eq!(frames(&out), vec![(f.len() - 4, true, f.len() as u64)]);
        let Piece::Frame(got) = &out[0] else { panic!() };
        assert_eq!(got.bytes, f[4..]);
    }

    #[test]
    fn splits_several_frames_from_one_push() {
        let mut all = frame(12, 1, 3);
        all.extend(frame(0, 2, 500));
        all.extend(frame(12, 3, 0));
        let mut s = FrameSplitter::new(true, 1 << 20);
        let mut out = Vec::new();
        s.push(&all, Timestamp(0), 7, &Rules, &mut out);
        assert_eq!(
            frames(&out),
            vec![(15, true, 7), (512, false, 7), (12, true, 7)]
        );
        assert_eq!(s.buffered_bytes(), 0);
    }

    #[test]
    fn skips_bodies_keeping_only_the_header_prefix() {
        let big = frame(1, 9, 100_000);
        let mut s = FrameSplitter::new(true, 1 << 20);
        let mut out = Vec::new();
        let mut peak = 0;
        for chunk in big.chunks(1000) {
            s.push(chunk, Timestamp(0), 1, &Rules, &mut out);
            peak = peak.max(s.buffered_bytes());
        }
        assert!(peak <= header::REQUEST_FIXED + 2, "peak {peak}");
        let Piece::Frame(f) = &out[0] else { panic!() };
        assert_eq!((f.complete, f.bytes.len()), (false, header::REQUEST_FIXED));
    }

    #[test]
    fn skips_a_decoded_api_frame_larger_than_the_cap() {
        let mut s = FrameSplitter::new(true, 64);
        let mut out = Vec::new();
        s.push(&frame(12, 1, 1000), Timestamp(0), 1, &Rules, &mut out);
        assert!(matches!(out[0], Piece::Oversized { size: 1012 }));
        assert_eq!(frames(&out), vec![(1012, false, 1)]);
    }

    #[test]
    fn finds_the_next_header_after_garbage() {
        let mut s = FrameSplitter::new(false, 1 << 20);
        let mut out = Vec::new();
        let mut bytes = vec![0xff, 0x13, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07];
        bytes.extend(frame(12, 5, 2));
        bytes.extend(frame(12, 6, 2));
        s.push(&bytes, Timestamp(0), 1, &Rules, &mut out);
        assert_eq!(
            out[0],
            Piece::Resynced {
                skipped: 9,
                after_gap: false
            }
        );
        assert_eq!(frames(&out).len(), 2);
    }

    #[test]
    fn loses_sync_on_an_absurd_size_and_finds_it_again() {
        let mut s = FrameSplitter::new(true, 1 << 20);
        let mut out = Vec::new();
        let mut bytes = vec![0x7f, 0xff, 0xff, 0xff];
        bytes.extend(frame(12, 5, 2));
        s.push(&bytes, Timestamp(0), 1, &Rules, &mut out);
        assert_eq!(out[0], Piece::LostSync { size: 0x7fff_ffff });
        assert_eq!(
            out[1],
            Piece::Resynced {
                skipped: 4,
                after_gap: false
            }
        );
        assert_eq!(frames(&out).len(), 1);
    }

    #[test]
    fn a_gap_inside_a_buffered_body_keeps_the_header_and_the_sync() {
        let big = frame(12, 1, 3000);
        let next = frame(12, 2, 1);
        let mut s = FrameSplitter::new(true, 1 << 20);
        let mut out = Vec::new();
        s.push(&big[..1000], Timestamp(0), 1, &Rules, &mut out);
        s.gap(500, Timestamp(0), 2, &mut out);
        assert!(s.buffered_bytes() <= KEEP_AFTER_GAP);
        let mut rest = big[1500..].to_vec();
        rest.extend(&next);
        s.push(&rest, Timestamp(0), 3, &Rules, &mut out);
        let got = frames(&out);
        assert_eq!(got, vec![(3012, false, 3), (13, true, 3)]);
        let Piece::Frame(f) = &out[0] else { panic!() };
        assert_eq!(&f.bytes[..12], &big[4..16]);
    }

    #[test]
    fn bounds_the_search_window() {
        let mut s = FrameSplitter::new(false, 1 << 20);
        let mut out = Vec::new();
        for _ in 0..100 {
            s.push(&[0xee; 4096], Timestamp(0), 1, &Rules, &mut out);
            assert!(s.buffered_bytes() <= SEARCH_WINDOW);
        }
        assert!(out.is_empty());
    }
}
