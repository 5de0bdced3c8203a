//! KIP-848 consumer-group lines of the new coordinator (3.6+), all tagged
//! `[GroupId g] ` (kafka-log-formats.md §3.2): joins, static restarts,
//! subscription changes, epoch bumps, target assignments, member
//! reconciliation states, leaves and fencing.
//!
//! Takes: the message after its tag. Gives: a [`Parsed`] event (the caller
//! fills the group from the tag), or `None`.

use crate::event::{BrokerLine, EventKind, Text};
use crate::logs::parsed::{finder, member, number, owned_text, regex, text, Parsed};

fn broker(line: BrokerLine) -> EventKind {
    EventKind::Broker(line)
}

/// "Member M joins the consumer group[ using the P protocol]." and "Static
/// member M with instance id I joins the consumer group[ using …]." (3.6+),
/// plus the classic-JoinGroup-into-consumer-group round trip (3.8+).
pub(crate) fn joins(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(concat!(
        r"(?i-u)^(?:Static )?member ",
        member!(),
        r"(?: with instance id (\S+))? joins the consumer group(?: using the \S+ protocol)?\.$"
    ));
    if let Some(c) = re.captures(msg) {
        let p = Parsed::new(broker(BrokerLine::MemberJoined {
            pending: false,
            from_empty: false,
        }));
        return Some(p.member(text(&c, 1)).instance(text(&c, 2)));
    }
    let round_trip = regex!(concat!(
        r"(?-u)^Dynamic member with unknown member id joins the consumer group\. Created a new member id ",
        member!(),
        r" and requesting the member to rejoin with this id\.$"
    ));
    let c = round_trip.captures(msg)?;
    let line = BrokerLine::MemberJoined {
        pending: true,
        from_empty: false,
    };
    Some(Parsed::new(broker(line)).member(text(&c, 1)))
}

/// Static restarts: "Static member M with instance id I re-joins the
/// consumer group." (3.7), "Static member with unknown member id and instance
/// id I re-joins the consumer group. Created a new member N to replace the
/// existing member O." (3.8), "Static member with instance id I re-joins the
/// consumer group using the P protocol. Created a new member N to replace the
/// existing member O." (3.9+).
pub(crate) fn static_rejoins(msg: &[u8]) -> Option<Parsed> {
    let old = regex!(concat!(
        r"(?-u)^Static member ",
        member!(),
        r" with instance id (\S+) re-joins the consumer group\.$"
    ));
    if let Some(c) = old.captures(msg) {
        let p = Parsed::new(broker(BrokerLine::StaticMemberReplaced {
            old_member_id: None,
        }));
        return Some(p.member(text(&c, 1)).instance(text(&c, 2)));
    }
    let new = regex!(concat!(
        r"(?-u)^Static member with (?:unknown member id and )?instance id (\S+) re-joins the consumer group(?: using the \S+ protocol)?\. Created a new member ",
        member!(),
        r" to replace the existing member ",
        member!(),
        r"\.$"
    ));
    let c = new.captures(msg)?;
    let p = Parsed::new(broker(BrokerLine::StaticMemberReplaced {
        old_member_id: text(&c, 3),
    }));
    Some(p.instance(text(&c, 1)).member(text(&c, 2)))
}

/// "Member M updated its subscribed topics to: X." / "… subscribed regex to:
/// X." / "… member metdata to X." (sic, 4.1+) and "Computed new subscription
/// metadata: X." / "Computed new metadata hash: X.".
pub(crate) fn subscription(msg: &[u8]) -> Option<Parsed> {
    let member_re = regex!(concat!(
        r"(?s-u)^Member ",
        member!(),
        r" (updated its (?:subscribed topics to:|subscribed regex to:|member metdata to) .*)$"
    ));
    if let Some(c) = member_re.captures(msg) {
        let detail = text(&c, 2)?;
        return Some(
            Parsed::new(broker(BrokerLine::SubscriptionChanged { detail })).member(text(&c, 1)),
        );
    }
    let group_re = regex!(r"(?s-u)^(Computed new (?:subscription metadata|metadata hash): .*)$");
    let c = group_re.captures(msg)?;
    Some(Parsed::new(broker(BrokerLine::SubscriptionChanged {
        detail: text(&c, 1)?,
    })))
}

