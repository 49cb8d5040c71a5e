//! Caller-owned storage for a parsed header.
//!
//! A table is a slice of [`Slot`]s, 32 bytes each on every target. The
//! parser lays the slice out as three regions: 24-byte entries (tensors from
//! the front, metadata pairs from the back), then two `u32` order columns
//! (the name order, and the data-offset order). Names and shapes are not
//! copied: entries store where they start in the header.

use bytemuck::{Pod, Zeroable};

use crate::dtype::Dtype;

/// One slot of a header table: room for one tensor or one metadata pair,
/// name and offset orders included. 32 bytes on every target.
///
/// Hand the parser any `AsMut<[Slot]>`: a [`Table`], a `&mut [Slot]`, or
/// (with `alloc`) a `Vec<Slot>`.
///
/// ```
/// use safetensors_nano::Slot;
/// assert_eq!(core::mem::size_of::<Slot>(), 32);
/// let mut slots = [Slot::EMPTY; 16];
/// # let _ = &mut slots;
/// ```
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(8))]
pub struct Slot {
    words: [u32; 8],
}

impl Slot {
    /// An unused slot, for initialising arrays: `[Slot::EMPTY; N]`.
    ///
    /// ```
    /// let slots = [safetensors_nano::Slot::EMPTY; 4];
    /// assert_eq!(slots.len(), 4);
    /// ```
    pub const EMPTY: Slot = Slot { words: [0; 8] };
}

impl core::fmt::Debug for Slot {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Slot")
    }
}

/// A fixed-capacity table of `N` slots, usable as a value or in a `static`.
///
/// ```
/// use safetensors_nano::Table;
/// static EMPTY_TABLE: Table<8> = Table::new();
/// let mut table = Table::<8>::new();
/// let file = b"\x02\x00\x00\x00\x00\x00\x00\x00{}";
/// let st = table.parse(file).unwrap();
/// assert_eq!(st.len(), 0);
/// assert_eq!(EMPTY_TABLE.capacity(), 8);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Table<const N: usize> {
    slots: [Slot; N],
}

impl<const N: usize> Table<N> {
    /// An empty table.
    ///
    /// ```
    /// let table = safetensors_nano::Table::<64>::new();
    /// assert_eq!(table.capacity(), 64);
    /// ```
    pub const fn new() -> Self {
        Table {
            slots: [Slot::EMPTY; N],
        }
    }

    /// How many tensors plus metadata pairs fit.
    ///
    /// ```
    /// assert_eq!(safetensors_nano::Table::<3>::new().capacity(), 3);
    /// ```
    pub const fn capacity(&self) -> usize {
        N
    }
}

impl<const N: usize> Default for Table<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> AsRef<[Slot]> for Table<N> {
    fn as_ref(&self) -> &[Slot] {
        &self.slots
    }
}

impl<const N: usize> AsMut<[Slot]> for Table<N> {
    fn as_mut(&mut self) -> &mut [Slot] {
        &mut self.slots
    }
}

/// Bits of [`Entry::name`] and [`Entry::shape_dtype`] above a header offset
/// (headers are at most 100,000,000 < 2^27 bytes).
pub(crate) const OFFSET_BITS: u32 = 27;
pub(crate) const OFFSET_MASK: u32 = (1 << OFFSET_BITS) - 1;
const VERDICT_SHIFT: u32 = 28;
/// The dtype code that marks a metadata pair.
const METADATA_CODE: u32 = 31;

/// What the size rules (docs/format.md R10 no-overflow, R11 whole-bytes,
/// R12 size-matches) said of a tensor, decided while parsing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Ok = 0,
    Overflow = 1,
    Misaligned = 2,
    WrongSize = 3,
}

/// A tensor or a metadata pair: 24 bytes.
#[derive(Clone, Copy, Pod, Zeroable, Debug, Default)]
#[repr(C)]
pub(crate) struct Entry {
    /// Tensor: `data_offsets[0]`; metadata: the value's start offset.
    begin: [u32; 2],
    /// Tensor: `data_offsets[1]`.
    end: [u32; 2],
    /// Name/key start offset (27 bits) and verdict (2 bits at 28).
    name: u32,
    /// Shape start offset (27 bits) and dtype code (5 bits at 27).
    shape_dtype: u32,
}

fn split(v: u64) -> [u32; 2] {
    bytemuck::cast(v)
}

fn join(v: [u32; 2]) -> u64 {
    bytemuck::cast(v)
}

