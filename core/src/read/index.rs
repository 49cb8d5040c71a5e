//! The name index: a permutation of entries sorted by (hash of the decoded
//! name, decoded name). Building it finds duplicate names in O(n log n);
//! lookups binary-search it, hashing the probed names (no hash is stored).
//! On bare metal every hash is 0 ([`HASH_NAMES`]): the same index, ordered
//! by name alone.

use core::cmp::Ordering;

use crate::read::header::raw_string_at;
use crate::view::name::Name;
use crate::read::sort::{sort_by, sort_spread};
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
        if self.fill == 0 && !cfg!(small) {
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
pub(crate) const HASH_NAMES: bool = !cfg!(small);

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
/// by (hash, name). On duplicate names, returns where the first repeat is
/// (see [`first_twin`]). With hashing only: see
/// [`sort_by_name`] for bare metal.
pub(crate) fn sort_links(json: &[u8], entries: &[Entry], links: &mut [u64]) -> Result<(), usize> {
    let name = |l: u64| name_of(json, entries, link_entry(l));
    sort_spread(links);
    // Only runs of equal hashes (rare) can hold twins: order each by name
    // and look in it. (One pass over the hashes, nothing else per link.)
    let mut first: Option<usize> = None;
    let mut start = 0;
    while let Some(rest) = links.get_mut(start..) {
        // The next run: from the first link whose hash its successor shares.
        let Some(at) = rest.windows(2).position(|w| match w {
            [a, b] => link_hash(*a) == link_hash(*b),
            _ => false,
        }) else {
            break;
        };
        let run = rest.get_mut(at..).unwrap_or_default();
        let hash = run.first().map_or(0, |&l| link_hash(l));
        let len = run
            .iter()
            .position(|&l| link_hash(l) != hash)
            .unwrap_or(run.len());
        let run = run.get_mut(..len).unwrap_or_default();
        sort_by(run, |a, b| {
            name(*a).cmp_name(&name(*b)).then(a.cmp(b)).is_lt()
        });
        if let Err(repeat) = first_twin(json, entries, run, |l| (0, link_entry(l))) {
            first = Some(first.map_or(repeat, |f| f.min(repeat)));
        }
        start = start.saturating_add(at).saturating_add(len);
    }
    first.map_or(Ok(()), Err)
}

/// Without hashing (bare metal): sorts a name-index column, whose items are
/// entry numbers less `base`, by name alone. Duplicates as [`sort_links`].
/// (The column's `u32` sort is the one the layout check also uses: one
/// sorting routine in flash instead of two.)
pub(crate) fn sort_by_name(
    json: &[u8],
    entries: &[Entry],
    column: &mut [u32],
    base: usize,
) -> Result<(), usize> {
    let base = u32::try_from(base).unwrap_or(0);
    let name = |i: u32| name_of(json, entries, i.wrapping_add(base));
    sort_by(column, |a, b| {
        name(*a).cmp_name(&name(*b)).then(a.cmp(b)).is_lt()
    });
    first_twin(json, entries, column, |i| (0, i.wrapping_add(base)))
}

/// In an index sorted by (hash, name), ties by entry number: the first name
/// in header order that repeats an earlier one, as the header offset of its
/// first content byte. (Whatever the index order, so every target reports
/// the same tensor.) `parts` gives an item's hash and entry number.
fn first_twin<L: Copy>(
    json: &[u8],
    entries: &[Entry],
    sorted: &[L],
    parts: impl Fn(L) -> (u32, u32),
) -> Result<(), usize> {
    let mut first: Option<usize> = None;
    for pair in sorted.windows(2) {
        if let [a, b] = *pair {
            let ((hash_a, a), (hash_b, b)) = (parts(a), parts(b));
            if hash_a == hash_b && name_of(json, entries, a) == name_of(json, entries, b) {
                let start_of = |i: u32| entries.get(i as usize).map_or(0, Entry::name_start);
                let repeat = start_of(a).max(start_of(b));
                first = Some(first.map_or(repeat, |f| f.min(repeat)));
            }
        }
    }
    first.map_or(Ok(()), Err)
}

/// Finds `name` in an index built by [`sort_links`] (or [`sort_by_name`]);
/// returns the entry number.
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
    use crate::dtype::Dtype;
    use crate::table::{link, Verdict};
    use proptest::prelude::*;
    use std::string::String;
    use std::vec::Vec;

    /// `names` as the raw keys of a header, and one entry per name.
    fn entries_of(names: &[String]) -> (String, Vec<Entry>) {
        let mut json = String::from("{");
        let mut entries = Vec::new();
        for name in names {
            json.push('"');
            let start = json.len();
            json.push_str(name);
            json.push_str("\":0,");
            entries.push(Entry::tensor(start, Dtype::U8, 0, (0, 0), Verdict::Ok));
        }
        (json, entries)
    }

    /// A name from a few letters, some written as `\u` escapes, so that
    /// twins can differ in their raw text.
    fn raw_name() -> impl Strategy<Value = String> {
        proptest::collection::vec((0u8..3, any::<bool>()), 0..3).prop_map(|parts| {
            parts
                .into_iter()
                .map(|(c, escaped)| {
                    let c = char::from(b'a' + c);
                    if escaped {
                        std::format!("\\u{:04x}", u32::from(c))
                    } else {
                        String::from(c)
                    }
                })
                .collect()
        })
    }

    proptest! {
        /// The bare-metal index (by name alone) orders by decoded name and
        /// finds the same duplicate as the hashed one.
        #[test]
        fn both_indexes_find_the_same_twin(names in proptest::collection::vec(raw_name(), 0..12)) {
            let (json, entries) = entries_of(&names);
            let json = json.as_bytes();
            let n = entries.len();
            let mut links: Vec<u64> = (0..n).map(|i| link(hash_name(name_of(json, &entries, i as u32)), i)).collect();
            let hashed = sort_links(json, &entries, &mut links);
            let base = 2;
            let mut padded = std::vec![Entry::tensor(0, Dtype::U8, 0, (0, 0), Verdict::Ok); base];
            padded.extend_from_slice(&entries);
            let mut column: Vec<u32> = (0..n as u32).collect();
            let by_name = sort_by_name(json, &padded, &mut column, base);
            prop_assert_eq!(hashed, by_name);
            if by_name.is_ok() {
                let decoded = |i: &u32| -> String { name_of(json, &entries, *i).chars().collect() };
                prop_assert!(column.windows(2).all(|w| decoded(&w[0]) < decoded(&w[1])));
            }
        }
    }

    /// Many links of one hash (as crafted collisions would give): one run
    /// over the whole index, through the scatter and the bucket passes.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "an exhaustive sweep of safe code: slow under Miri, and natively tested"
    )]
    fn one_long_run_of_equal_hashes() {
        for n in [2usize, 48, 49, 512, 513, 2100] {
            let names: Vec<String> = (0..n).map(|i| std::format!("n{}", n - i)).collect();
            let (json, entries) = entries_of(&names);
            let mut links: Vec<u64> = (0..n).map(|i| link(7, i)).collect();
            assert_eq!(sort_links(json.as_bytes(), &entries, &mut links), Ok(()));
            let decoded = |l: u64| -> String {
                name_of(json.as_bytes(), &entries, link_entry(l))
                    .chars()
                    .collect()
            };
            assert!(
                links.windows(2).all(|w| decoded(w[0]) < decoded(w[1])),
                "n = {n}"
            );
            // The same name everywhere: the second is the first repeat.
            let same: Vec<String> = (0..n).map(|_| String::from("x")).collect();
            let (json, entries) = entries_of(&same);
            let mut links: Vec<u64> = (0..n).rev().map(|i| link(7, i)).collect();
            assert_eq!(
                sort_links(json.as_bytes(), &entries, &mut links),
                Err(entries[1].name_start())
            );
        }
    }

    proptest! {
        /// With hashes that collide often (a few values for many names):
        /// every run of equal hashes, wherever it lies, ends ordered by
        /// (name, entry), and the twin reported is the first repeat in
        /// header order, as a naive search finds it.
        #[test]
        fn equal_hash_runs_are_ordered_and_searched(
            named in proptest::collection::vec((raw_name(), 0u32..4), 0..if cfg!(miri) { 16 } else { 120 }),
        ) {
            let names: Vec<String> = named.iter().map(|(n, _)| n.clone()).collect();
            let (json, entries) = entries_of(&names);
            let json = json.as_bytes();
            let decoded = |i: u32| -> String { name_of(json, &entries, i).chars().collect() };
            // Twins share a hash, as real hashes do: the hash of the first
            // spelling's decoded name.
            let hash_of = |i: usize| {
                let first = (0..=i).find(|&j| decoded(j as u32) == decoded(i as u32)).unwrap_or(i);
                named[first].1
            };
            let mut links: Vec<u64> = (0..names.len()).map(|i| link(hash_of(i), i)).collect();
            let got = sort_links(json, &entries, &mut links);
            let first_repeat = (0..names.len())
                .filter(|&i| (0..i).any(|j| decoded(j as u32) == decoded(i as u32)))
                .map(|i| entries[i].name_start())
                .min();
            prop_assert_eq!(got, first_repeat.map_or(Ok(()), Err));
            let key = |l: u64| (link_hash(l), decoded(link_entry(l)), link_entry(l));
            prop_assert!(links.windows(2).all(|w| key(w[0]) < key(w[1])));
        }
    }

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
