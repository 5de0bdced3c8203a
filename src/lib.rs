//! kgtrace: why did my Kafka consumer group rebalance, who caused it, and
//! how long were we stopped?
//!
//! The pipeline, one module per stage, one named type between stages:
//!
//! ```text
//! pcap/pcapng ─ capture ─▶ Segment ─ tcp ─▶ StreamEvent ─ kafka ─▶ Exchange ─ normalize ─┐
//!                                                                                          ├▶ GroupEvent ─ timeline ─▶ Timeline ─ group ─▶ GroupHistory ─ assemble ─▶ Report ─ render ─▶ io::Write
//! server.log / client log / kafka-request.log ──────────────── logs ───────────────────────┘
//! ```
//!
//! `kgtrace watch` streams the same stages: the readers hand each packet's
//! and each line's events on through an [`input::Tap`] as they are read,
//! and instead of one sorted time line the [`watch`] engine keeps per
//! group a bounded window of events (in the time line's order, each log's
//! clock lined up with the captures' as pairs arrive; the middle of each
//! member's run of plain heartbeats, and of plain commits, folded out once
//! half a minute old, by the rule of [`timeline::HeartbeatFold`], the
//! commits kept as the stops stage reads them), folds the
//! data path as it arrives ([`stops::ClientFolder`], trimmed to the same
//! window) and runs `group` and `stops` over each group's window whenever
//! something may have changed one of its rounds:
//!
//! ```text
//! input (reader threads) ─ Tap ─▶ Flow ─ channel ─▶ watch::engine: per-group windows, folded data path ─ group + stops ─▶ started / completed / revised / withdrawn records ─ watch::line ─▶ io::Write (flushed per record)
//! ```
//!
//! - [`capture`] reads pcap and pcapng (pcap-parser) and slices packets
//!   (etherparse) into TCP [`capture::Segment`]s.
//! - [`tcp`] reassembles each connection and direction into contiguous
//!   stream data, with gaps and mid-stream starts as diagnostics.
//! - [`kafka`] splits streams into Kafka frames, decodes the group APIs
//!   (kafka-protocol) and pairs requests with responses into
//!   [`kafka::Exchange`]s.
//! - [`normalize`] turns exchanges into [`event::GroupEvent`]s.
//! - [`logs`] turns broker and client log lines into the same events.
//! - [`input`] drives all of the above for each input path, into vectors
//!   (batch: several inputs on separate threads, joined in the order named;
//!   a capture's packets and TCP, Kafka stage, and normalizing each on a
//!   thread of its own, in order; a compressed input inflated on a thread
//!   of its own, [`decompress`]; one large plain log alone read in parts,
//!   a core each, joined as one pass would read it; the
//!   data path folded as it is read into the index the stops stage looks
//!   up, [`stops::ClientFolder`], not kept; `decode`'s rows of one input,
//!   in a format whose rows stand alone, sent in request order to the
//!   writer while the capture is read, [`input::RowWindow`], its events
//!   only counted, up to 20,000 of each input kept to check for inputs
//!   that made no rebalance, [`input::EventSample`]; the group events of
//!   one capture file or rotation set, or of one log (in one pass, a
//!   minute of log time held for lines that come a little out of order),
//!   named alone, for the timeline in such a format, the same way,
//!   [`input::EventWindow`], and of several logs each so on a thread of
//!   its own, merged as they come; for `rebalances` and `groups`, the same
//!   window holding each group's events apart (a request waiting for its
//!   answer holds back its own group's only, `Window::by_group`) to a
//!   [`timeline::HeartbeatFold`] on the main thread, the data path folded
//!   as usual)
//!   or through an [`input::Tap`] (streaming, one input after the other).
//! - [`timeline`] merges every input in time order, lining log clocks up
//!   with the captures' ([`timeline::ClockLine`], which `watch` runs as its
//!   events flow); [`timeline::HeartbeatFold`] drops the middle of each
//!   stable member's run of plain heartbeats, and of plain commits, from
//!   one capture's ordered events as they come (what the rebuilding reads
//!   from them, their first and last say; every commit is noted first in
//!   the stops stage's [`stops::CommitBook`]).
//! - [`group`] rebuilds each group's coordinator state and names the trigger
//!   of every rebalance (for `rebalances` and `groups`, one group at a time
//!   with [`stops`], each group's events let go once it is costed:
//!   [`timeline::by_group`]).
//! - [`stops`] measures what each rebalance cost the consumers: partition
//!   stops, offsets, records processed twice (captures add Fetch traffic,
//!   held delta-encoded as it is folded).
//! - [`no_rebalance`] warns about inputs whose events make no rebalance.
//! - [`fast_hash`] is the hasher of the hot maps (foldhash).
//! - [`spread`] runs `group`'s and `stops`' per-group work on every core,
//!   results in group order (and `render`'s JSON, NDJSON and CSV lists,
//!   items rendered on every core in waves, written in order).
//! - [`assemble`] filters into the [`report::Report`] that [`render`] writes
//!   (the timeline view in `ndjson` or `csv`, or counted, is handed to
//!   [`render::TimelineRows`] row by row instead of kept in the report; the
//!   timeline in JSON and the report in JSON or NDJSON, to
//!   [`render::ListedEvents`], between the document's parts before and
//!   after the events; the report view keeps its events only for
//!   `--html`, elsewhere their count and span); [`unmatched`] says which
//!   filter left nothing, when one did.
//! - [`watch`] is `kgtrace watch`: reader threads (several files merged in
//!   time order), the streaming engine (memory bounded by its windows),
//!   `tail -F` following, Ctrl-C; and [`watch::settled`], `rebalances
//!   --stream` of log files in `ndjson` or `csv` through the same engine,
//!   each record written once final and every earlier one is (memory
//!   bounded by the windows, not the logs; asked for, since a group silent
//!   longer than a window comes back with only what its next rounds are
//!   judged from); the engine runs on a thread of its own and the records
//!   are written on the caller's:
//!
//! ```text
//! log files ─ reader threads ─ Tap ─▶ Flow ─ channel ─▶ watch::engine (rebuilt every 15 min of log time) ─ final records ─ in start order ─ channel ─▶ render::RebalanceRows ─▶ io::Write
//! ```

