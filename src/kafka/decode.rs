//! Request bodies of the group APIs → what kgtrace keeps of them.
//!
//! Takes: a whole request frame body (header included) and its API key and
//! version. Gives: a [`Decoded`] with the group, member, static id and
//! generation the request names, and its [`EventKind`] wire variant.
//! kafka-protocol structs hold the fields of every version, defaulted when a
//! version lacks them, so each field is read only in the versions that have
//! it (JoinGroup `rebalance_timeout_ms` v1+, `group_instance_id` v5+,
//! `reason` v8+; see each schema's `versions`). Versions the crate dropped
//! go to [`super::legacy`]; the OffsetCommit and OffsetFetch v10 requests
//! past it to [`super::offsets_v10`]. Responses are in
//! [`super::decode_response`].

use bytes::Bytes;
use kafka_protocol::messages::{
    ApiVersionsRequest, ConsumerGroupDescribeRequest, ConsumerGroupHeartbeatRequest,
    DeleteGroupsRequest, DescribeGroupsRequest, FindCoordinatorRequest, HeartbeatRequest,
    JoinGroupRequest, LeaveGroupRequest, OffsetCommitRequest, OffsetFetchRequest, RequestHeader,
    SyncGroupRequest,
};
use kafka_protocol::protocol::{Decodable, StrBytes};

use crate::event::{
    DataKind, EventKind, Id, LeavingMember, MemberAssignment, OfferedProtocol, PartitionOffset,
    Text, TopicPartitions, MAX_OFFSETS,
};

use super::apis::{self, key};
use super::consumer_protocol::{self, entry_cost, Budget};
use super::{legacy, offsets_v10};

/// What one side of an exchange says about its group.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Decoded {
    /// The group named.
    pub group_id: Option<String>,
    /// The member named (request) or assigned (JoinGroup response).
    pub member_id: Option<String>,
    /// KIP-345 static id.
    pub group_instance_id: Option<String>,
    /// Generation (classic) or member epoch (KIP-848).
    pub generation_id: Option<i32>,
    /// Error code (responses), top level or first partition/member error.
    pub error_code: Option<i16>,
    /// The wire event, for the APIs that have one.
    pub kind: Option<EventKind>,
    /// Responses about several groups (DescribeGroups, ListGroups...): one
    /// event per group, first included.
    pub groups: Vec<(String, EventKind)>,
    /// KIP-511 `name/version` (ApiVersions request v3+).
    pub software: Option<String>,
    /// The API keys and version ranges an ApiVersions answer offers.
    pub offered: Option<OfferedApis>,
    /// Embedded consumer-protocol bytes that did not decode.
    pub bad_metadata: bool,
    /// Data-path messages (Fetch, ListOffsets, Metadata topic ids).
    pub data: Option<DataKind>,
    /// Decoded from a frame cut short (snaplen, lost bytes): fields past the
    /// cut are unknown, lists hold only their whole entries.
    pub truncated: bool,
    /// List elements (members, protocols, topics, partitions...) left out
    /// because they did not fit the message's [`Budget`].
    pub over_cap: usize,
    /// Bytes the kept list elements cost against the budget.
    pub kept_bytes: usize,
}

/// API keys listed in one ApiVersions answer (at most [`MAX_OFFERED`]: Kafka
/// 4.x lists about 90), each with its lowest and highest version.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct OfferedApis {
    /// (api key, min version, max version), in the answer's order.
    pub keys: Vec<(i16, i16, i16)>,
}

/// API keys kept per ApiVersions answer.
pub(crate) const MAX_OFFERED: usize = 512;

impl OfferedApis {
    /// Whether `api_key` is listed.
    pub(crate) fn offers(&self, api_key: i16) -> bool {
        self.keys.iter().any(|(k, _, _)| *k == api_key)
    }
}

pub(crate) fn text(s: &StrBytes) -> String {
    s.as_str().to_string()
}

pub(crate) fn opt_text(s: &Option<StrBytes>) -> Option<String> {
    s.as_ref().map(text)
}

