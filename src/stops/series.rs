//! A client's Fetch times, positions and watermarks, held delta-encoded.
//!
//! Takes: `(time, value)` pairs as the data path folds them (time order
//! but for a few exchanges completing out of turn). Gives: the lookups the
//! stops stage makes (the first entry at or after a time, the last one
//! before, those within a span) over the pairs in time order, equal times
//! in the order they came.
//!
//! Why not a vector of pairs: on a busy capture each consumer fetches every
//! partition it owns several times a second, and the 16 bytes a pair took
//! made these lists the largest thing a run held besides the group events
//! (121 MB of a 1.2 GB dense capture's peak). Consecutive Fetches of a
//! partition are milliseconds apart and their offsets close, so each pair
//! after the first of a block is two small varints. The time is written as
//! its delta's change from the delta before (a consumer fetches at a
//! steady pace: an idle partition's Fetch is held `fetch.max.wait.ms` by
//! the broker), the value as its delta: on the lab's captures of real
//! clients that took half a byte to a byte a pair less than the time's
//! delta whole (the nanosecond captures gain least), and two bytes on the
//! dense benchmark capture, whose clients keep time more exactly than real
//! ones.

use crate::time::Timestamp;

/// Pairs per block at most: a lookup decodes at most one block's worth
/// before the pair it wants (blocks are found by a binary search over
/// their first pair). A block's head is 24 bytes: at 64 pairs it costs
/// under half a byte a pair (at 32 it was 0.75, 4.4 MB of the dense
/// capture's 5.6 M pairs), and a lookup, made a few times per partition
/// and round, decodes at most 63 small varint pairs.
const BLOCK: u32 = 64;

/// Where a block starts: its first pair whole (the pair numbered
/// `first`), then the rest as deltas from `at` in [`Series::bytes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Block {
    ts: i64,
    value: i64,
    at: u32,
    first: u32,
}

/// `(time, value)` pairs, delta-encoded in blocks of [`BLOCK`]; with
/// `VALUES` false, times alone ([`Times`]): every value reads back 0 and
/// takes no byte (a client's Fetch times, its "last seen", were a fifth
/// of these bytes on the dense capture, each with a 0 beside it).
#[derive(Clone, Default)]
pub(crate) struct Series<const VALUES: bool = true> {
    blocks: Vec<Block>,
    bytes: Vec<u8>,
    len: u32,
    /// The last pair pushed (the next one is encoded against it).
    last: (i64, i64),
    /// The time delta between the last two pairs of the last block (0
    /// after a block's first pair): the next delta is written as its
    /// change from this one.
    last_dt: i64,
    /// A pair came with an earlier time than the one before it: sort
    /// before looking anything up ([`Self::sort`]).
    unsorted: bool,
}

/// Times alone: a [`Series`] whose values are all 0.
pub(crate) type Times = Series<false>;

