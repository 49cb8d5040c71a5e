//! The header as compact JSON, written by one function generic over the
//! sink, so that counting its length and writing it can never disagree.
//!
//! Callers pass their sink through
//! [`mode::json_sink`](crate::mode::json_sink), which decides whether the
//! counting pass and the writing pass share one copy of this code.

use super::sink::Sink;
use super::spec::{at_index, AsSpec, METADATA_KEY};
use crate::dtype::Dtype;
use crate::error::{Error, ErrorKind};

/// Writes the unpadded JSON header: `__metadata__` first when given, then
/// every tensor in slice order with offsets from 0, no gaps. Byte for byte
/// what the reference writer (serde_json, compact) produces.
pub(crate) fn write_json<S: Sink + ?Sized, T: AsSpec>(
    sink: &mut S,
    tensors: &[T],
    metadata: Option<&[(&str, &str)]>,
) -> Result<(), Error> {
    sink.write_all(b"{")?;
    let mut comma = false;
    if let Some(metadata) = metadata {
        write_string(sink, METADATA_KEY)?;
        sink.write_all(b":{")?;
        for (i, (key, value)) in metadata.iter().enumerate() {
            if i > 0 {
                sink.write_all(b",")?;
            }
            write_string(sink, key)?;
            sink.write_all(b":")?;
            write_string(sink, value)?;
        }
        sink.write_all(b"}")?;
        comma = true;
    }
    let mut offset = 0u64;
    for (index, tensor) in tensors.iter().enumerate() {
        let spec = tensor.spec();
        let end = offset
            .checked_add(spec.byte_len())
            .ok_or_else(|| at_index(ErrorKind::ValidationOverflow, index))?;
        // Few, larger writes: `,"` name `":{"dtype":"F32","shape":[` dims
        // `],"data_offsets":[` begin `,` end `]}`.
        sink.write_all(if comma { b",\"" } else { b"\"" })?;
        comma = true;
        write_string_content(sink, spec.name())?;
        sink.write_all(dtype_prefix(spec.dtype()).as_bytes())?;
        const SHAPE_END: &[u8] = b"],\"data_offsets\":[";
        match spec.shape().split_last() {
            Some((&last, dims)) => {
                for &dim in dims {
                    write_u64_then(sink, dim, b",")?;
                }
                write_u64_then(sink, last, SHAPE_END)?;
            }
            None => sink.write_all(SHAPE_END)?,
        }
        write_u64_then(sink, offset, b",")?;
        write_u64_then(sink, end, b"]}")?;
        offset = end;
    }
    sink.write_all(b"}")
}

/// `":{"dtype":"<name>","shape":[`, the text between a tensor's name and
/// its dimensions, as one piece.
const fn dtype_prefix(dtype: Dtype) -> &'static str {
    macro_rules! prefixes {
        ($($d:ident)*) => {
            match dtype {
                $(Dtype::$d => concat!("\":{\"dtype\":\"", stringify!($d), "\",\"shape\":["),)*
            }
        };
    }
    prefixes!(
        BOOL F4 F6_E2M3 F6_E3M2 U8 I8 F8_E5M2 F8_E4M3 F8_E8M0 F8_E4M3FNUZ F8_E5M2FNUZ
        I16 U16 F16 BF16 I32 U32 F32 C64 F64 I64 U64
    )
}

/// Whether serde_json escapes this byte of a UTF-8 string.
const fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Writes `s` as a JSON string with serde_json's escaping: `\"` `\\` `\b`
/// `\f` `\n` `\r` `\t`, other bytes below 0x20 as `\u00xx` (lowercase hex),
/// everything else (`/`, DEL, non-ASCII) raw.
fn write_string<S: Sink + ?Sized>(sink: &mut S, s: &str) -> Result<(), Error> {
    sink.write_all(b"\"")?;
    write_string_content(sink, s)?;
    sink.write_all(b"\"")
}

/// [`write_string`] without the quotes.
fn write_string_content<S: Sink + ?Sized>(sink: &mut S, s: &str) -> Result<(), Error> {
    let mut rest = s.as_bytes();
    while let Some(pos) = rest.iter().position(|&b| needs_escape(b)) {
        let Some((raw, tail)) = rest.split_at_checked(pos) else {
            break;
        };
        sink.write_all(raw)?;
        let Some((&b, tail)) = tail.split_first() else {
            break;
        };
        write_escape(sink, b)?;
        rest = tail;
    }
    sink.write_all(rest)
}