/// [`text`] as an event's [`Text`] (built once, not through a `String`).
pub(crate) fn shared_text(s: &StrBytes) -> Text {
    Text::from(s.as_str())
}

/// [`opt_text`] as an event's [`Text`].
pub(crate) fn opt_shared_text(s: &Option<StrBytes>) -> Option<Text> {
    s.as_ref().map(shared_text)
}

/// A topic's name, or its id (KIP-848 OffsetCommit v10+, Fetch v13+) when
/// the name is empty.
pub(crate) fn topic_name(name: &StrBytes, id: impl FnOnce() -> String) -> String {
    if name.is_empty() {
        id()
    } else {
        text(name)
    }
}

/// A member id, `None` when empty (a new member has none yet).
pub(crate) fn member(s: &StrBytes) -> Option<String> {
    (!s.is_empty()).then(|| text(s))
}

/// Decodes a request frame body of a group API. `Err` carries why.
#[cfg(test)]
pub(crate) fn request(
    body: Vec<u8>,
    api_key: i16,
    version: i16,
    exchange: u64,
) -> Result<Decoded, String> {
    let limit = consumer_protocol::MAX_KEPT_PER_MESSAGE;
    request_within(body, api_key, version, exchange, limit)
}

/// [`request`], its lists keeping at most `limit` bytes.
pub(crate) fn request_within(
    body: Vec<u8>,
    api_key: i16,
    version: i16,
    exchange: u64,
    limit: usize,
) -> Result<Decoded, String> {
    let b = Budget::new(limit);
    let mut d = request_body(body, api_key, version, exchange, &b)?;
    d.over_cap = b.dropped();
    d.kept_bytes = limit - b.left();
    Ok(d)
}

fn request_body(
    body: Vec<u8>,
    api_key: i16,
    version: i16,
    exchange: u64,
    b: &Budget,
) -> Result<Decoded, String> {
    let mut buf = Bytes::from(body);
    let header_version = apis::request_header_version(api_key, version).ok_or("unknown api key")?;
    RequestHeader::decode(&mut buf, header_version).map_err(|e| format!("request header: {e}"))?;
    let e = exchange;
    let v = version;
    let d = match api_key {
        key::JOIN_GROUP => join_group(decode(&mut buf, v)?, v, e, b),
        key::SYNC_GROUP => sync_group(decode(&mut buf, v)?, v, e, b),
        key::HEARTBEAT => heartbeat(decode(&mut buf, v)?, v, e),
        key::LEAVE_GROUP => leave_group(decode(&mut buf, v)?, v, e, b),
        key::OFFSET_COMMIT if v < 2 => offset_commit_legacy(&buf, v, e)?,
        // v10 (topic ids) is past the crate's requests: read by hand.
        key::OFFSET_COMMIT if v == offsets_v10::VERSION => offsets_v10::offset_commit(&buf, e)?,
        key::OFFSET_FETCH if v == offsets_v10::VERSION => offsets_v10::offset_fetch(&buf, e)?,
        key::OFFSET_COMMIT => offset_commit(decode(&mut buf, v)?, v, e),
        // OffsetFetch v0 is laid out as v1 (see `legacy`).
        key::OFFSET_FETCH => offset_fetch(decode(&mut buf, v.max(1))?, v, e),
        key::FIND_COORDINATOR => find_coordinator(decode(&mut buf, v)?, v, e),
        key::DESCRIBE_GROUPS => {
            let r: DescribeGroupsRequest = decode(&mut buf, v)?;
            Decoded {
                group_id: r.groups.first().map(|g| text(&g.0)),
                ..Decoded::default()
            }
        }
        // An admin's request to delete groups (`kafka-consumer-groups
        // --delete`): its answer says, group by group, whether it was.
        key::DELETE_GROUPS => {
            let r: DeleteGroupsRequest = decode(&mut buf, v)?;
            Decoded {
                group_id: r.groups_names.first().map(|g| text(&g.0)),
                ..Decoded::default()
            }
        }
        key::CONSUMER_GROUP_DESCRIBE => {
            let r: ConsumerGroupDescribeRequest = decode(&mut buf, v)?;
            Decoded {
                group_id: r.group_ids.first().map(|g| text(&g.0)),
                ..Decoded::default()
            }
        }
        key::CONSUMER_GROUP_HEARTBEAT => consumer_group_heartbeat(decode(&mut buf, v)?, e, b),
        key::API_VERSIONS if v == apis::API_VERSIONS_BY_HAND => api_versions_v5(&buf)?,
        key::API_VERSIONS => api_versions(decode(&mut buf, v)?, v),
        // ListGroups requests carry only filters.
        _ => Decoded::default(),
    };
    Ok(d)
}

