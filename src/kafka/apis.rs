//! What kgtrace knows about each Kafka API key: its name, the versions that
//! exist, and whether kgtrace decodes its bodies.
//!
//! Takes: an `api_key` (and version) from a request header. Gives: Kafka's
//! name for it (`JoinGroup`), the highest version a plausible header may
//! carry, and [`is_group_api`]. kafka-protocol 0.18 is generated from
//! Kafka 4.1's schemas and no longer lists the inter-broker APIs Kafka 4.0
//! removed (LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown,
//! KIP-896/KIP-866), nor KIP-1071's streams-group APIs; those are added here
//! by hand so that old and new captures still pair and resync.

use std::sync::OnceLock;

use kafka_protocol::messages::ApiKey;

/// API keys kafka-protocol 0.18 does not list: (key, name, highest version).
/// Versions from Kafka 3.9's JSON schemas (the last release carrying them)
/// and KIP-1071 for 88/89.
const EXTRA_APIS: [(i16, &str, i16); 6] = [
    (4, "LeaderAndIsr", 7),
    (5, "StopReplica", 4),
    (6, "UpdateMetadata", 8),
    (7, "ControlledShutdown", 3),
    (88, "StreamsGroupHeartbeat", 0),
    (89, "StreamsGroupDescribe", 0),
];

/// Newer brokers and clients may speak a version or two beyond what the
/// crate was generated from; a resync header may carry it (it will then be
/// reported as undecodable, not lost).
const VERSION_SLACK: i16 = 2;

/// Kafka's API key numbers for the APIs kgtrace decodes.
pub(crate) mod key {
    pub const OFFSET_COMMIT: i16 = 8;
    pub const OFFSET_FETCH: i16 = 9;
    pub const FIND_COORDINATOR: i16 = 10;
    pub const JOIN_GROUP: i16 = 11;
    pub const HEARTBEAT: i16 = 12;
    pub const LEAVE_GROUP: i16 = 13;
    pub const SYNC_GROUP: i16 = 14;
    pub const DESCRIBE_GROUPS: i16 = 15;
    pub const LIST_GROUPS: i16 = 16;
    pub const API_VERSIONS: i16 = 18;
    pub const DELETE_GROUPS: i16 = 42;
    pub const CONSUMER_GROUP_HEARTBEAT: i16 = 68;
    pub const CONSUMER_GROUP_DESCRIBE: i16 = 69;
}

struct ApiInfo {
    name: &'static str,
    max_version: i16,
}

/// Every API Kafka has (had), indexed by key: looked up for every frame
/// header and every exchange, where hashing the key cost more than the
/// rest of the check.
fn table() -> &'static [Option<ApiInfo>] {
    static TABLE: OnceLock<Vec<Option<ApiInfo>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let entries = ApiKey::iter()
            .map(|k| {
                // The crate's variant names are Kafka's API names.
                let name: &'static str = Box::leak(format!("{k:?}").into_boxed_str());
                (k as i16, name, k.valid_versions().max)
            })
            .chain(EXTRA_APIS);
        let mut t: Vec<Option<ApiInfo>> = Vec::new();
        for (k, name, max_version) in entries {
            // Keys are small (0 to a hundred or so); a negative one is
            // never Kafka's.
            let Ok(at) = usize::try_from(k) else { continue };
            if t.len() <= at {
                t.resize_with(at + 1, || None);
            }
            t[at] = Some(ApiInfo { name, max_version });
        }
        t
    })
}

/// What the table says of `api_key`, if it names an API.
fn info(api_key: i16) -> Option<&'static ApiInfo> {
    table().get(usize::try_from(api_key).ok()?)?.as_ref()
}

/// Kafka's name for an API key (`"JoinGroup"`), or `"Unknown"`.
pub fn api_name(api_key: i16) -> &'static str {
    info(api_key).map_or("Unknown", |i| i.name)
}

/// Whether `api_key` names an API Kafka has (had).
pub(crate) fn is_known(api_key: i16) -> bool {
    info(api_key).is_some()
}

/// Whether a header claiming `api_key` at `version` is believable. Every
/// API started at version 0, so anything from 0 up to the newest known
/// version (plus a little slack) is plausible.
pub(crate) fn plausible_version(api_key: i16, version: i16) -> bool {
    info(api_key)
        .is_some_and(|i| (0..=i.max_version.saturating_add(VERSION_SLACK)).contains(&version))
}

