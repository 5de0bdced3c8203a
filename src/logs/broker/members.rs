//! Membership lines of the classic protocol: members failing, leaving,
//! joining (KIP-394 member-id round trip), static members (KIP-345) replaced
//! or fenced, and members found when a partition loads (kafka-log-formats.md
//! §2.2, §2.4, §3.1).
//!
//! Takes: a coordinator message with its prefix and any `[Group g]` tag
//! removed. Gives: a [`Parsed`] event, or `None`.

use std::sync::LazyLock;

use crate::event::{BrokerLine, EventKind, Text};
use crate::logs::parsed::{
    compile_named, finder, finder_rev, first_named, member, number, owned_text, regex, text,
    NamedPatterns, Parsed,
};

fn broker(line: BrokerLine) -> EventKind {
    EventKind::Broker(line)
}

/// "Member M in group G has failed[, removing it from the group][.]"
/// (0.9–4.0; INFO from 0.11.0.1).
///
/// Tried first on every "Member…" line: the regex runs only on a line that
/// holds its fixed words (its captures cost thousands of instructions even
/// to fail).
pub(crate) fn failed(msg: &[u8]) -> Option<Parsed> {
    super::split::member_failed(msg).or_else(|| {
        finder!(b" has failed").find(msg)?;
        failed_by_regex(msg)
    })
}

/// [`failed`] by its regex alone (every shape; the hand split takes the
/// plain ones first).
pub(super) fn failed_by_regex(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(concat!(
        r"(?-u)^Member ",
        member!(),
        r" in group (.+?) has failed(?:, removing it from the group)?\.?$"
    ));
    let caps = re.captures(msg)?;
    Some(
        Parsed::new(broker(BrokerLine::MemberFailed))
            .member(text(&caps, 1))
            .group(text(&caps, 2)),
    )
}

/// "Pending member M in group G has been removed after session timeout expiration." (2.2+).
pub(crate) fn pending_expired(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(concat!(
        r"(?-u)^Pending member ",
        member!(),
        r" in group (.+?) has been removed after session timeout expiration\.?$"
    ));
    let caps = re.captures(msg)?;
    Some(
        Parsed::new(broker(BrokerLine::PendingMemberExpired))
            .member(text(&caps, 1))
            .group(text(&caps, 2)),
    )
}

fn left(client_reason: Option<String>) -> EventKind {
    broker(BrokerLine::MemberLeft { client_reason })
}

/// Every "has left" wording: 0.11–2.3 "Member M in group G has left,
/// removing it from the group"; 2.4–2.8 "Member[group.instance.id I,
/// member.id M] in group G has left, …"; 3.0+ "Member MemberMetadata(…) has
/// left group G through explicit `LeaveGroup`[ request][; client reason: R]".
pub(crate) fn left_classic(msg: &[u8]) -> Option<Parsed> {
    if msg.starts_with(b"Member MemberMetadata(") {
        return left_metadata(msg);
    }
    // The old forms' fixed words before their regex (most "Member…" lines
    // are others, and a regex's captures cost thousands of instructions
    // even to fail); the plain one split by hand.
    finder!(b" has left, removing it from the group").find(msg)?;
    super::split::member_left(msg).or_else(|| left_classic_by_regex(msg))
}

/// [`left_classic`] by its regex and the 3.0+ split alone (every shape).
pub(super) fn left_classic_by_regex(msg: &[u8]) -> Option<Parsed> {
    if msg.starts_with(b"Member MemberMetadata(") {
        return left_metadata(msg);
    }
    let old = regex!(concat!(
        r"(?-u)^Member(?:\[group\.instance\.id (\S+), member\.id ([^\]]+)\]| ",
        member!(),
        r") in group (.+?) has left, removing it from the group\.?$"
    ));
    let caps = old.captures(msg)?;
    let member_id = text(&caps, 2).or_else(|| text(&caps, 3));
    Some(
        Parsed::new(left(None))
            .member(member_id)
            .group(text(&caps, 4))
            .instance(text(&caps, 1)),
    )
}

