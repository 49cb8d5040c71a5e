//! The writer (being written).
