//! What is known about each member of one group, kept up to date as events
//! arrive.
//!
//! Takes: group events for one group. Gives: [`MemberBook`], per member its
//! ids, client, timeouts, subscription, assignment and when it was last
//! heard from. The reconstructor asks it "who is this", "who went silent"
//! and "who was in the group" when it writes a rebalance record.

use crate::event::{BrokerLine, ClientRef, EventKind, GroupEvent, TopicPartitions};
use crate::fast_hash::FastMap;
use crate::report::MemberSummary;
use crate::time::Timestamp;

/// One member as far as the inputs show it.
#[derive(Clone, Debug, Default)]
pub struct Member {
    /// `member_id`.
    pub member_id: String,
    /// KIP-345 static id.
    pub group_instance_id: Option<String>,
    /// Client identity (client_id, address, software).
    pub client: ClientRef,
    /// JoinGroup `session_timeout_ms`.
    pub session_timeout_ms: Option<i32>,
    /// JoinGroup `rebalance_timeout_ms` (max.poll.interval.ms).
    pub rebalance_timeout_ms: Option<i32>,
    /// Subscribed topics from its JoinGroup metadata.
    pub topics: Vec<String>,
    /// Its assignment, as `topic-partition`.
    pub assignment: Vec<String>,
    /// Last request of any kind from it.
    pub last_seen: Option<Timestamp>,
    /// Last OffsetCommit from it (progress: the application is polling).
    pub last_commit: Option<Timestamp>,
    /// First time it was seen at all.
    pub first_seen: Option<Timestamp>,
}

impl Member {
    /// The member as the report shows it.
    pub fn summary(&self) -> MemberSummary {
        MemberSummary {
            member_id: self.member_id.clone(),
            group_instance_id: self.group_instance_id.clone(),
            client_id: self
                .client
                .client_id
                .clone()
                .or_else(|| client_id_in_member_id(&self.member_id)),
            client_host: self.client.address.clone(),
            client_software: self.client.software.clone(),
            assignment: self.assignment.clone(),
        }
    }
}

/// Every member ever seen in one group, by `member_id`.
#[derive(Clone, Debug, Default)]
pub struct MemberBook {
    members: FastMap<String, Member>,
}

impl MemberBook {
    /// The member, created on first sight.
    pub fn entry(&mut self, member_id: &str) -> &mut Member {
        self.members
            .entry(member_id.to_string())
            .or_insert_with(|| Member {
                member_id: member_id.to_string(),
                ..Member::default()
            })
    }

    /// The member, if known.
    pub fn get(&self, member_id: &str) -> Option<&Member> {
        self.members.get(member_id)
    }

    /// Records that `event` came from its member: identity and last-seen time.
    pub fn observe(&mut self, event: &GroupEvent) {
        let Some(member_id) = event.member_id.as_deref().filter(|m| !m.is_empty()) else {
            return;
        };
        let ts = event.ts;
        let m = self.entry(member_id);
        merge_client(&mut m.client, &event.client);
        if event.group_instance_id.is_some() {
            m.group_instance_id = event.group_instance_id.as_deref().map(String::from);
        }
        m.first_seen.get_or_insert(ts);
        // The broker's lines on an expiry name the member but are not
        // requests from it: "Member … has failed, removing it" and
        // "Preparing to rebalance (reason: removing member … on heartbeat
        // expiration)" are logged once it has been silent for its session
        // timeout (GroupCoordinator.scala `onExpireHeartbeat`; KIP-848's
        // "Member … fenced from the group because its session expired",
        // GroupMetadataManager.java `scheduleConsumerGroupSessionTimeout`), and must
        // not make it look alive then: its silence is what the capture shows.
        if matches!(
            event.kind,
            EventKind::Broker(
                BrokerLine::MemberFailed
                    | BrokerLine::MemberFenced { .. }
                    | BrokerLine::PreparingRebalance { .. }
            )
        ) {
            return;
        }
        if m.last_seen.is_none_or(|t| t < ts) {
            m.last_seen = Some(ts);
        }
    }

    /// `ids` with one member per static id (KIP-345): a group.instance.id
    /// maps to one member id, and a restart with a new member id replaces
    /// the old one (GroupMetadataManager / ClassicGroup
    /// `replaceStaticMember`); the member seen last is kept.
    pub fn one_per_instance<'a>(
        &self,
        ids: impl IntoIterator<Item = &'a String>,
    ) -> Vec<&'a String> {
        let ids: Vec<&String> = ids.into_iter().collect();
        let holder = |id: &str| {
            let m = self.members.get(id)?;
            let i = m.group_instance_id.as_deref()?;
            ids.iter()
                .filter_map(|o| self.members.get(o.as_str()))
                .filter(|o| o.group_instance_id.as_deref() == Some(i))
                .max_by(|a, b| {
                    a.last_seen
                        .cmp(&b.last_seen)
                        .then(a.member_id.cmp(&b.member_id))
                })
                .map(|o| o.member_id.clone())
        };
        ids.iter()
            .copied()
            .filter(|id| holder(id).is_none_or(|h| &h == *id))
            .collect()
    }

    /// The member that holds a static id now, other than `except`.
    pub fn by_instance(&self, instance: &str, except: &str) -> Option<&Member> {
        self.members
            .values()
            .filter(|m| m.member_id != except)
            .filter(|m| m.group_instance_id.as_deref() == Some(instance))
            .max_by(|a, b| {
                a.last_seen
                    .cmp(&b.last_seen)
                    .then(a.member_id.cmp(&b.member_id))
            })
    }

    /// Summaries of the given members, in the given order.
    pub fn summaries<'a>(&self, ids: impl IntoIterator<Item = &'a String>) -> Vec<MemberSummary> {
        ids.into_iter()
            .map(|id| match self.members.get(id) {
                Some(m) => m.summary(),
                None => MemberSummary {
                    member_id: id.clone(),
                    ..MemberSummary::default()
                },
            })
            .collect()
    }

    /// The client id of a member: as seen, else as its id spells it.
    pub fn client_id(&self, member_id: &str) -> Option<String> {
        let known = self.get(member_id);
        known.and_then(|m| m.client.client_id.clone()).or_else(|| {
            // A static member's id is `<group.instance.id>-<UUID>`
            // (GroupMetadata.scala / ClassicGroup.java
            // `generateMemberId`): its prefix is not a client id.
            let prefix = client_id_in_member_id(member_id)?;
            let instance = known.and_then(|m| m.group_instance_id.as_deref());
            (instance != Some(prefix.as_str())).then_some(prefix)
        })
    }
}

