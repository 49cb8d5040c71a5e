//! The 22 element types of the format.

use core::fmt;

/// An element type, in the reference implementation's enum order.
///
/// The derived `Ord` follows that order; the reference writer sorts tensors by
/// it (descending), so [`Dtype::ALL`] and the ordering here are part of the
/// byte-exact writer contract.
///
/// ```
/// use safetensors_nano::Dtype;
/// assert_eq!(Dtype::from_name(b"BF16"), Some(Dtype::BF16));
/// assert_eq!(Dtype::BF16.bits(), 16);
/// assert!(Dtype::U64 > Dtype::BOOL);
/// ```
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum Dtype {
    /// Boolean, one byte: 0 is false, anything else true.
    BOOL = 0,
    /// OCP MX FP4 (E2M1), two elements per byte, first element in the low nibble.
    F4,
    /// OCP MX FP6 (E2M3), four elements per three bytes.
    F6_E2M3,
    /// OCP MX FP6 (E3M2), four elements per three bytes.
    F6_E3M2,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 8-bit integer.
    I8,
    /// FP8 E5M2 (IEEE-like, with infinities and NaN).
    F8_E5M2,
    /// FP8 E4M3FN (no infinities, NaN = 0x7F/0xFF).
    F8_E4M3,
    /// FP8 E8M0: an unsigned power-of-two scale, 0xFF = NaN.
    F8_E8M0,
    /// FP8 E4M3FNUZ (bias 8, no negative zero, 0x80 = NaN).
    F8_E4M3FNUZ,
    /// FP8 E5M2FNUZ (bias 16, no negative zero, 0x80 = NaN).
    F8_E5M2FNUZ,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 16-bit integer.
    U16,
    /// IEEE 754 half precision.
    F16,
    /// bfloat16.
    BF16,
    /// Signed 32-bit integer.
    I32,
    /// Unsigned 32-bit integer.
    U32,
    /// IEEE 754 single precision.
    F32,
    /// Complex number: two `F32` (real, imaginary).
    C64,
    /// IEEE 754 double precision.
    F64,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 64-bit integer.
    U64,
}

impl Dtype {
    /// Every dtype, in the reference enum order (ascending).
    ///
    /// ```
    /// use safetensors_nano::Dtype;
    /// assert_eq!(Dtype::ALL.len(), 22);
    /// assert_eq!(Dtype::ALL[0], Dtype::BOOL);
    /// ```
    pub const ALL: [Dtype; 22] = [
        Dtype::BOOL,
        Dtype::F4,
        Dtype::F6_E2M3,
        Dtype::F6_E3M2,
        Dtype::U8,
        Dtype::I8,
        Dtype::F8_E5M2,
        Dtype::F8_E4M3,
        Dtype::F8_E8M0,
        Dtype::F8_E4M3FNUZ,
        Dtype::F8_E5M2FNUZ,
        Dtype::I16,
        Dtype::U16,
        Dtype::F16,
        Dtype::BF16,
        Dtype::I32,
        Dtype::U32,
        Dtype::F32,
        Dtype::C64,
        Dtype::F64,
        Dtype::I64,
        Dtype::U64,
    ];

