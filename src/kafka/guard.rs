//! Decoding untrusted bytes with kafka-protocol without letting a bogus
//! array count abort the process or reserve more memory than the message
//! could fill.
//!
//! Takes: a message body and its version. Gives: the kafka-protocol struct,
//! or an error, never an abort. kafka-protocol 0.18 sizes each array with
//! `Vec::with_capacity(count)` straight from the wire before reading an
//! element (kafka-protocol-rs PRs #152, #161, #200, still open), so four
//! corrupt bytes can demand gigabytes; an allocation failure aborts, which no
//! `catch_unwind` can stop.
//!
//! The crate reads through a [`Guard`] buffer. Any INT32 or unsigned varint
//! (an array count, a string or bytes length, a tag, or a plain field) that
//! is *suspect* — larger than the bytes left, or larger than
//! [`MAX_ARRAY_ELEMENTS`] — is replaced by a small `fill` (a varint is
//! looked at whole, so its replacement is one terminating byte and never a
//! value shifted into high bits). Then:
//! - a replaced value that the crate uses at once as the size of a bytes or
//!   string read is a *length*: lengths only slice the buffer, so that
//!   position is allowed its true value and the message decoded again;
//! - with no suspect value left, that decode is exact and is the answer;
//! - otherwise the message is decoded again with a second `fill`: a replaced
//!   *count* changes how many elements are read, so the read positions
//!   differ; a replaced plain field (a rebalance timeout of 300000) changes
//!   nothing. Same positions → every replaced value was a plain field;
//!   different positions → an array count is over the cap or the bytes
//!   left, and the message is refused with that reason;
//! - the true values come from a third decode, guarded still, with the
//!   replaced positions handed out true: a suspect value it meets elsewhere
//!   is refused. The guarded decodes agree but misread when a corrupt
//!   boolean of 0x80 or more (read a byte at a time) is taken for a long
//!   varint and skipped whole, shifting every later position alike; the
//!   true layout is then checked by this decode, but for the bytes of that
//!   "varint" after the boolean, handed out as a varint's are (a real
//!   tagged field's tag or size is read the same way and must pass). Past
//!   [`MAX_TRUSTED`] replaced values in one message it is unguarded.
//!
//! So no array is ever reserved for more than [`MAX_ARRAY_ELEMENTS`]
//! elements or more elements than bytes left (docs/limits.md). A message
//! crafted so that one extra element re-aligns every later read could still
//! pass a count at a position both guarded decodes took for a plain field,
//! or in the four bytes after a corrupt boolean; random corruption cannot
//! in practice. The real fix belongs upstream
//! (the PRs above).
//!
//! Nearly every JoinGroup request took that long path: its
//! `rebalance_timeout_ms` (300000 by default) is over the cap and its
//! `session_timeout_ms` over the bytes left, so it was decoded three times.
//! A decode is a function of the bytes read so far, so a value read at the
//! same position after the same bytes, by the same message type and
//! version, with every value before it handed out true, is the same field.
//! The positions proven plain are remembered by the bytes before them
//! ([`PlainFields`]), and the next such message (the next member of the
//! group, the next coordinator answer naming the same broker) is decoded
//! once. What they remember was proven as above, and is learned only when
//! the true decode then read as many bytes as the guarded ones: a crafted
//! message could teach them a wrong position only as it could pass itself,
//! but what it taught would then reach every later message on that thread
//! with the same bytes before that position.

use std::cell::RefCell;
use std::ops::Range;

use bytes::{Buf, Bytes, TryGetError};
use kafka_protocol::protocol::buf::ByteBuf;
use kafka_protocol::protocol::Decodable;

use crate::fast_hash::FastSet;

/// Most elements one array of a decoded message may declare. Kafka has no
/// protocol limit on members or partitions (`group.max.size` defaults to
/// `Integer.MAX_VALUE`); its bound is `socket.request.max.bytes` (100 MiB).
/// 2^17 elements of at most ~128 bytes in memory each keeps one array's
/// reservation near 16 MiB, and no real group has 131,072 members or one
/// member 131,072 partitions of one topic in an assignment.
pub(crate) const MAX_ARRAY_ELEMENTS: usize = 1 << 17;

