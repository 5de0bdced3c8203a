//! The small parts of the data path kgtrace reads: Fetch request positions
//! and Fetch response partition headers, by hand and without buffering
//! records.
//!
//! Takes: a whole Fetch request body (header included), or a Fetch
//! response's bytes as they stream past (the splitter feeds them to a
//! [`FetchSkim`] while it skips the frame). Gives: each partition's
//! `fetch_offset` ([`fetch_request`]) and each partition's header (error,
//! `high_watermark`, `last_stable_offset`) with the record batches skipped by
//! their length ([`FetchSkim`]). Layouts from Kafka's `FetchRequest.json`
//! and `FetchResponse.json` (versions 0-17; flexible from v12, topic ids
//! from v13). Nothing is allocated by a count read off the wire: elements
//! are pushed as they are read, at most [`MAX_PARTITIONS`] per message.

use crate::event::{ErrorCode, Id, PartitionOffset, PartitionWatermark};

/// Partitions kept per Fetch message; the rest are read past.
pub(crate) const MAX_PARTITIONS: usize = 4096;

/// Room asked at once for a topic's partitions, from its stated count (a
/// consumer fetches a few partitions of a topic: asked once, not grown one
/// partition at a time), at most this many (the count is untrusted).
const ROOM_AT_ONCE: u64 = 64;

/// Room for `count` more partitions beside `len`, within [`ROOM_AT_ONCE`]
/// and [`MAX_PARTITIONS`].
fn room_for(count: u64, len: usize) -> usize {
    let count = usize::try_from(count.min(ROOM_AT_ONCE)).unwrap_or(0);
    count.min(MAX_PARTITIONS.saturating_sub(len))
}

/// Largest step the skimmer buffers (a topic name is at most 249 bytes in
/// Kafka; a tagged field's body is skipped, not buffered).
const SKIM_BUFFER_CAP: usize = 4096;

/// A UUID's 16 bytes written 8-4-4-4-12 in lower-case hex, as Kafka and
/// the `uuid` crate print a topic id, in one allocation.
pub(crate) fn uuid_text(b: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(36);
    for (i, x) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push(char::from(HEX[usize::from(x >> 4)]));
        s.push(char::from(HEX[usize::from(x & 0xf)]));
    }
    s
}

/// The topics one connection's Fetch traffic names, each as its bytes on
/// the wire (a name, or from v13 a topic id's 16 bytes) beside its text: a
/// consumer names the same few topics in every Fetch and every answer, and
/// making each one's text anew (two allocations and, for an id, its hex)
/// was 2.8 % of the instructions on the dense capture's 256 MB prefix.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct TopicNames {
    /// (an id's bytes, not a name's; the bytes; their text)
    known: Vec<(bool, Box<[u8]>, Id)>,
}

/// Topics remembered per connection; past this the list starts over (a
/// consumer fetches a few topics, and the list is searched in order).
const MAX_TOPIC_NAMES: usize = 16;

/// Longest name remembered (Kafka allows 249 bytes, `Topic.MAX_NAME_LENGTH`;
/// a Kafka Streams repartition or changelog topic can pass 64). A longer
/// name, or one that is not UTF-8 (its text is longer than its bytes), is
/// named each time: a list holds at most 16 × (128 + 128) bytes of names
/// and texts, about 5 KB with their headers, on each of up to a hundred
/// thousand connections (two lists each).
const MAX_REMEMBERED_NAME: usize = 128;

impl TopicNames {
    /// The text of the topic `raw` names: a topic id's 16 bytes as
    /// [`uuid_text`] writes them when `id`, else a name's bytes, lossily.
    fn text(&mut self, raw: &[u8], id: bool) -> Id {
        if let Some((_, _, text)) = self.known.iter().find(|(i, r, _)| *i == id && **r == *raw) {
            return text.clone();
        }
        let text: Id = if id {
            uuid_text(raw).into()
        } else {
            String::from_utf8_lossy(raw).as_ref().into()
        };
        if raw.len() > MAX_REMEMBERED_NAME || (!id && text.len() != raw.len()) {
            return text;
        }
        if self.known.len() >= MAX_TOPIC_NAMES {
            self.known.clear();
        }
        self.known.push((id, raw.into(), text.clone()));
        text
    }
}

