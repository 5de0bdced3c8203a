//! Reading the fixed start of Kafka frames without decoding them, and
//! judging whether bytes could be the start of a frame.
//!
//! Takes: the first bytes of a frame body (after the 4-byte size). Gives: a
//! [`RequestPeek`] (api key, version, correlation id, client id) read by hand
//! for every API, even those kafka-protocol does not know, so that skipped
//! frames still pair; and the plausibility tests the splitter uses to find
//! its feet after a gap or a mid-stream start. The layout is request header
//! v1/v2's common prefix (`RequestHeader.json`): INT16 api key, INT16 api
//! version, INT32 correlation id, nullable STRING client id (INT16 length,
//! never compact, even in header v2).

use super::apis;

/// Largest frame kgtrace believes in: the broker's default
/// `socket.request.max.bytes` (100 MiB). Fetch responses are bounded by
/// `fetch.max.bytes` (50 MiB by default), so this covers both directions.
pub(crate) const MAX_PLAUSIBLE_FRAME: usize = 100 * 1024 * 1024;

/// Longest client id accepted while resynchronising (real ones are short);
/// once in sync any length that fits the frame is read.
const MAX_PLAUSIBLE_CLIENT_ID: usize = 1024;

/// Bytes of a request header before the client id's text.
pub(crate) const REQUEST_FIXED: usize = 10;

/// The header fields of a request, read by hand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RequestPeek<'a> {
    /// `request_api_key`.
    pub api_key: i16,
    /// `request_api_version`.
    pub api_version: i16,
    /// `correlation_id`.
    pub correlation_id: i32,
    /// `client_id`'s bytes (`None` when null): read as text only where it
    /// is kept, once per connection and client id, not per frame.
    pub client_id: Option<&'a [u8]>,
}

/// Result of reading a header from a possibly short prefix.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Read<T> {
    /// Read.
    Done(T),
    /// At least this many bytes are needed.
    NeedMore(usize),
    /// Cannot be a header.
    Invalid,
}

