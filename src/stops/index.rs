//! What the stops stage looks up: per group, who owned which partition in
//! which generation and what each member did when; per client, its Fetch
//! positions and the watermarks it was answered.
//!
//! Takes: one group's events (time order) and every data-path event.
//! Gives: [`GroupIndex`] and [`ClientIndex`] (the latter folded as the
//! data path streams, by [`ClientFolder`]). Members are tied to their
//! Fetch traffic by client id and host: a consumer fetches from partition
//! leaders over other connections than its coordinator's, but from the
//! same host under the same `client.id`.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::event::{
    ClientRef, DataEvent, DataKind, ErrorCode, EventKind, GroupEvent, Id, PartitionOffset,
};
use crate::fast_hash::{FastMap, FastSet};
use crate::time::Timestamp;

use super::commits::{CommitList, Topics};
use super::series::{Series, Times};

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
///
/// Held packed until a group's index is built ([`CommitList`]), then for
/// one group at a time, in exact-sized slices.
#[derive(Clone, Debug, Default)]
pub(crate) struct Commit {
    pub ts: Timestamp,
    pub offsets: Box<[PartitionOffset]>,
    /// The partitions answered with an error, as `topic-N` (a few at
    /// most: looked up by scanning); `answered` false when no answer was
    /// captured.
    pub errors: Box<[(String, Option<ErrorCode>)]>,
    pub answered: bool,
    /// Top-level error of the answer (first partition error).
    pub error: Option<ErrorCode>,
}

/// Every OffsetCommit of each group, with its answer, as the stops stage
/// reads them ([`GroupIndex`]), gathered while the group events stream by:
/// `rebalances` of one capture folds the middle of each run of plain
/// commits out of the time line ([`crate::timeline::HeartbeatFold`]), but
/// the stops stage looks a partition's last commit up at any time (the new
/// owner's first Fetch), so every commit is kept here, without its event.
#[derive(Debug, Default)]
pub struct CommitBook {
    groups: FastMap<Id, GroupCommits>,
}

impl CommitBook {
    /// Takes note of `ev` if it is an OffsetCommit request or answer;
    /// each group's events must come in the time line's order (the book
    /// is kept group by group). A request's offsets are
    /// taken out of the event into the book, not copied: the events go on
    /// to the rebuilding, which reads only their count (`partitions`), and
    /// the stops stage reads the book (the kept requests' copies were
    /// 2.5 MB of the dense capture's peak RSS, and a copy per commit).
    pub fn see(&mut self, ev: &mut GroupEvent) {
        let is_commit = matches!(
            ev.kind,
            EventKind::OffsetCommitRequest { .. } | EventKind::OffsetCommitResponse { .. }
        );
        if let (true, Some(g)) = (is_commit, &ev.group) {
            let commits = self.groups.entry(g.clone()).or_default();
            match &mut ev.kind {
                EventKind::OffsetCommitRequest {
                    exchange, offsets, ..
                } => {
                    commits.request(ev.ts, ev.member_id.as_ref(), *exchange, offsets);
                    *offsets = Vec::new();
                }
                _ => commits.see(ev),
            }
        }
    }

    /// A book of `group`'s `commits` alone.
    pub(crate) fn of(group: Id, commits: GroupCommits) -> CommitBook {
        let mut groups = FastMap::default();
        groups.insert(group, commits);
        CommitBook { groups }
    }

    /// Takes one group's commits out of the book (none seen: an empty
    /// list): each group's are read once, by its own index.
    pub(crate) fn take(&mut self, group: &str) -> GroupCommits {
        self.groups.remove(group).unwrap_or_default()
    }
}

/// Where an index takes a group's commits from.
#[derive(Debug)]
pub(crate) enum CommitsFrom {
    /// Its events.
    Events,
    /// A book that saw every commit of the group while the events lost
    /// some ([`crate::timeline::HeartbeatFold`]).
    Book(GroupCommits),
    /// Its events and, besides them, a book of the commits taken out of
    /// them (`kgtrace watch`'s windows).
    EventsAnd(GroupCommits),
}

/// One group's commits by member, each member's in time order (packed:
/// [`CommitList`]), and the requests still waiting for their answer.
#[derive(Debug, Default)]
pub(crate) struct GroupCommits {
    members: FastMap<Id, CommitList>,
    topics: Topics,
    pending: FastMap<u64, (Id, usize)>,
}