/// Decodes a kafka-protocol message, naming the failure (through
/// [`super::guard`], so corrupt array counts cannot abort).
pub(crate) fn decode<T: Decodable>(buf: &mut Bytes, version: i16) -> Result<T, String> {
    super::guard::decode(buf, version)
}

fn join_group(r: JoinGroupRequest, v: i16, exchange: u64, b: &Budget) -> Decoded {
    let consumer = r.protocol_type.as_str() == "consumer";
    let mut bad_metadata = false;
    let protocols = b
        .keep(&r.protocols, |p| entry_cost(p.name.len()))
        .iter()
        .map(|p| {
            let sub = consumer
                .then(|| consumer_protocol::subscription(&p.metadata, b))
                .flatten();
            bad_metadata |= consumer && sub.is_none();
            let sub = sub.unwrap_or_default();
            OfferedProtocol {
                name: text(&p.name),
                topics: sub.topics,
                owned_partitions: sub.owned_partitions,
            }
        })
        .collect();
    let kind = EventKind::JoinGroupRequest {
        exchange,
        session_timeout_ms: r.session_timeout_ms,
        rebalance_timeout_ms: (v >= 1).then_some(r.rebalance_timeout_ms),
        protocol_type: shared_text(&r.protocol_type),
        protocols,
        reason: if v >= 8 {
            opt_shared_text(&r.reason)
        } else {
            None
        },
        identity_cut: false,
    };
    Decoded {
        group_id: Some(text(&r.group_id.0)),
        member_id: member(&r.member_id),
        group_instance_id: if v >= 5 {
            opt_text(&r.group_instance_id)
        } else {
            None
        },
        kind: Some(kind),
        bad_metadata,
        ..Decoded::default()
    }
}

fn sync_group(r: SyncGroupRequest, v: i16, exchange: u64, b: &Budget) -> Decoded {
    // The protocol type is on the wire only from v5; before, assignments are
    // decoded as the consumer protocol when they parse as one.
    let consumer = v < 5
        || r.protocol_type
            .as_ref()
            .is_none_or(|t| t.as_str() == "consumer");
    let assignments = b
        .keep(&r.assignments, |a| entry_cost(a.member_id.len()))
        .iter()
        .map(|a| MemberAssignment {
            member_id: text(&a.member_id),
            partitions: consumer
                .then(|| consumer_protocol::assignment(&a.assignment, b))
                .flatten()
                .unwrap_or_default(),
        })
        .collect();
    Decoded {
        group_id: Some(text(&r.group_id.0)),
        member_id: member(&r.member_id),
        group_instance_id: if v >= 3 {
            opt_text(&r.group_instance_id)
        } else {
            None
        },
        generation_id: Some(r.generation_id),
        kind: Some(EventKind::SyncGroupRequest {
            exchange,
            assignments,
        }),
        ..Decoded::default()
    }
}

fn heartbeat(r: HeartbeatRequest, v: i16, exchange: u64) -> Decoded {
    Decoded {
        group_id: Some(text(&r.group_id.0)),
        member_id: member(&r.member_id),
        group_instance_id: if v >= 3 {
            opt_text(&r.group_instance_id)
        } else {
            None
        },
        generation_id: Some(r.generation_id),
        kind: Some(EventKind::HeartbeatRequest { exchange }),
        ..Decoded::default()
    }
}

