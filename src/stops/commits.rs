//! One member's OffsetCommits, packed.
//!
//! Takes: a member's commit requests in the time line's order, and later
//! each one's answer by its number. Gives: the [`Commit`]s back, in the
//! order they were pushed, equal to the ones pushed.
//!
//! Why: the commit book keeps every commit of a run until the groups are
//! rebuilt (the stops stage looks a partition's last commit up at any
//! time). A busy coordinator's members commit every few seconds: on the
//! dense benchmark capture about 140 k commits of 1.3 offsets each, which
//! as structs (48 bytes, 24 more per offset, and the vectors' spare room)
//! were about 15 MB of its peak heap. Packed, a commit is a time delta, a
//! count, and per offset a topic number, a partition and the offset's
//! change since the member's previous commit of that partition: about a
//! dozen bytes. An answer without errors is one status byte; answers with
//! errors, rare, are kept whole beside.

use super::index::Commit;
use super::series::{
    fits_delta_ts, put_delta_ts, put_varint, take_delta_ts, take_varint, unzigzag, zigzag,
};
use crate::event::{ErrorCode, Id, PartitionOffset};
use crate::fast_hash::FastMap;
use crate::time::Timestamp;

/// A commit's answer as far as it is known.
const NOT_ANSWERED: u8 = 0;
/// Answered without a top-level or partition error.
const ANSWERED: u8 = 1;
/// Answered with errors: the details are in [`CommitList::errors`].
const ANSWERED_WITH_ERRORS: u8 = 2;

/// An answer's top-level error and its partitions' errors.
type Answer = (Option<ErrorCode>, Box<[(String, Option<ErrorCode>)]>);

/// One member's commits: the requests packed in `bytes`, one status byte
/// per commit.
#[derive(Debug, Default)]
pub(crate) struct CommitList {
    bytes: Vec<u8>,
    status: Vec<u8>,
    /// Answers with errors, by commit number (in the order answered).
    errors: Vec<(u32, Answer)>,
    /// The time of the last commit pushed (the next is a delta from it).
    last_ts: i64,
    /// The last commit's offsets as `(topic number, partition, offset)`:
    /// the next commit's offset at the same place in its list, if of the
    /// same partition, is written as a change from it. A member commits
    /// its partitions in the same order each time, so a lookup by place
    /// finds nearly every one without a search.
    previous: Vec<(u32, i32, i64)>,
}

/// The topics a group's commits name, numbered in the order met.
#[derive(Debug, Default)]
pub(crate) struct Topics {
    names: Vec<Id>,
    numbers: FastMap<Id, u32>,
}

impl Topics {
    fn number(&mut self, topic: &Id) -> u32 {
        if let Some(n) = self.numbers.get(topic) {
            return *n;
        }
        let n = self.names.len() as u32;
        self.names.push(topic.clone());
        self.numbers.insert(topic.clone(), n);
        n
    }
}

impl CommitList {
    /// The number of commits.
    pub(crate) fn len(&self) -> usize {
        self.status.len()
    }

    /// Adds a commit (its answer not yet known: `answered` and the
    /// errors are set by [`Self::answer`]), its topics numbered in `topics`.
    pub(crate) fn push(&mut self, ts: Timestamp, offsets: &[PartitionOffset], topics: &mut Topics) {
        // The count, and in its low bit whether the time is written whole
        // (a delta too large for [`put_delta_ts`]: absurd times only).
        let dt = ts.0.wrapping_sub(self.last_ts);
        let whole = !fits_delta_ts(dt);
        put_varint(
            &mut self.bytes,
            (offsets.len() as u64) << 1 | u64::from(whole),
        );
        if whole {
            put_varint(&mut self.bytes, zigzag(ts.0));
        } else {
            put_delta_ts(&mut self.bytes, dt);
        }
        self.last_ts = ts.0;
        let mut now = Vec::with_capacity(offsets.len());
        for (i, o) in offsets.iter().enumerate() {
            let topic = topics.number(&o.topic);
            put_varint(&mut self.bytes, u64::from(topic));
            put_varint(&mut self.bytes, zigzag(i64::from(o.partition)));
            let base = base(&self.previous, i, topic, o.partition);
            put_varint(&mut self.bytes, zigzag(o.offset.wrapping_sub(base)));
            put_varint(&mut self.bytes, error_number(o.error));
            now.push((topic, o.partition, o.offset));
        }
        self.previous = now;
        self.status.push(NOT_ANSWERED);
    }

