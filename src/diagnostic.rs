//! Traffic and input anomalies, kept as data.
//!
//! Takes: anomalies from any stage (a truncated capture, a TCP gap, an
//! undecodable Kafka frame, a log line nobody recognises). Gives:
//! [`Diagnostics`], a counter per kind plus the first few examples of each
//! with where they happened. Nothing here is fatal: fatal problems are
//! [`crate::error::Error`]. Memory is bounded: only
//! [`Diagnostics::EXAMPLES_PER_KIND`] examples are kept per kind; the rest
//! are counted.

use std::collections::BTreeMap;

use serde::Serialize;

/// The kinds of anomaly, named for the summary line and JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagnosticKind {
    /// The capture file ended in the middle of a record.
    TruncatedCapture,
    /// A packet could not be sliced (bad IP/TCP header, cut by snaplen).
    MalformedPacket,
    /// The capture's snap length cut packets short: their messages were
    /// decoded only as far as their captured bytes go (one per input).
    SnapLength,
    /// A non-TCP or non-IP packet (counted, not an anomaly for Kafka).
    NonTcpPacket,
    /// A TCP connection was picked up without its SYN.
    MidStreamStart,
    /// Bytes missing in a TCP stream (lost packets); the stream resynced.
    StreamGap,
    /// Per-direction buffer cap reached; buffered bytes were dropped.
    BufferOverflow,
    /// The Kafka frame splitter skipped bytes to find a plausible header.
    Resynced,
    /// A Kafka message could not be decoded (unknown key, version, bytes).
    UndecodableMessage,
    /// A response whose request was not captured.
    UnmatchedResponse,
    /// A request still unanswered at the end of the capture.
    UnansweredRequest,
    /// `decode` or `timeline`, written while a capture is read, wrote rows
    /// after rows later in their order: too many waited at once for an
    /// earlier request's answer (one per run, counting them); `rebalances`
    /// of a log written as records settle met a line too far back in time
    /// (also a warning on stderr).
    RowOrder,
    /// TLS seen on a Kafka port: nothing on that connection can be read.
    Encrypted,
    /// A log line the reader does not know.
    UnknownLogLine,
    /// A log line whose time could not be read.
    BadLogTimestamp,
    /// A local log time that daylight saving time makes ambiguous.
    AmbiguousLocalTime,
    /// Anything the reconstructor could not see or had to guess.
    Reconstruction,
    /// A log ended in a read error (a cut `.gz`); the lines before were read.
    TruncatedLog,
    /// An input, or a file in a directory, skipped, read in part or giving
    /// no event: named, with what it looked like (also a warning on
    /// stderr).
    SkippedInput,
    /// An input read whole whose group events make no rebalance: named,
    /// with what its events were and why no round can be told (also a
    /// warning on stderr).
    NoRebalance,
    /// The inputs held rows of the view but the filters kept none: which
    /// flag removed them and what was there instead (also a warning on
    /// stderr).
    NothingMatched,
}

impl DiagnosticKind {
    /// Kinds also said, example by example, as warnings on stderr: each
    /// explains an answer that would otherwise be empty, partial or out of
    /// order (rows written while read came after later ones: a format that
    /// sorts everything first, which `--format json` does, has no such row
    /// to explain it).
    pub const WARNINGS: [DiagnosticKind; 4] = [
        DiagnosticKind::SkippedInput,
        DiagnosticKind::NoRebalance,
        DiagnosticKind::NothingMatched,
        DiagnosticKind::RowOrder,
    ];

    /// The kind's name in every output (`stream_gap`).
    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_else(|| format!("{self:?}"))
    }
}

/// One anomaly and where it happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// What kind.
    pub kind: DiagnosticKind,
    /// Input file.
    pub source: String,
    /// Where in it: `frame 12`, `line 40`, `offset 1024`, or a connection.
    pub at: String,
    /// What happened, in words.
    pub detail: String,
}

/// Counted anomalies with a bounded list of examples.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Diagnostics {
    /// How many of each kind were seen.
    pub counts: BTreeMap<DiagnosticKind, u64>,
    /// The first examples of each kind.
    pub examples: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Examples kept per kind; the rest are only counted.
    pub const EXAMPLES_PER_KIND: u64 = 20;

    /// Records one anomaly.
    pub fn push(&mut self, diagnostic: Diagnostic) {
        let count = self.counts.entry(diagnostic.kind).or_insert(0);
        *count += 1;
        if *count <= Self::EXAMPLES_PER_KIND {
            self.examples.push(diagnostic);
        }
    }

    /// Records one anomaly from its parts.
    pub fn add(
        &mut self,
        kind: DiagnosticKind,
        source: &str,
        at: impl Into<String>,
        detail: impl Into<String>,
    ) {
        self.push(Diagnostic {
            kind,
            source: source.to_string(),
            at: at.into(),
            detail: detail.into(),
        });
    }

    /// Adds another collector's counts and examples to this one.
    pub fn merge(&mut self, other: Diagnostics) {
        for example in other.examples {
            let kept = self
                .examples
                .iter()
                .filter(|d| d.kind == example.kind)
                .count() as u64;
            if kept < Self::EXAMPLES_PER_KIND {
                self.examples.push(example);
            }
        }
        for (kind, n) in other.counts {
            *self.counts.entry(kind).or_insert(0) += n;
        }
    }

    /// Total anomalies of every kind.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// How many of one kind.
    pub fn count(&self, kind: DiagnosticKind) -> u64 {
        self.counts.get(&kind).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_everything_but_keeps_a_bounded_number_of_examples() {
        let mut d = Diagnostics::default();
        for i in 0..100 {
            d.add(
                DiagnosticKind::StreamGap,
                "a.pcap",
                format!("frame {i}"),
                "gap",
            );
        }
        assert_eq!(d.count(DiagnosticKind::StreamGap), 100);
        assert_eq!(d.examples.len() as u64, Diagnostics::EXAMPLES_PER_KIND);
    }
}
