//! Broker group-coordinator messages → group events.
//!
//! Takes: the message of a `[GroupCoordinator …]`, `[GroupMetadataManager …]`
//! or `GroupMetadata$` line (prefix and trailer already removed by
//! [`crate::logs::layout`]). Gives: an [`Outcome`]. Every wording of
//! kafka-log-formats.md §2–§3 (Kafka 0.9 → 4.x, Scala and Java coordinators,
//! KIP-848 consumer groups) is matched; lines of those components that match
//! none are [`Outcome::Unknown`] so the caller can count them.
//!
//! Speed: a message is first dispatched on its leading words (plain byte
//! comparisons), so at most a handful of small anchored regexes run per line.

mod consumer_group;
mod coordinator;
mod lifecycle;
mod members;
mod reason;
mod split;

use crate::logs::parsed::{starts_with_ci, Outcome, Parsed};

type Matcher = fn(&[u8]) -> Option<Parsed>;

/// Untagged messages by their first words (Scala coordinator, and the Java
/// coordinator's classic-group lines).
const UNTAGGED: &[(&[u8], &[Matcher])] = &[
    (b"Preparing to ", &[lifecycle::preparing]),
    (b"Stabilized group ", &[lifecycle::stabilized]),
    (b"Assignment received", &[lifecycle::assignment_received]),
    (
        b"Member",
        &[
            members::failed,
            members::left_classic,
            members::other_member_line,
        ],
    ),
    (
        b"Pending ",
        &[
            members::pending_expired,
            members::pending_left,
            members::pending_added,
        ],
    ),
    (
        b"Dynamic ",
        &[
            members::unknown_id_round_trip,
            members::unknown_id_added,
            members::pending_added,
        ],
    ),
    (
        b"Static ",
        &[
            members::static_replaced,
            members::unknown_id_added,
            members::other_member_line,
            members::member_loaded,
        ],
    ),
    (
        b"Group ",
        &[
            lifecycle::now_empty,
            lifecycle::dead,
            lifecycle::removed_dynamic,
            lifecycle::removed_pending_sync,
            lifecycle::other_group_line,
            members::other_member_line,
        ],
    ),
    (b"Adding new static", &[members::static_added]),
    (b"Request memberId", &[members::static_fenced]),
    (b"given member.id", &[members::static_fenced]),
    (
        b"Loaded ",
        &[members::member_loaded, coordinator::group_loaded],
    ),
    (
        b"Loading ",
        &[coordinator::group_loaded, coordinator::partition_loaded],
    ),
    (b"Unloading ", &[coordinator::group_loaded]),
    (b"Elected ", &[coordinator::partition_loaded]),
    (b"Scheduling loading", &[coordinator::partition_loaded]),
    (b"Resigned ", &[coordinator::partition_unloaded]),
    (b"Scheduling unloading", &[coordinator::partition_unloaded]),
    (b"Removed ", &[coordinator::offsets_expired]),
    (b"Generated ", &[coordinator::offsets_expired]),
    (
        b"Received ",
        &[members::other_member_line, lifecycle::other_group_line],
    ),
    (
        b"Failed to ",
        &[lifecycle::other_group_line, members::other_member_line],
    ),
    (b"Attempt to add", &[members::other_member_line]),
    (b"Setting empty", &[lifecycle::other_group_line]),
    (b"Sending empty", &[lifecycle::other_group_line]),
    (b"BrokerId ", &[lifecycle::other_group_line]),
    (b"Creating simple", &[lifecycle::other_group_line]),
    (b"The following offsets", &[lifecycle::other_group_line]),
    (b"The following groups", &[lifecycle::groups_deleted]),
    (b"Cannot ", &[lifecycle::other_group_line]),
];

/// Messages after a `[GroupId g]` / `[GroupId=g]` / `[Group g]` tag (Java
/// coordinator, 3.6+), most frequent first.
const TAGGED: &[Matcher] = &[
    consumer_group::assignment_state,
    consumer_group::epoch_bumped,
    consumer_group::target_assignment,
    consumer_group::subscription,
    consumer_group::joins,
    consumer_group::left,
    consumer_group::fenced,
    consumer_group::static_rejoins,
    consumer_group::static_conflict,
    members::left_java,
    coordinator::group_loaded,
    consumer_group::other_tagged,
];

/// Reads one coordinator message.
pub(crate) fn parse(msg: &[u8]) -> Outcome {
    let parsed = match split_tag(msg) {
        Some(tag) => TAGGED.iter().find_map(|m| m(tag.rest)).map(|p| tag.fill(p)),
        None => parse_untagged(msg),
    };
    match parsed {
        Some(p) => Outcome::event(p),
        None if coordinator::is_known_housekeeping(msg) => Outcome::Known,
        None => Outcome::Unknown,
    }
}

