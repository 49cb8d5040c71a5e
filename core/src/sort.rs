//! The in-place sort for the table's index columns.
//!
//! `core`'s `sort_unstable` is fast, but each use instantiates kilobytes of
//! code, which matters on a microcontroller (the firmware measures it) and in
//! the npm package's .wasm (16 KB of its 107 KB). On bare-metal targets
//! (`target_os = "none"`) and wasm32 we use a heapsort instead: a few hundred
//! bytes, no memory, O(n log n) on any input, after an O(n) check that skips
//! input already in order (offsets in files the reference writes).
//! Elsewhere, `sort_unstable` (the heapsort costs ~10% of a 10,000-tensor
//! parse natively; in wasm the difference was within the benchmark's noise).

use core::cmp::Ordering;

/// Sorts `items` so that `less(a, b)` holds for no later `a` before an earlier `b`.
pub(crate) fn sort_by<T: Copy>(items: &mut [T], mut less: impl FnMut(&T, &T) -> bool) {
    if cfg!(any(target_os = "none", target_arch = "wasm32")) {
        heapsort(items, less);
    } else {
        items.sort_unstable_by(|a, b| {
            if less(a, b) {
                Ordering::Less
            } else if less(b, a) {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        });
    }
}

fn heapsort<T: Copy>(items: &mut [T], mut less: impl FnMut(&T, &T) -> bool) {
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

fn sift_down<T: Copy>(
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
