//! What each direction of a Kafka connection keeps, skips and accepts as a
//! frame start.
//!
//! Takes: the first bytes of a frame (and, for responses, the requests in
//! flight). Gives: the [`FrameRules`] the splitter asks, and their
//! implementation per direction. Requests of the group
//! APIs are buffered whole; every other request keeps only its header.
//! Responses are buffered when they answer a group-API request, or when
//! their request was not captured and they are small enough to guess from
//! their shape. A response can only be trusted as a frame start when its
//! correlation id matches a request in flight.

use super::apis;
use super::connection::InFlight;
use super::decode_data::{key as data, FETCH_REQUEST_CAP, METADATA_RESPONSE_CAP};
use super::header::{self, Read};

/// What to do with a frame whose first bytes have been read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Read at least this many body bytes before deciding.
    NeedMore(usize),
    /// Keep the whole body (a decoded API).
    Buffer,
    /// Skip the body, keeping only its first `keep` bytes.
    Skip {
        /// Prefix bytes to keep.
        keep: usize,
    },
    /// Skip the body like `Skip`, reading a Fetch response's partition
    /// headers as it passes ([`super::data_path::FetchSkim`]).
    Skim {
        /// Prefix bytes to keep.
        keep: usize,
        /// The Fetch version it answers.
        version: i16,
    },
    /// The header is impossible: we are not at a frame boundary.
    Lost,
}

/// Per-direction knowledge the splitter asks for.
pub(crate) trait FrameRules {
    /// Decides, from the body's first bytes and its size, what to keep.
    fn plan(&self, head: &[u8], size: usize) -> Plan;
    /// Whether `at` (4-byte size first) could start a frame here.
    fn plausible(&self, at: &[u8]) -> Read<()>;
    /// Whether a capture that begins mid-connection may be trusted to
    /// begin at a frame boundary when [`resync::aligned_start`] says the
    /// first bytes line up (responses: their correlation ids cannot be
    /// checked before their requests are seen).
    fn trust_aligned_start(&self) -> bool {
        false
    }
    /// Whether `at` could start the frame after a plausible one (a weaker
    /// test where the next frame's context is unknown).
    fn plausible_next(&self, at: &[u8]) -> Read<()> {
        self.plausible(at)
    }
}

/// Responses without a captured request are buffered up to this size so
/// that their shape can hint at the API; larger ones are skipped (guessing
/// tries every group API's schema, about a millisecond for 12 KiB).
const UNMATCHED_BUFFER_CAP: usize = 16 * 1024;

/// Rules for the client → broker direction.
pub(crate) struct RequestRules;

impl FrameRules for RequestRules {
    fn plan(&self, head: &[u8], size: usize) -> Plan {
        match header::peek_request(head) {
            Read::NeedMore(n) => Plan::NeedMore(n),
            Read::Invalid => Plan::Lost,
            Read::Done(p) if apis::is_group_api(p.api_key) => Plan::Buffer,
            // A consumer's position (Fetch) and offset resets (ListOffsets).
            Read::Done(p)
                if matches!(p.api_key, data::FETCH | data::LIST_OFFSETS)
                    && size <= FETCH_REQUEST_CAP =>
            {
                Plan::Buffer
            }
            // Produce: read on to `acks` (0 = no response will come).
            Read::Done(p) if p.api_key == 0 => match header::produce_acks(head, p.api_version) {
                Read::NeedMore(n) if n <= header::PRODUCE_PEEK => Plan::NeedMore(n),
                _ => Plan::Skip { keep: head.len() },
            },
            Read::Done(_) => Plan::Skip { keep: head.len() },
        }
    }

    fn plausible(&self, at: &[u8]) -> Read<()> {
        header::plausible_request(at)
    }
}

/// Rules for the broker → client direction, knowing the requests in flight
/// and whether answers without a request are still worth guessing at.
pub(crate) struct ResponseRules<'a>(pub &'a InFlight, pub bool);

impl FrameRules for ResponseRules<'_> {
    fn plan(&self, head: &[u8], size: usize) -> Plan {
        let Some(corr) = header::peek_correlation_id(head) else {
            return Plan::NeedMore(4);
        };
        match self.0.get(&corr) {
            Some(r) if apis::is_group_api(r.api_key) => Plan::Buffer,
            Some(r) if r.api_key == data::FETCH => Plan::Skim {
                keep: 4,
                version: r.api_version,
            },
            Some(r) if r.api_key == data::LIST_OFFSETS && size <= FETCH_REQUEST_CAP => Plan::Buffer,
            Some(r) if r.api_key == data::METADATA && size <= METADATA_RESPONSE_CAP => Plan::Buffer,
            Some(_) => Plan::Skip { keep: 4 },
            None if self.1 && size <= UNMATCHED_BUFFER_CAP => Plan::Buffer,
            None => Plan::Skip { keep: 4 },
        }
    }

    fn plausible(&self, at: &[u8]) -> Read<()> {
        header::plausible_response(at, |c| self.0.contains_key(&c))
    }

    fn trust_aligned_start(&self) -> bool {
        true
    }

    /// The next response may answer a request that was not captured: only
    /// its size is judged.
    fn plausible_next(&self, at: &[u8]) -> Read<()> {
        match header::size_at(at) {
            None => Read::NeedMore(4),
            Some(size) if header::plausible_frame_size(size) => Read::Done(()),
            Some(_) => Read::Invalid,
        }
    }
}