/// The 3.0+ form, read by hand: `MemberMetadata(...)` spans most of a long
/// line, and a regex with lazy groups over it cost more than every other
/// broker line together on big logs.
fn left_metadata(msg: &[u8]) -> Option<Parsed> {
    // Each searcher built once (`memmem::find` builds one per call).
    fn split<'a>(
        hay: &'a [u8],
        finder: &memchr::memmem::Finder<'_>,
    ) -> Option<(&'a [u8], &'a [u8])> {
        let at = finder.find(hay)?;
        Some((&hay[..at], &hay[at + finder.needle().len()..]))
    }
    let rest = msg.strip_prefix(b"Member MemberMetadata(memberId=")?;
    let (member, rest) = split(rest, finder!(b", groupInstanceId="))?;
    let (instance, rest) = split(rest, finder!(b", clientId="))?;
    let (client, rest) = split(rest, finder!(b", clientHost="))?;
    const LEFT: &[u8] = b") has left group ";
    let rest = &rest[finder_rev!(LEFT).rfind(rest)? + LEFT.len()..];
    let (group, tail) =
        split(rest, finder!(b" through explicit `LeaveGroup`")).filter(|(g, _)| !g.is_empty())?;
    let tail = tail.strip_prefix(b" request").unwrap_or(tail);
    let reason = match tail {
        [] => None,
        _ => Some(tail.strip_prefix(b"; client reason: ")?),
    };
    let owned = |b: &[u8]| Some(owned_text(b));
    let mut p = Parsed::new(left(reason.and_then(owned)))
        .member(owned(member))
        .instance(owned(instance))
        .group(owned(group));
    p.client_id = owned(client);
    Some(p)
}

/// Pending members leaving: "Pending member M is leaving group G." (2.2–2.8),
/// "Pending member with memberId=M has left group G through explicit
/// `LeaveGroup` request" (3.0+).
pub(crate) fn pending_left(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(concat!(
        r"(?-u)^Pending member (?:with memberId=)?",
        member!(),
        r" (?:is leaving group (.+?)\.|has left group (.+?) through explicit `LeaveGroup` request)$"
    ));
    let caps = re.captures(msg)?;
    let group = text(&caps, 2).or_else(|| text(&caps, 3));
    Some(Parsed::new(left(None)).member(text(&caps, 1)).group(group))
}

/// Java (3.7+) LeaveGroup lines, after their `[Group g]`/`[GroupId g]` tag:
/// "[Pending |Dynamic |Static ]Member M[ with instance id I] has left group
/// through explicit `LeaveGroup` request; client reason: R".
pub(crate) fn left_java(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(concat!(
        r"(?i-u)^(?:Pending |Dynamic |Static )?Member ",
        member!(),
        r"(?: with instance id (\S+))? has left group through explicit `LeaveGroup` request(?:; client reason: (.*))?$"
    ));
    let caps = re.captures(msg)?;
    Some(
        Parsed::new(left(text(&caps, 3)))
            .member(text(&caps, 1))
            .instance(text(&caps, 2)),
    )
}

fn joined(pending: bool, state: Option<String>) -> EventKind {
    let from_empty = state.as_deref() == Some("Empty");
    broker(BrokerLine::MemberJoined {
        pending,
        from_empty,
    })
}

/// KIP-394 first half: "Dynamic [Mm]ember with unknown member id (re)joins
/// group G in S state. Created a new member id M and request(ing) the member
/// to rejoin with this id." (DEBUG 2.4–2.8, INFO 3.0+).
pub(crate) fn unknown_id_round_trip(msg: &[u8]) -> Option<Parsed> {
    super::split::unknown_id_round_trip(msg).or_else(|| unknown_id_round_trip_by_regex(msg))
}

