//! Java consumer lines of the classic protocol (AbstractCoordinator,
//! ConsumerCoordinator, ConsumerRebalanceListenerInvoker; 0.9 → 4.x,
//! kafka-log-formats.md §4.2–§4.3).
//!
//! Takes: a client message after its `[Consumer …]` prefix (or a pre-1.0
//! prefix-less one that names its group). Gives: a [`Parsed`] event, or `None`.

use std::sync::LazyLock;

use crate::event::{ClientLine, EventKind};
use crate::logs::parsed::{
    compile_named, finder, finder_rev, first_named, list_items, member, number, owned_text, regex,
    text, NamedPatterns, Parsed,
};

fn client(line: ClientLine) -> EventKind {
    EventKind::Client(line)
}

/// "Discovered coordinator X for group G." (0.10–0.11), "Discovered
/// coordinator X" (1.0), "Discovered group coordinator X" (1.1+; the KIP-848
/// client prints `Coordinator(key=…, nodeId=…, host=…)` in 3.8).
pub(crate) fn discovered(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(r"(?-u)^Discovered (?:group )?coordinator (.+?)(?: for group (.+?)\.)?$");
    let c = re.captures(msg)?;
    let line = ClientLine::CoordinatorDiscovered {
        coordinator: text(&c, 1)?,
    };
    Some(Parsed::new(client(line)).group(text(&c, 2)))
}

/// "Marking the coordinator X dead[ for group G]" (≤1.0), "Group coordinator
/// X is unavailable or invalid…" (1.1+, with the 2.7–3.2 glued
/// "cause: X.isDisconnected"), "Consumer has been disconnected from the group
/// coordinator for Nms" (2.8+).
pub(crate) fn unavailable(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(
        r"(?-u)^(?:Marking the coordinator .+ dead(?: for group (.+))?|Group coordinator .+ is unavailable or invalid.*|Consumer has been disconnected from the group coordinator for \d+ms)$"
    );
    let c = re.captures(msg)?;
    let line = ClientLine::CoordinatorUnavailable {
        detail: owned_text(msg),
    };
    Some(Parsed::new(client(line)).group(text(&c, 1)))
}

/// "(Re-)joining group[ G]".
pub(crate) fn joining(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(r"(?-u)^\(Re-\)joining group(?: (.+))?$");
    let c = re.captures(msg)?;
    Some(Parsed::new(client(ClientLine::Joining { reason: None })).group(text(&c, 1)))
}

/// "Request joining group due to: R" (3.0+) and its 2.x predecessor
/// "Requesting to re-join the group and trigger rebalance since R".
pub(crate) fn rejoin_requested(msg: &[u8]) -> Option<Parsed> {
    let reason = msg
        .strip_prefix(b"Request joining group due to: ")
        .or_else(|| {
            msg.strip_prefix(b"Requesting to re-join the group and trigger rebalance since ")
        })?;
    Some(Parsed::new(client(ClientLine::RejoinRequested {
        reason: owned_text(reason),
    })))
}

/// What [`generation_fields`] reads: the generation, member id and protocol.
type GenerationFields = (Option<i32>, Option<String>, Option<String>);

/// `Generation{generationId=N, memberId='M', protocol='P'}` (2.7+) or a bare N.
///
/// Split by hand ([`generation_fields_split`]); the regex reads what the
/// split leaves (a line break), as it read every line before: its greedy
/// captures cost a join line 17,000 instructions.
fn generation_fields(g: &[u8]) -> GenerationFields {
    if g.contains(&b'\n') {
        return generation_fields_by_regex(g);
    }
    generation_fields_split(g)
}

