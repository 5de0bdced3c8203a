//! Instants on one UTC time line.
//!
//! Takes: pcap seconds + sub-second units, or broker-log wall-clock text plus
//! the zone the operator names (`--log-tz`). Gives: [`Timestamp`], a UTC
//! instant in nanoseconds, and its RFC 3339 rendering with microseconds;
//! [`LocalDateTime`] (a zone-less log time, read by a fixed-width parser) and
//! [`LogZone`] / [`ZoneClock`] to put it on the UTC line, flagging the times
//! daylight saving makes ambiguous or impossible.
//! chrono and jiff are confined to this module.

use std::fmt;

use chrono::{Datelike, Timelike};

use serde::{Serialize, Serializer};

use crate::error::Error;

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

    /// 1970-01-01T00:00:00Z, the earliest time kgtrace believes.
    pub const PLAUSIBLE_FROM: Timestamp = Timestamp(0);
    /// 2200-01-01T00:00:00Z, the first time kgtrace no longer believes.
    pub const PLAUSIBLE_UNTIL: Timestamp = Timestamp(7_258_118_400 * 1_000_000_000);

    /// Whether the time lies in 1970–2199: outside it a clock, offset or
    /// date is wrong (and near i64's ends it would wrap); see docs/limits.md.
    pub fn is_plausible(self) -> bool {
        (Self::PLAUSIBLE_FROM..Self::PLAUSIBLE_UNTIL).contains(&self)
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
            // Written digit by digit: chrono's `format` parses its pattern
            // on every call, and every event and evidence line shows a time
            // (2 % of a dense capture's run). Nanoseconds in an i64 span
            // 1677-2262, so the year always has four digits.
            Some(t) => {
                let mut b = *b"0000-00-00T00:00:00.000000Z";
                put_digits(&mut b[0..4], t.year().unsigned_abs());
                put_digits(&mut b[5..7], t.month());
                put_digits(&mut b[8..10], t.day());
                put_digits(&mut b[11..13], t.hour());
                put_digits(&mut b[14..16], t.minute());
                put_digits(&mut b[17..19], t.second());
                put_digits(&mut b[20..26], nanos / 1000);
                String::from_utf8(b.to_vec()).unwrap_or_default()
            }
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

/// `n`'s last `out.len()` decimal digits, zero-padded, into `out`.
fn put_digits(out: &mut [u8], mut n: u32) {
    for d in out.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
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

/// A wall-clock time as a log line prints it: no zone, up to nanoseconds.
///
/// log4j's `%d` renders `yyyy-MM-dd HH:mm:ss,SSS` in the JVM's default zone
/// and never prints the zone, so the value means nothing until a
/// [`LogZone`] is applied.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LocalDateTime {
    /// Year (four digits in logs).
    pub year: i16,
    /// Month, 1–12.
    pub month: i8,
    /// Day of month, 1–31.
    pub day: i8,
    /// Hour, 0–23.
    pub hour: i8,
    /// Minute, 0–59.
    pub minute: i8,
    /// Second, 0–59.
    pub second: i8,
    /// Nanoseconds within the second.
    pub nanos: i32,
}

/// Reads `yyyy-MM-dd HH:mm:ss[,.]SSS` (and the ISO 8601 `T` form, with any
/// number of fraction digits up to 9) at the start of `text`.
///
/// Returns the time and how many bytes it took. A trailing zone (`Z`,
/// `+02:00`) is not consumed; see [`parse_zoned_datetime`]. A fixed-width hand
/// parser, because chrono's `parse_from_str` re-reads its format string for
/// every line and the log reader sees hundreds of thousands per second.
pub fn parse_log_datetime(text: &[u8]) -> Option<(LocalDateTime, usize)> {
    let b = text.get(..19)?;
    let sep_ok = b[4] == b'-' && b[7] == b'-' && (b[10] == b' ' || b[10] == b'T');
    if !sep_ok || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let dt = LocalDateTime {
        year: digits(&b[0..4])? as i16,
        month: digits(&b[5..7])? as i8,
        day: digits(&b[8..10])? as i8,
        hour: digits(&b[11..13])? as i8,
        minute: digits(&b[14..16])? as i8,
        second: digits(&b[17..19])? as i8,
        nanos: 0,
    };
    let (nanos, used) = fraction(&text[19..]);
    let dt = LocalDateTime { nanos, ..dt };
    valid_civil(&dt).then_some((dt, 19 + used))
}

/// Reads an ISO 8601 time with its zone (`2021-05-04T16:41:31.006683114Z`,
/// `…+02:00`), as `kubectl logs --timestamps` prints, straight to UTC.
///
/// Returns the instant and the bytes used; `None` if there is no zone.
pub fn parse_zoned_datetime(text: &[u8]) -> Option<(Timestamp, usize)> {
    let (dt, used) = parse_log_datetime(text)?;
    with_zone(&dt, used, text)
}

/// The instant of `dt`, read from the first `used` bytes of `text`, when a
/// zone follows it there, and the bytes used with the zone's; `None` when
/// no zone follows (a caller that read `dt` already need not read it again
/// to learn that: [`parse_zoned_datetime`] is this after
/// [`parse_log_datetime`]).
pub fn with_zone(dt: &LocalDateTime, used: usize, text: &[u8]) -> Option<(Timestamp, usize)> {
    let rest = text.get(used..)?;
    let (offset_secs, zone_len) = match rest.first()? {
        b'Z' | b'z' => (0, 1),
        b'+' | b'-' => {
            // `+02:00` (ISO 8601 extended) or `+0200` (log4j `Z`).
            let (minutes_at, len) = if rest.get(3) == Some(&b':') {
                (4, 6)
            } else {
                (3, 5)
            };
            let z = rest.get(..len)?;
            let secs = digits(&z[1..3])? as i32 * 3600 + digits(&z[minutes_at..len])? as i32 * 60;
            (if z[0] == b'-' { -secs } else { secs }, len)
        }
        _ => return None,
    };
    Some((utc_from_civil(dt, offset_secs), used + zone_len))
}

/// The value of an all-digit ASCII slice.
fn digits(b: &[u8]) -> Option<u32> {
    b.iter().try_fold(0u32, |acc, &c| {
        c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
    })
}

/// Reads an optional `,SSS` / `.SSSSSSSSS` fraction; returns nanoseconds and
/// bytes used.
fn fraction(b: &[u8]) -> (i32, usize) {
    if !matches!(b.first(), Some(b',') | Some(b'.')) {
        return (0, 0);
    }
    let n = b[1..].iter().take_while(|c| c.is_ascii_digit()).count();
    if n == 0 {
        return (0, 0);
    }
    let mut nanos: i64 = 0;
    for &c in &b[1..1 + n.min(9)] {
        nanos = nanos * 10 + i64::from(c - b'0');
    }
    for _ in n.min(9)..9 {
        nanos *= 10;
    }
    (nanos as i32, 1 + n)
}

/// Whether the fields name a real calendar day and time of day in
/// 1970–2199 (years 0000 or 9999 would saturate to 1677 or 2262; such a line
/// is not taken as a time).
fn valid_civil(dt: &LocalDateTime) -> bool {
    if !(1970..2200).contains(&dt.year) {
        return false;
    }
    let leap = dt.year % 4 == 0 && (dt.year % 100 != 0 || dt.year % 400 == 0);
    let days_in_month = match dt.month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days_in_month).contains(&dt.day)
        && (0..24).contains(&dt.hour)
        && (0..60).contains(&dt.minute)
        && (0..60).contains(&dt.second)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`), so UTC and fixed offsets need no calendar library.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The instant of a civil time at a fixed UTC offset.
fn utc_from_civil(dt: &LocalDateTime, offset_secs: i32) -> Timestamp {
    let days = days_from_civil(dt.year.into(), dt.month.into(), dt.day.into());
    let secs = days * 86_400
        + i64::from(dt.hour) * 3600
        + i64::from(dt.minute) * 60
        + i64::from(dt.second)
        - i64::from(offset_secs);
    Timestamp::from_secs_nanos(secs, dt.nanos as u32)
}

/// The zone in which a log's wall-clock times were written (`--log-tz`).
#[derive(Clone, Debug, Default)]
pub enum LogZone {
    /// UTC (the default; what containers usually run in).
    #[default]
    Utc,
    /// A fixed offset from UTC, in seconds (`+02:00`).
    Fixed(i32),
    /// An IANA zone with daylight saving rules (`Europe/Berlin`).
    Iana {
        /// The name as given.
        name: String,
        /// jiff's rules for it.
        tz: jiff::tz::TimeZone,
    },
}

impl LogZone {
    /// Parses `UTC`, `Z`, an offset (`+02:00`, `-0530`, `+02`, `UTC+01:00`)
    /// or an IANA name (`Europe/Berlin`).
    pub fn parse(text: &str) -> crate::error::Result<LogZone> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("utc") || t == "Z" || t.eq_ignore_ascii_case("gmt") {
            return Ok(LogZone::Utc);
        }
        let offset_text = t
            .strip_prefix("UTC")
            .or_else(|| t.strip_prefix("GMT"))
            .unwrap_or(t);
        if let Some(secs) = parse_offset(offset_text) {
            return Ok(if secs == 0 {
                LogZone::Utc
            } else {
                LogZone::Fixed(secs)
            });
        }
        match jiff::tz::TimeZone::get(t) {
            Ok(tz) => Ok(LogZone::Iana {
                name: t.to_string(),
                tz,
            }),
            Err(e) => Err(Error::InvalidOption {
                flag: "--log-tz",
                value: text.to_string(),
                hint: format!(
                    "expected UTC, an offset like +02:00, or an IANA zone like Europe/Berlin ({e})"
                ),
            }),
        }
    }

    /// The zone as it should be recorded in outputs (`UTC`, `+02:00`,
    /// `Europe/Berlin`).
    pub fn name(&self) -> String {
        match self {
            LogZone::Utc => "UTC".to_string(),
            LogZone::Fixed(secs) => {
                let sign = if *secs < 0 { '-' } else { '+' };
                let a = secs.unsigned_abs();
                format!("{sign}{:02}:{:02}", a / 3600, a % 3600 / 60)
            }
            LogZone::Iana { name, .. } => name.clone(),
        }
    }

    /// Seconds east of UTC in force at `ts` (for a time of day the user
    /// typed in this zone).
    pub fn offset_at(&self, ts: Timestamp) -> i32 {
        match self {
            LogZone::Utc => 0,
            LogZone::Fixed(secs) => *secs,
            LogZone::Iana { tz, .. } => jiff::Timestamp::from_nanosecond(i128::from(ts.0))
                .map(|t| tz.to_offset(t).seconds())
                .unwrap_or(0),
        }
    }

    /// Puts a wall-clock time on the UTC line. DST-ambiguous times take the
    /// earlier instant and nonexistent ones are read with the offset before
    /// the gap (jiff's "compatible" choice, as java.time does); both are
    /// flagged in [`ZonedTime::local`].
    pub fn to_timestamp(&self, dt: &LocalDateTime) -> ZonedTime {
        match self {
            LogZone::Utc => ZonedTime::unique(utc_from_civil(dt, 0)),
            LogZone::Fixed(secs) => ZonedTime::unique(utc_from_civil(dt, *secs)),
            LogZone::Iana { tz, .. } => zoned_with(iana_offset(tz, dt), dt),
        }
    }
}

/// Parses `+HH:MM`, `-HHMM` or `+HH` to seconds east of UTC.
fn parse_offset(t: &str) -> Option<i32> {
    let b = t.as_bytes();
    let sign = match b.first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let rest = &b[1..];
    let (h, m) = match rest.len() {
        2 => (digits(rest)?, 0),
        4 => (digits(&rest[..2])?, digits(&rest[2..])?),
        5 if rest[2] == b':' => (digits(&rest[..2])?, digits(&rest[3..])?),
        _ => return None,
    };
    (h <= 18 && m < 60).then(|| sign * (h as i32 * 3600 + m as i32 * 60))
}

/// What the zone rules say about one civil time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CivilOffset {
    Unique(i32),
    /// A fold: the earlier and later offsets.
    Fold(i32, i32),
    /// A gap: the offsets before and after it.
    Gap(i32, i32),
}

fn iana_offset(tz: &jiff::tz::TimeZone, dt: &LocalDateTime) -> CivilOffset {
    use jiff::tz::AmbiguousOffset;
    let civil =
        jiff::civil::DateTime::new(dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second, 0);
    let Ok(civil) = civil else {
        return CivilOffset::Unique(0);
    };
    match tz.to_ambiguous_timestamp(civil).offset() {
        AmbiguousOffset::Unambiguous { offset } => CivilOffset::Unique(offset.seconds()),
        AmbiguousOffset::Fold { before, after } => {
            CivilOffset::Fold(before.seconds(), after.seconds())
        }
        AmbiguousOffset::Gap { before, after } => {
            CivilOffset::Gap(before.seconds(), after.seconds())
        }
    }
}

fn zoned_with(offset: CivilOffset, dt: &LocalDateTime) -> ZonedTime {
    match offset {
        CivilOffset::Unique(o) => ZonedTime::unique(utc_from_civil(dt, o)),
        CivilOffset::Fold(before, _) => ZonedTime {
            ts: utc_from_civil(dt, before),
            local: LocalTimeKind::Ambiguous,
        },
        CivilOffset::Gap(before, _) => ZonedTime {
            ts: utc_from_civil(dt, before),
            local: LocalTimeKind::Nonexistent,
        },
    }
}

/// Whether a wall-clock time named exactly one instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalTimeKind {
    /// One instant.
    Unique,
    /// Two instants (the hour repeated when DST ends); the earlier was taken.
    Ambiguous,
    /// No instant (the hour skipped when DST starts); read with the offset
    /// in force before the gap.
    Nonexistent,
}

/// A log time placed on the UTC line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZonedTime {
    /// The instant.
    pub ts: Timestamp,
    /// Whether the wall-clock time was unique, ambiguous or nonexistent.
    pub local: LocalTimeKind,
}

impl ZonedTime {
    fn unique(ts: Timestamp) -> ZonedTime {
        ZonedTime {
            ts,
            local: LocalTimeKind::Unique,
        }
    }
}

/// A [`LogZone`] with a one-minute memo of the zone rules, for readers that
/// convert a time per line: consecutive lines share their minute, and zone
/// transitions fall on whole minutes, so the memo is exact.
#[derive(Clone, Debug)]
pub struct ZoneClock<'a> {
    zone: &'a LogZone,
    memo: Option<(LocalDateTime, CivilOffset)>,
}

impl<'a> ZoneClock<'a> {
    /// A clock for one zone.
    pub fn new(zone: &'a LogZone) -> ZoneClock<'a> {
        ZoneClock { zone, memo: None }
    }

    /// Same as [`LogZone::to_timestamp`], memoised per minute.
    pub fn to_timestamp(&mut self, dt: &LocalDateTime) -> ZonedTime {
        let LogZone::Iana { tz, .. } = self.zone else {
            return self.zone.to_timestamp(dt);
        };
        let minute = LocalDateTime {
            second: 0,
            nanos: 0,
            ..*dt
        };
        let offset = match self.memo {
            Some((m, o)) if m == minute => o,
            _ => {
                let o = iana_offset(tz, &minute);
                self.memo = Some((minute, o));
                o
            }
        };
        zoned_with(offset, dt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_by_hand_is_what_the_pattern_writes() {
        let by_pattern = |t: Timestamp| {
            let (secs, nanos) = (t.0.div_euclid(1_000_000_000), t.0.rem_euclid(1_000_000_000));
            chrono::DateTime::from_timestamp(secs, nanos as u32)
                .unwrap()
                .format("%Y-%m-%dT%H:%M:%S%.6fZ")
                .to_string()
        };
        for ns in [
            0,
            -1,
            999,
            1_000,
            1_714_564_800_123_456_789,
            951_782_400_000_000_001, // 2000-02-29
            i64::MIN,
            i64::MAX,
        ] {
            let t = Timestamp(ns);
            assert_eq!(t.to_rfc3339(), by_pattern(t), "{ns}");
        }
    }

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

    fn local(text: &str) -> LocalDateTime {
        parse_log_datetime(text.as_bytes()).unwrap().0
    }

    #[test]
    fn reads_log4j_comma_millis_and_iso_variants() {
        let (dt, used) = parse_log_datetime(b"2024-11-11 09:36:08,748] INFO").unwrap();
        assert_eq!(used, 23);
        assert_eq!(
            (dt.hour, dt.minute, dt.second, dt.nanos),
            (9, 36, 8, 748_000_000)
        );
        let (dt, used) = parse_log_datetime(b"2021-05-04T16:41:31.006683114Z").unwrap();
        assert_eq!((used, dt.nanos), (29, 6_683_114));
        assert_eq!(
            parse_log_datetime(b"2024-11-11 09:36:08 INFO").unwrap().1,
            19
        );
    }

    #[test]
    fn rejects_years_outside_1970_to_2199_instead_of_wrapping() {
        for text in [b"9999-12-31 23:59:59,999", b"0000-01-01 00:00:00,000"] {
            assert!(parse_log_datetime(text).is_none());
            assert!(parse_zoned_datetime(&[&text[..], b"Z"].concat()).is_none());
        }
        assert!(parse_log_datetime(b"2199-12-31 23:59:59,999").is_some());
        assert!(Timestamp::parse_rfc3339("2199-12-31T23:59:59Z")
            .unwrap()
            .is_plausible());
        assert!(!Timestamp::from_secs_nanos(i64::MAX / 2, 0).is_plausible());
    }

    #[test]
    fn rejects_times_that_are_not_on_the_calendar() {
        assert!(parse_log_datetime(b"2023-02-29 10:00:00,000").is_none());
        assert!(parse_log_datetime(b"2024-13-01 10:00:00,000").is_none());
        assert!(parse_log_datetime(b"2024-01-01 24:00:00,000").is_none());
        assert!(parse_log_datetime(b"2024-01-0x 10:00:00,000").is_none());
        assert!(parse_log_datetime(b"2024-01-01").is_none());
    }

    #[test]
    fn utc_wall_clock_matches_rfc3339() {
        let z = LogZone::parse("UTC").unwrap();
        let t = z.to_timestamp(&local("2024-05-01 12:00:00,123"));
        assert_eq!(t.ts.to_rfc3339(), "2024-05-01T12:00:00.123000Z");
        assert_eq!(t.local, LocalTimeKind::Unique);
    }

    #[test]
    fn fixed_offsets_shift_to_utc() {
        let z = LogZone::parse("+02:00").unwrap();
        assert_eq!(z.name(), "+02:00");
        let t = z.to_timestamp(&local("2024-05-01 14:00:00,000"));
        assert_eq!(t.ts, Timestamp::from_secs_nanos(1_714_564_800, 0));
        let z = LogZone::parse("-0530").unwrap();
        let t = z.to_timestamp(&local("2024-05-01 06:30:00,000"));
        assert_eq!(t.ts, Timestamp::from_secs_nanos(1_714_564_800, 0));
    }

    #[test]
    fn iana_zones_apply_summer_and_winter_offsets() {
        let z = LogZone::parse("Europe/Berlin").unwrap();
        assert_eq!(z.name(), "Europe/Berlin");
        let summer = z.to_timestamp(&local("2024-05-01 14:00:00,000"));
        assert_eq!(summer.ts.to_rfc3339(), "2024-05-01T12:00:00.000000Z");
        let winter = z.to_timestamp(&local("2024-01-10 14:00:00,000"));
        assert_eq!(winter.ts.to_rfc3339(), "2024-01-10T13:00:00.000000Z");
    }

    #[test]
    fn flags_the_repeated_autumn_hour_as_ambiguous() {
        let z = LogZone::parse("Europe/Berlin").unwrap();
        let t = z.to_timestamp(&local("2024-10-27 02:30:00,000"));
        assert_eq!(t.local, LocalTimeKind::Ambiguous);
        assert_eq!(t.ts.to_rfc3339(), "2024-10-27T00:30:00.000000Z");
    }

    #[test]
    fn flags_the_skipped_spring_hour_as_nonexistent() {
        let z = LogZone::parse("Europe/Berlin").unwrap();
        let t = z.to_timestamp(&local("2024-03-31 02:30:00,000"));
        assert_eq!(t.local, LocalTimeKind::Nonexistent);
    }

    #[test]
    fn zone_clock_memo_gives_the_same_answers_as_the_zone() {
        let z = LogZone::parse("America/New_York").unwrap();
        let mut clock = ZoneClock::new(&z);
        for text in [
            "2024-11-03 01:30:00,000",
            "2024-11-03 01:30:59,999",
            "2024-11-03 03:00:00,000",
            "2024-03-10 02:15:00,000",
        ] {
            assert_eq!(
                clock.to_timestamp(&local(text)),
                z.to_timestamp(&local(text))
            );
        }
    }

    #[test]
    fn rejects_unknown_zone_names_naming_the_flag() {
        let e = LogZone::parse("Mars/Olympus").unwrap_err().to_string();
        assert!(e.starts_with("--log-tz 'Mars/Olympus'"), "{e}");
    }

    #[test]
    fn reads_kubectl_zoned_stamps() {
        let (t, used) = parse_zoned_datetime(b"2021-05-04T16:41:31.006683114Z 2021").unwrap();
        assert_eq!(used, 30);
        assert_eq!(t.to_rfc3339(), "2021-05-04T16:41:31.006683Z");
        let (t, _) = parse_zoned_datetime(b"2021-05-04T18:41:31+02:00").unwrap();
        assert_eq!(t.to_rfc3339(), "2021-05-04T16:41:31.000000Z");
        let (t, used) = parse_zoned_datetime(b"2021-05-04 18:41:31,250+0200 INFO").unwrap();
        assert_eq!(
            (t.to_rfc3339().as_str(), used),
            ("2021-05-04T16:41:31.250000Z", 28)
        );
        assert!(parse_zoned_datetime(b"2021-05-04 18:41:31,250 INFO").is_none());
    }
}
