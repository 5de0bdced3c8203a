//! grep-style selection of what a run shows.
//!
//! Takes: the user's `--group`, `--member`, `--client`, `--host`,
//! `--since`/`--until`, `--kind` and `-v`. Gives: [`Filter`], which says yes
//! or no to a timeline entry, a rebalance, a group or an exchange. Several
//! `--group` patterns match if any matches (grep's `-e`); different flags
//! must all match; `-v` inverts the whole verdict.

use regex::Regex;

use crate::report::{ExchangeRow, GroupSummary, Rebalance, TimelineEntry};
use crate::time::{LogZone, Timestamp};

/// The selection, compiled.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// `-g/--group` patterns (any may match).
    pub groups: Vec<Regex>,
    /// `--member` pattern (member_id or group.instance.id).
    pub member: Option<Regex>,
    /// `--client` pattern (client_id).
    pub client: Option<Regex>,
    /// `--host` pattern (client address).
    pub host: Option<Regex>,
    /// `--since`, inclusive.
    pub since: Option<TimeBound>,
    /// `--until`, inclusive.
    pub until: Option<TimeBound>,
    /// `--kind` values (any may match, case-insensitive).
    pub kinds: Vec<String>,
    /// `-v/--invert-match`.
    pub invert: bool,
}

/// A time bound: absolute, relative to the first event of the inputs, or a
/// time of day on the inputs' first day.
#[derive(Clone, Debug)]
pub enum TimeBound {
    /// An instant.
    At(Timestamp),
    /// Nanoseconds after the first event.
    AfterFirst(i64),
    /// A time of day (nanoseconds after midnight) in `zone`, on the day of
    /// the first event as seen in that zone: `15:05:00`, the times the
    /// tables show.
    TimeOfDay {
        /// Nanoseconds after local midnight.
        nanos: i64,
        /// The zone the time was typed in (`--log-tz`; UTC by default).
        zone: LogZone,
    },
}

impl PartialEq for TimeBound {
    fn eq(&self, other: &TimeBound) -> bool {
        match (self, other) {
            (TimeBound::At(a), TimeBound::At(b)) => a == b,
            (TimeBound::AfterFirst(a), TimeBound::AfterFirst(b)) => a == b,
            (
                TimeBound::TimeOfDay { nanos: a, zone: x },
                TimeBound::TimeOfDay { nanos: b, zone: y },
            ) => a == b && x.name() == y.name(),
            _ => false,
        }
    }
}

const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// `HH:MM`, `HH:MM:SS` or `HH:MM:SS.ffffff`, as nanoseconds after midnight.
fn time_of_day(text: &str) -> Option<i64> {
    let mut parts = text.split(':');
    let hour: i64 = parts.next()?.parse().ok()?;
    let minute: i64 = parts.next()?.parse().ok()?;
    let seconds: f64 = match parts.next() {
        Some(s) if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.') => {
            s.parse().ok()?
        }
        Some(_) => return None,
        None => 0.0,
    };
    if parts.next().is_some() || hour > 23 || minute > 59 || !(0.0..60.0).contains(&seconds) {
        return None;
    }
    Some((hour * 3600 + minute * 60) * 1_000_000_000 + (seconds * 1e9).round() as i64)
}

impl TimeBound {
    /// Whether the instant depends on the inputs' first event.
    pub fn needs_first_event(&self) -> bool {
        !matches!(self, TimeBound::At(_))
    }

    /// Parses RFC 3339, a relative `+90s`, `+5m`, `+1h`, `+250ms`, or a
    /// time of day `15:05:00` read in `zone`.
    pub fn parse_in(text: &str, zone: &LogZone) -> Option<TimeBound> {
        if let Some(nanos) = time_of_day(text.trim()) {
            return Some(TimeBound::TimeOfDay {
                nanos,
                zone: zone.clone(),
            });
        }
        TimeBound::parse(text)
    }

    /// Parses RFC 3339 or a relative `+90s`, `+5m`, `+1h`, `+250ms`.
    pub fn parse(text: &str) -> Option<TimeBound> {
        if let Some(rel) = text.strip_prefix('+') {
            let split = rel.find(|c: char| !c.is_ascii_digit() && c != '.')?;
            let (n, unit) = rel.split_at(split);
            let n: f64 = n.parse().ok()?;
            let scale = match unit {
                "ms" => 1e6,
                "s" => 1e9,
                "m" => 60e9,
                "h" => 3600e9,
                _ => return None,
            };
            return Some(TimeBound::AfterFirst((n * scale) as i64));
        }
        Timestamp::parse_rfc3339(text).map(TimeBound::At)
    }