/// [`generation_fields`] of a line without a line break: what the regex
/// gives, found by hand. The member id runs to the last `', protocol='`
/// before the closing `'}` (the regex's greedy `(.*)`).
fn generation_fields_split(g: &[u8]) -> GenerationFields {
    const SEP: &[u8] = b"', protocol='";
    let number = |d: &[u8]| std::str::from_utf8(d).ok()?.parse::<i32>().ok();
    if is_whole_number(g) {
        return (number(g), None, None);
    }
    let Some(rest) = g.strip_prefix(b"Generation{generationId=") else {
        return (None, None, None);
    };
    let sign = usize::from(rest.first() == Some(&b'-'));
    let digits = sign
        + rest[sign..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
    let Some(tail) = rest[digits..].strip_prefix(b", memberId='") else {
        return (None, None, None);
    };
    let body = tail.strip_suffix(b"'}");
    let at = body.and_then(|b| finder_rev!(SEP).rfind(b));
    match (body, at) {
        (Some(body), Some(at)) if digits > sign => (
            number(&rest[..digits]),
            Some(owned_text(&body[..at])),
            Some(owned_text(&body[at + SEP.len()..])),
        ),
        _ => (None, None, None),
    }
}

/// `-?\d+`, whole.
fn is_whole_number(b: &[u8]) -> bool {
    let digits = b.strip_prefix(b"-").unwrap_or(b);
    !digits.is_empty() && digits.iter().all(u8::is_ascii_digit)
}

/// [`generation_fields`] by its regex (every line).
fn generation_fields_by_regex(g: &[u8]) -> GenerationFields {
    let re = regex!(
        r"(?-u)^(?:Generation\{generationId=(-?\d+), memberId='(.*)', protocol='(.*)'\}|(-?\d+))$"
    );
    match re.captures(g) {
        Some(c) => (
            number(&c, 1).or_else(|| number(&c, 4)),
            text(&c, 2),
            text(&c, 3),
        ),
        None => (None, None, None),
    }
}

/// "Successfully joined group[ G] with generation N|Generation{…}" and
/// "Successfully synced group in generation Generation{…}" (2.7+).
pub(crate) fn joined_or_synced(msg: &[u8]) -> Option<Parsed> {
    let (joined, rest) = match msg.strip_prefix(b"Successfully joined group") {
        Some(rest) => (true, rest),
        None => (false, msg.strip_prefix(b"Successfully synced group")?),
    };
    let sep = if joined {
        finder!(b" with generation ")
    } else {
        finder!(b" in generation ")
    };
    let at = sep.find(rest)?;
    let group = rest[..at].strip_prefix(b" ").map(owned_text);
    let (generation, member_id, protocol) = generation_fields(&rest[at + sep.needle().len()..]);
    let line = if joined {
        ClientLine::Joined { protocol }
    } else {
        ClientLine::Synced
    };
    let member_id = member_id.filter(|m| !m.is_empty());
    Some(
        Parsed::new(client(line))
            .group(group)
            .generation(generation)
            .member(member_id),
    )
}

/// Member ids kept from one leader's assignment map.
const MAX_ASSIGNED_MEMBER_IDS: usize = 1 << 12;

/// "Finished assignment for group at generation N: {m=Assignment(…), …}"
/// (the leader, 2.4+; ConsumerCoordinator.java `onLeaderElected`).
pub(crate) fn assignment_finished(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(r"(?s-u)^Finished assignment for group at generation (-?\d+): (.*)$");
    let c = re.captures(msg)?;
    let map = c.get(2)?.as_bytes();
    let members = memchr::memmem::find_iter(map, b"=Assignment(").count()
        + memchr::memmem::find_iter(map, b"$Assignment@").count();
    // The map's keys: `{id=Assignment(partitions=[…]), id2=…}` (2.4+) or
    // `{id=org.apache…ConsumerPartitionAssignor$Assignment@hash, …}`.
    let key = regex!(r"(?-u)(?:^\{|, )([^=\s{},]+)=(?:Assignment\(|[\w.]*\$Assignment@)");
    let member_ids = key
        .captures_iter(map)
        .filter_map(|k| k.get(1))
        .map(|k| owned_text(k.as_bytes()))
        .take(MAX_ASSIGNED_MEMBER_IDS)
        .collect();
    let line = ClientLine::AssignmentFinished {
        members: members as u32,
        member_ids,
    };
    Some(Parsed::new(client(line)).generation(number(&c, 1)))
}

/// "Notifying assignor about the new Assignment(partitions=[…]…)" (2.6+).
pub(crate) fn assignment_received(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(r"(?-u)^Notifying assignor about the new Assignment\(partitions=\[(.*?)\]");
    let c = re.captures(msg)?;
    let partitions = list_items(&text(&c, 1)?);
    Some(Parsed::new(client(ClientLine::AssignmentReceived {
        partitions,
    })))
}

/// Partition callbacks: "Setting newly assigned partitions [..][ for group
/// G]" / "…partitions: a, b" / "Adding newly assigned partitions: …" (assigned),
/// "Revoking|Revoke previously assigned partitions …[ for group G]" (revoked),
/// "Lost previously assigned partitions …" (lost).
pub(crate) fn partitions(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(
        r"(?-u)^(Setting newly assigned|Adding newly assigned|Revoking previously assigned|Revoke previously assigned|Lost previously assigned) partitions:? ?(.*?)(?: for group (.+))?$"
    );
    let c = re.captures(msg)?;
    let partitions = list_items(&text(&c, 2)?);
    let line = match &c[1][..4] {
        b"Sett" | b"Addi" => ClientLine::PartitionsAssigned { partitions },
        b"Lost" => ClientLine::PartitionsLost { partitions },
        _ => ClientLine::PartitionsRevoked { partitions },
    };
    Some(Parsed::new(client(line)).group(text(&c, 3)))
}

/// Heartbeat failures in every wording, with the error named the way Kafka
/// names it where the line implies one.
pub(crate) fn heartbeat_failed(msg: &[u8]) -> Option<Parsed> {
    static TABLE: LazyLock<NamedPatterns> = LazyLock::new(|| compile_named(HEARTBEAT_ERRORS));
    if let Some(p) = heartbeat_with_generation(msg) {
        return Some(p);
    }
    let (caps, error) = first_named(&TABLE, msg)?;
    let group = caps.name("g").map(|g| owned_text(g.as_bytes()));
    let line = ClientLine::HeartbeatFailed {
        error: error.to_string(),
    };
    Some(Parsed::new(client(line)).group(group))
}

/// Heartbeat failures whose wording implies the error, with its name.
const HEARTBEAT_ERRORS: &[(&str, &str)] = &[
    (
        r"(?-u)^Attempt to heart ?beat failed (?:for group (?P<g>.+?) )?since (?:the )?(?:group )?(?:is|it is) rebalancing",
        "REBALANCE_IN_PROGRESS",
    ),
    (
        r"(?-u)^Attempt to heartbeat failed since coordinator .* is either not started or not valid",
        "NOT_COORDINATOR",
    ),
    (
        r"(?-u)^Attempt to heartbeat failed for since member id .* is not valid",
        "UNKNOWN_MEMBER_ID",
    ),
    (
        r"(?-u)^Attempt to heartbeat failed since generation .* is not current",
        "ILLEGAL_GENERATION",
    ),
    (
        r"(?-u)^Caught fenced group\.instance\.id .* error in heartbeat thread",
        "FENCED_INSTANCE_ID",
    ),
];

/// "Attempt to heartbeat with [stale ]Generation{…} and group instance id I
/// failed due to E, …" (2.6+).
fn heartbeat_with_generation(msg: &[u8]) -> Option<Parsed> {
    let with = regex!(
        r"(?-u)^Attempt to heartbeat with (?:stale )?(.+?) and group instance id (\S+) failed due to (\S+?),"
    );
    let c = with.captures(msg)?;
    let (generation, member_id, _) = generation_fields(c.get(1)?.as_bytes());
    let line = ClientLine::HeartbeatFailed {
        error: text(&c, 3)?,
    };
    Some(
        Parsed::new(client(line))
            .generation(generation)
            .member(member_id)
            .instance(text(&c, 2)),
    )
}

/// "Resetting generation[ and member id] due to: R" (3.0+).
pub(crate) fn generation_reset(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(r"(?-u)^Resetting generation (?:and member id )?due to: (.*)$");
    let c = re.captures(msg)?;
    Some(Parsed::new(client(ClientLine::GenerationReset {
        reason: text(&c, 1)?,
    })))
}

/// max.poll.interval.ms exceeded: "This member will leave the group because
/// consumer poll timeout has expired. …" (2.1–2.3), "[Cc]onsumer poll timeout
/// has expired. …" (3.0+), KIP-848 "Time between subsequent calls to poll()
/// was longer than … exceeded approximately by N ms. Member M will rejoin the
/// group now." (3.8+).
pub(crate) fn poll_timeout(msg: &[u8]) -> Option<Parsed> {
    let old = regex!(
        r"(?i-u)^(?:This member will leave the group because )?consumer poll timeout has expired\."
    );
    if old.is_match(msg) {
        return Some(Parsed::new(client(ClientLine::PollTimeoutExpired {
            exceeded_ms: None,
        })));
    }
    let new = regex!(concat!(
        r"(?-u)^Time between subsequent calls to poll\(\) was longer than the configured max\.poll\.interval\.ms, exceeded approximately by (\d+) ms\. Member ",
        member!(),
        r" will rejoin the group now\.$"
    ));
    let c = new.captures(msg)?;
    let line = ClientLine::PollTimeoutExpired {
        exceeded_ms: number(&c, 1),
    };
    Some(Parsed::new(client(line)).member(text(&c, 2)))
}

/// "Sending LeaveGroup request to coordinator X" (2.1), "Member M sending
/// LeaveGroup request to coordinator X[ due to R]" (2.2+).
///
/// Split by hand when the member id holds no quote or space (every Java
/// client's), else by the regex: its lazy capture cost a line 25,000
/// instructions.
pub(crate) fn leaving(msg: &[u8]) -> Option<Parsed> {
    match leaving_split(msg) {
        Some(fields) => fields.map(leaving_line),
        None => leaving_by_regex(msg),
    }
}

/// A LeaveGroup line's member (none in 2.1's wording) and reason.
type LeaveFields<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// The member and reason of a "… LeaveGroup request to coordinator …"
/// line, as the regex of [`leaving_by_regex`] reads them; `Some(None)`
/// when the regex would not match; `None` when the split cannot tell
/// (a member id with quotes or spaces, a line break).
fn leaving_split(msg: &[u8]) -> Option<Option<LeaveFields<'_>>> {
    const TO: &[u8] = b"LeaveGroup request to coordinator ";
    if msg.contains(&b'\n') {
        return None;
    }
    let (member, rest) = if let Some(rest) = msg.strip_prefix(b"Sending ") {
        (None, rest)
    } else if let Some(after) = msg.strip_prefix(b"Member ") {
        let Some(at) = finder!(b" sending ").find(after) else {
            return Some(None);
        };
        let member = &after[..at];
        let plain = |b: &u8| !b.is_ascii_whitespace() && *b != b'\'' && *b != b'"';
        if member.is_empty() || !member.iter().all(plain) {
            return None;
        }
        (Some(member), &after[at + b" sending ".len()..])
    } else {
        return Some(None);
    };
    let Some(coordinator) = rest.strip_prefix(TO).filter(|c| !c.is_empty()) else {
        return Some(None);
    };
    // The coordinator takes at least one byte; the reason is what follows
    // the first " due to " after it.
    const DUE: &[u8] = b" due to ";
    let reason = finder!(DUE)
        .find(&coordinator[1..])
        .map(|at| &coordinator[1 + at + DUE.len()..]);
    Some(Some((member, reason)))
}