impl<const VALUES: bool> Series<VALUES> {
    /// The number of pairs.
    pub(crate) fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends one pair. Past `u32::MAX` pairs, or 4 GiB of deltas (a
    /// billion Fetches of one partition, more than any machine holds), a
    /// pair is not kept: the counts cannot wrap into a wrong block.
    pub(crate) fn push(&mut self, ts: Timestamp, value: i64) {
        let (Ok(at), Some(len)) = (u32::try_from(self.bytes.len()), self.len.checked_add(1)) else {
            return;
        };
        let (ts, value) = (ts.0, if VALUES { value } else { 0 });
        let dt = ts.wrapping_sub(self.last.0);
        let change = dt.wrapping_sub(self.last_dt);
        let in_block = self
            .blocks
            .last()
            .is_some_and(|b| self.len - b.first < BLOCK);
        if in_block && fits_delta_ts(dt) && fits_delta_ts(change) {
            let ts_code = delta_ts_code(change);
            let value_code = zigzag(value.wrapping_sub(self.last.1));
            // Room for this pair's bytes exactly, so growth comes when
            // they do not fit, not up to 20 bytes early.
            let n = varint_len(ts_code) + if VALUES { varint_len(value_code) } else { 0 };
            grow_by_a_quarter(&mut self.bytes, n);
            put_varint(&mut self.bytes, ts_code);
            if VALUES {
                put_varint(&mut self.bytes, value_code);
            }
            self.last_dt = dt;
        } else {
            self.last_dt = 0;
            grow_by_a_quarter(&mut self.blocks, 1);
            self.blocks.push(Block {
                ts,
                value,
                at,
                first: self.len,
            });
        }
        if self.len > 0 && ts < self.last.0 {
            self.unsorted = true;
        }
        self.last = (ts, value);
        self.len = len;
    }

    /// Appends every pair of `later`, in its order.
    pub(crate) fn append(&mut self, later: &Self) {
        for (ts, v) in later.iter() {
            self.push(ts, v);
        }
    }

    /// Puts the pairs in time order, stably (equal times keep the order
    /// they came in), and gives room not used back.
    pub(crate) fn sort(&mut self) {
        if self.unsorted {
            let mut pairs: Vec<(Timestamp, i64)> = self.iter().collect();
            pairs.sort_by_key(|p| p.0);
            *self = Self::from_pairs(pairs);
        }
        self.blocks.shrink_to_fit();
        self.bytes.shrink_to_fit();
    }

    /// Drops pairs older than `cut` from the front, up to the first newer
    /// one (a pair out of turn behind it stays, as the list this replaces
    /// kept it). Costs the pairs it drops, decoded, and one copy of the
    /// bytes kept: the block the first kept pair is in is encoded again
    /// from that pair on, the blocks after it are moved as they are.
    pub(crate) fn drop_older(&mut self, cut: Timestamp) {
        let n = self.iter().take_while(|p| p.0 < cut).count() as u32;
        if n == 0 {
            return;
        }
        if n == self.len {
            *self = Self::default();
            return;
        }
        // The block holding pair `n`, and where the next one starts.
        let k = self.blocks.partition_point(|b| b.first <= n) - 1;
        let next_first = self.blocks.get(k + 1).map_or(self.len, |b| b.first);
        let tail_at = self
            .blocks
            .get(k + 1)
            .map_or(self.bytes.len(), |b| b.at as usize);
        let mut kept = Self::default();
        let head = self.pairs_from(k).skip((n - self.blocks[k].first) as usize);
        for (ts, v) in head.take((next_first - n) as usize) {
            kept.push(ts, v);
        }
        let base = kept.bytes.len();
        kept.bytes.extend_from_slice(&self.bytes[tail_at..]);
        kept.blocks
            .extend(self.blocks[k + 1..].iter().map(|b| Block {
                at: b.at - tail_at as u32 + base as u32,
                first: b.first - n,
                ..*b
            }));
        kept.len = self.len - n;
        kept.last = self.last;
        if k + 1 < self.blocks.len() {
            // The last block was moved as it was, and the next pair
            // continues it.
            kept.last_dt = self.last_dt;
        }
        // Pairs dropped may have been the ones out of turn; not known
        // without decoding the rest, so a sort stays due.
        kept.unsorted |= self.unsorted;
        *self = kept;
    }

    /// Every pair, in the order held.
    pub(crate) fn iter(&self) -> Pairs<'_, VALUES> {
        self.pairs_from(0)
    }

    /// The first pair at or after `t`.
    pub(crate) fn first_from(&self, t: Timestamp) -> Option<(Timestamp, i64)> {
        self.pairs_from(self.block_before(t)).find(|p| p.0 >= t)
    }

    /// The last pair before `t`.
    pub(crate) fn last_before(&self, t: Timestamp) -> Option<(Timestamp, i64)> {
        self.pairs_from(self.block_before(t))
            .take_while(|p| p.0 < t)
            .last()
    }

    /// The last pair at or before `t`.
    pub(crate) fn last_until(&self, t: Timestamp) -> Option<(Timestamp, i64)> {
        debug_assert!(!self.unsorted, "looked up before it was sorted");
        // The last block whose first pair is at or before `t`.
        let b = self
            .blocks
            .partition_point(|b| b.ts <= t.0)
            .saturating_sub(1);
        self.pairs_from(b).take_while(|p| p.0 <= t).last()
    }

