//! The header grammar: walks the JSON once and fills the table with
//! entries: docs/format.md R5 one-object to R8 tensor-entry, and the
//! stricter checks of its deliberate differences.

use super::canonical;
use super::lexer::{Lexer, RawString, Step};
use super::string::tensor_ref;
use super::validate::verdict;
use crate::dtype::Dtype;
use crate::error::{Error, ErrorKind, Expected, Field};
use crate::mode::{self, Plain};
use crate::table::{link, Building, Entry};
use crate::view::name::Name;
use crate::view::shape::{ElementCount, Shape};
use crate::view::visit::Visitor;

/// What the header said about `__metadata__`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MetadataState {
    /// No `__metadata__` key.
    Absent,
    /// `"__metadata__": null`.
    Null,
    /// An object with this many pairs.
    Present(usize),
}

/// What one pass over the header found.
pub(crate) struct Parsed {
    pub tensors: usize,
    pub metadata: MetadataState,
    /// Whether the header's text is ASCII without escapes.
    pub plain: Plain,
}

/// Where parsed entries go: tensors fill from the front, metadata pairs from
/// the back, each with the link of its name (hash and entry number); past
/// capacity, entries are only counted.
struct TableFill<'t> {
    entries: &'t mut [Entry],
    /// One link per entry, same positions as `entries`.
    links: &'t mut [u64],
    tensors: usize,
    metadata: usize,
}

impl TableFill<'_> {
    fn used(&self) -> usize {
        self.tensors.saturating_add(self.metadata)
    }

    fn put(&mut self, at: usize, entry: Entry, hash: u32) {
        if let Some(slot) = self.entries.get_mut(at) {
            *slot = entry;
        }
        if let Some(slot) = self.links.get_mut(at) {
            *slot = link(hash, at);
        }
    }

    fn push_tensor(&mut self, entry: Entry, hash: u32) {
        if self.used() < self.entries.len() {
            self.put(self.tensors, entry, hash);
        }
        self.tensors = self.tensors.saturating_add(1);
    }

    fn push_metadata(&mut self, entry: Entry, hash: u32) {
        if self.used() < self.entries.len() {
            let at = self
                .entries
                .len()
                .saturating_sub(self.metadata)
                .saturating_sub(1);
            self.put(at, entry, hash);
        }
        self.metadata = self.metadata.saturating_add(1);
    }
}

fn key_is(json: &[u8], key: RawString, expected: &str) -> bool {
    let name = raw_name(json, key);
    // Small builds compare every key decoded: one comparison in flash.
    if key.escaped || !mode::SHORTCUTS {
        name.cmp_str(expected).is_eq()
    } else {
        name.raw() == expected.as_bytes()
    }
}

/// Parses the whole header into `entries`, showing each entry to
/// `visitor`. Counts past capacity so that the caller can report how many
/// slots are needed.
pub(crate) fn parse<'h>(
    json: &'h [u8],
    table: Building<'_>,
    visitor: &mut dyn Visitor<'h>,
) -> Result<Parsed, Error> {
    let mut lexer = Lexer::new(json);
    let step = parse_object(&mut lexer, json, table, visitor);
    lexer.finish(step)
}

/// The raw content of a string the lexer read.
fn raw_name(json: &[u8], s: RawString) -> Name<'_> {
    Name::from_raw(json.get(s.start..s.end).unwrap_or_default())
}

/// The header object, from its `{` to the end of the header.
fn parse_object<'h>(
    lexer: &mut Lexer<'_>,
    json: &'h [u8],
    table: Building<'_>,
    visitor: &mut dyn Visitor<'h>,
) -> Step<Parsed> {
    let mut fill = TableFill {
        entries: table.entries,
        links: table.links,
        tensors: 0,
        metadata: 0,
    };
    let mut metadata = MetadataState::Absent;
    lexer.expect(b'{', Expected::Object)?;
    if !lexer.eat(b'}') {
        loop {
            let (key, hash) = lexer.key()?;
            lexer.expect(b':', Expected::Colon)?;
            // (A plain key of another length cannot be it: skip the compare.
            // Small builds always compare: less code.)
            let maybe_metadata =
                !mode::SHORTCUTS || key.escaped || key.end.wrapping_sub(key.start) == 12;
            if maybe_metadata && key_is(json, key, "__metadata__") {
                if metadata != MetadataState::Absent {
                    let at = key.start.saturating_sub(1);
                    return Err(lexer.fail_at(ErrorKind::DuplicateMetadata, at));
                }
                metadata = parse_metadata(lexer, json, &mut fill, visitor)?;
            } else {
                let entry = parse_tensor(lexer, json, key)?;
                visitor.tensor(
                    raw_name(json, key),
                    entry.dtype(),
                    Shape::new(json, entry.shape_start()),
                    (entry.begin(), entry.end()),
                );
                fill.push_tensor(entry, hash);
            }
            lexer.skip_ws();
            if lexer.eat(b',') {
                continue;
            }
            if lexer.eat(b'}') {
                break;
            }
            return Err(lexer.unexpected(Expected::CommaOrObjectEnd));
        }
    }
    lexer.skip_ws();
    if !lexer.at_end() {
        return Err(lexer.unexpected(Expected::End));
    }
    Ok(Parsed {
        tensors: fill.tensors,
        metadata,
        plain: lexer.plain(),
    })
}

