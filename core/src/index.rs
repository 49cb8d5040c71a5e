//! The name index: a permutation of entries sorted by (hash of the decoded
//! name, decoded name). Building it finds duplicate names in O(n log n);
//! lookups binary-search it, hashing the probed names (no hash is stored).

use core::cmp::Ordering;

use crate::error::{Error, ErrorKind};
use crate::header::{raw_string_at, tensor_ref};
use crate::name::Name;
use crate::table::Entry;

/// FNV-1a over the decoded UTF-8 bytes of a name.
fn hash_bytes(mut h: u32, bytes: &[u8]) -> u32 {
    for &b in bytes {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    h
}

const SEED: u32 = 0x811c_9dc5;

pub(crate) fn hash_name(name: Name<'_>) -> u32 {
    if name.has_escapes() {
        let mut h = SEED;
        let mut buf = [0u8; 4];
        for c in name.chars() {
            h = hash_bytes(h, c.encode_utf8(&mut buf).as_bytes());
        }
        h
    } else {
        hash_bytes(SEED, name.raw())
    }
}

pub(crate) fn hash_str(s: &str) -> u32 {
    hash_bytes(SEED, s.as_bytes())
}

fn name_of<'h>(json: &'h [u8], entries: &[Entry], i: u32) -> Name<'h> {
    let start = entries.get(i as usize).map_or(0, Entry::name_start);
    Name::from_raw(raw_string_at(json, start))
}

/// Sorts `index` (entry numbers) by (hash, name), using `scratch` (same
/// length) to hold each entry's hash, and fails on the first duplicate name.
/// The duplicate reported is the one later in the header.
pub(crate) fn build(
    json: &[u8],
    entries: &[Entry],
    index: &mut [u32],
    scratch: &mut [u32],
    duplicate: ErrorKind,
) -> Result<(), Error> {
    for (i, (slot, hash)) in index.iter_mut().zip(scratch.iter_mut()).enumerate() {
        let i = u32::try_from(i).unwrap_or(u32::MAX);
        *slot = i;
        *hash = hash_name(name_of(json, entries, i));
    }
    let hash_of = |i: u32| scratch.get(i as usize).copied().unwrap_or(0);
    index.sort_unstable_by_key(|&i| hash_of(i));
    // Within runs of equal hashes (rare), order by name and look for twins.
    let mut run_start = 0usize;
    while run_start < index.len() {
        let h = index.get(run_start).map_or(0, |&i| hash_of(i));
        let run_len = index
            .get(run_start..)
            .unwrap_or_default()
            .iter()
            .take_while(|&&i| hash_of(i) == h)
            .count()
            .max(1);
        let run_end = run_start.saturating_add(run_len);
        if let Some(run) = index.get_mut(run_start..run_end) {
            if run.len() > 1 {
                run.sort_unstable_by(|&a, &b| {
                    name_of(json, entries, a)
                        .cmp_name(&name_of(json, entries, b))
                        .then(a.cmp(&b))
                });
                for pair in run.windows(2) {
                    if let [a, b] = *pair {
                        if name_of(json, entries, a) == name_of(json, entries, b) {
                            let start_of =
                                |i: u32| entries.get(i as usize).map_or(0, Entry::name_start);
                            let start = start_of(a).max(start_of(b));
                            return Err(Error::at(duplicate, start.saturating_sub(1))
                                .with_tensor(tensor_ref(json, start)));
                        }
                    }
                }
            }
        }
        run_start = run_end;
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
