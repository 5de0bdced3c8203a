//! Exchanges and closed connections → [`GroupEvent`]s.
//!
//! Takes: [`Exchange`]s and [`ClosedConnection`]s from [`crate::kafka`].
//! Gives: one [`GroupEvent`] per side seen of each group-API exchange (the
//! request at its time with its frame, the response at its time with its
//! frame), and one `ConnectionClosed` event per closed connection that
//! carried group traffic. After this stage nothing depends on the wire.
//!
//! Connection closes: [`crate::kafka::KafkaDecoder::take_closed`] hands
//! back, for each connection that named a group and then saw FIN or RST,
//! the last client id, group, member id and static id used on it;
//! [`events_from_close`] turns one into an event, so the reconstructor can
//! tell "closed after LeaveGroup" from "vanished without one". Connections
//! still open when the input ends produce nothing.

use std::sync::Arc;

use crate::event::{ClientRef, EventKind, Evidence, GroupEvent, Location};
use crate::kafka::{ClosedConnection, Exchange};
use crate::time::Timestamp;

/// The group events one exchange shows: its request (if captured and of a
/// group API), then its response (one event per group for responses about
/// several groups).
pub fn events_from_exchange(ex: &Exchange, source: &Arc<str>) -> Vec<GroupEvent> {
    let mut events = Vec::new();
    let client = client_ref(ex);
    if let (Some(kind), Some(ts), Some(frame)) = (&ex.request, ex.request_ts, ex.request_frame) {
        events.push(GroupEvent {
            ts,
            group: ex.group_id.clone(),
            member_id: ex.request_member_id.clone(),
            group_instance_id: ex.group_instance_id.clone(),
            generation_id: ex.request_generation_id,
            client: client.clone(),
            kind: kind.clone(),
            evidence: evidence(source, frame),
        });
    }
    let (Some(ts), Some(frame)) = (ex.response_ts, ex.response_frame) else {
        return events;
    };
    if !ex.response_groups.is_empty() {
        for (group, kind) in &ex.response_groups {
            events.push(about_group(
                ts,
                group,
                kind,
                &client,
                evidence(source, frame),
            ));
        }
    } else if let Some(kind) = &ex.response {
        events.push(GroupEvent {
            ts,
            group: ex.group_id.clone(),
            member_id: ex
                .response_member_id
                .clone()
                .or(ex.request_member_id.clone()),
            group_instance_id: ex.group_instance_id.clone(),
            generation_id: ex.response_generation_id.or(ex.request_generation_id),
            client,
            kind: kind.clone(),
            evidence: evidence(source, frame),
        });
    }
    events
}

/// The `ConnectionClosed` event for a connection that carried group traffic.
pub fn events_from_close(closed: &ClosedConnection, source: &Arc<str>) -> GroupEvent {
    GroupEvent {
        ts: closed.ts,
        group: closed.group_id.clone(),
        member_id: closed.member_id.clone(),
        group_instance_id: closed.group_instance_id.clone(),
        generation_id: None,
        client: ClientRef {
            client_id: closed.client_id.clone(),
            address: Some(closed.client.to_string()),
            software: closed.software.clone(),
            broker: Some(closed.server.to_string()),
        },
        kind: EventKind::ConnectionClosed {
            reset: closed.reset,
        },
        evidence: evidence(source, closed.frame),
    }
}

fn about_group(
    ts: Timestamp,
    group: &str,
    kind: &EventKind,
    client: &ClientRef,
    evidence: Evidence,
) -> GroupEvent {
    GroupEvent {
        ts,
        group: Some(group.to_string()),
        member_id: None,
        group_instance_id: None,
        generation_id: None,
        client: client.clone(),
        kind: kind.clone(),
        evidence,
    }
}

fn client_ref(ex: &Exchange) -> ClientRef {
    ClientRef {
        client_id: ex.client_id.clone(),
        address: Some(ex.client.to_string()),
        software: ex.client_software.clone(),
        broker: Some(ex.server.to_string()),
    }
}

fn evidence(source: &Arc<str>, frame: u64) -> Evidence {
    Evidence {
        source: source.clone(),
        at: Location::Frame { frame },
    }
}