pub mod assemble;
pub mod capture;
pub mod cli;
pub mod coordinator;
pub mod decompress;
pub mod describe;
pub mod diagnostic;
pub mod error;
pub mod event;
pub mod fast_hash;
pub mod filter;
pub mod group;
pub mod input;
pub mod kafka;
pub mod logs;
pub mod no_rebalance;
pub mod normalize;
pub mod options;
pub mod progress;
pub mod render;
pub mod report;
pub mod spread;
pub mod stops;
pub mod tcp;
pub mod terminal;
pub mod time;
pub mod timeline;
pub mod unmatched;
pub mod watch;

use std::io::Write;

pub use diagnostic::{Diagnostic, DiagnosticKind, Diagnostics};
pub use error::{Error, Result};
pub use event::GroupEvent;
pub use time::Timestamp;

use options::{Command, Options};
use render::{RenderOptions, View};

/// What a run found, for the exit code and the stderr summary.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Rows of the chosen view that matched the filter.
    pub matched: u64,
    /// Every anomaly seen.
    pub diagnostics: Diagnostics,
    /// The report the run built, handed back instead of freed: a process
    /// about to exit need not free it (on a rebalance-dense input its
    /// millions of strings took 8 % of the run to free).
    pub report: Option<Box<report::Report>>,
}

/// Runs the pipeline on the inputs and writes the chosen view to `out`.
pub fn run(opts: &Options, render_opts: &RenderOptions, out: &mut dyn Write) -> Result<Outcome> {
    match &opts.command {
        Command::Completions(shell) => {
            cli::Cli::completions(*shell, out);
            return Ok(Outcome {
                matched: 1,
                ..Outcome::default()
            });
        }
        Command::Man => {
            cli::Cli::man(out)?;
            return Ok(Outcome {
                matched: 1,
                ..Outcome::default()
            });
        }
        Command::Watch { follow } => return watch::run(opts, *follow, out),
        _ => {}
    }
    // `--html FILE` is opened before the analysis: a path that cannot be
    // written fails at once, before minutes of reading and before anything
    // reaches stdout.
    let html = match &opts.command {
        Command::Report { html, .. } => html.as_deref(),
        _ => None,
    };
    let html_to_stdout = html.is_some_and(|p| p == std::path::Path::new("-"));
    let mut html_file = match html.filter(|_| !html_to_stdout) {
        Some(path) => Some(HtmlFile::open(path, &opts.inputs)?),
        None => None,
    };
    // The timeline view in a format whose rows stand alone (or only
    // counted) is written as its rows are made, not gathered first
    // (`--html` belongs to `report`, whose view is never the timeline).
    let stream_rows =
        opts.view == View::Timeline && (opts.count || render::TimelineRows::streams(opts.format));
    let decode_rows = decode_rows_stream(opts);
    let settled_rows = watch::settled::applies(opts);
    // The timeline in JSON, or the report in JSON or NDJSON (not also
    // drawn as a page, which needs every event), is written as its events
    // are matched, between the parts before and after them.
    let listed =
        !opts.count && html.is_none() && render::ListedEvents::applies(opts.view, opts.format);
    let analysed = if stream_rows {
        analyse_writing_timeline_rows(opts, out)
    } else if listed {
        analyse_listing_events(opts, out)
    } else if settled_rows {
        analyse_writing_settled_rebalances(opts, out)
    } else if decode_rows {
        analyse_writing_decode_rows(opts, out)
    } else {
        analyse(opts)
    };
    let (report, matched, mut diagnostics) = match analysed {
        Ok(found) => found,
        Err(e) => {
            if let Some(f) = html_file.take() {
                f.abandon();
            }
            return Err(e);
        }
    };
    if let Command::Coordinator { group, partitions } = &opts.command {
        let found = report.groups.iter().find(|g| &g.group == group);
        if found.is_none() && !opts.inputs.is_empty() && !report.groups.is_empty() {
            diagnostics.add(
                DiagnosticKind::NothingMatched,
                "coordinator",
                "group",
                unmatched::group_not_seen(group, &report.groups),
            );
        }
        let seen = found.and_then(|g| g.coordinator.clone());
        render::render_coordinator(
            group,
            coordinator::partition_for(group, *partitions),
            *partitions,
            seen.as_deref(),
            opts.format,
            out,
        )?;
        return Ok(Outcome {
            matched: 1,
            diagnostics,
            report: Some(Box::new(report)),
        });
    }
    if opts.count {
        render::render_count(matched, out)?;
    } else if stream_rows || decode_rows || settled_rows || listed {
        // Already written, row by row.
    } else if html_to_stdout {
        // `--html -`: the page is what stdout gets.
        render::render_html(&report, out)?;
    } else {
        render::render(&report, opts.view, opts.format, render_opts, out)?;
    }
    if let Some(f) = html_file {
        f.write(&report)?;
    }
    Ok(Outcome {
        matched,
        diagnostics,
        report: Some(Box::new(report)),
    })
}

