//! Recognising Kafka on ports nobody named.
//!
//! Takes: the first bytes of a connection whose ports are not configured.
//! Gives: a [`Verdict`]: Kafka (and which way requests flow) or not. A
//! connection is Kafka when one direction starts with a plausible request
//! header (sane size, known API key and version, non-negative correlation
//! id, short printable client id) and the other direction's first frame
//! answers that correlation id. Real deployments use 9093, 9094, 19092 or
//! random ports, so port numbers alone miss traffic; requiring the answer
//! keeps other protocols (a decoy whose bytes happen to parse) out. Until a
//! verdict, the bytes are kept (bounded by [`DETECT_CAP`]) and replayed in
//! order once the connection is known to be Kafka.

use crate::tcp::{ConnectionKey, Direction};
use crate::time::Timestamp;

use super::header::{self, Read};

/// Bytes kept per connection while deciding; past this, decide on what
/// was seen.
pub(crate) const DETECT_CAP: usize = 256 * 1024;

/// Enough bytes for a request header with the longest plausible client id.
const HEADER_WINDOW: usize = 4 + header::REQUEST_FIXED + 1024;

/// One kept piece of the stream (`gap > 0` marks lost bytes instead).
pub(crate) struct Chunk {
    pub dir: Direction,
    pub ts: Timestamp,
    pub frame: u64,
    pub bytes: Vec<u8>,
    pub gap: u64,
}

/// The decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Kafka; `flipped` when requests flow in [`Direction::ToClient`].
    Kafka { flipped: bool },
    /// Something else.
    NotKafka,
}

/// A connection being classified.
pub(crate) struct Pending {
    key: ConnectionKey,
    syn_seen: bool,
    chunks: Vec<Chunk>,
    bytes: usize,
}

impl Pending {
    /// Nothing seen yet.
    pub(crate) fn new(key: ConnectionKey, syn_seen: bool) -> Self {
        Pending {
            key,
            syn_seen,
            chunks: Vec::new(),
            bytes: 0,
        }
    }

    /// The ends as TCP guessed them.
    pub(crate) fn key(&self) -> ConnectionKey {
        self.key
    }

    /// Whether the SYN was seen.
    pub(crate) fn syn_seen(&self) -> bool {
        self.syn_seen
    }

    /// Bytes kept.
    pub(crate) fn buffered_bytes(&self) -> usize {
        self.bytes
    }

    /// The earliest time and frame among the kept pieces: once the
    /// connection is told Kafka, a request among them is decoded with them.
    pub(crate) fn first_held(&self) -> Option<(Timestamp, u64)> {
        self.chunks.iter().map(|c| (c.ts, c.frame)).min()
    }

    /// The kept pieces, in arrival order.
    pub(crate) fn into_chunks(self) -> Vec<Chunk> {
        self.chunks
    }

    /// Keeps bytes.
    pub(crate) fn push(&mut self, dir: Direction, ts: Timestamp, frame: u64, bytes: &[u8]) {
        self.bytes += bytes.len();
        self.chunks.push(Chunk {
            dir,
            ts,
            frame,
            bytes: bytes.to_vec(),
            gap: 0,
        });
    }

    /// Notes lost bytes: the direction's first bytes end here.
    pub(crate) fn gap(&mut self, dir: Direction, ts: Timestamp, frame: u64, missing: u64) {
        self.chunks.push(Chunk {
            dir,
            ts,
            frame,
            bytes: Vec::new(),
            gap: missing.max(1),
        });
    }

    /// The first `n` contiguous bytes sent in `dir`.
    fn first_bytes(&self, dir: Direction, n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for c in self.chunks.iter().filter(|c| c.dir == dir) {
            if c.gap > 0 || out.len() >= n {
                break;
            }
            out.extend_from_slice(&c.bytes[..c.bytes.len().min(n - out.len())]);
        }
        out
    }

