//! Log inputs: a file (plain or gzip, multi-member), a directory of logs
//! (rotated `server.log.YYYY-MM-DD-HH` read oldest first, then the live
//! `server.log`; logrotate's `server.log.N` highest number first), or `-`
//! for stdin.
//!
//! Takes: a path. Gives: events from every file via [`super::read_log`] and
//! one summed [`LogSummary`]. flate2's `MultiGzDecoder` is used because
//! `GzDecoder` stops after the first member of a concatenated `.gz`.

use crate::event::Source;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;

use super::{read_log, LogOptions, LogSummary};
use crate::diagnostic::Diagnostics;
use crate::error::{Error, Result};
use crate::event::GroupEvent;

const BUFFER: usize = 256 << 10;

/// Reads a log file, a `.gz`, a directory of logs, or `-` (stdin).
pub fn read_log_path(
    path: &Path,
    opts: &LogOptions,
    diags: &mut Diagnostics,
    out: &mut Vec<GroupEvent>,
) -> Result<LogSummary> {
    if path == Path::new("-") {
        let stdin = io::stdin().lock();
        return read_log(
            BufReader::with_capacity(BUFFER, stdin),
            Source::from("-"),
            opts,
            diags,
            out,
        );
    }
    if path.is_dir() {
        let mut summary = LogSummary::default();
        for file in log_files(path)? {
            summary.add(read_file(&file, opts, diags, out)?);
        }
        return Ok(summary);
    }
    read_file(path, opts, diags, out)
}

fn read_error(path: &Path, source: io::Error) -> Error {
    Error::Read {
        path: path.to_path_buf(),
        source,
    }
}

/// One file, decompressed when it starts with the gzip magic.
fn read_file(
    path: &Path,
    opts: &LogOptions,
    diags: &mut Diagnostics,
    out: &mut Vec<GroupEvent>,
) -> Result<LogSummary> {
    let file = File::open(path).map_err(|e| read_error(path, e))?;
    let mut reader = BufReader::with_capacity(BUFFER, file);
    let gzip = reader
        .fill_buf()
        .map_err(|e| read_error(path, e))?
        .starts_with(&[0x1f, 0x8b]);
    let source: Source = Source::from(path.to_string_lossy().as_ref());
    if gzip {
        let unzipped = BufReader::with_capacity(BUFFER, MultiGzDecoder::new(reader));
        read_log(unzipped, source, opts, diags, out)
    } else {
        read_log(reader, source, opts, diags, out)
    }
}

/// The log files under `dir` (recursively), in reading order.
fn log_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).map_err(|e| read_error(&d, e))? {
            let path = entry.map_err(|e| read_error(&d, e))?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if is_log_name(&path) {
                files.push(path);
            }
        }
    }
    files.sort_by_key(|p| rotation_key(p));
    Ok(files)
}

fn is_log_name(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    name.contains(".log") || [".out", ".gz", ".txt"].iter().any(|s| name.ends_with(s))
}

