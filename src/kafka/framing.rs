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

use super::header::{self, Read};

/// Bytes kept while searching for a plausible header; older bytes are
/// dropped (and counted as skipped).
pub(crate) const SEARCH_WINDOW: usize = 64 * 1024;

/// What to do with a frame whose first bytes have been read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Read at least this many body bytes before deciding.
    NeedMore(usize),
    /// Keep the whole body (a decoded API).
    Buffer,
    /// Skip the body, keeping only its first `keep` bytes.
    Skip {
        /// Prefix bytes to keep.
        keep: usize,
    },
    /// The header is impossible: we are not at a frame boundary.
    Lost,
}

/// Per-direction knowledge the splitter asks for.
pub(crate) trait FrameRules {
    /// Decides, from the body's first bytes and its size, what to keep.
    fn plan(&self, head: &[u8], size: usize) -> Plan;
    /// Whether `at` (4-byte size first) could start a frame here.
    fn plausible(&self, at: &[u8]) -> Read<()>;
    /// Whether `at` could start the frame after a plausible one (a weaker
    /// test where the next frame's context is unknown).
    fn plausible_next(&self, at: &[u8]) -> Read<()> {
        self.plausible(at)
    }
}

/// One frame's worth of bytes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct SplitFrame {
    /// Body size as the size prefix states it.
    pub size: usize,
    /// The whole body when `complete`, else its kept prefix.
    pub bytes: Vec<u8>,
    /// Whether `bytes` is the whole body.
    pub complete: bool,
    /// Time of the packet that completed the frame.
    pub ts: Timestamp,
    /// Frame number of that packet.
    pub frame: u64,
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
    max_frame_len: usize,
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
            max_frame_len,
        }
    }

    /// Bytes currently held (header prefixes, decoded bodies, search window).
    pub(crate) fn buffered_bytes(&self) -> usize {
        self.buf.len() + self.replay.len()
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

    /// `missing` bytes were lost. Inside a skipped body the loss is
    /// harmless (we were not reading it) and sync is kept; anywhere else the
    /// splitter searches for the next plausible header.
    pub(crate) fn gap(&mut self, missing: u64, ts: Timestamp, frame: u64, out: &mut Vec<Piece>) {
        if let State::Skip { size, remaining } = self.state {
            if missing <= remaining as u64 {
                let remaining = remaining - missing as usize;
                self.state = State::Skip { size, remaining };
                if remaining == 0 {
                    self.skip(&[], size, 0, ts, frame, out);
                }
                return;
            }
        }
        self.buf.clear();
        self.state = State::Search {
            after_gap: true,
            skipped: 0,
        };
    }

    fn read_size(&mut self, data: &[u8], out: &mut Vec<Piece>) -> usize {
        let used = fill(&mut self.buf, data, 4);
        if let Some(size) = header::size_at(&self.buf) {
            if (4..=header::MAX_PLAUSIBLE_FRAME).contains(&size) {
                self.buf.clear();
                let want = size.min(header::REQUEST_FIXED);
                self.state = State::Head { size, want };
            } else {
                out.push(Piece::LostSync { size });
                self.lose_sync();
            }
        }
        used
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
                ts,
                frame,
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
        if remaining == 0 {
            let bytes = std::mem::take(&mut self.buf);
            out.push(Piece::Frame(SplitFrame {
                size,
                bytes,
                complete: false,
                ts,
                frame,
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
        // An offset that needs more bytes to judge (a long client id not
        // yet arrived) does not stop the scan: a later offset that is
        // plausible now wins; otherwise the search waits at the first one.
        let mut undecided = None;
        let mut at = 0;
        let found = loop {
            match self.buf.get(at..).map(|rest| judge(rules, rest)) {
                Some(Read::Done(())) => break true,
                Some(Read::Invalid) => at += 1,
                Some(Read::NeedMore(_)) => {
                    undecided = undecided.or(Some(at));
                    at += 1;
                }
                None => break false,
            }
        };
        // Keep the window bounded even while waiting for more bytes.
        let overflow = self.buf.len().saturating_sub(SEARCH_WINDOW);
        let drop = if found {
            at
        } else {
            undecided.unwrap_or(at).max(overflow)
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

/// Whether a frame plausibly starts at `rest`: its header must be
/// plausible and, when the frame ends inside the window, whatever follows it
/// must plausibly start the next frame (zero-filled data is full of
/// headers that look fine alone).
fn judge(rules: &dyn FrameRules, rest: &[u8]) -> Read<()> {
    match rules.plausible(rest) {
        Read::Done(()) => {}
        other => return other,
    }
    let next = header::size_at(rest).and_then(|size| rest.get(size.saturating_add(4)..));
    match next {
        Some(next) if !next.is_empty() => match rules.plausible_next(next) {
            Read::Invalid => Read::Invalid,
            _ => Read::Done(()),
        },
        _ => Read::Done(()),
    }
}

/// Moves bytes from `data` into `buf` until it holds `want`; returns how
/// many were used.
fn fill(buf: &mut Vec<u8>, data: &[u8], want: usize) -> usize {
    let n = want.saturating_sub(buf.len()).min(data.len());
    buf.extend_from_slice(&data[..n]);
    n
}
