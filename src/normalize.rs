//! Exchanges and closed connections → [`GroupEvent`]s.
//!
//! Takes: [`Exchange`]s and [`ClosedConnection`]s from [`crate::kafka`].
//! Gives: one [`GroupEvent`] per side seen of each group-API exchange (the
//! request at its time with its frame, the response at its time with its
//! frame), and one `ConnectionClosed` event per closed connection that
//! carried group traffic. After this stage nothing depends on the wire.
//! The events of one input share their client and their group, member
//! and instance ids ([`ClientCache`]); each exchange is spent making them
//! (its request and response move into the events).
//!
//! Connection closes: [`crate::kafka::KafkaDecoder::take_closed`] hands
//! back, for each connection that named a group and then saw FIN or RST,
//! the last client id, group, member id and static id used on it;
//! [`events_from_close`] turns one into an event, so the reconstructor can
//! tell "closed after LeaveGroup" from "vanished without one". Connections
//! still open when the input ends produce nothing.

use crate::event::Source;
use std::sync::Arc;

use crate::event::{ClientRef, DataEvent, EventKind, Evidence, GroupEvent, Id, Ids, Location};
use crate::fast_hash::FastMap;
use crate::kafka::{ClosedConnection, Exchange};
use crate::time::Timestamp;

/// The group events one exchange shows: its request (if captured and of a
/// group API), then its response (one event per group for responses about
/// several groups). The request and response are moved out of `ex`, not
/// copied: what is left serves only the data path and the `decode` row.
pub fn events_from_exchange(
    ex: &mut Exchange,
    source: &Source,
    shared: &mut ClientCache,
) -> Vec<GroupEvent> {
    let mut events = Vec::new();
    // Most exchanges of a capture (Fetch, Produce) carry no group event:
    // their client is not formatted for nothing.
    if ex.request.is_none() && ex.response.is_none() && ex.response_groups.is_empty() {
        return events;
    }
    let client = shared_client(ex, shared);
    let ids = &mut shared.ids;
    let group = ids.of(ex.group_id.as_deref());
    let instance = ids.of(ex.group_instance_id.as_deref());
    let request_member = ids.of(ex.request_member_id.as_deref());
    // The exchange is spent here: its kinds move into the events rather
    // than being copied (a commit's copy was one allocation per partition).
    if let (Some(kind), Some(ts), Some(frame)) =
        (ex.request.take(), ex.request_ts, ex.request_frame)
    {
        events.push(GroupEvent {
            ts,
            group: group.clone(),
            member_id: request_member.clone(),
            group_instance_id: instance.clone(),
            generation_id: ex.request_generation_id,
            client: client.clone(),
            kind,
            truncated: ex.request_truncated,
            evidence: evidence(source, frame),
        });
    }
    let (Some(ts), Some(frame)) = (ex.response_ts, ex.response_frame) else {
        return events;
    };
    if !ex.response_groups.is_empty() {
        for (name, kind) in std::mem::take(&mut ex.response_groups) {
            events.push(about_group(
                ts,
                ids.id(&name),
                kind,
                &client,
                evidence(source, frame),
            ));
        }
    } else if let Some(kind) = ex.response.take() {
        let member = match ex.response_member_id.as_deref() {
            Some(m) => Some(ids.id(m)),
            None => request_member,
        };
        events.push(GroupEvent {
            ts,
            group,
            member_id: member,
            group_instance_id: instance,
            generation_id: ex.response_generation_id.or(ex.request_generation_id),
            client,
            kind,
            truncated: ex.response_truncated,
            evidence: evidence(source, frame),
        });
    }
    events
}

/// The connection's client as one shared value: the cached one while its
/// client id and software are unchanged (the address and broker are the
/// connection's own), else a new one that replaces it.
fn shared_client(ex: &Exchange, shared: &mut ClientCache) -> Arc<ClientRef> {
    let clients = &mut shared.clients;
    if let Some(c) = clients.get(&ex.conn).filter(|c| {
        c.client_id.as_deref() == ex.client_id.as_deref()
            && c.software.as_deref() == ex.client_software.as_deref()
    }) {
        return c.clone();
    }
    let c = Arc::new(client_ref(ex));
    clients.insert(ex.conn, c.clone());
    c
}

/// What the events of one input share: each connection's client (by its
/// group and data-path events) and one copy of each group, member and
/// instance id.
#[derive(Debug, Default)]
pub struct ClientCache {
    clients: FastMap<u64, Arc<ClientRef>>,
    ids: Ids,
}

impl ClientCache {
    /// Nothing shared yet.
    pub fn new() -> ClientCache {
        ClientCache::default()
    }
}

/// The data-path events one exchange shows (Fetch positions and partition
/// headers, ListOffsets, Metadata topic ids), moved out of it into `out`.
pub fn data_events_from_exchange(
    ex: &mut Exchange,
    source: &Source,
    shared: &mut ClientCache,
    out: &mut Vec<DataEvent>,
) {
    let clients = &mut shared.clients;
    if ex.request_data.is_none() && ex.response_data.is_none() {
        return;
    }
    let cached = clients
        .get(&ex.conn)
        .filter(|c| c.client_id.as_deref() == ex.client_id.as_deref() || ex.client_id.is_none());
    let client = match cached {
        Some(c) => c.clone(),
        None => {
            let c = Arc::new(client_ref(ex));
            clients.insert(ex.conn, c.clone());
            c
        }
    };
    if let (Some(kind), Some(ts), Some(frame)) =
        (ex.request_data.take(), ex.request_ts, ex.request_frame)
    {
        out.push(DataEvent {
            ts,
            client: client.clone(),
            kind,
            evidence: evidence(source, frame),
        });
    }
    if let (Some(kind), Some(ts), Some(frame)) =
        (ex.response_data.take(), ex.response_ts, ex.response_frame)
    {
        out.push(DataEvent {
            ts,
            client,
            kind,
            evidence: evidence(source, frame),
        });
    }
}

