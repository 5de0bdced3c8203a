//! Response bodies of the group APIs → what kgtrace keeps of them.
//!
//! Takes: a whole response frame body (header included) and the API key and
//! version of the request it answers. Gives: a [`Decoded`] (error code,
//! assigned member id, generation, wire [`EventKind`]). As for requests, a
//! field is read only in the versions that have it. The error is the
//! response's top-level `error_code`, or where the top level has none
//! (OffsetCommit, LeaveGroup v3+ members, OffsetFetch partitions), the
//! first non-zero inner one.

use bytes::Bytes;
use kafka_protocol::messages::{
    ApiVersionsResponse, ConsumerGroupDescribeResponse, ConsumerGroupHeartbeatResponse,
    DeleteGroupsResponse, DescribeGroupsResponse, FindCoordinatorResponse, HeartbeatResponse,
    JoinGroupResponse, LeaveGroupResponse, ListGroupsResponse, OffsetCommitResponse,
    OffsetFetchResponse, ResponseHeader, SyncGroupResponse,
};
use kafka_protocol::protocol::Decodable;

use crate::event::{
    DescribedMember, ErrorCode, EventKind, Id, JoinedMember, PartitionOffset, TopicPartitions,
    MAX_OFFSETS,
};

use super::apis::{self, key};
use super::consumer_protocol::{self, entry_cost, Budget, MAX_KEPT_PER_MESSAGE};
use super::decode::{
    decode, member, opt_shared_text, opt_text, shared_text, text, topic_name, Decoded, OfferedApis,
    MAX_OFFERED,
};

/// Decodes a response frame body of a group API. `Err` carries why.
#[cfg(test)]
pub(crate) fn response(
    body: Vec<u8>,
    api_key: i16,
    version: i16,
    exchange: u64,
) -> Result<Decoded, String> {
    response_within(body, api_key, version, exchange, MAX_KEPT_PER_MESSAGE)
}

/// [`response`], its lists keeping at most `limit` bytes.
pub(crate) fn response_within(
    body: Vec<u8>,
    api_key: i16,
    version: i16,
    exchange: u64,
    limit: usize,
) -> Result<Decoded, String> {
    let buf = Bytes::from(body);
    let b = Budget::new(limit);
    let first = body_within(&mut buf.clone(), api_key, version, exchange, &b);
    let mut d = match first {
        // A broker that does not support the requested ApiVersions version
        // answers UNSUPPORTED_VERSION in the v0 layout so that any client can
        // read it (KIP-511).
        Err(_) if api_key == key::API_VERSIONS && version > 0 => {
            body_within(&mut buf.clone(), api_key, 0, exchange, &b).or(first)
        }
        other => other,
    }?;
    d.over_cap = b.dropped();
    d.kept_bytes = limit - b.left();
    Ok(d)
}

pub(crate) fn body_after_header(
    buf: &mut Bytes,
    api_key: i16,
    version: i16,
    exchange: u64,
) -> Result<Decoded, String> {
    body_within(
        buf,
        api_key,
        version,
        exchange,
        &Budget::new(MAX_KEPT_PER_MESSAGE),
    )
}

