//! What the stops stage looks up: per group, who owned which partition in
//! which generation and what each member did when; per client, its Fetch
//! positions and the watermarks it was answered.
//!
//! Takes: one group's events (time order) and every data-path event.
//! Gives: [`GroupIndex`] and [`ClientIndex`]. Members are tied to their
//! Fetch traffic by client id and host: a consumer fetches from partition
//! leaders over other connections than its coordinator's, but from the
//! same host under the same `client.id`.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::event::{DataEvent, DataKind, ErrorCode, EventKind, GroupEvent, PartitionOffset};
use crate::fast_hash::{FastMap, FastSet};
use crate::time::Timestamp;

/// A client as seen on the wire: `client_id` and host (no port).
pub(crate) type ClientKey = (String, String);

/// The client key of an event's client, if it has a client id.
pub(crate) fn client_key(client_id: Option<&str>, address: Option<&str>) -> Option<ClientKey> {
    let id = client_id?;
    let host = address.map_or("", |a| a.rsplit_once(':').map_or(a, |(h, _)| h));
    Some((id.to_string(), host.to_string()))
}

/// One SyncGroup answer: a member's assignment in a generation.
#[derive(Clone, Debug)]
pub(crate) struct Assigned {
    pub ts: Timestamp,
    pub member_id: String,
    pub partitions: Vec<String>,
    /// Not an answer: inferred from the member's data path (module
    /// `inferred`).
    pub inferred: bool,
}

/// One OffsetCommit request and its answer's per-partition errors.
#[derive(Clone, Debug, Default)]
pub(crate) struct Commit {
    pub ts: Timestamp,
    pub offsets: Vec<PartitionOffset>,
    /// Per partition error (None: answered without error); `answered`
    /// false when no answer was captured.
    pub errors: FastMap<String, Option<ErrorCode>>,
    pub answered: bool,
    /// Top-level error of the answer (first partition error).
    pub error: Option<ErrorCode>,
}

/// What one member did, in time order.
#[derive(Clone, Debug, Default)]
pub(crate) struct MemberTrail {
    pub client_id: Option<String>,
    /// Its `group.instance.id` (KIP-345), if static.
    pub group_instance_id: Option<String>,
    pub client: Option<ClientKey>,
    /// Its JoinGroup requests.
    pub joins: Vec<Timestamp>,
    /// Its LeaveGroup requests, with the KIP-800 reason.
    pub leaves: Vec<(Timestamp, Option<String>)>,
    /// Every request it sent (JoinGroup, SyncGroup, Heartbeat, OffsetCommit).
    pub requests: Vec<Timestamp>,
    /// Its OffsetCommits.
    pub commits: Vec<Commit>,
    /// `rebalance_timeout_ms` (max.poll.interval.ms) of its last JoinGroup.
    pub rebalance_timeout_ms: Option<i32>,
    /// When a connection it used ended (FIN or RST).
    pub closed: Vec<Timestamp>,
}

/// A JoinGroup with an empty member id and a `group.instance.id`: a static
/// member's new process (KIP-345), or one that reset its member id.
#[derive(Clone, Debug)]
pub(crate) struct StaticJoin {
    pub ts: Timestamp,
    pub group_instance_id: String,
}

/// One group's ownership and member trails.
#[derive(Debug, Default)]
pub(crate) struct GroupIndex {
    /// Assignments by generation.
    pub assigned: BTreeMap<i32, Vec<Assigned>>,
    /// The protocol (assignor) each generation's JoinGroup answers name.
    pub protocols: BTreeMap<i32, String>,
    pub members: FastMap<String, MemberTrail>,
    /// OffsetFetch answers by client: `(ts, offsets)`.
    pub offset_fetches: FastMap<ClientKey, Vec<(Timestamp, Vec<PartitionOffset>)>>,
    /// Static members' JoinGroups with an empty member id, in time order.
    pub static_joins: Vec<StaticJoin>,
}