impl GroupCommits {
    /// Commits already made ([`GroupCommits::commits`]), by member.
    pub(crate) fn of(commits: impl IntoIterator<Item = (Id, Commit)>) -> GroupCommits {
        let mut g = GroupCommits::default();
        for (m, c) in commits {
            let list = g.members.entry(m).or_default();
            list.push(c.ts, &c.offsets, &mut g.topics);
            if c.answered {
                list.answer(list.len() - 1, c.error, c.errors);
            }
        }
        g
    }

    /// Every commit noted, each member's in time order, and the requests
    /// never answered.
    pub(crate) fn commits(self) -> impl Iterator<Item = (Id, Commit)> {
        self.lists()
            .flat_map(|(m, list)| list.into_iter().map(move |c| (m.clone(), c)))
    }

    /// Each member's commits, in time order.
    fn lists(self) -> impl Iterator<Item = (Id, Vec<Commit>)> {
        let GroupCommits {
            members, topics, ..
        } = self;
        members
            .into_iter()
            .map(move |(m, list)| (m, list.commits(&topics)))
    }

    /// A request of `member` (none: a simple consumer's, not noted) with
    /// its offsets, answered later under `exchange`.
    fn request(
        &mut self,
        ts: Timestamp,
        member: Option<&Id>,
        exchange: u64,
        offsets: &[PartitionOffset],
    ) {
        if let Some(m) = member {
            let list = self.members.entry(m.clone()).or_default();
            list.push(ts, offsets, &mut self.topics);
            self.pending.insert(exchange, (m.clone(), list.len() - 1));
        }
    }

    /// A request is noted under its member; its answer, paired by
    /// exchange, says whether and how it was committed (in the time line's
    /// order).
    pub(crate) fn see(&mut self, ev: &GroupEvent) {
        match &ev.kind {
            EventKind::OffsetCommitRequest {
                exchange, offsets, ..
            } => self.request(ev.ts, ev.member_id.as_ref(), *exchange, offsets),
            EventKind::OffsetCommitResponse {
                exchange,
                error,
                partitions,
            } => {
                let Some((m, i)) = self.pending.remove(exchange) else {
                    return;
                };
                if let Some(list) = self.members.get_mut(&m) {
                    let errors = partitions
                        .iter()
                        .map(|p| (format!("{}-{}", p.topic, p.partition), p.error))
                        .collect();
                    list.answer(i, *error, errors);
                }
            }
            _ => {}
        }
    }
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
    pub members: FastMap<Id, MemberTrail>,
    /// OffsetFetch answers by client: `(ts, offsets)`.
    pub offset_fetches: FastMap<ClientKey, Vec<(Timestamp, Vec<PartitionOffset>)>>,
    /// Static members' JoinGroups with an empty member id, in time order.
    pub static_joins: Vec<StaticJoin>,
}

impl GroupIndex {
    /// Names the topic ids of commits and OffsetFetch answers (OffsetCommit
    /// and OffsetFetch v10+ carry ids, KIP-848) from `names` (Metadata
    /// answers: [`ClientIndex::topic_names`]), so that they meet the
    /// partitions Fetch and the assignments name; an id no answer named
    /// stays as it is.
    pub(crate) fn name_topics(&mut self, names: &FastMap<String, String>) {
        if names.is_empty() {
            return;
        }
        // One shared name per topic id met, not one copy per offset (and
        // none for the ids no offset of this group names: the watch engine
        // indexes groups again and again, and Metadata names every topic).
        let mut shared: FastMap<&str, Id> = FastMap::default();
        let mut name = |o: &mut PartitionOffset| {
            if let Some((id, n)) = names.get_key_value(&*o.topic) {
                let n = shared.entry(id).or_insert_with(|| Id::from(n.as_str()));
                o.topic = n.clone();
            }
        };
        for t in self.members.values_mut() {
            for c in &mut t.commits {
                c.offsets.iter_mut().for_each(&mut name);
                c.errors = std::mem::take(&mut c.errors)
                    .into_vec()
                    .into_iter()
                    .map(|(k, e)| (named_partition(&k, names), e))
                    .collect();
            }
        }
        for v in self.offset_fetches.values_mut() {
            v.iter_mut()
                .flat_map(|(_, o)| o.iter_mut())
                .for_each(&mut name);
        }
    }