fn leaving_line((member, reason): LeaveFields<'_>) -> Parsed {
    let line = ClientLine::Leaving {
        reason: reason.map(owned_text),
    };
    Parsed::new(client(line)).member(member.map(owned_text))
}

/// [`leaving`] by its regex (every line).
fn leaving_by_regex(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(concat!(
        r"(?s-u)^(?:Member ",
        member!(),
        r" s|S)ending LeaveGroup request to coordinator .+?(?: due to (.*))?$"
    ));
    let c = re.captures(msg)?;
    let line = ClientLine::Leaving {
        reason: text(&c, 2),
    };
    Some(Parsed::new(client(line)).member(text(&c, 1)))
}

/// "JoinGroup failed…", "SyncGroup failed…", "Attempt to join group failed
/// due to …" (0.9), "SyncGroup for group G failed due to E, rejoining the group" (0.9).
pub(crate) fn request_failed(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(
        r"(?s-u)^(JoinGroup|SyncGroup|Join group|Attempt to join group)(?: (?:for group )?(\S+))? failed(?::| due to| with)? ?(.*)$"
    );
    let c = re.captures(msg)?;
    let request = if &c[1] == b"SyncGroup" {
        "SyncGroup"
    } else {
        "JoinGroup"
    };
    let line = ClientLine::RequestFailed {
        request: request.into(),
        error: text(&c, 3)?.into(),
    };
    Some(Parsed::new(client(line)).group(text(&c, 2)))
}