    /// The instant this bound stands for, given the inputs' first event.
    pub(crate) fn resolve(&self, first: Option<Timestamp>) -> Timestamp {
        match self {
            TimeBound::At(t) => *t,
            TimeBound::AfterFirst(ns) => first.unwrap_or_default().offset_by(*ns),
            TimeBound::TimeOfDay { nanos, zone } => {
                let first = first.unwrap_or_default();
                let offset = i64::from(zone.offset_at(first)) * 1_000_000_000;
                let local = first.0.saturating_add(offset);
                let midnight = local - local.rem_euclid(NANOS_PER_DAY);
                Timestamp(midnight.saturating_add(*nanos).saturating_sub(offset))
            }
        }
    }
}

/// Whether `re` (none: anything) matches one of `values`.
fn opt_match(re: &Option<Regex>, values: &[Option<&str>]) -> bool {
    any_match(re, || values.iter().copied())
}

/// [`opt_match`] over values made only when there is a pattern.
fn any_match<'a, I: Iterator<Item = Option<&'a str>>>(
    re: &Option<Regex>,
    values: impl FnOnce() -> I,
) -> bool {
    match re {
        None => true,
        Some(re) => values().flatten().any(|v| re.is_match(v)),
    }
}

impl Filter {
    /// Whether `--since` or `--until` depends on the inputs' first event
    /// (`+90s`, a time of day).
    pub fn bounds_need_first_event(&self) -> bool {
        [&self.since, &self.until]
            .into_iter()
            .flatten()
            .any(TimeBound::needs_first_event)
    }

    /// True when no flag selects anything (everything matches).
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
            && self.member.is_none()
            && self.client.is_none()
            && self.host.is_none()
            && self.since.is_none()
            && self.until.is_none()
            && self.kinds.is_empty()
    }

    fn group_ok(&self, group: Option<&str>) -> bool {
        self.groups.is_empty() || group.is_some_and(|g| self.groups.iter().any(|re| re.is_match(g)))
    }

    fn time_ok(&self, ts: Timestamp, first: Option<Timestamp>) -> bool {
        self.since.as_ref().is_none_or(|s| ts >= s.resolve(first))
            && self.until.as_ref().is_none_or(|u| ts <= u.resolve(first))
    }

    fn kind_ok(&self, kinds: &[&str]) -> bool {
        // Per row on large timelines: compare without allocating.
        let contains = |hay: &str, needle: &str| {
            needle.is_empty()
                || hay
                    .as_bytes()
                    .windows(needle.len())
                    .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
        };
        self.kinds.is_empty()
            || self
                .kinds
                .iter()
                .any(|k| kinds.iter().any(|x| contains(x, k)))
    }

    fn verdict(&self, yes: bool) -> bool {
        yes != self.invert
    }

    /// Selects a timeline entry.
    pub fn entry(&self, e: &TimelineEntry, first: Option<Timestamp>) -> bool {
        let yes = self.group_ok(e.group.as_deref())
            && opt_match(
                &self.member,
                &[e.member_id.as_deref(), e.group_instance_id.as_deref()],
            )
            && opt_match(&self.client, &[e.client_id.as_deref()])
            && opt_match(&self.host, &[e.client_host.as_deref()])
            && self.time_ok(e.ts, first)
            && self.kind_ok(&[&e.kind, &e.mark]);
        self.verdict(yes)
    }

    /// Selects a rebalance: member, client and host match the trigger, a
    /// join or a removed member.
    pub fn rebalance(&self, r: &Rebalance, first: Option<Timestamp>) -> bool {
        // The lists are walked only for a pattern given: without one, a
        // vector of each per record was most of a 24 k-record answer's
        // filtering.
        let members = || {
            let joins = r.joins.iter().map(|j| Some(j.member_id.as_str()));
            let removed = r.removed.iter().map(|m| Some(m.member_id.as_str()));
            let statics = (r.members_before.iter().chain(&r.members_after))
                .map(|m| m.group_instance_id.as_deref());
            std::iter::once(r.trigger.member_id.as_deref())
                .chain(joins)
                .chain(removed)
                .chain(statics)
        };
        let clients = || {
            let joins = r.joins.iter().map(|j| j.client_id.as_deref());
            let removed = r.removed.iter().map(|m| m.client_id.as_deref());
            std::iter::once(r.trigger.client_id.as_deref())
                .chain(joins)
                .chain(removed)
        };
        let hosts =
            || (r.members_before.iter().chain(&r.members_after)).map(|m| m.client_host.as_deref());
        let yes = self.group_ok(Some(&r.group))
            && any_match(&self.member, members)
            && any_match(&self.client, clients)
            && any_match(&self.host, hosts)
            && self.time_ok(r.started_at, first)
            && self.kind_ok(&[&r.trigger.kind]);
        self.verdict(yes)
    }

    /// Selects a group summary: member, client and host match any member.
    pub fn group(&self, g: &GroupSummary) -> bool {
        let members: Vec<Option<&str>> = g
            .members
            .iter()
            .flat_map(|m| [Some(m.member_id.as_str()), m.group_instance_id.as_deref()])
            .collect();
        let clients: Vec<Option<&str>> = g.members.iter().map(|m| m.client_id.as_deref()).collect();
        let hosts: Vec<Option<&str>> = g.members.iter().map(|m| m.client_host.as_deref()).collect();
        let yes = self.group_ok(Some(&g.group))
            && opt_match(&self.member, &members)
            && opt_match(&self.client, &clients)
            && opt_match(&self.host, &hosts)
            && self.kind_ok(&[&g.protocol, &g.state]);
        self.verdict(yes)
    }

    /// Selects an exchange (`decode`); `--kind` matches the API name.
    pub fn exchange(&self, x: &ExchangeRow, first: Option<Timestamp>) -> bool {
        let groups_ok = self.groups.is_empty()
            || x.group_id
                .as_deref()
                .is_some_and(|g| self.groups.iter().any(|re| re.is_match(g)));
        let yes = groups_ok
            && opt_match(&self.member, &[x.member_id.as_deref()])
            && opt_match(&self.client, &[x.client_id.as_deref()])
            && opt_match(&self.host, &[Some(&*x.connection)])
            && self.time_ok(x.ts, first)
            && self.kind_ok(&[x.api]);
        self.verdict(yes)
    }
}