/// [`unknown_id_round_trip`] by its regex alone (every shape; the hand split takes the
/// plain ones first).
pub(super) fn unknown_id_round_trip_by_regex(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(concat!(
        r"(?i-u)^Dynamic member with unknown member id (?:re)?joins group (.+?) in (?:state )?(\S+?)(?: state)?\. Created a new member id ",
        member!(),
        r" and request(?:ing)? the member to rejoin with this id\.$"
    ));
    let caps = re.captures(msg)?;
    Some(
        Parsed::new(joined(true, text(&caps, 2)))
            .group(text(&caps, 1))
            .member(text(&caps, 3)),
    )
}

/// Joins that add the member at once: "(Static|Dynamic) Member with unknown
/// member id joins group G in S state. Created a new member id M for this
/// member and add(ed) to the group." (2.4+), Java "… in state S. Created a
/// new member id M and added the member to the group.", and the static form
/// "Static member with groupInstanceId=I and unknown member id joins group G
/// in S state. Created a new member id M for this member and add(ed) to the group.".
pub(crate) fn unknown_id_added(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(concat!(
        r"(?i-u)^(?:Static|Dynamic) member with (?:groupInstanceId=(\S+) and )?unknown member id (?:re)?joins group (.+?) in (?:state )?(\S+?)(?: state)?\. Created a new member id ",
        member!(),
        r" (?:for this member and add(?:ed)? to the group|and added the member to the group)\.$"
    ));
    let caps = re.captures(msg)?;
    Some(
        Parsed::new(joined(false, text(&caps, 3)))
            .group(text(&caps, 2))
            .member(text(&caps, 4))
            .instance(text(&caps, 1)),
    )
}

/// KIP-394 second half: "Dynamic Member with specific member id M joins
/// group G in S state. Adding to the group now." (2.5–2.8) / "Pending dynamic
/// member with id M joins group G in S state. Adding to the group now." (3.0+).
pub(crate) fn pending_added(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(concat!(
        r"(?i-u)^(?:Dynamic member with specific member id|Pending dynamic member with id) ",
        member!(),
        r" joins group (.+?) in (\S+) state\. Adding to the group now\.$"
    ));
    let caps = re.captures(msg)?;
    Some(
        Parsed::new(joined(false, text(&caps, 3)))
            .member(text(&caps, 1))
            .group(text(&caps, 2)),
    )
}

/// "Adding new static member I to group G with member id M." (2.5–2.8).
pub(crate) fn static_added(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(concat!(
        r"(?-u)^Adding new static member (\S+) to group (.+?) with member id ",
        member!(),
        r"\.$"
    ));
    let caps = re.captures(msg)?;
    Some(
        Parsed::new(joined(false, None))
            .instance(text(&caps, 1))
            .group(text(&caps, 2))
            .member(text(&caps, 3)),
    )
}

fn replaced(old: Option<String>) -> EventKind {
    broker(BrokerLine::StaticMemberReplaced { old_member_id: old })
}

/// A restarted static member takes its instance id back: "Static member I
/// [of group G ]with unknown member id rejoins, assigning new member id M,
/// while old member[ id] O will be removed." (2.3–2.8) and "Static member
/// with groupInstanceId=I and unknown member id joins group G in S state.
/// Replacing previously mapped member O with this groupInstanceId." (3.0+).
pub(crate) fn static_replaced(msg: &[u8]) -> Option<Parsed> {
    let old = regex!(concat!(
        r"(?-u)^Static member (\S+) (?:of group (.+?) )?with unknown member id rejoins, assigning new member id ",
        member!(),
        r", while old member (?:id )?",
        member!(),
        r" will be removed\.$"
    ));
    if let Some(c) = old.captures(msg) {
        let p = Parsed::new(replaced(text(&c, 4)))
            .instance(text(&c, 1))
            .group(text(&c, 2));
        return Some(p.member(text(&c, 3)));
    }
    let new = regex!(concat!(
        r"(?-u)^Static member with groupInstanceId=(\S+) and unknown member id joins group (.+?) in \S+ state\. Replacing previously mapped member ",
        member!(),
        r" with this groupInstanceId\.$"
    ));
    let c = new.captures(msg)?;
    Some(
        Parsed::new(replaced(text(&c, 3)))
            .instance(text(&c, 1))
            .group(text(&c, 2)),
    )
}

