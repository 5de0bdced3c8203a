//! kgtrace's integration tests: one binary, one module per area.
//! Fixture paths resolve from `CARGO_MANIFEST_DIR`, never from ../shared.