fn i16_at(b: &[u8], at: usize) -> Option<i16> {
    Some(i16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn i32_at(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The big-endian frame size at the start of `b`, if there are 4 bytes.
pub(crate) fn size_at(b: &[u8]) -> Option<usize> {
    Some(u32::from_be_bytes(b.get(..4)?.try_into().ok()?) as usize)
}

/// Whether a size prefix may start a frame: at least a correlation id, at
/// most [`MAX_PLAUSIBLE_FRAME`].
pub(crate) fn plausible_frame_size(size: usize) -> bool {
    (4..=MAX_PLAUSIBLE_FRAME).contains(&size)
}

/// Reads a request header's common prefix from `body` (no size prefix).
pub(crate) fn peek_request(body: &[u8]) -> Read<RequestPeek<'_>> {
    let (Some(api_key), Some(api_version), Some(correlation_id), Some(len)) = (
        i16_at(body, 0),
        i16_at(body, 2),
        i32_at(body, 4),
        i16_at(body, 8),
    ) else {
        return Read::NeedMore(REQUEST_FIXED);
    };
    let client_id = match len {
        -1 => None,
        n if n < 0 => return Read::Invalid,
        n => match body.get(REQUEST_FIXED..REQUEST_FIXED + n as usize) {
            Some(text) => Some(text),
            None => return Read::NeedMore(REQUEST_FIXED + n as usize),
        },
    };
    Read::Done(RequestPeek {
        api_key,
        api_version,
        correlation_id,
        client_id,
    })
}

/// The correlation id at the start of a response body.
pub(crate) fn peek_correlation_id(body: &[u8]) -> Option<i32> {
    i32_at(body, 0)
}

/// Whether `at` (starting with a 4-byte size) looks like the start of a
/// request frame: sane size, known API key, existing version, non-negative
/// correlation id, short non-empty printable client id that fits the frame.
pub(crate) fn plausible_request(at: &[u8]) -> Read<()> {
    let Some(size) = size_at(at) else {
        return Read::NeedMore(4);
    };
    if !(REQUEST_FIXED..=MAX_PLAUSIBLE_FRAME).contains(&size) {
        return Read::Invalid;
    }
    let body = &at[4..];
    let (Some(api_key), Some(version), Some(corr), Some(len)) = (
        i16_at(body, 0),
        i16_at(body, 2),
        i32_at(body, 4),
        i16_at(body, 8),
    ) else {
        return Read::NeedMore(4 + REQUEST_FIXED);
    };
    if !apis::plausible_version(api_key, version) || corr < 0 {
        return Read::Invalid;
    }
    // Every client library sends a non-empty client id by default
    // (rdkafka, consumer-<group>-<n>, kafkajs, sarama, kgo); null or empty
    // ones are legal but rare, while zero-filled data is full of them.
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    if len == 0 || len > MAX_PLAUSIBLE_CLIENT_ID || REQUEST_FIXED + len > size {
        return Read::Invalid;
    }
    match body.get(REQUEST_FIXED..REQUEST_FIXED + len) {
        None => Read::NeedMore(4 + REQUEST_FIXED + len),
        Some(text) if text.iter().all(|&c| (0x20..0x7f).contains(&c)) => Read::Done(()),
        Some(_) => Read::Invalid,
    }
}

/// Whether `at` (starting with a 4-byte size) looks like the start of a
/// response frame answering a request for which `in_flight` says yes.
pub(crate) fn plausible_response(at: &[u8], in_flight: impl Fn(i32) -> bool) -> Read<()> {
    let Some(size) = size_at(at) else {
        return Read::NeedMore(4);
    };
    if !plausible_frame_size(size) {
        return Read::Invalid;
    }
    match i32_at(at, 4) {
        None => Read::NeedMore(8),
        Some(corr) if in_flight(corr) => Read::Done(()),
        Some(_) => Read::Invalid,
    }
}

/// Bytes a Produce request's `acks` may lie beyond its start (a long
/// transactional id); past this the request is assumed to want an answer.
pub(crate) const PRODUCE_PEEK: usize = 4096;

/// An unsigned varint at `at`: `(value, next offset)`.
fn varint_at(b: &[u8], mut at: usize) -> Read<(u64, usize)> {
    let mut value = 0u64;
    for shift in (0..35).step_by(7) {
        let Some(&byte) = b.get(at) else {
            return Read::NeedMore(at + 1);
        };
        at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Read::Done((value, at));
        }
    }
    Read::Invalid
}

/// The `acks` of a Produce request, from its body's first bytes. With
/// `acks` 0 the broker sends no response at all (`ProduceRequest.json`), so
/// such a request must not wait for one. Layout after the request header
/// (v2 from Produce v9, with tagged fields): `transactional_id` (v3+,
/// compact from v9), then INT16 `acks`.
pub(crate) fn produce_acks(body: &[u8], version: i16) -> Read<i16> {
    macro_rules! read {
        ($e:expr) => {
            match $e {
                Read::Done(v) => v,
                Read::NeedMore(n) => return Read::NeedMore(n),
                Read::Invalid => return Read::Invalid,
            }
        };
    }
    let Some(len) = i16_at(body, 8) else {
        return Read::NeedMore(REQUEST_FIXED);
    };
    let mut at = REQUEST_FIXED + usize::try_from(len).unwrap_or(0);
    if version >= 9 {
        let (fields, next) = read!(varint_at(body, at));
        at = next;
        for _ in 0..fields.min(64) {
            let (_tag, next) = read!(varint_at(body, at));
            let (size, next) = read!(varint_at(body, next));
            at = next.saturating_add(usize::try_from(size).unwrap_or(usize::MAX));
        }
    }
    if version >= 9 {
        let (n, next) = read!(varint_at(body, at));
        at = next.saturating_add(usize::try_from(n.saturating_sub(1)).unwrap_or(usize::MAX));
    } else if version >= 3 {
        let Some(n) = i16_at(body, at) else {
            return Read::NeedMore(at + 2);
        };
        at += 2 + usize::try_from(n).unwrap_or(0);
    }
    match i16_at(body, at) {
        Some(acks) => Read::Done(acks),
        None if at > PRODUCE_PEEK => Read::Invalid,
        None => Read::NeedMore(at + 2),
    }
}

/// Whether a stream starts like a TLS record (handshake 0x16 or application
/// data 0x17, version 0x03 0x00..0x04). As a Kafka size these would claim
/// frames of over 360 MiB, so no real Kafka stream starts this way.
pub(crate) fn looks_like_tls(first: &[u8]) -> bool {
    matches!(first, [0x16 | 0x17, 0x03, 0x00..=0x04, ..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(api: i16, version: i16, corr: i32, client: &str) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend(api.to_be_bytes());
        body.extend(version.to_be_bytes());
        body.extend(corr.to_be_bytes());
        body.extend((client.len() as i16).to_be_bytes());
        body.extend(client.as_bytes());
        body.extend([0u8; 6]);
        let mut framed = (body.len() as u32).to_be_bytes().to_vec();
        framed.extend(body);
        framed
    }

    #[test]
    fn reads_a_request_prefix_and_asks_for_more_when_short() {
        let f = request(12, 4, 7, "rdkafka");
        assert_eq!(peek_request(&f[4..10]), Read::NeedMore(10));
        assert_eq!(peek_request(&f[4..15]), Read::NeedMore(17));
        let Read::Done(p) = peek_request(&f[4..]) else {
            panic!("not read")
        };
        assert_eq!((p.api_key, p.api_version, p.correlation_id), (12, 4, 7));
        assert_eq!(p.client_id, Some(&b"rdkafka"[..]));
    }

    #[test]
    fn judges_request_headers() {
        assert_eq!(plausible_request(&request(12, 4, 7, "c")), Read::Done(()));
        assert_eq!(plausible_request(&request(12, 4, -7, "c")), Read::Invalid);
        assert_eq!(plausible_request(&request(999, 0, 7, "c")), Read::Invalid);
        assert_eq!(plausible_request(&request(12, 30, 7, "c")), Read::Invalid);
        assert_eq!(
            plausible_request(&request(12, 4, 7, "a\u{1}b")),
            Read::Invalid
        );
        assert_eq!(plausible_request(&[0, 0, 0]), Read::NeedMore(4));
        assert_eq!(plausible_request(&[0x7f, 0, 0, 0, 0]), Read::Invalid);
    }

    #[test]
    fn judges_responses_by_their_correlation_id() {
        let r = [0, 0, 0, 6, 0, 0, 0, 9, 0, 0];
        assert_eq!(plausible_response(&r, |c| c == 9), Read::Done(()));
        assert_eq!(plausible_response(&r, |c| c == 8), Read::Invalid);
        assert_eq!(plausible_response(&r[..6], |_| true), Read::NeedMore(8));
    }

    #[test]
    fn finds_the_acks_of_produce_requests_of_every_layout() {
        // The header alone: api, version, correlation id, client id "p".
        let head = |v: i16| request(0, v, 1, "p")[4..15].to_vec();
        // v2: acks first.
        let mut v2 = head(2);
        v2.extend([0, 0, 0, 0, 0x75, 0x30]);
        assert_eq!(produce_acks(&v2, 2), Read::Done(0));
        // v3: null transactional id, then acks -1.
        let mut v3 = head(3);
        v3.extend([0xff, 0xff, 0xff, 0xff]);
        assert_eq!(produce_acks(&v3, 3), Read::Done(-1));
        assert_eq!(produce_acks(&v3[..13], 3), Read::NeedMore(15));
        // v9: header tagged fields (one, 2 bytes), compact id "tx", acks 1.
        let mut v9 = head(9);
        v9.extend([1, 5, 2, 0xaa, 0xbb, 3, b't', b'x', 0, 1]);
        assert_eq!(produce_acks(&v9, 9), Read::Done(1));
    }

    #[test]
    fn spots_tls_records() {
        assert!(looks_like_tls(&[0x16, 0x03, 0x01, 0x02, 0x00]));
        assert!(!looks_like_tls(&[0x00, 0x00, 0x01, 0x02]));
    }
}
