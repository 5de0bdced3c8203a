//! Filters that leave nothing: said, never silent.
//!
//! Takes: the user's [`Filter`] and every row of a view before it is
//! filtered (rebalances, timeline entries, groups, exchanges), one at a
//! time. Gives: when rows were there but the filter kept none, a warning
//! naming the flag that removed them and what the inputs held instead
//! ("4 rebalances in the inputs; none matched --group 'nosuch' (groups
//! seen: g1, g2)"). Each flag is tried alone to find which one left
//! nothing; when each alone keeps some, the warning says they left nothing
//! together. A [`Tally`] is bounded: a few values per flag are kept, the
//! rest only counted.

use std::collections::BTreeSet;

use crate::filter::Filter;
use crate::report::{ExchangeRow, GroupSummary, Rebalance, TimelineEntry};
use crate::time::Timestamp;

/// Values named per flag in a warning; the rest are counted.
const NAMED: usize = 4;

/// What a warning needs from a row: the filter's verdict, and the values
/// each flag is matched against.
pub trait Row {
    /// The filter's verdict on the row.
    fn keeps(&self, filter: &Filter, first: Option<Timestamp>) -> bool;
    /// The row's time, if `--since`/`--until` apply to it.
    fn ts(&self) -> Option<Timestamp>;
    /// The values of one flag in this row.
    fn values(&self, flag: Flag) -> Vec<&str>;
}

/// One selecting flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flag {
    /// `-g/--group`.
    Group,
    /// `--member`.
    Member,
    /// `--client`.
    Client,
    /// `--host`.
    Host,
    /// `--since` and `--until`, together.
    Time,
    /// `--kind`.
    Kind,
}

impl Flag {
    const ALL: [Flag; 6] = [
        Flag::Group,
        Flag::Member,
        Flag::Client,
        Flag::Host,
        Flag::Time,
        Flag::Kind,
    ];

    /// Whether `filter` uses this flag.
    fn used(self, filter: &Filter) -> bool {
        match self {
            Flag::Group => !filter.groups.is_empty(),
            Flag::Member => filter.member.is_some(),
            Flag::Client => filter.client.is_some(),
            Flag::Host => filter.host.is_some(),
            Flag::Time => filter.since.is_some() || filter.until.is_some(),
            Flag::Kind => !filter.kinds.is_empty(),
        }
    }

    /// `filter` with only this flag (and `-v`) kept.
    fn alone(self, filter: &Filter) -> Filter {
        let mut only = Filter {
            invert: filter.invert,
            ..Filter::default()
        };
        match self {
            Flag::Group => only.groups = filter.groups.clone(),
            Flag::Member => only.member = filter.member.clone(),
            Flag::Client => only.client = filter.client.clone(),
            Flag::Host => only.host = filter.host.clone(),
            Flag::Time => {
                only.since = filter.since.clone();
                only.until = filter.until.clone();
            }
            Flag::Kind => only.kinds = filter.kinds.clone(),
        }
        only
    }

    /// What the values seen are called in a warning.
    fn seen_name(self) -> &'static str {
        match self {
            Flag::Group => "groups",
            Flag::Member => "members",
            Flag::Client => "client ids",
            Flag::Host => "hosts",
            Flag::Time => "times",
            Flag::Kind => "kinds",
        }
    }
}