/// "Bumped group epoch to E[ with metadata hash H]." — a KIP-848 rebalance.
pub(crate) fn epoch_bumped(msg: &[u8]) -> Option<Parsed> {
    // Its fixed start first: most tagged lines are others.
    if !msg.starts_with(b"Bumped group epoch to ") {
        return None;
    }
    let re = regex!(r"(?-u)^Bumped group epoch to (-?\d+)(?: with metadata hash \S+?)?\.$");
    let c = re.captures(msg)?;
    let epoch = number(&c, 1)?;
    Some(Parsed::new(broker(BrokerLine::GroupEpochBumped { epoch })).generation(Some(epoch)))
}

/// "Computed a new target assignment for epoch E[ with 'A' assignor][ in Tms][: map]." (3.6–4.x).
pub(crate) fn target_assignment(msg: &[u8]) -> Option<Parsed> {
    // Its fixed start first: most tagged lines are others.
    if !msg.starts_with(b"Computed a new target assignment for epoch ") {
        return None;
    }
    // A long map follows the words: split by hand (the regex must read it
    // to its end).
    super::split::target_assignment(msg).or_else(|| target_assignment_by_regex(msg))
}

/// [`target_assignment`] by its regex alone (every shape).
pub(super) fn target_assignment_by_regex(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(
        r"(?s-u)^Computed a new target assignment for epoch (-?\d+)(?: with '([^']*)' assignor)?(?: in \d+ms)?(?::.*)?\.$"
    );
    let c = re.captures(msg)?;
    let epoch = number(&c, 1)?;
    let line = BrokerLine::TargetAssignmentComputed {
        epoch,
        assignor: text(&c, 2),
    };
    Some(Parsed::new(broker(line)).generation(Some(epoch)))
}

/// Reconciliation: "Member M new assignment state: epoch=E, previousEpoch=P,
/// state=S, assignedPartitions=… and revokedPartitions=…." (3.8+) and the 3.6–3.7
/// "Member M transitioned from CurrentAssignment(…) to CurrentAssignment(memberEpoch=E, previousMemberEpoch=P, …, state=S, …).".
///
/// Tried first on every tagged line, most of which are other lines: each
/// form's fixed words are looked for before its regex runs (a regex's
/// captures cost thousands of instructions even to fail), and the 3.8+
/// form with a plain member id is split by hand ([`super::split`]).
pub(crate) fn assignment_state(msg: &[u8]) -> Option<Parsed> {
    const OLD: &[u8] = b" transitioned from CurrentAssignment(";
    let rest = msg.strip_prefix(b"Member ")?;
    // A member id without quotes ends at the first whitespace, where
    // either form's words must then start; one with quotes may hold
    // whitespace, and is the regexes' to read.
    let end = rest
        .iter()
        .position(|b| super::split::is_space(*b))
        .unwrap_or(rest.len());
    if rest[..end].iter().any(|b| matches!(b, b'\'' | b'"')) {
        return assignment_state_by_regex(msg);
    }
    let after = &rest[end..];
    if after.starts_with(super::split::NEW_ASSIGNMENT_STATE) {
        let at = b"Member ".len() + end;
        super::split::assignment_state(msg, at).or_else(|| assignment_state_by_regex(msg))
    } else if after.starts_with(OLD) {
        assignment_state_by_regex(msg)
    } else {
        None
    }
}

/// [`assignment_state`] by its regexes alone (every shape).
pub(super) fn assignment_state_by_regex(msg: &[u8]) -> Option<Parsed> {
    let new = regex!(concat!(
        r"(?s-u)^Member ",
        member!(),
        r" new assignment state: epoch=(-?\d+), previousEpoch=(-?\d+), state=(\w+)"
    ));
    let old = regex!(concat!(
        r"(?s-u)^Member ",
        member!(),
        r" transitioned from CurrentAssignment\(.*\) to CurrentAssignment\(memberEpoch=(-?\d+), previousMemberEpoch=(-?\d+), .*?state=(\w+)"
    ));
    let c = new.captures(msg).or_else(|| old.captures(msg))?;
    let line = BrokerLine::MemberAssignmentState {
        epoch: number(&c, 2)?,
        previous_epoch: number(&c, 3)?,
        state: text(&c, 4)?,
    };
    Some(
        Parsed::new(broker(line))
            .member(text(&c, 1))
            .generation(number(&c, 2)),
    )
}