/// "Request memberId=M for static member with groupInstanceId=I is fenced by
/// (current|existing) memberId=C during operation OP" (3.0+), and the 2.3–2.8
/// "given member.id M is identified as a known static member I, but not
/// matching the expected member.id C[ during OP, will respond with instance
/// fenced error]".
pub(crate) fn static_fenced(msg: &[u8]) -> Option<Parsed> {
    let new = regex!(concat!(
        r"(?-u)^Request memberId=",
        member!(),
        r" for static member with groupInstanceId=(\S+) is fenced by (?:current|existing) memberId=",
        member!(),
        r" during operation (\S+)$"
    ));
    let old = regex!(concat!(
        r"(?-u)^given member\.id ",
        member!(),
        r" is identified as a known static member (\S+?), ?but not matching the expected member\.id ",
        member!(),
        r"(?: during (\S+), will respond with instance fenced error)?$"
    ));
    let caps = new.captures(msg).or_else(|| old.captures(msg))?;
    let line = BrokerLine::StaticMemberFenced {
        current_member_id: text(&caps, 3).map(Text::from),
        operation: text(&caps, 4).map(Text::from),
    };
    Some(
        Parsed::new(broker(line))
            .member(text(&caps, 1))
            .instance(text(&caps, 2)),
    )
}

/// Member lines recognised by name; `m` is the member and `g` the group when
/// the line states them.
const OTHER_MEMBER_LINES: &[(&str, &str)] = &[
    (
        concat!(
            r"(?-u)^Member id (?P<m>",
            member!(),
            r") was not found in (?P<g>.+?) during heartbeat (?:expiration\.|completion check)$"
        ),
        "member not found on heartbeat expiry",
    ),
    (
        concat!(
            r"(?-u)^Received notification of heartbeat expiration for member (?P<m>",
            member!(),
            r") after group (?P<g>.+?) had already been unloaded or deleted\.$"
        ),
        "heartbeat expiry after unload",
    ),
    (
        concat!(
            r"(?-u)^Member (?P<m>",
            member!(),
            r") has already been removed from the group\.$"
        ),
        "member already removed",
    ),
    (
        concat!(
            r"(?-u)^Attempt to add rejoining member (?P<m>",
            member!(),
            r") of group (?P<g>.+?) in unexpected group state"
        ),
        "rejoin in unexpected state",
    ),
    (
        concat!(
            r"(?-u)^Group leader \[member(?:\.id|Id): (?P<m>",
            member!(),
            r"), .*\] failed to join before (?:the )?rebalance timeout"
        ),
        "leader failed to join before rebalance timeout",
    ),
    (
        r"(?-u)^Failed to persist metadata for group (?P<g>.+?) static member \S+ with group instance id",
        "static member metadata write failed",
    ),
    (
        r"(?-u)^Static member (?:which )?joins during \S+ stage (?:and doesn't affect .*)?will not trigger (?:a )?rebalance\.$",
        "static member rejoined without rebalance",
    ),
];

/// Member lines that change nothing by themselves but say something about a
/// member: heartbeat-expiry races, static rejoins that skip a rebalance,
/// leaders missing the join, rejoin in an unexpected state, static-member
/// write failures.
pub(crate) fn other_member_line(msg: &[u8]) -> Option<Parsed> {
    static TABLE: LazyLock<NamedPatterns> = LazyLock::new(|| compile_named(OTHER_MEMBER_LINES));
    let (caps, name) = first_named(&TABLE, msg)?;
    let named = |n: &str| caps.name(n).map(|m| owned_text(m.as_bytes()));
    let line = BrokerLine::Other {
        message: name.to_string(),
    };
    Some(
        Parsed::new(broker(line))
            .member(named("m"))
            .group(named("g")),
    )
}