/// Most lengths over [`MAX_ARRAY_ELEMENTS`] one message may hold before it
/// is refused (each costs one more decode).
const MAX_LONG_FIELDS: usize = 64;

/// Plain fields remembered per thread before the memory starts again
/// (a JoinGroup request teaches two, a coordinator's answer one: a few
/// hundred groups' worth).
const MAX_PLAIN_FIELDS: usize = 1024;

/// Longest prefix a plain field is remembered by (a JoinGroup's fields
/// before its timeouts are its group id and session timeout; a longer
/// prefix is decoded the long way each time).
const MAX_PLAIN_PREFIX: usize = 512;

/// Replaced values one message may teach [`PlainFields`] (more: nothing
/// is learned from it).
const MAX_REPLACED: usize = 8;

/// Replaced values proven plain that the true decode is checked against
/// (more, in one message: it is decoded unguarded, as before this check).
const MAX_TRUSTED: usize = 4096;

/// Suspect values proven plain fields (see the module's doc): each kept as
/// the message type and version, then every byte before the value. At most
/// [`MAX_PLAIN_FIELDS`] of at most [`MAX_PLAIN_PREFIX`] bytes and a type
/// name (about 600 KB per thread at worst).
#[derive(Default)]
struct PlainFields {
    known: FastSet<Box<[u8]>>,
}

thread_local! {
    static PLAIN_FIELDS: RefCell<PlainFields> = RefCell::new(PlainFields::default());
}