    /// The pairs at or after `from` and before `to`.
    pub(crate) fn within(
        &self,
        from: Timestamp,
        to: Timestamp,
    ) -> impl Iterator<Item = (Timestamp, i64)> + '_ {
        self.pairs_from(self.block_before(from))
            .skip_while(move |p| p.0 < from)
            .take_while(move |p| p.0 < to)
    }

    fn from_pairs(pairs: Vec<(Timestamp, i64)>) -> Self {
        let mut s = Self::default();
        for (ts, v) in pairs {
            s.push(ts, v);
        }
        s
    }

    /// The last block whose first pair is before `t` (every pair of the
    /// blocks before it is too, in a sorted series), or the first block.
    fn block_before(&self, t: Timestamp) -> usize {
        debug_assert!(!self.unsorted, "looked up before it was sorted");
        self.blocks
            .partition_point(|b| b.ts < t.0)
            .saturating_sub(1)
    }

    /// The pairs from the start of block `b` on.
    fn pairs_from(&self, b: usize) -> Pairs<'_, VALUES> {
        Pairs {
            series: self,
            block: b,
            index: self.blocks.get(b).map_or(self.len, |b| b.first),
            at: 0,
            last: (0, 0),
            last_dt: 0,
        }
    }
}

/// Decodes a [`Series`] from a block on.
pub(crate) struct Pairs<'a, const VALUES: bool> {
    series: &'a Series<VALUES>,
    block: usize,
    /// The index of the next pair.
    index: u32,
    /// Where its delta starts in `bytes` (inside a block).
    at: usize,
    last: (i64, i64),
    /// The time delta decoded last in this block.
    last_dt: i64,
}

impl<const VALUES: bool> Iterator for Pairs<'_, VALUES> {
    type Item = (Timestamp, i64);

    fn next(&mut self) -> Option<(Timestamp, i64)> {
        if self.index >= self.series.len {
            return None;
        }
        let starts = self.series.blocks.get(self.block);
        if let Some(b) = starts.filter(|b| b.first == self.index) {
            self.block += 1;
            self.at = b.at as usize;
            self.last = (b.ts, b.value);
            self.last_dt = 0;
        } else {
            let bytes = &self.series.bytes;
            let dt = self
                .last_dt
                .wrapping_add(take_delta_ts(bytes, &mut self.at)?);
            let dv = if VALUES {
                unzigzag(take_varint(bytes, &mut self.at)?)
            } else {
                0
            };
            self.last = (self.last.0.wrapping_add(dt), self.last.1.wrapping_add(dv));
            self.last_dt = dt;
        }
        self.index += 1;
        Some((Timestamp(self.last.0), self.last.1))
    }
}

