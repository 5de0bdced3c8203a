//! KIP-848 consumer lines (`group.protocol=consumer`, 3.7+): the membership
//! manager's state changes, reconciliation blocks, leave and fencing lines,
//! heartbeat request failures (kafka-log-formats.md §4.4).
//!
//! Takes: a client message after its `[Consumer …]` prefix, and for the
//! multi-line "Reconciling assignment" entry its continuation lines. Gives:
//! a [`Parsed`] event, or `None`.

use crate::event::{ClientLine, EventKind};
use crate::logs::parsed::{list_items, member, number, regex, text, Parsed};

fn client(line: ClientLine) -> EventKind {
    EventKind::Client(line)
}

/// "Member M with epoch E transitioned from A to B." (TRACE 3.7–3.8, INFO 3.9+).
pub(crate) fn state_changed(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(concat!(
        r"(?-u)^Member ",
        member!(),
        r" with epoch (-?\d+) transitioned from (\w+) to (\w+)\.?$"
    ));
    let c = re.captures(msg)?;
    let line = ClientLine::MemberStateChanged {
        from: text(&c, 3)?,
        to: text(&c, 4)?,
    };
    Some(
        Parsed::new(client(line))
            .member(text(&c, 1))
            .generation(number(&c, 2)),
    )
}

/// "Reconciling assignment with local epoch X" followed by tab-indented
/// "Member: Y", "Assigned partitions: [...]", "Added partitions (assigned -
/// owned): [...]", "Revoked partitions (owned - assigned): [...]" (3.8+).
///
/// Kafka 3.8 passes the member id and the epoch in swapped order
/// (kafka-log-formats.md §6.10), so whichever of X and Y is a number is the
/// epoch and the other the member id.
pub(crate) fn reconciling(msg: &[u8], continuation: &[u8]) -> Option<Parsed> {
    let head = regex!(r"(?-u)^Reconciling assignment with local epoch (\S+)$");
    let x = text(&head.captures(msg)?, 1)?;
    let y = field(continuation, b"Member:");
    let (epoch, member_id) = match (x.parse::<i32>(), y.as_deref().map(str::parse::<i32>)) {
        (Ok(e), _) => (Some(e), y),
        (Err(_), Some(Ok(e))) => (Some(e), Some(x)),
        (Err(_), _) => (None, None),
    };
    let list = |name: &[u8]| -> Box<[String]> {
        field(continuation, name)
            .map(|v| list_items(&v))
            .unwrap_or_default()
            .into()
    };
    let line = ClientLine::Reconciling {
        assigned: list(b"Assigned partitions:"),
        added: list(b"Added partitions (assigned - owned):"),
        revoked: list(b"Revoked partitions (owned - assigned):"),
    };
    Some(
        Parsed::new(client(line))
            .generation(epoch)
            .member(member_id),
    )
}

/// The value after `name` on one of the continuation lines.
fn field(continuation: &[u8], name: &[u8]) -> Option<String> {
    continuation.split(|&b| b == b'\n').find_map(|l| {
        let l = l.trim_ascii();
        let v = l.strip_prefix(name)?;
        Some(crate::logs::parsed::owned_text(v.trim_ascii()))
    })
}

/// Leaving: "Member M is triggering callbacks to release assignment X and
/// leave group" (3.9+) and the AsyncKafkaConsumer's "Releasing assignment and
/// leaving group before closing consumer" (3.8).
pub(crate) fn leaving(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(concat!(
        r"(?s-u)^Member ",
        member!(),
        r" is triggering callbacks to release assignment .* and leave group$"
    ));
    if let Some(c) = re.captures(msg) {
        return Some(Parsed::new(client(ClientLine::Leaving { reason: None })).member(text(&c, 1)));
    }
    (msg == b"Releasing assignment and leaving group before closing consumer").then(|| {
        // The line itself says why: the application is closing the consumer.
        Parsed::new(client(ClientLine::Leaving {
            reason: Some("closing consumer".to_string()),
        }))
    })
}

/// "GroupHeartbeatRequest failed due to …" (3.7–3.9) and "<Request> failed
/// due to …" (4.0+, e.g. ConsumerGroupHeartbeatRequest).
pub(crate) fn heartbeat_request_failed(msg: &[u8]) -> Option<Parsed> {
    let re = regex!(
        r"(?s-u)^(?:Group|ConsumerGroup|ShareGroup|StreamsGroup)HeartbeatRequest failed due to (.*)$"
    );
    let c = re.captures(msg)?;
    Some(Parsed::new(client(ClientLine::HeartbeatFailed {
        error: text(&c, 1)?,
    })))
}

