//! The classic rebalance life cycle as the coordinator logs it: prepared,
//! stabilized, assignment received, empty, dead (kafka-log-formats.md §2.1,
//! §3.1; Scala `GroupCoordinator.scala` 0.9–4.0 and Java
//! `GroupMetadataManager.java` 3.7+).
//!
//! Takes: a coordinator message with its prefix removed. Gives: a [`Parsed`]
//! event, or `None` when the wording is not one of these.

use crate::event::{BrokerLine, EventKind, Text};
use crate::logs::parsed::{
    compile_named, finder, finder_rev, first_named, list_items, member, number, owned_text, regex,
    text, NamedPatterns, Parsed,
};

use super::reason::reason_subject;

fn broker(line: BrokerLine) -> EventKind {
    EventKind::Broker(line)
}

/// "Preparing to restabilize group G with old generation N" (0.9–0.10),
/// "… rebalance group G with old generation N (__consumer_offsets-P)"
/// (0.11–2.0), "… in state S with old generation N (__consumer_offsets-P)
/// (reason: R)" (2.1–4.0) and the Java "… (reason: R)." (3.7+).
///
/// Split by hand rather than by regex: this is the most frequent coordinator
/// line and its reason can be long, which makes a backtracking capture slow.
pub(crate) fn preparing(msg: &[u8]) -> Option<Parsed> {
    let rest = msg
        .strip_prefix(b"Preparing to rebalance group ")
        .or_else(|| msg.strip_prefix(b"Preparing to restabilize group "))?;
    let at = finder!(b" with old generation ").find(rest)?;
    let (head, tail) = (&rest[..at], &rest[at + b" with old generation ".len()..]);
    let (group, state) = match finder_rev!(b" in state ").rfind(head) {
        Some(i) => (&head[..i], Some(&head[i + b" in state ".len()..])),
        None => (head, None),
    };
    let digits = tail
        .iter()
        .take_while(|b| b.is_ascii_digit() || **b == b'-')
        .count();
    let old_generation: i32 = std::str::from_utf8(&tail[..digits]).ok()?.parse().ok()?;
    let reason = preparing_reason(&tail[digits..])?;
    let client_reason = reason.as_deref().and_then(client_reason);
    let (member_id, instance) = reason.as_deref().map(reason_subject).unwrap_or_default();
    let line = BrokerLine::PreparingRebalance {
        state: state.map_or_else(
            || Text::from("PreparingRebalance"),
            |s| owned_text(s).into(),
        ),
        old_generation,
        reason: reason.map(Text::from),
        client_reason: client_reason.map(Text::from),
    };
    Some(
        Parsed::new(broker(line))
            .group(Some(owned_text(group)))
            .generation(Some(old_generation))
            .member(member_id)
            .instance(instance),
    )
}

/// What follows the old generation: `[ (__consumer_offsets-P)][ (reason: R)][.]`.
/// `None` if it is anything else; `Some(None)` when there is no reason.
fn preparing_reason(tail: &[u8]) -> Option<Option<String>> {
    let mut t = tail;
    if let Some(after) = t.strip_prefix(b" (__consumer_offsets-") {
        let close = memchr::memchr(b')', after)?;
        if !after[..close].iter().all(u8::is_ascii_digit) {
            return None;
        }
        t = &after[close + 1..];
    }
    if t.is_empty() || t == b"." {
        return Some(None);
    }
    let inner = t.strip_prefix(b" (reason: ")?;
    let inner = inner
        .strip_suffix(b".")
        .unwrap_or(inner)
        .strip_suffix(b")")?;
    Some(Some(owned_text(inner)))
}

/// The KIP-800 client reason inside a coordinator reason (3.2+).
pub(crate) fn client_reason(reason: &str) -> Option<String> {
    // One searcher for the run: `str::split_once` sets up a two-way
    // searcher per call, a sixth of reading a "Preparing" line.
    const CLIENT_REASON: &[u8] = b"; client reason: ";
    let at = finder!(CLIENT_REASON).find(reason.as_bytes())?;
    Some(reason[at + CLIENT_REASON.len()..].to_string())
}