impl<const VALUES: bool> PartialEq for Series<VALUES> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<const VALUES: bool> std::fmt::Debug for Series<VALUES> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Whether [`put_delta_ts`] can write `dt` (a jump of more than about 73
/// years starts a block instead).
pub(super) fn fits_delta_ts(dt: i64) -> bool {
    dt.unsigned_abs() < 1 << 61
}

/// Makes room for `more` items, growing `v` by a quarter of what it holds
/// rather than doubling it. These lists are held from the Fetch that
/// starts them to the end of the run, thousands of them (one per client,
/// partition and kind), each a few kilobytes: room doubled would leave a
/// quarter to a half of each unused at the run's peak (jemalloc's size
/// classes are four to a doubling, so a quarter more wastes little of its
/// class). The copies this adds are of a few kilobytes, about four per
/// byte kept. At least 4 items at a time: a list of block heads holds a
/// few (the dense capture's 17.5 k series have about 10 blocks each, and
/// room for at least 16 left half of their heads' 9 MB unused).
///
/// The quarter is of the room, and `more` is what the next push writes,
/// not the most a pair can take: room of `len + max(room / 4, 20)` (as
/// this was until 2026-12-06) gave a list under a few hundred bytes one
/// or two pairs more per growth, so nearly every push moved it (a sixth
/// of the data path's instructions on a slice of the dense benchmark
/// capture went to reallocating),
/// and asking for room for 20 bytes (a pair takes 2 or 3) before growing
/// held 5 MB more at the dense capture's peak.
fn grow_by_a_quarter<T>(v: &mut Vec<T>, more: usize) {
    let (len, room) = (v.len(), v.capacity());
    if room - len < more {
        let target = (room + room / 4).max(len + more).max(4);
        v.reserve_exact(target - len);
    }
}

/// A time delta. Whole microseconds (a pcap's resolution; log times are
/// whole milliseconds) take a flag bit and about 10 fewer bits of varint.
pub(super) fn put_delta_ts(out: &mut Vec<u8>, dt: i64) {
    put_varint(out, delta_ts_code(dt));
}

/// The number [`put_delta_ts`] writes as a varint for `dt`.
fn delta_ts_code(dt: i64) -> u64 {
    if dt % 1000 == 0 {
        (zigzag(dt / 1000) << 1) | 1
    } else {
        zigzag(dt) << 1
    }
}

/// The bytes [`put_varint`] writes for `u`.
fn varint_len(u: u64) -> usize {
    (64 - (u | 1).leading_zeros() as usize).div_ceil(7)
}

pub(super) fn take_delta_ts(bytes: &[u8], at: &mut usize) -> Option<i64> {
    let raw = take_varint(bytes, at)?;
    let d = unzigzag(raw >> 1);
    Some(if raw & 1 == 1 {
        d.wrapping_mul(1000)
    } else {
        d
    })
}

/// Small magnitudes to small numbers, either sign.
pub(super) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

pub(super) fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

pub(super) fn put_varint(out: &mut Vec<u8>, mut u: u64) {
    while u >= 0x80 {
        out.push((u as u8) | 0x80);
        u >>= 7;
    }
    out.push(u as u8);
}

pub(super) fn take_varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut u = 0u64;
    let mut shift = 0;
    loop {
        let b = *bytes.get(*at)?;
        *at += 1;
        u |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(u);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::synth::Rng;

    /// The most bytes one pair's deltas take (two varints of 64 bits).
    const MAX_PAIR_BYTES: usize = 20;

    #[test]
    fn a_varints_length_is_told_before_it_is_written() {
        let mut edges = vec![0u64, 1, u64::MAX];
        for bits in 1..64 {
            edges.extend([(1u64 << bits) - 1, 1 << bits, (1 << bits) + 1]);
        }
        for u in edges {
            let mut out = Vec::new();
            put_varint(&mut out, u);
            assert_eq!(varint_len(u), out.len(), "{u}");
        }
    }

    #[test]
    fn a_series_holds_at_most_a_quarter_more_room_than_its_pairs_take() {
        let mut s: Series = Series::default();
        for i in 0..20_000i64 {
            s.push(Timestamp(i * 1_000_000), i * 3);
            let (len, room) = (s.bytes.len(), s.bytes.capacity());
            assert!(
                room <= len + len / 4 + MAX_PAIR_BYTES + 16,
                "{len} bytes in {room}"
            );
            let (len, room) = (s.blocks.len(), s.blocks.capacity());
            assert!(room <= len + len / 4 + 16, "{len} blocks in {room}");
        }
    }

    #[test]
    fn a_series_grows_by_a_quarter_of_its_room_not_a_pair_at_a_time() {
        let mut s: Series = Series::default();
        let (mut moves, mut room) = (0, 0);
        for i in 0..20_000i64 {
            s.push(Timestamp(i * 1_000_000), i * 3);
            if s.bytes.capacity() != room {
                (moves, room) = (moves + 1, s.bytes.capacity());
            }
            // A short series (most are: a partition fetched for a while)
            // grows every few pairs at first, not at nearly every pair (it
            // was 45 growths for its first 100 pairs, 198 bytes).
            if i == 99 {
                assert!(moves <= 24, "{moves} growths for {} bytes", s.bytes.len());
            }
        }
        // 20,000 pairs of about 2 bytes: a quarter at a time (it was 71).
        assert!(moves <= 50, "{moves} growths for {} bytes", s.bytes.len());
    }

    /// Pairs shaped like a partition's Fetches: mostly rising times in
    /// whole microseconds, some nanosecond times, equal times, a few out of
    /// turn; offsets rising, repeating, now and then -1 or extreme.
    fn pairs(rng: &mut Rng, n: usize) -> Vec<(Timestamp, i64)> {
        let mut ts = 1_714_564_800_000_000_000i64;
        let mut offset = 0i64;
        (0..n)
            .map(|_| {
                ts += match rng.below(10) {
                    0 => 0,
                    1 => -(rng.below(5_000_000) as i64),
                    2 => rng.below(1_000_000_000) as i64,
                    _ => rng.below(600_000) as i64 * 1000,
                };
                offset = match rng.below(20) {
                    0 => -1,
                    1 => i64::MAX - rng.below(3) as i64,
                    2 => i64::MIN + rng.below(3) as i64,
                    _ => offset.max(0).saturating_add(rng.below(3) as i64),
                };
                (Timestamp(ts), offset)
            })
            .collect()
    }

    fn series(pairs: &[(Timestamp, i64)]) -> Series {
        let mut s: Series = Series::default();
        for (ts, v) in pairs {
            s.push(*ts, *v);
        }
        s
    }

    #[test]
    fn pairs_come_back_as_pushed_and_sorted_as_a_stable_sort_sorts_them() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for n in [0, 1, 2, 31, 32, 33, 63, 64, 65, 128, 129, 1000] {
            let want = pairs(&mut rng, n);
            let mut s = series(&want);
            assert_eq!(s.len(), n);
            assert_eq!(s.iter().collect::<Vec<_>>(), want, "{n} pairs");
            let mut sorted = want.clone();
            sorted.sort_by_key(|p| p.0);
            s.sort();
            assert_eq!(s.iter().collect::<Vec<_>>(), sorted, "{n} pairs sorted");
        }
    }

    #[test]
    fn lookups_answer_what_a_binary_search_of_the_sorted_pairs_answers() {
        let mut rng = Rng(42);
        for n in [1, 5, 32, 33, 63, 64, 65, 200, 2000] {
            let mut want = pairs(&mut rng, n);
            want.sort_by_key(|p| p.0);
            let mut s = series(&want);
            s.sort();
            let (lo, hi) = (want[0].0 .0 - 10, want[n - 1].0 .0 + 10);
            // Every pair's own time, its neighbours, and random times.
            let mut probes: Vec<i64> = want
                .iter()
                .flat_map(|p| [p.0 .0 - 1, p.0 .0, p.0 .0 + 1])
                .collect();
            probes.extend((0..200).map(|_| lo + rng.below((hi - lo) as u64) as i64));
            for t in probes.into_iter().map(Timestamp) {
                let first = want.partition_point(|p| p.0 < t);
                assert_eq!(
                    s.first_from(t),
                    want.get(first).copied(),
                    "first from {t:?}"
                );
                let before = first.checked_sub(1).map(|i| want[i]);
                assert_eq!(s.last_before(t), before, "last before {t:?}");
                let until = want.partition_point(|p| p.0 <= t);
                let at_or_before = until.checked_sub(1).map(|i| want[i]);
                assert_eq!(s.last_until(t), at_or_before, "last until {t:?}");
                let to = Timestamp(t.0 + rng.below(2_000_000_000) as i64);
                let end = want.partition_point(|p| p.0 < to);
                let within: Vec<_> = s.within(t, to).collect();
                assert_eq!(within, want[first..end.max(first)], "within {t:?}..{to:?}");
            }
        }
    }

    #[test]
    fn dropping_older_pairs_stops_at_the_first_newer_one() {
        let at = |ms: i64| Timestamp(ms * 1_000_000);
        let mut s = series(&[(at(1), 1), (at(2), 2), (at(5), 5), (at(3), 3), (at(6), 6)]);
        s.drop_older(at(4));
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            [(at(5), 5), (at(3), 3), (at(6), 6)]
        );
        s.drop_older(at(4));
        assert_eq!(s.len(), 3, "the first pair is newer: nothing dropped");
        s.sort();
        assert_eq!(s.first_from(at(4)), Some((at(5), 5)));
    }

    #[test]
    fn dropping_across_blocks_keeps_what_a_vector_drained_from_the_front_keeps() {
        let mut rng = Rng(7);
        for n in [1, 31, 32, 33, 63, 64, 65, 100, 300] {
            for _ in 0..20 {
                let mut want = pairs(&mut rng, n);
                let mut s = series(&want);
                let cut = want[rng.below(n as u64) as usize].0;
                let cut = Timestamp(cut.0 + rng.below(3) as i64 - 1);
                let dropped = want.iter().take_while(|p| p.0 < cut).count();
                want.drain(..dropped);
                s.drop_older(cut);
                assert_eq!(
                    s.iter().collect::<Vec<_>>(),
                    want,
                    "{n} pairs cut at {cut:?}"
                );
                // It goes on as if built from the kept pairs.
                let more = pairs(&mut rng, 40);
                for (ts, v) in &more {
                    s.push(*ts, *v);
                }
                want.extend(more);
                assert_eq!(s.iter().collect::<Vec<_>>(), want);
                s.sort();
                want.sort_by_key(|p| p.0);
                assert_eq!(s.iter().collect::<Vec<_>>(), want);
                let t = want[want.len() / 2].0;
                assert_eq!(s.first_from(t), want.iter().find(|p| p.0 >= t).copied());
            }
        }
    }

    #[test]
    fn appending_keeps_both_orders_and_is_sorted_after() {
        let at = |ms: i64| Timestamp(ms * 1_000_000);
        let mut a = series(&[(at(1), 1), (at(4), 4)]);
        a.append(&series(&[(at(2), 2), (at(4), 40)]));
        a.sort();
        assert_eq!(
            a.iter().collect::<Vec<_>>(),
            [(at(1), 1), (at(2), 2), (at(4), 4), (at(4), 40)]
        );
    }

    /// Bytes held for `s`'s pairs, heads included.
    fn held(s: &Series) -> usize {
        s.bytes.len() + s.blocks.len() * std::mem::size_of::<Block>()
    }

    #[test]
    fn a_fetch_every_quarter_second_takes_under_three_bytes() {
        let mut s: Series = Series::default();
        for i in 0..10_000i64 {
            s.push(
                Timestamp(1_714_564_800_000_000_000 + i * 250_000_000),
                i * 37,
            );
        }
        // The time: a change of 0 from the delta before, one byte.
        assert!(held(&s) < 10_000 * 3, "{} bytes for 10,000 pairs", held(&s));
        assert_eq!(
            s.last_until(Timestamp(i64::MAX)).map(|p| p.1),
            Some(9_999 * 37)
        );
    }

    #[test]
    fn fetches_half_a_second_apart_give_or_take_a_millisecond_take_under_four_bytes() {
        // A consumer idle on a partition: the broker holds each Fetch for
        // `fetch.max.wait.ms` (500 ms by default), the network adds jitter.
        let mut rng = Rng(11);
        let mut s: Series = Series::default();
        let mut ts = 1_714_564_800_000_000_000i64;
        for i in 0..10_000i64 {
            ts += 500_000_000 + rng.below(1_000) as i64 * 1_000;
            s.push(Timestamp(ts), 1_000 + i % 3);
        }
        // Each delta whole, 500 ms in microseconds, took three bytes.
        assert!(
            held(&s) < 10_000 * 7 / 2,
            "{} bytes for 10,000 pairs",
            held(&s)
        );
    }

    #[test]
    fn times_alone_come_back_as_pushed_with_0_beside_them_and_sort_and_drop_alike() {
        let mut rng = Rng(5);
        for n in [1, 63, 64, 65, 300] {
            let mut want = pairs(&mut rng, n);
            let mut t = Times::default();
            for (ts, v) in &want {
                t.push(*ts, *v);
            }
            want.iter_mut().for_each(|p| p.1 = 0);
            assert_eq!(t.iter().collect::<Vec<_>>(), want, "{n} times");
            t.sort();
            want.sort_by_key(|p| p.0);
            assert_eq!(t.iter().collect::<Vec<_>>(), want, "{n} times sorted");
            let cut = want[n / 2].0;
            t.drop_older(cut);
            want.retain(|p| p.0 >= cut);
            assert_eq!(t.iter().collect::<Vec<_>>(), want, "{n} times cut");
        }
        // A Fetch every half second: the time's change, one byte each.
        let mut t = Times::default();
        for i in 0..10_000i64 {
            t.push(Timestamp(1_714_564_800_000_000_000 + i * 500_000_000), 0);
        }
        let held = t.bytes.len() + t.blocks.len() * std::mem::size_of::<Block>();
        assert!(held < 10_000 * 3 / 2, "{held} bytes for 10,000 times");
    }

    #[test]
    fn times_anywhere_in_an_i64_come_back_exact() {
        let want = [
            (Timestamp(0), 0),
            (Timestamp(i64::MAX), 1),
            (Timestamp(i64::MIN), -1),
            (Timestamp(i64::MIN + 1), i64::MAX),
            (Timestamp(1 << 61), i64::MIN),
            (Timestamp(-(1 << 61)), 0),
        ];
        let mut s = series(&want);
        assert_eq!(s.iter().collect::<Vec<_>>(), want);
        s.sort();
        let mut sorted = want.to_vec();
        sorted.sort_by_key(|p| p.0);
        assert_eq!(s.iter().collect::<Vec<_>>(), sorted);
        assert_eq!(
            s.first_from(Timestamp(1)),
            Some((Timestamp(1 << 61), i64::MIN))
        );
    }

    #[test]
    fn cut_bytes_end_the_pairs_instead_of_reading_past_them() {
        let mut s = series(&[(Timestamp(0), 0), (Timestamp(1_000), 300)]);
        s.bytes.pop();
        assert_eq!(s.iter().count(), 1);
    }
}
