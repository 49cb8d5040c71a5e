//! With the `std` feature: a sharded checkpoint's index checked against the
//! headers of its shards.
//!
//! The kinds of finding are one table ([`IndexProblem::TABLE`], declared
//! with the enum by `index_problems!` below): per kind its name, its fields
//! and its message template. `cargo xtask gen` writes the table for the npm
//! package (`wasm/js/generated/shard-findings.js`), whose `checkShards`
//! walks the same rules in JavaScript over it. (The package cannot call this
//! check through wasm: the reader `.wasm` is within a few hundred bytes of
//! its 40,000-byte budget.) A test runs the CLI's `verify` and `checkShards`
//! over thousands of generated models and compares their findings.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;
use std::string::{String, ToString};
use std::vec;
use std::vec::Vec;

use crate::file::Header;
use crate::shards::index::ShardIndex;
use crate::table::Slot;

/// What a field of a finding is, which decides how its message shows it.
///
/// ```
/// use safetensors_nano::{FindingType, IndexProblem};
/// let info = IndexProblem::UnnamedShard { shard: 0 }.info();
/// assert_eq!(info.fields[0].ty, FindingType::Shard);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub enum FindingType {
    /// A tensor name; shown as a JSON string (`"a.weight"`).
    Tensor,
    /// A shard file name as the index writes it; shown as it is.
    File,
    /// A shard's position in the order the shards were given to the check;
    /// shown as that shard's file name.
    Shard,
    /// A tensor's position in its shard, in data-offset order; shown in decimal.
    Position,
    /// A number of bytes; shown in decimal.
    Bytes,
}

impl FindingType {
    /// The type's name in lower case, as the npm package's generated table
    /// spells it.
    ///
    /// ```
    /// assert_eq!(safetensors_nano::FindingType::Shard.name(), "shard");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            FindingType::Tensor => "tensor",
            FindingType::File => "file",
            FindingType::Shard => "shard",
            FindingType::Position => "position",
            FindingType::Bytes => "bytes",
        }
    }
}

/// One field of a kind of finding: its name and type.
///
/// ```
/// use safetensors_nano::{FindingType, IndexProblem};
/// let f = IndexProblem::TABLE[0].fields[0];
/// assert_eq!((f.name, f.ty), ("tensor", FindingType::Tensor));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub struct FindingField {
    /// The variant field's name (the JS finding's property).
    pub name: &'static str,
    /// What it is.
    pub ty: FindingType,
}

/// One row of the findings' table: a kind's name, fields and message
/// template.
///
/// ```
/// use safetensors_nano::IndexProblem;
/// let info = IndexProblem::TotalSize { stated: 1, actual: 2 }.info();
/// assert_eq!(info.name, "totalSize");
/// assert!(info.template.contains("{stated}"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub struct FindingInfo {
    /// The kind's name as JSON and JavaScript spell it (`"missingShard"`):
    /// the Rust variant's name with a lower-case first letter.
    pub name: &'static str,
    /// The variant's doc comment (for the generated declarations).
    pub doc: &'static str,
    /// The kind's fields, in the variant's order.
    pub fields: &'static [FindingField],
    /// The message, with `{name}` where the field `name` goes, shown as its
    /// [`FindingType`] says.
    pub template: &'static str,
}

/// The value of one field of a finding ([`IndexProblem::values`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub enum FindingValue<'a> {
    /// A tensor or file name.
    Text(&'a str),
    /// A position or a number of bytes.
    Number(u64),
}

impl<'a> From<&'a String> for FindingValue<'a> {
    fn from(s: &'a String) -> Self {
        FindingValue::Text(s)
    }
}

impl From<&usize> for FindingValue<'_> {
    fn from(n: &usize) -> Self {
        FindingValue::Number(u64::try_from(*n).unwrap_or(u64::MAX))
    }
}

impl From<&u64> for FindingValue<'_> {
    fn from(n: &u64) -> Self {
        FindingValue::Number(*n)
    }
}

