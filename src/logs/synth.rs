//! Generator placeholder