/// "Member M left the consumer group." and "Static [Mm]ember M with instance
/// id I [temporarily ]left the consumer group.".
pub(crate) fn left(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(concat!(
        r"(?i-u)^(?:Static )?Member ",
        member!(),
        r"(?: with instance id (\S+))? (temporarily )?left the consumer group\.$"
    ));
    let c = re.captures(msg)?;
    let line = match c.get(3) {
        Some(_) => BrokerLine::StaticMemberTemporarilyLeft,
        None => BrokerLine::MemberLeft {
            client_reason: None,
        },
    };
    Some(
        Parsed::new(broker(line))
            .member(text(&c, 1))
            .instance(text(&c, 2)),
    )
}

/// "Member M fenced from the group because R." (3.6+; R is "its session
/// expired", "the member session expired", "it failed to transition from
/// epoch E within Tms", ...).
///
/// Split by hand when the member id holds no quote or space, else by the
/// regex ([`fenced_by_regex`]): its captures cost a line 20,000
/// instructions.
pub(crate) fn fenced(msg: &[u8]) -> Option<Parsed> {
    const BECAUSE: &[u8] = b" fenced from the group because ";
    let plain = |b: &u8| !b.is_ascii_whitespace() && *b != b'\'' && *b != b'"';
    let split = msg.strip_prefix(b"Member ").and_then(|after| {
        let at = finder!(BECAUSE).find(after)?;
        let member = &after[..at];
        let reason = &after[at + BECAUSE.len()..];
        let plain = !member.is_empty() && member.iter().all(plain) && !reason.contains(&b'\n');
        plain.then_some((member, reason))
    });
    let Some((member, reason)) = split else {
        return fenced_by_regex(msg);
    };
    let line = BrokerLine::MemberFenced {
        reason: owned_text(reason.strip_suffix(b".").unwrap_or(reason)),
    };
    Some(Parsed::new(broker(line)).member(Some(owned_text(member))))
}

/// [`fenced`] by its regex (every line).
fn fenced_by_regex(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(concat!(
        r"(?-u)^Member ",
        member!(),
        r" fenced from the group because (.*?)\.?$"
    ));
    let c = re.captures(msg)?;
    let line = BrokerLine::MemberFenced {
        reason: text(&c, 2)?,
    };
    Some(Parsed::new(broker(line)).member(text(&c, 1)))
}

/// "Static member M with instance id I is fenced by existing member C." and
/// "… cannot join the group because the instance id is[ is] owned by member C.".
pub(crate) fn static_conflict(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(concat!(
        r"(?-u)^Static member ",
        member!(),
        r" with instance id (\S+) (?:is fenced by existing member|cannot join the group because the instance id is (?:is )?owned by member) ",
        member!(),
        r"\.$"
    ));
    let c = re.captures(msg)?;
    let line = BrokerLine::StaticMemberFenced {
        current_member_id: text(&c, 3).map(Text::from),
        operation: None,
    };
    Some(
        Parsed::new(broker(line))
            .member(text(&c, 1))
            .instance(text(&c, 2)),
    )
}