    /// The answer of commit number `n`.
    pub(crate) fn answer(
        &mut self,
        n: usize,
        error: Option<ErrorCode>,
        errors: Box<[(String, Option<ErrorCode>)]>,
    ) {
        let Some(status) = self.status.get_mut(n) else {
            return;
        };
        if *status == ANSWERED_WITH_ERRORS {
            // Answered again (one exchange in two captures): the last
            // answer holds. Only then a scan, so a member whose every
            // commit fails costs no more per answer than one that succeeds.
            self.errors.retain(|(i, _)| *i as usize != n);
        }
        if error.is_none() && errors.is_empty() {
            *status = ANSWERED;
        } else {
            *status = ANSWERED_WITH_ERRORS;
            self.errors.push((n as u32, (error, errors)));
        }
    }

    /// The commits, in the order pushed.
    pub(crate) fn commits(mut self, topics: &Topics) -> Vec<Commit> {
        self.errors.sort_by_key(|(i, _)| *i);
        let mut errors = self.errors.into_iter().peekable();
        let mut out = Vec::with_capacity(self.status.len());
        let mut reader = Reader {
            bytes: &self.bytes,
            at: 0,
            ts: 0,
            previous: Vec::new(),
        };
        for (n, status) in self.status.iter().enumerate() {
            let Some((ts, offsets)) = reader.next(topics) else {
                break;
            };
            let mut c = Commit {
                ts,
                offsets,
                answered: *status != NOT_ANSWERED,
                ..Commit::default()
            };
            if *status == ANSWERED_WITH_ERRORS {
                if let Some((_, (error, list))) = errors.next_if(|(i, _)| *i as usize == n) {
                    c.error = error;
                    c.errors = list;
                }
            }
            out.push(c);
        }
        out
    }
}

/// Reads packed commits back, keeping what [`CommitList::push`] kept.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    ts: i64,
    previous: Vec<(u32, i32, i64)>,
}

impl Reader<'_> {
    fn next(&mut self, topics: &Topics) -> Option<(Timestamp, Box<[PartitionOffset]>)> {
        let head = take_varint(self.bytes, &mut self.at)?;
        self.ts = if head & 1 == 1 {
            unzigzag(take_varint(self.bytes, &mut self.at)?)
        } else {
            self.ts
                .wrapping_add(take_delta_ts(self.bytes, &mut self.at)?)
        };
        let n = usize::try_from(head >> 1).ok()?;
        // Never more than the bytes left could hold (four bytes an offset).
        let mut now = Vec::with_capacity(n.min((self.bytes.len() - self.at) / 4));
        let mut offsets = Vec::with_capacity(now.capacity());
        for i in 0..n {
            let topic = u32::try_from(take_varint(self.bytes, &mut self.at)?).ok()?;
            let partition = i32::try_from(unzigzag(take_varint(self.bytes, &mut self.at)?)).ok()?;
            let offset = base(&self.previous, i, topic, partition)
                .wrapping_add(unzigzag(take_varint(self.bytes, &mut self.at)?));
            let error = error_of(take_varint(self.bytes, &mut self.at)?);
            now.push((topic, partition, offset));
            offsets.push(PartitionOffset {
                topic: topics.names.get(topic as usize)?.clone(),
                partition,
                offset,
                error,
            });
        }
        self.previous = now;
        Some((Timestamp(self.ts), offsets.into_boxed_slice()))
    }
}

/// What the `i`th offset of a commit is written against: the previous
/// commit's `i`th, if of the same partition, else 0 (written whole).
fn base(previous: &[(u32, i32, i64)], i: usize, topic: u32, partition: i32) -> i64 {
    match previous.get(i) {
        Some(&(t, p, offset)) if t == topic && p == partition => offset,
        _ => 0,
    }
}