/// Reads big-endian Kafka primitives; `None` when the bytes run out.
pub(crate) struct Cursor<'a> {
    b: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(b: &'a [u8]) -> Self {
        Cursor { b, pos: 0 }
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }

    fn i8(&mut self) -> Option<i8> {
        Some(self.take(1)?[0] as i8)
    }

    fn i16(&mut self) -> Option<i16> {
        Some(i16::from_be_bytes(self.take(2)?.try_into().ok()?))
    }

    fn i32(&mut self) -> Option<i32> {
        Some(i32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }

    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_be_bytes(self.take(8)?.try_into().ok()?))
    }

    fn uvarint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.take(1)?[0];
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    /// A UUID as Kafka's schemas carry it (see [`uuid_text`]).
    fn uuid(&mut self) -> Option<String> {
        Some(uuid_text(self.take(16)?))
    }

    /// STRING (INT16 length) or COMPACT_STRING (uvarint length + 1).
    fn string(&mut self, flexible: bool) -> Option<String> {
        Some(String::from_utf8_lossy(self.string_bytes(flexible)?).into_owned())
    }

    /// The bytes of a STRING or COMPACT_STRING.
    fn string_bytes(&mut self, flexible: bool) -> Option<&'a [u8]> {
        let len = if flexible {
            (self.uvarint()? as usize).checked_sub(1)?
        } else {
            usize::try_from(self.i16()?).ok()?
        };
        self.take(len)
    }

    /// An array's element count (-1/null as 0): INT32, or uvarint N + 1.
    fn count(&mut self, flexible: bool) -> Option<u64> {
        if flexible {
            Some(self.uvarint()?.saturating_sub(1))
        } else {
            Some(u64::try_from(self.i32()?).unwrap_or(0))
        }
    }

    /// Nullable bytes' length (null as 0): INT32, or uvarint N + 1.
    fn bytes_len(&mut self, flexible: bool) -> Option<u64> {
        self.count(flexible)
    }

    /// Skips a tagged-fields section (flexible versions) when whole.
    fn tagged_fields(&mut self) -> Option<()> {
        let n = self.uvarint()?;
        for _ in 0..n {
            self.uvarint()?;
            let size = usize::try_from(self.uvarint()?).ok()?;
            self.take(size)?;
        }
        Some(())
    }

    /// The topic of a Fetch topic entry: name before v13, id from v13.
    fn topic(&mut self, version: i16) -> Option<String> {
        if version >= 13 {
            self.uuid()
        } else {
            self.string(version >= 12)
        }
    }

    /// [`Self::topic`] as the connection's `names` know it.
    fn topic_named(&mut self, version: i16, names: &mut TopicNames) -> Option<Id> {
        let id = version >= 13;
        let raw = if id {
            self.take(16)?
        } else {
            self.string_bytes(version >= 12)?
        };
        Some(names.text(raw, id))
    }
}

/// What one Fetch request asked: its KIP-227 fetch session and the
/// partitions it lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FetchAsk {
    /// `session_id` (v7+; 0: none asked for yet).
    pub session_id: i32,
    /// `session_epoch` (v7+): 0 opens a session with a full request, -1 is a
    /// full request without a session, above 0 an incremental one. Before
    /// v7 there are no sessions: every request is full (-1 here).
    pub epoch: i32,
    /// Partitions and positions listed (an incremental request lists only
    /// what was added to its session or changed).
    pub partitions: Vec<PartitionOffset>,
    /// `forgotten_topics_data` (v7+): partitions an incremental request
    /// removes from its session, as `(topic, partition)`.
    pub forgotten: Vec<(String, i32)>,
}

impl FetchAsk {
    /// Whether the request lists its whole partition set
    /// (`FetchMetadata.isFull`: epoch 0 or -1).
    pub(crate) fn is_full(&self) -> bool {
        self.epoch <= 0
    }
}

