//! Group-API frames cut short → the fields their captured prefix holds.
//!
//! Takes: the captured prefix of a frame body (header included) whose rest
//! was cut off by the capture's snaplen or lost in a stream hole, and its
//! API key and version. Gives: a [`Decoded`] with every leading field that
//! is whole in the prefix, marked `truncated` so that nothing downstream
//! mistakes an unread field or a partly read list for an empty one. Every
//! group API puts its identity first (group id, generation, member id, then
//! the static id), so a prefix of a hundred bytes usually names them all;
//! lists (JoinGroup protocols and members, SyncGroup assignments, leaving
//! members) keep only their entries that are whole.
//!
//! The field orders are those of Kafka's message schemas
//! (clients/src/main/resources/common/message/*.json): JoinGroupRequest,
//! SyncGroupRequest, HeartbeatRequest, LeaveGroupRequest,
//! OffsetCommitRequest, OffsetFetchRequest and the matching responses.
//! Flexible versions (KIP-482: compact strings, arrays and tagged fields)
//! start at JoinGroup v6, SyncGroup v4, Heartbeat v4, LeaveGroup v4,
//! OffsetCommit v8, OffsetFetch v6; the header versions say so. Nothing is
//! allocated by a length read from the bytes: strings are sliced from the
//! prefix, and lists grow one whole entry at a time.

use crate::event::{
    ErrorCode, EventKind, JoinedMember, LeavingMember, MemberAssignment, OfferedProtocol, Text,
};

use super::apis::{self, key};
use super::decode::Decoded;

/// A reader over a captured prefix; every read is `None` past its end
/// (also used by [`super::offsets_v10`] on whole bodies).
pub(super) struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
    flexible: bool,
}

impl<'a> Cursor<'a> {
    /// A reader at the start of `b`; `flexible` for KIP-482 encodings.
    pub(super) fn new(b: &'a [u8], flexible: bool) -> Cursor<'a> {
        Cursor { b, at: 0, flexible }
    }

    pub(super) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }

    pub(super) fn i16(&mut self) -> Option<i16> {
        Some(i16::from_be_bytes(self.take(2)?.try_into().ok()?))
    }

    pub(super) fn i32(&mut self) -> Option<i32> {
        Some(i32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }

    pub(super) fn uvarint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..35).step_by(7) {
            let byte = *self.take(1)?.first()?;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    /// A length: compact (N+1, 0 = null) when flexible, else INT16/INT32
    /// (-1 = null). `None` inside means null.
    pub(super) fn len(&mut self, wide: bool) -> Option<Option<usize>> {
        let n: i64 = if self.flexible {
            self.uvarint()? as i64 - 1
        } else if wide {
            i64::from(self.i32()?)
        } else {
            i64::from(self.i16()?)
        };
        Some(usize::try_from(n).ok())
    }

    pub(super) fn nullable_string(&mut self) -> Option<Option<String>> {
        match self.len(false)? {
            None => Some(None),
            Some(n) => {
                let s = self.take(n)?;
                Some(Some(String::from_utf8_lossy(s).into_owned()))
            }
        }
    }

    pub(super) fn string(&mut self) -> Option<String> {
        Some(self.nullable_string()?.unwrap_or_default())
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.len(true)?.unwrap_or(0);
        self.take(n)
    }

    /// An array's entry count (null reads as empty).
    pub(super) fn array(&mut self) -> Option<usize> {
        Some(self.len(true)?.unwrap_or(0))
    }

    /// Skips a tagged-field section (flexible versions only).
    pub(super) fn tags(&mut self) -> Option<()> {
        if !self.flexible {
            return Some(());
        }
        for _ in 0..self.uvarint()? {
            self.uvarint()?;
            let size = usize::try_from(self.uvarint()?).ok()?;
            self.take(size)?;
        }
        Some(())
    }

    fn left(&self) -> usize {
        self.b.len().saturating_sub(self.at)
    }
}

/// Reads up to `count` whole entries with `one`; stops at the first entry
/// the prefix cuts. Each entry takes at least one byte, so the loop is
/// bounded by the prefix, never by `count`.
fn entries<'a, T>(
    c: &mut Cursor<'a>,
    count: usize,
    mut one: impl FnMut(&mut Cursor<'a>) -> Option<T>,
) -> Vec<T> {
    let mut out = Vec::new();
    while out.len() < count && c.left() > 0 {
        let mark = c.at;
        match one(c) {
            Some(t) if c.at > mark => out.push(t),
            _ => break,
        }
    }
    out
}

/// Reads the rest of an entry whose identity is already read; when the
/// prefix cuts it, the entry still counts (its id is whole) and the cursor
/// is spent, so no later entry is read out of place.
fn rest_or_end(c: &mut Cursor<'_>, rest: impl FnOnce(&mut Cursor<'_>) -> Option<()>) {
    if rest(c).is_none() {
        c.at = c.b.len();
    }
}

