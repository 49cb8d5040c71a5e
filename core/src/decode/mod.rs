//! Decoding element bytes into Rust values (being written).