fn leave_group(r: LeaveGroupRequest, v: i16, exchange: u64, b: &Budget) -> Decoded {
    // v0-2 name one member; v3+ batch them (KIP-345); v5+ add a reason (KIP-800).
    let members: Vec<LeavingMember> = if v >= 3 {
        b.keep(&r.members, |m| entry_cost(m.member_id.len()))
            .iter()
            .map(|m| LeavingMember {
                member_id: text(&m.member_id),
                group_instance_id: opt_text(&m.group_instance_id),
                reason: if v >= 5 { opt_text(&m.reason) } else { None },
            })
            .collect()
    } else {
        vec![LeavingMember {
            member_id: text(&r.member_id),
            ..LeavingMember::default()
        }]
    };
    let first = members.first();
    Decoded {
        group_id: Some(text(&r.group_id.0)),
        member_id: first.and_then(|m| (!m.member_id.is_empty()).then(|| m.member_id.clone())),
        group_instance_id: first.and_then(|m| m.group_instance_id.clone()),
        kind: Some(EventKind::LeaveGroupRequest { exchange, members }),
        ..Decoded::default()
    }
}

fn offset_commit(r: OffsetCommitRequest, v: i16, exchange: u64) -> Decoded {
    let partitions = r.topics.iter().map(|t| t.partitions.len()).sum();
    let offsets = r
        .topics
        .iter()
        .flat_map(|t| {
            let topic: Id = topic_name(&t.name.0, || t.topic_id.to_string()).into();
            t.partitions.iter().map(move |p| PartitionOffset {
                topic: topic.clone(),
                partition: p.partition_index,
                offset: p.committed_offset,
                error: None,
            })
        })
        .take(MAX_OFFSETS)
        .collect();
    Decoded {
        group_id: Some(text(&r.group_id.0)),
        member_id: member(&r.member_id),
        group_instance_id: if v >= 7 {
            opt_text(&r.group_instance_id)
        } else {
            None
        },
        generation_id: Some(r.generation_id_or_member_epoch),
        kind: Some(EventKind::OffsetCommitRequest {
            exchange,
            partitions,
            offsets,
        }),
        ..Decoded::default()
    }
}

fn offset_commit_legacy(body: &Bytes, v: i16, exchange: u64) -> Result<Decoded, String> {
    let r = legacy::offset_commit_v0_v1(body, v).ok_or("malformed OffsetCommit v0/v1 body")?;
    Ok(Decoded {
        group_id: Some(r.group_id),
        member_id: r.member_id.filter(|m| !m.is_empty()),
        generation_id: r.generation_id,
        kind: Some(EventKind::OffsetCommitRequest {
            exchange,
            partitions: r.partitions,
            offsets: Vec::new(),
        }),
        ..Decoded::default()
    })
}

fn offset_fetch(r: OffsetFetchRequest, v: i16, exchange: u64) -> Decoded {
    // v8+ batch groups (KIP-709); v9 adds the KIP-848 member id and epoch.
    let (group_id, member_id, generation_id) = match r.groups.first() {
        Some(g) if v >= 8 => (
            Some(text(&g.group_id.0)),
            if v >= 9 {
                g.member_id.as_ref().and_then(member)
            } else {
                None
            },
            (v >= 9 && g.member_epoch >= 0).then_some(g.member_epoch),
        ),
        _ if v >= 8 => (None, None, None),
        _ => (Some(text(&r.group_id.0)), None, None),
    };
    Decoded {
        group_id,
        member_id,
        generation_id,
        kind: Some(EventKind::OffsetFetch {
            exchange,
            error: None,
            offsets: Vec::new(),
        }),
        ..Decoded::default()
    }
}

fn find_coordinator(r: FindCoordinatorRequest, v: i16, exchange: u64) -> Decoded {
    // v0 has no key type (always a group); v4+ batch keys (KIP-699).
    let key_type = if v >= 1 { r.key_type } else { 0 };
    let key = if v >= 4 {
        r.coordinator_keys.first().map(text)
    } else {
        Some(text(&r.key))
    };
    Decoded {
        group_id: key.filter(|_| key_type == 0),
        kind: Some(EventKind::FindCoordinatorRequest { exchange, key_type }),
        ..Decoded::default()
    }
}

