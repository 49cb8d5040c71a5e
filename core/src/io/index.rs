//! With the `std` feature: a sharded checkpoint's index
//! (`model.safetensors.index.json`, as the Hub's tools write it). Its check
//! against the shards' headers is in `index_check.rs`.
//!
//! The index is read with the header's own strict JSON lexer; only
//! `metadata.total_size` and `weight_map` are interpreted, every other
//! value is checked for syntax and skipped.

use std::fmt;
use std::string::{String, ToString};
use std::vec::Vec;

use crate::error::{Error, ErrorKind, Expected};
use crate::read::lexer::{Lexer, RawString, Step};
use crate::view::name::Name;

/// The parsed index of a sharded checkpoint: which shard file holds each
/// tensor, and the total size of the tensors' data it states.
///
/// ```
/// use safetensors_nano::ShardIndex;
/// let json = br#"{"metadata": {"total_size": 12}, "weight_map": {
///     "b": "model-00002-of-00002.safetensors",
///     "a": "model-00001-of-00002.safetensors"}}"#;
/// let index = ShardIndex::parse(json)?;
/// assert_eq!(index.total_size(), Some(12));
/// assert_eq!(index.shard_of("b"), Some("model-00002-of-00002.safetensors"));
/// assert_eq!(index.shards(), ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]);
/// # Ok::<(), safetensors_nano::IndexError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub struct ShardIndex {
    total_size: Option<u64>,
    /// (tensor, shard file), sorted by tensor name.
    weight_map: Vec<(String, String)>,
}

/// How large an index [`ShardIndex::parse_with`] accepts: a hostile or
/// broken index may claim any size, a real one is far below both.
///
/// ```
/// use safetensors_nano::{IndexError, IndexLimits, ShardIndex};
/// let limits = IndexLimits { entries: 1, ..IndexLimits::DEFAULT };
/// let err = ShardIndex::parse_with(br#"{"weight_map": {"a": "1.st", "b": "1.st"}}"#, limits).unwrap_err();
/// assert_eq!(err, IndexError::TooManyEntries { limit: 1 });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub struct IndexLimits {
    /// Bytes of the index file (default 256 MiB; a 1,000,000-tensor index
    /// has about 97 MB).
    pub bytes: usize,
    /// Entries of its `weight_map` (default 2,000,000; a large model has
    /// about 100,000).
    pub entries: usize,
}

impl IndexLimits {
    /// The limits [`ShardIndex::parse`] applies: 256 MiB and 2,000,000 entries.
    ///
    /// ```
    /// use safetensors_nano::IndexLimits;
    /// assert_eq!(IndexLimits::DEFAULT.bytes, 256 << 20);
    /// assert_eq!(IndexLimits::default(), IndexLimits::DEFAULT);
    /// ```
    pub const DEFAULT: IndexLimits = IndexLimits {
        bytes: 256 << 20,
        entries: 2_000_000,
    };
}

impl Default for IndexLimits {
    fn default() -> Self {
        IndexLimits::DEFAULT
    }
}

/// Why an index could not be read.
///
/// ```
/// use safetensors_nano::{IndexError, ShardIndex};
/// let err = ShardIndex::parse(br#"{"weight_map": {"a": "../x.safetensors"}}"#).unwrap_err();
/// assert!(matches!(err, IndexError::UnsafeShardName { .. }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub enum IndexError {
    /// Not JSON, or not the index's shape: the lexer's error (with the byte
    /// offset in the index file).
    Json(Error),
    /// No `weight_map` object.
    NoWeightMap,
    /// The index has more bytes than [`IndexLimits::bytes`].
    TooLarge {
        /// The limit.
        limit: usize,
    },
    /// The `weight_map` has more entries than [`IndexLimits::entries`].
    TooManyEntries {
        /// The limit.
        limit: usize,
    },
    /// A tensor is listed twice in `weight_map`.
    DuplicateTensor {
        /// The tensor's name.
        tensor: String,
    },
    /// A shard file name that is not a plain file name beside the index
    /// (a path, `..`, empty): refused rather than read from elsewhere.
    UnsafeShardName {
        /// The tensor it was given for.
        tensor: String,
        /// The name as given.
        shard: String,
    },
}