impl Entry {
    pub(crate) fn tensor(
        name_start: usize,
        dtype: Dtype,
        shape_start: usize,
        offsets: (u64, u64),
        verdict: Verdict,
    ) -> Entry {
        Entry {
            begin: split(offsets.0),
            end: split(offsets.1),
            name: pack_offset(name_start) | ((verdict as u32) << VERDICT_SHIFT),
            shape_dtype: pack_offset(shape_start) | ((dtype as u32) << OFFSET_BITS),
        }
    }

    pub(crate) fn metadata(key_start: usize, value_start: usize) -> Entry {
        Entry {
            begin: split(value_start as u64),
            end: [0, 0],
            name: pack_offset(key_start),
            shape_dtype: METADATA_CODE << OFFSET_BITS,
        }
    }

    pub(crate) fn begin(&self) -> u64 {
        join(self.begin)
    }

    pub(crate) fn end(&self) -> u64 {
        join(self.end)
    }

    pub(crate) const fn name_start(&self) -> usize {
        (self.name & OFFSET_MASK) as usize
    }

    pub(crate) const fn verdict(&self) -> Verdict {
        match (self.name >> VERDICT_SHIFT) & 3 {
            0 => Verdict::Ok,
            1 => Verdict::Overflow,
            2 => Verdict::Misaligned,
            _ => Verdict::WrongSize,
        }
    }

    pub(crate) const fn shape_start(&self) -> usize {
        (self.shape_dtype & OFFSET_MASK) as usize
    }

    pub(crate) fn dtype(&self) -> Dtype {
        Dtype::from_index(self.shape_dtype >> OFFSET_BITS).unwrap_or(Dtype::U8)
    }

    /// For a metadata entry: where the value string's content starts.
    pub(crate) fn value_start(&self) -> usize {
        usize::try_from(join(self.begin) & u64::from(OFFSET_MASK)).unwrap_or(0)
    }
}

/// Header offsets always fit in 27 bits: the parser refuses larger headers.
fn pack_offset(offset: usize) -> u32 {
    u32::try_from(offset).unwrap_or(u32::MAX) & OFFSET_MASK
}

/// The three regions of a table, read-only.
pub(crate) struct Regions<'t> {
    pub entries: &'t [Entry],
    pub by_name: &'t [u32],
    pub by_offset: &'t [u32],
}

/// The three regions of a table, writable.
pub(crate) struct RegionsMut<'t> {
    pub entries: &'t mut [Entry],
    pub by_name: &'t mut [u32],
    pub by_offset: &'t mut [u32],
}

/// Usable capacity: indices are `u32`.
pub(crate) fn capacity(slots: &[Slot]) -> usize {
    slots.len().min(u32::MAX as usize)
}

pub(crate) fn regions(slots: &[Slot]) -> Regions<'_> {
    let slots = slots.get(..capacity(slots)).unwrap_or_default();
    let n = slots.len();
    let words: &[u32] = bytemuck::cast_slice(slots);
    let (entry_words, orders) = words.split_at(n.saturating_mul(6));
    let (by_name, by_offset) = orders.split_at(n);
    Regions {
        entries: bytemuck::cast_slice(entry_words),
        by_name,
        by_offset,
    }
}

pub(crate) fn regions_mut(slots: &mut [Slot]) -> RegionsMut<'_> {
    let n = capacity(slots);
    let slots = slots.get_mut(..n).unwrap_or_default();
    let words: &mut [u32] = bytemuck::cast_slice_mut(slots);
    let (entry_words, orders) = words.split_at_mut(n.saturating_mul(6));
    let (by_name, by_offset) = orders.split_at_mut(n.min(orders.len()));
    RegionsMut {
        entries: bytemuck::cast_slice_mut(entry_words),
        by_name,
        by_offset,
    }
}

/// The table while the parser fills it: the entries, and where the two
/// order columns will be, one `u64` link per slot (see [`link`]).
pub(crate) struct Building<'t> {
    pub entries: &'t mut [Entry],
    pub links: &'t mut [u64],
}

/// A link: a name hash in the high half, an entry number in the low half.
/// Sorting links as plain integers sorts entries by hash, then by number.
pub(crate) const fn link(hash: u32, entry: usize) -> u64 {
    ((hash as u64) << 32) | (entry as u64 & 0xffff_ffff)
}

/// The name hash of a link.
pub(crate) fn link_hash(link: u64) -> u32 {
    u32::try_from(link >> 32).unwrap_or(u32::MAX)
}