/// The flag as the user gave it (time bounds as resolved instants).
fn written(flag: Flag, filter: &Filter, first: Option<Timestamp>) -> String {
    let quoted = |name: &str, re: &Option<regex::Regex>| {
        re.as_ref()
            .map(|r| format!("{name} '{}'", r.as_str()))
            .unwrap_or_default()
    };
    match flag {
        Flag::Group => filter
            .groups
            .iter()
            .map(|r| format!("--group '{}'", r.as_str()))
            .collect::<Vec<_>>()
            .join(" "),
        Flag::Member => quoted("--member", &filter.member),
        Flag::Client => quoted("--client", &filter.client),
        Flag::Host => quoted("--host", &filter.host),
        Flag::Time => {
            let mut s = Vec::new();
            if let Some(b) = &filter.since {
                s.push(format!("--since {}", b.resolve(first)));
            }
            if let Some(b) = &filter.until {
                s.push(format!("--until {}", b.resolve(first)));
            }
            s.join(" ")
        }
        Flag::Kind => filter
            .kinds
            .iter()
            .map(|k| format!("--kind {k}"))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// A few distinct values, and whether there were more.
#[derive(Debug, Default)]
struct Seen {
    values: BTreeSet<String>,
    more: bool,
}

impl Seen {
    fn add(&mut self, v: &str) {
        if self.values.contains(v) {
            return;
        }
        if self.values.len() < NAMED {
            self.values.insert(v.to_string());
        } else {
            self.more = true;
        }
    }

    fn said(&self) -> String {
        let mut s: Vec<&str> = self.values.iter().map(String::as_str).collect();
        if self.more {
            s.push("…");
        }
        s.join(", ")
    }
}

/// One used flag: the filter with it alone, how many rows that keeps, and
/// the values seen in every row.
#[derive(Debug)]
struct Trial {
    flag: Flag,
    alone: Filter,
    keeps: u64,
    seen: Seen,
}

/// Counts rows before and after the filter, per flag.
#[derive(Debug)]
pub struct Tally {
    filter: Filter,
    first: Option<Timestamp>,
    noun: (&'static str, &'static str),
    total: u64,
    kept: u64,
    /// Rows the filter keeps without `-v` (only counted with `-v`).
    kept_uninverted: u64,
    trials: Vec<Trial>,
    span: Option<(Timestamp, Timestamp)>,
}

impl Tally {
    /// A tally of rows called `noun` (singular and plural:
    /// `("rebalance", "rebalances")`).
    pub fn new(
        filter: &Filter,
        first: Option<Timestamp>,
        noun: (&'static str, &'static str),
    ) -> Tally {
        let trials = Flag::ALL
            .iter()
            .filter(|f| f.used(filter))
            .map(|&flag| Trial {
                flag,
                alone: flag.alone(filter),
                keeps: 0,
                seen: Seen::default(),
            })
            .collect();
        Tally {
            filter: filter.clone(),
            first,
            noun,
            total: 0,
            kept: 0,
            kept_uninverted: 0,
            trials,
            span: None,
        }
    }

    /// The first event's time, as it becomes known (a stream's: `watch`).
    pub fn first_event(&mut self, first: Option<Timestamp>) {
        self.first = first;
    }

    /// Counts one row; gives the filter's verdict on it.
    pub fn add(&mut self, row: &impl Row) -> bool {
        self.total += 1;
        let keeps = row.keeps(&self.filter, self.first);
        self.kept += u64::from(keeps);
        // Once a row is kept no warning will be given: the trials are
        // spared (a large timeline pays for them only while none matches).
        if self.kept > 0 || (self.filter.is_empty() && !self.filter.invert) {
            return keeps;
        }
        if self.filter.invert {
            let plain = Filter {
                invert: false,
                ..self.filter.clone()
            };
            self.kept_uninverted += u64::from(row.keeps(&plain, self.first));
        }
        for t in &mut self.trials {
            t.keeps += u64::from(row.keeps(&t.alone, self.first));
            if t.flag != Flag::Time {
                row.values(t.flag).into_iter().for_each(|v| t.seen.add(v));
            }
        }
        if let Some(ts) = row.ts() {
            self.span = Some(self.span.map_or((ts, ts), |(a, b)| (a.min(ts), b.max(ts))));
        }
        keeps
    }

    /// Rows seen.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The warning, when rows were there and the filter kept none.
    pub fn warning(&self) -> Option<String> {
        if self.kept > 0 || self.total == 0 {
            return None;
        }
        let head = format!("{} {} in the inputs", self.total, self.noun(self.total));
        if self.filter.invert && self.kept_uninverted == self.total {
            let flags: Vec<String> = self.trials.iter().map(|t| self.written(t.flag)).collect();
            let all = if flags.is_empty() {
                "-v with no other flag leaves none".to_string()
            } else {
                format!("all match {}, so -v leaves none", flags.join(" "))
            };
            return Some(format!("{head}; {all}"));
        }
        let culprits: Vec<String> = self
            .trials
            .iter()
            .filter(|t| t.keeps == 0)
            .map(|t| format!("none matched {}{}", self.written(t.flag), self.hint(t)))
            .collect();
        if culprits.is_empty() {
            let flags: Vec<String> = self.trials.iter().map(|t| self.written(t.flag)).collect();
            let v = if self.filter.invert { " with -v" } else { "" };
            return Some(format!(
                "{head}; none matched {}{v} together (each alone keeps some)",
                flags.join(" and ")
            ));
        }
        let v = if self.filter.invert { " (with -v)" } else { "" };
        Some(format!("{head}; {}{v}", culprits.join("; ")))
    }

    fn noun(&self, n: u64) -> &'static str {
        if n == 1 {
            self.noun.0
        } else {
            self.noun.1
        }
    }

    fn written(&self, flag: Flag) -> String {
        written(flag, &self.filter, self.first)
    }

    /// What the rows held instead, in parentheses.
    fn hint(&self, t: &Trial) -> String {
        if t.flag == Flag::Time {
            return self
                .span
                .map(|(a, b)| format!(" (they span {a} to {b})"))
                .unwrap_or_default();
        }
        if t.seen.values.is_empty() {
            return format!(" (no {} in them)", t.seen_name());
        }
        format!(" ({} seen: {})", t.flag.seen_name(), t.seen.said())
    }
}

impl Trial {
    fn seen_name(&self) -> &'static str {
        self.flag.seen_name()
    }
}