/// "Stabilized group G generation N" (0.9–0.10), "… (__consumer_offsets-P)"
/// (0.11–2.7), "… with K members" (2.8–4.0), Java "… with K members." (3.7+).
pub(crate) fn stabilized(msg: &[u8]) -> Option<Parsed> {
    super::split::stabilized(msg).or_else(|| stabilized_by_regex(msg))
}

/// [`stabilized`] by its regex alone (every shape; the hand split takes the
/// plain ones first).
pub(super) fn stabilized_by_regex(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(
        r"(?-u)^Stabilized group (.+?) generation (-?\d+)(?: \(__consumer_offsets-\d+\))?(?: with (\d+) members)?\.?$"
    );
    let caps = re.captures(msg)?;
    let line = BrokerLine::Stabilized {
        generation: number(&caps, 2)?,
        members: number(&caps, 3),
        protocol: None,
        leader: None,
    };
    Some(
        Parsed::new(broker(line))
            .group(text(&caps, 1))
            .generation(number(&caps, 2)),
    )
}

/// "Assignment received from leader [M ]for group G for generation N[. The
/// group has K members, S of which are static.]" (leader id 3.0+, counts 2.8+).
pub(crate) fn assignment_received(msg: &[u8]) -> Option<Parsed> {
    super::split::assignment_received(msg).or_else(|| assignment_received_by_regex(msg))
}

/// [`assignment_received`] by its regex alone (every shape; the hand split takes the
/// plain ones first).
pub(super) fn assignment_received_by_regex(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(concat!(
        r"(?-u)^Assignment received from leader (?:",
        member!(),
        r" )?for group (.+?) for generation (-?\d+)(?:\. The group has (\d+) members, \d+ of which are static\.)?$"
    ));
    let caps = re.captures(msg)?;
    let line = BrokerLine::AssignmentReceived {
        generation: number(&caps, 3)?,
        members: number(&caps, 4),
    };
    Some(
        Parsed::new(broker(line))
            .group(text(&caps, 2))
            .member(text(&caps, 1))
            .generation(number(&caps, 3)),
    )
}

/// "Group G with generation N is now empty[ (__consumer_offsets-P)][.]".
///
/// Tried first on every untagged "Group …" line: its fixed words are looked
/// for before anything else, then the plain shape is split by hand.
pub(crate) fn now_empty(msg: &[u8]) -> Option<Parsed> {
    finder!(b" is now empty").find(msg)?;
    super::split::now_empty(msg).or_else(|| now_empty_by_regex(msg))
}

/// [`now_empty`] by its regex alone (every shape).
pub(super) fn now_empty_by_regex(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(
        r"(?-u)^Group (.+?) with generation (-?\d+) is now empty(?: \(__consumer_offsets-\d+\))?\.?$"
    );
    let caps = re.captures(msg)?;
    Some(
        Parsed::new(broker(BrokerLine::GroupEmpty))
            .group(text(&caps, 1))
            .generation(number(&caps, 2)),
    )
}

/// "The following groups were deleted: a, b. A total of N offsets were
/// removed." (GroupMetadataManager.scala `cleanupGroupMetadata` 2.0+, the
/// total from 2.0; GroupCoordinatorShard.java 3.7+, written by Apache Kafka
/// 4.4 in the lab): a DeleteGroups request removed them. Each group is Dead,
/// one event each. A group name with ", " in it is split: Kafka's list says
/// no more.
pub(crate) fn groups_deleted(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(
        r"(?-u)^The following groups were deleted: (.+?)(?:\. A total of \d+ offsets were removed\.?)?$"
    );
    let caps = re.captures(msg)?;
    let list = text(&caps, 1)?;
    let mut groups = list.split(", ").filter(|g| !g.is_empty()).map(String::from);
    let first = groups.next()?;
    let mut p = Parsed::new(broker(BrokerLine::GroupDead)).group(Some(first));
    p.more_groups = groups.collect();
    Some(p)
}