fn body_within(
    buf: &mut Bytes,
    api_key: i16,
    version: i16,
    exchange: u64,
    b: &Budget,
) -> Result<Decoded, String> {
    let header_version =
        apis::response_header_version(api_key, version).ok_or("unknown api key")?;
    ResponseHeader::decode(buf, header_version).map_err(|e| format!("response header: {e}"))?;
    let (e, v) = (exchange, version);
    Ok(match api_key {
        key::JOIN_GROUP => join_group(decode(buf, v)?, v, e, b),
        key::SYNC_GROUP => sync_group(decode(buf, v)?, e, b),
        key::HEARTBEAT => {
            let r: HeartbeatResponse = decode(buf, v)?;
            with_error(
                r.error_code,
                EventKind::HeartbeatResponse {
                    exchange: e,
                    error: ErrorCode::from_code(r.error_code),
                },
            )
        }
        key::LEAVE_GROUP => leave_group(decode(buf, v)?, v, e),
        // v0/v1 responses are laid out as v2 (see `legacy`).
        key::OFFSET_COMMIT => offset_commit(decode(buf, v.max(2))?, e),
        key::OFFSET_FETCH => offset_fetch(decode(buf, v.max(1))?, v, e),
        key::FIND_COORDINATOR => find_coordinator(decode(buf, v)?, v, e),
        key::DESCRIBE_GROUPS => describe_groups(decode(buf, v)?, v, e, b),
        key::LIST_GROUPS => list_groups(decode(buf, v)?, v, e, b),
        key::DELETE_GROUPS => delete_groups(decode(buf, v)?, e, b),
        key::CONSUMER_GROUP_HEARTBEAT => consumer_group_heartbeat(decode(buf, v)?, e, b),
        key::CONSUMER_GROUP_DESCRIBE => consumer_group_describe(decode(buf, v)?, e, b),
        key::API_VERSIONS => {
            // v5 is read as v4, whose layout it keeps (apis::API_VERSIONS_BY_HAND).
            let r: ApiVersionsResponse = decode(buf, v.min(apis::API_VERSIONS_BY_HAND - 1))?;
            // A refusal (UNSUPPORTED_VERSION) lists at most ApiVersions
            // itself (KIP-511): it says nothing of what the broker offers.
            let offered = (r.error_code == 0).then(|| OfferedApis {
                keys: r
                    .api_keys
                    .iter()
                    .take(MAX_OFFERED)
                    .map(|a| (a.api_key, a.min_version, a.max_version))
                    .collect(),
            });
            Decoded {
                error_code: Some(r.error_code),
                offered,
                ..Decoded::default()
            }
        }
        _ => Decoded::default(),
    })
}

fn with_error(code: i16, kind: EventKind) -> Decoded {
    Decoded {
        error_code: Some(code),
        kind: Some(kind),
        ..Decoded::default()
    }
}

fn first_error(codes: impl IntoIterator<Item = i16>) -> Option<i16> {
    let mut seen = None;
    for c in codes {
        if c != 0 {
            return Some(c);
        }
        seen = Some(0);
    }
    seen
}

fn join_group(r: JoinGroupResponse, v: i16, exchange: u64, b: &Budget) -> Decoded {
    let members = b
        .keep(&r.members, |m| entry_cost(m.member_id.len()))
        .iter()
        .map(|m| JoinedMember {
            member_id: text(&m.member_id),
            group_instance_id: if v >= 5 {
                opt_text(&m.group_instance_id)
            } else {
                None
            },
            topics: consumer_protocol::subscription(&m.metadata, b)
                .map(|s| s.topics)
                .unwrap_or_default(),
        })
        .collect();
    let kind = EventKind::JoinGroupResponse {
        exchange,
        error: ErrorCode::from_code(r.error_code),
        protocol_name: opt_shared_text(&r.protocol_name).filter(|p| !p.is_empty()),
        leader: shared_text(&r.leader),
        members,
        parked_ms: None,
    };
    Decoded {
        member_id: member(&r.member_id),
        generation_id: Some(r.generation_id),
        ..with_error(r.error_code, kind)
    }
}

fn sync_group(r: SyncGroupResponse, exchange: u64, b: &Budget) -> Decoded {
    let assignment = consumer_protocol::assignment(&r.assignment, b);
    let kind = EventKind::SyncGroupResponse {
        exchange,
        error: ErrorCode::from_code(r.error_code),
        assignment: assignment.clone().unwrap_or_default(),
    };
    Decoded {
        bad_metadata: assignment.is_none(),
        ..with_error(r.error_code, kind)
    }
}

fn leave_group(r: LeaveGroupResponse, v: i16, exchange: u64) -> Decoded {
    let member_errors = if v >= 3 {
        r.members.iter().map(|m| m.error_code).collect()
    } else {
        vec![]
    };
    let code = if r.error_code != 0 {
        r.error_code
    } else {
        first_error(member_errors).unwrap_or(0)
    };
    with_error(
        code,
        EventKind::LeaveGroupResponse {
            exchange,
            error: ErrorCode::from_code(code),
        },
    )
}

