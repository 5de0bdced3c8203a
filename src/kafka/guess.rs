//! Guessing the API of a response whose request was not captured.
//!
//! Takes: a response body (header included). Gives: the one group API whose
//! response schema, at some version, consumes exactly these bytes, decoded;
//! or nothing when none or several fit. Without its request a response
//! names neither its API nor its version, so this is a guess, stated as one
//! in the `UnmatchedResponse` diagnostic.

use bytes::Bytes;

use super::apis::key;
use super::decode::Decoded;
use super::decode_response::body_after_header;
use super::errors::error_name;

/// Guesses the API of a response whose request was not captured: the one
/// group API whose response schema, at some version, consumes exactly these
/// bytes. `None` when no API or several fit (small responses are ambiguous:
/// a Heartbeat v1 answer has the shape of a LeaveGroup v1 one).
pub(crate) fn guess(body: &[u8], exchange: u64) -> Option<(i16, i16, Decoded)> {
    let bytes = Bytes::copy_from_slice(body);
    let mut found: Option<(i16, i16, Decoded)> = None;
    for api_key in GUESSABLE {
        let Ok(k) = kafka_protocol::messages::ApiKey::try_from(api_key) else {
            continue;
        };
        let fits = (0..=k.valid_versions().max).find_map(|v| {
            let mut buf = bytes.clone();
            let d = body_after_header(&mut buf, api_key, v, exchange).ok()?;
            (buf.is_empty() && believable(&d)).then_some((api_key, v, d))
        });
        match (fits, &found) {
            (Some(_), Some(_)) => return None,
            (Some(f), None) => found = Some(f),
            (None, _) => {}
        }
    }
    found
}

/// Group APIs whose responses [`guess`] tries.
const GUESSABLE: [i16; 11] = [
    key::OFFSET_COMMIT,
    key::OFFSET_FETCH,
    key::FIND_COORDINATOR,
    key::JOIN_GROUP,
    key::HEARTBEAT,
    key::LEAVE_GROUP,
    key::SYNC_GROUP,
    key::DESCRIBE_GROUPS,
    key::LIST_GROUPS,
    key::CONSUMER_GROUP_HEARTBEAT,
    key::CONSUMER_GROUP_DESCRIBE,
];

/// A fit is believed only if its error code is one Kafka has: random bytes
/// that happen to parse rarely land on a real code as well.
fn believable(d: &Decoded) -> bool {
    d.error_code
        .is_none_or(|c| c == 0 || error_name(c) != "UNKNOWN_ERROR_CODE")
}