/// The timeline's marks (`TimelineEntry::mark`), for `--kind` on `timeline`.
pub const MARKS: [&str; 10] = [
    "join",
    "sync",
    "heartbeat",
    "heartbeat_failed",
    "leave",
    "commit",
    "coordinator",
    "state",
    "close",
    "other",
];

/// Checks `--kind` values against what `view` can match, in snake_case or
/// kebab-case, and gives them back in snake_case: trigger kinds for
/// `rebalances` and `report`, marks for `timeline` (where a value with a
/// capital letter, such as `JoinGroup`, is event text and passes as it is);
/// `groups` and `decode` match free text.
pub fn kinds(values: &[String], view: crate::render::View) -> crate::Result<Vec<String>> {
    use crate::render::View;
    let known: Vec<&str> = match view {
        View::Rebalances | View::Report => crate::group::trigger::Kind::ALL
            .iter()
            .map(|k| k.name())
            .collect(),
        View::Timeline => MARKS.to_vec(),
        View::Groups | View::Decode => return Ok(values.to_vec()),
    };
    values
        .iter()
        .map(|v| {
            if view == View::Timeline && v.chars().any(|c| c.is_ascii_uppercase()) {
                return Ok(v.clone());
            }
            let snake = v.trim().to_ascii_lowercase().replace('-', "_");
            if known.contains(&snake.as_str()) {
                Ok(snake)
            } else {
                Err(crate::Error::InvalidOption {
                    flag: "--kind",
                    value: v.clone(),
                    hint: format!("expected one of: {}", known.join(", ")),
                })
            }
        })
        .collect()
}