fn offset_commit(r: OffsetCommitResponse, exchange: u64) -> Decoded {
    let code = first_error(
        r.topics
            .iter()
            .flat_map(|t| t.partitions.iter().map(|p| p.error_code)),
    );
    let partitions = r
        .topics
        .iter()
        .flat_map(|t| {
            let topic: Id = topic_name(&t.name.0, || t.topic_id.to_string()).into();
            // Only the partitions answered with an error: the stops stage
            // reads a partition missing here as committed, and a member
            // commits every few seconds (on a busy coordinator the error-free
            // lists were a tenth of the memory held).
            t.partitions
                .iter()
                .filter(|p| p.error_code != 0)
                .map(move |p| PartitionOffset {
                    topic: topic.clone(),
                    partition: p.partition_index,
                    offset: -1,
                    error: ErrorCode::from_code(p.error_code),
                })
        })
        .take(MAX_OFFSETS)
        .collect();
    let kind = EventKind::OffsetCommitResponse {
        exchange,
        error: code.and_then(ErrorCode::from_code),
        partitions,
    };
    Decoded {
        error_code: code,
        kind: Some(kind),
        ..Decoded::default()
    }
}

/// Each partition's committed offset in an OffsetFetch answer (v8+: the
/// first group's).
fn fetched_offsets(r: &OffsetFetchResponse, v: i16) -> Vec<PartitionOffset> {
    let offset = |topic: &Id, p: i32, o: i64, e: i16| PartitionOffset {
        topic: topic.clone(),
        partition: p,
        offset: o,
        error: ErrorCode::from_code(e),
    };
    if v >= 8 {
        let Some(g) = r.groups.first() else {
            return Vec::new();
        };
        g.topics
            .iter()
            .flat_map(|t| {
                let topic: Id = topic_name(&t.name.0, || t.topic_id.to_string()).into();
                t.partitions.iter().map(move |p| {
                    offset(&topic, p.partition_index, p.committed_offset, p.error_code)
                })
            })
            .take(MAX_OFFSETS)
            .collect()
    } else {
        r.topics
            .iter()
            .flat_map(|t| {
                let topic: Id = text(&t.name.0).into();
                t.partitions.iter().map(move |p| {
                    offset(&topic, p.partition_index, p.committed_offset, p.error_code)
                })
            })
            .take(MAX_OFFSETS)
            .collect()
    }
}

fn offset_fetch(r: OffsetFetchResponse, v: i16, exchange: u64) -> Decoded {
    let code = if v >= 8 {
        r.groups.first().and_then(|g| {
            let inner = g
                .topics
                .iter()
                .flat_map(|t| t.partitions.iter().map(|p| p.error_code));
            if g.error_code != 0 {
                Some(g.error_code)
            } else {
                first_error(inner).or(Some(0))
            }
        })
    } else {
        let inner = first_error(
            r.topics
                .iter()
                .flat_map(|t| t.partitions.iter().map(|p| p.error_code)),
        );
        // The top-level error code exists from v2.
        if v >= 2 && r.error_code != 0 {
            Some(r.error_code)
        } else {
            inner.or((v >= 2).then_some(0))
        }
    };
    let kind = EventKind::OffsetFetch {
        exchange,
        error: code.and_then(ErrorCode::from_code),
        offsets: fetched_offsets(&r, v),
    };
    Decoded {
        group_id: if v >= 8 {
            r.groups.first().map(|g| text(&g.group_id.0))
        } else {
            None
        },
        error_code: code,
        kind: Some(kind),
        ..Decoded::default()
    }
}

