//! Java consumer group-membership lines → group events.
//!
//! Takes: the message of a `[Consumer …]` (or `[Worker …]`, or pre-1.0
//! prefix-less coordinator) line, and the continuation lines of a multi-line
//! entry. Gives: an [`Outcome`]. Membership lines become events; the
//! coordinator loggers' other chatter (offset commits, fetch positions) is
//! [`Outcome::Known`]; anything else is [`Outcome::Unknown`] and the caller
//! decides, from the logger, whether that is worth a diagnostic.

mod classic;
mod membership;

use crate::logs::parsed::{starts_with_ci, Outcome, Parsed};

type Matcher = fn(&[u8]) -> Option<Parsed>;

/// Messages by their first words.
const TABLE: &[(&[u8], &[Matcher])] = &[
    (b"Discovered ", &[classic::discovered]),
    (b"(Re-)joining group", &[classic::joining]),
    (b"Request joining group", &[classic::rejoin_requested]),
    (b"Requesting to re-join", &[classic::rejoin_requested]),
    (b"Join group failed", &[classic::request_failed]),
    (b"Rebalance failed", &[classic::other]),
    (b"Successfully ", &[classic::joined_or_synced]),
    (b"Finished assignment", &[classic::assignment_finished]),
    (b"Notifying assignor", &[classic::assignment_received]),
    (b"Setting newly", &[classic::partitions]),
    (b"Adding newly", &[classic::partitions]),
    (b"Revok", &[classic::partitions]),
    (b"Lost previously", &[classic::partitions]),
    (b"Attempt to heart", &[classic::heartbeat_failed]),
    (b"Caught fenced", &[classic::heartbeat_failed]),
    (b"Marking the coordinator", &[classic::unavailable]),
    (b"Group coordinator", &[classic::unavailable]),
    (b"Consumer has been disconnected", &[classic::unavailable]),
    (b"Resetting generation", &[classic::generation_reset]),
    (b"This member will leave", &[classic::poll_timeout]),
    (b"consumer poll timeout", &[classic::poll_timeout]),
    (b"Time between subsequent", &[classic::poll_timeout]),
    (
        b"Member ",
        &[
            classic::leaving,
            membership::state_changed,
            membership::leaving,
            membership::other,
        ],
    ),
    (b"Sending LeaveGroup", &[classic::leaving]),
    (b"JoinGroup ", &[classic::request_failed]),
    (b"SyncGroup ", &[classic::request_failed]),
    (b"Attempt to join group", &[classic::request_failed]),
    (b"Releasing assignment", &[membership::leaving]),
    (b"Completed releasing", &[membership::other]),
    (b"Skipped assignment", &[classic::other]),
    (b"Giving away", &[classic::other]),
    (b"Updating assignment with", &[classic::other]),
    (b"User provided listener", &[classic::other]),
];

/// The coordinator loggers' lines that are not membership events.
const CHATTER: &[&[u8]] = &[
    b"Found no committed offset",
    b"Setting offset for partition",
    b"Committ",
    b"Offset commit",
    b"Asynchronous auto-commit",
    b"Synchronous auto-commit",
    b"Auto-commit",
    b"Completed asynchronous auto-commit",
    b"Failing OffsetCommit",
    b"Executing on",
    b"Fetching committed offsets",
    b"Refreshing committed offsets",
    b"Sending ",
    b"Received ",
    b"Disabling heartbeat",
    b"Enabling heartbeat",
    b"Heartbeat thread",
    b"Performing assignment",
    b"Subscribed to",
    b"Unsubscribed",
    b"Skipping reconciliation",
    b"Updating subscription",
    b"FindCoordinator request",
    b"Coordinator discovery failed",
    b"Group coordinator lookup failed",
    b"Requesting ",
    b"Discarding ",
    b"Cluster ID",
    b"Closing the Kafka consumer",
    // Connect's WorkerCoordinator (`[Worker clientId=…, groupId=…]`) adds
    // its own progress lines around the shared AbstractCoordinator ones.
    b"Rebalance started",
    b"Joined group at generation",
    b"Starting connectors and tasks",
    b"Finished starting connectors and tasks",
    b"Stopping connectors and tasks",
    b"Finished stopping tasks",
    b"Handling task config update",
    b"Wasn't able to resume work",
];

/// Reads one client message (`continuation` is empty for one-line entries).
pub(crate) fn parse(msg: &[u8], continuation: &[u8]) -> Outcome {
    if msg.starts_with(b"Reconciling assignment") {
        return match membership::reconciling(msg, continuation) {
            Some(p) => Outcome::event(p),
            None => Outcome::Unknown,
        };
    }
    let found = TABLE
        .iter()
        .filter(|(prefix, _)| starts_with_ci(msg, prefix))
        .find_map(|(_, matchers)| matchers.iter().find_map(|m| m(msg)))
        .or_else(|| membership::heartbeat_request_failed(msg));
    match found {
        Some(p) => Outcome::event(p),
        None if CHATTER.iter().any(|c| starts_with_ci(msg, c)) => Outcome::Known,
        None => Outcome::Unknown,
    }
}

/// Whether a message is the head of a multi-line entry whose continuation
/// lines carry data ("Reconciling assignment with …", "Updating assignment with").
pub(crate) fn wants_continuation(msg: &[u8]) -> bool {
    msg.starts_with(b"Reconciling assignment with") || msg.starts_with(b"Updating assignment with")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_chatter_is_known_and_novel_lines_unknown() {
        assert_eq!(
            parse(b"Found no committed offset for partition t-5", b""),
            Outcome::Known
        );
        assert_eq!(
            parse(b"Something the coordinator never said", b""),
            Outcome::Unknown
        );
        assert!(matches!(
            parse(b"(Re-)joining group", b""),
            Outcome::Event(_)
        ));
    }

    #[test]
    fn multi_line_heads_are_recognised() {
        assert!(wants_continuation(
            b"Reconciling assignment with local epoch 3"
        ));
        assert!(wants_continuation(b"Updating assignment with"));
        assert!(!wants_continuation(b"(Re-)joining group"));
    }
}
