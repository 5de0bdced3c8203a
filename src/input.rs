//! Reads every input into group events.
//!
//! Takes: the paths the user gave (captures, logs, directories, `-`).
//! Gives: [`Collected`]: events from captures and from logs (kept apart for
//! clock alignment), `decode` rows when asked, one [`InputSummary`] per
//! input, and all diagnostics. What an input is comes from its first bytes,
//! never from its name: captures arrive as `capture.out`, logs as `.txt`.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use crate::capture;
use crate::diagnostic::{DiagnosticKind, Diagnostics};
use crate::error::{Error, Result};
use crate::event::GroupEvent;
use crate::kafka::{Exchange, KafkaConfig, KafkaDecoder};
use crate::logs::{self, LogOptions};
use crate::normalize;
use crate::options::ReadOptions;
use crate::report::{ExchangeRow, InputSummary};
use crate::tcp::{Reassembler, TcpConfig};

/// Per-direction cap on out-of-order TCP bytes held while waiting for a hole.
const MAX_BUFFERED_PER_DIRECTION: usize = 8 * 1024 * 1024;
/// Connections tracked at once.
const MAX_CONNECTIONS: usize = 200_000;
/// Largest group-API frame buffered whole.
const MAX_FRAME_LEN: usize = 16 * 1024 * 1024;

/// What reading every input produced.
#[derive(Debug, Default)]
pub struct Collected {
    /// Events from captures.
    pub captured: Vec<GroupEvent>,
    /// Events from logs.
    pub logged: Vec<GroupEvent>,
    /// Exchanges as `decode` rows (only when asked).
    pub exchanges: Vec<ExchangeRow>,
    /// One summary per input.
    pub inputs: Vec<InputSummary>,
    /// Every anomaly.
    pub diagnostics: Diagnostics,
    /// Last exchange id handed out, so ids stay unique over all captures.
    pub last_exchange_id: u64,
}

/// Reads every input.
pub fn read_inputs(
    paths: &[std::path::PathBuf],
    opts: &ReadOptions,
    keep_exchanges: bool,
    quiet: bool,
) -> Result<Collected> {
    let mut out = Collected::default();
    for path in paths {
        read_one(path, opts, keep_exchanges, quiet, &mut out)?;
    }
    Ok(out)
}

fn read_one(
    path: &Path,
    opts: &ReadOptions,
    keep: bool,
    quiet: bool,
    out: &mut Collected,
) -> Result<()> {
    let name = path.to_string_lossy().to_string();
    let source: Arc<str> = Arc::from(name.as_str());
    let read_err = |e| Error::Read {
        path: path.to_path_buf(),
        source: e,
    };
    if name == "-" {
        let stdin = std::io::stdin();
        let mut reader = BufReader::with_capacity(1 << 20, stdin.lock());
        let head = reader.fill_buf().map_err(read_err)?.to_vec();
        return if capture::is_capture_magic(&head) {
            read_capture(reader, source, opts, keep, out)
        } else if head.is_empty() || logs::looks_like_log(&head) {
            read_log(reader, source, opts, out)
        } else {
            Err(unknown_input(path, &head))
        };
    }
    if path.is_dir() {
        return read_log_path(path, source, opts, out);
    }
    let mut file = File::open(path).map_err(read_err)?;
    let len = file.metadata().ok().map(|m| m.len());
    let mut head = vec![0u8; 64 * 1024];
    let n = read_head(&mut file, &mut head).map_err(read_err)?;
    let head = &head[..n];
    if !capture::is_capture_magic(head) && !head.is_empty() && !logs::looks_like_log(head) {
        return Err(unknown_input(path, head));
    }
    if capture::is_capture_magic(head) {
        let file = File::open(path).map_err(read_err)?;
        let reader = crate::progress::wrap(file, len, &name, quiet);
        return read_capture(
            BufReader::with_capacity(1 << 20, reader),
            source,
            opts,
            keep,
            out,
        );
    }
    read_log_path(path, source, opts, out)
}

/// Neither a capture nor a log: name the file and show its first bytes.
fn unknown_input(path: &Path, head: &[u8]) -> Error {
    let magic = head
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ");
    Error::UnknownInput {
        path: path.to_path_buf(),
        magic,
    }
}