/// Compiles a user pattern, naming the flag on error.
pub fn compile(flag: &'static str, pattern: &str) -> crate::Result<Regex> {
    Regex::new(pattern).map_err(|e| crate::Error::InvalidOption {
        flag,
        value: pattern.to_string(),
        hint: format!(
            "not a valid regular expression: {}",
            e.to_string().lines().last().unwrap_or("")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_bounds_are_read_in_the_usual_units() {
        assert_eq!(
            TimeBound::parse("+90s"),
            Some(TimeBound::AfterFirst(90_000_000_000))
        );
        assert_eq!(
            TimeBound::parse("+2m"),
            Some(TimeBound::AfterFirst(120_000_000_000))
        );
        assert_eq!(
            TimeBound::parse("+250ms"),
            Some(TimeBound::AfterFirst(250_000_000))
        );
        assert!(TimeBound::parse("+5x").is_none());
        assert!(matches!(
            TimeBound::parse("2024-05-01T12:00:00Z"),
            Some(TimeBound::At(_))
        ));
    }

    #[test]
    fn a_time_of_day_falls_on_the_first_events_day_in_the_given_zone() {
        let first = Timestamp::parse_rfc3339("2024-05-01T14:59:00Z");
        let utc = TimeBound::parse_in("15:05:00", &LogZone::Utc).unwrap();
        assert_eq!(
            utc.resolve(first),
            Timestamp::parse_rfc3339("2024-05-01T15:05:00Z").unwrap()
        );
        let berlin = LogZone::parse("+02:00").unwrap();
        let local = TimeBound::parse_in("17:05", &berlin).unwrap();
        assert_eq!(
            local.resolve(first),
            Timestamp::parse_rfc3339("2024-05-01T15:05:00Z").unwrap()
        );
        assert!(TimeBound::parse_in("25:00", &LogZone::Utc).is_none());
        assert!(TimeBound::parse_in("15:05:00x", &LogZone::Utc).is_none());
    }

    #[test]
    fn several_group_patterns_match_if_any_does_and_invert_flips_it() {
        let mut f = Filter {
            groups: vec![
                compile("--group", "^a").unwrap(),
                compile("--group", "b$").unwrap(),
            ],
            ..Filter::default()
        };
        let e = |g: &str| TimelineEntry {
            group: Some(g.into()),
            ..TimelineEntry::default()
        };
        assert!(f.entry(&e("alpha"), None));
        assert!(f.entry(&e("bob"), None));
        assert!(!f.entry(&e("carol"), None));
        f.invert = true;
        assert!(f.entry(&e("carol"), None));
    }

    #[test]
    fn a_rebalance_is_found_by_a_member_client_or_host_wherever_it_names_them() {
        use crate::report::{MemberJoin, MemberSummary, Rebalance, RemovedMember, Trigger};
        let summary = |instance: &str, host: &str| MemberSummary {
            group_instance_id: Some(instance.into()),
            client_host: Some(host.into()),
            ..MemberSummary::default()
        };
        let r = Rebalance {
            group: "g".into(),
            trigger: Trigger {
                member_id: Some("m-trigger".into()),
                client_id: Some("c-trigger".into()),
                ..Trigger::default()
            },
            joins: vec![MemberJoin {
                member_id: "m-join".into(),
                client_id: Some("c-join".into()),
                ..MemberJoin::default()
            }],
            removed: vec![RemovedMember {
                member_id: "m-removed".into(),
                client_id: Some("c-removed".into()),
                ..RemovedMember::default()
            }],
            members_before: vec![summary("i-before", "10.0.0.1:1")],
            members_after: vec![summary("i-after", "10.0.0.2:2")],
            ..Rebalance::default()
        };
        let with = |member: Option<&str>, client: Option<&str>, host: Option<&str>| Filter {
            member: member.map(|p| compile("--member", p).unwrap()),
            client: client.map(|p| compile("--client", p).unwrap()),
            host: host.map(|p| compile("--host", p).unwrap()),
            ..Filter::default()
        };
        assert!(with(None, None, None).rebalance(&r, None));
        for m in [
            "^m-trigger$",
            "^m-join$",
            "^m-removed$",
            "^i-before$",
            "^i-after$",
        ] {
            assert!(with(Some(m), None, None).rebalance(&r, None), "{m}");
        }
        for c in ["^c-trigger$", "^c-join$", "^c-removed$"] {
            assert!(with(None, Some(c), None).rebalance(&r, None), "{c}");
        }
        for h in ["^10.0.0.1:1$", "^10.0.0.2:2$"] {
            assert!(with(None, None, Some(h)).rebalance(&r, None), "{h}");
        }
        assert!(!with(Some("^c-join$"), None, None).rebalance(&r, None));
        assert!(!with(None, Some("^m-join$"), None).rebalance(&r, None));
        assert!(!with(None, None, Some("^i-after$")).rebalance(&r, None));
        assert!(!with(Some("^m-join$"), Some("^c-removed$"), Some("nowhere")).rebalance(&r, None));
    }

    #[test]
    fn a_bad_pattern_names_its_flag() {
        let err = compile("--member", "(").unwrap_err().to_string();
        assert!(err.starts_with("--member '('"), "{err}");
    }
}