/// Each partition's `fetch_offset` in a whole Fetch request body (request
/// header included), with its fetch session, its topics named as the
/// connection's `names` know them. `None` when it does not parse.
pub(crate) fn fetch_request(body: &[u8], version: i16, names: &mut TopicNames) -> Option<FetchAsk> {
    let flexible = version >= 12;
    let mut c = Cursor::new(body);
    c.take(8)?; // api key, version, correlation id
    let client_len = c.i16()?;
    c.take(usize::try_from(client_len).unwrap_or(0))?;
    if flexible {
        c.tagged_fields()?;
    }
    if version <= 14 {
        c.i32()?; // replica_id
    }
    c.take(8)?; // max_wait_ms, min_bytes
    if version >= 3 {
        c.i32()?; // max_bytes
    }
    if version >= 4 {
        c.i8()?; // isolation_level
    }
    let mut ask = FetchAsk {
        epoch: -1,
        ..FetchAsk::default()
    };
    if version >= 7 {
        ask.session_id = c.i32()?;
        ask.epoch = c.i32()?;
    }
    for _ in 0..c.count(flexible)? {
        // Shared by the topic's partitions (one allocation, not one each).
        let topic = c.topic_named(version, names)?;
        let count = c.count(flexible)?;
        ask.partitions
            .reserve(room_for(count, ask.partitions.len()));
        for _ in 0..count {
            let partition = c.i32()?;
            if version >= 9 {
                c.i32()?; // current_leader_epoch
            }
            let offset = c.i64()?;
            if version >= 12 {
                c.i32()?; // last_fetched_epoch
            }
            if version >= 5 {
                c.i64()?; // log_start_offset
            }
            c.i32()?; // partition_max_bytes
            if flexible {
                c.tagged_fields()?;
            }
            if ask.partitions.len() < MAX_PARTITIONS {
                ask.partitions.push(PartitionOffset {
                    topic: topic.clone(),
                    partition,
                    offset,
                    error: None,
                });
            }
        }
        if flexible {
            c.tagged_fields()?;
        }
    }
    if version >= 7 {
        forgotten(&mut c, version, &mut ask.forgotten)?;
    }
    Some(ask)
}

/// `forgotten_topics_data`: topic (name, or id from v13) and its partition
/// indexes.
fn forgotten(c: &mut Cursor<'_>, version: i16, out: &mut Vec<(String, i32)>) -> Option<()> {
    let flexible = version >= 12;
    for _ in 0..c.count(flexible)? {
        let topic = c.topic(version)?;
        for _ in 0..c.count(flexible)? {
            let partition = c.i32()?;
            if out.len() < MAX_PARTITIONS {
                out.push((topic.clone(), partition));
            }
        }
        if flexible {
            c.tagged_fields()?;
        }
    }
    Some(())
}

/// Where the skimmer is in a Fetch response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Correlation id (and header tagged fields from v12).
    Header,
    /// Throttle time, error, session id, topic count.
    Top,
    /// A topic's name or id and its partition count.
    Topic,
    /// A partition's fixed fields up to the aborted-transactions count.
    Partition,
    /// One aborted transaction.
    Aborted,
    /// Preferred read replica and the records' length.
    Records,
    /// One record batch's offset and length.
    Batch,
    /// The rest of its header, up to its last offset delta (within the
    /// batch), the rest of the batch skipped.
    BatchHead,
    /// A tagged-fields section (count read into `tags_left`), then `after`.
    Tags,
    /// Everything wanted was read (or could not be).
    Done,
}

/// What follows a tagged-fields section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum After {
    Top,
    Aborted,
    PartitionEnd,
    TopicEnd,
}

/// Reads a Fetch response's partition headers from its bytes as they pass,
/// skipping record batches by length and buffering only one step's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FetchSkim {
    version: i16,
    step: Step,
    after: After,
    tags_left: Option<u64>,
    buf: Vec<u8>,
    skip: u64,
    topics_left: u64,
    parts_left: u64,
    aborted_left: u64,
    records_left: u64,
    /// The batch being read: its base offset and length in all.
    batch_head: (i64, u64),
    /// The topic being read, shared by its partitions' headers.
    topic: Id,
    current: Option<PartitionWatermark>,
    partitions: Vec<PartitionWatermark>,
    /// Whether the bytes made sense to the end of the topics.
    complete: bool,
    /// The topics this connection's answers named (kept across answers).
    names: TopicNames,
}

