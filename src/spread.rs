//! Independent per-group work spread over the machine's cores.
//!
//! Takes: a slice of items (one per group, or a run of a list's items to
//! render) and a function of one item. Gives: the function applied to
//! every item, results in the items' order, exactly what a loop over them
//! gives: each group's reconstruction and costs depend on that group's
//! events only (issue 12 item 3: on a rebalance-dense log, rebuilding the
//! groups after reading was one thread while the other core waited), and
//! an item's text on itself only (`render::rendered`). Threads take the
//! next item as they free up, so one large group does not hold a share of
//! small ones back. Small runs (few events in all) stay on the calling
//! thread.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// Below this many events in all, spreading costs more than it saves.
pub const WORTH_SPREADING: usize = 20_000;

/// How many threads to use for work of `weight` events.
pub fn workers_for(weight: usize) -> usize {
    if weight < WORTH_SPREADING {
        return 1;
    }
    cores()
}

/// The cores this process may run on.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

/// `items.iter().map(f).collect()`, on up to `workers` threads.
pub fn map_in_order<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let workers = workers.min(items.len());
    if workers <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let take = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                return done;
            };
            done.push((i, f(item)));
        }
    };
    let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    std::thread::scope(|scope| {
        let others: Vec<_> = (1..workers).map(|_| scope.spawn(take)).collect();
        let mine = take();
        let theirs = others.into_iter().map(|h| match h.join() {
            Ok(done) => done,
            Err(panic) => std::panic::resume_unwind(panic),
        });
        for (i, r) in std::iter::once(mine).chain(theirs).flatten() {
            slots[i] = Some(r);
        }
    });
    slots
        .into_iter()
        .map(|r| r.expect("every item was taken by one thread"))
        .collect()
}

/// `items.iter_mut().for_each(f)`, on up to `workers` threads.
pub fn for_each_mut<T: Send>(items: &mut [T], workers: usize, f: impl Fn(&mut T) + Sync) {
    let workers = workers.min(items.len());
    if workers <= 1 {
        return items.iter_mut().for_each(f);
    }
    let queue = Mutex::new(items.iter_mut());
    let take = || loop {
        // The lock is held only to take the next item.
        let next = queue.lock().unwrap_or_else(PoisonError::into_inner).next();
        match next {
            Some(item) => f(item),
            None => return,
        }
    };
    std::thread::scope(|scope| {
        let others: Vec<_> = (1..workers).map(|_| scope.spawn(take)).collect();
        take();
        for h in others {
            if let Err(panic) = h.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uneven work, so threads finish items out of order.
    fn busy(n: &u64) -> u64 {
        (0..(n % 7) * 20_000).fold(*n, |acc, i| acc.wrapping_mul(31).wrapping_add(i))
    }

    #[test]
    fn results_come_in_the_items_order_on_any_number_of_threads() {
        let items: Vec<u64> = (0..500).collect();
        let alone: Vec<u64> = items.iter().map(busy).collect();
        for workers in [0, 1, 2, 3, 8, 1000] {
            assert_eq!(map_in_order(&items, workers, busy), alone, "{workers}");
        }
        assert!(map_in_order(&[] as &[u64], 4, busy).is_empty());
    }

    #[test]
    fn every_item_is_changed_once_on_any_number_of_threads() {
        for workers in [1, 2, 5] {
            let mut items: Vec<u64> = (0..300).collect();
            for_each_mut(&mut items, workers, |n| *n ^= busy(n));
            let expected: Vec<u64> = (0..300u64).map(|n| busy(&n) ^ n).collect();
            assert_eq!(items, expected, "{workers}");
        }
    }

    #[test]
    fn small_work_stays_on_one_thread() {
        assert_eq!(workers_for(WORTH_SPREADING - 1), 1);
        let cores = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
        assert_eq!(workers_for(WORTH_SPREADING), cores);
    }

    #[test]
    #[should_panic(expected = "item 7")]
    fn a_panic_on_another_thread_is_raised_here() {
        let items: Vec<u64> = (0..50).collect();
        map_in_order(&items, 2, |n| {
            if *n == 7 {
                panic!("item 7");
            }
            *n
        });
    }
}