/// Members found when a partition loads: "Loaded member MemberMetadata(…) in
/// group G with generation N." (2.8+) and the 2.5–2.7 "Static member
/// MemberMetadata(…).groupInstanceId of group G loaded with member id M at
/// generation N." (GroupMetadata$, no prefix).
pub(crate) fn member_loaded(msg: &[u8]) -> Option<Parsed> {
    let new = regex!(
        r"(?s-u)^Loaded member MemberMetadata\(memberId=(.*?), groupInstanceId=(.*?), clientId=.*\) in group (.+?) with generation (-?\d+)\.$"
    );
    let old = regex!(concat!(
        r"(?s-u)^Static member (.*)\.groupInstanceId of group (.+?) loaded with member id ",
        member!(),
        r" at generation (-?\d+)\.$"
    ));
    let loaded = || {
        Parsed::new(broker(BrokerLine::Other {
            message: "member loaded".to_string(),
        }))
    };
    if let Some(c) = new.captures(msg) {
        let p = loaded()
            .member(text(&c, 1))
            .instance(text(&c, 2))
            .group(text(&c, 3));
        return Some(p.generation(number(&c, 4)));
    }
    let c = old.captures(msg)?;
    Some(
        loaded()
            .group(text(&c, 2))
            .member(text(&c, 3))
            .generation(number(&c, 4)),
    )
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
    fn failed_in_0_10_and_2_x_and_java_wording() {
        for msg in [
            &b"Member c-1-ab in group g has failed"[..],
            b"Member c-1-ab in group g has failed, removing it from the group",
            b"Member c-1-ab in group g has failed, removing it from the group.",
        ] {
            let p = failed(msg).unwrap();
            assert_eq!(
                (p.member_id.as_deref(), p.group.as_deref()),
                (Some("c-1-ab"), Some("g"))
            );
            assert_eq!(kind(&p), &BrokerLine::MemberFailed);
        }
    }

    #[test]
    fn pending_member_expired() {
        let p = pending_expired(
            b"Pending member c-2 in group g has been removed after session timeout expiration.",
        )
        .unwrap();
        assert_eq!(kind(&p), &BrokerLine::PendingMemberExpired);
        assert_eq!(p.member_id.as_deref(), Some("c-2"));
    }

    #[test]
    fn left_2_2_and_2_4_wordings() {
        let p =
            left_classic(b"Member c-1 in group g has left, removing it from the group").unwrap();
        assert_eq!(
            (p.member_id.as_deref(), p.group.as_deref()),
            (Some("c-1"), Some("g"))
        );
        let p = left_classic(b"Member[group.instance.id Some(i-1), member.id c-1] in group g has left, removing it from the group").unwrap();
        assert_eq!(
            (p.member_id.as_deref(), p.group_instance_id.as_deref()),
            (Some("c-1"), Some("i-1"))
        );
        let p = left_classic(b"Member[group.instance.id None, member.id c-1] in group g has left, removing it from the group").unwrap();
        assert_eq!(p.group_instance_id, None);
    }

    #[test]
    fn left_3_x_with_member_metadata_and_client_reason() {
        let msg = b"Member MemberMetadata(memberId=c-4b, groupInstanceId=None, clientId=app, clientHost=/172.23.0.7, sessionTimeoutMs=45000, rebalanceTimeoutMs=300000, supportedProtocols=List(range, cooperative-sticky)) has left group g2 through explicit `LeaveGroup`; client reason: the consumer is being closed";
        let p = left_classic(msg).unwrap();
        assert_eq!(
            (
                p.member_id.as_deref(),
                p.group.as_deref(),
                p.client_id.as_deref()
            ),
            (Some("c-4b"), Some("g2"), Some("app"))
        );
        assert_eq!(
            kind(&p),
            &BrokerLine::MemberLeft {
                client_reason: Some("the consumer is being closed".into())
            }
        );
        let msg = b"Member MemberMetadata(memberId=c-4b, groupInstanceId=Some(i), clientId=app, clientHost=/1.1.1.1, sessionTimeoutMs=10000, rebalanceTimeoutMs=300000, supportedProtocols=List(range), ) has left group g2 through explicit `LeaveGroup` request";
        let p = left_classic(msg).unwrap();
        assert_eq!(
            (p.group_instance_id.as_deref(), kind(&p)),
            (
                Some("i"),
                &BrokerLine::MemberLeft {
                    client_reason: None
                }
            )
        );
    }

    #[test]
    fn pending_member_left_2_x_and_3_x() {
        assert_eq!(
            pending_left(b"Pending member c-1 is leaving group g.")
                .unwrap()
                .group
                .as_deref(),
            Some("g")
        );
        let p = pending_left(b"Pending member with memberId=c-1 has left group g through explicit `LeaveGroup` request").unwrap();
        assert_eq!(
            (p.member_id.as_deref(), p.group.as_deref()),
            (Some("c-1"), Some("g"))
        );
    }

    #[test]
    fn java_leave_lines_after_their_tag() {
        let p = left_java(b"Member c-1 has left group through explicit `LeaveGroup` request; client reason: consumer poll timeout has expired.").unwrap();
        assert_eq!(
            kind(&p),
            &BrokerLine::MemberLeft {
                client_reason: Some("consumer poll timeout has expired.".into())
            }
        );
        let p = left_java(b"Static Member c-1 with instance id i-1 has left group through explicit `LeaveGroup` request; client reason: not provided").unwrap();
        assert_eq!(p.group_instance_id.as_deref(), Some("i-1"));
        assert!(left_java(b"Dynamic member c-1 has left group through explicit `LeaveGroup` request; client reason: x").is_some());
        assert!(left_java(b"Pending member c-1 has left group through explicit `LeaveGroup` request; client reason: x").is_some());
    }

    #[test]
    fn member_id_round_trip_in_2_4_3_x_and_java() {
        for msg in [
            &b"Dynamic member with unknown member id rejoins group g in Empty state. Created a new member id c-1 and request the member to rejoin with this id."[..],
            b"Dynamic member with unknown member id joins group g in Stable state. Created a new member id c-1 and request the member to rejoin with this id.",
            b"Dynamic member with unknown member id joins group g in Empty state. Created a new member id c-1 and requesting the member to rejoin with this id.",
        ] {
            let p = unknown_id_round_trip(msg).unwrap();
            assert_eq!((p.group.as_deref(), p.member_id.as_deref()), (Some("g"), Some("c-1")));
            assert!(matches!(kind(&p), BrokerLine::MemberJoined { pending: true, .. }));
        }
    }

    #[test]
    fn joins_without_round_trip() {
        for msg in [
            &b"Dynamic Member with unknown member id joins group g in Empty state. Created a new member id c-1 for this member and add to the group."[..],
            b"Static Member with unknown member id joins group g in Empty state. Created a new member id c-1 for this member and add to the group.",
            b"Dynamic member with unknown member id joins group g in state Empty. Created a new member id c-1 and added the member to the group.",
            b"Static member with groupInstanceId=i-1 and unknown member id joins group g in Stable state. Created a new member id c-1 for this member and added to the group.",
        ] {
            let p = unknown_id_added(msg).unwrap();
            assert_eq!((p.group.as_deref(), p.member_id.as_deref()), (Some("g"), Some("c-1")));
            assert!(matches!(kind(&p), BrokerLine::MemberJoined { pending: false, .. }));
        }
        assert!(
            static_added(b"Adding new static member i-1 to group g with member id c-1.").is_some()
        );
    }

    #[test]
    fn pending_member_added_2_5_and_3_x() {
        for msg in [
            &b"Dynamic Member with specific member id c-1 joins group g in Stable state. Adding to the group now."[..],
            b"Pending dynamic member with id c-1 joins group g in Stable state. Adding to the group now.",
        ] {
            let p = pending_added(msg).unwrap();
            assert_eq!((p.group.as_deref(), p.member_id.as_deref()), (Some("g"), Some("c-1")));
        }
    }

    #[test]
    fn static_member_replaced_2_3_2_5_and_3_x() {
        let p = static_replaced(b"Static member i-1 with unknown member id rejoins, assigning new member id c-2, while old member c-1 will be removed.").unwrap();
        assert_eq!(
            kind(&p),
            &BrokerLine::StaticMemberReplaced {
                old_member_id: Some("c-1".into())
            }
        );
        assert_eq!(
            (
                p.member_id.as_deref(),
                p.group_instance_id.as_deref(),
                p.group.as_deref()
            ),
            (Some("c-2"), Some("i-1"), None)
        );
        let p = static_replaced(b"Static member i-1 of group g with unknown member id rejoins, assigning new member id c-2, while old member id c-1 will be removed.").unwrap();
        assert_eq!(p.group.as_deref(), Some("g"));
        let p = static_replaced(b"Static member with groupInstanceId=i-1 and unknown member id joins group g in Stable state. Replacing previously mapped member c-1 with this groupInstanceId.").unwrap();
        assert_eq!(
            kind(&p),
            &BrokerLine::StaticMemberReplaced {
                old_member_id: Some("c-1".into())
            }
        );
        assert_eq!(p.group.as_deref(), Some("g"));
    }

    #[test]
    fn static_member_fenced_scala_java_and_2_x() {
        let p = static_fenced(b"Request memberId=c-1 for static member with groupInstanceId=i-1 is fenced by current memberId=c-2 during operation heartbeat").unwrap();
        assert_eq!(
            kind(&p),
            &BrokerLine::StaticMemberFenced {
                current_member_id: Some("c-2".into()),
                operation: Some("heartbeat".into())
            }
        );
        assert!(static_fenced(b"Request memberId=c-1 for static member with groupInstanceId=i-1 is fenced by existing memberId=c-2 during operation join-group").is_some());
        let p = static_fenced(b"given member.id c-1 is identified as a known static member i-1, but not matching the expected member.id c-2 during sync-group, will respond with instance fenced error").unwrap();
        assert_eq!(p.group_instance_id.as_deref(), Some("i-1"));
        assert!(static_fenced(b"given member.id c-1 is identified as a known static member i-1,but not matching the expected member.id c-2").is_some());
    }

    #[test]
    fn other_member_lines() {
        let p = other_member_line(b"Member id c-1 was not found in g during heartbeat expiration.")
            .unwrap();
        assert_eq!(
            (p.member_id.as_deref(), p.group.as_deref()),
            (Some("c-1"), Some("g"))
        );
        assert!(other_member_line(b"Static member which joins during Stable stage and doesn't affect selectProtocol will not trigger rebalance.").is_some());
        assert!(other_member_line(b"Static member which joins during Stable stage and doesn't affect the selected protocol will not trigger a rebalance.").is_some());
        assert!(other_member_line(
            b"Static member joins during Stable stage will not trigger rebalance."
        )
        .is_some());
        let p = other_member_line(b"Group leader [member.id: c-1, group.instance.id: None] failed to join before rebalance timeout, while new leader c-2 was elected.").unwrap();
        assert_eq!(p.member_id.as_deref(), Some("c-1"));
        assert!(other_member_line(b"Group leader [memberId: c-1, groupInstanceId: None] failed to join before the rebalance timeout. Member c-2 was elected as the new leader.").is_some());
    }

    #[test]
    fn members_found_on_load() {
        let p = member_loaded(b"Loaded member MemberMetadata(memberId=c-1, groupInstanceId=None, clientId=a, clientHost=/1.2.3.4, sessionTimeoutMs=1, rebalanceTimeoutMs=2, supportedProtocols=List(range)) in group g with generation 9.").unwrap();
        assert_eq!(
            (p.member_id.as_deref(), p.group.as_deref(), p.generation_id),
            (Some("c-1"), Some("g"), Some(9))
        );
        let p = member_loaded(b"Static member MemberMetadata(memberId=c-1, groupInstanceId=Some(i), clientId=a, clientHost=/1.2.3.4, sessionTimeoutMs=1, rebalanceTimeoutMs=2, supportedProtocols=List(range), ).groupInstanceId of group g loaded with member id c-1 at generation 4.").unwrap();
        assert_eq!((p.group.as_deref(), p.generation_id), (Some("g"), Some(4)));
    }
}