    /// Decides, or `None` to wait for more bytes. `last_chance` (the
    /// connection closed or the input ended) decides on what there is.
    /// Both orientations are tried: a response can itself parse as a
    /// request header (`00 00 00 0a 00 00 00 03` reads as Produce v3), so
    /// only the pairing of a request with its answer settles it.
    pub(crate) fn verdict(&self, last_chance: bool) -> Option<Verdict> {
        let decide_now = last_chance || self.bytes >= DETECT_CAP;
        let to_server = self.first_bytes(Direction::ToServer, HEADER_WINDOW);
        let to_client = self.first_bytes(Direction::ToClient, HEADER_WINDOW);
        let outcomes = [
            pairing(&to_server, &to_client),
            pairing(&to_client, &to_server),
        ];
        let flipped_of = |i: usize| Verdict::Kafka { flipped: i == 1 };
        if let Some(i) = outcomes.iter().position(|o| *o == Pairing::Answered) {
            return Some(flipped_of(i));
        }
        if !decide_now {
            let waiting = outcomes
                .iter()
                .any(|o| matches!(o, Pairing::Unsure | Pairing::Unanswered));
            return if waiting {
                None
            } else {
                Some(Verdict::NotKafka)
            };
        }
        // No answer can come any more: a plausible request alone will do.
        match outcomes.iter().position(|o| *o == Pairing::Unanswered) {
            Some(i) => Some(flipped_of(i)),
            None => Some(Verdict::NotKafka),
        }
    }
}

/// How one orientation (requests in `requests`, answers in `answers`) fits.
#[derive(Debug, PartialEq, Eq)]
enum Pairing {
    /// A plausible request, answered with its correlation id.
    Answered,
    /// A plausible request, no answer yet.
    Unanswered,
    /// Not enough bytes to judge the request.
    Unsure,
    /// Not this way round.
    No,
}

fn pairing(requests: &[u8], answers: &[u8]) -> Pairing {
    match header::plausible_request(requests) {
        Read::Done(()) => {}
        Read::NeedMore(_) => return Pairing::Unsure,
        Read::Invalid => return Pairing::No,
    }
    let asked = header::peek_correlation_id(requests.get(8..).unwrap_or_default());
    match header::plausible_response(answers, |c| Some(c) == asked) {
        Read::Done(()) => Pairing::Answered,
        Read::NeedMore(_) => Pairing::Unanswered,
        Read::Invalid => Pairing::No,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> ConnectionKey {
        ConnectionKey {
            client: "10.0.0.1:40000".parse().unwrap(),
            server: "10.0.0.2:19092".parse().unwrap(),
        }
    }

    fn heartbeat_request(corr: i32) -> Vec<u8> {
        let mut body = vec![0, 12, 0, 1];
        body.extend(corr.to_be_bytes());
        body.extend([0, 1, b'c']);
        body.extend([0u8; 12]);
        let mut f = (body.len() as u32).to_be_bytes().to_vec();
        f.extend(body);
        f
    }

    fn response(corr: i32) -> Vec<u8> {
        let mut f = vec![0, 0, 0, 10];
        f.extend(corr.to_be_bytes());
        f.extend([0u8; 6]);
        f
    }

    #[test]
    fn recognises_kafka_when_the_answer_carries_the_same_correlation_id() {
        let mut p = Pending::new(key(), true);
        p.push(Direction::ToServer, Timestamp(1), 1, &heartbeat_request(7));
        assert_eq!(p.verdict(false), None);
        p.push(Direction::ToClient, Timestamp(2), 2, &response(7));
        assert_eq!(p.verdict(false), Some(Verdict::Kafka { flipped: false }));
    }

    #[test]
    fn rejects_an_answer_with_another_correlation_id() {
        let mut p = Pending::new(key(), true);
        p.push(Direction::ToServer, Timestamp(1), 1, &heartbeat_request(7));
        p.push(Direction::ToClient, Timestamp(2), 2, &response(8));
        assert_eq!(p.verdict(false), Some(Verdict::NotKafka));
    }

    #[test]
    fn finds_requests_flowing_the_other_way() {
        let mut p = Pending::new(key(), false);
        p.push(Direction::ToClient, Timestamp(1), 1, &heartbeat_request(3));
        p.push(Direction::ToServer, Timestamp(2), 2, &response(3));
        assert_eq!(p.verdict(false), Some(Verdict::Kafka { flipped: true }));
    }

    #[test]
    fn rejects_text_protocols() {
        let mut p = Pending::new(key(), true);
        p.push(
            Direction::ToServer,
            Timestamp(1),
            1,
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        );
        p.push(
            Direction::ToClient,
            Timestamp(2),
            2,
            b"HTTP/1.1 200 OK\r\n\r\n",
        );
        assert_eq!(p.verdict(false), Some(Verdict::NotKafka));
    }
}
