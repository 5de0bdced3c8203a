//! Decoding untrusted bytes with kafka-protocol without letting a bogus
//! array count abort the process or reserve more memory than the message
//! could fill.
//!
//! Takes: a message body and its version. Gives: the kafka-protocol struct,
//! or an error, never an abort. kafka-protocol 0.18 sizes each array with
//! `Vec::with_capacity(count)` straight from the wire before reading an
//! element (kafka-protocol-rs PRs #152, #161, #200, still open), so four
//! corrupt bytes can demand gigabytes; an allocation failure aborts, which no
//! `catch_unwind` can stop.
//!
//! The crate reads through a [`Guard`] buffer. Any INT32 or unsigned varint
//! (an array count, a string or bytes length, a tag, or a plain field) that
//! is *suspect* — larger than the bytes left, or larger than
//! [`MAX_ARRAY_ELEMENTS`] — is replaced by a small `fill` (a varint is
//! looked at whole, so its replacement is one terminating byte and never a
//! value shifted into high bits). Then:
//! - a replaced value that the crate uses at once as the size of a bytes or
//!   string read is a *length*: lengths only slice the buffer, so that
//!   position is allowed its true value and the message decoded again;
//! - with no suspect value left, that decode is exact and is the answer;
//! - otherwise the message is decoded again with a second `fill`: a replaced
//!   *count* changes how many elements are read, so the read positions
//!   differ; a replaced plain field (a rebalance timeout of 300000) changes
//!   nothing. Same positions → every replaced value was a plain field, so an
//!   unguarded decode is safe and gives the true values; different positions
//!   → an array count is over the cap or the bytes left, and the message is
//!   refused with that reason.
//!
//! So no array is ever reserved for more than [`MAX_ARRAY_ELEMENTS`]
//! elements or more elements than bytes left (docs/limits.md). A message
//! crafted so that one extra element re-aligns every later read could still
//! pass; random corruption cannot in practice. The real fix belongs
//! upstream (the PRs above).

use std::ops::Range;

use bytes::{Buf, Bytes, TryGetError};
use kafka_protocol::protocol::buf::ByteBuf;
use kafka_protocol::protocol::Decodable;

/// Most elements one array of a decoded message may declare. Kafka has no
/// protocol limit on members or partitions (`group.max.size` defaults to
/// `Integer.MAX_VALUE`); its bound is `socket.request.max.bytes` (100 MiB).
/// 2^17 elements of at most ~128 bytes in memory each keeps one array's
/// reservation near 16 MiB, and no real group has 131,072 members or one
/// member 131,072 partitions of one topic in an assignment.
pub(crate) const MAX_ARRAY_ELEMENTS: usize = 1 << 17;

/// Most lengths over [`MAX_ARRAY_ELEMENTS`] one message may hold before it
/// is refused (each costs one more decode).
const MAX_LONG_FIELDS: usize = 64;

/// A read-only buffer that records read positions and replaces suspect
/// counts.
struct Guard<'a> {
    bytes: Bytes,
    pos: usize,
    fill: u8,
    /// Positions of values known to be lengths: handed out true.
    lengths: &'a [usize],
    /// Whether a suspect value was replaced.
    replaced: bool,
    /// The last value replaced: where it started, and whether the very next
    /// read may still show it to be a length.
    last_replaced: Option<usize>,
    /// A replaced value turned out to be a length at this position: the
    /// decode is stopped (every read fails) and done again.
    found_length: Option<usize>,
    /// Read positions from the first replacement on. Both decodes read the
    /// same positions up to their first replacement (same bytes, same known
    /// lengths; the fill only matters once a value is replaced), so only
    /// what follows can differ. Nearly every message has no replacement:
    /// recording every read grew a vector per message (2.5 % of the
    /// instructions on a dense coordinator capture, callgrind).
    trace: Vec<usize>,
    /// Continuation bytes of an accepted varint still to hand out as read.
    varint_left: u8,
}

