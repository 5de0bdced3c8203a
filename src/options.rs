//! Resolved options: what to read, what to select, how to show it.
//!
//! Takes nothing from clap ([`crate::cli`] builds it); gives the library
//! everything it needs as plain values, so tests call the pipeline without
//! a process boundary.

use std::path::PathBuf;

use crate::filter::Filter;
use crate::render::{Format, View};
use crate::time::LogZone;

/// What the run does.
#[derive(Clone, Debug)]
pub enum Command {
    /// Read inputs and show a view.
    Analyse,
    /// Read inputs and write the incident report (and HTML if asked).
    Report {
        /// `--html FILE`.
        html: Option<PathBuf>,
        /// `--brief`.
        brief: bool,
    },
    /// Tell rebalances as the inputs are read (`watch`).
    Watch {
        /// `--follow`: follow files as `tail -F` does.
        follow: bool,
    },
    /// Which partition and broker coordinate a group.
    Coordinator {
        /// The group id.
        group: String,
        /// `__consumer_offsets` partitions.
        partitions: u32,
    },
    /// Print a shell completion script.
    Completions(clap_complete::Shell),
    /// Print the man page.
    Man,
}

/// What to read inputs as, when detection is not wanted (`--input-type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputType {
    /// pcap or pcapng (possibly gzip or zstd compressed).
    Capture,
    /// Kafka broker or client log text.
    Log,
}

/// How inputs are read.
#[derive(Clone, Debug)]
pub struct ReadOptions {
    /// Kafka ports (`--port`; 9092 by default).
    pub ports: Vec<u16>,
    /// Zone of log timestamps (`--log-tz`).
    pub log_zone: LogZone,
    /// The zone as the user wrote it, for the report.
    pub log_zone_name: String,
    /// `--input-type`: read every input as this, whatever its first bytes.
    pub input_type: Option<InputType>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            ports: vec![9092],
            log_zone: LogZone::Utc,
            log_zone_name: "UTC".into(),
            input_type: None,
        }
    }
}

/// Everything a run needs.
#[derive(Clone, Debug)]
pub struct Options {
    /// What to do.
    pub command: Command,
    /// Which part of the report to show.
    pub view: View,
    /// How.
    pub format: Format,
    /// Colour in tables.
    pub color: bool,
    /// `-c`: only the number of matching rows.
    pub count: bool,
    /// `--stream`: `rebalances` of log files written as records settle
    /// ([`crate::watch::settled`]).
    pub stream: bool,
    /// `--width` (`Some(0)`: unlimited, also `--wide`); `None`: the
    /// terminal's.
    pub width: Option<u16>,
    /// No progress bar, no diagnostics summary.
    pub quiet: bool,
    /// Input paths (`-` = stdin).
    pub inputs: Vec<PathBuf>,
    /// Selection.
    pub filter: Filter,
    /// Reading.
    pub read: ReadOptions,
}

impl Options {
    /// Options for a command that reads nothing.
    pub fn only(command: Command) -> Options {
        Options {
            command,
            view: View::Rebalances,
            format: Format::Table,
            color: false,
            count: false,
            stream: false,
            width: None,
            quiet: true,
            inputs: Vec::new(),
            filter: Filter::default(),
            read: ReadOptions::default(),
        }
    }

    /// Options to analyse `inputs` with no filter (for tests and benchmarks).
    pub fn analyse(inputs: Vec<PathBuf>, view: View, format: Format) -> Options {
        Options {
            command: Command::Analyse,
            view,
            format,
            inputs,
            quiet: true,
            ..Options::only(Command::Analyse)
        }
    }
}