/// The Rust type of a field of each [`FindingType`].
macro_rules! finding_type {
    (Tensor) => {
        String
    };
    (File) => {
        String
    };
    (Shard) => {
        usize
    };
    (Position) => {
        usize
    };
    (Bytes) => {
        u64
    };
}

/// Declares [`IndexProblem`] and [`IndexProblem::TABLE`] from one list: per
/// kind its doc, its JS name, its fields (docs, names, [`FindingType`]s) and
/// its message template.
macro_rules! index_problems {
    ($(
        $(#[doc = $doc:literal])*
        $kind:ident $name:literal {
            $($(#[doc = $fdoc:literal])* $field:ident: $fty:ident),* $(,)?
        } => $template:literal;
    )*) => {
        /// A disagreement between an index and its shards, found by
        /// [`IndexCheck`]. `shard` and `first` are positions in the order
        /// the shards were given to the check.
        ///
        /// ```
        /// use safetensors_nano::IndexProblem;
        /// let p = IndexProblem::Duplicate { tensor: "a".into(), shard: 1, at: 0, first: 0 };
        /// assert_eq!(p.message(&["1.st", "2.st"]).to_string(), r#"tensor "a" is in both 1.st and 2.st"#);
        /// ```
        #[derive(Debug, Clone, PartialEq, Eq)]
        #[cfg_attr(docsrs, doc(cfg(feature = "std")))]
        pub enum IndexProblem {
            $(
                $(#[doc = $doc])*
                $kind { $($(#[doc = $fdoc])* $field: finding_type!($fty),)* },
            )*
        }

        /// Each kind's row, by the variant's name.
        #[allow(non_upper_case_globals)]
        mod row {
            use super::{FindingField, FindingInfo, FindingType};
            $(
                pub(super) const $kind: FindingInfo = FindingInfo {
                    name: $name,
                    doc: concat!($($doc, "\n",)*),
                    fields: &[$(FindingField { name: stringify!($field), ty: FindingType::$fty },)*],
                    template: $template,
                };
            )*
        }

        impl IndexProblem {
            /// The kinds of finding, in the order [`IndexCheck::finish`]
            /// reports them.
            ///
            /// ```
            /// use safetensors_nano::IndexProblem;
            /// let names: Vec<_> = IndexProblem::TABLE.iter().map(|k| k.name).collect();
            /// assert_eq!(names[..2], ["missing", "misplaced"]);
            /// ```
            pub const TABLE: &'static [FindingInfo] = &[$(row::$kind,)*];

            /// This finding's row of [`IndexProblem::TABLE`].
            ///
            /// ```
            /// use safetensors_nano::IndexProblem;
            /// assert_eq!(IndexProblem::MissingShard { file: "2.st".into() }.info().name, "missingShard");
            /// ```
            pub const fn info(&self) -> &'static FindingInfo {
                match self {
                    $(IndexProblem::$kind { .. } => &row::$kind,)*
                }
            }

            /// The values of the fields, in [`FindingInfo::fields`] order.
            ///
            /// ```
            /// use safetensors_nano::{FindingValue, IndexProblem};
            /// let p = IndexProblem::UnnamedShard { shard: 3 };
            /// assert_eq!(p.values(), [FindingValue::Number(3)]);
            /// ```
            pub fn values(&self) -> Vec<FindingValue<'_>> {
                match self {
                    $(IndexProblem::$kind { $($field),* } => vec![$(FindingValue::from($field)),*],)*
                }
            }
        }
    };
}

index_problems! {
    /// The index puts `tensor` in `file`, whose header was read, and no
    /// shard holds it.
    Missing "missing" {
        /// The tensor.
        tensor: Tensor,
        /// The shard file the index names for it.
        file: File,
    } => "tensor {tensor} is indexed in {file}, but no shard holds it";
    /// The index puts `tensor` in `file`, whose header was read, and its
    /// first occurrence (in shard order) is in another shard.
    Misplaced "misplaced" {
        /// The tensor.
        tensor: Tensor,
        /// The shard file the index names for it.
        file: File,
        /// The shard that holds it first.
        shard: Shard,
        /// Its position there.
        at: Position,
    } => "tensor {tensor} is indexed in {file}, but it is in {shard}";
    /// `tensor` is in `shard` again, after `first`.
    Duplicate "duplicate" {
        /// The tensor.
        tensor: Tensor,
        /// The shard that holds it again.
        shard: Shard,
        /// Its position there.
        at: Position,
        /// The shard that holds it first.
        first: Shard,
    } => "tensor {tensor} is in both {first} and {shard}";
    /// `tensor` is in `shard` and not in the index.
    Unlisted "unlisted" {
        /// The tensor.
        tensor: Tensor,
        /// The shard that holds it.
        shard: Shard,
        /// Its position there.
        at: Position,
    } => "tensor {tensor} in {shard} is not in the index";
    /// The index names `file`, which is not among the shards given.
    MissingShard "missingShard" {
        /// The shard file, as the index names it.
        file: File,
    } => "shard {file} is named by the index but missing";
    /// A shard given that the index does not name.
    UnnamedShard "unnamedShard" {
        /// The shard.
        shard: Shard,
    } => "shard {shard} is not named by the index";
    /// `metadata.total_size` is not the bytes of the shards' data (judged
    /// only when every shard the index names was read).
    TotalSize "totalSize" {
        /// What the index states.
        stated: Bytes,
        /// The bytes of the data of the shards the index names.
        actual: Bytes,
    } => "index states total_size {stated}, but the shards' tensors hold {actual} bytes";
}

impl IndexProblem {
    /// The finding's message, shards named by `shards` (their file names,
    /// in the order they were given to the check).
    ///
    /// ```
    /// use safetensors_nano::IndexProblem;
    /// let p = IndexProblem::Unlisted { tensor: "x\n".into(), shard: 0, at: 2 };
    /// assert_eq!(p.message(&["extra.st"]).to_string(), r#"tensor "x\n" in extra.st is not in the index"#);
    /// ```
    pub fn message<'a, S: AsRef<str>>(&'a self, shards: &'a [S]) -> ProblemMessage<'a, S> {
        ProblemMessage {
            problem: self,
            shards,
        }
    }
}

/// A finding's message ([`IndexProblem::message`]), rendered by `Display`
/// from its template.
#[derive(Debug)]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub struct ProblemMessage<'a, S> {
    problem: &'a IndexProblem,
    shards: &'a [S],
}

impl<S: AsRef<str>> fmt::Display for ProblemMessage<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let info = self.problem.info();
        let values = self.problem.values();
        let mut rest = info.template;
        while let Some((text, after)) = rest.split_once('{') {
            f.write_str(text)?;
            let (name, after) = after.split_once('}').unwrap_or((after, ""));
            rest = after;
            // (A test checks that every template names its own fields.)
            let Some((field, value)) = info
                .fields
                .iter()
                .zip(&values)
                .find(|(field, _)| field.name == name)
            else {
                continue;
            };
            match (field.ty, *value) {
                (FindingType::Tensor, FindingValue::Text(t)) => json_string(f, t)?,
                (FindingType::Shard, FindingValue::Number(n)) => {
                    let shard = usize::try_from(n).ok().and_then(|i| self.shards.get(i));
                    match shard {
                        Some(name) => f.write_str(name.as_ref())?,
                        None => write!(f, "#{n}")?,
                    }
                }
                (_, FindingValue::Text(t)) => f.write_str(t)?,
                (_, FindingValue::Number(n)) => write!(f, "{n}")?,
            }
        }
        f.write_str(rest)
    }
}

/// `s` as a JSON string, escaped as serde_json and `JSON.stringify` do.
fn json_string(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\u{8}' => f.write_str("\\b")?,
            '\u{c}' => f.write_str("\\f")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if u32::from(c) < 0x20 => write!(f, "\\u{:04x}", u32::from(c))?,
            c => fmt::Write::write_char(f, c)?,
        }
    }
    f.write_str("\"")
}