fn consumer_group_heartbeat(
    r: ConsumerGroupHeartbeatRequest,
    exchange: u64,
    b: &Budget,
) -> Decoded {
    let owned = r.topic_partitions.as_ref().map(|tps| {
        b.keep(tps, |_| entry_cost(36))
            .iter()
            .map(|tp| TopicPartitions {
                topic: tp.topic_id.to_string(),
                partitions: b.partitions(&tp.partitions),
            })
            .collect()
    });
    let kind = EventKind::ConsumerGroupHeartbeatRequest {
        exchange,
        member_epoch: r.member_epoch,
        rebalance_timeout_ms: r.rebalance_timeout_ms,
        subscribed_topic_names: r.subscribed_topic_names.as_ref().map(|ts| {
            b.keep(ts, |t| entry_cost(t.0.len()))
                .iter()
                .map(|t| text(&t.0))
                .collect()
        }),
        server_assignor: opt_shared_text(&r.server_assignor),
        owned,
        broker_offers: None,
    };
    Decoded {
        group_id: Some(text(&r.group_id.0)),
        member_id: member(&r.member_id),
        group_instance_id: opt_text(&r.instance_id),
        generation_id: Some(r.member_epoch),
        kind: Some(kind),
        ..Decoded::default()
    }
}

fn api_versions(r: ApiVersionsRequest, v: i16) -> Decoded {
    // KIP-511: client software name and version, v3+.
    let software = (v >= 3 && !r.client_software_name.is_empty()).then(|| {
        format!(
            "{}/{}",
            r.client_software_name.as_str(),
            r.client_software_version.as_str()
        )
    });
    Decoded {
        software,
        ..Decoded::default()
    }
}

/// ApiVersions v5 by hand (kafka-protocol 0.18 stops at v4): the body
/// starts, as from v3 (ApiVersionsRequest.json, flexible), with
/// `ClientSoftwareName` and `ClientSoftwareVersion` as compact strings;
/// what v5 appends after them is not read. The strings are sliced from
/// the body, never allocated by their length.
fn api_versions_v5(body: &[u8]) -> Result<Decoded, String> {
    let mut at = 0;
    let mut compact_string = || -> Result<String, String> {
        let mut len = 0u64;
        for shift in (0..35).step_by(7) {
            let byte = *body.get(at).ok_or("ApiVersions v5: cut short")?;
            at += 1;
            len |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                break;
            }
        }
        let len = usize::try_from(len.checked_sub(1).ok_or("ApiVersions v5: null name")?)
            .map_err(|_| "ApiVersions v5: bad length")?;
        let s = at
            .checked_add(len)
            .and_then(|end| body.get(at..end))
            .ok_or("ApiVersions v5: name past the end")?;
        at += len;
        Ok(String::from_utf8_lossy(s).into_owned())
    };
    let name = compact_string()?;
    let version = compact_string()?;
    Ok(Decoded {
        software: (!name.is_empty()).then(|| format!("{name}/{version}")),
        ..Decoded::default()
    })
}

#[cfg(test)]
mod tests {
    use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
    use kafka_protocol::messages::leave_group_request::MemberIdentity;
    use kafka_protocol::messages::GroupId;

    use super::*;
    use crate::kafka::testkit::{request as frame, s};

    fn decode_frame(f: Vec<u8>, api_key: i16, version: i16) -> Decoded {
        request(f[4..].to_vec(), api_key, version, 9).unwrap()
    }

    #[test]
    fn members_leaving_past_the_budget_are_counted_not_kept() {
        let members: Vec<MemberIdentity> = (0..10)
            .map(|i| MemberIdentity::default().with_member_id(s(&format!("m-{i}"))))
            .collect();
        let req = LeaveGroupRequest::default()
            .with_group_id(GroupId(s("g")))
            .with_members(members);
        let f = frame(key::LEAVE_GROUP, 3, 1, "c", &req);
        // Each "m-N" costs 64 + 3 bytes: room for four.
        let d = request_within(f[4..].to_vec(), key::LEAVE_GROUP, 3, 9, 4 * 67 + 10).unwrap();
        let Some(EventKind::LeaveGroupRequest { members, .. }) = &d.kind else {
            panic!("{d:?}")
        };
        assert_eq!(members.len(), 4);
        assert_eq!((d.over_cap, d.kept_bytes), (6, 4 * 67));
        let whole = request(f[4..].to_vec(), key::LEAVE_GROUP, 3, 9).unwrap();
        assert_eq!(whole.over_cap, 0);
    }