/// `coordinator GROUP` with inputs none of whose groups is GROUP (a typo?):
/// the groups they hold, a few named.
pub fn group_not_seen(group: &str, groups: &[GroupSummary]) -> String {
    let mut seen = Seen::default();
    groups.iter().for_each(|g| seen.add(&g.group));
    format!(
        "group '{group}' is in none of the inputs (groups seen: {}); its partition comes from its name alone",
        seen.said()
    )
}

/// An optional value as the list [`Row::values`] gives.
fn one(v: &Option<String>) -> Vec<&str> {
    v.as_deref().into_iter().collect()
}

impl Row for Rebalance {
    fn keeps(&self, filter: &Filter, first: Option<Timestamp>) -> bool {
        filter.rebalance(self, first)
    }
    fn ts(&self) -> Option<Timestamp> {
        Some(self.started_at)
    }
    fn values(&self, flag: Flag) -> Vec<&str> {
        let members = self.members_before.iter().chain(&self.members_after);
        match flag {
            Flag::Group => vec![self.group.as_str()],
            Flag::Member => self
                .trigger
                .member_id
                .as_deref()
                .into_iter()
                .chain(self.joins.iter().map(|j| j.member_id.as_str()))
                .chain(self.removed.iter().map(|m| m.member_id.as_str()))
                .collect(),
            Flag::Client => self
                .trigger
                .client_id
                .as_deref()
                .into_iter()
                .chain(self.joins.iter().filter_map(|j| j.client_id.as_deref()))
                .chain(self.removed.iter().filter_map(|m| m.client_id.as_deref()))
                .collect(),
            Flag::Host => members.filter_map(|m| m.client_host.as_deref()).collect(),
            Flag::Time => Vec::new(),
            Flag::Kind => vec![self.trigger.kind.as_str()],
        }
    }
}

impl Row for TimelineEntry {
    fn keeps(&self, filter: &Filter, first: Option<Timestamp>) -> bool {
        filter.entry(self, first)
    }
    fn ts(&self) -> Option<Timestamp> {
        Some(self.ts)
    }
    fn values(&self, flag: Flag) -> Vec<&str> {
        match flag {
            Flag::Group => one(&self.group),
            Flag::Member => self
                .member_id
                .as_deref()
                .into_iter()
                .chain(self.group_instance_id.as_deref())
                .collect(),
            Flag::Client => one(&self.client_id),
            Flag::Host => one(&self.client_host),
            Flag::Time => Vec::new(),
            Flag::Kind => vec![self.mark.as_str()],
        }
    }
}

impl Row for GroupSummary {
    fn keeps(&self, filter: &Filter, _first: Option<Timestamp>) -> bool {
        filter.group(self)
    }
    fn ts(&self) -> Option<Timestamp> {
        None
    }
    fn values(&self, flag: Flag) -> Vec<&str> {
        match flag {
            Flag::Group => vec![self.group.as_str()],
            Flag::Member => self
                .members
                .iter()
                .flat_map(|m| [Some(m.member_id.as_str()), m.group_instance_id.as_deref()])
                .flatten()
                .collect(),
            Flag::Client => self
                .members
                .iter()
                .filter_map(|m| m.client_id.as_deref())
                .collect(),
            Flag::Host => self
                .members
                .iter()
                .filter_map(|m| m.client_host.as_deref())
                .collect(),
            Flag::Time => Vec::new(),
            Flag::Kind => vec![self.protocol.as_str(), self.state.as_str()],
        }
    }
}