impl ShardIndex {
    /// Starts checking the index against its shards: give each shard to
    /// [`IndexCheck::shard`] (or [`IndexCheck::unread`]), then
    /// [`IndexCheck::finish`].
    ///
    /// ```
    /// use safetensors_nano::{IndexProblem, SafeTensors, ShardIndex, Table};
    /// let index = ShardIndex::parse(br#"{"metadata": {"total_size": 1}, "weight_map": {"a": "1.st", "b": "1.st"}}"#)?;
    /// let bytes = safetensors_nano::write::serialize_to_vec(
    ///     &mut [safetensors_nano::write::Tensor::new("a", safetensors_nano::Dtype::U8, &[1], &[7])], None)?;
    /// let st = SafeTensors::parse(&bytes, Table::<4>::new())?;
    /// let mut check = index.check();
    /// check.shard("1.st", st.header());
    /// assert_eq!(check.finish(), [IndexProblem::Missing { tensor: "b".into(), file: "1.st".into() }]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check(&self) -> IndexCheck<'_> {
        IndexCheck {
            index: self,
            shards: Vec::new(),
            first: HashMap::new(),
            in_shards: Vec::new(),
        }
    }
}

/// An index checked against its shards, one shard at a time
/// ([`ShardIndex::check`]); memory grows with the number of tensors only.
#[derive(Debug)]
#[cfg_attr(docsrs, doc(cfg(feature = "std")))]
pub struct IndexCheck<'i> {
    index: &'i ShardIndex,
    /// The shards given, in order: the file name, and the bytes of its
    /// data when its header was read.
    shards: Vec<(String, Option<u64>)>,
    /// Each tensor's first occurrence: shard and position.
    first: HashMap<String, (usize, usize)>,
    /// `Duplicate` and `Unlisted`, in shard order.
    in_shards: Vec<IndexProblem>,
}