fn parse_metadata<'h>(
    lexer: &mut Lexer<'_>,
    json: &'h [u8],
    fill: &mut TableFill<'_>,
    visitor: &mut dyn Visitor<'h>,
) -> Step<MetadataState> {
    if lexer.eat_null()? {
        return Ok(MetadataState::Null);
    }
    if !lexer.eat(b'{') {
        return Err(match lexer.peek() {
            Some(_) => lexer.fail(ErrorKind::MetadataNotObject),
            None => lexer.unexpected(Expected::Object),
        });
    }
    let mut pairs = 0usize;
    if lexer.eat(b'}') {
        return Ok(MetadataState::Present(0));
    }
    loop {
        let (key, hash) = lexer.key()?;
        lexer.expect(b':', Expected::Colon)?;
        lexer.skip_ws();
        if lexer.peek() != Some(b'"') {
            return Err(match lexer.peek() {
                Some(_) => lexer.fail(ErrorKind::MetadataValueNotString),
                None => lexer.unexpected(Expected::String),
            });
        }
        let value = lexer.string()?;
        visitor.metadata(raw_name(json, key), raw_name(json, value));
        fill.push_metadata(Entry::metadata(key.start, value.start), hash);
        pairs = pairs.saturating_add(1);
        if lexer.eat(b',') {
            continue;
        }
        if lexer.eat(b'}') {
            return Ok(MetadataState::Present(pairs));
        }
        return Err(lexer.unexpected(Expected::CommaOrObjectEnd));
    }
}

fn parse_tensor(lexer: &mut Lexer<'_>, json: &[u8], name: RawString) -> Step<Entry> {
    if mode::SHORTCUTS {
        lexer.skip_ws();
        let rest = json.get(lexer.pos()..).unwrap_or_default();
        if let Some((entry, len)) = canonical::tensor(rest, lexer.pos(), name.start) {
            lexer.advance(len);
            return Ok(entry);
        }
    }
    // The name's span is only measured when an error needs it.
    tensor_fields(lexer, json, name).map_err(|_| lexer.tag_tensor(tensor_ref(json, name.start)))
}

fn tensor_fields(lexer: &mut Lexer<'_>, json: &[u8], name: RawString) -> Step<Entry> {
    if !lexer.eat(b'{') {
        return Err(match lexer.peek() {
            Some(_) => lexer.fail(ErrorKind::TensorNotObject),
            None => lexer.unexpected(Expected::Object),
        });
    }
    let mut dtype: Option<Dtype> = None;
    let mut shape: Option<(usize, Option<u64>)> = None;
    let mut offsets: Option<(u64, u64)> = None;
    if !lexer.eat(b'}') {
        loop {
            let (field, key_at) = field_key(lexer, json)?;
            let seen = match field {
                Some(Field::Dtype) => dtype.is_some(),
                Some(Field::Shape) => shape.is_some(),
                Some(Field::DataOffsets) => offsets.is_some(),
                None => false,
            };
            if let (true, Some(field)) = (seen, field) {
                return Err(lexer.fail_at(ErrorKind::DuplicateField { field }, key_at));
            }
            lexer.expect(b':', Expected::Colon)?;
            match field {
                Some(Field::Dtype) => dtype = Some(parse_dtype(lexer, json)?),
                Some(Field::Shape) => shape = Some(parse_shape(lexer)?),
                Some(Field::DataOffsets) => offsets = Some(parse_offsets(lexer)?),
                None => lexer.skip_value(2)?,
            }
            if lexer.eat(b',') {
                continue;
            }
            if lexer.eat(b'}') {
                break;
            }
            return Err(lexer.unexpected(Expected::CommaOrObjectEnd));
        }
    }
    let (Some(dtype), Some((shape_start, elements)), Some((begin, end))) = (dtype, shape, offsets)
    else {
        let field = match (dtype, shape) {
            (None, _) => Field::Dtype,
            (_, None) => Field::Shape,
            _ => Field::DataOffsets,
        };
        let at = lexer.pos().saturating_sub(1);
        return Err(lexer.fail_at(ErrorKind::MissingField { field }, at));
    };
    Ok(Entry::tensor(
        name.start,
        dtype,
        shape_start,
        (begin, end),
        verdict(dtype, elements, begin, end),
    ))
}