/// An error as a number: 0 for none.
fn error_number(error: Option<ErrorCode>) -> u64 {
    error.map_or(0, |e| zigzag(i64::from(e.0)) + 1)
}

fn error_of(n: u64) -> Option<ErrorCode> {
    let code = unzigzag(n.checked_sub(1)?);
    Some(ErrorCode(i16::try_from(code).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offset(topic: &str, partition: i32, offset: i64) -> PartitionOffset {
        PartitionOffset {
            topic: topic.into(),
            partition,
            offset,
            error: None,
        }
    }

    fn same(a: &[Commit], b: &[Commit]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert_eq!(x.ts, y.ts);
            assert_eq!(x.offsets, y.offsets);
            assert_eq!(x.errors, y.errors);
            assert_eq!(x.answered, y.answered);
            assert_eq!(x.error, y.error);
        }
    }

    #[test]
    fn commits_come_back_as_pushed_with_their_answers() {
        let mut topics = Topics::default();
        let mut list = CommitList::default();
        let mut want = Vec::new();
        let pushes: Vec<(i64, Vec<PartitionOffset>)> = vec![
            (1_000_000_000, vec![offset("a", 0, 10), offset("a", 1, 7)]),
            // Same partitions, offsets moved on, a time of whole µs.
            (
                1_005_000_123_000,
                vec![offset("a", 0, 15), offset("a", 1, 7)],
            ),
            // Order changed, a new topic, offsets going back, extremes.
            (
                1_004_000_000_001,
                vec![offset("b", 3, i64::MAX), offset("a", 0, -1)],
            ),
            (1_004_000_000_001, vec![]),
            (
                i64::MIN,
                vec![
                    offset("a", i32::MIN, i64::MIN),
                    PartitionOffset {
                        error: Some(ErrorCode(-1)),
                        ..offset("c", i32::MAX, 0)
                    },
                ],
            ),
        ];
        for (ts, offs) in &pushes {
            list.push(Timestamp(*ts), offs, &mut topics);
            want.push(Commit {
                ts: Timestamp(*ts),
                offsets: offs.clone().into_boxed_slice(),
                ..Commit::default()
            });
        }
        list.answer(0, None, Box::new([]));
        want[0].answered = true;
        let errors: Box<[(String, Option<ErrorCode>)]> =
            Box::new([("a-1".into(), Some(ErrorCode(22)))]);
        list.answer(2, Some(ErrorCode(22)), errors.clone());
        want[2].answered = true;
        want[2].error = Some(ErrorCode(22));
        want[2].errors = errors;
        // Answered twice (one exchange seen in two captures): the last holds.
        list.answer(4, Some(ErrorCode(1)), Box::new([]));
        list.answer(4, None, Box::new([]));
        want[4].answered = true;
        // No such commit: ignored.
        list.answer(9, None, Box::new([]));
        assert_eq!(list.len(), 5);
        same(&list.commits(&topics), &want);
    }

    #[test]
    fn a_member_committing_the_same_partitions_takes_a_few_bytes_a_commit() {
        let mut topics = Topics::default();
        let mut list = CommitList::default();
        for i in 0..1000i64 {
            let offs = [
                offset("orders", 0, 1000 + 3 * i),
                offset("orders", 1, 2000 + 2 * i),
            ];
            list.push(
                Timestamp(1_700_000_000_000_000_000 + i * 5_000_000_000),
                &offs,
                &mut topics,
            );
        }
        // A time delta (4 bytes for 5 s), a count, and four one-byte
        // fields per offset: 13 bytes, where the structs took 96.
        assert!(
            list.bytes.len() <= 1000 * 13 + 16,
            "{} bytes",
            list.bytes.len()
        );
        let back = list.commits(&topics);
        assert_eq!(back[999].offsets[1].offset, 2000 + 2 * 999);
        assert_eq!(
            back[999].ts,
            Timestamp(1_700_000_000_000_000_000 + 999 * 5_000_000_000)
        );
    }
}
