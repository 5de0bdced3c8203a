//! What a message matcher gives back, and the small vocabulary the matchers
//! share (compiled-once regexes, capture conversion, Scala/Java value forms).
//!
//! Takes: a regex capture over a message's bytes. Gives: [`Parsed`] (the
//! event fields one line states) inside an [`Outcome`].

use regex::bytes::Captures;

use crate::event::EventKind;

/// Compiles a regex once, on first use, and hands out a `&'static` to it.
///
/// The patterns are constants of this crate (every one is exercised by a unit
/// test), so a failure to compile is a programming error, not bad input.
macro_rules! regex {
    ($re:expr) => {{
        static RE: std::sync::LazyLock<regex::bytes::Regex> =
            std::sync::LazyLock::new(|| regex::bytes::Regex::new($re).expect("constant regex"));
        &*RE
    }};
}
pub(crate) use regex;

/// A substring searcher built once, on first use: `memmem::find` builds one
/// per call, hundreds of instructions on a line a coordinator writes
/// thousands of times a minute.
macro_rules! finder {
    ($needle:expr) => {{
        static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new($needle));
        &*FINDER
    }};
}
pub(crate) use finder;

/// [`finder!`] searching from the end.
macro_rules! finder_rev {
    ($needle:expr) => {{
        static FINDER: std::sync::LazyLock<memchr::memmem::FinderRev<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::FinderRev::new($needle));
        &*FINDER
    }};
}
pub(crate) use finder_rev;

/// A member id: runs of non-space bytes and quoted strings, because Erlang
/// clients (brod, kaffe) put `'name@host'/<0.1.0>` and even spaces inside
/// quotes into their ids.
macro_rules! member {
    () => {
        r#"((?:[^\s'"]+|'[^']*'|"[^"]*")+)"#
    };
}
pub(crate) use member;

/// The fields one log line states about a group.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Parsed {
    /// What the line means.
    pub kind: EventKind,
    /// `group_id`, if the line names it.
    pub group: Option<String>,
    /// The member the line is about.
    pub member_id: Option<String>,
    /// Its static id, if stated.
    pub group_instance_id: Option<String>,
    /// Generation or epoch, if stated.
    pub generation_id: Option<i32>,
    /// A client id the line states (the broker's `MemberMetadata(clientId=…)`).
    pub client_id: Option<String>,
    /// More groups the line states the same of ("The following groups were
    /// deleted: a, b"): one event each, after the one of `group`.
    pub more_groups: Vec<String>,
}

impl Parsed {
    /// An event with no fields yet.
    pub fn new(kind: EventKind) -> Parsed {
        Parsed {
            kind,
            group: None,
            member_id: None,
            group_instance_id: None,
            generation_id: None,
            client_id: None,
            more_groups: Vec::new(),
        }
    }

    /// Sets the group.
    pub fn group(mut self, group: Option<String>) -> Parsed {
        self.group = group;
        self
    }

    /// Sets the member.
    pub fn member(mut self, member_id: Option<String>) -> Parsed {
        self.member_id = member_id;
        self
    }

    /// Sets the static id (`None`, `null`, `Some(x)` forms are unwrapped).
    pub fn instance(mut self, instance: Option<String>) -> Parsed {
        self.group_instance_id = instance.and_then(|i| optional_value(&i));
        self
    }

    /// Sets the generation.
    pub fn generation(mut self, generation: Option<i32>) -> Parsed {
        self.generation_id = generation;
        self
    }
}

/// What a matcher made of a message.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Outcome {
    /// A group event.
    Event(Box<Parsed>),
    /// A known coordinator line that states no group event (start-up,
    /// "already loading", commit chatter).
    Known,
    /// Looks like a coordinator line but matches nothing we know.
    Unknown,
    /// Not a group line after all (another API in the request log).
    Ignored,
}

impl Outcome {
    /// Wraps a parsed event.
    pub fn event(parsed: Parsed) -> Outcome {
        Outcome::Event(Box::new(parsed))
    }
}