/// Protocol conversions and other tagged lines worth keeping.
pub(crate) fn other_tagged(msg: &[u8]) -> Option<Parsed> {
    // GroupMetadataManager.java `convertToConsumerGroup` /
    // `convertToClassicGroup` (4.0+): the direction decides which protocol
    // the group's next rounds follow.
    let converted = regex!(
        r"(?-u)^Converted the (?:empty )?(?:classic|consumer) group to a (consumer|classic) group\.$"
    );
    if let Some(c) = converted.captures(msg) {
        let to = text(&c, 1)?;
        return Some(Parsed::new(broker(BrokerLine::Other {
            message: format!("group converted to {to}"),
        })));
    }
    let set = [
        (
            regex!(r"(?-u)^Assignment configurations changed to .*\. Triggering rebalance\.$"),
            "assignment configuration changed",
        ),
        (
            regex!(r"(?-u)^Scanned \d+ topics to refresh regular expressions"),
            "regular expressions refreshed",
        ),
        (
            regex!(r"(?-u)^Skipping delayed target assignment: group is empty"),
            "delayed target assignment skipped",
        ),
        (
            regex!(r"(?-u)^Group not found during initial rebalance\.$"),
            "group not found during initial rebalance",
        ),
        (
            regex!(r"(?-u)^Creating a simple consumer group via manual offset commit\.$"),
            "simple group created by commit",
        ),
    ];
    let (_, name) = set.iter().find(|(re, _)| re.is_match(msg))?;
    Some(Parsed::new(broker(BrokerLine::Other {
        message: (*name).to_string(),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(p: &Parsed) -> &BrokerLine {
        match &p.kind {
            EventKind::Broker(l) => l,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn joins_3_6_and_3_9_wordings() {
        let p = joins(b"Member gjWzAEmmRlOfypB2_GB_9Q joins the consumer group.").unwrap();
        assert_eq!(p.member_id.as_deref(), Some("gjWzAEmmRlOfypB2_GB_9Q"));
        assert!(joins(b"Member m joins the consumer group using the consumer protocol.").is_some());
        let p = joins(b"Static member m with instance id i joins the consumer group using the classic protocol.").unwrap();
        assert_eq!(p.group_instance_id.as_deref(), Some("i"));
        let p = joins(b"Dynamic member with unknown member id joins the consumer group. Created a new member id c-1 and requesting the member to rejoin with this id.").unwrap();
        assert!(matches!(
            kind(&p),
            BrokerLine::MemberJoined { pending: true, .. }
        ));
    }

    #[test]
    fn static_rejoins_3_7_3_8_3_9() {
        let p = static_rejoins(b"Static member m with instance id i re-joins the consumer group.")
            .unwrap();
        assert_eq!(
            kind(&p),
            &BrokerLine::StaticMemberReplaced {
                old_member_id: None
            }
        );
        let p = static_rejoins(b"Static member with unknown member id and instance id i re-joins the consumer group. Created a new member n to replace the existing member o.").unwrap();
        assert_eq!(
            kind(&p),
            &BrokerLine::StaticMemberReplaced {
                old_member_id: Some("o".into())
            }
        );
        assert_eq!(p.member_id.as_deref(), Some("n"));
        let p = static_rejoins(b"Static member with instance id i re-joins the consumer group using the consumer protocol. Created a new member n to replace the existing member o.").unwrap();
        assert_eq!(p.group_instance_id.as_deref(), Some("i"));
    }

    #[test]
    fn subscription_changes() {
        let p = subscription(b"Member m updated its subscribed topics to: [a, b].").unwrap();
        assert_eq!(
            kind(&p),
            &BrokerLine::SubscriptionChanged {
                detail: "updated its subscribed topics to: [a, b].".into()
            }
        );
        assert!(subscription(b"Member m updated its subscribed regex to: a.*.").is_some());
        assert!(subscription(b"Member m updated its member metdata to X.").is_some());
        assert!(subscription(b"Computed new subscription metadata: {a=TopicMetadata(id=x, name=a, numPartitions=3)}.").is_some());
        assert!(subscription(b"Computed new metadata hash: 1234.").is_some());
    }

    #[test]
    fn epoch_bumps_3_6_and_4_1() {
        assert_eq!(
            kind(&epoch_bumped(b"Bumped group epoch to 5.").unwrap()),
            &BrokerLine::GroupEpochBumped { epoch: 5 }
        );
        assert_eq!(
            epoch_bumped(b"Bumped group epoch to 6 with metadata hash 99.")
                .unwrap()
                .generation_id,
            Some(6)
        );
    }

    #[test]
    fn fenced_lines_split_by_hand_are_the_regex_lines() {
        let cases = [
            "Member m-1 fenced from the group because the member session expired.",
            "Member m fenced from the group because it failed to transition from epoch 5 within 45000ms.",
            "Member m fenced from the group because x..",
            "Member m fenced from the group because .",
            "Member m fenced from the group because ",
            "Member m fenced from the group because",
            "Member m fenced from the group because a fenced from the group because b.",
            "Member  fenced from the group because x.",
            "Member 'a b' fenced from the group because x.",
            "Member a b fenced from the group because x.",
            "Member m fenced from the group because x\ny.",
            "member m fenced from the group because x.",
        ];
        crate::logs::parsed::assert_split_reads_as_regex(&cases, fenced, fenced_by_regex);
    }

    #[test]
    fn target_assignments_3_6_to_4_0() {
        for msg in [
            &b"Computed a new target assignment for epoch 5: {m=Assignment(x)}."[..],
            b"Computed a new target assignment for epoch 5 with 'uniform' assignor: {m=x}.",
            b"Computed a new target assignment for epoch 5 with 'uniform' assignor in 3ms: {m=x}.",
            b"Computed a new target assignment for epoch 5 with 'uniform' assignor in 3ms.",
        ] {
            let p = target_assignment(msg).unwrap();
            assert!(
                matches!(
                    kind(&p),
                    BrokerLine::TargetAssignmentComputed { epoch: 5, .. }
                ),
                "{:?}",
                String::from_utf8_lossy(msg)
            );
        }
    }

    #[test]
    fn assignment_states_3_7_and_3_8() {
        let p = assignment_state(b"Member m new assignment state: epoch=5, previousEpoch=4, state=STABLE, assignedPartitions=[x-0] and revokedPartitions=[].").unwrap();
        assert_eq!(
            kind(&p),
            &BrokerLine::MemberAssignmentState {
                epoch: 5,
                previous_epoch: 4,
                state: "STABLE".into()
            }
        );
        let p = assignment_state(b"Member m transitioned from CurrentAssignment(memberEpoch=3, previousMemberEpoch=2, targetMemberEpoch=3, state=stable, assignedPartitions={}, partitionsPendingRevocation={}, partitionsPendingAssignment={}) to CurrentAssignment(memberEpoch=4, previousMemberEpoch=3, targetMemberEpoch=4, state=revoking, assignedPartitions={}, partitionsPendingRevocation={}, partitionsPendingAssignment={}).").unwrap();
        assert_eq!(
            kind(&p),
            &BrokerLine::MemberAssignmentState {
                epoch: 4,
                previous_epoch: 3,
                state: "revoking".into()
            }
        );
    }

    #[test]
    fn leaves_and_temporary_static_leaves() {
        assert_eq!(
            kind(&left(b"Member m left the consumer group.").unwrap()),
            &BrokerLine::MemberLeft {
                client_reason: None
            }
        );
        let p = left(b"Static Member m with instance id i temporarily left the consumer group.")
            .unwrap();
        assert_eq!(kind(&p), &BrokerLine::StaticMemberTemporarilyLeft);
        let p = left(b"Static member m with instance id i left the consumer group.").unwrap();
        assert_eq!(
            (kind(&p), p.group_instance_id.as_deref()),
            (
                &BrokerLine::MemberLeft {
                    client_reason: None
                },
                Some("i")
            )
        );
    }

    #[test]
    fn fencing_3_6_and_3_8_wordings() {
        let p = fenced(b"Member m fenced from the group because its session expired.").unwrap();
        assert_eq!(
            kind(&p),
            &BrokerLine::MemberFenced {
                reason: "its session expired".into()
            }
        );
        let p = fenced(b"Member m fenced from the group because it failed to transition from epoch 4 within 300000ms.").unwrap();
        assert_eq!(
            kind(&p),
            &BrokerLine::MemberFenced {
                reason: "it failed to transition from epoch 4 within 300000ms".into()
            }
        );
        assert!(
            fenced(b"Member m fenced from the group because the member session expired.").is_some()
        );
    }

    #[test]
    fn static_conflicts_including_the_is_is_typo() {
        assert!(static_conflict(
            b"Static member m with instance id i is fenced by existing member o."
        )
        .is_some());
        let p = static_conflict(b"Static member m with instance id i cannot join the group because the instance id is is owned by member o.").unwrap();
        assert_eq!(
            kind(&p),
            &BrokerLine::StaticMemberFenced {
                current_member_id: Some("o".into()),
                operation: None
            }
        );
        assert!(static_conflict(b"Static member m with instance id i cannot join the group because the instance id is owned by member o.").is_some());
    }

    #[test]
    fn conversions_and_4_2_lines() {
        let converted = |m: &[u8]| match other_tagged(m).map(|p| p.kind) {
            Some(EventKind::Broker(BrokerLine::Other { message })) => message,
            _ => String::new(),
        };
        assert_eq!(
            converted(b"Converted the classic group to a consumer group."),
            "group converted to consumer"
        );
        assert_eq!(
            converted(b"Converted the empty consumer group to a classic group."),
            "group converted to classic"
        );
        assert!(
            other_tagged(b"Assignment configurations changed to {a=b}. Triggering rebalance.")
                .is_some()
        );
    }
}
