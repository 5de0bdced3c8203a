//! Stage stub: filled in by its issue.
mod broker;
mod layout;
mod parsed;