#[cfg(test)]
thread_local! {
    /// Guarded decodes run on this thread, for the tests.
    static GUARDED_DECODES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts one guarded decode (tests only).
fn count_guarded_decode() {
    #[cfg(test)]
    GUARDED_DECODES.set(GUARDED_DECODES.get() + 1);
}

/// The message type and version a decode reads as, for [`PlainFields`].
#[derive(Clone, Copy)]
struct MessageKind {
    /// The kafka-protocol type's name.
    name: &'static str,
    version: i16,
}

impl MessageKind {
    fn of<T>(version: i16) -> MessageKind {
        MessageKind {
            name: std::any::type_name::<T>(),
            version,
        }
    }

    /// A [`PlainFields`] key: the type's name (no NUL in it), a NUL, the
    /// version, then the bytes before the value.
    fn key(self, before: &[u8]) -> Vec<u8> {
        let mut k = Vec::with_capacity(self.name.len() + 3 + before.len());
        k.extend_from_slice(self.name.as_bytes());
        k.push(0);
        k.extend_from_slice(&self.version.to_be_bytes());
        k.extend_from_slice(before);
        k
    }
}

impl PlainFields {
    /// Whether the value at `at` of `bytes`, read by a message of `kind`,
    /// was proven a plain field.
    fn proven(&self, kind: MessageKind, bytes: &[u8], at: usize) -> bool {
        if self.known.is_empty() || at > MAX_PLAIN_PREFIX {
            return false;
        }
        self.known.contains(kind.key(&bytes[..at]).as_slice())
    }

    /// Remembers each position of `replaced` in `bytes` as a plain field of
    /// `kind`: called once the guarded decodes showed every replaced value
    /// plain and the true decode read what they read.
    fn learn(&mut self, kind: MessageKind, bytes: &[u8], replaced: &[usize]) {
        for &at in replaced.iter().filter(|&&at| at <= MAX_PLAIN_PREFIX) {
            if self.known.len() >= MAX_PLAIN_FIELDS {
                self.known.clear();
            }
            self.known.insert(kind.key(&bytes[..at]).into_boxed_slice());
        }
    }
}

/// A read-only buffer that records read positions and replaces suspect
/// counts.
struct Guard<'a> {
    bytes: Bytes,
    pos: usize,
    fill: u8,
    /// Positions of values known to be lengths: handed out true.
    lengths: &'a [usize],
    /// Whether a suspect value was replaced.
    replaced: bool,
    /// The last value replaced: where it started, and whether the very next
    /// read may still show it to be a length.
    last_replaced: Option<usize>,
    /// A replaced value turned out to be a length at this position: the
    /// decode is stopped (every read fails) and done again.
    found_length: Option<usize>,
    /// Read positions from the first replacement on. Both decodes read the
    /// same positions up to their first replacement (same bytes, same known
    /// lengths; the fill only matters once a value is replaced), so only
    /// what follows can differ. Nearly every message has no replacement:
    /// recording every read grew a vector per message (2.5 % of the
    /// instructions on a dense coordinator capture, callgrind).
    trace: Vec<usize>,
    /// Continuation bytes of an accepted varint still to hand out as read.
    varint_left: u8,
    /// Where each replaced value started (the first [`MAX_TRUSTED`]), and
    /// whether there were more.
    replaced_at: Vec<usize>,
    replaced_more: bool,
    /// The true decode's guard: where the values proven plain start
    /// (ascending): handed out true.
    trusted: &'a [usize],
    /// Plain fields proven by earlier messages, and this message's kind:
    /// a suspect value read with nothing replaced before it is handed out
    /// true when its prefix is one of them.
    plain: Option<(&'a PlainFields, MessageKind)>,
}

impl<'a> Guard<'a> {
    fn new(bytes: Bytes, fill: u8, lengths: &'a [usize]) -> Guard<'a> {
        Guard {
            bytes,
            pos: 0,
            fill,
            lengths,
            replaced: false,
            last_replaced: None,
            found_length: None,
            trace: Vec::new(),
            varint_left: 0,
            replaced_at: Vec::new(),
            replaced_more: false,
            trusted: &[],
            plain: None,
        }
    }

    /// The same guard, handing out true the values at `trusted`.
    fn trusting(mut self, trusted: &'a [usize]) -> Guard<'a> {
        self.trusted = trusted;
        self
    }

    fn is_trusted(&self, at: usize) -> bool {
        self.trusted.binary_search(&at).is_ok()
    }

    /// The same guard, handing out true the suspect values `plain` proved
    /// plain fields of `kind`.
    fn knowing(mut self, plain: &'a PlainFields, kind: MessageKind) -> Guard<'a> {
        self.plain = Some((plain, kind));
        self
    }

    /// Whether the suspect value at `at` is a plain field an earlier
    /// message proved: only while nothing was replaced before it, so that
    /// every read before it was the true decode's.
    fn proven_plain(&self, at: usize) -> bool {
        !self.replaced
            && self
                .plain
                .is_some_and(|(plain, kind)| plain.proven(kind, &self.bytes, at))
    }

    /// Whether a value starting at `at`, read as `elements` array elements
    /// with the bytes from `after` on left for them, is replaced.
    /// A known length may pass the cap (a long string or bytes field), but
    /// never the bytes left: no well-formed length does, and a count taken
    /// for a length there would reserve that many elements (fuzz finding
    /// `oom-04cf6569`: a Metadata answer's replica count of 2^32 - 2,
    /// 17 GB).
    fn suspect(&self, at: usize, after: usize, elements: u64) -> bool {
        let left = self.bytes.len().saturating_sub(after) as u64;
        elements > left || (elements > MAX_ARRAY_ELEMENTS as u64 && !self.lengths.contains(&at))
    }

    fn replace(&mut self, at: usize) {
        self.replaced = true;
        self.last_replaced = Some(at);
        if self.replaced_at.len() < MAX_TRUSTED {
            self.replaced_at.push(at);
        } else {
            self.replaced_more = true;
        }
    }

    /// Called by every bytes read: a read of the fill's size right after a
    /// replacement shows the replaced value was a length.
    fn saw_bytes_read(&mut self, size: usize) {
        if let Some(at) = self.last_replaced.take() {
            let fill = usize::from(self.fill);
            if size == fill || size + 1 == fill {
                self.found_length = Some(at);
            }
        }
    }

    fn halted(&self) -> bool {
        self.found_length.is_some()
    }

    /// The unsigned varint starting at `at`, read as kafka-protocol reads it
    /// (at most 5 bytes, high bits beyond 32 dropped), and its length.
    fn varint_at(&self, at: usize) -> (u64, usize) {
        let mut value: u32 = 0;
        let mut len = 0;
        for (i, &b) in self.bytes[at..].iter().take(5).enumerate() {
            value |= u32::from(b & 0x7f).wrapping_shl(7 * i as u32);
            len = i + 1;
            if b < 0x80 {
                break;
            }
        }
        (u64::from(value), len)
    }
}

impl Buf for Guard<'_> {
    fn remaining(&self) -> usize {
        if self.halted() {
            return 0;
        }
        self.bytes.len().saturating_sub(self.pos)
    }

    fn chunk(&self) -> &[u8] {
        if self.halted() {
            return &[];
        }
        self.bytes.get(self.pos..).unwrap_or_default()
    }

    fn advance(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.bytes.len());
        if self.replaced {
            self.trace.push(self.pos);
        }
        self.last_replaced = None;
    }

    fn try_get_i32(&mut self) -> Result<i32, TryGetError> {
        let at = self.pos;
        let Some(raw) = self.chunk().get(..4) else {
            return Err(TryGetError {
                requested: 4,
                available: self.remaining(),
            });
        };
        let value = i32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]);
        self.advance(4);
        if value > 0
            && self.suspect(at, at + 4, value as u64)
            && !self.proven_plain(at)
            && !self.is_trusted(at)
        {
            self.replace(at);
            return Ok(i32::from(self.fill));
        }
        Ok(value)
    }

    /// kafka-protocol reads varints a byte at a time (`UnsignedVarInt`).
    /// At a varint's first byte the whole varint is looked at: if suspect,
    /// it is skipped and `fill` handed out as a one-byte varint.
    fn try_get_u8(&mut self) -> Result<u8, TryGetError> {
        let at = self.pos;
        let Some(&b) = self.chunk().first() else {
            return Err(TryGetError {
                requested: 1,
                available: 0,
            });
        };
        if self.varint_left > 0 {
            self.varint_left -= 1;
            self.advance(1);
            return Ok(b);
        }
        let (value, len) = self.varint_at(at);
        // A trusted varint (a value proven plain that the guarded decodes
        // read as a varint: an unknown tagged field's tag, a known one's
        // size, or a corrupt boolean of 0x80 or more, read a byte at a
        // time) is handed out whole, as any accepted varint: a real tag of
        // 2^14 or more must not be refused for its continuation bytes.
        if b >= 0x80
            && self.suspect(at, at + len, value.saturating_sub(1))
            && !self.proven_plain(at)
            && !self.is_trusted(at)
        {
            self.advance(len);
            self.replace(at);
            return Ok(self.fill);
        }
        if b >= 0x80 {
            self.varint_left = (len - 1) as u8;
        }
        self.advance(1);
        Ok(b)
    }
}

