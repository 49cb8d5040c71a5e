//! Name hashing: a fast hash of a name's decoded text, the same however
//! the text is split or escaped, which sorts the name order. Builds that
//! do not hash names ([`mode::HASH_NAMES`]) give every name the hash 0.

use crate::mode::{self, HASH_NAMES};
use crate::view::name::Name;

/// A fast hash of the decoded UTF-8 bytes of a name, eight bytes at a time.
/// Feeding the same bytes in any split gives the same hash.
pub(crate) struct NameHasher {
    hash: u64,
    pending: u64,
    fill: u32,
}

impl NameHasher {
    pub(crate) const fn new() -> Self {
        NameHasher {
            hash: 0x243f_6a88_85a3_08d3,
            pending: 0,
            fill: 0,
        }
    }

    /// Feeds eight bytes (the first in the lowest byte); only while no
    /// partial word is pending.
    #[inline]
    pub(crate) fn mix(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    #[inline]
    fn write(&mut self, mut bytes: &[u8]) {
        // Small builds feed bytewise: smaller code, the same hash.
        if self.fill == 0 && mode::WORDWISE {
            while let Some((word, rest)) = bytes.split_first_chunk::<8>() {
                self.mix(u64::from_le_bytes(*word));
                bytes = rest;
            }
        }
        for &b in bytes {
            self.pending |= u64::from(b) << (self.fill.wrapping_mul(8) & 63);
            self.fill = self.fill.wrapping_add(1);
            if self.fill == 8 {
                let word = self.pending;
                self.mix(word);
                self.pending = 0;
                self.fill = 0;
            }
        }
    }

    /// Feeds the last `len` (0..8) bytes, in the low bytes of `tail` (the
    /// rest zero), and finishes: the same hash as writing them.
    #[inline]
    pub(crate) fn finish_with(mut self, tail: u64, len: u32) -> u32 {
        self.pending = tail;
        self.fill = len;
        self.finish()
    }

    fn finish(mut self) -> u32 {
        let last = self.pending ^ (u64::from(self.fill) << 59);
        self.mix(last);
        (self.hash >> 32) as u32
    }
}

pub(crate) fn hash_name(name: Name<'_>) -> u32 {
    if !HASH_NAMES {
        return 0;
    }
    let mut hasher = NameHasher::new();
    if name.has_escapes() {
        for b in name.bytes() {
            hasher.write(&[b]);
        }
    } else {
        hasher.write(name.raw());
    }
    hasher.finish()
}

pub(crate) fn hash_str(s: &str) -> u32 {
    hash_bytes(s.as_bytes())
}

/// Hash of text that needs no decoding.
pub(crate) fn hash_bytes(bytes: &[u8]) -> u32 {
    if !HASH_NAMES {
        return 0;
    }
    let mut hasher = NameHasher::new();
    hasher.write(bytes);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(small, ignore = "names are not hashed in small builds")]
    fn hash_is_split_invariant_and_decodes() {
        let text = "model.layers.17.mlp.gate_proj.weight-é😀";
        let whole = hash_str(text);
        for cut in 0..text.len() {
            let mut h = NameHasher::new();
            h.write(&text.as_bytes()[..cut]);
            h.write(&text.as_bytes()[cut..]);
            assert_eq!(h.finish(), whole, "{cut}");
        }
        assert_eq!(
            hash_name(Name::from_raw(
                br"model.layers.17.mlp.gate_proj.weight-\u00e9\ud83d\ude00"
            )),
            whole
        );
        assert_ne!(hash_str("a"), hash_str("a\0"));
    }
}