    /// The name as written in a header, e.g. `"F8_E4M3"`.
    ///
    /// ```
    /// assert_eq!(safetensors_nano::Dtype::F8_E4M3.name(), "F8_E4M3");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Dtype::BOOL => "BOOL",
            Dtype::F4 => "F4",
            Dtype::F6_E2M3 => "F6_E2M3",
            Dtype::F6_E3M2 => "F6_E3M2",
            Dtype::U8 => "U8",
            Dtype::I8 => "I8",
            Dtype::F8_E5M2 => "F8_E5M2",
            Dtype::F8_E4M3 => "F8_E4M3",
            Dtype::F8_E8M0 => "F8_E8M0",
            Dtype::F8_E4M3FNUZ => "F8_E4M3FNUZ",
            Dtype::F8_E5M2FNUZ => "F8_E5M2FNUZ",
            Dtype::I16 => "I16",
            Dtype::U16 => "U16",
            Dtype::F16 => "F16",
            Dtype::BF16 => "BF16",
            Dtype::I32 => "I32",
            Dtype::U32 => "U32",
            Dtype::F32 => "F32",
            Dtype::C64 => "C64",
            Dtype::F64 => "F64",
            Dtype::I64 => "I64",
            Dtype::U64 => "U64",
        }
    }

    /// The dtype with this exact (case-sensitive) name.
    ///
    /// ```
    /// use safetensors_nano::Dtype;
    /// assert_eq!(Dtype::from_name(b"F32"), Some(Dtype::F32));
    /// assert_eq!(Dtype::from_name(b"f32"), None);
    /// ```
    #[cfg_attr(not(small), inline(always))]
    pub fn from_name(name: &[u8]) -> Option<Dtype> {
        // One probe of a perfect hash, then one comparison: a few dozen
        // bytes of code where a `match` on the names takes hundreds.
        let (&first, _) = name.split_first()?;
        let fifth = name.get(4).or(name.last()).copied().unwrap_or(first);
        let index = *NAMES.by_hash.get(name_hash(first, fifth, name.len()))?;
        let dtype = Dtype::from_index(u32::from(index))?;
        let start = usize::from(*NAMES.starts.get(usize::from(index))?);
        let end = usize::from(*NAMES.starts.get(usize::from(index).checked_add(1)?)?);
        (NAMES.bytes.get(start..end)? == name).then_some(dtype)
    }

    /// Size of one element in bits (4, 6, 8, 16, 32 or 64).
    ///
    /// ```
    /// assert_eq!(safetensors_nano::Dtype::F6_E2M3.bits(), 6);
    /// ```
    pub const fn bits(self) -> u8 {
        match self {
            Dtype::F4 => 4,
            Dtype::F6_E2M3 | Dtype::F6_E3M2 => 6,
            Dtype::BOOL
            | Dtype::U8
            | Dtype::I8
            | Dtype::F8_E5M2
            | Dtype::F8_E4M3
            | Dtype::F8_E8M0
            | Dtype::F8_E4M3FNUZ
            | Dtype::F8_E5M2FNUZ => 8,
            Dtype::I16 | Dtype::U16 | Dtype::F16 | Dtype::BF16 => 16,
            Dtype::I32 | Dtype::U32 | Dtype::F32 => 32,
            Dtype::C64 | Dtype::F64 | Dtype::I64 | Dtype::U64 => 64,
        }
    }

    /// Alignment in bytes that a typed view of this dtype needs (1 for
    /// sub-byte and byte types; `C64` needs 4, the alignment of its `f32` parts).
    ///
    /// ```
    /// use safetensors_nano::Dtype;
    /// assert_eq!(Dtype::BF16.align(), 2);
    /// assert_eq!(Dtype::C64.align(), 4);
    /// ```
    pub const fn align(self) -> usize {
        match self {
            Dtype::C64 => 4,
            d if d.bits() <= 8 => 1,
            d => (d.bits() / 8) as usize,
        }
    }

    /// Whether this is a floating-point dtype that
    /// [`decode_f32_into`](crate::decode::decode_f32_into) can decode (every
    /// float except the complex `C64`).
    ///
    /// ```
    /// use safetensors_nano::Dtype;
    /// assert!(Dtype::F8_E8M0.is_float());
    /// assert!(!Dtype::I8.is_float());
    /// assert!(!Dtype::C64.is_float());
    /// ```
    pub const fn is_float(self) -> bool {
        matches!(
            self,
            Dtype::F4
                | Dtype::F6_E2M3
                | Dtype::F6_E3M2
                | Dtype::F8_E5M2
                | Dtype::F8_E4M3
                | Dtype::F8_E8M0
                | Dtype::F8_E4M3FNUZ
                | Dtype::F8_E5M2FNUZ
                | Dtype::F16
                | Dtype::BF16
                | Dtype::F32
                | Dtype::F64
        )
    }

    /// Bytes taken by `elements` elements, or `None` when the bit count
    /// overflows `u64` or is not a whole number of bytes.
    ///
    /// ```
    /// use safetensors_nano::Dtype;
    /// assert_eq!(Dtype::F4.byte_len(6), Some(3));
    /// assert_eq!(Dtype::F4.byte_len(3), None);
    /// assert_eq!(Dtype::F32.byte_len(u64::MAX), None);
    /// ```
    pub const fn byte_len(self, elements: u64) -> Option<u64> {
        match elements.checked_mul(self.bits() as u64) {
            Some(bits) if bits % 8 == 0 => Some(bits / 8),
            _ => None,
        }
    }

    pub(crate) fn from_index(index: u32) -> Option<Dtype> {
        Dtype::ALL.get(usize::try_from(index).ok()?).copied()
    }
}