/// Reads a tensor entry's key: one of the three fields, or another key.
/// Returns the field and the offset of the key's opening quote. The plain
/// spellings are matched without scanning; escaped ones go the long way.
fn field_key(lexer: &mut Lexer<'_>, json: &[u8]) -> Step<(Option<Field>, usize)> {
    lexer.skip_ws();
    let at = lexer.pos();
    // (Small builds take the long way for all: less code.)
    if mode::SHORTCUTS {
        if lexer.eat_literal(b"\"dtype\"") {
            return Ok((Some(Field::Dtype), at));
        }
        if lexer.eat_literal(b"\"shape\"") {
            return Ok((Some(Field::Shape), at));
        }
        if lexer.eat_literal(b"\"data_offsets\"") {
            return Ok((Some(Field::DataOffsets), at));
        }
    }
    let key = lexer.string()?;
    let field = [Field::Dtype, Field::Shape, Field::DataOffsets]
        .into_iter()
        .find(|f| key_is(json, key, f.key()));
    Ok((field, at))
}

fn parse_dtype(lexer: &mut Lexer<'_>, json: &[u8]) -> Step<Dtype> {
    lexer.skip_ws();
    let at = lexer.pos();
    if lexer.peek() != Some(b'"') {
        return Err(match lexer.peek() {
            Some(_) => lexer.fail(ErrorKind::DtypeNotString),
            None => lexer.unexpected(Expected::String),
        });
    }
    // Fast path: a plain dtype name and its closing quote within 13 bytes.
    // (Small builds take the long way: less code.)
    if mode::SHORTCUTS {
        let rest = json.get(at.saturating_add(1)..).unwrap_or_default();
        let short = rest.get(..rest.len().min(13)).unwrap_or_default();
        if let Some(end) = short.iter().position(|&b| b == b'"') {
            if let Some(dtype) = short.get(..end).and_then(Dtype::from_name) {
                lexer.advance(end.saturating_add(2));
                return Ok(dtype);
            }
        }
    }
    let value = lexer.string()?;
    let raw = json.get(value.start..value.end).unwrap_or_default();
    let found = if value.escaped {
        let mut buf = [0u8; 16];
        let mut len = 0usize;
        for b in Name::from_raw(raw).bytes() {
            if let Some(slot) = buf.get_mut(len) {
                *slot = b;
            }
            len = len.saturating_add(1);
        }
        buf.get(..len).and_then(Dtype::from_name)
    } else {
        Dtype::from_name(raw)
    };
    found.ok_or_else(|| lexer.fail_at(ErrorKind::UnknownDtype, at))
}

fn parse_shape(lexer: &mut Lexer<'_>) -> Step<(usize, Option<u64>)> {
    lexer.skip_ws();
    let start = lexer.pos();
    lexer.expect(b'[', Expected::Array)?;
    let mut count = ElementCount::new();
    if !lexer.eat(b']') {
        loop {
            count.push(lexer.uint()?);
            if lexer.eat(b',') {
                continue;
            }
            if lexer.eat(b']') {
                break;
            }
            return Err(lexer.unexpected(Expected::CommaOrArrayEnd));
        }
    }
    Ok((start, count.get()))
}

fn parse_offsets(lexer: &mut Lexer<'_>) -> Step<(u64, u64)> {
    lexer.skip_ws();
    let start = lexer.pos();
    lexer.expect(b'[', Expected::Array)?;
    let not_pair = |lexer: &mut Lexer<'_>, found| {
        lexer.fail_at(ErrorKind::DataOffsetsNotPair { found }, start)
    };
    if lexer.eat(b']') {
        return Err(not_pair(lexer, 0));
    }
    let begin = lexer.uint()?;
    if lexer.eat(b']') {
        return Err(not_pair(lexer, 1));
    }
    lexer.expect(b',', Expected::CommaOrArrayEnd)?;
    let end = lexer.uint()?;
    if lexer.eat(b']') {
        return Ok((begin, end));
    }
    if lexer.eat(b',') {
        // A third element: check it is at least a valid value, then report.
        lexer.skip_value(3)?;
        return Err(not_pair(lexer, 3));
    }
    Err(lexer.unexpected(Expected::CommaOrArrayEnd))
}
