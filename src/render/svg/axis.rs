//! The time axis of a timeline picture.
//!
//! Takes: the picture's time range in nanoseconds. Gives: tick instants at
//! a round step (1, 2, 5 × a power of ten for sub-second spans; 1, 2, 5,
//! 10, 15, 30 s or min; hours) aligned to the UTC clock, and their labels.

use crate::render::human;
use crate::time::Timestamp;

const MS: i64 = 1_000_000;
const SEC: i64 = 1_000 * MS;

/// Steps a tick can take, smallest first.
const STEPS: [i64; 31] = [
    MS,
    2 * MS,
    5 * MS,
    10 * MS,
    20 * MS,
    50 * MS,
    100 * MS,
    200 * MS,
    500 * MS,
    SEC,
    2 * SEC,
    5 * SEC,
    10 * SEC,
    15 * SEC,
    30 * SEC,
    60 * SEC,
    120 * SEC,
    300 * SEC,
    600 * SEC,
    900 * SEC,
    1_800 * SEC,
    3_600 * SEC,
    7_200 * SEC,
    10_800 * SEC,
    21_600 * SEC,
    43_200 * SEC,
    86_400 * SEC,
    7 * 86_400 * SEC,
    28 * 86_400 * SEC,
    91 * 86_400 * SEC,
    364 * 86_400 * SEC,
];

/// At most this many ticks across the plot.
const MAX_TICKS: i64 = 10;

/// Tick instants (ns) within `[start, end]` and the step between them.
pub(crate) fn ticks(start: i64, end: i64) -> (Vec<i64>, i64) {
    let span = end.saturating_sub(start).max(1);
    let step = STEPS
        .iter()
        .copied()
        .find(|s| span / s <= MAX_TICKS)
        .unwrap_or(STEPS[STEPS.len() - 1]);
    let first = start
        .div_euclid(step)
        .saturating_add(1)
        .saturating_mul(step);
    let ticks = (0..=MAX_TICKS + 1)
        .map(|i| first.saturating_add(i * step))
        .take_while(|t| *t <= end)
        .collect();
    (ticks, step)
}

/// `12:00:40` for whole-second steps, `12:00:40.250` below a second,
/// `2024-05-01` for steps of a day or more.
pub(crate) fn label(t: i64, step: i64) -> String {
    if step >= 86_400 * SEC {
        return human::date(Timestamp(t));
    }
    let clock = human::clock(Timestamp(t));
    let keep = if step % SEC == 0 { 8 } else { 12 };
    clock.get(..keep).unwrap_or(&clock).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_four_minute_span_gets_thirty_second_ticks_on_the_clock() {
        let base = 1_714_564_800 * SEC;
        let (ticks, step) = ticks(base + 1_020 * MS, base + 268_400 * MS);
        assert_eq!(step, 30 * SEC);
        assert_eq!(ticks[0], base + 30 * SEC);
        assert_eq!(label(ticks[0], step), "12:00:30");
        assert!(ticks.len() <= MAX_TICKS as usize);
    }

    #[test]
    fn sub_second_spans_get_millisecond_labels() {
        let base = 1_714_564_800 * SEC;
        let (ticks, step) = ticks(base, base + 400 * MS);
        assert_eq!(step, 50 * MS);
        assert_eq!(label(ticks[0], step), "12:00:00.050");
    }

    #[test]
    fn spans_of_months_get_date_labels() {
        let base = 1_714_564_800 * SEC;
        let (ticks, step) = ticks(base, base + 200 * 86_400 * SEC);
        assert_eq!(step, 28 * 86_400 * SEC);
        assert_eq!(label(ticks[0], step).len(), "2024-05-01".len());
    }

    #[test]
    fn an_empty_span_gives_no_panic() {
        let (ticks, _) = ticks(5, 5);
        assert!(ticks.len() <= 1);
    }
}