/// Whether kgtrace buffers and decodes this API's bodies. Everything else
/// (Produce, Fetch, Metadata...) is skipped by count.
pub(crate) fn is_group_api(api_key: i16) -> bool {
    use key::*;
    matches!(
        api_key,
        OFFSET_COMMIT
            | OFFSET_FETCH
            | FIND_COORDINATOR
            | JOIN_GROUP
            | HEARTBEAT
            | LEAVE_GROUP
            | SYNC_GROUP
            | DESCRIBE_GROUPS
            | LIST_GROUPS
            | API_VERSIONS
            | DELETE_GROUPS
            | CONSUMER_GROUP_HEARTBEAT
            | CONSUMER_GROUP_DESCRIBE
    )
}

/// ApiVersions v5, sent by Apache Kafka 4.x's Java clients and answered by
/// its brokers (fixtures/kafka/ak4_*), past kafka-protocol 0.18's v0-4:
/// its request is read by hand ([`super::decode`]: the KIP-511 client
/// software name and version lead every v3+ body; v5 appends fields after
/// them), its answer as v4, whose layout it keeps (ApiVersionsResponse.json
/// lists `validVersions` 0-5 with no field versioned 5+).
pub(crate) const API_VERSIONS_BY_HAND: i16 = 5;

/// Whether kgtrace can decode this group API version: the versions
/// kafka-protocol has, plus those [`super::legacy`] covers (OffsetCommit
/// v0/v1, OffsetFetch v0) and ApiVersions v5 ([`API_VERSIONS_BY_HAND`]).
pub(crate) fn decodable(api_key: i16, version: i16) -> bool {
    let legacy = matches!(
        (api_key, version),
        (key::OFFSET_COMMIT, 0 | 1) | (key::OFFSET_FETCH, 0)
    ) || (api_key == key::API_VERSIONS && version == API_VERSIONS_BY_HAND);
    let known = ApiKey::try_from(api_key).is_ok_and(|k| {
        let range = k.valid_versions();
        (range.min..=range.max).contains(&version)
    });
    is_group_api(api_key) && (legacy || known)
}

/// Why a request of `api_key` at `version` cannot be decoded, if it cannot:
/// an API or version Kafka never had, or a group API version newer than
/// kgtrace knows. Other APIs are never decoded and need no reason.
pub(crate) fn why_undecodable(api_key: i16, version: i16) -> Option<String> {
    if !plausible_version(api_key, version) {
        let what = if is_known(api_key) {
            "version"
        } else {
            "api key"
        };
        return Some(format!("unknown {what}: api_key {api_key} v{version}"));
    }
    (is_group_api(api_key) && !decodable(api_key, version)).then(|| {
        format!(
            "{} v{version} is newer than kgtrace decodes",
            api_name(api_key)
        )
    })
}

/// Whether a request of this API comes from a group member taking part in
/// the group (so a closing connection that carried it is a member's). Admin
/// calls (DescribeGroups, ListGroups, OffsetFetch for lag) do not count;
/// OffsetCommit counts only with a member id (admin offset resets send none).
pub(crate) fn is_membership(api_key: i16, has_member_id: bool) -> bool {
    use key::*;
    match api_key {
        JOIN_GROUP | SYNC_GROUP | HEARTBEAT | LEAVE_GROUP | CONSUMER_GROUP_HEARTBEAT => true,
        OFFSET_COMMIT => has_member_id,
        _ => false,
    }
}

/// The request header version for a decoded API (kafka-protocol knows it).
pub(crate) fn request_header_version(api_key: i16, version: i16) -> Option<i16> {
    ApiKey::try_from(api_key)
        .ok()
        .map(|k| k.request_header_version(version))
}

/// The response header version; ApiVersions always answers with v0 so that
/// any client can read the answer (KIP-511).
pub(crate) fn response_header_version(api_key: i16, version: i16) -> Option<i16> {
    ApiKey::try_from(api_key)
        .ok()
        .map(|k| k.response_header_version(version))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_apis_as_kafka_does() {
        assert_eq!(api_name(11), "JoinGroup");
        assert_eq!(api_name(68), "ConsumerGroupHeartbeat");
        assert_eq!(api_name(7), "ControlledShutdown");
        assert_eq!(api_name(-3), "Unknown");
    }

    #[test]
    fn accepts_versions_the_crate_pruned_but_rejects_absurd_ones() {
        assert!(plausible_version(8, 0)); // OffsetCommit v0, pruned by the crate
        assert!(plausible_version(0, 2)); // Produce v2
        assert!(!plausible_version(12, 40));
        assert!(!plausible_version(12, -1));
        assert!(!plausible_version(4000, 0));
        assert!(!plausible_version(-3, 0));
        assert!(!is_known(i16::MAX) && !is_known(i16::MIN));
    }

    #[test]
    fn api_versions_responses_use_header_v0() {
        assert_eq!(response_header_version(18, 4), Some(0));
        assert_eq!(response_header_version(11, 6), Some(1));
    }
}
