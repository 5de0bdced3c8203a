//! The timeline in JSON and the report in JSON or NDJSON, written as their
//! events are matched, against the batch run.
//!
//! Takes: every capture and log of `fixtures/kafka` and `fixtures/lab`
//! alone, a lab capture with its broker's log, and each of these under a
//! filter keeping some events and one keeping none. Gives: a check that
//! what `kgtrace::run` writes (the events handed to the writer one by one
//! between the document's other parts, none kept in the report) is byte
//! for byte what rendering the batch run's whole report writes, with the
//! same count and diagnostics.

use std::path::{Path, PathBuf};

use kgtrace::options::Options;
use kgtrace::render::{Format, View};

use crate::util::{rendered_whole, through_run, Written};

/// Through `kgtrace::run`, which writes the events as they are matched.
/// The report it gives back holds none of them.
fn listed(opts: &Options) -> Written {
    let (written, report) = through_run(opts);
    assert!(
        report.timeline.is_empty(),
        "{:?} {:?}: {} events kept",
        opts.inputs,
        opts.view,
        report.timeline.len()
    );
    written
}

/// Where the two runs differ on `inputs`, one line per form and filter;
/// and how many of the runs listed at least one event.
fn differences(inputs: &[PathBuf]) -> (Vec<String>, usize) {
    let mut differ = Vec::new();
    let mut listing = 0;
    let forms = [
        (View::Timeline, Format::Json),
        (View::Report, Format::Json),
        (View::Report, Format::Ndjson),
    ];
    for (view, format) in forms {
        for group in [None, Some("^g1$"), Some("^no-such-group$")] {
            let mut opts = Options::analyse(inputs.to_vec(), view, format);
            opts.filter.groups = group
                .map(|g| regex::Regex::new(g).unwrap())
                .into_iter()
                .collect();
            let (got, want) = (listed(&opts), rendered_whole(&opts, view));
            if got.out.contains("\"ts\":") {
                listing += 1;
            }
            if let Some(d) = got.difference(&want) {
                differ.push(format!("{inputs:?} {view:?} {format:?} {group:?}: {d}"));
            }
        }
    }
    (differ, listing)
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixtures(folder: &str) -> Vec<PathBuf> {
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(root().join(folder))
        .expect("fixture folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e == "log" || e == "pcap" || e == "pcapng")
        })
        .collect();
    inputs.sort();
    inputs
}

#[test]
fn every_fixture_alone_lists_its_events_as_the_whole_report_does() {
    let inputs: Vec<PathBuf> = [fixtures("fixtures/kafka"), fixtures("fixtures/lab")].concat();
    assert!(inputs.len() >= 40, "{} inputs", inputs.len());
    let mut listing = 0;
    let mut differ = Vec::new();
    for input in &inputs {
        let (d, l) = differences(std::slice::from_ref(input));
        differ.extend(d);
        listing += l;
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    // The comparison saw events, not only empty lists.
    assert!(listing > inputs.len() * 3, "{listing} runs listed events");
}

#[test]
fn a_capture_with_its_brokers_log_lists_the_merged_events_as_the_whole_report_does() {
    let kafka = root().join("fixtures/kafka");
    let inputs = [
        kafka.join("ak39_ck_fifty.pcap"),
        kafka.join("ak39_ck_fifty.server.log"),
    ];
    let (differ, listing) = differences(&inputs);
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    assert!(listing >= 3, "{listing} runs listed events");
}