/// The `ConnectionClosed` event for a connection that carried group traffic.
pub fn events_from_close(closed: &ClosedConnection, source: &Source) -> GroupEvent {
    GroupEvent {
        ts: closed.ts,
        group: closed.group_id.as_deref().map(Id::from),
        member_id: closed.member_id.as_deref().map(Id::from),
        group_instance_id: closed.group_instance_id.as_deref().map(Id::from),
        generation_id: None,
        client: Arc::new(ClientRef {
            client_id: closed.client_id.as_deref().map(str::to_owned),
            address: Some(closed.client.to_string()),
            software: closed.software.as_deref().map(str::to_owned),
            broker: Some(closed.server.to_string()),
        }),
        kind: EventKind::ConnectionClosed {
            reset: closed.reset,
        },
        truncated: false,
        evidence: evidence(source, closed.frame),
    }
}

fn about_group(
    ts: Timestamp,
    group: Id,
    kind: EventKind,
    client: &Arc<ClientRef>,
    evidence: Evidence,
) -> GroupEvent {
    GroupEvent {
        ts,
        group: Some(group),
        member_id: None,
        group_instance_id: None,
        generation_id: None,
        client: client.clone(),
        kind,
        truncated: false,
        evidence,
    }
}

fn client_ref(ex: &Exchange) -> ClientRef {
    ClientRef {
        client_id: ex.client_id.as_deref().map(str::to_owned),
        address: Some(ex.client.to_string()),
        software: ex.client_software.as_deref().map(str::to_owned),
        broker: Some(ex.server.to_string()),
    }
}

fn evidence(source: &Source, frame: u64) -> Evidence {
    Evidence {
        source: source.clone(),
        at: Location::Frame { frame },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::testkit::{join_group_v5_frames, list_groups_v4_frames, Sim, BROKER, CLIENT};
    use crate::tcp::Direction::{ToClient, ToServer};

    fn source() -> Source {
        crate::event::Source::from("test.pcap")
    }

    #[test]
    fn gives_a_request_event_and_a_response_event_with_their_own_frames() {
        let mut sim = Sim::new();
        sim.open(1, true);
        let (q, r) = join_group_v5_frames(3);
        let qf = sim.send(1, ToServer, &q);
        let rf = sim.send(1, ToClient, &r);
        let events =
            events_from_exchange(&mut sim.only().clone(), &source(), &mut ClientCache::new());
        assert_eq!(events.len(), 2);
        let (req, resp) = (&events[0], &events[1]);
        assert_eq!(req.evidence.at, Location::Frame { frame: qf });
        assert_eq!(resp.evidence.at, Location::Frame { frame: rf });
        assert!(req.ts < resp.ts);
        // The request names no member yet, nor a generation; the answer does.
        assert_eq!((req.member_id.as_deref(), req.generation_id), (None, None));
        assert_eq!(
            (resp.member_id.as_deref(), resp.generation_id),
            (Some("m-9"), Some(4))
        );
        assert_eq!(req.group_instance_id.as_deref(), Some("i-1"));
        assert_eq!(req.group.as_deref(), Some("g"));
        assert_eq!(req.client.client_id.as_deref(), Some("app"));
        assert_eq!(req.client.address.as_deref(), Some(CLIENT));
        assert_eq!(req.client.broker.as_deref(), Some(BROKER));
        let EventKind::JoinGroupResponse { parked_ms, .. } = &resp.kind else {
            panic!("{resp:?}")
        };
        assert_eq!(*parked_ms, Some(1.0));
    }

    #[test]
    fn gives_one_event_per_listed_group() {
        let mut sim = Sim::new();
        sim.open(1, true);
        let (q, r) = list_groups_v4_frames(1);
        sim.send(1, ToServer, &q);
        sim.send(1, ToClient, &r);
        let events =
            events_from_exchange(&mut sim.only().clone(), &source(), &mut ClientCache::new());
        let groups: Vec<Option<&str>> = events.iter().map(|e| e.group.as_deref()).collect();
        assert_eq!(groups, vec![Some("a"), Some("b")]);
        let EventKind::GroupListed { state, .. } = &events[1].kind else {
            panic!()
        };
        assert_eq!(state.as_deref(), Some("Empty"));
    }

    #[test]
    fn gives_nothing_for_apis_without_group_events() {
        let mut sim = Sim::new();
        sim.open(1, true);
        sim.send(
            1,
            ToServer,
            &crate::kafka::testkit::raw_request(3, 12, 1, "app", &[0; 8]),
        );
        sim.send(
            1,
            ToClient,
            &crate::kafka::testkit::raw_response(1, &[0; 8]),
        );
        assert_eq!(sim.only().api, "Metadata");
        assert!(
            events_from_exchange(&mut sim.only().clone(), &source(), &mut ClientCache::new())
                .is_empty()
        );
    }

    #[test]
    fn attributes_a_closed_connection_to_the_member_that_used_it() {
        let mut sim = Sim::new();
        sim.open(1, true);
        let (q, r) = join_group_v5_frames(3);
        sim.send(1, ToServer, &q);
        sim.send(1, ToClient, &r);
        sim.close(1, false);
        let e = events_from_close(&sim.closed[0], &source());
        assert_eq!(e.kind, EventKind::ConnectionClosed { reset: false });
        assert_eq!(
            (e.group.as_deref(), e.member_id.as_deref()),
            (Some("g"), Some("m-9"))
        );
        assert_eq!(e.group_instance_id.as_deref(), Some("i-1"));
        assert_eq!(e.client.address.as_deref(), Some(CLIENT));
    }
}
