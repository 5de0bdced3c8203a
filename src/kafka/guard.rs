//! Decoding untrusted bytes with kafka-protocol without letting a bogus
//! array count abort the process.
//!
//! Takes: a message body and its version. Gives: the kafka-protocol struct,
//! or an error, never an abort. kafka-protocol 0.18 sizes each array with
//! `Vec::with_capacity(count)` straight from the wire before reading an
//! element (kafka-protocol-rs PRs #152, #161, #200, still open), so four
//! corrupt bytes can demand gigabytes; an allocation failure aborts, which no
//! `catch_unwind` can stop. Every element takes at least one byte, so a count
//! larger than the bytes left is impossible in a real message.
//!
//! The crate reads through a [`Guard`] buffer that replaces any INT32 (array
//! count, or a plain field) and any varint (compact array count, or a length
//! or tag) larger than the bytes left by a small `fill` value (0 at first).
//! If nothing was
//! replaced, that decode is exact and is the answer. Otherwise the message is
//! decoded again with `fill` 1 and 2: a replaced *count* changes how
//! many elements are read (≥ 1 byte each), so the read positions differ; a
//! replaced plain field (a session timeout of 45000 in a 60-byte message)
//! changes nothing. Same positions → every replaced value was a plain
//! field, so an unguarded decode is safe and gives the true values;
//! different positions (or a failure) → the message is corrupt.
//! A message crafted so that one extra element re-aligns every later read
//! could still pass; random corruption cannot in practice. The real fix
//! belongs upstream (the PRs above).

use std::ops::Range;

use bytes::{Buf, Bytes, TryGetError};
use kafka_protocol::protocol::buf::ByteBuf;
use kafka_protocol::protocol::Decodable;

/// A read-only buffer that records read positions and caps counts.
struct Guard {
    bytes: Bytes,
    pos: usize,
    fill: u8,
    replaced: bool,
    trace: Vec<usize>,
    /// `(value so far, shift)` of a varint being read byte by byte.
    varint: Option<(u64, u32)>,
}

impl Guard {
    fn new(bytes: Bytes, fill: u8) -> Guard {
        Guard {
            bytes,
            pos: 0,
            fill,
            replaced: false,
            trace: Vec::new(),
            varint: None,
        }
    }
}

impl Buf for Guard {
    fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    fn chunk(&self) -> &[u8] {
        self.bytes.get(self.pos..).unwrap_or_default()
    }

    fn advance(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.bytes.len());
        self.trace.push(self.pos);
        self.varint = None;
    }

    fn try_get_i32(&mut self) -> Result<i32, TryGetError> {
        let Some(raw) = self.chunk().get(..4) else {
            return Err(TryGetError {
                requested: 4,
                available: self.remaining(),
            });
        };
        let value = i32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]);
        self.advance(4);
        if value > 0 && value as usize > self.remaining() {
            self.replaced = true;
            return Ok(i32::from(self.fill));
        }
        Ok(value)
    }

    /// kafka-protocol reads varints a byte at a time (`UnsignedVarInt`);
    /// the value is followed here so that a byte that would push it past
    /// the bytes left is replaced, ending the varint early.
    fn try_get_u8(&mut self) -> Result<u8, TryGetError> {
        let Some(&b) = self.chunk().first() else {
            return Err(TryGetError {
                requested: 1,
                available: 0,
            });
        };
        let (so_far, shift) = self.varint.unwrap_or((0, 0));
        self.advance(1);
        let value = so_far | (u64::from(b & 0x7f) << shift.min(35));
        if value > self.remaining() as u64 + 1 {
            self.replaced = true;
            return Ok(self.fill);
        }
        if b >= 0x80 && shift < 28 {
            self.varint = Some((value, shift + 7));
        }
        Ok(b)
    }
}

impl ByteBuf for Guard {
    fn peek_bytes(&mut self, r: Range<usize>) -> Bytes {
        let (start, end) = (self.pos + r.start, (self.pos + r.end).min(self.bytes.len()));
        self.bytes.slice(start.min(end)..end)
    }

    fn get_bytes(&mut self, size: usize) -> Bytes {
        let end = (self.pos + size).min(self.bytes.len());
        let out = self.bytes.slice(self.pos..end);
        self.advance(size);
        out
    }
}

/// Decodes `T` from the front of `buf` at `version`, advancing `buf` past
/// what was read; a corrupt array count is an error, never an allocation.
pub(crate) fn decode<T: Decodable>(buf: &mut Bytes, version: i16) -> Result<T, String> {
    let mut first = Guard::new(buf.clone(), 0);
    let result = T::decode(&mut first, version).map_err(|e| e.to_string());
    if !first.replaced {
        buf.advance(first.pos);
        return result;
    }
    // A replaced count read as 1 (or 2) must decode that many elements; if
    // that fails at the end of the buffer no position moves, so failure
    // itself counts. Two fills make a crafted re-alignment twice as hard.
    for fill in [1, 2] {
        let mut again = Guard::new(buf.clone(), fill);
        let ok = T::decode(&mut again, version).is_ok();
        if !ok || again.trace != first.trace {
            return Err(result.err().unwrap_or_else(|| {
                "an array count exceeds the bytes left (corrupt message)".into()
            }));
        }
    }
    // Every replaced value was a plain field: the true decode is safe.
    T::decode(buf, version).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use bytes::BytesMut;
    use kafka_protocol::messages::{GroupId, JoinGroupRequest, ListGroupsResponse};
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
    fn advances_the_buffer_past_the_message() {
        let mut b = BytesMut::new();
        ListGroupsResponse::default().encode(&mut b, 4).unwrap();
        b.extend_from_slice(&[1, 2]);
        let mut buf = b.freeze();
        let _: ListGroupsResponse = decode(&mut buf, 4).unwrap();
        assert_eq!(buf.len(), 2);
    }
}