fn member(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

/// The fields of a cut request of a group API, or `None` when not even the
/// header is whole (or the API has nothing kgtrace keeps).
pub(crate) fn request(body: &[u8], api_key: i16, version: i16, exchange: u64) -> Option<Decoded> {
    let header_version = apis::request_header_version(api_key, version)?;
    let mut c = Cursor {
        b: body,
        at: 0,
        flexible: false,
    };
    // api key, api version, correlation id, then the client id (INT16
    // length even in header v2), then header v2's tagged fields.
    c.take(8)?;
    c.nullable_string()?;
    c.flexible = header_version >= 2;
    c.tags()?;
    let mut d = Decoded {
        truncated: true,
        ..Decoded::default()
    };
    let (v, e) = (version, exchange);
    let _ = match api_key {
        key::JOIN_GROUP => join_group_request(&mut c, v, e, &mut d),
        key::SYNC_GROUP => sync_group_request(&mut c, v, e, &mut d),
        key::HEARTBEAT => heartbeat_request(&mut c, v, e, &mut d),
        key::LEAVE_GROUP => leave_group_request(&mut c, v, e, &mut d),
        key::OFFSET_COMMIT => offset_commit_request(&mut c, v, &mut d),
        key::OFFSET_FETCH => offset_fetch_request(&mut c, v, &mut d),
        _ => return None,
    };
    Some(d)
}

fn join_group_request(c: &mut Cursor<'_>, v: i16, e: u64, d: &mut Decoded) -> Option<()> {
    d.group_id = Some(c.string()?);
    let session_timeout_ms = c.i32()?;
    let rebalance_timeout_ms = if v >= 1 { Some(c.i32()?) } else { None };
    let mut kind = EventKind::JoinGroupRequest {
        exchange: e,
        session_timeout_ms,
        rebalance_timeout_ms,
        protocol_type: Text::default(),
        protocols: Vec::new(),
        reason: None,
        identity_cut: true,
    };
    // The timeouts come before the member id (JoinGroupRequest.json):
    // a join cut inside its member id or static id is an event that says
    // who joined is unknown (a rejoining Java member's id is 40-odd bytes,
    // so `-s 128` often cuts it).
    d.kind = Some(kind.clone());
    d.member_id = member(c.string()?);
    if v >= 5 {
        d.group_instance_id = c.nullable_string()?;
    }
    if let EventKind::JoinGroupRequest { identity_cut, .. } = &mut kind {
        *identity_cut = false;
    }
    // The member is known from here: the join is an event even if its
    // protocol list was cut.
    d.kind = Some(kind.clone());
    let protocol_type = c.string()?;
    let count = c.array()?;
    // Only names: a cut subscription is not decoded as an empty one (the
    // event is `truncated`, so its empty topic lists prove nothing). A name
    // that is whole is kept even when its metadata was cut.
    let protocols = entries(c, count, |c| {
        let name = c.string()?;
        rest_or_end(c, |c| {
            c.bytes()?;
            c.tags()
        });
        Some(OfferedProtocol {
            name,
            ..OfferedProtocol::default()
        })
    });
    if let EventKind::JoinGroupRequest {
        protocol_type: t,
        protocols: p,
        ..
    } = &mut kind
    {
        *t = protocol_type.into();
        *p = protocols;
    }
    d.kind = Some(kind);
    Some(())
}

fn sync_group_request(c: &mut Cursor<'_>, v: i16, e: u64, d: &mut Decoded) -> Option<()> {
    d.group_id = Some(c.string()?);
    d.generation_id = Some(c.i32()?);
    d.member_id = member(c.string()?);
    if v >= 3 {
        d.group_instance_id = c.nullable_string()?;
    }
    d.kind = Some(EventKind::SyncGroupRequest {
        exchange: e,
        assignments: Vec::new(),
    });
    if v >= 5 {
        c.nullable_string()?; // protocol type
        c.nullable_string()?; // protocol name
    }
    let count = c.array()?;
    // Member ids only: a cut assignment is not decoded as an empty one.
    let assignments = entries(c, count, |c| {
        let member_id = c.string()?;
        rest_or_end(c, |c| {
            c.bytes()?;
            c.tags()
        });
        Some(MemberAssignment {
            member_id,
            partitions: Vec::new(),
        })
    });
    d.kind = Some(EventKind::SyncGroupRequest {
        exchange: e,
        assignments,
    });
    Some(())
}

fn heartbeat_request(c: &mut Cursor<'_>, v: i16, e: u64, d: &mut Decoded) -> Option<()> {
    d.group_id = Some(c.string()?);
    d.generation_id = Some(c.i32()?);
    d.member_id = member(c.string()?);
    d.kind = Some(EventKind::HeartbeatRequest { exchange: e });
    if v >= 3 {
        d.group_instance_id = c.nullable_string()?;
    }
    Some(())
}

fn leave_group_request(c: &mut Cursor<'_>, v: i16, e: u64, d: &mut Decoded) -> Option<()> {
    d.group_id = Some(c.string()?);
    if v < 3 {
        let member_id = c.string()?;
        d.member_id = member(member_id.clone());
        d.kind = Some(EventKind::LeaveGroupRequest {
            exchange: e,
            members: vec![LeavingMember {
                member_id,
                ..LeavingMember::default()
            }],
        });
        return Some(());
    }
    let count = c.array()?;
    let members = entries(c, count, |c| {
        let member_id = c.string()?;
        let group_instance_id = c.nullable_string()?;
        let reason = if v >= 5 { c.nullable_string()? } else { None };
        c.tags()?;
        Some(LeavingMember {
            member_id,
            group_instance_id,
            reason,
        })
    });
    // A leave that names nobody readable says nothing.
    let first = members.first()?;
    d.member_id = member(first.member_id.clone());
    d.group_instance_id = first.group_instance_id.clone();
    d.kind = Some(EventKind::LeaveGroupRequest {
        exchange: e,
        members,
    });
    Some(())
}

fn offset_commit_request(c: &mut Cursor<'_>, v: i16, d: &mut Decoded) -> Option<()> {
    // No event: the partition count is not in the prefix. The group,
    // generation and member still attribute the connection.
    d.group_id = Some(c.string()?);
    if v >= 1 {
        d.generation_id = Some(c.i32()?);
        d.member_id = member(c.string()?);
    }
    if v >= 7 {
        d.group_instance_id = c.nullable_string()?;
    }
    Some(())
}

fn offset_fetch_request(c: &mut Cursor<'_>, v: i16, d: &mut Decoded) -> Option<()> {
    if v < 8 {
        d.group_id = Some(c.string()?);
        return Some(());
    }
    if c.array()? == 0 {
        return Some(());
    }
    d.group_id = Some(c.string()?);
    if v >= 9 {
        d.member_id = c.nullable_string()?.and_then(member);
        let epoch = c.i32()?;
        d.generation_id = (epoch >= 0).then_some(epoch);
    }
    Some(())
}

/// The fields of a cut response, or `None` when not even its header is
/// whole (or the API has nothing kgtrace keeps).
pub(crate) fn response(body: &[u8], api_key: i16, version: i16, exchange: u64) -> Option<Decoded> {
    let header_version = apis::response_header_version(api_key, version)?;
    let mut c = Cursor {
        b: body,
        at: 0,
        flexible: header_version >= 1,
    };
    c.take(4)?; // correlation id
    c.tags()?;
    let mut d = Decoded {
        truncated: true,
        ..Decoded::default()
    };
    let (v, e) = (version, exchange);
    let _ = match api_key {
        key::JOIN_GROUP => join_group_response(&mut c, v, e, &mut d),
        key::SYNC_GROUP => sync_group_response(&mut c, v, e, &mut d),
        key::HEARTBEAT => error_only(&mut c, v, &mut d, |error| EventKind::HeartbeatResponse {
            exchange: e,
            error,
        }),
        key::LEAVE_GROUP => error_only(&mut c, v, &mut d, |error| EventKind::LeaveGroupResponse {
            exchange: e,
            error,
        }),
        _ => return None,
    };
    Some(d)
}

/// Throttle time (v1+) then the top-level error code.
fn error_only(
    c: &mut Cursor<'_>,
    v: i16,
    d: &mut Decoded,
    kind: impl FnOnce(Option<ErrorCode>) -> EventKind,
) -> Option<()> {
    if v >= 1 {
        c.i32()?;
    }
    let code = c.i16()?;
    d.error_code = Some(code);
    d.kind = Some(kind(ErrorCode::from_code(code)));
    Some(())
}

fn join_group_response(c: &mut Cursor<'_>, v: i16, e: u64, d: &mut Decoded) -> Option<()> {
    if v >= 2 {
        c.i32()?; // throttle time
    }
    let code = c.i16()?;
    d.error_code = Some(code);
    d.generation_id = Some(c.i32()?);
    if v >= 7 {
        c.nullable_string()?; // protocol type
    }
    // The generation makes the answer an event: the member it answers is
    // the request's (a rejoin names it) until the prefix names it, and an
    // unread leader stays empty, which the reconstructor reads as unknown.
    let kind = |protocol_name: Option<Text>, leader: &str, members| EventKind::JoinGroupResponse {
        exchange: e,
        error: ErrorCode::from_code(code),
        protocol_name,
        leader: leader.into(),
        members,
        parked_ms: None,
    };
    d.kind = Some(kind(None, "", Box::default()));
    let protocol_name: Option<Text> = c
        .nullable_string()?
        .filter(|p| !p.is_empty())
        .map(Text::from);
    d.kind = Some(kind(protocol_name.clone(), "", Box::default()));
    let leader = c.string()?;
    d.kind = Some(kind(protocol_name.clone(), &leader, Box::default()));
    if v >= 9 {
        c.take(1)?; // skip_assignment
    }
    d.member_id = member(c.string()?);
    let count = c.array()?;
    let members = entries(c, count, |c| {
        let member_id = c.string()?;
        let group_instance_id = if v >= 5 { c.nullable_string()? } else { None };
        rest_or_end(c, |c| {
            c.bytes()?;
            c.tags()
        });
        Some(JoinedMember {
            member_id,
            group_instance_id,
            topics: Vec::new(),
        })
    });
    d.kind = Some(kind(protocol_name, &leader, members.into()));
    Some(())
}

fn sync_group_response(c: &mut Cursor<'_>, v: i16, e: u64, d: &mut Decoded) -> Option<()> {
    if v >= 1 {
        c.i32()?; // throttle time
    }
    let code = c.i16()?;
    d.error_code = Some(code);
    // The assignment is what was cut: it is left unknown, not empty.
    d.kind = Some(EventKind::SyncGroupResponse {
        exchange: e,
        error: ErrorCode::from_code(code),
        assignment: Vec::new(),
    });
    Some(())
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
    use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
    use kafka_protocol::messages::{
        GroupId, HeartbeatRequest, JoinGroupRequest, JoinGroupResponse, SyncGroupRequest,
    };

    use super::*;
    use crate::kafka::testkit::{request as frame, response as answer, s};

    fn join_request(version: i16) -> Vec<u8> {
        let req = JoinGroupRequest::default()
            .with_group_id(GroupId(s("g1")))
            .with_session_timeout_ms(6000)
            .with_rebalance_timeout_ms(10000)
            .with_member_id(s("g1-c1-0123"))
            .with_group_instance_id(Some(s("static-1")))
            .with_protocol_type(s("consumer"))
            .with_protocols(vec![JoinGroupRequestProtocol::default()
                .with_name(s("range"))
                .with_metadata(Bytes::from(vec![0u8; 300]))]);
        frame(key::JOIN_GROUP, version, 7, "g1-c1", &req)[4..].to_vec()
    }

    #[test]
    fn every_prefix_of_a_join_request_keeps_its_whole_leading_fields() {
        for version in [5, 6, 9] {
            let body = join_request(version);
            let whole = crate::kafka::decode::request(body.clone(), key::JOIN_GROUP, version, 1)
                .expect("whole frame decodes");
            let mut seen_member = false;
            for cut in 0..body.len() {
                let Some(d) = request(&body[..cut], key::JOIN_GROUP, version, 1) else {
                    continue;
                };
                assert!(d.truncated);
                // A field is either read whole and right, or not read.
                for (got, want) in [
                    (&d.group_id, &whole.group_id),
                    (&d.member_id, &whole.member_id),
                ] {
                    assert!(got.is_none() || got == want, "v{version} cut {cut}");
                }
                seen_member |= d.member_id.is_some();
                if let Some(EventKind::JoinGroupRequest {
                    session_timeout_ms,
                    rebalance_timeout_ms,
                    protocols,
                    identity_cut,
                    ..
                }) = &d.kind
                {
                    assert_eq!(*session_timeout_ms, 6000);
                    assert_eq!(*rebalance_timeout_ms, Some(10000));
                    assert!(protocols.len() <= 1);
                    // Either who joined is whole, or the event says it is cut.
                    assert_eq!(
                        !*identity_cut,
                        d.group_instance_id.is_some(),
                        "v{version} cut {cut}"
                    );
                    assert!(!*identity_cut || protocols.is_empty());
                }
            }
            assert!(seen_member, "v{version}: some prefix names the member");
            let d = request(&body[..60], key::JOIN_GROUP, version, 1).unwrap();
            assert_eq!(d.group_id.as_deref(), Some("g1"));
            assert_eq!(d.member_id.as_deref(), Some("g1-c1-0123"));
            assert_eq!(d.group_instance_id.as_deref(), Some("static-1"));
            let Some(EventKind::JoinGroupRequest { protocols, .. }) = d.kind else {
                panic!("v{version}: no join event from 60 bytes");
            };
            assert!(protocols.is_empty(), "the cut protocol is not invented");
            // Cut inside the 300 bytes of metadata: the name is whole and
            // kept, its subscription is not read.
            let d = request(&body[..body.len() - 100], key::JOIN_GROUP, version, 1).unwrap();
            let Some(EventKind::JoinGroupRequest { protocols, .. }) = d.kind else {
                panic!("v{version}: no join event");
            };
            assert_eq!(
                protocols,
                [OfferedProtocol {
                    name: "range".into(),
                    ..OfferedProtocol::default()
                }],
                "v{version}"
            );
        }
    }

    #[test]
    fn a_join_cut_inside_its_member_id_keeps_group_and_timeouts_and_says_who_is_cut() {
        for version in [5, 6, 9] {
            let body = join_request(version);
            let member_at = body
                .windows(10)
                .position(|w| w == b"g1-c1-0123")
                .expect("member id in the frame");
            // Cut in the middle of the member id.
            let d = request(&body[..member_at + 4], key::JOIN_GROUP, version, 1)
                .expect("a header and a group id are whole");
            assert!(d.truncated);
            assert_eq!(d.group_id.as_deref(), Some("g1"), "v{version}");
            assert_eq!(
                (d.member_id.as_deref(), d.group_instance_id.as_deref()),
                (None, None)
            );
            let Some(EventKind::JoinGroupRequest {
                session_timeout_ms,
                rebalance_timeout_ms,
                identity_cut,
                ..
            }) = d.kind
            else {
                panic!("v{version}: no join event from a cut member id");
            };
            assert_eq!(session_timeout_ms, 6000);
            assert_eq!(rebalance_timeout_ms, Some(10000));
            assert!(identity_cut, "v{version}: the cut member id is said");
        }
        // Cut inside the static id (v5+): the member id is whole, but who
        // joined is still not known whole.
        let body = join_request(5);
        let static_at = body
            .windows(8)
            .position(|w| w == b"static-1")
            .expect("static id in the frame");
        let d = request(&body[..static_at + 3], key::JOIN_GROUP, 5, 1).unwrap();
        assert_eq!(d.member_id.as_deref(), Some("g1-c1-0123"));
        assert_eq!(d.group_instance_id, None);
        assert!(matches!(
            d.kind,
            Some(EventKind::JoinGroupRequest {
                identity_cut: true,
                ..
            })
        ));
    }

    #[test]
    fn a_cut_heartbeat_and_sync_name_group_generation_and_member() {
        let hb = HeartbeatRequest::default()
            .with_group_id(GroupId(s("g2")))
            .with_generation_id(14)
            .with_member_id(s("m-1"));
        let sync = SyncGroupRequest::default()
            .with_group_id(GroupId(s("g2")))
            .with_generation_id(14)
            .with_member_id(s("m-1"));
        for (api, version, body) in [
            (key::HEARTBEAT, 4, frame(key::HEARTBEAT, 4, 3, "c", &hb)),
            (key::SYNC_GROUP, 3, frame(key::SYNC_GROUP, 3, 3, "c", &sync)),
            (key::SYNC_GROUP, 5, frame(key::SYNC_GROUP, 5, 3, "c", &sync)),
        ] {
            let d = request(&body[4..], api, version, 1).unwrap();
            assert_eq!(
                (
                    d.group_id.as_deref(),
                    d.generation_id,
                    d.member_id.as_deref()
                ),
                (Some("g2"), Some(14), Some("m-1")),
                "api {api} v{version}"
            );
            assert!(d.kind.is_some());
        }
    }

    #[test]
    fn a_cut_join_answer_keeps_generation_leader_and_the_whole_members_only() {
        for version in [5, 7, 9] {
            let resp = JoinGroupResponse::default()
                .with_generation_id(9)
                .with_protocol_name(Some(s("range")))
                .with_leader(s("leader-1"))
                .with_member_id(s("leader-1"))
                .with_members(vec![
                    JoinGroupResponseMember::default()
                        .with_member_id(s("leader-1"))
                        .with_metadata(Bytes::from(vec![1u8; 10])),
                    JoinGroupResponseMember::default()
                        .with_member_id(s("other-2"))
                        .with_metadata(Bytes::from(vec![1u8; 200])),
                ]);
            let body = answer(key::JOIN_GROUP, version, 5, &resp)[4..].to_vec();
            let d = response(&body[..body.len() - 50], key::JOIN_GROUP, version, 1).unwrap();
            assert_eq!(d.generation_id, Some(9));
            assert_eq!(d.member_id.as_deref(), Some("leader-1"));
            let Some(EventKind::JoinGroupResponse {
                leader, members, ..
            }) = d.kind
            else {
                panic!("v{version}: no answer event");
            };
            assert_eq!(leader, "leader-1");
            let ids: Vec<&str> = members.iter().map(|m| m.member_id.as_str()).collect();
            assert_eq!(
                ids,
                ["leader-1", "other-2"],
                "v{version}: a member whose id is whole is listed even if its metadata was cut"
            );
            let short = response(&body[..body.len() - 215], key::JOIN_GROUP, version, 1).unwrap();
            let Some(EventKind::JoinGroupResponse { members, .. }) = short.kind else {
                panic!("v{version}: no answer event");
            };
            assert_eq!(members.len(), 1, "v{version}: a cut id is left out");
        }
    }

    #[test]
    fn garbage_and_huge_lengths_never_panic_or_allocate_by_count() {
        let mut body = vec![0u8, 11, 0, 6, 0, 0, 0, 1, 0, 1, b'c', 0];
        body.extend_from_slice(&[0xff; 64]);
        for cut in 0..body.len() {
            let _ = request(&body[..cut], key::JOIN_GROUP, 6, 1);
            let _ = response(&body[..cut], key::JOIN_GROUP, 6, 1);
            let _ = request(&body[..cut], key::LEAVE_GROUP, 5, 1);
        }
    }
}
