//! Finding where a Kafka frame starts in bytes that are not at a frame
//! boundary (after a TCP gap, or when the capture began mid-connection).
//!
//! Takes: the splitter's search window and the direction's
//! [`FrameRules`]. Gives: the first offset where a frame plausibly starts,
//! or how much of the window can be dropped while waiting for more bytes.
//! A header alone is weak evidence (zero-filled data is full of
//! `00 00 00 10 00 00 00 01...` that read as Produce requests), so when the
//! candidate frame ends inside the window, what follows must plausibly
//! start the next frame too.

use super::header::{self, Read};
use super::rules::FrameRules;

/// The result of one scan of the window.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Scan {
    /// A frame plausibly starts at this offset.
    Found(usize),
    /// None yet; bytes before this offset can never start one.
    Waiting(usize),
}

/// Scans `window` for the first plausible frame start. An offset that needs
/// more bytes to judge (a long client id not yet arrived) does not stop the
/// scan: a later offset that is plausible now wins; otherwise the search
/// waits at the first undecided one.
pub(crate) fn scan(window: &[u8], rules: &dyn FrameRules) -> Scan {
    let mut undecided = None;
    for at in 0..window.len() {
        match judge(rules, &window[at..]) {
            Read::Done(()) => return Scan::Found(at),
            Read::Invalid => {}
            Read::NeedMore(_) => {
                undecided = undecided.or(Some(at));
            }
        }
    }
    Scan::Waiting(undecided.unwrap_or(window.len()))
}

/// Whether the first bytes of a capture that began mid-connection start a
/// frame: a sane size whose frame ends exactly where the first bytes end
/// (packet and frame boundaries coincide), or is followed by a frame whose
/// correlation id comes a little after its own (clients number requests
/// upwards, and brokers answer in order).
pub(crate) fn aligned_start(window: &[u8]) -> bool {
    let sane = |size: usize| (8..=header::MAX_PLAUSIBLE_FRAME).contains(&size);
    let Some(size) = header::size_at(window).filter(|s| sane(*s)) else {
        return false;
    };
    let end = size.saturating_add(4);
    if window.len() == end {
        return true;
    }
    let next = window.get(end..).unwrap_or_default();
    let (first, second) = (
        header::peek_correlation_id(&window[4..]),
        header::peek_correlation_id(next.get(4..).unwrap_or_default()),
    );
    match (header::size_at(next), first, second) {
        (Some(n), Some(a), Some(b)) => sane(n) && b > a && b - a <= 1000,
        _ => false,
    }
}

/// Whether a frame plausibly starts at `rest`, checking what follows it
/// when that is inside the window.
fn judge(rules: &dyn FrameRules, rest: &[u8]) -> Read<()> {
    match rules.plausible(rest) {
        Read::Done(()) => {}
        other => return other,
    }
    let next = header::size_at(rest).and_then(|size| rest.get(size.saturating_add(4)..));
    match next {
        Some(next) if !next.is_empty() => match rules.plausible_next(next) {
            Read::Invalid => Read::Invalid,
            _ => Read::Done(()),
        },
        _ => Read::Done(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::rules::Plan;

    struct Requests;

    impl FrameRules for Requests {
        fn plan(&self, _head: &[u8], _size: usize) -> Plan {
            Plan::Buffer
        }

        fn plausible(&self, at: &[u8]) -> Read<()> {
            header::plausible_request(at)
        }
    }

    fn request(corr: i32) -> Vec<u8> {
        let mut f = vec![0, 0, 0, 14, 0, 12, 0, 4];
        f.extend(corr.to_be_bytes());
        f.extend([0, 2, b'c', b'1', 0, 0]);
        f
    }

    #[test]
    fn finds_a_header_after_noise() {
        let mut w = vec![0xff; 7];
        w.extend(request(1));
        assert_eq!(scan(&w, &Requests), Scan::Found(7));
    }

    #[test]
    fn rejects_a_header_whose_frame_is_followed_by_nonsense() {
        let mut w = request(1);
        w.extend([0xff; 20]);
        let mut tail = vec![0xee; 3];
        tail.extend(request(2));
        w.extend(&tail);
        assert_eq!(scan(&w, &Requests), Scan::Found(18 + 20 + 3));
    }

    #[test]
    fn trusts_a_first_packet_that_is_exactly_one_frame() {
        let mut f = vec![0, 0, 0, 10, 0, 0, 0, 7];
        f.extend([0; 6]);
        assert!(aligned_start(&f));
        assert!(!aligned_start(&f[..12]));
        let mut two = f.clone();
        two.extend([0, 0, 0, 10, 0, 0, 0, 8, 1]);
        assert!(aligned_start(&two));
        two[21] = 6; // a correlation id going backwards
        assert!(!aligned_start(&two));
    }

    #[test]
    fn waits_at_a_header_that_needs_more_bytes() {
        let w = request(1);
        assert_eq!(scan(&w[..9], &Requests), Scan::Waiting(0));
        // The last three bytes could still begin a size prefix.
        assert_eq!(scan(&[0xff; 30], &Requests), Scan::Waiting(27));
    }
}