fn write_escape<S: Sink + ?Sized>(sink: &mut S, b: u8) -> Result<(), Error> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short: &[u8] = match b {
        b'"' => b"\\\"",
        b'\\' => b"\\\\",
        0x08 => b"\\b",
        0x0c => b"\\f",
        b'\n' => b"\\n",
        b'\r' => b"\\r",
        b'\t' => b"\\t",
        _ => {
            let hi = HEX.get(usize::from(b >> 4)).copied().unwrap_or(b'0');
            let lo = HEX.get(usize::from(b & 0x0f)).copied().unwrap_or(b'0');
            return sink.write_all(&[b'\\', b'u', b'0', b'0', hi, lo]);
        }
    };
    sink.write_all(short)
}

/// Writes `n` in decimal as serde_json does (no sign, no leading zeros),
/// followed by `suffix` (at most 20 bytes), in one write.
fn write_u64_then<S: Sink + ?Sized>(sink: &mut S, mut n: u64, suffix: &[u8]) -> Result<(), Error> {
    let mut buf = [0u8; 40];
    let digits = n.checked_ilog10().map_or(1, |log| {
        usize::try_from(log).unwrap_or(19).saturating_add(1)
    });
    let (digits_buf, rest) = buf.split_at_mut(digits.min(20));
    for slot in digits_buf.iter_mut().rev() {
        *slot = b'0' | u8::try_from(n % 10).unwrap_or(0);
        n /= 10;
    }
    let end = digits.saturating_add(suffix.len());
    rest.get_mut(..suffix.len())
        .ok_or(Error::new(ErrorKind::Sink))?
        .copy_from_slice(suffix);
    sink.write_all(buf.get(..end).ok_or(Error::new(ErrorKind::Sink))?)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::write::sink::SliceSink;
    use std::string::String;

    fn to_string(f: impl FnOnce(&mut SliceSink<'_>) -> Result<(), Error>) -> String {
        let mut buf = [0u8; 256];
        let mut sink = SliceSink::new(&mut buf);
        f(&mut sink).unwrap();
        String::from_utf8(sink.into_written().to_vec()).unwrap()
    }

    #[test]
    fn integers() {
        for n in [0, 1, 9, 10, 99, 100, 12345, u64::MAX - 1, u64::MAX, 1 << 63] {
            assert_eq!(
                to_string(|s| write_u64_then(s, n, b"")),
                std::format!("{n}")
            );
            assert_eq!(
                to_string(|s| write_u64_then(s, n, b"],\"x\":[")),
                std::format!("{n}],\"x\":[")
            );
        }
    }

    /// The `dyn Sink` instance (wasm32, bare metal) writes what the
    /// generic one does, here for a header with every escape and dtype.
    #[test]
    fn dyn_sink_writes_the_same_header() {
        use crate::write::TensorSpec;
        let names: std::vec::Vec<std::string::String> = (0u8..0x80)
            .map(|b| std::format!("t{}", char::from(b)))
            .collect();
        let specs: std::vec::Vec<TensorSpec<'_>> = names
            .iter()
            .zip(Dtype::ALL.iter().cycle())
            .map(|(name, &d)| TensorSpec::new(name, d, &[8, 3], 24 * u64::from(d.bits()) / 8))
            .collect();
        let metadata = [("k\n", "v\u{1}"), ("", "")];
        let mut generic = [0u8; 16384];
        let mut generic = SliceSink::new(&mut generic);
        write_json(&mut generic, &specs, Some(&metadata)).unwrap();
        let mut erased = [0u8; 16384];
        let mut erased = SliceSink::new(&mut erased);
        let dyn_sink: &mut dyn Sink = &mut erased;
        write_json(dyn_sink, &specs, Some(&metadata)).unwrap();
        let (generic, erased) = (generic.into_written(), erased.into_written());
        assert!(generic.len() > 128 * 60);
        assert_eq!(generic, erased);
    }

    #[test]
    fn dtype_prefixes_name_the_dtype() {
        for d in Dtype::ALL {
            let expected = std::format!("\":{{\"dtype\":\"{}\",\"shape\":[", d.name());
            assert_eq!(dtype_prefix(d), expected);
        }
    }

    #[test]
    fn every_byte_escapes_like_serde_json() {
        for b in 0u8..0x80 {
            let c = std::string::String::from(char::from(b));
            assert_eq!(
                to_string(|s| write_string(s, &c)),
                serde_json::to_string(&c).unwrap(),
                "byte {b:#x}"
            );
        }
        let s = "caf\u{e9} / \u{7f} \u{1F600} \"q\" \\";
        assert_eq!(
            to_string(|sink| write_string(sink, s)),
            serde_json::to_string(s).unwrap()
        );
    }
}