/// Recognised lines kept by name: static-leader skip, partitions given away
/// as lost, cooperative "Updating assignment with", listener failures.
pub(crate) fn other(msg: &[u8]) -> Option<Parsed> {
    let set = [
        (
            regex!(r"(?-u)^Skipped assignment for returning static leader at generation (-?\d+)\."),
            "static leader skipped assignment",
        ),
        (
            regex!(r"(?-u)^Giving away all assigned partitions as lost since generation()"),
            "partitions given away as lost",
        ),
        (
            regex!(r"(?-u)^Updating assignment with()"),
            "updating assignment",
        ),
        (
            regex!(r"(?-u)^User provided listener .* failed on invocation of onPartitions()"),
            "rebalance listener failed",
        ),
        (regex!(r"(?-u)^Rebalance failed\.()"), "rebalance failed"),
    ];
    set.iter().find_map(|(re, name)| {
        let c = re.captures(msg)?;
        let p = Parsed::new(client(ClientLine::Other {
            message: (*name).to_string(),
        }));
        Some(p.generation(number(&c, 1)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(p: &Parsed) -> &ClientLine {
        match &p.kind {
            EventKind::Client(l) => l,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn generation_fields_split_by_hand_are_the_regex_fields() {
        let cases = [
            "Generation{generationId=4, memberId='consumer-g-1-6f1c', protocol='range'}",
            "Generation{generationId=-1, memberId='', protocol='null'}",
            "Generation{generationId=12, memberId='a', protocol='b', protocol='c'}",
            "Generation{generationId=12, memberId='a', protocol=''}",
            "Generation{generationId=12, memberId='it's', protocol='x'y'}",
            "Generation{generationId=99999999999, memberId='m', protocol='p'}",
            "Generation{generationId=, memberId='m', protocol='p'}",
            "Generation{generationId=-, memberId='m', protocol='p'}",
            "Generation{generationId=3, memberId='m', protocol='p'",
            "Generation{generationId=3, memberId='m'}",
            "Generation{generationId=3, memberId='m', protocol='p'}.",
            "Generation{generationId=3,memberId='m', protocol='p'}",
            "Generation{generationId=3, memberId='', protocol=''}",
            "Generation{generationId=3, memberId=', protocol='}",
            "7",
            "-7",
            "+7",
            "7.",
            "-",
            "",
            "generation 7",
        ];
        crate::logs::parsed::assert_split_reads_as_regex(
            &cases,
            generation_fields_split,
            generation_fields_by_regex,
        );
    }

    #[test]
    fn leave_lines_split_by_hand_are_the_regex_lines() {
        let cases = [
            "Member consumer-g-1-6f1c sending LeaveGroup request to coordinator broker:9092 (id: 2147483646 rack: null) due to the consumer is being closed",
            "Member m sending LeaveGroup request to coordinator c due to a due to b",
            "Member m sending LeaveGroup request to coordinator  due to x",
            "Member m sending LeaveGroup request to coordinator c due to ",
            "Member m sending LeaveGroup request to coordinator c",
            "Member m sending LeaveGroup request to coordinator ",
            "Member m sending LeaveGroup request to coordinator",
            "Sending LeaveGroup request to coordinator c:9092 (id: 1 rack: null)",
            "Sending LeaveGroup request to coordinator c due to x",
            "Member  sending LeaveGroup request to coordinator c",
            "Member a sending b sending LeaveGroup request to coordinator c",
            "Member 'a b' sending LeaveGroup request to coordinator c due to x",
            "Member a'b sending LeaveGroup request to coordinator c due to 'x'",
            "Member m Sending LeaveGroup request to coordinator c",
            "member m sending LeaveGroup request to coordinator c",
            "Member m sending LeaveGroup request to coordinator c\ndue to x",
            "Sending Heartbeat request to coordinator c",
        ];
        crate::logs::parsed::assert_split_reads_as_regex(&cases, leaving, leaving_by_regex);
        // The split, not the regex, read the plain ones.
        let plain = cases[0].as_bytes();
        assert!(leaving_split(plain).is_some_and(|f| f.is_some()));
    }

    #[test]
    fn coordinator_discovered_0_10_1_0_and_1_1_plus() {
        let p =
            discovered(b"Discovered coordinator b1:9092 (id: 2147483646 rack: null) for group g.")
                .unwrap();
        assert_eq!(p.group.as_deref(), Some("g"));
        assert_eq!(
            line(&p),
            &ClientLine::CoordinatorDiscovered {
                coordinator: "b1:9092 (id: 2147483646 rack: null)".into()
            }
        );
        assert!(
            discovered(b"Discovered coordinator b1:9092 (id: 2147483646 rack: null)").is_some()
        );
        let p = discovered(b"Discovered group coordinator Coordinator(key='g', nodeId=1, host='k1', port=29092, errorCode=0, errorMessage='')").unwrap();
        assert!(
            matches!(line(&p), ClientLine::CoordinatorDiscovered { coordinator } if coordinator.starts_with("Coordinator(key='g'"))
        );
    }

    #[test]
    fn coordinator_unavailable_in_each_wording() {
        for msg in [
            &b"Marking the coordinator b1:9092 (id: 2147483646 rack: null) dead for group g"[..],
            b"Marking the coordinator b1:9092 (id: 2147483646 rack: null) dead",
            b"Group coordinator b1:9092 (id: 2147483646 rack: null) is unavailable or invalid, will attempt rediscovery",
            b"Group coordinator b1:9092 (id: 2147483646 rack: null) is unavailable or invalid due to cause: null.isDisconnected: true. Rediscovery will be attempted.",
            b"Group coordinator b1:9092 (id: 2147483646 rack: null) is unavailable or invalid due to cause: x. isDisconnected: true. Rediscovery will be attempted.",
            b"Consumer has been disconnected from the group coordinator for 30000ms",
        ] {
            assert!(matches!(line(&unavailable(msg).unwrap()), ClientLine::CoordinatorUnavailable { .. }));
        }
    }

    #[test]
    fn joining_old_and_new() {
        assert_eq!(
            joining(b"(Re-)joining group g").unwrap().group.as_deref(),
            Some("g")
        );
        assert_eq!(
            line(&joining(b"(Re-)joining group").unwrap()),
            &ClientLine::Joining { reason: None }
        );
        let p = rejoin_requested(b"Request joining group due to: group is already rebalancing")
            .unwrap();
        assert_eq!(
            line(&p),
            &ClientLine::RejoinRequested {
                reason: "group is already rebalancing".into()
            }
        );
    }

    #[test]
    fn joined_0_10_1_x_and_2_7_plus() {
        let p = joined_or_synced(b"Successfully joined group g with generation 3").unwrap();
        assert_eq!((p.group.as_deref(), p.generation_id), (Some("g"), Some(3)));
        let p = joined_or_synced(b"Successfully joined group with generation 4").unwrap();
        assert_eq!(p.generation_id, Some(4));
        let p = joined_or_synced(b"Successfully joined group with generation Generation{generationId=2, memberId='c-1-ab', protocol='range'}").unwrap();
        assert_eq!(
            (p.generation_id, p.member_id.as_deref()),
            (Some(2), Some("c-1-ab"))
        );
        assert_eq!(
            line(&p),
            &ClientLine::Joined {
                protocol: Some("range".into())
            }
        );
        let p = joined_or_synced(b"Successfully synced group in generation Generation{generationId=2, memberId='c-1-ab', protocol='range'}").unwrap();
        assert_eq!((line(&p), p.generation_id), (&ClientLine::Synced, Some(2)));
    }

    #[test]
    fn leader_assignment_counts_members() {
        let p = assignment_finished(b"Finished assignment for group at generation 2: {a=Assignment(partitions=[t-0]), b=Assignment(partitions=[t-1])}").unwrap();
        assert_eq!(
            (line(&p), p.generation_id),
            (
                &ClientLine::AssignmentFinished {
                    members: 2,
                    member_ids: vec!["a".into(), "b".into()]
                },
                Some(2)
            )
        );
        let p = assignment_received(
            b"Notifying assignor about the new Assignment(partitions=[t-0, t-1])",
        )
        .unwrap();
        assert_eq!(
            line(&p),
            &ClientLine::AssignmentReceived {
                partitions: vec!["t-0".into(), "t-1".into()]
            }
        );
    }

    #[test]
    fn partition_callbacks_in_each_wording() {
        let assigned = |m: &[u8]| match line(&partitions(m).unwrap()) {
            ClientLine::PartitionsAssigned { partitions } => partitions.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            assigned(b"Setting newly assigned partitions [t-0, t-1] for group g"),
            vec!["t-0", "t-1"]
        );
        assert_eq!(
            assigned(b"Setting newly assigned partitions [t-0]"),
            vec!["t-0"]
        );
        assert_eq!(
            assigned(b"Setting newly assigned partitions: t-0, t-1"),
            vec!["t-0", "t-1"]
        );
        assert_eq!(
            assigned(b"Adding newly assigned partitions: t-0, t-1"),
            vec!["t-0", "t-1"]
        );
        assert_eq!(
            assigned(b"Adding newly assigned partitions: [t-0, t-1]"),
            vec!["t-0", "t-1"]
        );
        assert!(assigned(b"Adding newly assigned partitions: ").is_empty());
        let p = partitions(b"Revoking previously assigned partitions [t-0] for group g").unwrap();
        assert_eq!(
            (line(&p), p.group.as_deref()),
            (
                &ClientLine::PartitionsRevoked {
                    partitions: vec!["t-0".into()]
                },
                Some("g")
            )
        );
        assert!(matches!(
            line(&partitions(b"Revoke previously assigned partitions t-0, t-1").unwrap()),
            ClientLine::PartitionsRevoked { .. }
        ));
        assert!(matches!(
            line(&partitions(b"Lost previously assigned partitions t-0").unwrap()),
            ClientLine::PartitionsLost { .. }
        ));
    }

    #[test]
    fn heartbeat_failures_in_each_wording() {
        let error = |m: &[u8]| match line(&heartbeat_failed(m).unwrap()) {
            ClientLine::HeartbeatFailed { error } => error.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(error(b"Attempt to heart beat failed since the group is rebalancing, try to re-join group."), "REBALANCE_IN_PROGRESS");
        assert_eq!(
            error(b"Attempt to heart beat failed for group g since it is rebalancing."),
            "REBALANCE_IN_PROGRESS"
        );
        assert_eq!(
            error(b"Attempt to heartbeat failed for group g since it is rebalancing."),
            "REBALANCE_IN_PROGRESS"
        );
        assert_eq!(
            error(b"Attempt to heartbeat failed since group is rebalancing"),
            "REBALANCE_IN_PROGRESS"
        );
        assert_eq!(
            error(b"Attempt to heartbeat failed for since member id c-1 is not valid."),
            "UNKNOWN_MEMBER_ID"
        );
        assert_eq!(
            error(b"Attempt to heartbeat failed since generation 3 is not current"),
            "ILLEGAL_GENERATION"
        );
        assert_eq!(
            error(b"Caught fenced group.instance.id Optional[i-1] error in heartbeat thread"),
            "FENCED_INSTANCE_ID"
        );
        let p = heartbeat_failed(b"Attempt to heartbeat with Generation{generationId=5, memberId='c-1', protocol='range'} and group instance id Optional.empty failed due to UNKNOWN_MEMBER_ID, resetting generation").unwrap();
        assert_eq!(
            (
                p.generation_id,
                p.member_id.as_deref(),
                p.group_instance_id.as_deref()
            ),
            (Some(5), Some("c-1"), None)
        );
        assert_eq!(
            line(&p),
            &ClientLine::HeartbeatFailed {
                error: "UNKNOWN_MEMBER_ID".into()
            }
        );
        assert!(heartbeat_failed(b"Attempt to heartbeat with stale Generation{generationId=5, memberId='c-1', protocol='range'} and group instance id Optional.empty failed due to ILLEGAL_GENERATION, ignoring the error").is_some());
    }

    #[test]
    fn generation_reset_3_0_and_3_2() {
        assert!(generation_reset(
            b"Resetting generation due to: consumer pro-actively leaving the group"
        )
        .is_some());
        let p = generation_reset(b"Resetting generation and member id due to: encountered UNKNOWN_MEMBER_ID from HEARTBEAT response").unwrap();
        assert_eq!(
            line(&p),
            &ClientLine::GenerationReset {
                reason: "encountered UNKNOWN_MEMBER_ID from HEARTBEAT response".into()
            }
        );
    }

    #[test]
    fn poll_timeouts_2_1_3_0_and_kip_848() {
        assert!(poll_timeout(b"This member will leave the group because consumer poll timeout has expired. This means the time between subsequent calls to poll() was longer than the configured max.poll.interval.ms").is_some());
        assert!(poll_timeout(b"consumer poll timeout has expired. This means the time between subsequent calls to poll() was longer").is_some());
        assert!(poll_timeout(b"Consumer poll timeout has expired. This means the time between subsequent calls to poll() was longer").is_some());
        let p = poll_timeout(b"Time between subsequent calls to poll() was longer than the configured max.poll.interval.ms, exceeded approximately by 1234 ms. Member m-1 will rejoin the group now.").unwrap();
        assert_eq!(
            (line(&p), p.member_id.as_deref()),
            (
                &ClientLine::PollTimeoutExpired {
                    exceeded_ms: Some(1234)
                },
                Some("m-1")
            )
        );
    }

    #[test]
    fn leave_group_2_1_2_2_and_2_4_plus() {
        assert_eq!(
            line(
                &leaving(b"Sending LeaveGroup request to coordinator b:9092 (id: 1 rack: null)")
                    .unwrap()
            ),
            &ClientLine::Leaving { reason: None }
        );
        let p = leaving(b"Member c-1 sending LeaveGroup request to coordinator b:9092 (id: 2147483646 rack: null) due to consumer poll timeout has expired.").unwrap();
        assert_eq!(
            (line(&p), p.member_id.as_deref()),
            (
                &ClientLine::Leaving {
                    reason: Some("consumer poll timeout has expired.".into())
                },
                Some("c-1")
            )
        );
        assert!(leaving(b"Member c-1 sending LeaveGroup request to coordinator b:9092 (id: 2147483646 rack: null)").is_some());
    }

    #[test]
    fn join_and_sync_failures() {
        let p = request_failed(b"JoinGroup failed: The group instance id Optional[i] has been fenced by another instance. Sent generation was Generation{generationId=3, memberId='c', protocol='range'}").unwrap();
        assert!(
            matches!(line(&p), ClientLine::RequestFailed { request, .. } if request == "JoinGroup")
        );
        let p = request_failed(b"SyncGroup failed: The group began another rebalance. Need to re-join the group. Sent generation was Generation{generationId=3, memberId='c', protocol='range'}").unwrap();
        assert!(
            matches!(line(&p), ClientLine::RequestFailed { request, .. } if request == "SyncGroup")
        );
        assert!(request_failed(
            b"JoinGroup failed due to non-fatal error: REBALANCE_IN_PROGRESS, will retry"
        )
        .is_some());
        let p = request_failed(
            b"SyncGroup for group g failed due to NOT_COORDINATOR, rejoining the group",
        )
        .unwrap();
        assert_eq!(p.group.as_deref(), Some("g"));
        assert!(request_failed(b"Attempt to join group failed due to fatal error: x").is_some());
        let p = request_failed(b"Join group failed with org.apache.kafka.common.errors.MemberIdRequiredException: The group member needs to have a valid member id").unwrap();
        assert!(
            matches!(line(&p), ClientLine::RequestFailed { request, error } if request == "JoinGroup" && error.starts_with("org.apache"))
        );
    }

    #[test]
    fn other_recognised_lines() {
        assert!(other(b"Rebalance failed.").is_some());
        assert!(other(b"Giving away all assigned partitions as lost since generation has been reset,indicating that consumer is no longer part of the group").is_some());
        assert!(other(b"Giving away all assigned partitions as lost since generation/memberID has been reset,indicating that consumer is in old state or no longer part of the group").is_some());
        assert_eq!(other(b"Skipped assignment for returning static leader at generation 7. The static leader will continue with its existing assignment.").unwrap().generation_id, Some(7));
    }

    #[test]
    fn rejoin_requested_2_x_wording() {
        let p = rejoin_requested(b"Requesting to re-join the group and trigger rebalance since the subscription has changed from [a] to [a, b]").unwrap();
        assert_eq!(
            line(&p),
            &ClientLine::RejoinRequested {
                reason: "the subscription has changed from [a] to [a, b]".into()
            }
        );
    }

    #[test]
    fn join_failure_0_9_names_its_group() {
        let p = request_failed(
            b"Attempt to join group g1 failed due to unknown member id, resetting and retrying.",
        )
        .unwrap();
        assert_eq!(p.group.as_deref(), Some("g1"));
    }
}
