//! Exchange → GroupEvent. Stage stub.