impl fmt::Display for IndexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexError::Json(e) => write!(f, "index is not a valid index JSON: {e}"),
            IndexError::NoWeightMap => f.write_str(
                "index has no \"weight_map\" object (is this a *.safetensors.index.json?)",
            ),
            IndexError::TooLarge { limit } => write!(
                f,
                "index is larger than its limit of {limit} bytes (IndexLimits::bytes): not an index file, or raise the limit"
            ),
            IndexError::TooManyEntries { limit } => write!(
                f,
                "index's weight_map has more than {limit} entries (IndexLimits::entries): raise the limit to read it"
            ),
            IndexError::DuplicateTensor { tensor } => {
                write!(f, "index lists tensor {tensor:?} twice in weight_map")
            }
            IndexError::UnsafeShardName { tensor, shard } => write!(
                f,
                "index names shard {shard:?} for tensor {tensor:?}: shards must be plain file names beside the index"
            ),
        }
    }
}

impl std::error::Error for IndexError {}

fn decoded(json: &[u8], s: RawString) -> String {
    Name::from_raw(json.get(s.start..s.end).unwrap_or_default()).to_string()
}

fn plain_file_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0'])
}

impl ShardIndex {
    /// Parses an index file's bytes (strict JSON; the header's lexer),
    /// within [`IndexLimits::DEFAULT`].
    ///
    /// # Errors
    /// [`IndexError`]: bad JSON or shape (with its offset), no
    /// `weight_map`, a tensor listed twice, a shard name that is a path,
    /// an index over the limits.
    ///
    /// ```
    /// use safetensors_nano::{IndexError, ShardIndex};
    /// assert_eq!(ShardIndex::parse(br#"{"metadata": {}}"#), Err(IndexError::NoWeightMap));
    /// assert!(matches!(ShardIndex::parse(b"{"), Err(IndexError::Json(_))));
    /// ```
    pub fn parse(json: &[u8]) -> Result<Self, IndexError> {
        Self::parse_with(json, IndexLimits::DEFAULT)
    }

    /// Parses an index file's bytes within `limits`: more bytes is
    /// [`IndexError::TooLarge`] before any is parsed, more `weight_map`
    /// entries [`IndexError::TooManyEntries`] at the first one past it.
    ///
    /// # Errors
    /// As [`ShardIndex::parse`].
    ///
    /// ```
    /// use safetensors_nano::{IndexError, IndexLimits, ShardIndex};
    /// let limits = IndexLimits { bytes: 8, ..IndexLimits::DEFAULT };
    /// let err = ShardIndex::parse_with(br#"{"weight_map": {}}"#, limits).unwrap_err();
    /// assert_eq!(err, IndexError::TooLarge { limit: 8 });
    /// ```
    pub fn parse_with(json: &[u8], limits: IndexLimits) -> Result<Self, IndexError> {
        if json.len() > limits.bytes {
            return Err(IndexError::TooLarge {
                limit: limits.bytes,
            });
        }
        let mut lexer = Lexer::new(json);
        let mut total_size = None;
        let mut map = None;
        let mut entries = EntryCount {
            left: limits.entries,
            over: false,
        };
        let step = parse_top(&mut lexer, json, &mut total_size, &mut map, &mut entries);
        if entries.over {
            return Err(IndexError::TooManyEntries {
                limit: limits.entries,
            });
        }
        lexer.finish(step).map_err(IndexError::Json)?;
        let mut weight_map: Vec<(String, String)> = map.ok_or(IndexError::NoWeightMap)?;
        if let Some((tensor, shard)) = weight_map.iter().find(|(_, s)| !plain_file_name(s)) {
            return Err(IndexError::UnsafeShardName {
                tensor: tensor.clone(),
                shard: shard.clone(),
            });
        }
        weight_map.sort();
        if let Some(pair) = weight_map
            .windows(2)
            .find(|w| w.first().map(|a| &a.0) == w.get(1).map(|b| &b.0))
        {
            return Err(IndexError::DuplicateTensor {
                tensor: pair.first().map(|p| p.0.clone()).unwrap_or_default(),
            });
        }
        Ok(ShardIndex {
            total_size,
            weight_map,
        })
    }

