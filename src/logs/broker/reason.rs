//! Who a rebalance reason is about (kafka-log-formats.md §2.3 and the Java
//! reasons of §3.1).
//!
//! Takes: the text inside `(reason: …)`. Gives: the member id (and static id)
//! it names, so the event carries them; the reason text itself is kept
//! verbatim by the caller.

use crate::logs::parsed::{list_items, member, optional_value, owned_text, regex, text};

/// The member (and instance id) a reason names, when it names exactly one.
pub(crate) fn reason_subject(reason: &str) -> (Option<String>, Option<String>) {
    if let Some((member, instance)) = super::split::reason_subject(reason.as_bytes()) {
        return (
            Some(owned_text(member)),
            instance.and_then(|i| optional_value(&owned_text(i))),
        );
    }
    reason_subject_by_regex(reason)
}

/// [`reason_subject`] by its regexes alone (every wording; the hand split
/// takes the two most frequent first).
pub(super) fn reason_subject_by_regex(reason: &str) -> (Option<String>, Option<String>) {
    let r = reason.as_bytes();
    // One regex per reason family, picked by its first word; case-insensitive
    // where the wording's case changed ("leader"/"Leader", "removing"/"Removing").
    let re = match r.first().map(u8::to_ascii_lowercase) {
        Some(b'a') => regex!(concat!(
            r"(?i-u)^Adding new member ",
            member!(),
            r"(?: with group instance ?id (\S+?))?(?:;|$)"
        )),
        Some(b'u') => regex!(concat!(
            r"(?i-u)^Updating metadata for (?:static )?member ",
            member!(),
            r"(?: with instance id (\S+?))?(?: during |;|$)"
        )),
        Some(b'l') => regex!(concat!(r"(?i-u)^Leader ", member!(), r" re-joining group")),
        Some(b'm') => regex!(concat!(
            r"(?i-u)^Member ",
            member!(),
            r" (?:is )?joining group"
        )),
        Some(b'r') => regex!(concat!(
            r"(?i-u)^Removing member ",
            member!(),
            r" on (?:LeaveGroup|heartbeat expiration)"
        )),
        Some(b'g') => regex!(concat!(
            r"(?i-u)^Group's selectedProtocol will change because static member ",
            member!(),
            r" with instance id (\S+) joined"
        )),
        Some(b'e') => regex!(concat!(
            r"(?i-u)when storing group assignment ?during SyncGroup \(member: ",
            member!(),
            r"\)"
        )),
        _ => return (None, None),
    };
    if let Some(caps) = re.captures(r) {
        let instance = text(&caps, 2).and_then(|i| optional_value(&i));
        return (text(&caps, 1), instance);
    }
    (listed_member(reason), None)
}

/// ``explicit `LeaveGroup` request for (a, b) members.`` and
/// "Removing Set(a) on pending sync request expiration": a member only when
/// the list has one.
fn listed_member(reason: &str) -> Option<String> {
    let list = regex!(
        r"(?-u)^(?:explicit `LeaveGroup` request for \((.*)\) members\.|Removing (.*) on pending sync request expiration)"
    );
    let caps = list.captures(reason.as_bytes())?;
    let items = list_items(&text(&caps, 1).or_else(|| text(&caps, 2))?);
    match items.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subject(r: &str) -> (Option<&'static str>, Option<&'static str>) {
        let (m, i) = reason_subject(r);
        (m.map(|s| &*s.leak()), i.map(|s| &*s.leak()))
    }

    #[test]
    fn adding_new_member_in_each_wording() {
        assert_eq!(subject("Adding new member m-1"), (Some("m-1"), None));
        assert_eq!(
            subject("Adding new member m-1 with group instanceid None"),
            (Some("m-1"), None)
        );
        assert_eq!(
            subject("Adding new member m-1 with group instance id Some(i-1)"),
            (Some("m-1"), Some("i-1"))
        );
        assert_eq!(
            subject("Adding new member m-1 with group instance id null; client reason: x"),
            (Some("m-1"), None)
        );
    }

    #[test]
    fn rejoin_reasons_of_2_6_1_and_3_x() {
        assert_eq!(
            subject("Updating metadata for member m-2"),
            (Some("m-2"), None)
        );
        assert_eq!(
            subject("Updating metadata for member m-2 during Stable; client reason: x"),
            (Some("m-2"), None)
        );
        assert_eq!(
            subject("leader m-3 re-joining group during Stable"),
            (Some("m-3"), None)
        );
        assert_eq!(
            subject("Leader m-3 re-joining group during CompletingRebalance; client reason: y"),
            (Some("m-3"), None)
        );
        assert_eq!(
            subject("Member m-4 joining group during CompletingRebalance"),
            (Some("m-4"), None)
        );
        assert_eq!(
            subject("Member m-4 is joining group during Stable; client reason: z"),
            (Some("m-4"), None)
        );
        assert_eq!(
            subject("Updating metadata for static member m-5 with instance id i-5"),
            (Some("m-5"), Some("i-5"))
        );
    }

    #[test]
    fn leave_and_expiry_reasons() {
        assert_eq!(
            subject("removing member m-6 on LeaveGroup"),
            (Some("m-6"), None)
        );
        assert_eq!(
            subject(
                "Removing member m-6 on LeaveGroup; client reason: the consumer is being closed"
            ),
            (Some("m-6"), None)
        );
        assert_eq!(
            subject("removing member m-7 on heartbeat expiration"),
            (Some("m-7"), None)
        );
        assert_eq!(
            subject("explicit `LeaveGroup` request for (m-8) members."),
            (Some("m-8"), None)
        );
        assert_eq!(
            subject("explicit `LeaveGroup` request for (m-8, m-9) members."),
            (None, None)
        );
        assert_eq!(
            subject("Removing Set(m-10) on pending sync request expiration"),
            (Some("m-10"), None)
        );
    }

    #[test]
    fn protocol_change_and_write_failure_reasons() {
        assert_eq!(
            subject("Group's selectedProtocol will change because static member m-1 with instance id i-1 joined with change of protocol"),
            (Some("m-1"), Some("i-1"))
        );
        assert_eq!(subject("Error NOT_LEADER_OR_FOLLOWER when storing group assignmentduring SyncGroup (member: m-2)."), (Some("m-2"), None));
        assert_eq!(
            subject("error when storing group assignment during SyncGroup (member: m-3)"),
            (Some("m-3"), None)
        );
        assert_eq!(subject("Freshly-loaded group is over capacity (5). Rebalancing in order to give a chance for consumers to commit offsets"), (None, None));
    }
}