impl ByteBuf for Guard<'_> {
    fn peek_bytes(&mut self, r: Range<usize>) -> Bytes {
        let (start, end) = (self.pos + r.start, (self.pos + r.end).min(self.bytes.len()));
        self.bytes.slice(start.min(end)..end)
    }

    fn get_bytes(&mut self, size: usize) -> Bytes {
        self.saw_bytes_read(size);
        let end = (self.pos + size).min(self.bytes.len());
        let out = self.bytes.slice(self.pos..end);
        self.advance(size);
        out
    }
}

/// Decodes `T` from the front of `buf` at `version`, advancing `buf` past
/// what was read; an array count over the bytes left or over
/// [`MAX_ARRAY_ELEMENTS`] is an error, never an allocation.
pub(crate) fn decode<T: Decodable>(buf: &mut Bytes, version: i16) -> Result<T, String> {
    let kind = MessageKind::of::<T>(version);
    let (result, learned) = PLAIN_FIELDS.with_borrow(|plain| {
        Ok::<_, String>(match guarded::<T>(buf, kind, plain)? {
            Guarded::Decoded(result) => (result, None),
            Guarded::AllPlain {
                complete: false, ..
            } => {
                // Too many to check against: decoded unguarded.
                (T::decode(buf, version).map_err(|e| e.to_string()), None)
            }
            Guarded::AllPlain {
                replaced,
                read,
                lengths,
                complete: true,
            } => {
                // Every replaced value was a plain field: the true decode,
                // guarded still with them handed out true, so that a value
                // the guarded decodes never read (their positions shifted
                // by a byte they took for a long varint where the message
                // has a boolean) is still refused.
                let mut truly = Guard::new(buf.clone(), 1, &lengths)
                    .knowing(plain, kind)
                    .trusting(&replaced);
                count_guarded_decode();
                let result = T::decode(&mut truly, version).map_err(|e| e.to_string());
                if truly.replaced || truly.halted() {
                    return Err(format!(
                        "a count the guarded decodes did not read exceeds the bytes left or the cap of {MAX_ARRAY_ELEMENTS} elements (corrupt message)"
                    ));
                }
                // The message's bytes, kept for learning (only on this
                // path: a clone per decode was a reference count per
                // message for nothing).
                let whole = buf.clone();
                buf.advance(truly.pos);
                // The next message with the same bytes before them is
                // decoded once: learned only when this decode read what
                // the guarded ones did.
                let teach = result.is_ok() && truly.pos == read && replaced.len() <= MAX_REPLACED;
                (result, teach.then_some((whole, replaced)))
            }
        })
    })?;
    if let Some((whole, replaced)) = learned {
        PLAIN_FIELDS.with_borrow_mut(|plain| plain.learn(kind, &whole, &replaced));
    }
    result
}

