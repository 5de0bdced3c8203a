//! Hand-written decoders for group API versions kafka-protocol 0.18 no
//! longer has.
//!
//! Takes: the body (after the request header) of an OffsetCommit v0/v1
//! request. Gives: the fields kgtrace needs. The crate follows Kafka 4.0,
//! which removed these versions (KIP-896), yet old clients still send them.
//! Field order is from Kafka's `OffsetCommitRequest.json` (3.9):
//!
//! ```text
//! GroupId                    STRING            v0+
//! GenerationIdOrMemberEpoch  INT32             v1+
//! MemberId                   STRING            v1+
//! Topics                     ARRAY             v0+
//!   Name                     STRING
//!   Partitions               ARRAY
//!     PartitionIndex         INT32
//!     CommittedOffset        INT64
//!     CommitTimestamp        INT64             v1 only
//!     CommittedMetadata      NULLABLE STRING
//! ```
//!
//! The other pruned versions need no code of their own: OffsetCommit
//! responses v0/v1 are laid out exactly as v2 (throttle time arrives in v3),
//! and OffsetFetch v0 (request and response) exactly as v1 (v1 only moved
//! the offsets from ZooKeeper to `__consumer_offsets`); those are decoded by
//! the crate at the equal version (see `decode`).

/// The fields of an OffsetCommit v0/v1 request kgtrace uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OffsetCommitV0V1 {
    /// `group_id`.
    pub group_id: String,
    /// `generation_id` (v1).
    pub generation_id: Option<i32>,
    /// `member_id` (v1).
    pub member_id: Option<String>,
    /// Partitions committed, over all topics.
    pub partitions: usize,
}

/// A bounds-checked big-endian reader.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.bytes.get(..n)?, self.bytes.get(n..)?);
        self.bytes = rest;
        Some(head)
    }

    fn i16(&mut self) -> Option<i16> {
        Some(i16::from_be_bytes(self.take(2)?.try_into().ok()?))
    }

    fn i32(&mut self) -> Option<i32> {
        Some(i32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }

    /// A nullable STRING (INT16 length, -1 = null).
    fn string(&mut self) -> Option<Option<String>> {
        match self.i16()? {
            -1 => Some(None),
            n if n < 0 => None,
            n => Some(Some(
                String::from_utf8_lossy(self.take(n as usize)?).into_owned(),
            )),
        }
    }

    /// An ARRAY length; a count that could not fit in the remaining bytes
    /// (each element is at least `min_element` bytes) is rejected, so a
    /// bogus length never drives a long loop.
    fn array_len(&mut self, min_element: usize) -> Option<usize> {
        let n = usize::try_from(self.i32()?).ok()?;
        (n.checked_mul(min_element)? <= self.bytes.len()).then_some(n)
    }
}

/// Decodes an OffsetCommit v0 or v1 request body.
pub(crate) fn offset_commit_v0_v1(body: &[u8], version: i16) -> Option<OffsetCommitV0V1> {
    let mut r = Reader { bytes: body };
    let group_id = r.string()?.unwrap_or_default();
    let (generation_id, member_id) = if version >= 1 {
        (Some(r.i32()?), Some(r.string()?.unwrap_or_default()))
    } else {
        (None, None)
    };
    let partition_len = if version >= 1 {
        4 + 8 + 8 + 2
    } else {
        4 + 8 + 2
    };
    let mut partitions = 0;
    for _ in 0..r.array_len(2 + 4)? {
        r.string()?;
        let n = r.array_len(partition_len)?;
        for _ in 0..n {
            r.take(partition_len - 2)?;
            r.string()?;
        }
        partitions += n;
    }
    Some(OffsetCommitV0V1 {
        group_id,
        generation_id,
        member_id,
        partitions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes a v0/v1 body field by field, as the JSON schema orders them.
    fn body(version: i16) -> Vec<u8> {
        let mut b = Vec::new();
        let string = |b: &mut Vec<u8>, s: &str| {
            b.extend((s.len() as i16).to_be_bytes());
            b.extend(s.as_bytes());
        };
        string(&mut b, "billing");
        if version >= 1 {
            b.extend(5i32.to_be_bytes());
            string(&mut b, "consumer-1-abc");
        }
        b.extend(1i32.to_be_bytes()); // one topic
        string(&mut b, "orders");
        b.extend(2i32.to_be_bytes()); // two partitions
        for p in 0..2i32 {
            b.extend(p.to_be_bytes());
            b.extend(100i64.to_be_bytes());
            if version >= 1 {
                b.extend(1_700_000_000_000i64.to_be_bytes());
            }
            b.extend((-1i16).to_be_bytes()); // null metadata
        }
        b
    }

    #[test]
    fn decodes_offset_commit_v0() {
        let d = offset_commit_v0_v1(&body(0), 0).unwrap();
        assert_eq!(d.group_id, "billing");
        assert_eq!(
            (d.generation_id, d.member_id, d.partitions),
            (None, None, 2)
        );
    }

    #[test]
    fn decodes_offset_commit_v1_with_generation_and_member() {
        let d = offset_commit_v0_v1(&body(1), 1).unwrap();
        assert_eq!(d.generation_id, Some(5));
        assert_eq!(d.member_id.as_deref(), Some("consumer-1-abc"));
        assert_eq!(d.partitions, 2);
    }

    #[test]
    fn rejects_truncated_bodies_and_huge_counts() {
        let b = body(1);
        for cut in 0..b.len() {
            assert_eq!(offset_commit_v0_v1(&b[..cut], 1), None, "cut at {cut}");
        }
        let mut huge = vec![0, 0];
        huge.extend(i32::MAX.to_be_bytes());
        assert_eq!(offset_commit_v0_v1(&huge, 0), None);
    }
}
