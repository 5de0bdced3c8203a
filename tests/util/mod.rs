//! Running the real `kgtrace` binary from the integration tests, and reading
//! what it prints back into shapes a test can check.
//!
//! Takes: arguments (fixture paths relative to the crate root, e.g.
//! `fixtures/lab/ck_killed.pcap`) and optional stdin bytes. Gives: a [`Run`]
//! (exit code, stdout, stderr) and parsers for JSON, NDJSON, CSV and
//! Markdown tables. Commands start in `CARGO_MANIFEST_DIR` so outputs name
//! fixtures by their relative path, never by this checkout's absolute one.

#![allow(dead_code)] // Each test module uses a different part.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

mod lab_fixtures;
pub use lab_fixtures::*;

mod in_process;
pub use in_process::*;

/// The committed lab captures, relative to the crate root.
pub const LAB: &str = "fixtures/lab";

/// `kgtrace`, started in the crate root with a neutral environment: no
/// NO_COLOR, no COLUMNS, so only the flags under test decide colour and width.
pub fn kgtrace() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kgtrace"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("NO_COLOR")
        .env_remove("COLUMNS");
    cmd
}

/// What one run of the binary did.
#[derive(Debug)]
pub struct Run {
    /// Exit code (-1 if killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Panics with the whole run when the exit code is not `code`.
    pub fn expect_code(self, code: i32) -> Run {
        assert_eq!(self.code, code, "exit code of {self:#?}");
        self
    }
}

/// Runs `kgtrace args` with empty stdin.
pub fn run(args: &[&str]) -> Run {
    run_with_stdin(args, b"")
}

/// Runs `kgtrace args` feeding `input` on stdin.
pub fn run_with_stdin(args: &[&str], input: &[u8]) -> Run {
    run_command(kgtrace().args(args), input)
}

/// Runs a prepared command feeding `input` on stdin.
pub fn run_command(cmd: &mut Command, input: &[u8]) -> Run {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kgtrace starts");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_vec();
    // Written from a thread: a large input would otherwise fill the pipe
    // while kgtrace's own output fills the other one.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("kgtrace runs");
    writer.join().expect("stdin writer");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

/// `fixtures/lab/NAME`.
pub fn lab(name: &str) -> String {
    format!("{LAB}/{name}")
}

/// Every committed lab capture (`.pcap`, `.pcapng`), sorted, as relative paths.
pub fn lab_captures() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(LAB);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixtures/lab is committed")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".pcap") || n.ends_with(".pcapng"))
        .map(|n| lab(&n))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no captures under {}", dir.display());
    names
}

/// Parses one JSON document.
pub fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// Parses NDJSON: every non-empty line is one JSON object.
pub fn ndjson(text: &str) -> Vec<Value> {
    text.lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("NDJSON line is not JSON ({e}): {line}"));
            assert!(v.is_object(), "NDJSON line is not an object: {line}");
            v
        })
        .collect()
}

/// The rows of a JSON report's `key` array.
pub fn rows<'a>(report: &'a Value, key: &str) -> &'a Vec<Value> {
    report[key]
        .as_array()
        .unwrap_or_else(|| panic!("no array '{key}' in {report}"))
}

/// Parses RFC 4180 CSV: quoted fields may hold commas, quotes (doubled)
/// and newlines. Panics on a quote that does not close.
pub fn csv(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') => {}
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(!quoted, "a quoted CSV field never closes");
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

/// The Markdown tables in `text`: runs of lines starting with `|`.
pub fn markdown_tables(text: &str) -> Vec<Vec<&str>> {
    let mut tables: Vec<Vec<&str>> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in text.lines() {
        if line.starts_with('|') {
            current.push(line);
        } else if !current.is_empty() {
            tables.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        tables.push(current);
    }
    tables
}

/// Cell separators on a Markdown table line: every `|` not escaped as
/// `\|`. GitHub splits cells on a bare `|` even inside a code span, so
/// those count too.
pub fn markdown_pipes(line: &str) -> usize {
    let (mut pipes, mut escaped) = (0, false);
    for c in line.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '|' => pipes += 1,
            _ => {}
        }
    }
    pipes
}

/// Checks every Markdown table in `text`: a header, a `---` separator row,
/// and the same number of cells on every line. Returns the tables' data
/// rows (header and separator left out).
pub fn check_markdown_tables(text: &str) -> Vec<Vec<&str>> {
    let tables = markdown_tables(text);
    for table in &tables {
        assert!(table.len() >= 2, "a table without separator: {table:#?}");
        let cells = markdown_pipes(table[0]);
        assert!(cells >= 2, "a header without cells: {}", table[0]);
        assert!(
            table[1]
                .split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .all(|c| c.trim_matches(':').chars().all(|ch| ch == '-') && c.contains("---")),
            "second line is not a separator row: {}",
            table[1]
        );
        for line in table {
            assert_eq!(markdown_pipes(line), cells, "pipes differ:\n{table:#?}");
            assert!(line.ends_with('|'), "row not closed: {line}");
        }
    }
    tables.into_iter().map(|t| t[2..].to_vec()).collect()
}