/// What the guarded decodes of [`guarded`] found.
enum Guarded<T> {
    /// No value was replaced: this is the true decode (`buf` advanced).
    Decoded(Result<T, String>),
    /// Every replaced value was a plain field, at these positions
    /// (ascending; `complete` when there were at most [`MAX_TRUSTED`]); the
    /// guarded decodes read `read` bytes, knowing these `lengths`.
    AllPlain {
        replaced: Vec<usize>,
        read: usize,
        lengths: Vec<usize>,
        complete: bool,
    },
}

/// The guarded decodes of `buf`: the first (again with each length it
/// found), and when it replaced a value the second; an error when a count
/// is over the cap or the bytes left.
fn guarded<T: Decodable>(
    buf: &mut Bytes,
    kind: MessageKind,
    plain: &PlainFields,
) -> Result<Guarded<T>, String> {
    let mut lengths = Vec::new();
    let first = loop {
        let mut first = Guard::new(buf.clone(), 1, &lengths).knowing(plain, kind);
        count_guarded_decode();
        let result = T::decode(&mut first, kind.version).map_err(|e| e.to_string());
        match first.found_length {
            Some(at) if lengths.contains(&at) => {
                return Err(
                    "a length or count exceeds the bytes left (corrupt or cut message)".into(),
                )
            }
            Some(at) if lengths.len() < MAX_LONG_FIELDS => lengths.push(at),
            Some(_) => {
                return Err(format!(
                    "more than {MAX_LONG_FIELDS} fields over {MAX_ARRAY_ELEMENTS} bytes"
                ))
            }
            None if !first.replaced => {
                buf.advance(first.pos);
                return Ok(Guarded::Decoded(result));
            }
            None => break first,
        }
    };
    // A replaced count read as 1 must decode that many elements, read as 2
    // one more; if that fails at the end of the buffer no position moves,
    // so failure itself counts. The plain fields known are the same for
    // both, so both hand out the same true values before their first
    // replacement.
    let mut again = Guard::new(buf.clone(), 2, &lengths).knowing(plain, kind);
    count_guarded_decode();
    let ok = T::decode(&mut again, kind.version).is_ok();
    if !ok || again.trace != first.trace || again.halted() {
        return Err(format!(
            "an array count exceeds the bytes left or the cap of {MAX_ARRAY_ELEMENTS} elements (corrupt or oversized message)"
        ));
    }
    let (replaced, read, complete) = (first.replaced_at, first.pos, !first.replaced_more);
    Ok(Guarded::AllPlain {
        replaced,
        read,
        lengths,
        complete,
    })
}

