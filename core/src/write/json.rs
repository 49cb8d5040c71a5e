//! The header as compact JSON, written by one function generic over the
//! sink, so that counting its length and writing it can never disagree.

use super::sink::Sink;
use super::spec::AsSpec;
use super::METADATA_KEY;
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
            .ok_or_else(|| super::at_index(ErrorKind::ValidationOverflow, index))?;
        if comma {
            sink.write_all(b",")?;
        }
        comma = true;
        write_string(sink, spec.name())?;
        sink.write_all(b":{\"dtype\":\"")?;
        sink.write_all(spec.dtype().name().as_bytes())?;
        sink.write_all(b"\",\"shape\":[")?;
        for (i, &dim) in spec.shape().iter().enumerate() {
            if i > 0 {
                sink.write_all(b",")?;
            }
            write_u64(sink, dim)?;
        }
        sink.write_all(b"],\"data_offsets\":[")?;
        write_u64(sink, offset)?;
        sink.write_all(b",")?;
        write_u64(sink, end)?;
        sink.write_all(b"]}")?;
        offset = end;
    }
    sink.write_all(b"}")
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
    sink.write_all(rest)?;
    sink.write_all(b"\"")
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

/// Writes `n` in decimal, as serde_json does (no sign, no leading zeros).
fn write_u64<S: Sink + ?Sized>(sink: &mut S, mut n: u64) -> Result<(), Error> {
    let mut buf = [0u8; 20];
    let digits = n.checked_ilog10().map_or(1, |log| {
        usize::try_from(log).unwrap_or(19).saturating_add(1)
    });
    let digits_buf = buf.get_mut(..digits).unwrap_or_default();
    for slot in digits_buf.iter_mut().rev() {
        *slot = b'0' | u8::try_from(n % 10).unwrap_or(0);
        n /= 10;
    }
    sink.write_all(buf.get(..digits).unwrap_or_default())
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
            assert_eq!(to_string(|s| write_u64(s, n)), std::format!("{n}"));
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
