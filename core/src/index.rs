//! The name index: a permutation of entries sorted by (hash of the decoded
//! name, decoded name). Building it finds duplicate names in O(n log n);
//! lookups binary-search it, hashing the probed names (no hash is stored).
//! On bare metal every hash is 0 ([`HASH_NAMES`]): the same index, ordered
//! by name alone.

use core::cmp::Ordering;

use crate::header::raw_string_at;
use crate::name::Name;
use crate::sort::{sort_by, sort_spread};
use crate::table::{link_entry, link_hash, Entry};

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
        // Bare metal feeds bytewise: smaller code, the same hash.
        if self.fill == 0 && !cfg!(target_os = "none") {
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

/// Whether names are hashed. On bare metal they are not: every hash is 0,
/// the index is ordered by name alone (the run of equal hashes below is the
/// whole index), and lookups compare names from the first probe. That costs
/// name comparisons instead of hash comparisons, which only large headers
/// notice, and saves the hashing code (about 400 bytes of flash).
const HASH_NAMES: bool = !cfg!(target_os = "none");

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

fn name_of<'h>(json: &'h [u8], entries: &[Entry], i: u32) -> Name<'h> {
    let start = entries.get(i as usize).map_or(0, Entry::name_start);
    Name::from_raw(raw_string_at(json, start))
}

/// Sorts `links` (see [`crate::table::link`]; entry numbers into `entries`)
/// by (hash, name). On a duplicate name, returns the header offset of the
/// later one's name (the first content byte).
pub(crate) fn sort_links(json: &[u8], entries: &[Entry], links: &mut [u64]) -> Result<(), usize> {
    let name = |l: u64| name_of(json, entries, link_entry(l));
    let by_name = |a: &u64, b: &u64| name(*a).cmp_name(&name(*b)).then(a.cmp(b)).is_lt();
    if HASH_NAMES {
        sort_spread(links);
        // Within runs of equal hashes (rare), order by name.
        let same_hash = |a: &u64, b: &u64| link_hash(*a) == link_hash(*b);
        for run in links.chunk_by_mut(same_hash) {
            if run.len() > 1 {
                sort_by(run, by_name);
            }
        }
    } else {
        sort_by(links, by_name);
    }
    // Twins are now neighbours.
    for pair in links.windows(2) {
        if let [a, b] = *pair {
            if link_hash(a) == link_hash(b) && name(a) == name(b) {
                let start_of = |l: u64| {
                    entries
                        .get(link_entry(l) as usize)
                        .map_or(0, Entry::name_start)
                };
                return Err(start_of(a).max(start_of(b)));
            }
        }
    }
    Ok(())
}

/// Finds `name` in an index built by [`build`]; returns the entry number.
pub(crate) fn find(json: &[u8], entries: &[Entry], index: &[u32], name: &str) -> Option<u32> {
    let target = hash_str(name);
    index
        .binary_search_by(|&i| {
            let probe = name_of(json, entries, i);
            match hash_name(probe).cmp(&target) {
                Ordering::Equal => probe.cmp_str(name),
                other => other,
            }
        })
        .ok()
        .and_then(|at| index.get(at).copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
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
