//! OffsetCommit v10 and OffsetFetch v10 requests, read by hand.
//!
//! Takes: the body (after the request header) of an OffsetCommit or
//! OffsetFetch v10 request, which Apache Kafka 4.x's Java clients send
//! (fixtures/kafka/ak4_*k848*) and kafka-protocol 0.18 cannot read (its
//! requests stop at v9; its responses reach v10). Gives: the same
//! [`Decoded`] as the crate path in `decode` gives for v9.
//!
//! v10 (KIP-848) changes one field against v9: each topic is named by its
//! `TopicId` (UUID, 16 bytes) instead of its `Name`. Both are flexible
//! (KIP-482: compact strings and arrays, tagged fields). Field order from
//! Kafka 4.4's `OffsetCommitRequest.json` and `OffsetFetchRequest.json`:
//!
//! ```text
//! OffsetCommitRequest v10            OffsetFetchRequest v10
//! GroupId                STRING      Groups               ARRAY
//! GenerationIdOrMemberEpoch INT32      GroupId            STRING
//! MemberId               STRING        MemberId           NULLABLE STRING
//! GroupInstanceId        NULLABLE STR  MemberEpoch        INT32
//! Topics                 ARRAY         Topics             NULLABLE ARRAY
//!   TopicId              UUID            TopicId          UUID
//!   Partitions           ARRAY           PartitionIndexes ARRAY of INT32
//!     PartitionIndex     INT32         RequireStable      BOOL
//!     CommittedOffset    INT64
//!     CommittedLeaderEpoch INT32
//!     CommittedMetadata  NULLABLE STRING
//! ```
//!
//! Topic ids are kept as Kafka prints them (`8-4-4-4-12` lowercase hex);
//! the stops stage names them from the capture's Metadata answers. Nothing
//! is allocated by a count read from the bytes: every entry read consumes
//! bytes or fails, and at most [`MAX_OFFSETS`] offsets are kept.

use crate::event::{EventKind, Id, PartitionOffset, MAX_OFFSETS};

use super::decode::Decoded;
use super::partial::Cursor;

/// The request version these decoders read.
pub(crate) const VERSION: i16 = 10;

/// An OffsetCommit v10 request body. `Err` says where it broke off.
pub(crate) fn offset_commit(body: &[u8], exchange: u64) -> Result<Decoded, String> {
    commit(&mut Cursor::new(body, true), exchange)
        .ok_or_else(|| "OffsetCommit v10: cut short".into())
}

/// An OffsetFetch v10 request body. `Err` says where it broke off.
pub(crate) fn offset_fetch(body: &[u8], exchange: u64) -> Result<Decoded, String> {
    fetch(&mut Cursor::new(body, true), exchange).ok_or_else(|| "OffsetFetch v10: cut short".into())
}

fn commit(c: &mut Cursor<'_>, exchange: u64) -> Option<Decoded> {
    let group_id = c.string()?;
    let generation_id = c.i32()?;
    let member_id = c.string()?;
    let group_instance_id = c.nullable_string()?;
    let mut partitions = 0usize;
    let mut offsets = Vec::new();
    for _ in 0..c.array()? {
        let topic: Id = uuid(c)?.into();
        for _ in 0..c.array()? {
            let partition = c.i32()?;
            let offset = i64::from_be_bytes(c.take(8)?.try_into().ok()?);
            c.i32()?; // committed leader epoch
            c.nullable_string()?; // committed metadata
            c.tags()?;
            partitions += 1;
            if offsets.len() < MAX_OFFSETS {
                offsets.push(PartitionOffset {
                    topic: topic.clone(),
                    partition,
                    offset,
                    error: None,
                });
            }
        }
        c.tags()?;
    }
    c.tags()?;
    Some(Decoded {
        group_id: Some(group_id),
        member_id: (!member_id.is_empty()).then_some(member_id),
        group_instance_id,
        generation_id: Some(generation_id),
        kind: Some(EventKind::OffsetCommitRequest {
            exchange,
            partitions,
            offsets,
        }),
        ..Decoded::default()
    })
}

/// The first group's identity, as `decode::offset_fetch` keeps for v9.
fn fetch(c: &mut Cursor<'_>, exchange: u64) -> Option<Decoded> {
    let mut first: Option<(String, Option<String>, i32)> = None;
    for _ in 0..c.array()? {
        let group_id = c.string()?;
        let member_id = c.nullable_string()?;
        let member_epoch = c.i32()?;
        for _ in 0..c.array()? {
            c.take(16)?; // topic id
            for _ in 0..c.array()? {
                c.i32()?; // partition index
            }
            c.tags()?;
        }
        c.tags()?;
        first.get_or_insert((group_id, member_id, member_epoch));
    }
    c.take(1)?; // require stable
    c.tags()?;
    let (group_id, member_id, generation_id) = match first {
        Some((g, m, epoch)) => (
            Some(g),
            m.filter(|m| !m.is_empty()),
            (epoch >= 0).then_some(epoch),
        ),
        None => (None, None, None),
    };
    Some(Decoded {
        group_id,
        member_id,
        generation_id,
        kind: Some(EventKind::OffsetFetch {
            exchange,
            error: None,
            offsets: Vec::new(),
        }),
        ..Decoded::default()
    })
}

