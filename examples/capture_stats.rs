//! Reads captures through the capture and TCP stages only and prints what
//! they held, with throughput: a by-hand check and the throughput
//! measurement of those two stages.
//!
//! `cargo run --release --example capture_stats -- FILE... ` (`-` = stdin)

use kgtrace::event::Source;
use std::io::Read;
use std::time::Instant;

use kgtrace::capture::read_capture;
use kgtrace::tcp::{Reassembler, StreamEvent, TcpConfig};
use kgtrace::Diagnostics;

/// Totals of the stream events of one capture.
#[derive(Default, Debug)]
struct Tally {
    opened: u64,
    closed: u64,
    data_events: u64,
    data_bytes: u64,
    gaps: u64,
    gap_bytes: u64,
}

fn open(path: &str) -> std::io::Result<Box<dyn Read>> {
    if path == "-" {
        return Ok(Box::new(std::io::stdin().lock()));
    }
    Ok(Box::new(std::fs::File::open(path)?))
}

fn main() {
    let mut failed = false;
    for path in std::env::args().skip(1) {
        let input = match open(&path) {
            Ok(input) => input,
            Err(e) => {
                eprintln!("{path}: {e}");
                failed = true;
                continue;
            }
        };
        let mut diags = Diagnostics::default();
        let mut tcp_diags = Diagnostics::default();
        let mut tcp = Reassembler::new(TcpConfig::default(), Source::from(path.as_str()));
        let mut tally = Tally::default();
        let mut count = |e: StreamEvent<'_>| match e {
            StreamEvent::Opened { .. } => tally.opened += 1,
            StreamEvent::Data { bytes, .. } => {
                tally.data_events += 1;
                tally.data_bytes += bytes.len() as u64;
            }
            StreamEvent::Gap { missing_bytes, .. } => {
                tally.gaps += 1;
                tally.gap_bytes += missing_bytes;
            }
            StreamEvent::Closed { .. } => tally.closed += 1,
        };
        let start = Instant::now();
        let result = read_capture(input, &path, &mut diags, |s| {
            tcp.push(&s, &mut tcp_diags, &mut count)
        });
        tcp.finish(&mut tcp_diags, &mut count);
        let secs = start.elapsed().as_secs_f64();
        diags.merge(tcp_diags);
        match result {
            Ok(summary) => {
                let mb = summary.bytes as f64 / 1e6;
                println!(
                    "{path}: {} frames, {} tcp, {} bytes, links {:?}; {:?}",
                    summary.frames, summary.tcp_segments, summary.bytes, summary.link_types, tally
                );
                println!(
                    "  {:.3} s: {:.0} packets/s, {:.1} MB/s (captured bytes)",
                    secs,
                    summary.frames as f64 / secs,
                    mb / secs
                );
            }
            Err(e) => {
                println!("{path}: ERROR {e}");
                failed = true;
            }
        }
        for (kind, n) in &diags.counts {
            println!("  diag {kind:?}: {n}");
        }
        for d in diags.examples.iter().take(6) {
            println!("    e.g. {:?} at {}: {}", d.kind, d.at, d.detail);
        }
    }
    std::process::exit(i32::from(failed));
}
