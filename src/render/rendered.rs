//! A long list's items rendered on every core, written in their order.
//!
//! Takes: a list of items, how one item renders into bytes, and where the
//! texts go. Gives: the texts handed on one after the other in the
//! list's order, the very bytes of rendering the items one by one.
//!
//! Why: the JSON, NDJSON and CSV writers render a view's list after every
//! record is made, on one thread, while the other cores wait. On a
//! rebalance-dense log's 80 MB (about 37,000 records) writing them as
//! NDJSON was a third of the run (`rebalances --format ndjson` 1.23 s,
//! `-c` 0.85 s). Each item renders alone (its text depends on nothing but
//! itself), so a long list is rendered in waves spread over the cores
//! ([`crate::spread::map_in_order`], [`CHUNK`] items at a time), and only
//! one wave's texts are held at once: at most [`WAVE`] items, fewer when
//! the items before were large (about [`WAVE_BYTES`] of text a wave).

use std::io;

/// Lists shorter than this render on the calling thread: their texts take
/// less time than starting a thread.
const SPREAD_FROM: usize = 64;

/// The most items a wave renders before their texts are written (512 of
/// a dense capture's records, 27 KB each, are 14 MB) ...
const WAVE: usize = 512;

/// ... and the text a wave is sized to hold, by the size of the items of
/// the wave before (the first wave is [`SPREAD_FROM`] items): a storm's
/// records of thousands of members each are rendered [`CHUNK`] at a time.
const WAVE_BYTES: usize = 16 << 20;

/// The most room the calling thread's buffer keeps between two items.
const KEPT_ROOM: usize = 1 << 20;

/// Items one thread renders into one buffer: fewer allocations than a
/// buffer per item, and a thread takes work from the wave 16 items at a time.
const CHUNK: usize = 16;

/// Renders every item of `items` with `render` and hands each text to
/// `write`, in the items' order; stops at the first error of either.
pub(super) fn each_rendered<T: Sync>(
    items: &[T],
    render: impl Fn(&T, &mut Vec<u8>) -> io::Result<()> + Sync,
    write: impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let workers = if items.len() < SPREAD_FROM {
        1
    } else {
        crate::spread::cores()
    };
    each_rendered_on(workers, items, render, write)
}

/// [`each_rendered`] on `workers` threads.
fn each_rendered_on<T: Sync>(
    workers: usize,
    items: &[T],
    render: impl Fn(&T, &mut Vec<u8>) -> io::Result<()> + Sync,
    mut write: impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    if workers <= 1 {
        let mut text = Vec::new();
        for item in items {
            text.clear();
            render(item, &mut text)?;
            write(&text)?;
            // One record of thousands of members is not kept room for.
            if text.capacity() > KEPT_ROOM {
                text = Vec::new();
            }
        }
        return Ok(());
    }
    let mut rest = items;
    let mut wave_len = SPREAD_FROM;
    while !rest.is_empty() {
        let (wave, after) = rest.split_at(wave_len.min(rest.len()));
        rest = after;
        let chunks: Vec<&[T]> = wave.chunks(CHUNK).collect();
        let rendered =
            crate::spread::map_in_order(&chunks, workers, |chunk| Rendered::of(chunk, &render));
        let bytes: usize = rendered.iter().map(|r| r.text.len()).sum();
        for chunk in rendered {
            chunk.write_each(&mut write)?;
        }
        let per_item = bytes / wave.len();
        wave_len = (WAVE_BYTES / per_item.max(1)).clamp(CHUNK, WAVE);
    }
    Ok(())
}

/// The texts of a run of items, one after the other in one buffer.
struct Rendered {
    text: Vec<u8>,
    /// Where each item's text ends in `text`.
    ends: Vec<usize>,
    /// The error of the item after the last one rendered, if one failed.
    failed: Option<io::Error>,
}

impl Rendered {
    fn of<T>(items: &[T], render: &impl Fn(&T, &mut Vec<u8>) -> io::Result<()>) -> Rendered {
        let mut done = Rendered {
            text: Vec::new(),
            ends: Vec::with_capacity(items.len()),
            failed: None,
        };
        for item in items {
            if let Err(e) = render(item, &mut done.text) {
                done.failed = Some(e);
                break;
            }
            done.ends.push(done.text.len());
        }
        done
    }