/// A topic id, printed as the data path prints the ones it reads.
fn uuid(c: &mut Cursor<'_>) -> Option<String> {
    Some(super::data_path::uuid_text(c.take(16)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::apis::key;
    use crate::kafka::testkit::{raw_request, raw_response};
    use crate::kafka::{decode, decode_response, partial};

    const TOPIC_ID: [u8; 16] = [
        0x8f, 0x1c, 0x0a, 0x3e, 0x5b, 0x21, 0x4d, 0x6a, 0x9e, 0x07, 0x11, 0x22, 0x33, 0x44, 0x55,
        0x66,
    ];
    const TOPIC: &str = "8f1c0a3e-5b21-4d6a-9e07-112233445566";

    /// A compact string (KIP-482: length + 1 as an unsigned varint).
    fn compact(s: &str) -> Vec<u8> {
        let mut b = vec![s.len() as u8 + 1];
        b.extend_from_slice(s.as_bytes());
        b
    }

    /// A whole v10 request frame body (header v2 included) around `body`.
    fn request_body(api_key: i16, body: &[u8]) -> Vec<u8> {
        let mut b = vec![0]; // header v2's tagged fields
        b.extend_from_slice(body);
        raw_request(api_key, 10, 7, "c1", &b)[4..].to_vec()
    }

    /// OffsetCommitRequest v10 (OffsetCommitRequest.json): group g1, epoch
    /// 5, member m-1, no static id, one topic id with partitions 0 and 1.
    fn commit_request() -> Vec<u8> {
        let mut b = compact("g1");
        b.extend_from_slice(&5i32.to_be_bytes());
        b.extend(compact("m-1"));
        b.push(0); // group instance id: null
        b.push(2); // one topic
        b.extend_from_slice(&TOPIC_ID);
        b.push(3); // two partitions
        for (p, offset, epoch, metadata) in [(0i32, 42i64, -1i32, 1u8), (1, 77, 3, 0)] {
            b.extend_from_slice(&p.to_be_bytes());
            b.extend_from_slice(&offset.to_be_bytes());
            b.extend_from_slice(&epoch.to_be_bytes());
            b.push(metadata); // "" or null
            b.push(0); // tags
        }
        b.push(0); // topic tags
        b.push(0); // tags
        request_body(key::OFFSET_COMMIT, &b)
    }

    /// OffsetFetchRequest v10 (OffsetFetchRequest.json): group g1 asked by
    /// member m-1 at epoch 5 for partitions 0 and 1 of one topic id.
    fn fetch_request() -> Vec<u8> {
        let mut b = vec![2]; // one group
        b.extend(compact("g1"));
        b.extend(compact("m-1"));
        b.extend_from_slice(&5i32.to_be_bytes());
        b.push(2); // one topic
        b.extend_from_slice(&TOPIC_ID);
        b.push(3);
        b.extend_from_slice(&0i32.to_be_bytes());
        b.extend_from_slice(&1i32.to_be_bytes());
        b.push(0); // topic tags
        b.push(0); // group tags
        b.push(1); // require stable
        b.push(0); // tags
        request_body(key::OFFSET_FETCH, &b)
    }

    fn offset(partition: i32, offset: i64, error: Option<i16>) -> PartitionOffset {
        PartitionOffset {
            topic: TOPIC.into(),
            partition,
            offset,
            error: error.and_then(crate::event::ErrorCode::from_code),
        }
    }

    #[test]
    fn reads_an_offset_commit_v10_request_with_its_topic_id() {
        let d = decode::request(commit_request(), key::OFFSET_COMMIT, 10, 7).expect("decodes");
        assert_eq!(d.group_id.as_deref(), Some("g1"));
        assert_eq!(d.member_id.as_deref(), Some("m-1"));
        assert_eq!((d.generation_id, d.group_instance_id), (Some(5), None));
        assert_eq!(
            d.kind,
            Some(EventKind::OffsetCommitRequest {
                exchange: 7,
                partitions: 2,
                offsets: vec![offset(0, 42, None), offset(1, 77, None)],
            })
        );
    }

    #[test]
    fn reads_an_offset_fetch_v10_request_first_group() {
        let d = decode::request(fetch_request(), key::OFFSET_FETCH, 10, 7).expect("decodes");
        assert_eq!(d.group_id.as_deref(), Some("g1"));
        assert_eq!(d.member_id.as_deref(), Some("m-1"));
        assert_eq!(d.generation_id, Some(5));
        assert!(matches!(
            d.kind,
            Some(EventKind::OffsetFetch { exchange: 7, error: None, ref offsets }) if offsets.is_empty()
        ));
    }

    #[test]
    fn an_offset_fetch_v10_request_for_all_topics_of_a_classic_member_reads() {
        // Null member id, epoch -1, null topic list (all topics).
        let mut b = vec![2];
        b.extend(compact("g1"));
        b.extend_from_slice(&[0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
        let d = decode::request(
            request_body(key::OFFSET_FETCH, &b),
            key::OFFSET_FETCH,
            10,
            1,
        )
        .expect("decodes");
        assert_eq!(
            (d.group_id.as_deref(), d.member_id, d.generation_id),
            (Some("g1"), None, None)
        );
    }

    #[test]
    fn a_cut_v10_request_is_an_error_not_a_guess_and_its_prefix_still_names_the_member() {
        for (api, body) in [
            (key::OFFSET_COMMIT, commit_request()),
            (key::OFFSET_FETCH, fetch_request()),
        ] {
            for cut in 0..body.len() {
                let got = decode::request(body[..cut].to_vec(), api, 10, 1);
                assert!(got.is_err(), "api {api} cut at {cut} of {}", body.len());
            }
            // The cut-frame reader (snaplen) reads the v10 identity as v9's.
            let d = partial::request(&body[..body.len() - 20], api, 10, 1).expect("header whole");
            assert_eq!(
                (
                    d.group_id.as_deref(),
                    d.member_id.as_deref(),
                    d.generation_id
                ),
                (Some("g1"), Some("m-1"), Some(5)),
                "api {api}"
            );
        }
    }

    #[test]
    fn huge_counts_and_garbage_never_panic_or_allocate_by_count() {
        // A topic count of 2^35 - 1 followed by too few bytes.
        let mut b = compact("g1");
        b.extend_from_slice(&5i32.to_be_bytes());
        b.extend(compact("m-1"));
        b.push(0);
        b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x7f]);
        b.extend_from_slice(&[0xff; 40]);
        assert!(offset_commit(&b, 1).is_err());
        let mut f = vec![0xff, 0xff, 0xff, 0xff, 0x7f];
        f.extend_from_slice(&[0x01; 40]);
        assert!(offset_fetch(&f, 1).is_err());
        for cut in 0..b.len() {
            let _ = offset_commit(&b[..cut], 1);
            let _ = offset_fetch(&b[..cut], 1);
        }
    }

    /// A v10 response frame body (header v1: correlation id, tags).
    fn response_body(body: &[u8]) -> Vec<u8> {
        let mut b = vec![0]; // header v1's tagged fields
        b.extend_from_slice(body);
        raw_response(3, &b)[4..].to_vec()
    }

    /// OffsetCommitResponse v10: partition 0 committed, 1 refused (27,
    /// REBALANCE_IN_PROGRESS).
    fn commit_response() -> Vec<u8> {
        let mut b = 0i32.to_be_bytes().to_vec(); // throttle time
        b.push(2);
        b.extend_from_slice(&TOPIC_ID);
        b.push(3);
        for (p, e) in [(0i32, 0i16), (1, 27)] {
            b.extend_from_slice(&p.to_be_bytes());
            b.extend_from_slice(&e.to_be_bytes());
            b.push(0);
        }
        b.extend_from_slice(&[0, 0]); // topic tags, tags
        response_body(&b)
    }

    /// OffsetFetchResponse v10: group g1, partition 0 at offset 42.
    fn fetch_response() -> Vec<u8> {
        let mut b = 0i32.to_be_bytes().to_vec(); // throttle time
        b.push(2);
        b.extend(compact("g1"));
        b.push(2);
        b.extend_from_slice(&TOPIC_ID);
        b.push(2);
        b.extend_from_slice(&0i32.to_be_bytes());
        b.extend_from_slice(&42i64.to_be_bytes());
        b.extend_from_slice(&(-1i32).to_be_bytes()); // leader epoch
        b.push(1); // metadata ""
        b.extend_from_slice(&0i16.to_be_bytes());
        b.push(0); // partition tags
        b.push(0); // topic tags
        b.extend_from_slice(&0i16.to_be_bytes()); // group error
        b.extend_from_slice(&[0, 0]); // group tags, tags
        response_body(&b)
    }

    /// The answers decode through the crate (it reaches v10 for
    /// responses), their topic ids printed as the requests' are.
    #[test]
    fn v10_answers_name_the_topic_id_as_the_requests_do() {
        let d = decode_response::response(commit_response(), key::OFFSET_COMMIT, 10, 3)
            .expect("decodes");
        assert_eq!(
            d.kind,
            Some(EventKind::OffsetCommitResponse {
                exchange: 3,
                error: crate::event::ErrorCode::from_code(27),
                partitions: vec![offset(1, -1, Some(27))],
            })
        );
        let d =
            decode_response::response(fetch_response(), key::OFFSET_FETCH, 10, 3).expect("decodes");
        assert_eq!(d.group_id.as_deref(), Some("g1"));
        let Some(EventKind::OffsetFetch { offsets, .. }) = d.kind else {
            panic!("{:?}", d.kind)
        };
        assert_eq!(offsets, vec![offset(0, 42, None)]);
        for body in [commit_response(), fetch_response()] {
            let cut = body[..body.len() - 3].to_vec();
            for api in [key::OFFSET_COMMIT, key::OFFSET_FETCH] {
                assert!(decode_response::response(cut.clone(), api, 10, 3).is_err());
            }
        }
    }
}