    #[test]
    fn leaves_non_consumer_metadata_alone() {
        let req = JoinGroupRequest::default()
            .with_group_id(GroupId(s("connect-cluster")))
            .with_protocol_type(s("connect"))
            .with_protocols(vec![JoinGroupRequestProtocol::default()
                .with_name(s("sessioned"))
                .with_metadata(Bytes::from_static(b"\x00\x01not a subscription"))]);
        let d = decode_frame(frame(key::JOIN_GROUP, 7, 1, "w", &req), key::JOIN_GROUP, 7);
        assert!(!d.bad_metadata);
        let Some(EventKind::JoinGroupRequest {
            protocols,
            protocol_type,
            ..
        }) = d.kind
        else {
            panic!()
        };
        assert_eq!(
            (protocol_type.as_str(), protocols[0].name.as_str()),
            ("connect", "sessioned")
        );
        assert!(protocols[0].topics.is_empty());
    }

    #[test]
    fn lists_every_leaving_member_with_reasons_only_from_v5() {
        let member = |m: &str| {
            MemberIdentity::default()
                .with_member_id(s(m))
                .with_reason(Some(s("the consumer is being closed")))
        };
        for (version, reason) in [(4, None), (5, Some("the consumer is being closed"))] {
            let req = LeaveGroupRequest::default()
                .with_group_id(GroupId(s("g")))
                .with_members(vec![member("a"), member("b")]);
            let d = decode_frame(
                frame(key::LEAVE_GROUP, version, 1, "c", &req),
                key::LEAVE_GROUP,
                version,
            );
            let Some(EventKind::LeaveGroupRequest { members, .. }) = d.kind else {
                panic!()
            };
            let got: Vec<(&str, Option<&str>)> = members
                .iter()
                .map(|m| (m.member_id.as_str(), m.reason.as_deref()))
                .collect();
            assert_eq!(got, vec![("a", reason), ("b", reason)]);
            assert_eq!(d.member_id.as_deref(), Some("a"));
        }
    }

    #[test]
    fn reads_the_client_software_from_api_versions_v3() {
        let req = ApiVersionsRequest::default()
            .with_client_software_name(s("apache-kafka-java"))
            .with_client_software_version(s("3.7.0"));
        let d = decode_frame(
            frame(key::API_VERSIONS, 3, 1, "c", &req),
            key::API_VERSIONS,
            3,
        );
        assert_eq!(d.software.as_deref(), Some("apache-kafka-java/3.7.0"));
    }

    /// ApiVersions v5 as Apache Kafka 4.4's Java client sends it
    /// (fixtures/kafka/ak4_java_killed.pcap frame 415, after the size).
    const API_VERSIONS_V5: &str = "00120005000000010005673\
        12d63310012617061636865\
        2d6b61666b612d6a61766106342e342e3000ffffffff00";

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    }

    #[test]
    fn reads_the_client_software_from_api_versions_v5_by_hand() {
        let body = hex(API_VERSIONS_V5);
        let d = request(body.clone(), key::API_VERSIONS, 5, 1).expect("v5 decodes");
        assert_eq!(d.software.as_deref(), Some("apache-kafka-java/4.4.0"));
        assert!(apis::why_undecodable(key::API_VERSIONS, 5).is_none());
        // Cut anywhere inside the two names: an error, never a panic or a
        // wrong name.
        for cut in 0..body.len() - 6 {
            if let Ok(d) = request(body[..cut].to_vec(), key::API_VERSIONS, 5, 1) {
                panic!("cut at {cut} decoded {:?}", d.software);
            }
        }
        let mut huge = body[..20].to_vec();
        huge.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert!(request(huge, key::API_VERSIONS, 5, 1).is_err());
    }
}
