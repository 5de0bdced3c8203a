//! Instants on one UTC time line.
//!
//! Takes: pcap seconds + sub-second units, or broker-log wall-clock text plus
//! the zone the operator names (`--log-tz`). Gives: [`Timestamp`], a UTC
//! instant in nanoseconds, and its RFC 3339 rendering with microseconds.
//! chrono and jiff are confined to this module.

use std::fmt;

use serde::{Serialize, Serializer};

/// A UTC instant, nanoseconds since the Unix epoch.
///
/// A plain integer keeps the hot capture path free of calendar arithmetic;
/// formatting happens only when something is rendered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// From whole seconds and nanoseconds since the epoch.
    pub fn from_secs_nanos(secs: i64, nanos: u32) -> Timestamp {
        Timestamp(
            secs.saturating_mul(1_000_000_000)
                .saturating_add(nanos as i64),
        )
    }

    /// Milliseconds elapsed from `earlier` to `self` (negative if earlier).
    pub fn millis_since(self, earlier: Timestamp) -> f64 {
        (self.0 - earlier.0) as f64 / 1e6
    }

    /// This instant moved by `nanos` (used for clock-offset correction).
    pub fn offset_by(self, nanos: i64) -> Timestamp {
        Timestamp(self.0.saturating_add(nanos))
    }

    /// RFC 3339 in UTC with microseconds, e.g. `2024-05-01T12:00:00.123456Z`.
    pub fn to_rfc3339(self) -> String {
        let secs = self.0.div_euclid(1_000_000_000);
        let nanos = self.0.rem_euclid(1_000_000_000) as u32;
        match chrono::DateTime::from_timestamp(secs, nanos) {
            Some(t) => t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string(),
            None => format!("@{}ns", self.0),
        }
    }

    /// Parses RFC 3339 (`2024-05-01T12:00:00Z`, offsets allowed).
    pub fn parse_rfc3339(text: &str) -> Option<Timestamp> {
        let t = chrono::DateTime::parse_from_rfc3339(text.trim()).ok()?;
        Some(Timestamp::from_secs_nanos(
            t.timestamp(),
            t.timestamp_subsec_nanos(),
        ))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_rfc3339())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_microseconds_in_utc() {
        let t = Timestamp::from_secs_nanos(1_714_564_800, 123_456_789);
        assert_eq!(t.to_rfc3339(), "2024-05-01T12:00:00.123456Z");
    }

    #[test]
    fn parses_offsets_back_to_utc() {
        let t = Timestamp::parse_rfc3339("2024-05-01T14:00:00+02:00").unwrap();
        assert_eq!(t, Timestamp::from_secs_nanos(1_714_564_800, 0));
    }
}