fn find_coordinator(r: FindCoordinatorResponse, v: i16, exchange: u64) -> Decoded {
    let answer =
        |code: i16, node_id: i32, host: String, port: i32| EventKind::FindCoordinatorResponse {
            exchange,
            node_id,
            coordinator: format!("{host}:{port}").into(),
            error: ErrorCode::from_code(code),
        };
    if v < 4 {
        let kind = answer(r.error_code, r.node_id.0, text(&r.host), r.port);
        return with_error(r.error_code, kind);
    }
    // v4+ answer per key (KIP-699): one event per key, the first is the
    // exchange's. Whether the keys are groups is the request's to say
    // (`exchange::build` drops them for transactional ids).
    let groups: Vec<(String, EventKind)> = r
        .coordinators
        .iter()
        .map(|c| {
            (
                text(&c.key),
                answer(c.error_code, c.node_id.0, text(&c.host), c.port),
            )
        })
        .collect();
    let codes = r.coordinators.iter().map(|c| c.error_code);
    many(groups, first_error(codes))
}

fn describe_groups(r: DescribeGroupsResponse, v: i16, exchange: u64, b: &Budget) -> Decoded {
    let groups: Vec<(String, EventKind)> = b
        .keep(&r.groups, |g| entry_cost(g.group_id.len()))
        .iter()
        .map(|g| {
            let members = b
                .keep(&g.members, |m| entry_cost(m.member_id.len()))
                .iter()
                .map(|m| DescribedMember {
                    member_id: text(&m.member_id),
                    group_instance_id: if v >= 4 {
                        opt_text(&m.group_instance_id)
                    } else {
                        None
                    },
                    client_id: text(&m.client_id),
                    client_host: text(&m.client_host),
                    assignment: consumer_protocol::assignment(&m.member_assignment, b)
                        .unwrap_or_default(),
                })
                .collect();
            let kind = EventKind::GroupDescribed {
                exchange,
                state: shared_text(&g.group_state),
                protocol: shared_text(&g.protocol_data),
                members,
                error: ErrorCode::from_code(g.error_code),
            };
            (text(&g.group_id.0), kind)
        })
        .collect();
    many(groups, first_error(r.groups.iter().map(|g| g.error_code)))
}

/// DeleteGroups: one event per group answered, deleted or refused
/// (GROUP_NOT_EMPTY while it has members, GroupCoordinator
/// `handleDeleteGroups` / GroupMetadataManager `deleteGroups`).
fn delete_groups(r: DeleteGroupsResponse, exchange: u64, b: &Budget) -> Decoded {
    let groups = b
        .keep(&r.results, |g| entry_cost(g.group_id.len()))
        .iter()
        .map(|g| {
            let kind = EventKind::GroupDeleted {
                exchange,
                error: ErrorCode::from_code(g.error_code),
            };
            (text(&g.group_id.0), kind)
        })
        .collect();
    many(groups, first_error(r.results.iter().map(|g| g.error_code)))
}

/// A response about several groups: the first is the exchange's event.
fn many(groups: Vec<(String, EventKind)>, error_code: Option<i16>) -> Decoded {
    Decoded {
        group_id: groups.first().map(|(g, _)| g.clone()),
        kind: groups.first().map(|(_, k)| k.clone()),
        error_code,
        groups,
        ..Decoded::default()
    }
}

fn list_groups(r: ListGroupsResponse, v: i16, exchange: u64, b: &Budget) -> Decoded {
    let groups = b
        .keep(&r.groups, |g| entry_cost(g.group_id.len()))
        .iter()
        .map(|g| {
            let state = (v >= 4).then(|| shared_text(&g.group_state));
            let kind = EventKind::GroupListed {
                exchange,
                state,
                protocol_type: shared_text(&g.protocol_type),
            };
            (text(&g.group_id.0), kind)
        })
        .collect();
    // A listing names no single group.
    Decoded {
        group_id: None,
        ..many(groups, Some(r.error_code))
    }
}

