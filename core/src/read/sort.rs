//! In-place sorts for the table's index columns and the writer.
//!
//! [`sort_by`]: `core`'s `sort_unstable` where its kilobytes of code per
//! use do not matter ([`mode::CORE_SORT`]); elsewhere (a microcontroller,
//! whose firmware measures it, and the npm package's .wasm) a heapsort: a
//! few hundred bytes, no memory, O(n log n) on any input, after an O(n)
//! check that skips input already in order (offsets in files the reference
//! writes).
//!
//! [`sort_spread`]: the name order's links (hash, entry) are near-uniform
//! integers, sorted in linear time by one radix pass
//! ([`mode::RADIX_SORT`]).

use core::cmp::Ordering;

use crate::mode;

/// Sorts `items` so that `less(a, b)` holds for no later `a` before an earlier `b`.
pub(crate) fn sort_by<T>(items: &mut [T], mut less: impl FnMut(&T, &T) -> bool) {
    if mode::CORE_SORT {
        items.sort_unstable_by(|a, b| {
            if less(a, b) {
                Ordering::Less
            } else if less(b, a) {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        });
    } else {
        heapsort_dyn(items, &mut less);
    }
}

/// Sorts integers whose top bits are spread evenly, such as the name links
/// (a hash in the high half), in linear time on such keys: one radix pass
/// on the top bits, then insertion sorts of the buckets, a few keys each
/// (a bucket that is not small after all, keys sharing their top bits,
/// goes to [`sort_by`]). Up to 512 keys pass through a buffer on the stack
/// ([`scatter_pass`], 5 KB with its counts); more are moved in place
/// ("American flag sort", two arrays of 2,048 counts, 16 KB). Small
/// builds, where that stack matters more than time, use [`sort_by`]
/// ([`mode::RADIX_SORT`]).
pub(crate) fn sort_spread(items: &mut [u64]) {
    let n = items.len();
    if !mode::RADIX_SORT || n > u32::MAX as usize {
        sort_by(items, |a, b| a < b);
    } else if n <= SMALL {
        insertion_sort(items);
    } else if n <= SCRATCH {
        // Two to four keys a bucket.
        let bits = usize::BITS
            .saturating_sub(n.leading_zeros())
            .saturating_sub(2);
        scatter_pass(items, bits);
    } else {
        // About four keys a bucket.
        let bits = usize::BITS
            .saturating_sub(n.leading_zeros())
            .saturating_sub(3)
            .min(11);
        bucket_pass::<2048>(items, bits);
    }
}

/// Buckets this small are finished by insertion sort.
const SMALL: usize = 48;

/// Up to this many keys are sorted through a buffer on the stack (4 KB).
const SCRATCH: usize = 512;

/// [`bucket_pass`] for at most [`SCRATCH`] keys and `2^bits` ≤ 256 buckets
/// (more keys go to [`sort_by`]; `bits` is kept to 1..=8), through a
/// buffer: each key is written once to its bucket's next free place.
/// Swapping in place (American flag) mispredicts a branch or two per key;
/// this does not, and runs about three times as fast.
fn scatter_pass(items: &mut [u64], bits: u32) {
    if items.len() > SCRATCH {
        return sort_by(items, |a, b| a < b);
    }
    let bits = bits.clamp(1, 8);
    let shift = 64u32.wrapping_sub(bits) & 63;
    let bucket_of = |key: u64| usize::try_from(key >> shift).unwrap_or(0);
    let mut scratch = [0u64; SCRATCH];
    let mut next = [0u32; 256];
    let buckets = (1usize << bits).min(256);
    for &key in items.iter() {
        if let Some(count) = next.get_mut(bucket_of(key)) {
            *count = count.wrapping_add(1);
        }
    }
    let mut total = 0u32;
    for count in next.iter_mut().take(buckets) {
        let start = total;
        total = total.wrapping_add(*count);
        *count = start;
    }
    for &key in items.iter() {
        if let Some(at) = next.get_mut(bucket_of(key)) {
            if let Some(slot) = scratch.get_mut(*at as usize) {
                *slot = key;
            }
            *at = at.wrapping_add(1);
        }
    }
    if let Some(placed) = scratch.get(..items.len()) {
        items.copy_from_slice(placed);
    }
    // Each bucket's `next` is now its end.
    sort_each_bucket(items, next.get(..buckets).unwrap_or_default());
}

/// One radix pass on the top `bits` bits (`2^bits` ≤ `B` buckets), then
/// each bucket sorted on its own.
fn bucket_pass<const B: usize>(items: &mut [u64], bits: u32) {
    let shift = 64u32.wrapping_sub(bits) & 63;
    let bucket_of = |key: u64| usize::try_from(key >> shift).unwrap_or(0);
    let mut next = [0u32; B];
    let mut ends = [0u32; B];
    let buckets = (1usize << bits).min(B);
    for &key in items.iter() {
        if let Some(count) = next.get_mut(bucket_of(key)) {
            *count = count.wrapping_add(1);
        }
    }
    // Turn counts into bucket ends, and `next` into bucket starts.
    let mut total = 0u32;
    for (count, end) in next.iter_mut().zip(ends.iter_mut()).take(buckets) {
        let start = total;
        total = total.wrapping_add(*count);
        *end = total;
        *count = start;
    }
    // Move every key to its bucket, swapping through the buckets' free spots.
    for bucket in 0..buckets {
        while let (Some(&at), Some(&end)) = (next.get(bucket), ends.get(bucket)) {
            if at >= end {
                break;
            }
            let Some(&key) = items.get(at as usize) else {
                break;
            };
            let home = bucket_of(key);
            let Some(slot) = next.get_mut(home) else {
                break;
            };
            if home != bucket {
                items.swap(at as usize, *slot as usize);
            }
            *slot = slot.wrapping_add(1);
        }
    }
    sort_each_bucket(items, ends.get(..buckets).unwrap_or_default());
}

/// Sorts each bucket of `items` on its own: the buckets end at `ends`.
fn sort_each_bucket(items: &mut [u64], ends: &[u32]) {
    let mut start = 0usize;
    for &end in ends {
        let end = end as usize;
        if let Some(bucket) = items.get_mut(start..end) {
            if bucket.len() <= SMALL {
                insertion_sort(bucket);
            } else {
                sort_by(bucket, |a, b| a < b);
            }
        }
        start = end;
    }
}

fn insertion_sort(items: &mut [u64]) {
    for i in 1..items.len() {
        let mut j = i;
        while j > 0 {
            match (items.get(j.wrapping_sub(1)), items.get(j)) {
                (Some(a), Some(b)) if a > b => items.swap(j.wrapping_sub(1), j),
                _ => break,
            }
            j = j.wrapping_sub(1);
        }
    }
}

/// One heapsort per item type whatever the order: the comparison is called
/// through a pointer, so each call site adds no sorting code.
#[inline(never)]
fn heapsort_dyn<T>(items: &mut [T], less: &mut dyn FnMut(&T, &T) -> bool) {
    heapsort(items, less);
}

fn heapsort<T>(items: &mut [T], mut less: impl FnMut(&T, &T) -> bool) {
    if items.windows(2).all(|w| matches!(w, [a, b] if !less(b, a))) {
        return;
    }
    let len = items.len();
    // Build a max-heap, then move the largest to the end one by one.
    for start in (0..len / 2).rev() {
        sift_down(items, start, len, &mut less);
    }
    for end in (1..len).rev() {
        items.swap(0, end);
        sift_down(items, 0, end, &mut less);
    }
}

fn sift_down<T>(
    items: &mut [T],
    mut node: usize,
    end: usize,
    less: &mut impl FnMut(&T, &T) -> bool,
) {
    loop {
        let Some(left) = node.checked_mul(2).and_then(|n| n.checked_add(1)) else {
            return;
        };
        if left >= end {
            return;
        }
        let right = left.saturating_add(1);
        let mut child = left;
        if right < end {
            if let (Some(l), Some(r)) = (items.get(left), items.get(right)) {
                if less(l, r) {
                    child = right;
                }
            }
        }
        match (items.get(node), items.get(child)) {
            (Some(n), Some(c)) if less(n, c) => items.swap(node, child),
            _ => return,
        }
        node = child;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::vec::Vec;

    /// Every length at the passes' boundaries, with keys that all share
    /// their top bits, keys at the extremes, and spread keys.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "an exhaustive sweep of safe code: slow under Miri, and natively tested"
    )]
    fn radix_sort_boundaries() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for n in [
            0usize, 1, 2, 47, 48, 49, 50, 63, 64, 255, 256, 257, 511, 512, 513, 1023, 1024, 2047,
            2048, 8191, 8192,
        ] {
            let shapes: [&dyn Fn(usize, u64) -> u64; 6] = [
                &|_, r| r,
                &|_, r| r & 0x0000_ffff_ffff_ffff,
                &|_, _| 7,
                &|i, _| if i % 2 == 0 { u64::MAX } else { 0 },
                &|i, _| (n - i) as u64,
                &|i, r| (0xabcd_u64 << 48) | (r >> 16) ^ i as u64,
            ];
            for shape in shapes {
                let mut v: Vec<u64> = (0..n).map(|i| shape(i, rnd())).collect();
                let mut expected = v.clone();
                expected.sort_unstable();
                sort_spread(&mut v);
                assert_eq!(v, expected, "n = {n}");
            }
        }
    }

    proptest! {
        #[test]
        fn sorts_like_the_standard_library(mut v in proptest::collection::vec(any::<u16>(), 0..300)) {
            let mut expected = v.clone();
            expected.sort_unstable();
            let mut heap = v.clone();
            sort_by(&mut v, |a, b| a < b);
            heapsort(&mut heap, |a, b| a < b);
            prop_assert_eq!(&v, &expected);
            prop_assert_eq!(heap, expected);
        }

        #[test]
        #[cfg_attr(miri, ignore = "an exhaustive sweep of safe code: slow under Miri, and natively tested")]
        fn radix_sorts_like_the_standard_library(
            // Up to 512 keys take the scatter pass, more the 2,048-bucket one.
            mut v in proptest::collection::vec(any::<u64>(), 0..5000),
            shared_top in 0u32..3,
        ) {
            // Some keys share their top bytes, as equal hashes would.
            let mask = u64::MAX >> (shared_top * 8);
            for (i, x) in v.iter_mut().enumerate() {
                if i % 3 == 0 {
                    *x &= mask;
                }
            }
            let mut expected = v.clone();
            expected.sort_unstable();
            sort_spread(&mut v);
            prop_assert_eq!(v, expected);
        }

        #[test]
        fn sorts_by_key_with_ties(v in proptest::collection::vec((0u8..4, any::<u16>()), 0..200)) {
            let mut sorted: Vec<(u8, u16)> = v.clone();
            heapsort(&mut sorted, |a, b| a.0 < b.0);
            prop_assert!(sorted.windows(2).all(|w| w[0].0 <= w[1].0));
            let mut a = sorted.clone();
            let mut b = v;
            a.sort_unstable();
            b.sort_unstable();
            prop_assert_eq!(a, b);
        }
    }
}