    /// Hands each text to `write`, then the error that ended the run.
    fn write_each(self, write: &mut impl FnMut(&[u8]) -> io::Result<()>) -> io::Result<()> {
        let mut start = 0;
        for end in self.ends {
            write(&self.text[start..end])?;
            start = end;
        }
        self.failed.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Item `n`'s text, after uneven work (threads finish items out of
    /// order).
    fn text_of(n: u32) -> String {
        let spin = (0..(n % 7) * 2_000).fold(n, |a, i| a.wrapping_mul(31) ^ i);
        format!("{n}:{}\n", spin % 10)
    }

    fn written(workers: usize, items: &[u32], fail_at: Option<u32>) -> (io::Result<()>, String) {
        let mut out = Vec::new();
        let done = each_rendered_on(
            workers,
            items,
            |n, text| match fail_at {
                Some(f) if *n == f => Err(io::Error::other(format!("item {n}"))),
                _ => text.write_all(text_of(*n).as_bytes()),
            },
            |text| out.write_all(text),
        );
        (done, String::from_utf8(out).unwrap())
    }

    /// The item numbers of `written`'s lines.
    fn numbers(lines: &str) -> Vec<usize> {
        lines
            .lines()
            .map(|l| l.split(':').next().unwrap().parse().unwrap())
            .collect()
    }

    #[test]
    fn a_long_list_is_written_as_one_thread_writes_it_across_waves() {
        let items: Vec<u32> = (0..(WAVE as u32 * 2 + 37)).collect();
        let alone: String = items.iter().map(|n| text_of(*n)).collect();
        for workers in [1, 2, 3, 8] {
            let (done, out) = written(workers, &items, None);
            done.unwrap();
            assert_eq!(out, alone, "{workers}");
        }
    }

    #[test]
    fn an_item_that_fails_stops_the_writing_after_the_items_before_it() {
        let items: Vec<u32> = (0..(WAVE as u32 + 100)).collect();
        let fail_at = WAVE + 10;
        for workers in [1, 2, 3] {
            let (done, out) = written(workers, &items, Some(fail_at as u32));
            assert_eq!(done.unwrap_err().to_string(), format!("item {fail_at}"));
            assert_eq!(numbers(&out), (0..fail_at).collect::<Vec<_>>(), "{workers}");
        }
    }

    #[test]
    fn a_writer_that_fails_stops_the_rendering_of_later_waves() {
        let items: Vec<u32> = (0..(WAVE as u32 * 3)).collect();
        let rendered = std::sync::atomic::AtomicUsize::new(0);
        let done = each_rendered_on(
            2,
            &items,
            |n, text| {
                rendered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                write!(text, "{n}")
            },
            |_| Err(io::Error::other("gone")),
        );
        assert!(done.is_err());
        // The first wave only.
        assert_eq!(rendered.into_inner(), SPREAD_FROM);
    }

    #[test]
    fn waves_shrink_to_the_size_of_large_items() {
        // Items of 1 MiB: a wave after the first renders CHUNK of them.
        let items: Vec<u32> = (0..(SPREAD_FROM + 3 * CHUNK) as u32).collect();
        let (largest, now) = (
            std::sync::atomic::AtomicUsize::new(0),
            std::sync::atomic::AtomicUsize::new(0),
        );
        let mut waves = Vec::new();
        let done = each_rendered_on(
            2,
            &items,
            |_, text| {
                let held = now.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                largest.fetch_max(held, std::sync::atomic::Ordering::SeqCst);
                text.extend(std::iter::repeat_n(b'x', 1 << 20));
                Ok(())
            },
            |_| {
                waves.push(now.swap(0, std::sync::atomic::Ordering::SeqCst));
                Ok(())
            },
        );
        done.unwrap();
        // Rendered-but-unwritten items counted up to each write: the
        // first wave's SPREAD_FROM, then at most CHUNK.
        assert_eq!(largest.into_inner(), SPREAD_FROM);
        let after_first: Vec<usize> = waves.into_iter().filter(|n| *n > 0).skip(1).collect();
        assert_eq!(after_first, vec![CHUNK; 3]);
    }
}