/// "Group G generation N is dead and removed" (0.9–0.10.1.0), "Group G
/// transitioned to Dead in generation N" (0.10.1.1+), "Group G is dead,
/// skipping rebalance stage[.]" (2.3+).
pub(crate) fn dead(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(
        r"(?-u)^Group (.+?)(?: generation (-?\d+) is dead and removed| transitioned to Dead in generation (-?\d+)| is dead, skipping rebalance stage\.?)$"
    );
    let caps = re.captures(msg)?;
    let generation = number(&caps, 2).or_else(|| number(&caps, 3));
    Some(
        Parsed::new(broker(BrokerLine::GroupDead))
            .group(text(&caps, 1))
            .generation(generation),
    )
}

/// "Group G remove(d) dynamic members who haven't joined: Set(a, b)"
/// (2.6.1+; Java prints `[a, b]`).
pub(crate) fn removed_dynamic(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(r"(?-u)^Group (.+?) removed? dynamic members who haven't joined: (.*)$");
    let caps = re.captures(msg)?;
    let members = list_items(&text(&caps, 2)?);
    let single = (members.len() == 1).then(|| members[0].clone());
    let line = BrokerLine::RebalanceTimeoutRemoved { members };
    Some(
        Parsed::new(broker(line))
            .group(text(&caps, 1))
            .member(single),
    )
}

/// "Group G removed members who haven't sent their sync request: Set(a)"
/// (GroupCoordinator.scala `removePendingSyncMembers`, 2.8.1+) and "Group G
/// removed members who haven't sent their sync requests: [a]"
/// (GroupMetadataManager.java `expirePendingSync`, 3.7+); DEBUG in both.
pub(crate) fn removed_pending_sync(msg: &[u8]) -> Option<Parsed> {
    let re =
        regex!(r"(?-u)^Group (.+?) removed members who haven't sent their sync requests?: (.*)$");
    let caps = re.captures(msg)?;
    let members = list_items(&text(&caps, 2)?);
    let single = (members.len() == 1).then(|| members[0].clone());
    let line = BrokerLine::PendingSyncRemoved { members };
    Some(
        Parsed::new(broker(line))
            .group(text(&caps, 1))
            .member(single),
    )
}

const OTHER_GROUP_LINES: &[(&str, &str)] = &[
    (
        r"(?-u)^Group (.+?) could not complete rebalance because no members rejoined\.?$",
        "no members rejoined",
    ),
    (
        r"(?-u)^Failed to write empty metadata for group (.+?): ",
        "failed to write empty metadata",
    ),
    (
        // GroupCoordinator.scala `updateStaticMemberAndRebalance` (2.4+):
        // "Failed to persist metadata for group G: E"; Java 3.7+ adds
        // "static member M with group instance id I due to E. Reverting to
        // old member id O.".
        r"(?-u)^Failed to persist metadata for group (.+?)(?:: | static member )",
        "failed to persist static member metadata",
    ),
    (
        r"(?-u)^Setting empty assignments for members .* of (.+?) for generation -?\d+$",
        "empty assignments set",
    ),
    (
        r"(?-u)^Sending empty assignment to member .* of (.+?) for generation -?\d+ with no errors$",
        "empty assignment sent",
    ),
    (
        r"(?-u)^Received unexpected notification of sync expiration (?:after|for) (?:group )?(.+?) (?:already|with an old)",
        "late sync expiration",
    ),
    (
        r"(?-u)^BrokerId \d+ is no longer a coordinator for the group (.+?)\. Proceeding",
        "no longer coordinator for group",
    ),
    (
        r"(?-u)^Creating simple consumer group (.+?) via manual offset commit\.$",
        "simple group created by commit",
    ),
    (
        r"(?-u)^The following offsets of the group (.+?) were deleted: ",
        "offsets deleted",
    ),
    (
        r"(?-u)^Cannot (?:upgrade|downgrade) (?:classic|consumer) group (.+?) to (?:consumer|classic) group",
        "group conversion refused",
    ),
];