impl Row for ExchangeRow {
    fn keeps(&self, filter: &Filter, first: Option<Timestamp>) -> bool {
        filter.exchange(self, first)
    }
    fn ts(&self) -> Option<Timestamp> {
        Some(self.ts)
    }
    fn values(&self, flag: Flag) -> Vec<&str> {
        match flag {
            Flag::Group => one(&self.group_id),
            Flag::Member => one(&self.member_id),
            Flag::Client => self.client_id.as_deref().into_iter().collect(),
            Flag::Host => vec![&*self.connection],
            Flag::Time => Vec::new(),
            Flag::Kind => vec![self.api],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::{compile, TimeBound};

    fn rebalance(group: &str, kind: &str, secs: i64) -> Rebalance {
        let mut r = Rebalance {
            group: group.into(),
            started_at: Timestamp::from_secs_nanos(1_700_000_000 + secs, 0),
            ..Rebalance::default()
        };
        r.trigger.kind = kind.into();
        r
    }

    fn told(filter: &Filter, rows: &[Rebalance]) -> Option<String> {
        let first = rows.first().map(|r| r.started_at);
        let mut t = Tally::new(filter, first, ("rebalance", "rebalances"));
        rows.iter().for_each(|r| {
            t.add(r);
        });
        t.warning()
    }

    fn rows() -> Vec<Rebalance> {
        vec![
            rebalance("a", "member_joined", 0),
            rebalance("b", "session_timeout", 10),
            rebalance("a", "member_left", 20),
        ]
    }

    #[test]
    fn a_group_that_is_not_there_is_named_with_the_groups_that_are() {
        let f = Filter {
            groups: vec![compile("--group", "foo").unwrap()],
            ..Filter::default()
        };
        assert_eq!(
            told(&f, &rows()).as_deref(),
            Some("3 rebalances in the inputs; none matched --group 'foo' (groups seen: a, b)")
        );
    }

    #[test]
    fn only_the_flag_that_left_nothing_is_named() {
        let f = Filter {
            groups: vec![compile("--group", "a").unwrap()],
            kinds: vec!["poll_timeout".into()],
            ..Filter::default()
        };
        assert_eq!(
            told(&f, &rows()).as_deref(),
            Some(
                "3 rebalances in the inputs; none matched --kind poll_timeout \
                 (kinds seen: member_joined, member_left, session_timeout)"
            )
        );
    }

    #[test]
    fn flags_that_each_keep_some_are_said_to_leave_nothing_together() {
        let f = Filter {
            groups: vec![compile("--group", "^b$").unwrap()],
            kinds: vec!["member_left".into()],
            ..Filter::default()
        };
        assert_eq!(
            told(&f, &rows()).as_deref(),
            Some(
                "3 rebalances in the inputs; none matched --group '^b$' and --kind member_left \
                 together (each alone keeps some)"
            )
        );
    }

    #[test]
    fn a_time_window_outside_the_inputs_gives_their_span() {
        let f = Filter {
            since: Some(TimeBound::AfterFirst(60_000_000_000)),
            ..Filter::default()
        };
        assert_eq!(
            told(&f, &rows()).as_deref(),
            Some(
                "3 rebalances in the inputs; none matched --since 2023-11-14T22:14:20.000000Z \
                 (they span 2023-11-14T22:13:20.000000Z to 2023-11-14T22:13:40.000000Z)"
            )
        );
    }

    #[test]
    fn invert_that_removes_everything_says_so() {
        let f = Filter {
            groups: vec![compile("--group", "[ab]").unwrap()],
            invert: true,
            ..Filter::default()
        };
        assert_eq!(
            told(&f, &rows()).as_deref(),
            Some("3 rebalances in the inputs; all match --group '[ab]', so -v leaves none")
        );
    }

    #[test]
    fn nothing_is_said_when_something_matched_or_nothing_was_there() {
        let f = Filter {
            groups: vec![compile("--group", "^a$").unwrap()],
            ..Filter::default()
        };
        assert_eq!(told(&f, &rows()), None);
        assert_eq!(told(&f, &[]), None);
        assert_eq!(told(&Filter::default(), &rows()), None);
    }

    #[test]
    fn many_values_are_cut_at_four_and_one_row_is_singular() {
        let many: Vec<Rebalance> = ["a", "b", "c", "d", "e"]
            .iter()
            .map(|g| rebalance(g, "member_joined", 0))
            .collect();
        let f = Filter {
            groups: vec![compile("--group", "z").unwrap()],
            ..Filter::default()
        };
        assert_eq!(
            told(&f, &many).as_deref(),
            Some(
                "5 rebalances in the inputs; none matched --group 'z' (groups seen: a, b, c, d, …)"
            )
        );
        assert_eq!(
            told(&f, &many[..1]).as_deref(),
            Some("1 rebalance in the inputs; none matched --group 'z' (groups seen: a)")
        );
    }
}