/// Sort key: directory, base name (`server.log`), then date-suffixed files
/// (lexical order is time order for `yyyy-MM-dd-HH`), then logrotate's
/// numbered files oldest (highest) first, then the live file.
fn rotation_key(path: &Path) -> (PathBuf, String, u8, u64, String) {
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    let Some(at) = name.find(".log") else {
        return (dir, name.to_string(), 0, 0, String::new());
    };
    let (base, suffix) = name.split_at(at + 4);
    let suffix = suffix.strip_prefix('.').unwrap_or(suffix);
    let (rank, number, text) = match suffix.parse::<u64>() {
        _ if suffix.is_empty() => (2, 0, String::new()),
        Ok(n) => (1, u64::MAX - n, String::new()),
        Err(_) => (0, 0, suffix.to_string()),
    };
    (dir, base.to_string(), rank, number, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotated_files_sort_oldest_first_and_live_file_last() {
        let mut names: Vec<PathBuf> = [
            "d/server.log",
            "d/server.log.2024-01-02-00.gz",
            "d/server.log.2024-01-01-23",
            "d/server.log.2024-01-01-09",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        names.sort_by_key(|p| rotation_key(p));
        let got: Vec<_> = names
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            got,
            [
                "d/server.log.2024-01-01-09",
                "d/server.log.2024-01-01-23",
                "d/server.log.2024-01-02-00.gz",
                "d/server.log"
            ]
        );
    }

    #[test]
    fn logrotate_numbers_sort_highest_first() {
        let mut names: Vec<PathBuf> = [
            "server.log",
            "server.log.1",
            "server.log.3.gz",
            "server.log.2",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        names.sort_by_key(|p| rotation_key(p));
        let got: Vec<_> = names
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            got,
            [
                "server.log.3.gz",
                "server.log.2",
                "server.log.1",
                "server.log"
            ]
        );
    }

    use std::io::Write;

    use flate2::write::GzEncoder;
    use flate2::Compression;

    use crate::diagnostic::DiagnosticKind;
    use crate::event::Location;

    fn stabilized(hour: u32, generation: u32) -> String {
        format!("[2024-01-01 {hour:02}:00:00,000] INFO [GroupCoordinator 1]: Stabilized group g generation {generation} (__consumer_offsets-1) (kafka.coordinator.group.GroupCoordinator)\n")
    }

    fn gzip(text: &str) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
        enc.write_all(text.as_bytes()).unwrap();
        enc.finish().unwrap()
    }

    fn read_path(path: &Path) -> (Vec<GroupEvent>, LogSummary, Diagnostics) {
        let (mut diags, mut out) = (Diagnostics::default(), Vec::new());
        let summary = read_log_path(path, &LogOptions::default(), &mut diags, &mut out).unwrap();
        (out, summary, diags)
    }

    #[test]
    fn reads_every_member_of_a_concatenated_gzip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.log.2024-01-01-00.gz");
        let mut bytes = gzip(&stabilized(0, 1));
        bytes.extend(gzip(&stabilized(1, 2)));
        std::fs::write(&path, bytes).unwrap();
        let (out, summary, _) = read_path(&path);
        assert_eq!(
            out.iter().map(|e| e.generation_id).collect::<Vec<_>>(),
            [Some(1), Some(2)]
        );
        assert_eq!(summary.lines, 2);
    }

    #[test]
    fn a_cut_gzip_keeps_the_lines_before_the_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.log.gz");
        let text: String = (0..2000).map(|i| stabilized(i % 24, i)).collect();
        let bytes = gzip(&text);
        std::fs::write(&path, &bytes[..bytes.len() * 2 / 3]).unwrap();
        let (out, _, diags) = read_path(&path);
        assert!(!out.is_empty() && out.len() < 2000, "{}", out.len());
        assert_eq!(diags.count(DiagnosticKind::TruncatedLog), 1);
    }

    #[test]
    fn a_directory_is_read_in_rotation_order_with_per_file_evidence() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("server.log"), stabilized(12, 3)).unwrap();
        std::fs::write(
            dir.path().join("server.log.2024-01-01-10"),
            stabilized(10, 1),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("server.log.2024-01-01-11.gz"),
            gzip(&stabilized(11, 2)),
        )
        .unwrap();
        std::fs::write(dir.path().join("notes.md"), "not a log").unwrap();
        let (out, summary, _) = read_path(dir.path());
        assert_eq!(
            out.iter().map(|e| e.generation_id).collect::<Vec<_>>(),
            [Some(1), Some(2), Some(3)]
        );
        assert!(out[1]
            .evidence
            .source
            .ends_with("server.log.2024-01-01-11.gz"));
        assert_eq!(out[2].evidence.at, Location::Line { line: 1 });
        assert_eq!(summary.lines, 3);
    }

    #[test]
    fn a_missing_file_is_a_read_error_naming_it() {
        let (mut diags, mut out) = (Diagnostics::default(), Vec::new());
        let err = read_log_path(
            Path::new("/nonexistent/server.log"),
            &LogOptions::default(),
            &mut diags,
            &mut out,
        )
        .unwrap_err();
        assert!(err.to_string().contains("/nonexistent/server.log"));
    }
}