/// Other life-cycle lines that name their group: stuck rebalances, failed
/// writes, empty assignments, late sync timers, members dropped at sync.
pub(crate) fn other_group_line(msg: &[u8]) -> Option<Parsed> {
    static TABLE: std::sync::LazyLock<NamedPatterns> =
        std::sync::LazyLock::new(|| compile_named(OTHER_GROUP_LINES));
    let (caps, name) = first_named(&TABLE, msg)?;
    let line = BrokerLine::Other {
        message: name.to_string(),
    };
    Some(Parsed::new(broker(line)).group(text(&caps, 1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(p: &Parsed) -> &BrokerLine {
        match &p.kind {
            EventKind::Broker(l) => l,
            other => panic!("not a broker line: {other:?}"),
        }
    }

    #[test]
    fn preparing_0_10_restabilize_has_no_reason() {
        let p = preparing(b"Preparing to restabilize group g1 with old generation 4").unwrap();
        assert_eq!(p.group.as_deref(), Some("g1"));
        assert_eq!(
            line(&p),
            &BrokerLine::PreparingRebalance {
                state: "PreparingRebalance".into(),
                old_generation: 4,
                reason: None,
                client_reason: None
            }
        );
    }

    #[test]
    fn preparing_0_11_to_2_0_has_partition_but_no_reason() {
        let p = preparing(
            b"Preparing to rebalance group g1 with old generation 0 (__consumer_offsets-9)",
        )
        .unwrap();
        assert_eq!(p.generation_id, Some(0));
        assert!(matches!(
            line(&p),
            BrokerLine::PreparingRebalance { reason: None, .. }
        ));
    }

    #[test]
    fn preparing_2_3_reason_with_instanceid_typo_names_the_erlang_member() {
        let p = preparing(b"Preparing to rebalance group test in state PreparingRebalance with old generation 14 (__consumer_offsets-7) (reason: Adding new member nonode@nohost/<0.9.0>-ab12 with group instanceid None)").unwrap();
        assert_eq!(p.member_id.as_deref(), Some("nonode@nohost/<0.9.0>-ab12"));
        assert_eq!(p.group_instance_id, None);
        let BrokerLine::PreparingRebalance {
            state,
            reason,
            client_reason,
            ..
        } = line(&p)
        else {
            panic!()
        };
        assert_eq!(state, "PreparingRebalance");
        assert_eq!(
            reason.as_deref(),
            Some("Adding new member nonode@nohost/<0.9.0>-ab12 with group instanceid None")
        );
        assert_eq!(client_reason, &None);
    }

    #[test]
    fn preparing_3_2_plus_splits_the_client_reason() {
        let p = preparing(b"Preparing to rebalance group g in state PreparingRebalance with old generation 2 (__consumer_offsets-33) (reason: Removing member c-1-ab on LeaveGroup; client reason: the consumer is being closed)").unwrap();
        assert_eq!(p.member_id.as_deref(), Some("c-1-ab"));
        let BrokerLine::PreparingRebalance { client_reason, .. } = line(&p) else {
            panic!()
        };
        assert_eq!(
            client_reason.as_deref(),
            Some("the consumer is being closed")
        );
    }

    #[test]
    fn preparing_java_coordinator_has_no_partition_and_a_final_period() {
        let p = preparing(b"Preparing to rebalance group demo in state PreparingRebalance with old generation 1 (reason: Adding new member c-9 with group instance id null; client reason: need to re-join with the given member-id: c-9).").unwrap();
        assert_eq!(p.group.as_deref(), Some("demo"));
        assert_eq!(p.member_id.as_deref(), Some("c-9"));
        let BrokerLine::PreparingRebalance {
            reason,
            client_reason,
            ..
        } = line(&p)
        else {
            panic!()
        };
        assert!(reason.as_deref().unwrap().ends_with("member-id: c-9"));
        assert_eq!(
            client_reason.as_deref(),
            Some("need to re-join with the given member-id: c-9")
        );
    }

    #[test]
    fn preparing_java_heartbeat_expiry_reason_keeps_its_inner_period() {
        let p = preparing(b"Preparing to rebalance group g in state PreparingRebalance with old generation 5 (reason: removing member m-1 on heartbeat expiration.).").unwrap();
        let BrokerLine::PreparingRebalance { reason, .. } = line(&p) else {
            panic!()
        };
        assert_eq!(
            reason.as_deref(),
            Some("removing member m-1 on heartbeat expiration.")
        );
        assert_eq!(p.member_id.as_deref(), Some("m-1"));
    }

    #[test]
    fn preparing_with_a_group_name_containing_spaces() {
        let p = preparing(b"Preparing to rebalance group my group in state PreparingRebalance with old generation 1 (__consumer_offsets-2) (reason: x)").unwrap();
        assert_eq!(p.group.as_deref(), Some("my group"));
    }

    #[test]
    fn stabilized_in_every_version_family() {
        for (msg, members) in [
            (&b"Stabilized group g generation 3"[..], None),
            (
                b"Stabilized group g generation 3 (__consumer_offsets-7)",
                None,
            ),
            (
                b"Stabilized group g generation 3 (__consumer_offsets-7) with 2 members",
                Some(2),
            ),
            (b"Stabilized group g generation 3 with 2 members.", Some(2)),
        ] {
            let p = stabilized(msg).unwrap();
            assert_eq!(p.group.as_deref(), Some("g"));
            assert_eq!(p.generation_id, Some(3));
            assert!(
                matches!(line(&p), BrokerLine::Stabilized { generation: 3, members: m, .. } if *m == members)
            );
        }
    }

    #[test]
    fn assignment_received_without_and_with_leader() {
        let p =
            assignment_received(b"Assignment received from leader for group g for generation 15")
                .unwrap();
        assert_eq!(
            (p.group.as_deref(), p.member_id.as_deref()),
            (Some("g"), None)
        );
        let p = assignment_received(b"Assignment received from leader for group g for generation 15. The group has 3 members, 1 of which are static.").unwrap();
        assert!(matches!(
            line(&p),
            BrokerLine::AssignmentReceived {
                generation: 15,
                members: Some(3)
            }
        ));
        let p = assignment_received(b"Assignment received from leader '<svc>-default@127.0.0.1'/<0.5.0>-df30 for group <g> for generation 11067. The group has 1 members, 0 of which are static.").unwrap();
        assert_eq!(
            p.member_id.as_deref(),
            Some("'<svc>-default@127.0.0.1'/<0.5.0>-df30")
        );
        assert_eq!(p.group.as_deref(), Some("<g>"));
        assert_eq!(p.generation_id, Some(11067));
    }

    #[test]
    fn now_empty_scala_and_java() {
        for msg in [
            &b"Group g with generation 4 is now empty"[..],
            b"Group g with generation 4 is now empty (__consumer_offsets-1)",
            b"Group g with generation 4 is now empty.",
        ] {
            let p = now_empty(msg).unwrap();
            assert_eq!((p.group.as_deref(), p.generation_id), (Some("g"), Some(4)));
        }
    }

    #[test]
    fn dead_in_three_wordings() {
        assert_eq!(
            dead(b"Group g generation 2 is dead and removed")
                .unwrap()
                .generation_id,
            Some(2)
        );
        assert_eq!(
            dead(b"Group g transitioned to Dead in generation 3")
                .unwrap()
                .generation_id,
            Some(3)
        );
        let p = dead(b"Group g is dead, skipping rebalance stage.").unwrap();
        assert_eq!(p.group.as_deref(), Some("g"));
    }

    #[test]
    fn removed_dynamic_members_lists_them() {
        let p = removed_dynamic(b"Group g remove dynamic members who haven't joined: Set(a, b)")
            .unwrap();
        assert_eq!(
            line(&p),
            &BrokerLine::RebalanceTimeoutRemoved {
                members: vec!["a".into(), "b".into()]
            }
        );
        let p =
            removed_dynamic(b"Group g removed dynamic members who haven't joined: [a]").unwrap();
        assert_eq!(p.member_id.as_deref(), Some("a"));
    }

    #[test]
    fn other_group_lines_keep_their_group() {
        let p =
            other_group_line(b"Group g could not complete rebalance because no members rejoined")
                .unwrap();
        assert_eq!(p.group.as_deref(), Some("g"));
        let p = other_group_line(b"Received unexpected notification of sync expiration after group g already transitioned to the Stable state.").unwrap();
        assert_eq!(p.group.as_deref(), Some("g"));
        let p = other_group_line(b"Received unexpected notification of sync expiration for g with an old generation 3 while the group has 4.").unwrap();
        assert_eq!(p.group.as_deref(), Some("g"));
    }
}