/// The entry number of a link.
pub(crate) fn link_entry(link: u64) -> u32 {
    u32::try_from(link & 0xffff_ffff).unwrap_or(u32::MAX)
}

pub(crate) fn building(slots: &mut [Slot]) -> Building<'_> {
    let n = capacity(slots);
    let slots = slots.get_mut(..n).unwrap_or_default();
    // Slots are 8-aligned and 32 bytes: these casts cannot fail.
    let words: &mut [u64] = bytemuck::try_cast_slice_mut(slots).unwrap_or_default();
    let (entry_words, links) = words.split_at_mut(n.saturating_mul(3).min(words.len()));
    Building {
        entries: bytemuck::try_cast_slice_mut(entry_words).unwrap_or_default(),
        links,
    }
}

/// Turns the sorted links of `entries` (a range of slot numbers) into the
/// name-order column: the entry numbers, less `base`, in link order, in
/// the same slot numbers of the `by_name` column. Call it for ranges in
/// ascending order: each link is read before the column overwrites it.
pub(crate) fn links_to_name_order(
    slots: &mut [Slot],
    entries: core::ops::Range<usize>,
    base: usize,
) {
    let n = capacity(slots);
    let slots = slots.get_mut(..n).unwrap_or_default();
    let words: &mut [u32] = bytemuck::cast_slice_mut(slots);
    let index = words.get_mut(n.saturating_mul(6)..).unwrap_or_default();
    for k in entries {
        // Link k is words 2k and 2k + 1; column slot k is word k ≤ 2k.
        let pair = match index.get(k.wrapping_mul(2)..k.wrapping_mul(2).wrapping_add(2)) {
            Some(&[a, b]) => [a, b],
            _ => continue,
        };
        let entry = link_entry(bytemuck::cast(pair));
        if let Some(slot) = index.get_mut(k) {
            *slot = entry.wrapping_sub(u32::try_from(base).unwrap_or(0));
        }
    }
}

/// Moves a table's regions so that they fill its first `tensors + pairs`
/// slots, the layout a table of exactly that capacity has; returns that
/// capacity. Lets an oversized table be shrunk after the parse.
#[cfg(feature = "alloc")]
pub(crate) fn compact(slots: &mut [Slot], tensors: usize, pairs: usize) -> usize {
    let n = capacity(slots);
    let m = tensors.saturating_add(pairs).min(n);
    let t = tensors.min(m);
    let p = m.saturating_sub(t);
    let words: &mut [u32] = bytemuck::cast_slice_mut(slots);
    // (source, destination, length) in words, in ascending order: each
    // destination lies at or below its source and ends before the next
    // source starts, so no move overwrites words still to be read.
    let moves = [
        // Metadata entries, from the back of the entry region.
        (
            n.saturating_sub(p).saturating_mul(6),
            t.saturating_mul(6),
            p.saturating_mul(6),
        ),
        // Name order: tensors', then metadata's (numbers relative to their region).
        (n.saturating_mul(6), m.saturating_mul(6), t),
        (
            n.saturating_mul(7).saturating_sub(p),
            m.saturating_mul(6).saturating_add(t),
            p,
        ),
        // Data-offset order: tensors only.
        (n.saturating_mul(7), m.saturating_mul(7), t),
    ];
    for (from, to, len) in moves {
        if from != to && from.saturating_add(len) <= words.len() {
            words.copy_within(from..from.saturating_add(len), to);
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(core::mem::size_of::<Slot>(), 32);
        assert_eq!(core::mem::size_of::<Entry>(), 24);
        assert_eq!(core::mem::align_of::<Slot>(), 8);
    }

    #[test]
    fn entry_round_trip() {
        let e = Entry::tensor(
            OFFSET_MASK as usize,
            Dtype::U64,
            12345,
            (u64::MAX - 1, u64::MAX),
            Verdict::WrongSize,
        );
        assert_eq!(e.name_start(), OFFSET_MASK as usize);
        assert_eq!(e.dtype(), Dtype::U64);
        assert_eq!(e.shape_start(), 12345);
        assert_eq!((e.begin(), e.end()), (u64::MAX - 1, u64::MAX));
        assert_eq!(e.verdict(), Verdict::WrongSize);
    }

    #[test]
    fn regions_split_the_slots() {
        let mut slots = [Slot::EMPTY; 5];
        let r = regions_mut(&mut slots);
        assert_eq!(
            (r.entries.len(), r.by_name.len(), r.by_offset.len()),
            (5, 5, 5)
        );
    }
}
