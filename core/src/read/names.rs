//! The name order: a permutation of entries sorted by (hash of the decoded
//! name, decoded name). Building it finds duplicate names in O(n log n);
//! lookups binary-search it, hashing the probed names (no hash is stored).
//! Without hashing ([`mode::HASH_NAMES`]) every hash is 0: the same order,
//! ordered by name alone.

use core::cmp::Ordering;
use core::ops::Range;

use super::hash::{hash_name, hash_str};
use super::sort::{sort_by, sort_spread};
use super::string::raw_string_at;
use crate::mode;
use crate::table::{self, link_entry, link_hash, Entry, Slot};
use crate::view::name::Name;

/// Builds the name order of the entries in `slots` numbered `range` (the
/// tensors, or the metadata pairs), whose links the parser left in the
/// same slot numbers: the `by_name` column, entry numbers less `base`, in
/// name order. Call it for ranges in ascending order (see
/// [`table::links_to_name_order`]). On duplicate names, returns where the
/// first repeat is (see [`first_twin`]).
pub(crate) fn build(
    json: &[u8],
    slots: &mut [Slot],
    range: Range<usize>,
    base: usize,
) -> Result<(), usize> {
    if mode::HASH_NAMES {
        // Sort the links, then keep their entry numbers.
        let building = table::building(slots);
        let links = building.links.get_mut(range.clone()).unwrap_or_default();
        sort_links(json, building.entries, links)?;
        table::links_to_name_order(slots, range, base);
    } else {
        // No hashes: keep the entry numbers, then sort them by name.
        table::links_to_name_order(slots, range.clone(), base);
        let regions = table::regions_mut(slots);
        let column = regions.by_name.get_mut(range).unwrap_or_default();
        sort_by_name(json, regions.entries, column, base)?;
    }
    Ok(())
}

fn name_of<'h>(json: &'h [u8], entries: &[Entry], i: u32) -> Name<'h> {
    let start = entries.get(i as usize).map_or(0, Entry::name_start);
    Name::from_raw(raw_string_at(json, start))
}

/// Sorts `links` (see [`crate::table::link`]; entry numbers into `entries`)
/// by (hash, name). On duplicate names, returns where the first repeat is
/// (see [`first_twin`]). With hashing only: see
/// [`sort_by_name`] for without.
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

/// Without hashing: sorts a name-order column, whose items are
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

/// In an order sorted by (hash, name), ties by entry number: the first name
/// in header order that repeats an earlier one, as the header offset of its
/// first content byte. (Whatever the order, so every target reports
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

/// Finds `name` in an order built by [`sort_links`] (or [`sort_by_name`]);
/// returns the entry number.
pub(crate) fn find(json: &[u8], entries: &[Entry], by_name: &[u32], name: &str) -> Option<u32> {
    let target = hash_str(name);
    by_name
        .binary_search_by(|&i| {
            let probe = name_of(json, entries, i);
            match hash_name(probe).cmp(&target) {
                Ordering::Equal => probe.cmp_str(name),
                other => other,
            }
        })
        .ok()
        .and_then(|at| by_name.get(at).copied())
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
        /// The bare-metal order (by name alone) orders by decoded name and
        /// finds the same duplicate as the hashed one.
        #[test]
        fn both_orders_find_the_same_twin(names in proptest::collection::vec(raw_name(), 0..12)) {
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
    /// over the whole order, through the scatter and the bucket passes.
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
}