/// The `--html` file, opened (not yet emptied) before the analysis.
struct HtmlFile {
    path: std::path::PathBuf,
    file: std::fs::File,
    /// Whether kgtrace made it: only then is it removed when the run fails.
    created: bool,
}

impl HtmlFile {
    /// Opens `path` for writing, naming it on any failure; never one of
    /// the inputs. An existing file keeps its content until the report is
    /// written.
    fn open(path: &std::path::Path, inputs: &[std::path::PathBuf]) -> Result<HtmlFile> {
        let cannot = |detail: String| Error::WriteFile {
            path: path.to_path_buf(),
            detail,
        };
        if is_an_input(path, inputs) {
            return Err(cannot(
                "it is one of the inputs (refusing to overwrite it)".into(),
            ));
        }
        let created = !path.exists();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| cannot(e.to_string()))?;
        Ok(HtmlFile {
            path: path.to_path_buf(),
            file,
            created,
        })
    }

    /// Writes the page, replacing what the file held.
    fn write(self, report: &report::Report) -> Result<()> {
        let cannot = |detail: String| Error::WriteFile {
            path: self.path.clone(),
            detail,
        };
        // Only a regular file is emptied: `/dev/stdout`, `/dev/null` or a
        // FIFO cannot be truncated and need not be.
        let regular = self.file.metadata().is_ok_and(|m| m.is_file());
        if regular {
            self.file.set_len(0).map_err(|e| cannot(e.to_string()))?;
        }
        let mut w = std::io::BufWriter::new(&self.file);
        render::render_html(report, &mut w)
            .and_then(|()| w.flush())
            .map_err(|e| cannot(e.to_string()))
    }

    /// The run failed: a file kgtrace made is removed, an existing one is
    /// left as it was.
    fn abandon(self) {
        if self.created {
            drop(self.file);
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Whether `out` names one of the inputs (the same canonical path).
fn is_an_input(out: &std::path::Path, inputs: &[std::path::PathBuf]) -> bool {
    let Ok(target) = std::fs::canonicalize(out) else {
        return false;
    };
    inputs
        .iter()
        .any(|i| std::fs::canonicalize(i).is_ok_and(|i| target == i))
}

/// Reads, merges, reconstructs and assembles: the whole analysis without
/// rendering (records and groups of one capture with its plain heartbeats
/// folded as it is read: [`timeline::HeartbeatFold`]).
pub fn analyse(opts: &Options) -> Result<(report::Report, u64, Diagnostics)> {
    if folds_heartbeats(opts) {
        return analyse_folding_heartbeats(opts);
    }
    analyse_with(opts, None)
}

/// [`analyse`] for the timeline view, its matching rows written to `out`
/// as they are made ([`render::TimelineRows`]), or only counted with `-c`.
fn analyse_writing_timeline_rows(
    opts: &Options,
    out: &mut dyn Write,
) -> Result<(report::Report, u64, Diagnostics)> {
    if opts.inputs.len() == 1 && !opts.filter.bounds_need_first_event() {
        return analyse_writing_timeline_as_read(opts, out);
    }
    if !opts.filter.bounds_need_first_event() && input::all_log_files(&opts.inputs, &opts.read) {
        return analyse_writing_merged_logs_timeline(opts, out);
    }
    if opts.count {
        return analyse_with(opts, Some(&mut |_: &report::TimelineEntry| Ok(())));
    }
    let mut rows = render::TimelineRows::new(opts.format, out);
    let found = analyse_with(opts, Some(&mut rows))?;
    rows.finish()?;
    Ok(found)
}

/// [`analyse`] for a view that [`render::ListedEvents`] writes: its
/// matching events written to `out` as they are made, the rest of the
/// document around them.
fn analyse_listing_events(
    opts: &Options,
    out: &mut dyn Write,
) -> Result<(report::Report, u64, Diagnostics)> {
    let mut listed = render::ListedEvents::new(opts.view, opts.format, out);
    let found = analyse_with(opts, Some(&mut listed))?;
    listed.finish(&found.0)?;
    Ok(found)
}

/// Whether `decode` can write its rows while the capture is read: in a
/// format whose rows stand alone (or only counted), from one input (the
/// rows of inputs read apart would need merging), under time bounds that
/// do not depend on the inputs' first event (which is known only at the
/// end).
fn decode_rows_stream(opts: &Options) -> bool {
    opts.view == View::Decode
        && (opts.count || render::ExchangeRows::streams(opts.format))
        && opts.inputs.len() == 1
        && !opts.filter.bounds_need_first_event()
}

/// Batches of rows the reader may send ahead of the writer.
const ROW_BATCHES_AHEAD: usize = 16;

/// [`analyse`] for `decode`, its matching rows written to `out` while the
/// capture is read (in request order, [`input::RowWindow`]), or only
/// counted with `-c`. The group events are counted, not kept, and no group
/// is rebuilt (the rows need neither; the summary line counts what reading
/// found): memory follows the live connections and the requests in
/// flight, not the capture's length.
fn analyse_writing_decode_rows(
    opts: &Options,
    out: &mut dyn Write,
) -> Result<(report::Report, u64, Diagnostics)> {
    let rows = (!opts.count).then(|| render::ExchangeRows::new(opts.format, out));
    let mut written = WrittenRows::new(rows, opts, View::Decode);
    let read = write_while_reading(
        |send, back| {
            let window = input::RowWindow::new(send, back);
            input::read_inputs_sending_rows(&opts.inputs, &opts.read, opts.quiet, window)
        },
        |batch| batch.iter().all(|row| written.write(row)),
    );
    let mut collected = read?;
    // Rows gathered after all (inputs that were not one unit), in order.
    let mut rest = std::mem::take(&mut collected.exchanges);
    assemble::in_request_order(&mut rest);
    rest.iter().all(|row| written.write(row));
    let (tally, matched) = written.finish()?;
    if !collected.events_not_kept {
        let rows_read = assemble::ViewRows::Written {
            tally: Box::new(tally),
            matched,
            events_not_kept: None,
        };
        return analyse_collected(opts, collected, rows_read, None);
    }
    check_sample(&mut collected);
    assemble_without_groups(opts, collected, tally, matched)
}

/// [`analyse`] for the timeline view of one capture file, rotation set or
/// log, its rows written to `out` while it is read (in the time line's
/// order, [`input::EventWindow`]), or only counted with `-c`: the events
/// are not kept and no group is rebuilt (the rows need neither) but for
/// the few kept to check for inputs that made no rebalance. Any other input
/// is merged and sorted at the end, as [`analyse_writing_timeline_rows`]
/// does.
fn analyse_writing_timeline_as_read(
    opts: &Options,
    out: &mut dyn Write,
) -> Result<(report::Report, u64, Diagnostics)> {
    let rows = (!opts.count).then(|| render::TimelineRows::new(opts.format, out));
    let mut written = WrittenRows::new(rows, opts, View::Timeline);
    let read = write_while_reading(
        |send, back| {
            let window = input::EventWindow::new(send, back);
            input::read_inputs_sending_events(&opts.inputs, &opts.read, opts.quiet, window)
        },
        |batch| {
            batch
                .iter()
                .all(|event| written.write(&describe::timeline_entry(event)))
        },
    );
    let mut collected = read?;
    if collected.events_not_kept {
        let (tally, matched) = written.finish()?;
        check_sample(&mut collected);
        return assemble_without_groups(opts, collected, tally, matched);
    }
    // Not one input the window takes: the events were gathered, nothing
    // was written.
    let rows_read = assemble::ViewRows::Exchanges(Vec::new());
    let WrittenRows { rows, .. } = written;
    let Some(mut rows) = rows else {
        let count = &mut |_: &report::TimelineEntry| Ok(());
        return analyse_collected(opts, collected, rows_read, Some(count));
    };
    let found = analyse_collected(opts, collected, rows_read, Some(&mut rows))?;
    rows.finish()?;
    Ok(found)
}

/// [`analyse`] for the timeline view of several log files (several
/// brokers' logs, a rotation set named file by file): each read on a
/// thread of its own, its events in the time line's order through a
/// window of its own ([`input::read_logs_sending_events`]), and the
/// streams merged here as they come, each row written once every log has
/// an event to compare it with or has ended ([`write_merged_while_reading`]):
/// the rows are the sorted list's (but for a line more than a minute late
/// in its log, said), in memory that follows the windows, not the logs (no
/// capture is there to line the logs' clocks up with).
fn analyse_writing_merged_logs_timeline(
    opts: &Options,
    out: &mut dyn Write,
) -> Result<(report::Report, u64, Diagnostics)> {
    let rows = (!opts.count).then(|| render::TimelineRows::new(opts.format, out));
    let mut written = WrittenRows::new(rows, opts, View::Timeline);
    let read = write_merged_while_reading(
        opts.inputs.len(),
        |channels| {
            let windows = channels
                .into_iter()
                .map(|(send, back)| input::EventWindow::new(send, back))
                .collect();
            input::read_logs_sending_events(&opts.inputs, &opts.read, opts.quiet, windows)
        },
        timeline::in_order,
        |event| written.write(&describe::timeline_entry(event)),
    );
    let mut collected = read?;
    let (tally, matched) = written.finish()?;
    check_sample(&mut collected);
    assemble_without_groups(opts, collected, tally, matched)
}

/// [`write_while_reading`] for `n` streams of rows, each in `order`: `read`
/// gets a channel pair per stream, and every row goes to `write`, in
/// `order` over all the streams, as soon as every stream has a row to
/// compare it with or has ended (rows that compare equal go in the order
/// of their streams). Each batch goes back to its reader once written.
fn write_merged_while_reading<T: Send>(
    n: usize,
    read: impl FnOnce(
            Vec<(
                std::sync::mpsc::SyncSender<Vec<T>>,
                std::sync::mpsc::Receiver<Vec<T>>,
            )>,
        ) -> Result<input::Collected>
        + Send,
    order: impl Fn(&T, &T) -> std::cmp::Ordering,
    mut write: impl FnMut(&T) -> bool,
) -> Result<input::Collected> {
    let mut channels = Vec::with_capacity(n);
    let mut receiving = Vec::with_capacity(n);
    for _ in 0..n {
        let (send, receive) = std::sync::mpsc::sync_channel(ROW_BATCHES_AHEAD);
        let (written_back, back) = std::sync::mpsc::channel();
        channels.push((send, back));
        receiving.push((receive, written_back));
    }
    std::thread::scope(|scope| {
        let reading = scope.spawn(move || read(channels));
        // Each stream's batch being written, and the next row's place in it.
        let mut heads: Vec<Option<(Vec<T>, usize)>> = (0..n).map(|_| None).collect();
        let mut ended = vec![false; n];
        loop {
            for (i, (receive, back)) in receiving.iter().enumerate() {
                while heads[i].is_none() && !ended[i] {
                    match receive.recv() {
                        Ok(batch) if batch.is_empty() => {
                            let _ = back.send(batch);
                        }
                        Ok(batch) => heads[i] = Some((batch, 0)),
                        Err(_) => ended[i] = true,
                    }
                }
            }
            let next = heads
                .iter()
                .enumerate()
                .filter_map(|(i, h)| h.as_ref().map(|(batch, at)| (i, &batch[*at])))
                .reduce(|a, b| if order(b.1, a.1).is_lt() { b } else { a })
                .map(|(i, _)| i);
            let Some(i) = next else {
                break;
            };
            let Some((batch, at)) = heads[i].as_mut() else {
                break;
            };
            if !write(&batch[*at]) {
                // A write failed: the readers' later rows are dropped.
                drop(receiving);
                break;
            }
            *at += 1;
            if *at == batch.len() {
                if let Some((batch, _)) = heads[i].take() {
                    let _ = receiving[i].1.send(batch);
                }
            }
        }
        reading
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// Whether the run can fold one capture's plain heartbeats as it is read
/// ([`timeline::HeartbeatFold`]): its views show rebuilt groups and
/// records only (not the time line, which shows every event), from one
/// input (events of inputs read apart would need merging first; a log's
/// events are gathered as before).
fn folds_heartbeats(opts: &Options) -> bool {
    matches!(opts.view, View::Rebalances | View::Groups) && opts.inputs.len() == 1
}

/// [`analyse`] for the records and groups of one capture file or rotation
/// set: its group events go through the time line's window
/// ([`input::EventWindow`]) to a
/// [`timeline::HeartbeatFold`] on this thread while the capture is read,
/// so a stable member's plain heartbeats and commits are not all kept to
/// the end (each commit is noted first in a [`stops::CommitBook`]); the
/// records are those of every event (the fold's module says why). Any
/// other input is read as [`analyse`] reads it.
fn analyse_folding_heartbeats(opts: &Options) -> Result<(report::Report, u64, Diagnostics)> {
    let mut fold = timeline::HeartbeatFold::new();
    let mut commits = stops::CommitBook::default();
    // A file or directory can be read again (below); stdin, a FIFO or a
    // device cannot, so there the window never lets an event go early (one
    // stream's times never go back: only the cap could put an event out
    // of order).
    let again = opts.inputs.iter().all(|p| {
        p.as_os_str() != "-" && std::fs::metadata(p).is_ok_and(|m| m.is_file() || m.is_dir())
    });
    let read = write_while_reading(
        |send, back| {
            let mut window = input::EventWindow::new(send, back).by_group();
            if !again {
                window = window.holding_at_most(usize::MAX);
            }
            input::read_inputs_folding_events(&opts.inputs, &opts.read, opts.quiet, window)
        },
        |batch| {
            for mut ev in batch.drain(..) {
                commits.see(&mut ev);
                fold.push(ev);
            }
            true
        },
    );
    let mut collected = read?;
    if collected.diagnostics.count(DiagnosticKind::RowOrder) > 0 && again {
        // An event came after later ones: the window's cap let events go
        // early (requests unanswered for long on a busy capture), or
        // times went back between files of a directory (captures of other
        // hours, not one rotation). The fold may have cut what the late
        // event needed: read again without it, keeping every event (what
        // was folded is let go first, not held through the second read).
        drop(fold);
        drop(commits);
        drop(collected);
        return analyse_with(opts, None);
    }
    if collected.events_not_kept {
        let folded = fold.finish();
        collected.captured = folded.events;
        collected.events_folded = folded.dropped;
        collected.commits = Some(commits);
        collected.events_not_kept = false;
    }
    analyse_collected(
        opts,
        collected,
        assemble::ViewRows::Exchanges(Vec::new()),
        None,
    )
}

/// Runs `read` on a thread of its own, handing it a channel for batches
/// of rows and one on which it gets each batch back once written (to be
/// freed by the thread that made it: freed by the writer's thread, each
/// string went back to another thread's heap), and gives every batch to
/// `write` on this thread (the one that holds the output, or the fold) as
/// it comes (rows `write` takes out are not sent back), until `write`
/// says stop (a write failed: the reader's later rows are dropped, not
/// waited for).
fn write_while_reading<T: Send, R: Send>(
    read: impl FnOnce(std::sync::mpsc::SyncSender<Vec<T>>, std::sync::mpsc::Receiver<Vec<T>>) -> Result<R>
        + Send,
    mut write: impl FnMut(&mut Vec<T>) -> bool,
) -> Result<R> {
    let (send, receive) = std::sync::mpsc::sync_channel(ROW_BATCHES_AHEAD);
    let (written_back, back) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        let reading = scope.spawn(move || read(send, back));
        while let Ok(batch) = receive.recv() {
            let mut batch = batch;
            let going_on = write(&mut batch);
            let _ = written_back.send(batch);
            if !going_on {
                drop(receive);
                break;
            }
        }
        reading
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// [`analyse`] for `rebalances` of log files in a format whose rows stand
/// alone: each record written as soon as it is final and every earlier one
/// is ([`watch::settled`]), none kept in the report. Memory follows the
/// streaming engine's windows, not the logs' length.
fn analyse_writing_settled_rebalances(
    opts: &Options,
    out: &mut dyn Write,
) -> Result<(report::Report, u64, Diagnostics)> {
    let rows = Some(render::RebalanceRows::new(opts.format, out));
    let mut written = WrittenRows::new(rows, opts, View::Rebalances);
    // The engine on a thread of its own, the records written on this one:
    // rendering them was a third of the engine's thread on a
    // rebalance-dense log.
    let read = write_while_reading(
        |send, back| {
            let mut batch = Vec::with_capacity(SETTLED_BATCH);
            let mut going_on = true;
            let read = watch::settled::run(opts, |handed| {
                let full = match handed {
                    watch::settled::Handed::Record(r) => {
                        batch.push(r);
                        batch.len() >= SETTLED_BATCH
                    }
                    watch::settled::Handed::CaughtUp => !batch.is_empty(),
                };
                if full {
                    going_on = hand_on(&mut batch, &send, &back);
                }
                going_on
            });
            if going_on && !batch.is_empty() {
                hand_on(&mut batch, &send, &back);
            }
            read
        },
        |batch| batch.iter().all(|r| written.write(r)),
    );
    let mut read = read?;
    if let Some(e) = written.failed.take() {
        // The engine may have read on past the failed write (up to its
        // next hand-on) and met a line that went back: the batch run is
        // not started for output that cannot be written.
        return Err(e.into());
    }
    let Some(back) = read.went_back.take() else {
        let (tally, matched) = written.finish()?;
        let collected = input::Collected {
            inputs: read.inputs,
            diagnostics: read.diagnostics,
            ..input::Collected::default()
        };
        return assemble_without_groups(opts, collected, tally, matched);
    };
    // A log went back in time past what the stream can place: the batch run
    // reads the inputs again and writes every record not yet written.
    // Its report (inputs, diagnostics, a warning if nothing matched) is the
    // run's.
    let (mut report, _, mut diagnostics) = analyse(opts)?;
    let rebalances = std::mem::take(&mut report.rebalances);
    watch::settled::finish_from_batch(back, &rebalances, &mut diagnostics, |r| written.write(r));
    let (_, matched) = written.finish()?;
    Ok((report, matched, diagnostics))
}

/// The most records `rebalances --stream` hands from the engine's thread
/// to the writer's at once (fewer when the engine has no more final
/// records for now: [`watch::settled::Handed::CaughtUp`]). With the
/// channel's [`ROW_BATCHES_AHEAD`], about a thousand records are out of
/// the engine and not yet freed at most.
const SETTLED_BATCH: usize = 64;

/// Sends `batch` to the writer and takes back an empty one (one the
/// writer is done with, its records freed here where they were made);
/// false once the writer stopped.
fn hand_on<T>(
    batch: &mut Vec<T>,
    send: &std::sync::mpsc::SyncSender<Vec<T>>,
    back: &std::sync::mpsc::Receiver<Vec<T>>,
) -> bool {
    let mut next = back
        .try_recv()
        .unwrap_or_else(|_| Vec::with_capacity(SETTLED_BATCH));
    next.clear();
    send.send(std::mem::replace(batch, next)).is_ok()
}

/// For a run whose rows were written as read: the groups of the events
/// it kept for the purpose ([`input::EventSample`]) rebuilt as
/// [`rebuild`] rebuilds them, for the same warnings about inputs whose
/// events made no rebalance (and, when every event was kept, about rounds
/// let go and logs' clocks far from the captures'). An input past the
/// sample's cap is not checked, and the groups it named count as
/// rebalanced for the others: none is warned about that the batch run
/// would not warn about.
fn check_sample(collected: &mut input::Collected) {
    let Some(sample) = collected.sample.take() else {
        return;
    };
    if sample.given_up {
        return;
    }
    let whole = !sample.overflowed();
    let timeline = timeline::merge(sample.captured, sample.logged);
    let histories = group::reconstruct(&timeline.events);
    if whole {
        timeline::warn_far_clocks(&timeline.clock_offsets, &mut collected.diagnostics);
        say_rounds_let_go(&histories, &mut collected.diagnostics);
    }
    let unseen = sample.unseen_groups;
    no_rebalance::explain_beside(
        &mut collected.inputs,
        &timeline.events,
        &collected.events_folded,
        &histories,
        |g| unseen.contains(g),
        &mut collected.diagnostics,
    );
}

/// The report of a run whose rows were written as read and whose events
/// were counted, not kept: no group was rebuilt, so it holds the inputs
/// and what reading found.
fn assemble_without_groups(
    opts: &Options,
    mut collected: input::Collected,
    tally: unmatched::Tally,
    matched: u64,
) -> Result<(report::Report, u64, Diagnostics)> {
    let rows_read = assemble::ViewRows::Written {
        tally: Box::new(tally),
        matched,
        events_not_kept: Some(collected.events_seen),
    };
    let (report, matched) = assemble::assemble(
        collected.inputs,
        rows_read,
        &timeline::Timeline::default(),
        Vec::new(),
        &mut collected.diagnostics,
        opts,
        None,
    )?;
    Ok((report, matched, collected.diagnostics))
}

/// A view's rows as they are written: the filter, the count, the first
/// write error (after which nothing more is written).
struct WrittenRows<'a, R> {
    rows: Option<render::Rows<'a, R>>,
    tally: unmatched::Tally,
    matched: u64,
    failed: Option<std::io::Error>,
}

impl<'a, R: render::StreamedRow + unmatched::Row> WrittenRows<'a, R> {
    /// `view`'s rows to `rows` (none with `-c`: only counted), filtered
    /// as `opts` says.
    fn new(rows: Option<render::Rows<'a, R>>, opts: &Options, view: View) -> Self {
        WrittenRows {
            rows,
            tally: assemble::ViewRows::tally(&opts.filter, None, view),
            matched: 0,
            failed: None,
        }
    }

    /// Writes `row` if the filter keeps it; false once a write failed.
    fn write(&mut self, row: &R) -> bool {
        if self.failed.is_some() {
            return false;
        }
        if self.tally.add(row) {
            self.matched += 1;
            if let Some(Err(e)) = self.rows.as_mut().map(|rows| rows.row(row)) {
                self.failed = Some(e);
            }
        }
        self.failed.is_none()
    }

    /// Ends the view (a CSV without rows still has its header): the tally
    /// and the rows kept, or the first write error.
    fn finish(self) -> Result<(unmatched::Tally, u64)> {
        if let Some(e) = self.failed {
            return Err(e.into());
        }
        if let Some(rows) = self.rows {
            rows.finish()?;
        }
        Ok((self.tally, self.matched))
    }
}

/// [`analyse`], handing the timeline view's rows to `rows` as they are
/// made instead of keeping them in the report.
fn analyse_with(
    opts: &Options,
    rows: Option<assemble::RowSink<'_>>,
) -> Result<(report::Report, u64, Diagnostics)> {
    let keep_exchanges = opts.view == View::Decode;
    let mut collected = input::read_inputs(&opts.inputs, &opts.read, keep_exchanges, opts.quiet)?;
    let exchanges = assemble::ViewRows::Exchanges(std::mem::take(&mut collected.exchanges));
    analyse_collected(opts, collected, exchanges, rows)
}

/// Merges, reconstructs and assembles what was read.
fn analyse_collected(
    opts: &Options,
    mut collected: input::Collected,
    rows_read: assemble::ViewRows,
    rows: Option<assemble::RowSink<'_>>,
) -> Result<(report::Report, u64, Diagnostics)> {
    let mut timeline = timeline::merge(
        std::mem::take(&mut collected.captured),
        std::mem::take(&mut collected.logged),
    );
    timeline::warn_far_clocks(&timeline.clock_offsets, &mut collected.diagnostics);
    let histories = if matches!(opts.view, View::Rebalances | View::Groups) {
        // These views need no event once the groups are rebuilt and costed.
        rebuild_group_by_group(timeline.take_events(), &mut collected)
    } else {
        rebuild(&timeline.events, &mut collected)
    };
    let (report, matched) = assemble::assemble(
        collected.inputs,
        rows_read,
        &timeline,
        histories,
        &mut collected.diagnostics,
        opts,
        rows,
    )?;
    Ok((report, matched, collected.diagnostics))
}

/// Every group rebuilt ([`group`]), inputs that made no rebalance told
/// ([`no_rebalance`]), then each rebalance costed ([`stops`]).
fn rebuild(events: &[GroupEvent], collected: &mut input::Collected) -> Vec<group::GroupHistory> {
    let mut histories = group::reconstruct(events);
    say_rounds_let_go(&histories, &mut collected.diagnostics);
    no_rebalance::explain(
        &mut collected.inputs,
        events,
        &collected.events_folded,
        &histories,
        &mut collected.diagnostics,
    );
    stops::apply_folded(
        &mut histories,
        events,
        std::mem::take(&mut collected.data),
        collected.commits.take(),
    );
    histories
}

/// [`rebuild`], one group at a time (on every core): each group rebuilt,
/// its events counted for [`no_rebalance`], its rebalances costed, and
/// then its events let go. The whole run's events, the data path's index
/// and every group's records were the batch run's peak together (a dense
/// capture's 240 k kept events, 5.6 M Fetch positions and 1,371 records);
/// here the records grow as the events go. The records are the same:
/// both stages judge each group from its own events alone.
fn rebuild_group_by_group(
    events: Vec<GroupEvent>,
    collected: &mut input::Collected,
) -> Vec<group::GroupHistory> {
    let groupless_notes = group::groupless_static_notes(&events);
    let workers = spread::workers_for(events.len());
    let mut sources = no_rebalance::Sources::default();
    let groups = timeline::by_group(events, |ev| sources.add(&ev));
    let mut costing = stops::Costing::new(
        std::mem::take(&mut collected.data),
        collected.commits.take(),
    );
    let mut jobs: Vec<GroupJob> = groups
        .into_iter()
        .map(|(group, events)| GroupJob {
            commits: Some(costing.commits_of(&group)),
            group,
            events,
            done: None,
        })
        .collect();
    spread::for_each_mut(&mut jobs, workers, |job| {
        let evs: Vec<&GroupEvent> = job.events.iter().collect();
        let mut h = group::reconstruct_one(&job.group, &evs, &groupless_notes);
        let seen = if h.rebalances.is_empty() {
            let mut counted = no_rebalance::Sources::default();
            evs.iter().for_each(|ev| counted.add(ev));
            Seen::Counted(counted)
        } else {
            let mut told: Vec<event::Source> = Vec::new();
            for ev in &evs {
                // Runs of one input's events are the rule: the last one
                // told is asked first, the whole list only when it differs.
                let source = &ev.evidence.source;
                if told.last() != Some(source) && !told.contains(source) {
                    told.push(source.clone());
                }
            }
            Seen::Told(told)
        };
        if let Some(commits) = job.commits.take() {
            costing.cost(&mut h, &evs, commits);
        }
        drop(evs);
        job.events = Vec::new();
        job.done = Some((h, seen));
    });
    let mut told = std::collections::BTreeSet::new();
    let mut histories = Vec::with_capacity(jobs.len());
    for (h, seen) in jobs.into_iter().filter_map(|j| j.done) {
        match seen {
            Seen::Counted(counted) => sources.merge(counted),
            Seen::Told(inputs) => told.extend(inputs),
        }
        histories.push(h);
    }
    say_rounds_let_go(&histories, &mut collected.diagnostics);
    no_rebalance::explain_counted(
        &mut collected.inputs,
        sources,
        &told,
        &collected.events_folded,
        &histories,
        &mut collected.diagnostics,
    );
    histories
}

/// One group's work in [`rebuild_group_by_group`].
struct GroupJob {
    group: event::Id,
    events: Vec<GroupEvent>,
    commits: Option<stops::GroupCostInput>,
    done: Option<(group::GroupHistory, Seen)>,
}

/// What a group's events tell [`no_rebalance`]: counted (the group did not
/// rebalance), or the inputs they came from (it did: no warning for them).
enum Seen {
    Counted(no_rebalance::Sources),
    Told(Vec<event::Source>),
}

/// A diagnostic for each group whose earliest rounds were not kept.
fn say_rounds_let_go(histories: &[group::GroupHistory], diagnostics: &mut Diagnostics) {
    for h in histories.iter().filter(|h| h.rounds_let_go > 0) {
        diagnostics.add(
            DiagnosticKind::Reconstruction,
            &h.summary.group,
            "rounds",
            format!(
                "{} earlier rebalances of group {} were not kept (a group keeps its newest {}: docs/limits.md)",
                h.rounds_let_go,
                h.summary.group,
                group::MAX_ROUNDS_PER_GROUP
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends each stream's batches on its channel, then ends it; what was
    /// written, and whether every send went through.
    fn merged(streams: Vec<Vec<Vec<(u32, u32)>>>, stop_after: usize) -> (Vec<(u32, u32)>, bool) {
        let mut written = Vec::new();
        let all_sent = std::sync::atomic::AtomicBool::new(true);
        write_merged_while_reading(
            streams.len(),
            |channels| {
                std::thread::scope(|scope| {
                    for ((send, _back), batches) in channels.into_iter().zip(streams) {
                        let all_sent = &all_sent;
                        scope.spawn(move || {
                            for batch in batches {
                                if send.send(batch).is_err() {
                                    all_sent.store(false, std::sync::atomic::Ordering::Relaxed);
                                }
                            }
                        });
                    }
                });
                Ok(input::Collected::default())
            },
            |a: &(u32, u32), b: &(u32, u32)| a.0.cmp(&b.0),
            |row| {
                written.push(*row);
                written.len() < stop_after
            },
        )
        .unwrap();
        (written, all_sent.into_inner())
    }

    #[test]
    fn streams_merged_while_read_come_out_in_order_ties_in_the_order_of_their_streams() {
        // (time, stream): each stream in order, in batches of any size.
        let streams = vec![
            vec![vec![(1, 0), (4, 0)], vec![], vec![(4, 0), (9, 0)]],
            vec![vec![(2, 1)], vec![(4, 1)], vec![(10, 1)]],
            vec![],
            vec![vec![(0, 3), (4, 3), (11, 3)]],
        ];
        let mut sorted: Vec<(u32, u32)> = streams.iter().flatten().flatten().copied().collect();
        sorted.sort_by_key(|&(t, stream)| (t, stream));
        let (written, all_sent) = merged(streams, usize::MAX);
        assert_eq!(written, sorted);
        assert!(all_sent);
    }

    #[test]
    fn a_write_that_fails_stops_the_merge_and_the_readers_are_not_left_waiting() {
        // Far more batches than the channels hold ahead: the readers would
        // block forever if the merge stopped taking them without hanging up.
        let stream = |s: u32| -> Vec<Vec<(u32, u32)>> { (0..200).map(|t| vec![(t, s)]).collect() };
        let (written, all_sent) = merged(vec![stream(0), stream(1)], 5);
        assert_eq!(written, [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0)]);
        assert!(!all_sent);
    }
}