/// A perfect hash of the 22 dtype names: their first byte, their fifth byte
/// (the last for shorter names) and their length tell them apart modulo 32.
const fn name_hash(first: u8, fifth: u8, len: usize) -> usize {
    (first as usize)
        .wrapping_sub(fifth as usize)
        .wrapping_add(len.wrapping_mul(5))
        & 31
}

/// Bytes in all dtype names together.
#[allow(clippy::indexing_slicing)] // evaluated at compile time
const NAMES_LEN: usize = {
    let mut total = 0;
    let mut i = 0;
    while i < Dtype::ALL.len() {
        total += Dtype::ALL[i].name().len();
        i += 1;
    }
    total
};

/// The lookup tables of [`Dtype::from_name`], packed small (a table of
/// string slices would take twice the bytes).
struct NameTables {
    /// The names back to back, in [`Dtype::ALL`] order.
    bytes: [u8; NAMES_LEN],
    /// Where each name starts in `bytes`, then where the last one ends.
    starts: [u8; 23],
    /// The [`Dtype::ALL`] index of the name with each hash; `u8::MAX` for none.
    by_hash: [u8; 32],
}

/// Built from [`Dtype::name`] at compile time; the build fails if two names
/// share a hash (or a table index is out of range).
#[allow(clippy::indexing_slicing, clippy::cast_possible_truncation)] // evaluated at compile time
const NAMES: NameTables = {
    let mut t = NameTables {
        bytes: [0; NAMES_LEN],
        starts: [0; 23],
        by_hash: [u8::MAX; 32],
    };
    let mut at = 0;
    let mut i = 0;
    while i < Dtype::ALL.len() {
        let name = Dtype::ALL[i].name().as_bytes();
        let mut j = 0;
        while j < name.len() {
            t.bytes[at + j] = name[j];
            j += 1;
        }
        t.starts[i] = at as u8;
        at += name.len();
        let fifth = if name.len() > 4 {
            name[4]
        } else {
            name[name.len() - 1]
        };
        let slot = name_hash(name[0], fifth, name.len());
        assert!(t.by_hash[slot] == u8::MAX, "two dtype names share a hash");
        t.by_hash[slot] = i as u8;
        i += 1;
    }
    t.starts[i] = at as u8;
    t
};

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_order_matches_reference() {
        for (i, d) in Dtype::ALL.iter().enumerate() {
            assert_eq!(*d as usize, i);
            assert_eq!(Dtype::from_name(d.name().as_bytes()), Some(*d));
            assert_eq!(Dtype::from_index(i as u32), Some(*d));
        }
        assert_eq!(Dtype::from_index(22), None);
        assert!(Dtype::ALL.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "an exhaustive sweep of safe code: slow under Miri, and natively tested"
    )]
    fn from_name_takes_exactly_the_names() {
        let by_scan = |s: &[u8]| Dtype::ALL.into_iter().find(|d| d.name().as_bytes() == s);
        let mut candidates: std::vec::Vec<std::vec::Vec<u8>> = std::vec![std::vec![]];
        // Every piece of the packed table, across name boundaries too.
        for start in 0..NAMES.bytes.len() {
            for end in start..=NAMES.bytes.len() {
                candidates.push(NAMES.bytes[start..end].to_vec());
            }
        }
        // Every name with one byte changed, dropped or added.
        for d in Dtype::ALL {
            let name = d.name().as_bytes();
            for i in 0..=name.len() {
                for b in b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcz\0\xff"
                    .iter()
                    .copied()
                {
                    let mut changed = name.to_vec();
                    if i < name.len() {
                        changed[i] = b;
                        candidates.push(changed.clone());
                        changed.remove(i);
                        candidates.push(changed.clone());
                        changed = name.to_vec();
                    }
                    changed.insert(i, b);
                    candidates.push(changed);
                }
            }
        }
        for c in &candidates {
            assert_eq!(
                Dtype::from_name(c),
                by_scan(c),
                "{:?}",
                std::string::String::from_utf8_lossy(c)
            );
        }
        assert!(candidates.iter().filter(|c| by_scan(c).is_some()).count() >= 22);
    }
}
