//! Kafka error codes → Kafka's names (`REBALANCE_IN_PROGRESS`).
//!
//! Takes an `error_code` from a response; gives the name the Java client and
//! broker logs use. kafka-protocol's `ResponseError` knows the codes; its
//! variant names are CamelCase, so they are turned into Kafka's
//! UPPER_SNAKE_CASE once and cached.

use std::collections::HashMap;
use std::sync::OnceLock;

use kafka_protocol::ResponseError;

/// Kafka's name for an error code; `NONE` for 0, `UNKNOWN_ERROR_CODE` for
/// codes this build does not know.
pub fn error_name(code: i16) -> &'static str {
    if code == 0 {
        return "NONE";
    }
    static NAMES: OnceLock<HashMap<i16, &'static str>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        (-1..=200)
            .filter_map(|c| ResponseError::try_from_code(c).map(|e| (c, upper_snake(&e))))
            .collect()
    });
    names.get(&code).copied().unwrap_or("UNKNOWN_ERROR_CODE")
}

fn upper_snake(error: &ResponseError) -> &'static str {
    let camel = format!("{error:?}");
    let mut out = String::with_capacity(camel.len() + 8);
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    Box::leak(out.into_boxed_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_codes_as_kafka_does() {
        assert_eq!(error_name(27), "REBALANCE_IN_PROGRESS");
        assert_eq!(error_name(25), "UNKNOWN_MEMBER_ID");
        assert_eq!(error_name(79), "MEMBER_ID_REQUIRED");
        assert_eq!(error_name(0), "NONE");
        assert_eq!(error_name(-1), "UNKNOWN_SERVER_ERROR");
    }
}