/// A table of `(pattern, name)` pairs for lines recognised by name only.
pub(crate) type NamedPatterns = Vec<(regex::bytes::Regex, &'static str)>;

/// Compiles a constant `(pattern, name)` table (once, behind a `LazyLock`).
pub(crate) fn compile_named(table: &[(&str, &'static str)]) -> NamedPatterns {
    table
        .iter()
        .map(|(re, name)| (regex::bytes::Regex::new(re).expect("constant regex"), *name))
        .collect()
}

/// The first pattern of `table` that matches `msg`, with its captures.
pub(crate) fn first_named<'m>(
    table: &NamedPatterns,
    msg: &'m [u8],
) -> Option<(Captures<'m>, &'static str)> {
    table
        .iter()
        .find_map(|(re, name)| Some((re.captures(msg)?, *name)))
}

/// Capture `i` as text (lossy for the rare non-UTF-8 byte).
pub(crate) fn text(caps: &Captures<'_>, i: usize) -> Option<String> {
    caps.get(i).map(|m| owned_text(m.as_bytes()))
}

/// A line's bytes as text, invalid UTF-8 replaced. Nearly every log line
/// is ASCII: `str::from_utf8` checks it a word at a time, where
/// `String::from_utf8_lossy` walks it byte by byte (3 % of reading a log's
/// group lines), so the lossy walk runs only on bytes that fail the check.
pub(crate) fn owned_text(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(b).into_owned(),
    }
}

/// Capture `i` as a number.
pub(crate) fn number<T: std::str::FromStr>(caps: &Captures<'_>, i: usize) -> Option<T> {
    let m = caps.get(i)?;
    std::str::from_utf8(m.as_bytes()).ok()?.parse().ok()
}

/// Unwraps Scala's `Some(x)` and drops `None` / Java's `null` / empty.
pub(crate) fn optional_value(value: &str) -> Option<String> {
    match value {
        "" | "None" | "null" | "Optional.empty" | "OptionalInt.empty" => None,
        v => {
            let inner = v
                .strip_prefix("Some(")
                .or_else(|| v.strip_prefix("OptionalInt["))
                .and_then(|s| s.strip_suffix(')').or_else(|| s.strip_suffix(']')));
            Some(inner.unwrap_or(v).to_string())
        }
    }
}

/// Splits a printed collection (`Set(a, b)`, `[a, b]`, `a, b`) into items.
pub(crate) fn list_items(text: &str) -> Vec<String> {
    let t = text.trim().trim_end_matches('.');
    let t = t
        .strip_prefix("Set(")
        .or_else(|| t.strip_prefix("List("))
        .and_then(|s| s.strip_suffix(')'))
        .or_else(|| t.strip_prefix('[').and_then(|s| s.strip_suffix(']')))
        .unwrap_or(t);
    t.split(", ")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether `msg` starts with `prefix`, ignoring ASCII case (the wording
/// changed case across versions: "leader"/"Leader", "Static Member"/"Static member").
pub(crate) fn starts_with_ci(msg: &[u8], prefix: &[u8]) -> bool {
    msg.len() >= prefix.len() && msg[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// Asserts that a line reader split by hand reads each of `cases` as its
/// regex does (the regex is the definition the split must keep).
#[cfg(test)]
pub(crate) fn assert_split_reads_as_regex<T: PartialEq + std::fmt::Debug>(
    cases: &[&str],
    split: impl Fn(&[u8]) -> T,
    regex: impl Fn(&[u8]) -> T,
) {
    for c in cases {
        assert_eq!(split(c.as_bytes()), regex(c.as_bytes()), "{c:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_what_a_lossy_reading_gives_valid_or_not() {
        for b in [
            &b""[..],
            b"group-1",
            "gr\u{e9}upe \u{1f600}".as_bytes(),
            b"bad \xff byte",
            b"cut \xe2\x82",
            b"\xc0\x80 overlong",
        ] {
            assert_eq!(owned_text(b), String::from_utf8_lossy(b), "{b:?}");
        }
    }

    #[test]
    fn unwraps_scala_and_java_optional_forms() {
        assert_eq!(optional_value("None"), None);
        assert_eq!(optional_value("null"), None);
        assert_eq!(optional_value("Some(i-1)"), Some("i-1".to_string()));
        assert_eq!(optional_value("OptionalInt[5]"), Some("5".to_string()));
        assert_eq!(optional_value("plain"), Some("plain".to_string()));
    }

    #[test]
    fn splits_scala_sets_java_lists_and_bare_lists() {
        assert_eq!(list_items("Set(a, b)"), vec!["a", "b"]);
        assert_eq!(list_items("[t-0, t-1]"), vec!["t-0", "t-1"]);
        assert_eq!(list_items("t-0, t-1"), vec!["t-0", "t-1"]);
        assert!(list_items("[]").is_empty());
    }

    #[test]
    fn member_pattern_keeps_erlang_ids_with_quotes_and_spaces_whole() {
        let re = regex!(concat!("^leader ", member!(), " for"));
        let line = b"leader 'my svc@127.0.0.1'/<0.5.0>-df30 for";
        let caps = re.captures(line).unwrap();
        assert_eq!(text(&caps, 1).unwrap(), "'my svc@127.0.0.1'/<0.5.0>-df30");
    }
}
