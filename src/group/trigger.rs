//! Trigger kinds and the rules that read them from reason texts.
//!
//! Takes: reason strings (the coordinator's `(reason: ...)`, KIP-800 client
//! reasons in JoinGroup v8+/LeaveGroup v5+, Java client "Request joining
//! group due to: ..." lines). Gives: a [`Kind`] and a [`Confidence`]. The
//! wording comes from apache/kafka `GroupCoordinator.scala`,
//! `GroupMetadataManager.java` and `AbstractCoordinator.java` /
//! `ConsumerCoordinator.java` (KIP-800's reasons), matched
//! case-insensitively because 2.x logs write "leader ... re-joining" in
//! lower case.

use memchr::memmem::Finder;
use serde::Serialize;

use crate::logs::finder;

/// The kinds of rebalance trigger kgtrace names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A new member joined (including the KIP-394 two-step join).
    MemberJoined,
    /// A member left with LeaveGroup (shutdown, "the consumer is being closed").
    MemberLeft,
    /// A member left because it stopped polling (max.poll.interval.ms, KIP-62).
    PollTimeout,
    /// A member's heartbeats stopped for its session timeout.
    SessionTimeout,
    /// Topic metadata changed (partitions added, regex matched a topic).
    MetadataChanged,
    /// A member's subscription changed.
    SubscriptionChanged,
    /// A known member (usually the leader) rejoined while the group was Stable.
    LeaderRejoined,
    /// A static member (KIP-345) restarted and replaced its old member id.
    StaticMemberReplaced,
    /// A static member was fenced (FENCED_INSTANCE_ID).
    StaticMemberFenced,
    /// The coordinator moved (NOT_COORDINATOR, load, election, resignation).
    CoordinatorChanged,
    /// The previous round failed and members retried.
    PreviousRebalanceFailed,
    /// Members that never sent SyncGroup were removed.
    PendingSyncExpired,
    /// The coordinator could not write the group's assignment to
    /// `__consumer_offsets` (an error other than a coordinator move).
    StorageError,
    /// group.max.size exceeded after a coordinator load (KIP-389).
    GroupOverCapacity,
    /// Classic ↔ consumer protocol migration (KIP-848).
    ProtocolMigration,
    /// Nothing seen explains it.
    Unknown,
}

impl Kind {
    /// Every kind, in the order `--help` lists them.
    pub const ALL: [Kind; 16] = [
        Kind::MemberJoined,
        Kind::MemberLeft,
        Kind::PollTimeout,
        Kind::SessionTimeout,
        Kind::MetadataChanged,
        Kind::SubscriptionChanged,
        Kind::LeaderRejoined,
        Kind::StaticMemberReplaced,
        Kind::StaticMemberFenced,
        Kind::CoordinatorChanged,
        Kind::PreviousRebalanceFailed,
        Kind::PendingSyncExpired,
        Kind::StorageError,
        Kind::GroupOverCapacity,
        Kind::ProtocolMigration,
        Kind::Unknown,
    ];

    /// The name used in every output format.
    pub fn name(self) -> &'static str {
        match self {
            Kind::MemberJoined => "member_joined",
            Kind::MemberLeft => "member_left",
            Kind::PollTimeout => "poll_timeout",
            Kind::SessionTimeout => "session_timeout",
            Kind::MetadataChanged => "metadata_changed",
            Kind::SubscriptionChanged => "subscription_changed",
            Kind::LeaderRejoined => "leader_rejoined",
            Kind::StaticMemberReplaced => "static_member_replaced",
            Kind::StaticMemberFenced => "static_member_fenced",
            Kind::CoordinatorChanged => "coordinator_changed",
            Kind::PreviousRebalanceFailed => "previous_rebalance_failed",
            Kind::PendingSyncExpired => "pending_sync_expired",
            Kind::StorageError => "storage_error",
            Kind::GroupOverCapacity => "group_over_capacity",
            Kind::ProtocolMigration => "protocol_migration",
            Kind::Unknown => "unknown",
        }
    }
}

/// How sure a verdict is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Confidence {
    /// A guess from absence or timing alone.
    Low,
    /// Consistent timing and behaviour, no explicit statement.
    Medium,
    /// The broker or client said so (reason text, log line, error code).
    High,
}