fn consumer_group_heartbeat(
    r: ConsumerGroupHeartbeatResponse,
    exchange: u64,
    b: &Budget,
) -> Decoded {
    let assignment = r.assignment.as_ref().map(|a| {
        b.keep(&a.topic_partitions, |_| entry_cost(36))
            .iter()
            .map(|tp| TopicPartitions {
                topic: tp.topic_id.to_string(),
                partitions: b.partitions(&tp.partitions),
            })
            .collect()
    });
    let kind = EventKind::ConsumerGroupHeartbeatResponse {
        exchange,
        error: ErrorCode::from_code(r.error_code),
        error_message: opt_shared_text(&r.error_message),
        member_epoch: r.member_epoch,
        heartbeat_interval_ms: r.heartbeat_interval_ms,
        assignment,
    };
    Decoded {
        member_id: r.member_id.as_ref().and_then(member),
        generation_id: Some(r.member_epoch),
        ..with_error(r.error_code, kind)
    }
}

fn consumer_group_describe(r: ConsumerGroupDescribeResponse, exchange: u64, b: &Budget) -> Decoded {
    let groups: Vec<(String, EventKind)> = b
        .keep(&r.groups, |g| entry_cost(g.group_id.len()))
        .iter()
        .map(|g| {
            let members = b
                .keep(&g.members, |m| entry_cost(m.member_id.len()))
                .iter()
                .map(|m| DescribedMember {
                    member_id: text(&m.member_id),
                    group_instance_id: opt_text(&m.instance_id),
                    client_id: text(&m.client_id),
                    client_host: text(&m.client_host),
                    assignment: b
                        .keep(&m.assignment.topic_partitions, |tp| {
                            entry_cost(tp.topic_name.len())
                        })
                        .iter()
                        .map(|tp| TopicPartitions {
                            topic: text(&tp.topic_name.0),
                            partitions: b.partitions(&tp.partitions),
                        })
                        .collect(),
                })
                .collect();
            let kind = EventKind::GroupDescribed {
                exchange,
                state: shared_text(&g.group_state),
                protocol: shared_text(&g.assignor_name),
                members,
                error: ErrorCode::from_code(g.error_code),
            };
            (text(&g.group_id.0), kind)
        })
        .collect();
    many(groups, first_error(r.groups.iter().map(|g| g.error_code)))
}

#[cfg(test)]
mod tests {
    use kafka_protocol::messages::offset_commit_response::{
        OffsetCommitResponsePartition, OffsetCommitResponseTopic,
    };
    use kafka_protocol::messages::TopicName;

    use super::*;
    use crate::kafka::testkit::{response as frame, s};

    #[test]
    fn reports_the_first_failing_partition_of_an_offset_commit() {
        let partition = |i: i32, e: i16| {
            OffsetCommitResponsePartition::default()
                .with_partition_index(i)
                .with_error_code(e)
        };
        let resp =
            OffsetCommitResponse::default().with_topics(vec![OffsetCommitResponseTopic::default()
                .with_name(TopicName(s("t")))
                .with_partitions(vec![partition(0, 0), partition(1, 27), partition(2, 22)])]);
        let f = frame(key::OFFSET_COMMIT, 8, 1, &resp);
        let d = response(f[4..].to_vec(), key::OFFSET_COMMIT, 8, 3).unwrap();
        assert_eq!(d.error_code, Some(27));
        let Some(EventKind::OffsetCommitResponse {
            exchange: 3,
            error: Some(ErrorCode(27)),
            partitions,
        }) = d.kind
        else {
            panic!("{:?}", d.kind)
        };
        let errors: Vec<(i32, Option<&str>)> = partitions
            .iter()
            .map(|p| (p.partition, p.error.map(|e| e.name())))
            .collect();
        assert_eq!(
            errors,
            vec![
                (1, Some("REBALANCE_IN_PROGRESS")),
                (2, Some("ILLEGAL_GENERATION"))
            ]
        );
    }

    #[test]
    fn an_offset_commit_answer_without_partitions_has_no_error_code() {
        let f = frame(key::OFFSET_COMMIT, 8, 1, &OffsetCommitResponse::default());
        let d = response(f[4..].to_vec(), key::OFFSET_COMMIT, 8, 3).unwrap();
        assert_eq!(d.error_code, None);
    }
}