impl<'a> Guard<'a> {
    fn new(bytes: Bytes, fill: u8, lengths: &'a [usize]) -> Guard<'a> {
        Guard {
            bytes,
            pos: 0,
            fill,
            lengths,
            replaced: false,
            last_replaced: None,
            found_length: None,
            trace: Vec::new(),
            varint_left: 0,
        }
    }

    /// Whether a value starting at `at`, read as `elements` array elements
    /// with the bytes from `after` on left for them, is replaced.
    /// A known length may pass the cap (a long string or bytes field), but
    /// never the bytes left: no well-formed length does, and a count taken
    /// for a length there would reserve that many elements (fuzz finding
    /// `oom-04cf6569`: a Metadata answer's replica count of 2^32 - 2,
    /// 17 GB).
    fn suspect(&self, at: usize, after: usize, elements: u64) -> bool {
        let left = self.bytes.len().saturating_sub(after) as u64;
        elements > left || (elements > MAX_ARRAY_ELEMENTS as u64 && !self.lengths.contains(&at))
    }

    fn replace(&mut self, at: usize) {
        self.replaced = true;
        self.last_replaced = Some(at);
    }

    /// Called by every bytes read: a read of the fill's size right after a
    /// replacement shows the replaced value was a length.
    fn saw_bytes_read(&mut self, size: usize) {
        if let Some(at) = self.last_replaced.take() {
            let fill = usize::from(self.fill);
            if size == fill || size + 1 == fill {
                self.found_length = Some(at);
            }
        }
    }

    fn halted(&self) -> bool {
        self.found_length.is_some()
    }

    /// The unsigned varint starting at `at`, read as kafka-protocol reads it
    /// (at most 5 bytes, high bits beyond 32 dropped), and its length.
    fn varint_at(&self, at: usize) -> (u64, usize) {
        let mut value: u32 = 0;
        let mut len = 0;
        for (i, &b) in self.bytes[at..].iter().take(5).enumerate() {
            value |= u32::from(b & 0x7f).wrapping_shl(7 * i as u32);
            len = i + 1;
            if b < 0x80 {
                break;
            }
        }
        (u64::from(value), len)
    }
}

impl Buf for Guard<'_> {
    fn remaining(&self) -> usize {
        if self.halted() {
            return 0;
        }
        self.bytes.len().saturating_sub(self.pos)
    }

    fn chunk(&self) -> &[u8] {
        if self.halted() {
            return &[];
        }
        self.bytes.get(self.pos..).unwrap_or_default()
    }

    fn advance(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.bytes.len());
        if self.replaced {
            self.trace.push(self.pos);
        }
        self.last_replaced = None;
    }

    fn try_get_i32(&mut self) -> Result<i32, TryGetError> {
        let at = self.pos;
        let Some(raw) = self.chunk().get(..4) else {
            return Err(TryGetError {
                requested: 4,
                available: self.remaining(),
            });
        };
        let value = i32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]);
        self.advance(4);
        if value > 0 && self.suspect(at, at + 4, value as u64) {
            self.replace(at);
            return Ok(i32::from(self.fill));
        }
        Ok(value)
    }

    /// kafka-protocol reads varints a byte at a time (`UnsignedVarInt`).
    /// At a varint's first byte the whole varint is looked at: if suspect,
    /// it is skipped and `fill` handed out as a one-byte varint.
    fn try_get_u8(&mut self) -> Result<u8, TryGetError> {
        let at = self.pos;
        let Some(&b) = self.chunk().first() else {
            return Err(TryGetError {
                requested: 1,
                available: 0,
            });
        };
        if self.varint_left > 0 {
            self.varint_left -= 1;
            self.advance(1);
            return Ok(b);
        }
        let (value, len) = self.varint_at(at);
        if b >= 0x80 && self.suspect(at, at + len, value.saturating_sub(1)) {
            self.advance(len);
            self.replace(at);
            return Ok(self.fill);
        }
        if b >= 0x80 {
            self.varint_left = (len - 1) as u8;
        }
        self.advance(1);
        Ok(b)
    }
}

impl ByteBuf for Guard<'_> {
    fn peek_bytes(&mut self, r: Range<usize>) -> Bytes {
        let (start, end) = (self.pos + r.start, (self.pos + r.end).min(self.bytes.len()));
        self.bytes.slice(start.min(end)..end)
    }

    fn get_bytes(&mut self, size: usize) -> Bytes {
        self.saw_bytes_read(size);
        let end = (self.pos + size).min(self.bytes.len());
        let out = self.bytes.slice(self.pos..end);
        self.advance(size);
        out
    }
}