impl FetchSkim {
    /// A skimmer for a Fetch response of `version`, before its first byte.
    pub(crate) fn new(version: i16) -> Self {
        FetchSkim {
            version,
            step: Step::Header,
            after: After::Top,
            tags_left: None,
            buf: Vec::new(),
            skip: 0,
            topics_left: 0,
            parts_left: 0,
            aborted_left: 0,
            records_left: 0,
            batch_head: (0, 0),
            topic: Id::default(),
            current: None,
            partitions: Vec::new(),
            complete: false,
            names: TopicNames::default(),
        }
    }

    /// The partition headers read, and whether every topic was read.
    #[cfg(test)]
    pub(crate) fn finish(self) -> (Vec<PartitionWatermark>, bool) {
        (self.partitions, self.complete)
    }

    /// Starts over for a new response, keeping the buffer's allocation.
    pub(crate) fn reset(&mut self, version: i16) {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        *self = FetchSkim {
            buf,
            names: std::mem::take(&mut self.names),
            ..FetchSkim::new(version)
        };
    }

    /// The partition headers read so far.
    pub(crate) fn take(&mut self) -> Vec<PartitionWatermark> {
        std::mem::take(&mut self.partitions)
    }

    /// Bytes held.
    pub(crate) fn buffered_bytes(&self) -> usize {
        self.buf.capacity()
    }

    /// Feeds the next bytes of the response (header first).
    pub(crate) fn feed(&mut self, mut data: &[u8]) {
        loop {
            if self.skip > 0 {
                let from_buf = (self.skip.min(self.buf.len() as u64)) as usize;
                self.buf.drain(..from_buf);
                self.skip -= from_buf as u64;
                let from_data = self.skip.min(data.len() as u64) as usize;
                data = &data[from_data..];
                self.skip -= from_data as u64;
                if self.skip > 0 {
                    return;
                }
            }
            if self.step == Step::Done {
                return;
            }
            let buf = std::mem::take(&mut self.buf);
            let mut c = Cursor::new(&buf);
            let parsed = self.step_once(&mut c);
            let used = c.pos;
            self.buf = buf;
            match parsed {
                Some(skip) => {
                    self.buf.drain(..used);
                    self.skip = skip;
                }
                None if data.is_empty() => return,
                None if self.buf.len() >= SKIM_BUFFER_CAP => {
                    self.step = Step::Done;
                    return;
                }
                None => {
                    let want = self.buf.len().max(32).min(data.len());
                    self.buf.extend_from_slice(&data[..want]);
                    data = &data[want..];
                }
            }
        }
    }

    /// Reads one step from `c`; `Some(n)` when done with it, `n` bytes to
    /// skip after it; `None` when `c` holds too few bytes.
    fn step_once(&mut self, c: &mut Cursor<'_>) -> Option<u64> {
        let v = self.version;
        let flexible = v >= 12;
        match self.step {
            Step::Header => {
                c.i32()?;
                self.tags_then(flexible, After::Top);
            }
            Step::Top => {
                if v >= 1 {
                    c.i32()?;
                }
                if v >= 7 {
                    c.i16()?;
                    c.i32()?;
                }
                self.topics_left = c.count(flexible)?;
                self.next_topic();
            }
            Step::Topic => {
                let topic = c.topic_named(v, &mut self.names)?;
                self.parts_left = c.count(flexible)?;
                self.partitions
                    .reserve(room_for(self.parts_left, self.partitions.len()));
                self.topic = topic;
                self.topics_left -= 1;
                self.next_partition();
            }
            Step::Partition => return self.partition(c),
            Step::Aborted => {
                c.take(16)?;
                self.aborted_left -= 1;
                self.tags_then(flexible, After::Aborted);
            }
            Step::Records => {
                if v >= 11 {
                    c.i32()?;
                }
                self.records_left = c.bytes_len(flexible)?;
                self.next_batch();
            }
            Step::Batch => return self.batch(c),
            Step::BatchHead => return self.batch_head(c),
            Step::Tags => return self.tag(c),
            Step::Done => {}
        }
        Some(0)
    }

