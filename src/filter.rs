//! grep-style selection of what a run shows.
//!
//! Takes: the user's `--group`, `--member`, `--client`, `--host`,
//! `--since`/`--until`, `--kind` and `-v`. Gives: [`Filter`], which says yes
//! or no to a timeline entry, a rebalance, a group or an exchange. Several
//! `--group` patterns match if any matches (grep's `-e`); different flags
//! must all match; `-v` inverts the whole verdict.

use regex::Regex;

use crate::report::{ExchangeRow, GroupSummary, Rebalance, TimelineEntry};
use crate::time::Timestamp;

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

/// A time bound: absolute, or relative to the first event of the inputs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TimeBound {
    /// An instant.
    At(Timestamp),
    /// Nanoseconds after the first event.
    AfterFirst(i64),
}

impl TimeBound {
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

    fn resolve(self, first: Option<Timestamp>) -> Timestamp {
        match self {
            TimeBound::At(t) => t,
            TimeBound::AfterFirst(ns) => first.unwrap_or_default().offset_by(ns),
        }
    }
}

fn opt_match(re: &Option<Regex>, values: &[Option<&str>]) -> bool {
    match re {
        None => true,
        Some(re) => values.iter().flatten().any(|v| re.is_match(v)),
    }
}

impl Filter {
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
        self.since.is_none_or(|s| ts >= s.resolve(first))
            && self.until.is_none_or(|u| ts <= u.resolve(first))
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
        let mut members: Vec<Option<&str>> = vec![r.trigger.member_id.as_deref()];
        let mut clients: Vec<Option<&str>> = vec![r.trigger.client_id.as_deref()];
        let mut hosts: Vec<Option<&str>> = Vec::new();
        for j in &r.joins {
            members.push(Some(&j.member_id));
            clients.push(j.client_id.as_deref());
        }
        for m in r.removed.iter() {
            members.push(Some(&m.member_id));
            clients.push(m.client_id.as_deref());
        }
        for m in r.members_before.iter().chain(&r.members_after) {
            members.push(m.group_instance_id.as_deref());
            hosts.push(m.client_host.as_deref());
        }
        let yes = self.group_ok(Some(&r.group))
            && opt_match(&self.member, &members)
            && opt_match(&self.client, &clients)
            && opt_match(&self.host, &hosts)
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
            && opt_match(&self.host, &[Some(x.connection.as_str())])
            && self.time_ok(x.ts, first)
            && self.kind_ok(&[&x.api]);
        self.verdict(yes)
    }
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
    fn a_bad_pattern_names_its_flag() {
        let err = compile("--member", "(").unwrap_err().to_string();
        assert!(err.starts_with("--member '('"), "{err}");
    }
}
