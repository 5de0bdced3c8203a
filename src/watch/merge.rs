//! Several inputs read at once, handed on in time order.
//!
//! Takes: one channel per input (files read to their end: several brokers'
//! logs, captures from several hosts), each carrying that input's flows in
//! the order its reader found them. Gives: the flows of all of them on one
//! channel, earliest first, each input's own order kept.
//!
//! Why: the engine keeps per group only the last minutes of event time
//! behind the newest event it has seen. Read one after the other, a
//! second broker's log (the same hours as the first's) would arrive after
//! the first had moved the engine's clock to its end: its events would be
//! older than every window and its groups' rounds judged without the
//! events the first log had for them (a group whose coordinator moved
//! from one broker to the other). A k-way merge of the inputs' heads keeps
//! the engine's clock where every input is. Memory: one flow per input and
//! each reader's bounded channel. Inputs that are live (a pipe, a followed
//! file) are not merged: waiting for their next event would hold the
//! others back for as long as they are quiet.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, SyncSender};

use crate::error::Error;

use crate::input::Flow;
use crate::time::Timestamp;

use super::Message;

/// Forwards the flows of `inputs` to `out` in time order (by each flow's
/// earliest event; an input's flows keep their order; ties go to the input
/// named first). A reader's error is forwarded at once (it stops the run);
/// the inputs' ends are forwarded last, in the order the inputs were named,
/// so that what they say comes out in the same order every run.
pub(super) fn in_time_order(inputs: Vec<(PathBuf, Receiver<Message>)>, out: SyncSender<Message>) {
    let n = inputs.len();
    let mut heads: Vec<Option<(Timestamp, Flow)>> = (0..n).map(|_| None).collect();
    let mut open = vec![true; n];
    let mut ends: Vec<Option<Message>> = (0..n).map(|_| None).collect();
    loop {
        for i in 0..n {
            while open[i] && heads[i].is_none() {
                match inputs[i].1.recv() {
                    // An empty flow has nothing to place: not waited for.
                    Ok(Message::Flow(flow)) => {
                        if let Some(t) = flow.earliest() {
                            heads[i] = Some((t, flow));
                        }
                    }
                    Ok(Message::Done(Err(e))) => {
                        open[i] = false;
                        if out.send(Message::Done(Err(e))).is_err() {
                            return;
                        }
                    }
                    Ok(end) => {
                        open[i] = false;
                        ends[i] = Some(end);
                    }
                    // A reader gone without its end (it panicked): an error,
                    // not a clean end with part of the input read.
                    Err(_) => {
                        open[i] = false;
                        let gone = Error::Read {
                            path: inputs[i].0.clone(),
                            source: std::io::Error::other("its reader stopped before the end"),
                        };
                        if out.send(Message::Done(Err(gone))).is_err() {
                            return;
                        }
                    }
                }
            }
        }
        let earliest = (0..n)
            .filter_map(|i| heads[i].as_ref().map(|(t, _)| (*t, i)))
            .min();
        let Some((_, i)) = earliest else {
            break;
        };
        let Some((_, flow)) = heads[i].take() else {
            break;
        };
        // The engine gone (a stop): the readers end as their sends fail.
        if out.send(Message::Flow(flow)).is_err() {
            return;
        }
    }
    for end in ends.into_iter().flatten() {
        if out.send(end).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{ClientRef, EventKind, Evidence, GroupEvent, Location};
    use std::sync::mpsc::sync_channel;
    use std::sync::Arc;

    fn logged(source: &str, times: &[i64]) -> Flow {
        Flow::Logged(
            times
                .iter()
                .map(|t| GroupEvent {
                    ts: Timestamp(*t),
                    group: Some("g".into()),
                    member_id: None,
                    group_instance_id: None,
                    generation_id: None,
                    client: Arc::new(ClientRef::default()),
                    kind: EventKind::ConnectionClosed { reset: false },
                    evidence: Evidence {
                        source: source.into(),
                        at: Location::Line { line: 1 },
                    },
                    truncated: false,
                })
                .collect(),
        )
    }

    /// Sends `flows` then an end on a channel of room 1 from a thread of
    /// its own (as a reader does, blocking when the merge is behind).
    fn reader(flows: Vec<Flow>) -> Receiver<Message> {
        let (tx, rx) = sync_channel(1);
        std::thread::spawn(move || {
            for f in flows {
                let _ = tx.send(Message::Flow(f));
            }
            let _ = tx.send(Message::Done(Ok(Default::default())));
        });
        rx
    }

    fn merged(inputs: Vec<Receiver<Message>>) -> Vec<String> {
        let inputs = inputs
            .into_iter()
            .enumerate()
            .map(|(i, rx)| (PathBuf::from(format!("input{i}")), rx))
            .collect();
        let (tx, rx) = sync_channel(1);
        std::thread::spawn(move || in_time_order(inputs, tx));
        rx.iter()
            .map(|m| match m {
                Message::Flow(Flow::Logged(evs)) => {
                    format!("{}@{}", evs[0].evidence.source, evs[0].ts.0)
                }
                Message::Flow(_) => "other".into(),
                Message::Done(Ok(_)) => "end".into(),
                Message::Done(Err(e)) => format!("error {e}"),
            })
            .collect()
    }

    #[test]
    fn flows_of_several_inputs_come_out_earliest_first_and_ends_last() {
        let a = reader(vec![
            logged("a", &[1]),
            logged("a", &[5]),
            logged("a", &[9]),
        ]);
        let b = reader(vec![
            logged("b", &[2]),
            logged("b", &[3]),
            logged("b", &[10]),
        ]);
        let c = reader(vec![]);
        assert_eq!(
            merged(vec![a, b, c]),
            ["a@1", "b@2", "b@3", "a@5", "a@9", "b@10", "end", "end", "end"]
        );
    }

    #[test]
    fn an_input_keeps_its_own_order_and_ties_go_to_the_first_named() {
        // A capture's events come in exchange completion order, not quite
        // in time order: its flows are never reordered among themselves.
        let a = reader(vec![logged("a", &[4]), logged("a", &[2])]);
        let b = reader(vec![logged("b", &[4]), logged("b", &[3])]);
        assert_eq!(
            merged(vec![a, b]),
            ["a@4", "a@2", "b@4", "b@3", "end", "end"]
        );
    }

    #[test]
    fn a_reader_gone_without_its_end_is_an_error_not_a_clean_end() {
        let (tx, gone) = sync_channel(1);
        std::thread::spawn(move || {
            let _ = tx.send(Message::Flow(logged("b", &[2])));
            // Dropped here without its end, as a panicking reader's is.
        });
        let a = reader(vec![logged("a", &[1])]);
        let got = merged(vec![a, gone]);
        assert_eq!(got.len(), 4, "{got:?}");
        assert!(got[2].starts_with("error cannot read 'input1'"), "{got:?}");
        assert_eq!(got[3], "end");
    }

    #[test]
    fn a_flow_is_placed_by_its_earliest_event_and_empty_flows_wait_for_nothing() {
        let a = reader(vec![logged("a", &[]), logged("a", &[7, 1])]);
        let b = reader(vec![logged("b", &[5])]);
        assert_eq!(merged(vec![a, b]), ["a@7", "b@5", "end", "end"]);
    }
}