    /// A record batch: v2 (`DefaultRecordBatch`: base offset, length,
    /// leader epoch, magic, crc, attributes, last offset delta) or a v0/v1
    /// message set entry (offset, size; a compressed wrapper carries its
    /// last inner offset). A batch cut off by the fetch size is not
    /// counted. Its offset and length first, then ([`Self::batch_head`])
    /// only as much of the rest as the batch holds: a v0 entry can be
    /// shorter than a v2 header.
    fn batch(&mut self, c: &mut Cursor<'_>) -> Option<u64> {
        let left = self.records_left;
        if left < 12 {
            self.records_left = 0;
            self.next_batch();
            return Some(left);
        }
        let head = c.take(12)?;
        let base = i64::from_be_bytes(head[..8].try_into().ok()?);
        let len = i32::from_be_bytes(head[8..12].try_into().ok()?);
        let total = 12 + u64::try_from(len).unwrap_or(u64::MAX - 12);
        if total > left {
            // Past the record set (cut by the fetch size, or a corrupt
            // length): the rest of it is skipped unread.
            self.records_left = 0;
            self.next_batch();
            return Some(left - 12);
        }
        self.batch_head = (base, total);
        self.step = Step::BatchHead;
        Some(0)
    }

    /// The rest of a batch's header, up to byte 27 (the v2 last offset
    /// delta) or the batch's end, whichever comes first.
    fn batch_head(&mut self, c: &mut Cursor<'_>) -> Option<u64> {
        let (base, total) = self.batch_head;
        let want = total.min(27) - 12;
        let head = c.take(want as usize)?;
        // Byte 16 of the batch is its magic; bytes 23..27 the delta.
        let last = match (head.get(4), head.get(11..15)) {
            (Some(2), Some(delta)) => {
                base.saturating_add(i64::from(i32::from_be_bytes(delta.try_into().ok()?)))
            }
            _ => base,
        };
        if let Some(p) = self.current.as_mut() {
            p.last_offset = Some(p.last_offset.map_or(last, |x| x.max(last)));
        }
        // `batch` checked the batch ends within the record set.
        self.records_left -= total;
        self.next_batch();
        Some(total - 12 - want)
    }

    fn next_batch(&mut self) {
        if self.records_left > 0 {
            self.step = Step::Batch;
        } else {
            self.end_partition();
            self.tags_then(self.version >= 12, After::PartitionEnd);
        }
    }

    fn partition(&mut self, c: &mut Cursor<'_>) -> Option<u64> {
        let v = self.version;
        let partition = c.i32()?;
        let error = c.i16()?;
        let high_watermark = c.i64()?;
        let last_stable_offset = if v >= 4 { c.i64()? } else { -1 };
        if v >= 5 {
            c.i64()?;
        }
        self.aborted_left = if v >= 4 { c.count(v >= 12)? } else { 0 };
        self.current = Some(PartitionWatermark {
            topic: self.topic.clone(),
            partition,
            error: ErrorCode::from_code(error),
            high_watermark,
            last_stable_offset,
            last_offset: None,
        });
        self.after_aborted();
        Some(0)
    }

    fn tag(&mut self, c: &mut Cursor<'_>) -> Option<u64> {
        let Some(left) = self.tags_left else {
            self.tags_left = Some(c.uvarint()?);
            return Some(0);
        };
        if left == 0 {
            self.tags_left = None;
            self.resume();
            return Some(0);
        }
        c.uvarint()?;
        let size = c.uvarint()?;
        self.tags_left = Some(left - 1);
        Some(size)
    }

    fn tags_then(&mut self, flexible: bool, after: After) {
        self.after = after;
        if flexible {
            self.step = Step::Tags;
            self.tags_left = None;
        } else {
            self.resume();
        }
    }

    fn resume(&mut self) {
        match self.after {
            After::Top => self.step = Step::Top,
            After::Aborted => self.after_aborted(),
            After::PartitionEnd => self.next_partition(),
            After::TopicEnd => self.next_topic(),
        }
    }

    fn after_aborted(&mut self) {
        self.step = if self.aborted_left > 0 {
            Step::Aborted
        } else {
            Step::Records
        };
    }

    fn end_partition(&mut self) {
        if let Some(p) = self.current.take() {
            if self.partitions.len() < MAX_PARTITIONS {
                self.partitions.push(p);
            }
        }
        self.parts_left = self.parts_left.saturating_sub(1);
    }

    fn next_partition(&mut self) {
        if self.parts_left > 0 {
            self.step = Step::Partition;
        } else if self.version >= 12 {
            self.tags_then(true, After::TopicEnd);
        } else {
            self.next_topic();
        }
    }