/// Decodes `T` from the front of `buf` at `version`, advancing `buf` past
/// what was read; an array count over the bytes left or over
/// [`MAX_ARRAY_ELEMENTS`] is an error, never an allocation.
pub(crate) fn decode<T: Decodable>(buf: &mut Bytes, version: i16) -> Result<T, String> {
    let mut lengths = Vec::new();
    let (result, first) = loop {
        let mut first = Guard::new(buf.clone(), 1, &lengths);
        let result = T::decode(&mut first, version).map_err(|e| e.to_string());
        match first.found_length {
            Some(at) if lengths.contains(&at) => {
                return Err(
                    "a length or count exceeds the bytes left (corrupt or cut message)".into(),
                )
            }
            Some(at) if lengths.len() < MAX_LONG_FIELDS => lengths.push(at),
            Some(_) => {
                return Err(format!(
                    "more than {MAX_LONG_FIELDS} fields over {MAX_ARRAY_ELEMENTS} bytes"
                ))
            }
            None => break (result, (first.pos, first.replaced, first.trace)),
        }
    };
    let (pos, replaced, trace) = first;
    if !replaced {
        buf.advance(pos);
        return result;
    }
    // A replaced count read as 1 must decode that many elements, read as 2
    // one more; if that fails at the end of the buffer no position moves,
    // so failure itself counts.
    let mut again = Guard::new(buf.clone(), 2, &lengths);
    let ok = T::decode(&mut again, version).is_ok();
    if !ok || again.trace != trace || again.halted() {
        return Err(format!(
            "an array count exceeds the bytes left or the cap of {MAX_ARRAY_ELEMENTS} elements (corrupt or oversized message)"
        ));
    }
    // Every replaced value was a plain field: the true decode is safe.
    T::decode(buf, version).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use bytes::BytesMut;
    use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
    use kafka_protocol::messages::{
        GroupId, JoinGroupRequest, JoinGroupResponse, ListGroupsResponse,
    };
    use kafka_protocol::protocol::{Encodable, StrBytes};

    use super::*;

    #[test]
    fn keeps_large_plain_fields_exact() {
        let req = JoinGroupRequest::default()
            .with_group_id(GroupId(StrBytes::from_static_str("g")))
            .with_session_timeout_ms(45_000)
            .with_rebalance_timeout_ms(300_000);
        for version in [1, 7] {
            let mut b = BytesMut::new();
            req.encode(&mut b, version).unwrap();
            let got: JoinGroupRequest = decode(&mut b.freeze(), version).unwrap();
            assert_eq!(
                (got.session_timeout_ms, got.rebalance_timeout_ms),
                (45_000, 300_000)
            );
        }
    }

    #[test]
    fn refuses_an_array_count_larger_than_the_message() {
        // ListGroups v0 response: error_code INT16, groups ARRAY (count i32::MAX).
        let bogus = Bytes::from_static(&[0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 1, b'g']);
        let got: Result<ListGroupsResponse, _> = decode(&mut bogus.clone(), 0);
        assert!(got.unwrap_err().contains("array count"));
        // v3 (flexible): a compact array count as a 5-byte varint.
        let bogus = Bytes::from_static(&[0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0]);
        assert!(decode::<ListGroupsResponse>(&mut bogus.clone(), 3).is_err());
    }

    #[test]
    fn a_five_byte_varint_count_is_refused_without_reserving_2_to_the_28() {
        // JoinGroup v6 response: throttle, error, generation, protocol type
        // and name (null), leader "", skip_assignment absent, member_id "",
        // then the members count `80 80 80 80 08`.
        let mut b = vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1];
        b.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x08]);
        b.extend_from_slice(&[0; 8]);
        let got = decode::<JoinGroupResponse>(&mut Bytes::from(b), 6);
        let err = got.unwrap_err();
        assert!(err.contains("array count"), "{err}");
    }

    #[test]
    fn a_count_under_the_bytes_left_but_over_the_cap_is_refused() {
        // ListGroups v0 response: a count of 2^20 groups in a message that
        // has 2^20 + 2 bytes left (each group could be 1 byte long).
        let count = 1u32 << 20;
        let mut b = vec![0, 0];
        b.extend_from_slice(&count.to_be_bytes());
        b.resize(b.len() + count as usize + 2, 0);
        let got = decode::<ListGroupsResponse>(&mut Bytes::from(b), 0);
        assert!(got.unwrap_err().contains("cap"));
    }

    #[test]
    fn a_bytes_field_longer_than_the_cap_is_decoded_whole() {
        let metadata = Bytes::from(vec![7u8; MAX_ARRAY_ELEMENTS * 3]);
        let req = JoinGroupRequest::default()
            .with_group_id(GroupId(StrBytes::from_static_str("g")))
            .with_rebalance_timeout_ms(300_000)
            .with_protocols(vec![JoinGroupRequestProtocol::default()
                .with_name(StrBytes::from_static_str("range"))
                .with_metadata(metadata.clone())]);
        for version in [5, 6] {
            let mut b = BytesMut::new();
            req.encode(&mut b, version).unwrap();
            let got: JoinGroupRequest = decode(&mut b.freeze(), version).unwrap();
            assert_eq!(got.protocols[0].metadata, metadata);
            assert_eq!(got.rebalance_timeout_ms, 300_000);
        }
    }

    #[test]
    fn advances_the_buffer_past_the_message() {
        let mut b = BytesMut::new();
        ListGroupsResponse::default().encode(&mut b, 4).unwrap();
        b.extend_from_slice(&[1, 2]);
        let mut buf = b.freeze();
        let _: ListGroupsResponse = decode(&mut buf, 4).unwrap();
        assert_eq!(buf.len(), 2);
    }

    #[test]
    fn fuzz_oom_04cf6569_a_known_length_position_never_passes_the_bytes_left() {
        // A five-byte varint of 2^32 - 1 at position 0, taken for a length
        // there: still replaced, since only 3 bytes follow it.
        let bytes = Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3]);
        let lengths = [0];
        let g = Guard::new(bytes, 1, &lengths);
        assert!(g.suspect(0, 5, u64::from(u32::MAX) - 1));
        // Within the bytes left a known length may pass the array cap.
        let long = Bytes::from(vec![0u8; MAX_ARRAY_ELEMENTS + 16]);
        let g = Guard::new(long, 1, &lengths);
        assert!(!g.suspect(0, 5, MAX_ARRAY_ELEMENTS as u64 + 1));
    }
}
