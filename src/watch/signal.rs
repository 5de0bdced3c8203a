//! Ctrl-C and SIGTERM for `kgtrace watch`: the only place that knows about
//! signals (the `ctrlc` crate, with its `termination` feature for SIGTERM).
//!
//! Takes: nothing. Gives: a flag raised when the user asks the run to stop,
//! so the run can print its summary so far and exit as usual.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Raises the returned flag on SIGINT or SIGTERM. A second handler cannot
/// be installed in one process (tests run many watches in one): then the
/// flag is simply never raised by a signal.
pub fn stop_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let raised = flag.clone();
    let _ = ctrlc::set_handler(move || raised.store(true, Ordering::SeqCst));
    flag
}