#[cfg(test)]
mod tests {
    use bytes::BytesMut;
    use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
    use kafka_protocol::messages::{
        GroupId, JoinGroupRequest, JoinGroupResponse, ListGroupsResponse, OffsetFetchRequest,
    };
    use kafka_protocol::protocol::{Encodable, StrBytes};

    use super::*;

    #[test]
    fn keeps_large_plain_fields_exact() {
        let req = JoinGroupRequest::default()
            .with_group_id(GroupId(StrBytes::from_static_str("g")))
            .with_session_timeout_ms(45_000)
            .with_rebalance_timeout_ms(300_000);
        for version in [1, 7] {
            let mut b = BytesMut::new();
            req.encode(&mut b, version).unwrap();
            let got: JoinGroupRequest = decode(&mut b.freeze(), version).unwrap();
            assert_eq!(
                (got.session_timeout_ms, got.rebalance_timeout_ms),
                (45_000, 300_000)
            );
        }
    }

    #[test]
    fn refuses_an_array_count_larger_than_the_message() {
        // ListGroups v0 response: error_code INT16, groups ARRAY (count i32::MAX).
        let bogus = Bytes::from_static(&[0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 1, b'g']);
        let got: Result<ListGroupsResponse, _> = decode(&mut bogus.clone(), 0);
        assert!(got.unwrap_err().contains("array count"));
        // v3 (flexible): a compact array count as a 5-byte varint.
        let bogus = Bytes::from_static(&[0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0]);
        assert!(decode::<ListGroupsResponse>(&mut bogus.clone(), 3).is_err());
    }