/// Fills what `into` lacks from `from` (a later event may know more).
pub fn merge_client(into: &mut ClientRef, from: &ClientRef) {
    // Compare before cloning: most events repeat what is known.
    let fill = |a: &mut Option<String>, b: &Option<String>| {
        if b.is_some() && a != b {
            *a = b.clone();
        }
    };
    fill(&mut into.client_id, &from.client_id);
    fill(&mut into.address, &from.address);
    fill(&mut into.software, &from.software);
    fill(&mut into.broker, &from.broker);
}

/// The client id inside a Java client's member id: the Java client names
/// its members `<client.id>-<UUID>` (`AbstractCoordinator`, via the
/// broker's `clientId + "-" + UUID`), so logs that name only the member still
/// tell the client. `None` when the id does not end in a UUID.
pub fn client_id_in_member_id(member_id: &str) -> Option<String> {
    // `split_at_checked`: a byte 37 from the end inside a character (a
    // U+FFFD from a damaged log) is no UUID, not a panic.
    let (prefix, uuid) = member_id.split_at_checked(member_id.len().checked_sub(37)?)?;
    let uuid = uuid.strip_prefix('-')?;
    let shape_ok = uuid.len() == 36
        && uuid.char_indices().all(|(i, c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        });
    (shape_ok && !prefix.is_empty()).then(|| prefix.to_string())
}

/// `topic-partition` strings, sorted, for reports.
pub fn partition_names(tps: &[TopicPartitions]) -> Vec<String> {
    let mut out: Vec<String> = tps
        .iter()
        .flat_map(|tp| {
            tp.partitions
                .iter()
                .map(move |p| format!("{}-{p}", tp.topic))
        })
        .collect();
    sort_partitions(&mut out);
    out
}

/// Sorts `topic-partition` names by topic, then partition number, so that
/// `lab-2` comes before `lab-10`.
pub fn sort_partitions(names: &mut [String]) {
    names.sort_by_cached_key(|n| match n.rsplit_once('-') {
        Some((topic, p)) => (
            topic.to_string(),
            p.parse::<i64>().unwrap_or(i64::MAX),
            n.clone(),
        ),
        None => (n.clone(), i64::MAX, n.clone()),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_member_ids_carry_their_client_id() {
        let m = "consumer-cons3-1-e76f6acd-afb1-4a59-9a8b-5b9b7e2f8c11";
        assert_eq!(
            client_id_in_member_id(m).as_deref(),
            Some("consumer-cons3-1")
        );
        assert_eq!(
            client_id_in_member_id("nonode@nohost/<0.1083.0>-9db8"),
            None
        );
        assert_eq!(
            client_id_in_member_id("-e76f6acd-afb1-4a59-9a8b-5b9b7e2f8c11"),
            None
        );
    }

    /// Fuzz finding `crash-b6db4ab4` (pipeline target): a member id whose
    /// byte 37 from the end falls inside a character panicked.
    #[test]
    fn fuzz_crash_b6db4ab4_a_member_id_cut_inside_a_character_is_no_client_id() {
        let m = format!(
            "g1-c1-b24674{}b5-f73b-4bdf-b049-a4ed18eaca4a",
            "\u{fffd}".repeat(84)
        );
        assert_eq!(client_id_in_member_id(&m), None);
        assert_eq!(
            client_id_in_member_id(&format!("x\u{20ac}{}", "a".repeat(36))),
            None
        );
        let book = MemberBook::default();
        assert_eq!(book.client_id(&m), None);
    }

    #[test]
    fn partition_names_are_sorted_topic_dash_partition() {
        let tps = vec![TopicPartitions {
            topic: "orders".into(),
            partitions: vec![2, 0],
        }];
        assert_eq!(partition_names(&tps), vec!["orders-0", "orders-2"]);
        let mut names = vec!["lab-10".to_string(), "lab-2".into(), "a-1".into()];
        sort_partitions(&mut names);
        assert_eq!(names, vec!["a-1", "lab-2", "lab-10"]);
    }

    #[test]
    fn a_static_id_is_found_on_its_latest_holder() {
        let mut book = MemberBook::default();
        book.entry("a").group_instance_id = Some("i1".into());
        book.entry("a").last_seen = Some(Timestamp(1));
        book.entry("b").group_instance_id = Some("i1".into());
        book.entry("b").last_seen = Some(Timestamp(5));
        assert_eq!(book.by_instance("i1", "c").unwrap().member_id, "b");
        assert_eq!(book.by_instance("i1", "b").unwrap().member_id, "a");
    }
}