/// Other recognised KIP-848 lines: leave completion, fencing while leaving.
pub(crate) fn other(msg: &[u8]) -> Option<Parsed> {
    let set = [
        (
            regex!(concat!(
                r"(?-u)^Member ",
                member!(),
                r" completed callback to release assignment"
            )),
            "released assignment for leave",
        ),
        (
            regex!(concat!(
                r"(?-u)^Member ",
                member!(),
                r" with epoch -?\d+ got fenced but it is already preparing to leave"
            )),
            "fenced while leaving",
        ),
        (
            regex!(
                r"(?-u)^Completed releasing assignment and sending leave group to close consumer()$"
            ),
            "left group on close",
        ),
    ];
    set.iter().find_map(|(re, name)| {
        let c = re.captures(msg)?;
        let p = Parsed::new(client(ClientLine::Other {
            message: (*name).to_string(),
        }));
        Some(p.member(text(&c, 1).filter(|m| !m.is_empty())))
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

    const BLOCK: &[u8] = b"\tMember:                                    3\n\tAssigned partitions:                       [t-0, t-1]\n\tCurrent owned partitions:                  [t-0, u-0]\n\tAdded partitions (assigned - owned):       [t-1]\n\tRevoked partitions (owned - assigned):     [u-0]\n  ";

    #[test]
    fn reconciling_3_8_with_swapped_member_and_epoch() {
        let p = reconciling(
            b"Reconciling assignment with local epoch gjWzAEmmRlOfypB2_GB_9Q",
            BLOCK,
        )
        .unwrap();
        assert_eq!(
            (p.member_id.as_deref(), p.generation_id),
            (Some("gjWzAEmmRlOfypB2_GB_9Q"), Some(3))
        );
        assert_eq!(
            line(&p),
            &ClientLine::Reconciling {
                assigned: Box::from(["t-0".to_string(), "t-1".to_string()]),
                added: Box::from(["t-1".to_string()]),
                revoked: Box::from(["u-0".to_string()])
            }
        );
    }

    #[test]
    fn reconciling_3_9_in_documented_order() {
        let block = b"\tMember:                                    gjWz\n\tAssigned partitions:                       []\n";
        let p = reconciling(b"Reconciling assignment with local epoch 7", block).unwrap();
        assert_eq!(
            (p.member_id.as_deref(), p.generation_id),
            (Some("gjWz"), Some(7))
        );
    }

    #[test]
    fn member_state_transitions() {
        let p =
            state_changed(b"Member m with epoch 4 transitioned from RECONCILING to ACKNOWLEDGING.")
                .unwrap();
        assert_eq!(
            line(&p),
            &ClientLine::MemberStateChanged {
                from: "RECONCILING".into(),
                to: "ACKNOWLEDGING".into()
            }
        );
        assert_eq!(p.generation_id, Some(4));
    }

    #[test]
    fn leaving_3_8_and_3_9() {
        let p = leaving(
            b"Member m is triggering callbacks to release assignment {t-0} and leave group",
        )
        .unwrap();
        assert_eq!(p.member_id.as_deref(), Some("m"));
        let p = leaving(b"Releasing assignment and leaving group before closing consumer").unwrap();
        assert_eq!(
            line(&p),
            &ClientLine::Leaving {
                reason: Some("closing consumer".into())
            }
        );
    }

    #[test]
    fn heartbeat_request_failures_3_7_and_4_0() {
        assert!(
            heartbeat_request_failed(b"GroupHeartbeatRequest failed due to fatal error: boom")
                .is_some()
        );
        assert!(heartbeat_request_failed(
            b"ConsumerGroupHeartbeatRequest failed due to FENCED_MEMBER_EPOCH: x"
        )
        .is_some());
    }

    #[test]
    fn other_kip_848_lines() {
        assert!(
            other(b"Completed releasing assignment and sending leave group to close consumer")
                .is_some()
        );
        assert!(other(b"Member m completed callback to release assignment. It will proceed to clear its assignment and send a leave group heartbeat").is_some());
        assert!(other(b"Member m with epoch 3 got fenced but it is already preparing to leave the group, so it will stop sending heartbeat and won't attempt to send the leave request or rejoin.").is_some());
    }
}