    fn next_topic(&mut self) {
        if self.topics_left > 0 {
            self.step = Step::Topic;
        } else {
            self.step = Step::Done;
            self.complete = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
    use kafka_protocol::messages::fetch_response::{
        AbortedTransaction, FetchableTopicResponse, PartitionData,
    };
    use kafka_protocol::messages::{FetchRequest, FetchResponse, TopicName};

    use super::*;
    use crate::kafka::testkit::{request as req_frame, response as resp_frame, s};

    const ID: [u8; 16] = [
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee,
        0xff,
    ];

    fn fetch_topic(name: &str) -> FetchTopic {
        let id = uuid::Uuid::from_bytes(ID);
        FetchTopic::default()
            .with_topic(TopicName(s(name)))
            .with_topic_id(id)
    }

    fn topic_response(name: &str) -> FetchableTopicResponse {
        let id = uuid::Uuid::from_bytes(ID);
        FetchableTopicResponse::default()
            .with_topic(TopicName(s(name)))
            .with_topic_id(id)
    }

    fn request() -> FetchRequest {
        let parts = |offsets: &[(i32, i64)]| {
            offsets
                .iter()
                .map(|&(p, o)| {
                    FetchPartition::default()
                        .with_partition(p)
                        .with_fetch_offset(o)
                        .with_partition_max_bytes(1 << 20)
                })
                .collect()
        };
        FetchRequest::default().with_topics(vec![
            fetch_topic("orders").with_partitions(parts(&[(0, 42), (3, 7)])),
            fetch_topic("audit").with_partitions(parts(&[(1, 0)])),
        ])
    }

    fn response(version: i16) -> FetchResponse {
        let records = Bytes::from(vec![0xee; 3000]);
        let part = |p: i32, hw: i64, aborted: usize| {
            PartitionData::default()
                .with_partition_index(p)
                .with_high_watermark(hw)
                .with_last_stable_offset(hw - 1)
                .with_aborted_transactions(
                    (version >= 4).then(|| vec![AbortedTransaction::default(); aborted]),
                )
                .with_records(Some(records.clone()))
        };
        FetchResponse::default().with_responses(vec![
            topic_response("orders").with_partitions(vec![part(0, 100, 2), part(3, 9, 0)]),
            topic_response("audit").with_partitions(vec![part(1, 5, 0)]),
        ])
    }

    fn names(version: i16) -> (String, String) {
        if version >= 13 {
            let id = "00112233-4455-6677-8899-aabbccddeeff".to_string();
            (id.clone(), id)
        } else {
            ("orders".into(), "audit".into())
        }
    }

    #[test]
    fn reads_every_fetch_offset_in_every_request_version() {
        for version in 4..=17 {
            let f = req_frame(1, version, 5, "consumer-1", &request());
            let got = fetch_request(&f[4..], version, &mut TopicNames::default())
                .unwrap_or_else(|| panic!("v{version}"));
            let (a, b) = names(version);
            let got: Vec<(String, i32, i64)> = got
                .partitions
                .into_iter()
                .map(|p| (p.topic.to_string(), p.partition, p.offset))
                .collect();
            assert_eq!(
                got,
                vec![(a.clone(), 0, 42), (a, 3, 7), (b, 1, 0)],
                "v{version}"
            );
        }
    }

    #[test]
    fn reads_the_fetch_session_and_the_forgotten_partitions_from_v7_on() {
        use kafka_protocol::messages::fetch_request::ForgottenTopic;
        let req = request()
            .with_session_id(77)
            .with_session_epoch(3)
            .with_forgotten_topics_data(vec![ForgottenTopic::default()
                .with_topic(TopicName(s("orders")))
                .with_topic_id(uuid::Uuid::from_bytes(ID))
                .with_partitions(vec![5, 6])]);
        for version in 7..=17 {
            let f = req_frame(1, version, 5, "consumer-1", &req);
            let got = fetch_request(&f[4..], version, &mut TopicNames::default())
                .unwrap_or_else(|| panic!("v{version}"));
            let (a, _) = names(version);
            assert_eq!((got.session_id, got.epoch), (77, 3), "v{version}");
            assert!(!got.is_full());
            assert_eq!(got.forgotten, vec![(a.clone(), 5), (a, 6)], "v{version}");
            assert_eq!(got.partitions.len(), 3);
        }
        // Before v7 there are no sessions: every request is full.
        let f = req_frame(1, 6, 5, "consumer-1", &request());
        let got = fetch_request(&f[4..], 6, &mut TopicNames::default()).unwrap();
        assert!(got.is_full() && got.forgotten.is_empty());
    }

    #[test]
    fn a_truncated_request_gives_none() {
        let f = req_frame(1, 12, 5, "c", &request());
        assert_eq!(
            fetch_request(&f[4..40], 12, &mut TopicNames::default()),
            None
        );
    }

    fn skim(bytes: &[u8], version: i16, chunk: usize) -> (Vec<PartitionWatermark>, bool) {
        let mut s = FetchSkim::new(version);
        for c in bytes.chunks(chunk) {
            s.feed(c);
        }
        s.finish()
    }

    #[test]
    fn skims_partition_headers_past_the_records_in_every_response_version() {
        for version in 4..=17 {
            let f = resp_frame(1, version, 5, &response(version));
            let (a, b) = names(version);
            for chunk in [1, 7, 100, 100_000] {
                let (got, complete) = skim(&f[4..], version, chunk);
                assert!(complete, "v{version} chunk {chunk}");
                let got: Vec<(String, i32, i64, i64)> = got
                    .into_iter()
                    .map(|p| {
                        let t = p.topic.to_string();
                        (t, p.partition, p.high_watermark, p.last_stable_offset)
                    })
                    .collect();
                assert_eq!(
                    got,
                    vec![
                        (a.clone(), 0, 100, 99),
                        (a.clone(), 3, 9, 8),
                        (b.clone(), 1, 5, 4)
                    ],
                    "v{version} chunk {chunk}"
                );
            }
        }
    }

    #[test]
    fn holds_no_more_than_one_step_of_bytes() {
        let f = resp_frame(1, 12, 5, &response(12));
        let mut s = FetchSkim::new(12);
        for c in f[4..].chunks(512) {
            s.feed(c);
            assert!(s.buffered_bytes() <= 1024, "{}", s.buffered_bytes());
        }
    }

    #[test]
    fn a_bogus_count_neither_allocates_nor_loops() {
        // v12 header, throttle, error, session, then 2^62 topics.
        let mut b = vec![0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        b.extend([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f]);
        b.extend(vec![0x01; 10_000]);
        let (got, complete) = skim(&b, 12, 333);
        assert!(!complete);
        assert!(got.len() <= MAX_PARTITIONS);
    }

    #[test]
    fn a_topic_named_again_is_the_same_text_made_once() {
        let mut names = TopicNames::default();
        let id = [0xab; 16];
        let first = names.text(&id, true);
        assert_eq!(first.as_str(), uuid_text(&id));
        assert!(Id::ptr_eq(&first, &names.text(&id, true)));
        // The same bytes as a name are another topic.
        assert_eq!(
            names.text(&id, false).as_str(),
            String::from_utf8_lossy(&id)
        );
        assert_eq!(names.text(b"orders", false).as_str(), "orders");
        assert_eq!(names.text(b"orders\xff", false).as_str(), "orders\u{fffd}");
        // The id's bytes as a name and "orders\xff" are not UTF-8: named
        // each time, not remembered.
        assert_eq!(names.known.len(), 2);
        for n in 0..200u32 {
            let name = format!("t{n}");
            assert_eq!(names.text(name.as_bytes(), false).as_str(), name);
        }
        assert!(names.known.len() <= MAX_TOPIC_NAMES);
        // A name longer than the list keeps is named, not remembered.
        names.known.clear();
        let long = vec![b'x'; MAX_REMEMBERED_NAME + 1];
        assert_eq!(names.text(&long, false).len(), long.len());
        assert!(names.known.is_empty());
    }

    #[test]
    fn room_is_asked_for_the_stated_partitions_up_to_a_cap() {
        assert_eq!(room_for(3, 0), 3);
        assert_eq!(room_for(u64::MAX, 0), ROOM_AT_ONCE as usize);
        assert_eq!(room_for(50, MAX_PARTITIONS - 10), 10);
        assert_eq!(room_for(50, MAX_PARTITIONS + 5), 0);
    }
}

#[cfg(test)]
mod batch_tests {
    use super::*;

    /// A v2 record batch header of `size` bytes in all.
    fn batch(base: i64, last_delta: i32, size: usize) -> Vec<u8> {
        let mut b = base.to_be_bytes().to_vec();
        b.extend(((size - 12) as i32).to_be_bytes());
        b.extend([0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0]);
        b.extend(last_delta.to_be_bytes());
        b.resize(size, 0x5a);
        b
    }

    #[test]
    fn reads_the_last_offset_delivered_from_whole_batches_only() {
        // v4 response: corr, throttle, 1 topic "t", 1 partition.
        let mut r = vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 1];
        r.extend(0i32.to_be_bytes()); // partition
        r.extend(0i16.to_be_bytes()); // error
        r.extend(200i64.to_be_bytes()); // high watermark
        r.extend(200i64.to_be_bytes()); // last stable offset
        r.extend((-1i32).to_be_bytes()); // aborted: null
        let mut records = batch(100, 4, 80);
        records.extend(batch(105, 2, 60));
        records.extend(&batch(108, 9, 500)[..40]); // cut off by the fetch size
        r.extend((records.len() as i32).to_be_bytes());
        r.extend(records);
        for chunk in [1, 5, 64, 10_000] {
            let mut s = FetchSkim::new(4);
            for c in r.chunks(chunk) {
                s.feed(c);
            }
            let (got, complete) = s.finish();
            assert!(complete, "chunk {chunk}");
            assert_eq!(got[0].last_offset, Some(107), "chunk {chunk}");
            assert_eq!(got[0].high_watermark, 200);
        }
    }

    /// A v4 answer for topic "t" with one partition per record set
    /// (numbered from 0, high watermark 200), skimmed in pieces of 1, 5,
    /// 64 and all bytes (each must give the same).
    fn answer(sets: &[Vec<u8>]) -> (Vec<PartitionWatermark>, bool) {
        let mut r = vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, b't'];
        r.extend((sets.len() as i32).to_be_bytes());
        for (p, records) in sets.iter().enumerate() {
            r.extend((p as i32).to_be_bytes());
            r.extend(0i16.to_be_bytes());
            r.extend(200i64.to_be_bytes());
            r.extend(200i64.to_be_bytes());
            r.extend((-1i32).to_be_bytes());
            r.extend((records.len() as i32).to_be_bytes());
            r.extend(records);
        }
        let skim = |chunk: usize| {
            let mut s = FetchSkim::new(4);
            r.chunks(chunk).for_each(|c| s.feed(c));
            s.finish()
        };
        let whole = skim(r.len());
        for chunk in [1, 5, 64] {
            assert_eq!(skim(chunk), whole, "in pieces of {chunk}");
        }
        whole
    }

    /// A v0 message set entry holding one message with no key and no value:
    /// 26 bytes, shorter than a v2 batch's header.
    fn v0_entry(offset: i64) -> Vec<u8> {
        let mut b = offset.to_be_bytes().to_vec();
        b.extend(14i32.to_be_bytes());
        b.extend([0, 0, 0, 0, 0, 0]); // crc, magic 0, attributes
        b.extend((-1i32).to_be_bytes()); // key
        b.extend((-1i32).to_be_bytes()); // value
        b
    }

    #[test]
    fn batches_shorter_than_a_v2_header_are_read_as_far_as_they_go_and_the_next_partition_stays_aligned(
    ) {
        let mut first = v0_entry(100);
        first.extend(v0_entry(101));
        first.extend(batch(105, 2, 60));
        let (got, complete) = answer(&[first, batch(300, 1, 70)]);
        assert!(complete);
        assert_eq!(got[0].last_offset, Some(107));
        assert_eq!((got[1].partition, got[1].last_offset), (1, Some(301)));
    }

    #[test]
    fn a_corrupt_length_ends_its_record_set_and_a_last_offset_saturates() {
        let mut first = batch(100, 4, 80);
        let mut corrupt = batch(105, 2, 60);
        corrupt[8..12].copy_from_slice(&i32::MAX.to_be_bytes());
        first.extend(corrupt);
        let (got, complete) = answer(&[first, batch(i64::MAX - 1, 9, 80)]);
        assert!(complete);
        assert_eq!(got[0].last_offset, Some(104));
        assert_eq!(got[1].last_offset, Some(i64::MAX));
    }
}