impl GroupIndex {
    /// Indexes one group's events.
    pub(crate) fn build(events: &[&GroupEvent]) -> GroupIndex {
        let mut g = GroupIndex::default();
        let mut pending: FastMap<u64, (String, usize)> = FastMap::default();
        for ev in events {
            g.member(ev);
            match &ev.kind {
                EventKind::SyncGroupResponse {
                    error: None,
                    assignment,
                    ..
                } => {
                    if let (Some(m), Some(gen)) = (&ev.member_id, ev.generation_id) {
                        let partitions = assignment
                            .iter()
                            .flat_map(|t| {
                                t.partitions.iter().map(move |p| format!("{}-{p}", t.topic))
                            })
                            .collect();
                        g.assigned.entry(gen).or_default().push(Assigned {
                            ts: ev.ts,
                            member_id: m.clone(),
                            partitions,
                            inferred: false,
                        });
                    }
                }
                EventKind::JoinGroupResponse {
                    error: None,
                    protocol_name: Some(p),
                    ..
                } => {
                    if let Some(gen) = ev.generation_id {
                        g.protocols.insert(gen, p.clone());
                    }
                }
                EventKind::OffsetCommitRequest {
                    exchange, offsets, ..
                } => {
                    if let Some(m) = &ev.member_id {
                        let t = g.members.entry(m.clone()).or_default();
                        t.commits.push(Commit {
                            ts: ev.ts,
                            offsets: offsets.clone(),
                            ..Commit::default()
                        });
                        pending.insert(*exchange, (m.clone(), t.commits.len() - 1));
                    }
                }
                EventKind::OffsetCommitResponse {
                    exchange,
                    error,
                    partitions,
                } => {
                    if let Some((m, i)) = pending.remove(exchange) {
                        if let Some(c) = g.members.get_mut(&m).and_then(|t| t.commits.get_mut(i)) {
                            c.answered = true;
                            c.error = *error;
                            c.errors = partitions
                                .iter()
                                .map(|p| (format!("{}-{}", p.topic, p.partition), p.error))
                                .collect();
                        }
                    }
                }
                EventKind::JoinGroupRequest { .. }
                    if ev.member_id.as_deref().is_none_or(str::is_empty) =>
                {
                    if let Some(i) = &ev.group_instance_id {
                        g.static_joins.push(StaticJoin {
                            ts: ev.ts,
                            group_instance_id: i.clone(),
                        });
                    }
                }
                EventKind::ConnectionClosed { .. } => {
                    if let Some(t) = ev.member_id.as_ref().and_then(|m| g.members.get_mut(m)) {
                        t.closed.push(ev.ts);
                    }
                }
                EventKind::OffsetFetch { offsets, .. } if !offsets.is_empty() => {
                    let key =
                        client_key(ev.client.client_id.as_deref(), ev.client.address.as_deref());
                    if let Some(k) = key {
                        g.offset_fetches
                            .entry(k)
                            .or_default()
                            .push((ev.ts, offsets.clone()));
                    }
                }
                _ => {}
            }
        }
        g
    }

    fn member(&mut self, ev: &GroupEvent) {
        let Some(m) = &ev.member_id else { return };
        let is_request = matches!(
            ev.kind,
            EventKind::JoinGroupRequest { .. }
                | EventKind::SyncGroupRequest { .. }
                | EventKind::HeartbeatRequest { .. }
                | EventKind::OffsetCommitRequest { .. }
                | EventKind::LeaveGroupRequest { .. }
                | EventKind::ConsumerGroupHeartbeatRequest { .. }
        );
        if !is_request {
            return;
        }
        let t = self.members.entry(m.clone()).or_default();
        if t.client_id.is_none() {
            t.client_id = ev.client.client_id.clone();
            t.client = client_key(ev.client.client_id.as_deref(), ev.client.address.as_deref());
        }
        if t.group_instance_id.is_none() {
            t.group_instance_id = ev.group_instance_id.clone();
        }
        t.requests.push(ev.ts);
        match &ev.kind {
            EventKind::JoinGroupRequest {
                rebalance_timeout_ms,
                ..
            } => {
                t.joins.push(ev.ts);
                if rebalance_timeout_ms.is_some() {
                    t.rebalance_timeout_ms = *rebalance_timeout_ms;
                }
            }
            EventKind::LeaveGroupRequest { members, .. } => {
                let reason = members
                    .iter()
                    .find(|x| &x.member_id == m)
                    .and_then(|x| x.reason.clone());
                t.leaves.push((ev.ts, reason));
            }
            _ => {}
        }
    }

    /// Owner of each partition in generation `gen`, with the answer's time.
    pub(crate) fn owners(&self, gen: i32) -> BTreeMap<&str, &Assigned> {
        self.owners_between(gen, Timestamp(i64::MIN), Timestamp(i64::MAX))
    }

    /// Owners in generation `gen` from answers in `[from, to)` (a broker
    /// that reuses a generation number answers it again in a later round).
    pub(crate) fn owners_between(
        &self,
        gen: i32,
        from: Timestamp,
        to: Timestamp,
    ) -> BTreeMap<&str, &Assigned> {
        let mut out = BTreeMap::new();
        let answers = self.assigned.get(&gen).into_iter().flatten();
        for a in answers.filter(|a| a.ts >= from && a.ts < to) {
            for p in &a.partitions {
                out.insert(p.as_str(), a);
            }
        }
        out
    }
}