fn parse_untagged(msg: &[u8]) -> Option<Parsed> {
    UNTAGGED
        .iter()
        .filter(|(prefix, _)| starts_with_ci(msg, prefix))
        .find_map(|(_, matchers)| matchers.iter().find_map(|m| m(msg)))
}

/// A Java coordinator tag and the message after it.
struct Tag<'a> {
    group: &'a [u8],
    member: Option<&'a [u8]>,
    rest: &'a [u8],
}

impl Tag<'_> {
    /// The tag names the group (and sometimes the member) the message omits.
    fn fill(&self, mut p: Parsed) -> Parsed {
        if p.group.is_none() {
            p.group = Some(crate::logs::parsed::owned_text(self.group));
        }
        if p.member_id.is_none() {
            p.member_id = self.member.map(crate::logs::parsed::owned_text);
        }
        p
    }
}

/// `[GroupId g] `, `[GroupId=g] `, `[Group g] `, `[GroupId g][MemberId m] `.
fn split_tag(msg: &[u8]) -> Option<Tag<'_>> {
    let after = [&b"[GroupId "[..], b"[GroupId=", b"[Group "]
        .iter()
        .find_map(|t| msg.strip_prefix(*t))?;
    let close = memchr::memchr(b']', after)?;
    let group = &after[..close];
    let mut rest = &after[close + 1..];
    let mut member = None;
    if let Some(m) = rest.strip_prefix(b"[MemberId ") {
        let close = memchr::memchr(b']', m)?;
        member = Some(&m[..close]);
        rest = &m[close + 1..];
    }
    Some(Tag {
        group,
        member,
        rest: rest.strip_prefix(b" ").unwrap_or(rest),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{BrokerLine, EventKind};

    fn event(msg: &str) -> Parsed {
        match parse(msg.as_bytes()) {
            Outcome::Event(p) => *p,
            other => panic!("{msg}: {other:?}"),
        }
    }

    #[test]
    fn tags_give_the_group_to_consumer_group_lines() {
        let p = event("[GroupId g1] Bumped group epoch to 3.");
        assert_eq!(p.group.as_deref(), Some("g1"));
        let p = event("[GroupId=g2] Unloading group metadata for generation 4.");
        assert_eq!((p.group.as_deref(), p.generation_id), (Some("g2"), Some(4)));
        let p = event("[Group g3] Member m has left group through explicit `LeaveGroup` request; client reason: x");
        assert_eq!(
            (p.group.as_deref(), p.member_id.as_deref()),
            (Some("g3"), Some("m"))
        );
        let p = event("[GroupId g4][MemberId m4] Computed new metadata hash: 12.");
        assert_eq!(
            (p.group.as_deref(), p.member_id.as_deref()),
            (Some("g4"), Some("m4"))
        );
    }

    #[test]
    fn a_deletion_of_several_groups_is_each_groups_death() {
        // GroupMetadataManager.scala `cleanupGroupMetadata` (2.0+) and
        // GroupCoordinatorShard.java (3.7+): the same words.
        let p =
            event("The following groups were deleted: g1, g2. A total of 9 offsets were removed.");
        assert_eq!(p.kind, EventKind::Broker(BrokerLine::GroupDead));
        assert_eq!(p.group.as_deref(), Some("g1"));
        assert_eq!(p.more_groups, vec!["g2".to_string()]);
        // 1.1 named the groups only.
        let p = event("The following groups were deleted: g3");
        assert_eq!((p.group.as_deref(), p.more_groups.len()), (Some("g3"), 0));
    }

    #[test]
    fn case_changes_across_versions_still_dispatch() {
        let p = event("Dynamic Member with unknown member id joins group g in Empty state. Created a new member id c-1 for this member and add to the group.");
        assert_eq!(
            p.kind,
            EventKind::Broker(BrokerLine::MemberJoined {
                pending: false,
                from_empty: true
            })
        );
    }

    #[test]
    fn housekeeping_is_known_and_novel_wording_is_unknown() {
        assert_eq!(parse(b"Startup complete."), Outcome::Known);
        assert_eq!(parse(b"Finished unloading __consumer_offsets-3. Removed 0 cached offsets and 0 cached groups."), Outcome::Known);
        assert_eq!(
            parse(b"Preparing to do something unheard of"),
            Outcome::Unknown
        );
        assert_eq!(parse(b"[GroupId g] Did something new."), Outcome::Unknown);
    }
}