    /// Indexes one group's events (time order). Its commits come from the
    /// events, from a book beside them, or from the book alone
    /// ([`CommitsFrom`]).
    pub(crate) fn build(events: &[&GroupEvent], commits: CommitsFrom) -> GroupIndex {
        let mut g = GroupIndex::default();
        let mut seen = GroupCommits::default();
        let from_events = !matches!(commits, CommitsFrom::Book(_));
        for ev in events {
            g.member(ev);
            if from_events {
                seen.see(ev);
            }
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
                            member_id: m.to_string(),
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
                        g.protocols.insert(gen, p.to_string());
                    }
                }
                EventKind::JoinGroupRequest { .. }
                    if ev.member_id.as_deref().is_none_or(str::is_empty) =>
                {
                    if let Some(i) = &ev.group_instance_id {
                        g.static_joins.push(StaticJoin {
                            ts: ev.ts,
                            group_instance_id: i.to_string(),
                        });
                    }
                }
                EventKind::ConnectionClosed { .. } => {
                    if let Some(t) = ev.member_id.as_deref().and_then(|m| g.members.get_mut(m)) {
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
        let commits: FastMap<Id, Vec<Commit>> = match commits {
            CommitsFrom::Events => seen.lists().collect(),
            CommitsFrom::Book(book) => book.lists().collect(),
            CommitsFrom::EventsAnd(book) => {
                let mut lists: FastMap<Id, Vec<Commit>> = seen.lists().collect();
                for (m, list) in book.lists() {
                    let mine = lists.entry(m).or_default();
                    mine.extend(list);
                    // Stable: a commit of the book and one of the events at
                    // the same nanosecond keep the events' first.
                    mine.sort_by_key(|c| c.ts);
                }
                lists
            }
        };
        for (m, list) in commits {
            g.members.entry(m).or_default().commits = list;
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
            t.group_instance_id = ev.group_instance_id.as_deref().map(String::from);
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
                    .find(|x| *x.member_id == **m)
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

/// One partition's Fetch traffic from one client, each in time order.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct PartitionTrail {
    /// Fetch requests: `(ts, fetch_offset)`.
    pub positions: Series,
    /// Fetch answers without error: `(ts, high_watermark)`.
    pub watermarks: Series,
}

/// One client's Fetch traffic.
#[derive(Debug, Default)]
pub(crate) struct ClientTrail {
    /// Per partition (`topic-N`, topic ids named where a Metadata answer
    /// named them).
    pub partitions: FastMap<Arc<str>, PartitionTrail>,
    /// Requests of any kind (Fetch), for "last seen" (the value is 0).
    pub fetches: Times,
}

impl ClientTrail {
    /// The traffic of partition `p`, if the client fetched it.
    pub(crate) fn partition(&self, p: &str) -> Option<&PartitionTrail> {
        self.partitions.get(p)
    }
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
    /// Indexes data events (in any order; sorted here).
    pub(crate) fn build(data: &[DataEvent]) -> ClientIndex {
        let mut f = ClientFolder::default();
        for d in data {
            f.fold(d);
        }
        f.finish()
    }

    /// Everything indexed, sorted, as text (tests compare two indexes).
    #[cfg(test)]
    pub(crate) fn in_order(&self) -> String {
        let mut clients: Vec<String> = self
            .clients
            .iter()
            .map(|(k, c)| {
                let mut parts: Vec<String> = c
                    .partitions
                    .iter()
                    .map(|(p, t)| format!("{p}: {t:?}"))
                    .collect();
                parts.sort();
                format!("{k:?} {:?} {parts:?}", c.fetches)
            })
            .collect();
        clients.sort();
        let mut names: Vec<_> = self.topic_names.iter().collect();
        names.sort();
        format!("{clients:?} {names:?} {}", self.unnamed_topic_ids)
    }
}

/// One client's traffic while it is folded: partitions by interned
/// `(topic, partition)` as the wire named them (ids not yet resolved).
#[derive(Clone, Debug, Default)]
struct FoldTrail {
    key: ClientKey,
    /// Whether a Fetch of it was seen (only those are indexed).
    used: bool,
    /// When the last one was (a trimmed folder forgets a client whose
    /// Fetch traffic is all older than its cut).
    last_used: Timestamp,
    fetches: Times,
    partitions: FastMap<(u32, i32), PartitionTrail>,
}

impl FoldTrail {
    fn use_at(&mut self, ts: Timestamp) {
        self.used = true;
        self.last_used = self.last_used.max(ts);
    }
}

/// The [`ClientIndex`] built as the data-path events stream: each event is
/// folded into its client's per-partition positions and watermarks (16
/// bytes per partition mentioned) and dropped, instead of every event being
/// kept whole until the end. Topic ids are resolved at [`Self::finish`], as
/// a Metadata answer after a Fetch still names the Fetch's topic id.
///
/// Takes: [`DataEvent`]s in the order they were made. Gives: the same
/// [`ClientIndex`] as [`ClientIndex::build`] over all of them.
#[derive(Debug, Default)]
pub struct ClientFolder {
    /// Topic names by topic id, later answers overriding earlier ones.
    names: FastMap<String, String>,
    /// Topics as the wire named them (name or id), interned.
    topics: FastMap<String, u32>,
    topic_list: Vec<String>,
    /// The topic interned last: a Fetch names the same topic for each of
    /// its partitions, in one shared text, so most lookups are this one.
    last_topic: Option<(Id, u32)>,
    /// Each connection's client (by the address of its shared
    /// [`ClientRef`], kept alive here so the address is never reused): its
    /// trail, if it has a client id.
    slots: FastMap<usize, (Arc<ClientRef>, Option<u32>)>,
    keys: FastMap<ClientKey, u32>,
    trails: Vec<FoldTrail>,
}

impl ClientFolder {
    /// Folds one data-path event in.
    pub fn fold(&mut self, d: &DataEvent) {
        let slot = match &d.kind {
            DataKind::TopicIds { topics } => {
                for (name, id) in topics {
                    self.names.insert(id.clone(), name.clone());
                }
                return;
            }
            DataKind::FetchRequest { .. } | DataKind::FetchResponse { .. } => {
                match self.slot(&d.client) {
                    Some(s) => s as usize,
                    None => return,
                }
            }
            _ => return,
        };
        match &d.kind {
            DataKind::FetchRequest { partitions, .. } => {
                self.trails[slot].use_at(d.ts);
                self.trails[slot].fetches.push(d.ts, 0);
                for p in partitions {
                    let t = self.wire_topic(&p.topic);
                    self.trails[slot]
                        .partitions
                        .entry((t, p.partition))
                        .or_default()
                        .positions
                        .push(d.ts, p.offset);
                }
            }
            DataKind::FetchResponse { partitions, .. } => {
                self.trails[slot].use_at(d.ts);
                for p in partitions.iter().filter(|p| p.error.is_none()) {
                    let t = self.wire_topic(&p.topic);
                    self.trails[slot]
                        .partitions
                        .entry((t, p.partition))
                        .or_default()
                        .watermarks
                        .push(d.ts, p.high_watermark);
                }
            }
            _ => {}
        }
    }

    /// Appends what `later` folded, as if its events had been folded after
    /// this one's (inputs read apart, joined in the order named).
    pub fn append(&mut self, later: ClientFolder) {
        let ClientFolder {
            names,
            topic_list,
            trails,
            ..
        } = later;
        self.names.extend(names);
        let topics: Vec<u32> = topic_list.iter().map(|t| self.topic(t)).collect();
        for t in trails {
            let slot = self.trail(t.key) as usize;
            let mine = &mut self.trails[slot];
            mine.used |= t.used;
            mine.last_used = mine.last_used.max(t.last_used);
            mine.fetches.append(&t.fetches);
            // In the order first made (a hash map's order would change
            // which of a name's and an id's entries come first on a tie).
            let mut parts: Vec<_> = t.partitions.into_iter().collect();
            parts.sort_unstable_by_key(|(k, _)| *k);
            for ((topic, p), pt) in parts {
                let at = mine
                    .partitions
                    .entry((topics[topic as usize], p))
                    .or_default();
                at.positions.append(&pt.positions);
                at.watermarks.append(&pt.watermarks);
            }
        }
    }

    /// Whether nothing was folded.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.trails.is_empty()
    }

    /// The index: topic ids named, each list sorted by time (stable, so
    /// equal times keep the order they were made in).
    pub(crate) fn finish(self) -> ClientIndex {
        let unnamed = self.unnamed_topic_ids();
        let ClientFolder {
            names,
            topic_list,
            trails,
            ..
        } = self;
        index_of(names, &topic_list, trails.into_iter(), unnamed)
    }

    /// The index of what is folded now, the folder kept. Equal to
    /// [`Self::finish`] on a copy (the reference [`Self::snapshot_for`] is
    /// tested against).
    #[cfg(test)]
    pub(crate) fn snapshot(&self) -> ClientIndex {
        index_of(
            self.names.clone(),
            &self.topic_list,
            self.trails.iter().filter(|t| t.used).cloned(),
            self.unnamed_topic_ids(),
        )
    }

    /// The index of what is folded now, the folder kept (the watch engine
    /// folds on and asks again), of the clients `events` name only:
    /// everything the stops stage looks up for those events' group (it
    /// finds a member's Fetch traffic by the client key of the member's own
    /// events). The count of unnamed topic ids is still over every client,
    /// as in the whole index: `unnamed`, [`ClientFolder::unnamed_topic_ids`]
    /// counted once for every group rebuilt from the same folder (counted
    /// per group, its walk over every client's partitions was 6 % of
    /// `watch`'s time on the dense capture, with the string hashing it
    /// did). The watch engine rebuilds a few groups at a time; a copy of
    /// every client's traffic for each was most of its work on a busy
    /// coordinator.
    pub(crate) fn snapshot_for(&self, events: &[GroupEvent], unnamed: usize) -> ClientIndex {
        let trails = self
            .clients_of(events)
            .into_iter()
            .map(|s| &self.trails[s as usize])
            .filter(|t| t.used)
            .cloned();
        index_of(self.names.clone(), &self.topic_list, trails, unnamed)
    }

    /// The clients `events` name that have Fetch traffic here, as places in
    /// the folder, in its order (as the whole index is made).
    pub(crate) fn clients_of(&self, events: &[GroupEvent]) -> Vec<u32> {
        let mut seen: FastSet<usize> = FastSet::default();
        let mut slots: Vec<u32> = Vec::new();
        for ev in events {
            if !seen.insert(Arc::as_ptr(&ev.client) as usize) {
                continue;
            }
            let key = client_key(ev.client.client_id.as_deref(), ev.client.address.as_deref());
            if let Some(s) = key.and_then(|k| self.keys.get(&k)) {
                slots.push(*s);
            }
        }
        slots.sort_unstable();
        slots.dedup();
        slots
    }

    /// Topic ids fetched (by a client still indexed) that no Metadata
    /// answer named: the one count every index states.
    pub(crate) fn unnamed_topic_ids(&self) -> usize {
        let mut unnamed: FastSet<u32> = FastSet::default();
        for t in self.trails.iter().filter(|t| t.used) {
            for (topic, _) in t.partitions.keys() {
                let raw = self.topic_list[*topic as usize].as_str();
                if !self.names.contains_key(raw) && looks_like_uuid(raw) {
                    unnamed.insert(*topic);
                }
            }
        }
        unnamed.len()
    }

    /// [`Self::trim_but`] with every client at `cut`.
    #[cfg(test)]
    pub(crate) fn trim(&mut self, cut: Timestamp) {
        self.trim_but(cut, &FastMap::default());
    }

    /// Forgets Fetch traffic older than `cut` (the watch engine's window; for
    /// each client of `longer`, a place of [`Self::clients_of`], its own
    /// earlier cut: the clients of a group whose timeouts make its window
    /// longer than the engine's),
    /// each client that has none left, and the connections no event holds
    /// any more. Topic names are kept: a Metadata answer names a topic id
    /// for as long as the topic lives.
    ///
    /// Each list is in the order its events arrived, which is time order
    /// but for a few exchanges completing out of turn: its entries older
    /// than `cut` are dropped from the front, up to the first newer one (as
    /// the queue of events this replaces dropped them): a call decodes what
    /// it drops and copies the encoded rest once ([`Series::drop_older`]).
    pub(crate) fn trim_but(&mut self, cut: Timestamp, longer: &FastMap<u32, Timestamp>) {
        for (i, t) in self.trails.iter_mut().enumerate() {
            let cut = u32::try_from(i)
                .ok()
                .and_then(|i| longer.get(&i))
                .map_or(cut, |own| cut.min(*own));
            t.fetches.drop_older(cut);
            t.partitions.retain(|_, pt| {
                pt.positions.drop_older(cut);
                pt.watermarks.drop_older(cut);
                !(pt.positions.is_empty() && pt.watermarks.is_empty())
            });
            if t.last_used < cut {
                t.used = false;
            }
        }
        // Held by this map alone: its connection is gone and so are its
        // events (an address freed here may be reused, as a new slot).
        self.slots.retain(|_, (c, _)| Arc::strong_count(c) > 1);
    }

    /// Positions, watermarks and Fetch times held (for the memory figures).
    pub(crate) fn entries(&self) -> usize {
        self.trails
            .iter()
            .map(|t| {
                t.fetches.len()
                    + t.partitions
                        .values()
                        .map(|p| p.positions.len() + p.watermarks.len())
                        .sum::<usize>()
            })
            .sum()
    }

    /// The trail of `client`'s connection, if it has a client id.
    fn slot(&mut self, client: &Arc<ClientRef>) -> Option<u32> {
        let at = Arc::as_ptr(client) as usize;
        if let Some((_, s)) = self.slots.get(&at) {
            return *s;
        }
        let key = client_key(client.client_id.as_deref(), client.address.as_deref());
        let s = key.map(|k| self.trail(k));
        self.slots.insert(at, (client.clone(), s));
        s
    }

    /// The trail of `key`, made if new.
    fn trail(&mut self, key: ClientKey) -> u32 {
        if let Some(s) = self.keys.get(&key) {
            return *s;
        }
        let s = self.trails.len() as u32;
        self.keys.insert(key.clone(), s);
        self.trails.push(FoldTrail {
            key,
            ..FoldTrail::default()
        });
        s
    }

    /// [`Self::topic`] of a topic as a data-path event names it, through
    /// [`Self::last_topic`] (the text is kept there, so its address is not
    /// reused while it is compared by address).
    fn wire_topic(&mut self, topic: &Id) -> u32 {
        if let Some((last, t)) = &self.last_topic {
            if Id::ptr_eq(last, topic) || last == topic {
                return *t;
            }
        }
        let t = self.topic(topic);
        self.last_topic = Some((topic.clone(), t));
        t
    }

    /// The interned number of `topic`.
    fn topic(&mut self, topic: &str) -> u32 {
        if let Some(t) = self.topics.get(topic) {
            return *t;
        }
        let t = self.topic_list.len() as u32;
        self.topics.insert(topic.to_string(), t);
        self.topic_list.push(topic.to_string());
        t
    }
}

/// The index of folded trails: topic ids named, each list sorted by time
/// (stable, so equal times keep the order they were made in), stating
/// `unnamed` ([`ClientFolder::unnamed_topic_ids`]).
fn index_of(
    names: FastMap<String, String>,
    topic_list: &[String],
    trails: impl Iterator<Item = FoldTrail>,
    unnamed: usize,
) -> ClientIndex {
    let mut written: FastMap<(u32, i32), Arc<str>> = FastMap::default();
    let mut clients: FastMap<ClientKey, ClientTrail> = FastMap::default();
    for t in trails.filter(|t| t.used) {
        let mut c = ClientTrail {
            fetches: t.fetches,
            ..ClientTrail::default()
        };
        c.fetches.sort();
        // In the order first made (a hash map's order would change
        // which of a name's and an id's entries come first on a tie).
        let mut parts: Vec<_> = t.partitions.into_iter().collect();
        parts.sort_unstable_by_key(|(k, _)| *k);
        for ((topic, p), mut pt) in parts {
            let tp = written.entry((topic, p)).or_insert_with(|| {
                let raw = topic_list[topic as usize].as_str();
                let name = names.get(raw).map_or(raw, String::as_str);
                format!("{name}-{p}").into()
            });
            // A topic fetched by name and by id lands in one trail.
            let at = c.partitions.entry(tp.clone()).or_default();
            if at.positions.is_empty() && at.watermarks.is_empty() {
                *at = std::mem::take(&mut pt);
            } else {
                at.positions.append(&pt.positions);
                at.watermarks.append(&pt.watermarks);
            }
        }
        for pt in c.partitions.values_mut() {
            pt.positions.sort();
            pt.watermarks.sort();
        }
        clients.insert(t.key, c);
    }
    ClientIndex {
        clients,
        unnamed_topic_ids: unnamed,
        topic_names: names,
    }
}

/// `"<topic id>-<p>"` as `"<name>-<p>"` when `names` has the id.
fn named_partition(tp: &str, names: &FastMap<String, String>) -> String {
    tp.get(..36)
        .filter(|id| looks_like_uuid(id))
        .and_then(|id| Some((names.get(id)?, tp.get(36..)?)))
        .map_or_else(|| tp.to_string(), |(n, rest)| format!("{n}{rest}"))
}

fn looks_like_uuid(s: &str) -> bool {
    s.len() == 36 && s.bytes().filter(|b| *b == b'-').count() == 4
}

#[cfg(test)]
mod name_tests {
    use super::*;

    const ID: &str = "8f1c0a3e-5b21-4d6a-9e07-112233445566";

    fn at(topic: &str, partition: i32, offset: i64) -> PartitionOffset {
        PartitionOffset {
            topic: topic.into(),
            partition,
            offset,
            error: None,
        }
    }

    #[test]
    fn a_commit_holds_48_bytes_besides_its_offsets_and_errors() {
        // Every commit of a long capture is held to the end: a field that
        // grows it grows the run's memory with the capture.
        assert!(std::mem::size_of::<Commit>() <= 48);
    }

    #[test]
    fn commits_and_fetched_offsets_by_topic_id_take_the_metadata_name() {
        let mut g = GroupIndex::default();
        let t = g.members.entry("m-1".into()).or_default();
        t.commits.push(Commit {
            offsets: [at(ID, 0, 42), at("other-id", 1, 7)].into(),
            errors: [(format!("{ID}-0"), None), ("other-id-1".into(), None)]
                .into_iter()
                .collect(),
            answered: true,
            ..Commit::default()
        });
        let key = client_key(Some("c1"), None).expect("a client id is a key");
        g.offset_fetches
            .insert(key.clone(), vec![(Timestamp(1), vec![at(ID, 0, 40)])]);
        let names: FastMap<String, String> = [(ID.to_string(), "orders".to_string())]
            .into_iter()
            .collect();
        g.name_topics(&names);
        let c = &g.members["m-1"].commits[0];
        assert!(c.offsets[0].is("orders-0"));
        assert_eq!(&*c.offsets[1].topic, "other-id", "an unnamed id stays");
        let mut errors: Vec<&str> = c.errors.iter().map(|(k, _)| k.as_str()).collect();
        errors.sort_unstable();
        assert_eq!(errors, ["orders-0", "other-id-1"]);
        assert!(g.offset_fetches[&key][0].1[0].is("orders-0"));
    }
}

#[cfg(test)]
mod folder_tests {
    use super::*;
    use crate::event::{Evidence, Location, PartitionWatermark};

    fn client(id: &str) -> Arc<ClientRef> {
        Arc::new(ClientRef {
            client_id: Some(id.into()),
            address: Some("10.0.0.1:5000".into()),
            ..ClientRef::default()
        })
    }

    fn event(ts: i64, client: &Arc<ClientRef>, kind: DataKind) -> DataEvent {
        DataEvent {
            ts: Timestamp(ts),
            client: client.clone(),
            kind,
            evidence: Evidence {
                source: crate::event::Source::from("t.pcap"),
                at: Location::Frame { frame: ts as u64 },
            },
        }
    }

    fn fetch(ts: i64, client: &Arc<ClientRef>, offset: i64) -> DataEvent {
        let p = PartitionOffset {
            topic: "orders".into(),
            partition: 0,
            offset,
            error: None,
        };
        let kind = DataKind::FetchRequest {
            exchange: ts as u64,
            partitions: vec![p],
        };
        event(ts, client, kind)
    }

    fn answer(ts: i64, client: &Arc<ClientRef>, error: Option<ErrorCode>) -> DataEvent {
        let p = PartitionWatermark {
            topic: "orders".into(),
            partition: 0,
            error,
            high_watermark: 100 + ts,
            last_stable_offset: -1,
            last_offset: None,
        };
        let kind = DataKind::FetchResponse {
            exchange: ts as u64,
            partitions: vec![p],
        };
        event(ts, client, kind)
    }

    #[test]
    fn a_topic_is_one_number_whether_its_text_is_shared_or_equal_or_neither() {
        let mut f = ClientFolder::default();
        let orders = Id::from("orders");
        let payments = Id::from("payments");
        let a = f.wire_topic(&orders);
        // The same shared text, an equal one made apart, and a name
        // interned by text alone all take the first number.
        assert_eq!(f.wire_topic(&orders.clone()), a);
        assert_eq!(f.wire_topic(&Id::from(String::from("orders"))), a);
        assert_eq!(f.topic("orders"), a);
        // Another topic takes another; back to the first, the first.
        let b = f.wire_topic(&payments);
        assert_ne!(a, b);
        assert_eq!(f.wire_topic(&Id::from("orders")), a);
        assert_eq!(f.topic_list, ["orders", "payments"]);
    }

    fn folded(events: &[DataEvent]) -> ClientFolder {
        let mut f = ClientFolder::default();
        events.iter().for_each(|d| f.fold(d));
        f
    }

    #[test]
    fn a_snapshot_is_the_index_the_folder_would_finish_into() {
        let (a, b) = (client("a"), client("b"));
        let events = [
            fetch(3, &a, 10),
            answer(4, &a, None),
            fetch(1, &b, 7),
            fetch(2, &a, 9),
        ];
        let f = folded(&events);
        let snap = f.snapshot().in_order();
        assert!(snap.contains("(Timestamp(4), 104)"), "{snap}");
        assert_eq!(snap, f.finish().in_order());
    }

    #[test]
    fn trimming_keeps_what_indexing_only_the_newer_events_gives() {
        let (a, b, c) = (client("a"), client("b"), client("c"));
        let events = [
            fetch(1, &a, 5),
            fetch(2, &b, 7),
            answer(3, &c, Some(ErrorCode(6))),
            fetch(5, &a, 6),
            answer(6, &a, None),
            answer(7, &c, Some(ErrorCode(6))),
        ];
        for cut in [0, 2, 3, 4, 6, 8] {
            let mut f = folded(&events);
            f.trim(Timestamp(cut));
            let newer: Vec<DataEvent> = events.iter().filter(|d| d.ts.0 >= cut).cloned().collect();
            assert_eq!(
                f.snapshot().in_order(),
                ClientIndex::build(&newer).in_order(),
                "cut at {cut}"
            );
        }
    }

    fn group_event(client: &Arc<ClientRef>) -> GroupEvent {
        GroupEvent {
            ts: Timestamp(1),
            group: Some("g".into()),
            member_id: Some("m".into()),
            group_instance_id: None,
            generation_id: Some(1),
            client: client.clone(),
            kind: EventKind::HeartbeatRequest { exchange: 1 },
            evidence: Evidence {
                source: crate::event::Source::from("t.pcap"),
                at: Location::Frame { frame: 1 },
            },
            truncated: false,
        }
    }

    #[test]
    fn a_groups_snapshot_holds_its_own_clients_and_counts_every_unnamed_topic_id() {
        let (a, b) = (client("a"), client("b"));
        let mut by_id = fetch(2, &b, 7);
        if let DataKind::FetchRequest { partitions, .. } = &mut by_id.kind {
            partitions[0].topic = "8f1c0a3e-5b21-4d6a-9e07-112233445566".into();
        }
        let f = folded(&[fetch(1, &a, 5), by_id, answer(3, &a, None)]);
        let whole = f.snapshot();
        let mine = f.snapshot_for(&[group_event(&a), group_event(&a)], f.unnamed_topic_ids());
        let key = client_key(Some("a"), Some("10.0.0.1:5000")).expect("a key");
        let other = client_key(Some("b"), Some("10.0.0.1:5000")).expect("a key");
        assert_eq!(mine.clients.len(), 1);
        assert_eq!(
            format!("{:?}", mine.clients[&key].partitions),
            format!("{:?}", whole.clients[&key].partitions)
        );
        assert!(!mine.clients.contains_key(&other));
        assert_eq!((mine.unnamed_topic_ids, whole.unnamed_topic_ids), (1, 1));
    }

    #[test]
    fn a_client_kept_longer_is_trimmed_at_its_own_cut_and_the_others_at_the_engines() {
        let (a, b) = (client("a"), client("b"));
        let events = [
            fetch(1, &a, 5),
            fetch(2, &b, 7),
            fetch(5, &a, 6),
            fetch(6, &b, 8),
        ];
        let mut f = folded(&events);
        let of_a = f.clients_of(&[group_event(&a)]);
        assert_eq!(of_a.len(), 1);
        let longer: FastMap<u32, Timestamp> = of_a.iter().map(|s| (*s, Timestamp(0))).collect();
        f.trim_but(Timestamp(4), &longer);
        // a keeps both its Fetches, b only the one after the cut.
        let kept: Vec<DataEvent> = events
            .iter()
            .filter(|d| d.client.client_id.as_deref() == Some("a") || d.ts.0 >= 4)
            .cloned()
            .collect();
        assert_eq!(
            f.snapshot().in_order(),
            ClientIndex::build(&kept).in_order()
        );
    }

    #[test]
    fn trimming_forgets_connections_nothing_else_holds() {
        let (a, b) = (client("a"), client("b"));
        let mut f = folded(&[fetch(1, &a, 5), fetch(2, &b, 7)]);
        assert_eq!(f.slots.len(), 2);
        drop(a);
        f.trim(Timestamp(0));
        assert_eq!(f.slots.len(), 1, "a's connection is gone, b's lives");
        assert_eq!(f.entries(), 4, "trimming at 0 keeps every Fetch");
    }
}