fn read_head(file: &mut File, head: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < head.len() {
        match file.read(&mut head[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

fn read_log<R: BufRead>(
    reader: R,
    source: Arc<str>,
    opts: &ReadOptions,
    out: &mut Collected,
) -> Result<()> {
    let mut events = Vec::new();
    let summary = logs::read_log(
        reader,
        source.clone(),
        &log_options(opts),
        &mut out.diagnostics,
        &mut events,
    )?;
    push_log_summary(out, &source, summary, events);
    Ok(())
}

fn read_log_path(
    path: &Path,
    source: Arc<str>,
    opts: &ReadOptions,
    out: &mut Collected,
) -> Result<()> {
    let mut events = Vec::new();
    let summary = logs::read_log_path(path, &log_options(opts), &mut out.diagnostics, &mut events)?;
    push_log_summary(out, &source, summary, events);
    Ok(())
}

fn log_options(opts: &ReadOptions) -> LogOptions {
    LogOptions {
        zone: opts.log_zone.clone(),
    }
}

fn push_log_summary(
    out: &mut Collected,
    source: &str,
    summary: logs::LogSummary,
    events: Vec<GroupEvent>,
) {
    out.inputs.push(InputSummary {
        path: source.to_string(),
        kind: "log".into(),
        records: summary.lines,
        bytes: summary.bytes,
        events: events.len() as u64,
        first_ts: events.iter().map(|e| e.ts).min(),
        last_ts: events.iter().map(|e| e.ts).max(),
        clock_offset_ms: None,
    });
    // Moving the first input's events in costs nothing; extending an
    // empty vector would copy them all (a 1 GB log holds millions).
    if out.logged.is_empty() {
        out.logged = events;
    } else {
        out.logged.extend(events);
    }
}

/// The capture pipeline: segments → streams → exchanges → events. Exchanges
/// are drained as they complete so memory follows live connections, not
/// the capture's size.
fn read_capture<R: std::io::Read>(
    reader: R,
    source: Arc<str>,
    opts: &ReadOptions,
    keep: bool,
    out: &mut Collected,
) -> Result<()> {
    let tcp_config = TcpConfig {
        kafka_ports: opts.ports.clone(),
        max_buffered_per_direction: MAX_BUFFERED_PER_DIRECTION,
        max_connections: MAX_CONNECTIONS,
    };
    let kafka_config = KafkaConfig {
        ports: opts.ports.clone(),
        detect_ports: true,
        max_frame_len: MAX_FRAME_LEN,
    };
    let mut reassembler = Reassembler::new(tcp_config, source.clone());
    let mut decoder = KafkaDecoder::new(kafka_config, source.clone());
    decoder.continue_exchange_ids(out.last_exchange_id);
    let (mut d_capture, mut d_tcp, mut d_kafka) = (
        Diagnostics::default(),
        Diagnostics::default(),
        Diagnostics::default(),
    );
    let mut sink = ExchangeSink {
        source: source.clone(),
        keep,
        events: Vec::new(),
        rows: Vec::new(),
        pending: Vec::new(),
    };
    let summary = capture::read_capture(reader, &source, &mut d_capture, |segment| {
        reassembler.push(&segment, &mut d_tcp, &mut |ev| {
            decoder.on_stream_event(&ev, &mut d_kafka, &mut sink.pending)
        });
        if sink.pending.len() >= 256 {
            sink.drain(&mut decoder);
        }
    })?;
    reassembler.finish(&mut d_tcp, &mut |ev| {
        decoder.on_stream_event(&ev, &mut d_kafka, &mut sink.pending)
    });
    decoder.finish(&mut d_kafka, &mut sink.pending);
    sink.drain(&mut decoder);
    out.last_exchange_id = decoder.last_exchange_id();
    note_snap_length(&summary, decoder.cut_frames(), &source, &mut d_capture);
    for d in [d_capture, d_tcp, d_kafka] {
        out.diagnostics.merge(d);
    }
    out.inputs.push(InputSummary {
        path: source.to_string(),
        kind: "capture".into(),
        records: summary.frames,
        bytes: summary.bytes,
        events: sink.events.len() as u64,
        first_ts: summary.first_ts,
        last_ts: summary.last_ts,
        clock_offset_ms: None,
    });
    out.captured.append(&mut sink.events);
    out.exchanges.append(&mut sink.rows);
    Ok(())
}

/// One note per capture whose snap length cut packets: how many, at what
/// length, how many Kafka messages were decoded only in part, and how to
/// capture whole packets next time.
fn note_snap_length(
    summary: &capture::CaptureSummary,
    cut_frames: u64,
    source: &str,
    diags: &mut Diagnostics,
) {
    if summary.cut_packets == 0 {
        return;
    }
    let snap = summary
        .snap_len
        .map_or("a small snap length".to_string(), |n| {
            format!("a snap length of {n} bytes")
        });
    let detail = format!(
        "{} packets were cut by {snap}; {cut_frames} Kafka messages were decoded only as far \
         as their captured bytes go (marked truncated: what was cut is unknown, not empty); \
         capture with `tcpdump -s 0` to keep whole packets",
        summary.cut_packets
    );
    diags.add(DiagnosticKind::SnapLength, source, "whole capture", detail);
}

struct ExchangeSink {
    source: Arc<str>,
    keep: bool,
    events: Vec<GroupEvent>,
    rows: Vec<ExchangeRow>,
    pending: Vec<Exchange>,
}

impl ExchangeSink {
    fn drain(&mut self, decoder: &mut KafkaDecoder) {
        for closed in decoder.take_closed() {
            self.events
                .push(normalize::events_from_close(&closed, &self.source));
        }
        for ex in self.pending.drain(..) {
            self.events
                .extend(normalize::events_from_exchange(&ex, &self.source));
            if self.keep {
                self.rows.push(row_of(&ex));
            }
        }
    }
}

fn row_of(ex: &Exchange) -> ExchangeRow {
    ExchangeRow {
        ts: ex.ts,
        api_key: ex.api_key,
        api: ex.api.to_string(),
        api_version: ex.api_version,
        correlation_id: ex.correlation_id,
        client_id: ex.client_id.clone(),
        connection: ex.connection.clone(),
        request_frame: ex.request_frame,
        response_frame: ex.response_frame,
        latency_ms: ex.latency_ms,
        group_id: ex.group_id.clone(),
        member_id: ex.member_id.clone(),
        generation_id: ex.generation_id,
        error_code: ex.error_code,
        error: ex.error.map(str::to_string),
        client_software: ex.client_software.clone(),
    }
}