impl Confidence {
    /// `low`, `medium` or `high`.
    pub fn name(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// Reads a KIP-800 client reason (JoinGroup v8+ `reason`, LeaveGroup v5+
/// member `reason`, or the text after "client reason: ").
pub fn from_client_reason(reason: &str) -> Option<Kind> {
    let r = reason.to_ascii_lowercase();
    let kind = if r.contains("poll timeout") || r.contains("max.poll.interval") {
        Kind::PollTimeout
    } else if r.contains("being closed") || r.contains("pro-actively leaving") {
        Kind::MemberLeft
    } else if r.contains("cached metadata has changed") || r.contains("metadata has changed") {
        Kind::MetadataChanged
    } else if r.contains("subscription has changed")
        || r.contains("does not match the current subscription")
    {
        Kind::SubscriptionChanged
    } else if r.contains("rebalance failed") {
        Kind::PreviousRebalanceFailed
    } else if r.contains("unknown_member_id") || r.contains("illegal_generation") {
        // The member learnt it had been removed (usually a missed session
        // timeout) and rejoins as a new member.
        Kind::MemberJoined
    } else if r.contains("need to re-join with the given member-id") {
        Kind::MemberJoined
    } else {
        return None;
    };
    Some(kind)
}

/// True for client reasons that mark a round kgtrace should not alarm on:
/// KIP-429's cooperative follow-up ("need to revoke partitions and
/// re-join").
pub fn is_cooperative_follow_up(reason: &str) -> bool {
    reason
        .to_ascii_lowercase()
        .contains("revoke partitions and re-join")
}

/// Reads the coordinator's own `(reason: ...)` text from "Preparing to
/// rebalance group ..." (classic 2.1+, and the new coordinator's
/// equivalents).
pub fn from_coordinator_reason(reason: &str) -> (Kind, Confidence) {
    let r = reason.to_ascii_lowercase();
    let client = client_reason_part(reason);
    let kind = if has(&r, finder!(b"when storing group assignment")) {
        // GroupCoordinator.scala `doSyncGroup` / GroupMetadataManager.java
        // `completeClassicGroupSyncGroup`: `storeGroup` failed; the error
        // is mapped by `appendGroupMetadataErrorToResponseError`, where
        // NOT_LEADER_OR_FOLLOWER (old NOT_LEADER_FOR_PARTITION) and
        // NOT_COORDINATOR mean the partition moved.
        if has(&r, finder!(b"not_coordinator"))
            || has(&r, finder!(b"not_leader"))
            || has(&r, finder!(b"coordinator_not_available"))
        {
            Kind::CoordinatorChanged
        } else {
            Kind::StorageError
        }
    } else if has(&r, finder!(b"heartbeat expiration")) || has(&r, finder!(b"session timeout")) {
        Kind::SessionTimeout
    } else if has(&r, finder!(b"pending sync")) {
        Kind::PendingSyncExpired
    } else if has(&r, finder!(b"over capacity")) {
        Kind::GroupOverCapacity
    } else if has(&r, finder!(b"downgrade"))
        || has(&r, finder!(b"upgrade")) && has(&r, finder!(b"group"))
    {
        Kind::ProtocolMigration
    } else if has(&r, finder!(b"leavegroup"))
        || has(&r, finder!(b"leave group"))
        || has(&r, finder!(b"has left"))
    {
        client
            .and_then(from_client_reason)
            .unwrap_or(Kind::MemberLeft)
    } else if has(&r, finder!(b"re-joining group during stable"))
        || has(&r, finder!(b"rejoining group during stable"))
    {
        match client.and_then(from_client_reason) {
            Some(k @ (Kind::MetadataChanged | Kind::SubscriptionChanged)) => k,
            _ => Kind::LeaderRejoined,
        }
    } else if has(&r, finder!(b"updating metadata for static member"))
        || has(&r, finder!(b"static member"))
    {
        Kind::StaticMemberReplaced
    } else if has(&r, finder!(b"updating metadata for member")) {
        // GroupCoordinator.scala `doCurrentMemberJoinGroup`: a known member
        // whose protocol metadata BYTES differ (`!member.matches(protocols)`).
        // With cooperative-sticky the owned partitions are in those bytes,
        // so this is also KIP-429's second round: only a client reason says
        // the subscription changed.
        match client.and_then(from_client_reason) {
            Some(k @ (Kind::MetadataChanged | Kind::SubscriptionChanged)) => k,
            _ => Kind::LeaderRejoined,
        }
    } else if has(&r, finder!(b"adding new member")) || has(&r, finder!(b"new member")) {
        Kind::MemberJoined
    } else if has(&r, finder!(b"freshly-loaded"))
        || has(&r, finder!(b"coordinator"))
        || has(&r, finder!(b"loading"))
    {
        Kind::CoordinatorChanged
    } else {
        return (Kind::Unknown, Confidence::Low);
    };
    (kind, Confidence::High)
}

/// Whether `text` holds the needle of `finder` (built once: `str::contains`
/// set up a two-way searcher at every call, about 250 instructions each on
/// a coordinator's reason, checked up to two dozen times per Preparing
/// line).
fn has(text: &str, finder: &Finder<'_>) -> bool {
    finder.find(text.as_bytes()).is_some()
}

/// The text after "client reason: " in a coordinator reason, if any.
pub fn client_reason_part(reason: &str) -> Option<&str> {
    const MARK: &[u8] = b"client reason:";
    // Found in place, in any case (a lowercased copy per reason was a
    // twentieth of rebuilding a rebalance-dense log's groups).
    // Each `c` or `C` a candidate (a vectorised search), not every byte.
    let b = reason.as_bytes();
    let at = memchr::memchr2_iter(b'c', b'C', b).find(|&i| {
        b.get(i..i + MARK.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(MARK))
    })?;
    Some(reason[at + MARK.len()..].trim().trim_end_matches(')'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--kind` accepts the names in `Kind::ALL`: every kind a row can
    /// carry must be there (`storage_error` was not).
    #[test]
    fn every_kind_is_listed_in_all() {
        // The match is exhaustive: a new kind fails to compile here until
        // it is given a place in ALL.
        let listed = |k: Kind| match k {
            Kind::MemberJoined
            | Kind::MemberLeft
            | Kind::PollTimeout
            | Kind::SessionTimeout
            | Kind::MetadataChanged
            | Kind::SubscriptionChanged
            | Kind::LeaderRejoined
            | Kind::StaticMemberReplaced
            | Kind::StaticMemberFenced
            | Kind::CoordinatorChanged
            | Kind::PreviousRebalanceFailed
            | Kind::PendingSyncExpired
            | Kind::StorageError
            | Kind::GroupOverCapacity
            | Kind::ProtocolMigration
            | Kind::Unknown => Kind::ALL.contains(&k),
        };
        for k in [Kind::StorageError, Kind::Unknown, Kind::MemberJoined] {
            assert!(listed(k), "{k:?}");
        }
        assert!(
            crate::filter::kinds(&["storage-error".into()], crate::render::View::Rebalances)
                .is_ok()
        );
    }

    #[test]
    fn poll_timeout_leave_reason_is_a_poll_timeout() {
        assert_eq!(
            from_client_reason("consumer poll timeout has expired."),
            Some(Kind::PollTimeout)
        );
    }

    #[test]
    fn closing_consumer_is_a_member_leaving() {
        assert_eq!(
            from_client_reason("the consumer is being closed"),
            Some(Kind::MemberLeft)
        );
    }

    #[test]
    fn heartbeat_expiration_is_a_session_timeout() {
        let (k, c) =
            from_coordinator_reason("removing member consumer-1-abc on heartbeat expiration");
        assert_eq!((k, c), (Kind::SessionTimeout, Confidence::High));
    }

    #[test]
    fn the_client_reason_is_found_in_any_case_wherever_it_is() {
        let part = client_reason_part;
        assert_eq!(
            part("Adding new member m; client reason: not provided"),
            Some("not provided")
        );
        assert_eq!(part("x; Client Reason: a b)"), Some("a b"));
        assert_eq!(part("CLIENT REASON:z"), Some("z"));
        assert_eq!(part("c; cc client reason: y"), Some("y"));
        assert_eq!(part("client reason"), None);
        assert_eq!(part("ends with c"), None);
        assert_eq!(part(""), None);
    }

    #[test]
    fn leave_with_poll_timeout_client_reason_is_a_poll_timeout() {
        let r = "explicit `LeaveGroup` request for (consumer-1-x) members.; client reason: consumer poll timeout has expired.";
        assert_eq!(from_coordinator_reason(r).0, Kind::PollTimeout);
    }

    #[test]
    fn leader_rejoin_in_lower_case_two_x_wording_is_recognised() {
        let r = "leader consumer-1-x re-joining group during Stable";
        assert_eq!(from_coordinator_reason(r).0, Kind::LeaderRejoined);
    }

    #[test]
    fn leader_rejoin_for_metadata_names_the_metadata_change() {
        let r = "Leader consumer-1-x re-joining group during Stable; client reason: cached metadata has changed";
        assert_eq!(from_coordinator_reason(r).0, Kind::MetadataChanged);
    }

    #[test]
    fn adding_a_member_with_old_instanceid_typo_is_a_join() {
        let r = "Adding new member nonode@nohost/<0.1083.0>-9db8 with group instanceid None";
        assert_eq!(from_coordinator_reason(r).0, Kind::MemberJoined);
    }

    #[test]
    fn unknown_reason_stays_unknown_and_low() {
        assert_eq!(
            from_coordinator_reason("something new"),
            (Kind::Unknown, Confidence::Low)
        );
    }

    #[test]
    fn cooperative_follow_up_is_recognised() {
        assert!(is_cooperative_follow_up(
            "need to revoke partitions and re-join"
        ));
        assert!(!is_cooperative_follow_up("subscription has changed"));
    }
}
