//! What one benchmark run does, in the child process that times it.
//!
//! Takes: a case name and an input path. Gives: the [`Work`] done:
//! `rebalances`/`decode` run `kgtrace::analyse` (the whole tool minus
//! printing), `decode-rows`/`timeline-rows` run `kgtrace::run` writing
//! `ndjson` to nowhere (one capture's rows written while it is read, as
//! the binary writes them), `tcp` and `kafka` run the capture stages alone and
//! `logread` the log reader alone, for attribution. Each stage is driven as
//! `src/input.rs` drives it.

use kgtrace::event::Source;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use kgtrace::capture::read_capture;
use kgtrace::kafka::{KafkaConfig, KafkaDecoder};
use kgtrace::logs::{read_log_path, LogOptions};
use kgtrace::options::Options;
use kgtrace::render::{Format, RenderOptions, View};
use kgtrace::tcp::{Reassembler, StreamEvent, TcpConfig};
use kgtrace::Diagnostics;

use crate::measure::{sample, Sample, Work};

/// One timed run of case `kind` on `paths` (the stages read the first).
pub fn run(kind: &str, paths: &[&Path]) -> Sample {
    let path = paths[0];
    match kind {
        "tcp" => sample(|| stage_tcp(path)),
        "kafka" => sample(|| stage_kafka(path)),
        "logread" => sample(|| stage_log_read(path)),
        "decode" => sample(|| analyse(paths, View::Decode)),
        "decode-rows" => sample(|| written(paths, View::Decode)),
        "timeline-rows" => sample(|| written(paths, View::Timeline)),
        "rebalance-rows" => sample(|| written(paths, View::Rebalances)),
        _ => sample(|| analyse(paths, View::Rebalances)),
    }
}

/// The label of what case `kind` counts in [`Work::found`].
pub fn found_label(kind: &str) -> &'static str {
    match kind {
        "rebalances" | "rebalance-rows" => "rebalances",
        "decode" | "decode-rows" | "kafka" => "exchanges",
        "logread" | "timeline-rows" => "events",
        _ => "connections",
    }
}

/// Size of `path` in bytes.
pub fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// `kgtrace::run` with `view` in `ndjson`, the rows written to nowhere:
/// `decode` and one capture's or log's `timeline` write them while reading,
/// `rebalances` of a log as each record becomes final. Found: the rows
/// written.
fn written(paths: &[&Path], view: View) -> Work {
    let inputs = paths.iter().map(|p| p.to_path_buf()).collect();
    let mut opts = Options::analyse(inputs, view, Format::Ndjson);
    // `rebalances` of a log written as records settle is asked for.
    opts.stream = view == View::Rebalances;
    let render = RenderOptions {
        color: false,
        width: None,
        brief: false,
    };
    let mut outcome =
        kgtrace::run(&opts, &render, &mut std::io::sink()).expect("run reads the bench input");
    let report = outcome.report.take().expect("a report");
    work_of(*report, paths, outcome.matched)
}

/// `kgtrace::analyse` on the inputs (read as `kgtrace` reads them: apart
/// when several), the report not freed, as `kgtrace` leaves it at exit. Bytes: the
/// files' sizes or, for a `.gz`, the unzipped bytes; records: packets or
/// lines; found: rebalances (exchanges for `decode`).
fn analyse(paths: &[&Path], view: View) -> Work {
    let inputs = paths.iter().map(|p| p.to_path_buf()).collect();
    let opts = Options::analyse(inputs, view, Format::Table);
    let (report, _, _) = kgtrace::analyse(&opts).expect("analyse reads the bench input");
    let found = if view == View::Decode {
        report.exchanges.len()
    } else {
        report.rebalances.len()
    };
    work_of(report, paths, found as u64)
}

/// The work a run's `report` says was done on `paths`, `found` what it
/// found. The child exits right after: as the binary does, the report is
/// left to the OS rather than freed string by string.
fn work_of(report: kgtrace::report::Report, paths: &[&Path], found: u64) -> Work {
    let on_disk: u64 = paths.iter().map(|p| file_len(p)).sum();
    let work = Work {
        bytes: report
            .inputs
            .iter()
            .map(|i| i.bytes)
            .sum::<u64>()
            .max(on_disk),
        records: report.inputs.iter().map(|i| i.records).sum(),
        found,
    };
    std::mem::forget(report);
    work
}

fn open(path: &Path) -> BufReader<File> {
    BufReader::with_capacity(1 << 20, File::open(path).expect("bench input opens"))
}

fn source(path: &Path) -> Source {
    Source::from(path.to_string_lossy().as_ref())
}

/// pcap reading and TCP reassembly; stream data counted and dropped.
pub fn stage_tcp(path: &Path) -> Work {
    let mut diags = Diagnostics::default();
    let mut tcp = Reassembler::new(TcpConfig::default(), source(path));
    let mut opened = 0u64;
    let mut count =
        |e: StreamEvent<'_>| opened += u64::from(matches!(e, StreamEvent::Opened { .. }));
    let summary = read_capture(
        open(path),
        &source(path),
        &mut Diagnostics::default(),
        |s| tcp.push(&s, &mut diags, &mut count),
    )
    .expect("capture reads");
    tcp.finish(&mut diags, &mut count);
    Work {
        bytes: file_len(path),
        records: summary.frames,
        found: opened,
    }
}

/// The above plus Kafka framing, decoding and pairing; exchanges dropped.
fn stage_kafka(path: &Path) -> Work {
    let (mut diags, mut d_kafka) = (Diagnostics::default(), Diagnostics::default());
    let mut tcp = Reassembler::new(TcpConfig::default(), source(path));
    let mut dec = KafkaDecoder::new(KafkaConfig::default(), source(path));
    let (mut out, mut exchanges) = (Vec::new(), 0u64);
    let summary = read_capture(
        open(path),
        &source(path),
        &mut Diagnostics::default(),
        |s| {
            tcp.push(&s, &mut diags, &mut |ev| {
                dec.on_stream_event(&ev, &mut d_kafka, &mut out)
            });
            exchanges += out.len() as u64;
            out.clear();
            dec.take_closed();
        },
    )
    .expect("capture reads");
    tcp.finish(&mut diags, &mut |ev| {
        dec.on_stream_event(&ev, &mut d_kafka, &mut out)
    });
    dec.finish(&mut d_kafka, &mut out);
    exchanges += out.len() as u64;
    Work {
        bytes: file_len(path),
        records: summary.frames,
        found: exchanges,
    }
}

/// The log reader alone (lines → events, the events kept as `analyse`
/// keeps them, then dropped).
fn stage_log_read(path: &Path) -> Work {
    let (mut diags, mut events) = (Diagnostics::default(), Vec::new());
    let summary =
        read_log_path(path, &LogOptions::default(), &mut diags, &mut events).expect("log reads");
    Work {
        bytes: summary.bytes,
        records: summary.lines,
        found: events.len() as u64,
    }
}
