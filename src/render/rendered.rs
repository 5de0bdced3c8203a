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
//! itself), so a long list is rendered in waves of [`WAVE`] items spread
//! over the cores ([`crate::spread::map_in_order`], [`CHUNK`] items at a
//! time), and only one wave's texts are held at once.

use std::io;

/// Lists shorter than this render on the calling thread: their texts take
/// less time than starting a thread.
const SPREAD_FROM: usize = 64;

/// Items rendered before their texts are written: a wave's texts are
/// held (512 of a dense capture's records, 27 KB each, are 14 MB).
const WAVE: usize = 512;

/// Items one thread renders into one buffer: fewer allocations than a
/// buffer per item, and a thread takes work from the wave 16 items at a time.
const CHUNK: usize = 16;

/// Renders every item of `items` with `render` and hands each text to
/// `write`, in the items' order; stops at the first error of either.
pub(super) fn each_rendered<T: Sync>(
    items: &[T],
    render: impl Fn(&T, &mut Vec<u8>) -> io::Result<()> + Sync,
    mut write: impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let workers = if items.len() < SPREAD_FROM {
        1
    } else {
        crate::spread::cores()
    };
    if workers <= 1 {
        let mut text = Vec::new();
        for item in items {
            text.clear();
            render(item, &mut text)?;
            write(&text)?;
        }
        return Ok(());
    }
    for wave in items.chunks(WAVE) {
        let chunks: Vec<&[T]> = wave.chunks(CHUNK).collect();
        let rendered =
            crate::spread::map_in_order(&chunks, workers, |chunk| Rendered::of(chunk, &render));
        for chunk in rendered {
            chunk.write_each(&mut write)?;
        }
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

    fn written(items: &[u32], fail_at: Option<u32>) -> (io::Result<()>, String) {
        let mut out = Vec::new();
        let done = each_rendered(
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
        let (done, out) = written(&items, None);
        done.unwrap();
        assert_eq!(out, alone);
        let (done, out) = written(&items[..SPREAD_FROM - 1], None);
        done.unwrap();
        assert_eq!(numbers(&out), (0..SPREAD_FROM - 1).collect::<Vec<_>>());
    }

    #[test]
    fn an_item_that_fails_stops_the_writing_after_the_items_before_it() {
        let items: Vec<u32> = (0..(WAVE as u32 + 100)).collect();
        let (done, out) = written(&items, Some(WAVE as u32 + 10));
        assert_eq!(done.unwrap_err().to_string(), format!("item {}", WAVE + 10));
        assert_eq!(numbers(&out), (0..WAVE + 10).collect::<Vec<_>>());
    }

    #[test]
    fn a_writer_that_fails_stops_the_rendering_of_later_waves() {
        let items: Vec<u32> = (0..(WAVE as u32 * 3)).collect();
        let rendered = std::sync::atomic::AtomicUsize::new(0);
        let done = each_rendered(
            &items,
            |n, text| {
                rendered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                write!(text, "{n}")
            },
            |_| Err(io::Error::other("gone")),
        );
        assert!(done.is_err());
        assert_eq!(rendered.into_inner(), WAVE);
    }
}