    /// `metadata.total_size`, when the index states it.
    ///
    /// ```
    /// use safetensors_nano::ShardIndex;
    /// assert_eq!(ShardIndex::parse(br#"{"weight_map": {}}"#)?.total_size(), None);
    /// # Ok::<(), safetensors_nano::IndexError>(())
    /// ```
    pub fn total_size(&self) -> Option<u64> {
        self.total_size
    }

    /// `(tensor, shard file)` pairs, sorted by tensor name.
    ///
    /// ```
    /// use safetensors_nano::ShardIndex;
    /// let index = ShardIndex::parse(br#"{"weight_map": {"b": "2.st", "a": "1.st"}}"#)?;
    /// assert_eq!(index.weight_map().collect::<Vec<_>>(), [("a", "1.st"), ("b", "2.st")]);
    /// # Ok::<(), safetensors_nano::IndexError>(())
    /// ```
    pub fn weight_map(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        self.weight_map
            .iter()
            .map(|(t, s)| (t.as_str(), s.as_str()))
    }

    /// The shard file holding `tensor`, per the index.
    ///
    /// ```
    /// use safetensors_nano::ShardIndex;
    /// let index = ShardIndex::parse(br#"{"weight_map": {"a": "1.st"}}"#)?;
    /// assert_eq!(index.shard_of("a"), Some("1.st"));
    /// assert_eq!(index.shard_of("z"), None);
    /// # Ok::<(), safetensors_nano::IndexError>(())
    /// ```
    pub fn shard_of(&self, tensor: &str) -> Option<&str> {
        self.weight_map
            .binary_search_by(|(t, _)| t.as_str().cmp(tensor))
            .ok()
            .and_then(|i| self.weight_map.get(i))
            .map(|(_, s)| s.as_str())
    }

    /// The distinct shard files, sorted (the Hub's names sort in order).
    ///
    /// ```
    /// use safetensors_nano::ShardIndex;
    /// let index = ShardIndex::parse(br#"{"weight_map": {"a": "2.st", "b": "1.st", "c": "2.st"}}"#)?;
    /// assert_eq!(index.shards(), ["1.st", "2.st"]);
    /// # Ok::<(), safetensors_nano::IndexError>(())
    /// ```
    pub fn shards(&self) -> Vec<&str> {
        let mut shards: Vec<&str> = self.weight_map.iter().map(|(_, s)| s.as_str()).collect();
        shards.sort_unstable();
        shards.dedup();
        shards
    }
}

/// The `weight_map` entries still allowed, over all `weight_map`s read
/// (a key given twice counts twice); `over` once one too many was read.
struct EntryCount {
    left: usize,
    over: bool,
}

/// `{ "metadata": {...}, "weight_map": {...}, other keys skipped }`.
fn parse_top(
    lexer: &mut Lexer<'_>,
    json: &[u8],
    total_size: &mut Option<u64>,
    map: &mut Option<Vec<(String, String)>>,
    entries: &mut EntryCount,
) -> Step<()> {
    lexer.expect(b'{', Expected::Object)?;
    if !lexer.eat(b'}') {
        loop {
            let key = decoded(json, lexer.string()?);
            lexer.expect(b':', Expected::Colon)?;
            match key.as_str() {
                "metadata" => parse_metadata(lexer, json, total_size)?,
                "weight_map" => *map = Some(parse_weight_map(lexer, json, entries)?),
                _ => lexer.skip_value(1)?,
            }
            if lexer.eat(b'}') {
                break;
            }
            lexer.expect(b',', Expected::CommaOrObjectEnd)?;
        }
    }
    lexer.skip_ws();
    if lexer.at_end() {
        Ok(())
    } else {
        Err(lexer.unexpected(Expected::End))
    }
}

