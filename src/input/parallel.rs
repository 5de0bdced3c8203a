//! Several inputs read at once, joined as if read one after the other.
//!
//! Takes: the units the user named (files, directories, stdin) and the
//! function that reads one into a [`Collected`]. Gives: one [`Collected`]
//! equal to reading them in order into the same one: each unit is read on
//! one of up to `available_parallelism` threads into a [`Collected`] of its
//! own, then the results are joined in the order named. A rotation set is
//! one unit (its files continue each other's connections). What one unit's
//! reading takes from the units before it is put right at the join:
//! exchange ids continue the previous unit's (shifted by its last id), and
//! a unit whose decoded lists could have met the run's budget
//! ([`crate::kafka::MAX_KEPT_PER_RUN`], left by the units before it) is
//! read again, with the rest, after them. stdin cannot be read twice: with
//! it among the units, the units are read in order on this thread (a
//! capture's own stages still run on threads of their own, in order:
//! [`super::pipeline`]).

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use super::{move_all, Collected};
use crate::error::Result;
use crate::kafka::{MAX_KEPT_PER_MESSAGE, MAX_KEPT_PER_RUN};

/// Reads `units` with `read` (apart on several threads when `apart` and
/// there are several units and cores) and joins the results in order.
pub(super) fn read_units<U: Sync>(
    units: &[U],
    apart: bool,
    read: impl Fn(&U, &mut Collected) -> Result<()> + Sync,
) -> Result<Collected> {
    let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
    read_units_with(units, if apart { cores } else { 1 }, read)
}

/// [`read_units`] with at most `workers` threads.
fn read_units_with<U: Sync>(
    units: &[U],
    workers: usize,
    read: impl Fn(&U, &mut Collected) -> Result<()> + Sync,
) -> Result<Collected> {
    let workers = workers.min(units.len());
    let mut out = Collected::default();
    if workers <= 1 {
        for unit in units {
            read(unit, &mut out)?;
        }
        return Ok(out);
    }
    let results = read_apart(units, workers, &read);
    for (i, result) in results.into_iter().enumerate() {
        let unit = result?;
        if !independent(&out, &unit) {
            // What it decoded depended on the budget the units before it
            // left: read it and the rest again, in order.
            for unit in &units[i..] {
                read(unit, &mut out)?;
            }
            return Ok(out);
        }
        join(&mut out, unit);
    }
    Ok(out)
}

/// Each unit read into its own [`Collected`] by `workers` threads taking
/// the next unit in order; the results in the units' order.
fn read_apart<U: Sync>(
    units: &[U],
    workers: usize,
    read: &(impl Fn(&U, &mut Collected) -> Result<()> + Sync),
) -> Vec<Result<Collected>> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Result<Collected>>>> =
        units.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(unit) = units.get(i) else { break };
                let mut out = Collected::default();
                let result = read(unit, &mut out).map(|()| out);
                *slots[i].lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
            });
        }
    });
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(PoisonError::into_inner)
                .expect("every unit was read: the scope joined its threads")
        })
        .collect()
}

/// Whether `unit`, read from nothing, read what it would have read after
/// `before`: the decoded lists' budget is the only state one unit leaves the
/// next. With `before`'s bytes spent, every message's limit is still the
/// per-message one when `unit`'s own bytes and one more message fit.
fn independent(before: &Collected, unit: &Collected) -> bool {
    before.kept_bytes == 0
        || before
            .kept_bytes
            .saturating_add(unit.kept_bytes)
            .saturating_add(MAX_KEPT_PER_MESSAGE)
            <= MAX_KEPT_PER_RUN
}

/// Appends `unit` to `out` as reading it after `out`'s inputs would have:
/// its exchange ids continue `out`'s.
pub(super) fn join(out: &mut Collected, mut unit: Collected) {
    let base = out.last_exchange_id;
    if base > 0 {
        for event in &mut unit.captured {
            if let Some(id) = event.kind.exchange_mut() {
                *id += base;
            }
        }
    }
    out.last_exchange_id = base + unit.last_exchange_id;
    out.kept_bytes += unit.kept_bytes;
    move_all(&mut out.captured, &mut unit.captured);
    move_all(&mut out.logged, &mut unit.logged);
    out.data.append(std::mem::take(&mut unit.data));
    out.events_seen += unit.events_seen;
    if let (Some(sample), Some(more)) = (&mut out.sample, unit.sample.take()) {
        sample.absorb(more);
    }
    move_all(&mut out.exchanges, &mut unit.exchanges);
    out.inputs.append(&mut unit.inputs);
    out.diagnostics.merge(unit.diagnostics);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::report::InputSummary;

    fn summary(path: &str) -> InputSummary {
        InputSummary {
            path: path.into(),
            kind: "log".into(),
            read_as: "log".into(),
            records: 0,
            not_understood: 0,
            bytes: 0,
            events: 0,
            first_ts: None,
            last_ts: None,
            clock_offset_ms: None,
            warning: None,
        }
    }

    #[test]
    fn units_read_apart_join_in_the_order_named() {
        let units: Vec<u64> = (0..9).collect();
        let read = |u: &u64, out: &mut Collected| {
            // Later units finish first.
            std::thread::sleep(std::time::Duration::from_millis(20 - 2 * u));
            out.inputs.push(summary(&u.to_string()));
            out.last_exchange_id += *u;
            Ok(())
        };
        let apart = read_units_with(&units, 3, read).unwrap();
        let in_order = read_units_with(&units, 1, read).unwrap();
        let names = |c: &Collected| c.inputs.iter().map(|i| i.path.clone()).collect::<Vec<_>>();
        assert_eq!(names(&apart), names(&in_order));
        assert_eq!(apart.last_exchange_id, (0..9).sum::<u64>());
    }

    #[test]
    fn the_first_failing_unit_in_order_is_the_error() {
        let units = [0u8, 1, 2];
        let read = |u: &u8, _: &mut Collected| match u {
            0 => Ok(()),
            n => Err(Error::InvalidOption {
                flag: "unit",
                value: n.to_string(),
                hint: String::new(),
            }),
        };
        let err = read_units_with(&units, 2, read).unwrap_err();
        assert!(err.to_string().contains("unit '1'"), "{err}");
    }

    #[test]
    fn a_unit_that_could_meet_the_budget_is_read_again_after_the_others() {
        let units = [0usize, 1];
        let calls = AtomicUsize::new(0);
        let read = |u: &usize, out: &mut Collected| {
            calls.fetch_add(1, Ordering::Relaxed);
            out.kept_bytes += MAX_KEPT_PER_RUN / 2 + u;
            out.inputs.push(summary(&u.to_string()));
            Ok(())
        };
        let got = read_units_with(&units, 2, read).unwrap();
        assert_eq!(calls.load(Ordering::Relaxed), 3, "unit 1 read twice");
        assert_eq!(got.kept_bytes, MAX_KEPT_PER_RUN + 1);
        assert_eq!(got.inputs.len(), 2);
    }
}