impl IndexCheck<'_> {
    /// Records the shard file `file` (as the index would name it), whose
    /// header is `header` (of a file whose length was checked).
    ///
    /// ```
    /// use safetensors_nano::{SafeTensors, ShardIndex, Table};
    /// let index = ShardIndex::parse(br#"{"weight_map": {}}"#)?;
    /// let bytes = safetensors_nano::write::serialize_to_vec(
    ///     &mut [safetensors_nano::write::Tensor::new("x", safetensors_nano::Dtype::U8, &[1], &[7])], None)?;
    /// let st = SafeTensors::parse(&bytes, Table::<4>::new())?;
    /// let mut check = index.check();
    /// check.shard("extra.st", st.header());
    /// let found = check.finish();
    /// assert_eq!(found[0].message(&["extra.st"]).to_string(), r#"tensor "x" in extra.st is not in the index"#);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn shard<S: AsRef<[Slot]>>(&mut self, file: &str, header: &Header<'_, S>) {
        let shard = self.shards.len();
        self.shards
            .push((file.to_string(), Some(header.data_len())));
        for (at, info) in header.iter().enumerate() {
            let tensor = info.name().to_string();
            let listed = self.index.shard_of(&tensor).is_some();
            match self.first.get(&tensor) {
                Some(&(first, _)) => self.in_shards.push(IndexProblem::Duplicate {
                    tensor: tensor.clone(),
                    shard,
                    at,
                    first,
                }),
                None => {
                    self.first.insert(tensor.clone(), (shard, at));
                }
            }
            if !listed {
                self.in_shards
                    .push(IndexProblem::Unlisted { tensor, shard, at });
            }
        }
    }

    /// Records the shard file `file`, present but its header not read (it
    /// is not a valid file): only its name is compared with the index.
    ///
    /// ```
    /// use safetensors_nano::ShardIndex;
    /// let index = ShardIndex::parse(br#"{"metadata": {"total_size": 9}, "weight_map": {"a": "1.st"}}"#)?;
    /// let mut check = index.check();
    /// check.unread("1.st");
    /// assert!(check.finish().is_empty());
    /// # Ok::<(), safetensors_nano::IndexError>(())
    /// ```
    pub fn unread(&mut self, file: &str) {
        self.shards.push((file.to_string(), None));
    }

    /// The findings: `Missing` and `Misplaced` by tensor name, then
    /// `Duplicate` and `Unlisted` in shard order (each shard in data-offset
    /// order), then `MissingShard` by file name, `UnnamedShard` in shard
    /// order, and `TotalSize`. Empty when the index and the shards agree.
    ///
    /// ```
    /// use safetensors_nano::{IndexProblem, ShardIndex};
    /// let index = ShardIndex::parse(br#"{"metadata": {"total_size": 0}, "weight_map": {"a": "1.st"}}"#)?;
    /// assert_eq!(index.check().finish(), [IndexProblem::MissingShard { file: "1.st".into() }]);
    /// # Ok::<(), safetensors_nano::IndexError>(())
    /// ```
    pub fn finish(self) -> Vec<IndexProblem> {
        let IndexCheck {
            index,
            shards,
            first,
            in_shards,
        } = self;
        // Each shard's position by name (of two with one name, the later).
        let position: HashMap<&str, usize> = shards
            .iter()
            .enumerate()
            .map(|(i, (name, _))| (name.as_str(), i))
            .collect();
        let read = |s: usize| shards.get(s).and_then(|(_, bytes)| *bytes);
        let mut problems = Vec::new();
        for (tensor, file) in index.weight_map() {
            let Some(&s) = position.get(file) else {
                continue;
            };
            if read(s).is_none() {
                continue;
            }
            match first.get(tensor) {
                None => problems.push(IndexProblem::Missing {
                    tensor: tensor.to_string(),
                    file: file.to_string(),
                }),
                Some(&(seen, at)) if seen != s => problems.push(IndexProblem::Misplaced {
                    tensor: tensor.to_string(),
                    file: file.to_string(),
                    shard: seen,
                    at,
                }),
                Some(_) => {}
            }
        }
        problems.extend(in_shards);
        let named = index.shards();
        let missing: BTreeSet<&str> = named
            .iter()
            .copied()
            .filter(|f| !position.contains_key(f))
            .collect();
        problems.extend(missing.iter().map(|f| IndexProblem::MissingShard {
            file: f.to_string(),
        }));
        let named_set: HashSet<&str> = named.iter().copied().collect();
        for (shard, (name, _)) in shards.iter().enumerate() {
            if !named_set.contains(name.as_str()) {
                problems.push(IndexProblem::UnnamedShard { shard });
            }
        }
        // Judged only when every shard the index names was read.
        let bytes: Option<u64> = named
            .iter()
            .map(|f| position.get(f).and_then(|&s| read(s)))
            .try_fold(0u64, |sum, b| b.map(|b| sum.saturating_add(b)));
        if let (Some(stated), Some(actual)) = (index.total_size(), bytes) {
            if stated != actual {
                problems.push(IndexProblem::TotalSize { stated, actual });
            }
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every template names only its kind's fields, and every kind's name
    /// is its variant's with a lower-case first letter.
    #[test]
    fn templates_name_their_fields() {
        for info in IndexProblem::TABLE {
            let mut rest = info.template;
            while let Some((_, after)) = rest.split_once('{') {
                let (name, after) = after.split_once('}').unwrap_or((after, ""));
                assert!(
                    info.fields.iter().any(|f| f.name == name),
                    "{}: {{{name}}}",
                    info.name
                );
                rest = after;
            }
            assert!(info.name.starts_with(|c: char| c.is_ascii_lowercase()));
        }
    }
}