fn parse_metadata(lexer: &mut Lexer<'_>, json: &[u8], total_size: &mut Option<u64>) -> Step<()> {
    if lexer.eat_null()? {
        return Ok(());
    }
    lexer.expect(b'{', Expected::Object)?;
    if lexer.eat(b'}') {
        return Ok(());
    }
    loop {
        let key = decoded(json, lexer.string()?);
        lexer.expect(b':', Expected::Colon)?;
        if key == "total_size" {
            *total_size = Some(whole_number(lexer, json)?);
        } else {
            lexer.skip_value(2)?;
        }
        if lexer.eat(b'}') {
            return Ok(());
        }
        lexer.expect(b',', Expected::CommaOrObjectEnd)?;
    }
}

/// A JSON number whose value is a whole number that fits 64 bits:
/// `3087466496`, and also `3087466496.0` or `3.087466496e9`, as Python
/// tools that summed sizes as floats wrote `total_size`. Decided from the
/// decimal digits, exactly.
fn whole_number(lexer: &mut Lexer<'_>, json: &[u8]) -> Step<u64> {
    lexer.skip_ws();
    let start = lexer.pos();
    if !matches!(lexer.peek(), Some(b'0'..=b'9')) {
        // Not a number, or a negative one: the integer reader's error.
        return lexer.uint();
    }
    lexer.skip_value(0)?;
    let text = json.get(start..lexer.pos()).unwrap_or_default();
    let mut parts = text.splitn(2, |&b| b == b'e' || b == b'E');
    let (mantissa, exponent) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let mut parts = mantissa.splitn(2, |&b| b == b'.');
    let (int, frac) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let (negative, exp_digits) = match exponent.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, exponent),
    };
    // Clamped: past 10^6 nothing fits, or every digit is a fraction.
    let exp = exp_digits.iter().fold(0i64, |e, &d| {
        e.saturating_mul(10)
            .saturating_add(i64::from(d.wrapping_sub(b'0')))
            .min(1_000_000)
    });
    let exp = if negative { exp.saturating_neg() } else { exp };
    // value = digits × 10^shift: the integer and fraction digits together,
    // leading zeros dropped.
    let digits: Vec<u8> = int
        .iter()
        .chain(frac)
        .copied()
        .skip_while(|&d| d == b'0')
        .collect();
    let shift = exp.saturating_sub(i64::try_from(frac.len()).unwrap_or(i64::MAX));
    let cut = usize::try_from(shift.saturating_neg()).unwrap_or(0);
    let keep = digits.len().saturating_sub(cut);
    let (whole, fraction) = digits.split_at_checked(keep).unwrap_or_default();
    if fraction.iter().any(|&d| d != b'0') {
        return Err(lexer.fail_at(ErrorKind::InvalidNumber, start));
    }
    let zeros = if whole.is_empty() {
        0
    } else {
        usize::try_from(shift).unwrap_or(0).min(21)
    };
    let mut value: u64 = 0;
    for &d in whole.iter().chain(core::iter::repeat_n(&b'0', zeros)) {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d.wrapping_sub(b'0'))))
            .ok_or_else(|| lexer.fail_at(ErrorKind::IntegerTooLarge, start))?;
    }
    Ok(value)
}

fn parse_weight_map(
    lexer: &mut Lexer<'_>,
    json: &[u8],
    entries: &mut EntryCount,
) -> Step<Vec<(String, String)>> {
    let mut pairs = Vec::new();
    lexer.expect(b'{', Expected::Object)?;
    if lexer.eat(b'}') {
        return Ok(pairs);
    }
    loop {
        let Some(left) = entries.left.checked_sub(1) else {
            // (Stops the parse: parse_with reports TooManyEntries, not
            // this placeholder kind.)
            entries.over = true;
            let at = lexer.pos();
            return Err(lexer.fail_at(ErrorKind::InvalidNumber, at));
        };
        entries.left = left;
        let tensor = decoded(json, lexer.string()?);
        lexer.expect(b':', Expected::Colon)?;
        let shard = decoded(json, lexer.string()?);
        pairs.push((tensor, shard));
        if lexer.eat(b'}') {
            return Ok(pairs);
        }
        lexer.expect(b',', Expected::CommaOrObjectEnd)?;
    }
}