/// One client's Fetch traffic.
#[derive(Debug, Default)]
pub(crate) struct ClientTrail {
    /// Fetch requests: `(ts, partition, fetch_offset)` in time order.
    pub positions: Vec<(Timestamp, Arc<str>, i64)>,
    /// Fetch answers: `(ts, partition, high_watermark)` in time order.
    pub watermarks: Vec<(Timestamp, Arc<str>, i64)>,
    /// Requests of any kind (Fetch), for "last seen".
    pub fetches: Vec<Timestamp>,
}

/// Every client's Fetch traffic, topic ids resolved to names.
#[derive(Debug, Default)]
pub(crate) struct ClientIndex {
    pub clients: FastMap<ClientKey, ClientTrail>,
    /// Topic ids no Metadata answer named.
    pub unnamed_topic_ids: usize,
    /// Topic names by topic id, from Metadata answers (v10+).
    pub topic_names: FastMap<String, String>,
}

impl ClientIndex {
    /// Indexes data events (in any order; sorted here). Each client is
    /// looked up by its borrowed `(client_id, address)` and each partition's
    /// `topic-N` written once and shared, so an event costs a hash, not
    /// allocations.
    pub(crate) fn build<'a>(data: &'a [DataEvent]) -> ClientIndex {
        let mut names: FastMap<&str, &str> = FastMap::default();
        for d in data {
            if let DataKind::TopicIds { topics } = &d.kind {
                for (name, id) in topics {
                    names.insert(id.as_str(), name.as_str());
                }
            }
        }
        let mut unnamed = FastSet::default();
        let mut written: FastMap<(&str, i32), Arc<str>> = FastMap::default();
        let mut name = |topic: &'a str, p: i32| -> Arc<str> {
            if let Some(tp) = written.get(&(topic, p)) {
                return tp.clone();
            }
            let t = names.get(topic).copied().unwrap_or_else(|| {
                if looks_like_uuid(topic) {
                    unnamed.insert(topic.to_string());
                }
                topic
            });
            let tp: Arc<str> = format!("{t}-{p}").into();
            written.insert((topic, p), tp.clone());
            tp
        };
        // Per `(client_id, address)` of the events: its trail, if it has a
        // client id; trails are shared by every address of one host.
        let mut slots: FastMap<(Option<&str>, Option<&str>), Option<usize>> = FastMap::default();
        let mut keys: FastMap<ClientKey, usize> = FastMap::default();
        let mut trails: Vec<(ClientKey, ClientTrail, bool)> = Vec::new();
        for d in data {
            let (id, address) = (d.client.client_id.as_deref(), d.client.address.as_deref());
            let slot = *slots.entry((id, address)).or_insert_with(|| {
                let key = client_key(id, address)?;
                Some(*keys.entry(key.clone()).or_insert_with(|| {
                    trails.push((key, ClientTrail::default(), false));
                    trails.len() - 1
                }))
            });
            let Some(slot) = slot else { continue };
            let (_, c, used) = &mut trails[slot];
            match &d.kind {
                DataKind::FetchRequest { partitions, .. } => {
                    *used = true;
                    c.fetches.push(d.ts);
                    for p in partitions {
                        c.positions
                            .push((d.ts, name(&p.topic, p.partition), p.offset));
                    }
                }
                DataKind::FetchResponse { partitions, .. } => {
                    *used = true;
                    for p in partitions.iter().filter(|p| p.error.is_none()) {
                        c.watermarks
                            .push((d.ts, name(&p.topic, p.partition), p.high_watermark));
                    }
                }
                _ => {}
            }
        }
        let mut idx = ClientIndex {
            topic_names: names
                .iter()
                .map(|(id, n)| (id.to_string(), n.to_string()))
                .collect(),
            ..ClientIndex::default()
        };
        for (key, mut c, _) in trails.into_iter().filter(|t| t.2) {
            c.positions.sort_by_key(|x| x.0);
            c.watermarks.sort_by_key(|x| x.0);
            c.fetches.sort();
            idx.clients.insert(key, c);
        }
        idx.unnamed_topic_ids = unnamed.len();
        idx
    }
}

fn looks_like_uuid(s: &str) -> bool {
    s.len() == 36 && s.bytes().filter(|b| *b == b'-').count() == 4
}