    #[test]
    fn a_five_byte_varint_count_is_refused_without_reserving_2_to_the_28() {
        // JoinGroup v6 response: throttle, error, generation, protocol type
        // and name (null), leader "", skip_assignment absent, member_id "",
        // then the members count `80 80 80 80 08`.
        let mut b = vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1];
        b.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x08]);
        b.extend_from_slice(&[0; 8]);
        let got = decode::<JoinGroupResponse>(&mut Bytes::from(b), 6);
        let err = got.unwrap_err();
        assert!(err.contains("array count"), "{err}");
    }

    #[test]
    fn a_count_under_the_bytes_left_but_over_the_cap_is_refused() {
        // ListGroups v0 response: a count of 2^20 groups in a message that
        // has 2^20 + 2 bytes left (each group could be 1 byte long).
        let count = 1u32 << 20;
        let mut b = vec![0, 0];
        b.extend_from_slice(&count.to_be_bytes());
        b.resize(b.len() + count as usize + 2, 0);
        let got = decode::<ListGroupsResponse>(&mut Bytes::from(b), 0);
        assert!(got.unwrap_err().contains("cap"));
    }

    #[test]
    fn a_bytes_field_longer_than_the_cap_is_decoded_whole() {
        let metadata = Bytes::from(vec![7u8; MAX_ARRAY_ELEMENTS * 3]);
        let req = JoinGroupRequest::default()
            .with_group_id(GroupId(StrBytes::from_static_str("g")))
            .with_rebalance_timeout_ms(300_000)
            .with_protocols(vec![JoinGroupRequestProtocol::default()
                .with_name(StrBytes::from_static_str("range"))
                .with_metadata(metadata.clone())]);
        for version in [5, 6] {
            let mut b = BytesMut::new();
            req.encode(&mut b, version).unwrap();
            let got: JoinGroupRequest = decode(&mut b.freeze(), version).unwrap();
            assert_eq!(got.protocols[0].metadata, metadata);
            assert_eq!(got.rebalance_timeout_ms, 300_000);
        }
    }

    #[test]
    fn advances_the_buffer_past_the_message() {
        let mut b = BytesMut::new();
        ListGroupsResponse::default().encode(&mut b, 4).unwrap();
        b.extend_from_slice(&[1, 2]);
        let mut buf = b.freeze();
        let _: ListGroupsResponse = decode(&mut buf, 4).unwrap();
        assert_eq!(buf.len(), 2);
    }

    #[test]
    fn fuzz_oom_04cf6569_a_known_length_position_never_passes_the_bytes_left() {
        // A five-byte varint of 2^32 - 1 at position 0, taken for a length
        // there: still replaced, since only 3 bytes follow it.
        let bytes = Bytes::from_static(&[0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3]);
        let lengths = [0];
        let g = Guard::new(bytes, 1, &lengths);
        assert!(g.suspect(0, 5, u64::from(u32::MAX) - 1));
        // Within the bytes left a known length may pass the array cap.
        let long = Bytes::from(vec![0u8; MAX_ARRAY_ELEMENTS + 16]);
        let g = Guard::new(long, 1, &lengths);
        assert!(!g.suspect(0, 5, MAX_ARRAY_ELEMENTS as u64 + 1));
    }

    fn join_group(
        group: &'static str,
        session: i32,
        rebalance: i32,
        member: &'static str,
    ) -> Bytes {
        let mut b = BytesMut::new();
        JoinGroupRequest::default()
            .with_group_id(GroupId(StrBytes::from_static_str(group)))
            .with_session_timeout_ms(session)
            .with_rebalance_timeout_ms(rebalance)
            .with_member_id(StrBytes::from_static_str(member))
            .with_protocol_type(StrBytes::from_static_str("consumer"))
            .with_protocols(vec![JoinGroupRequestProtocol::default()
                .with_name(StrBytes::from_static_str("range"))
                .with_metadata(Bytes::from_static(&[0, 1, 0, 0, 0, 0]))])
            .encode(&mut b, 5)
            .unwrap();
        b.freeze()
    }

    /// The guarded decodes `f` ran on this thread.
    fn guarded_decodes(f: impl FnOnce()) -> usize {
        let before = GUARDED_DECODES.get();
        f();
        GUARDED_DECODES.get() - before
    }

    #[test]
    fn a_join_group_after_one_with_the_same_group_and_timeouts_is_decoded_once() {
        PLAIN_FIELDS.with_borrow_mut(|p| p.known.clear());
        // 45000 is over the bytes left and 300000 over the cap: both are
        // replaced, proven plain by a second guarded decode, then read true
        // by a third, guarded still.
        let first = join_group("orders", 45_000, 300_000, "");
        let n = guarded_decodes(|| {
            let got: JoinGroupRequest = decode(&mut first.clone(), 5).unwrap();
            assert_eq!(
                (got.session_timeout_ms, got.rebalance_timeout_ms),
                (45_000, 300_000)
            );
        });
        assert_eq!(n, 3);
        // The next member: the same bytes before both timeouts, so each is
        // the same field and handed out true at once.
        let next = join_group("orders", 45_000, 300_000, "consumer-1-a");
        let n = guarded_decodes(|| {
            let got: JoinGroupRequest = decode(&mut next.clone(), 5).unwrap();
            assert_eq!(got.member_id.as_str(), "consumer-1-a");
            assert_eq!(got.rebalance_timeout_ms, 300_000);
        });
        assert_eq!(n, 1);
        // Only the bytes before a value are its key: another rebalance
        // timeout after the same group and session timeout is read true.
        let longer = join_group("orders", 45_000, 600_000, "");
        let got: JoinGroupRequest = decode(&mut longer.clone(), 5).unwrap();
        assert_eq!(got.rebalance_timeout_ms, 600_000);
        // Another group's bytes differ before both: the long way again.
        let other = join_group("payments", 45_000, 300_000, "");
        assert_eq!(
            guarded_decodes(|| drop(decode::<JoinGroupRequest>(&mut other.clone(), 5))),
            3
        );
    }

    #[test]
    fn a_plain_field_learned_for_one_message_never_passes_a_count_of_another() {
        PLAIN_FIELDS.with_borrow_mut(|p| p.known.clear());
        // JoinGroup v1: group_id "g", then session_timeout_ms 45000 (plain).
        let mut join = BytesMut::new();
        JoinGroupRequest::default()
            .with_group_id(GroupId(StrBytes::from_static_str("g")))
            .with_session_timeout_ms(45_000)
            .encode(&mut join, 1)
            .unwrap();
        decode::<JoinGroupRequest>(&mut join.freeze(), 1).unwrap();
        // OffsetFetch v1: group_id "g", then its topics count, 45000 again,
        // after the very same bytes: a count over the bytes left, refused.
        let mut fetch = vec![0, 1, b'g'];
        fetch.extend_from_slice(&45_000i32.to_be_bytes());
        fetch.extend_from_slice(&[0; 16]);
        let got = decode::<OffsetFetchRequest>(&mut Bytes::from(fetch), 1);
        assert!(got.unwrap_err().contains("array count"));
    }

    #[test]
    fn nothing_is_learned_when_the_true_decode_reads_otherwise_than_the_guarded_ones() {
        PLAIN_FIELDS.with_borrow_mut(|p| p.known.clear());
        // JoinGroup v9 response: throttle, error, generation, null protocol
        // type and name, leader "", then skip_assignment, a boolean read a
        // byte at a time: 0xff and four more bytes the guard takes for one
        // varint of 2^32 - 1 (replaced, proven "plain" by the second guarded
        // decode, which skips the same five bytes), then member_id "", no
        // members, no tagged fields. The true decode reads the boolean as
        // one byte and the rest as a member id of 2^32 - 2 bytes: it fails,
        // and the boolean's position must not be remembered.
        let mut b = vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1];
        b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        b.extend_from_slice(&[1, 1, 0]);
        assert!(decode::<JoinGroupResponse>(&mut Bytes::from(b), 9).is_err());
        assert!(PLAIN_FIELDS.with_borrow(|p| p.known.is_empty()));
    }

    #[test]
    fn a_trusted_varint_passes_whole_and_a_value_after_it_is_still_looked_at() {
        // The true decode's guard trusts position 0: its varint of 2^28 - 1
        // (over the bytes left) is handed out whole, as an unknown tagged
        // field's tag would be, continuation bytes and all.
        let mut b = vec![0xff, 0xff, 0xff, 0x7f];
        b.extend_from_slice(&0x7fff_ffffi32.to_be_bytes());
        let mut g = Guard::new(Bytes::from(b), 1, &[]).trusting(&[0]);
        let tag: Vec<u8> = (0..4).map(|_| g.try_get_u8().unwrap()).collect();
        assert_eq!(tag, [0xff, 0xff, 0xff, 0x7f]);
        assert!(!g.replaced);
        // The INT32 after it, not trusted, is still replaced.
        assert_eq!(g.try_get_i32().unwrap(), 1);
        assert!(g.replaced);
    }

    #[test]
    fn plain_fields_are_forgotten_past_their_bound() {
        let mut plain = PlainFields::default();
        let kind = MessageKind::of::<JoinGroupRequest>(5);
        for i in 0..MAX_PLAIN_FIELDS + 10 {
            let bytes = (i as u32).to_be_bytes();
            plain.learn(kind, &bytes, &[4]);
            assert!(plain.known.len() <= MAX_PLAIN_FIELDS);
            assert!(plain.proven(kind, &bytes, 4));
        }
        // A prefix longer than the bound is never kept.
        plain.known.clear();
        let long = vec![0u8; MAX_PLAIN_PREFIX + 1];
        plain.learn(kind, &long, &[MAX_PLAIN_PREFIX + 1]);
        assert!(plain.known.is_empty());
    }
}
