//! `diff A B [--values] [--json]`: tensors added, removed, and changed in
//! dtype or shape; with `--values`, per tensor the largest absolute
//! difference, the relative L2 change and the count of changed elements,
//! streamed through fixed buffers (both files may exceed RAM) and decoded by
//! the core's exact decoders.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

use safetensors_nano::decode::decode_f32_into;
use safetensors_nano::{Dtype, TensorInfo};
use serde_json::{json, Value};

use crate::file::Failure;
use crate::model::{buffers, files_of, open_all, OpenFile};
use crate::source::Input;

/// Arguments of `diff`.
#[derive(clap::Args, Debug)]
pub struct Diff {
    /// The first model (the base): a safetensors file or a sharded
    /// checkpoint's `*.index.json` (its tensors across the shards, by
    /// name): a path, an http(s):// URL or an
    /// `hf://org/name[@revision][/file]` Hub name.
    pub a: PathBuf,
    /// The second model (e.g. the fine-tune), as the first.
    pub b: PathBuf,
    /// Also compare the values of the tensors both files hold with the same
    /// shape: max |b - a|, ||b - a|| / ||a|| (relative L2 change) and the
    /// count of changed elements. Integers are compared exactly. A change
    /// to or from inf or NaN makes both differences infinite (inf in the
    /// table, null in --json); two NaNs are equal.
    #[arg(long)]
    pub values: bool,
    /// Print one JSON document on one line instead of the table (JSON
    /// Lines, as every --json): {"ok":true,"added","removed","changed",
    /// "same","values"}, or {"ok":false,"error":{…}}.
    #[arg(long)]
    pub json: bool,
    /// Exit 1 when the files differ and 0 when they do not, as `git diff
    /// --exit-code` and diff(1); a problem with a file then exits 2. Without
    /// --values only names, dtypes and shapes are compared; with it, also
    /// the values (tensors whose values cannot be compared, C64, do not count).
    #[arg(long)]
    pub exit_code: bool,
}

/// The elements compared per step.
const STEP: usize = 1 << 16;

/// What `--values` found for one tensor.
#[derive(Debug, Default)]
struct Stats {
    elements: u64,
    changed: u64,
    max_abs: f64,
    diff_sq: f64,
    base_sq: f64,
}

/// One element as compared: integers (and BOOL) exactly, floats as f64.
#[derive(Debug, Clone, Copy)]
enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    fn to_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

impl Stats {
    fn add(&mut self, a: &[Num], b: &[Num]) {
        for (&x, &y) in a.iter().zip(b) {
            self.elements += 1;
            let d = match (x, y) {
                // Integers of 64 bits are not all exact in f64: compared and
                // subtracted as they are.
                (Num::Int(i), Num::Int(j)) => {
                    if i != j {
                        self.changed += 1;
                    }
                    (j - i).unsigned_abs() as f64
                }
                _ => {
                    let (x, y) = (x.to_f64(), y.to_f64());
                    // Equal values are unchanged (0 and -0 included), and so
                    // are two NaNs.
                    if x == y || (x.is_nan() && y.is_nan()) {
                        0.0
                    } else {
                        self.changed += 1;
                        // A change to or from inf or NaN is an infinite
                        // difference (see --values).
                        if x.is_finite() && y.is_finite() {
                            (y - x).abs()
                        } else {
                            f64::INFINITY
                        }
                    }
                }
            };
            self.max_abs = self.max_abs.max(d);
            self.diff_sq += d * d;
            let x = x.to_f64();
            if x.is_finite() {
                self.base_sq += x * x;
            }
        }
    }

    /// ||b - a|| / ||a||; `None` (infinite) when a change involves inf or
    /// NaN, or when `a` is all zeros and `b` is not.
    fn rel_l2(&self) -> Option<f64> {
        if self.diff_sq == 0.0 {
            Some(0.0)
        } else if self.base_sq == 0.0 || self.diff_sq.is_infinite() {
            None
        } else {
            Some((self.diff_sq / self.base_sq).sqrt())
        }
    }

    /// The largest |b - a|; `None` when infinite (JSON has no infinity).
    fn max_abs(&self) -> Option<f64> {
        Some(self.max_abs).filter(|m| m.is_finite())
    }
}

/// Decodes `bytes` of `dtype`: floats through the core's decoder (exact in
/// f32; F64 as it is), integers and BOOL exactly.
fn decode(
    dtype: Dtype,
    bytes: &[u8],
    f32s: &mut Vec<f32>,
    out: &mut Vec<Num>,
) -> Result<(), String> {
    out.clear();
    macro_rules! ints {
        ($t:ty) => {
            out.extend(
                bytes
                    .chunks_exact(size_of::<$t>())
                    .filter_map(|c| c.try_into().ok())
                    .map(|c| Num::Int(<$t>::from_le_bytes(c).into())),
            )
        };
    }
    match dtype {
        Dtype::F64 => out.extend(
            bytes
                .chunks_exact(8)
                .filter_map(|c| c.try_into().ok())
                .map(|c| Num::Float(f64::from_le_bytes(c))),
        ),
        Dtype::BOOL | Dtype::U8 => out.extend(bytes.iter().map(|&b| Num::Int(b.into()))),
        Dtype::I8 => out.extend(bytes.iter().map(|&b| Num::Int((b as i8).into()))),
        Dtype::I16 => ints!(i16),
        Dtype::U16 => ints!(u16),
        Dtype::I32 => ints!(i32),
        Dtype::U32 => ints!(u32),
        Dtype::I64 => ints!(i64),
        Dtype::U64 => ints!(u64),
        Dtype::C64 => return Err("C64 values are not compared".into()),
        _ => {
            let n = (bytes.len() as u64 * 8 / u64::from(dtype.bits())) as usize;
            f32s.resize(n, 0.0);
            decode_f32_into(dtype, bytes, f32s).map_err(|e| e.to_string())?;
            out.extend(f32s.iter().map(|&v| Num::Float(v.into())));
        }
    }
    Ok(())
}

/// Streams two tensors of the same element count and compares them.
fn compare(
    (fa, start_a, ta): (&mut Input, u64, &TensorInfo<'_>),
    (fb, start_b, tb): (&mut Input, u64, &TensorInfo<'_>),
    bar: &indicatif::ProgressBar,
) -> Result<Stats, String> {
    let mut stats = Stats::default();
    let read = |e: std::io::Error| format!("cannot read: {e}");
    fa.seek(SeekFrom::Start(start_a + ta.data_offsets().0))
        .map_err(read)?;
    fb.seek(SeekFrom::Start(start_b + tb.data_offsets().0))
        .map_err(read)?;
    let (bits_a, bits_b) = (u64::from(ta.dtype().bits()), u64::from(tb.dtype().bits()));
    let (mut raw_a, mut raw_b, mut f32s) = (Vec::new(), Vec::new(), Vec::new());
    let (mut va, mut vb) = (Vec::new(), Vec::new());
    let mut left = ta.element_count();
    while left > 0 {
        // STEP is a multiple of 8: whole bytes for sub-byte dtypes.
        let n = left.min(STEP as u64);
        raw_a.resize((n * bits_a).div_ceil(8) as usize, 0);
        raw_b.resize((n * bits_b).div_ceil(8) as usize, 0);
        fa.read_exact(&mut raw_a).map_err(read)?;
        fb.read_exact(&mut raw_b).map_err(read)?;
        decode(ta.dtype(), &raw_a, &mut f32s, &mut va)?;
        decode(tb.dtype(), &raw_b, &mut f32s, &mut vb)?;
        va.truncate(n as usize);
        vb.truncate(n as usize);
        stats.add(&va, &vb);
        bar.inc(raw_a.len() as u64);
        left -= n;
    }
    Ok(stats)
}

fn describe(t: &TensorInfo<'_>) -> Value {
    json!({"name": t.name().to_string(), "dtype": t.dtype().name(), "shape": t.shape().iter().collect::<Vec<_>>()})
}

fn shape_text(t: &TensorInfo<'_>) -> String {
    format!("{:?}", t.shape().iter().collect::<Vec<_>>())
}

/// Runs `diff` and gives its exit status: 1 on an error, and with
/// `--exit-code` 1 when the files differ and 2 on an error. Without
/// `--exit-code` differences are not errors.
pub fn run(diff: &Diff, quiet: bool) -> u8 {
    match diff_files(diff, quiet) {
        Ok((text, differ)) => {
            crate::output::emit(&text);
            u8::from(diff.exit_code && differ)
        }
        Err(f) => {
            if diff.json {
                crate::output::emit_json(&crate::output::error_json(&f));
            } else {
                eprintln!("safetensors-nano: {}", f.message);
            }
            if diff.exit_code {
                2
            } else {
                1
            }
        }
    }
}

/// What `diff` found: tensors by name in one model or the other or both.
struct Found<'h> {
    added: Vec<TensorInfo<'h>>,
    removed: Vec<TensorInfo<'h>>,
    /// In both with the same dtype and shape: `(a, b)`.
    same: usize,
    /// In both with another dtype or shape: `(a, b)`.
    changed: Vec<(TensorInfo<'h>, TensorInfo<'h>)>,
    /// With `--values`, per tensor of the same shape in both.
    values: Vec<(String, Result<Stats, String>)>,
}

impl Found<'_> {
    fn differ(&self) -> bool {
        !(self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty())
            || self
                .values
                .iter()
                .any(|(_, r)| r.as_ref().is_ok_and(|s| s.changed > 0))
    }
}

/// A tensor with the index of its file in the model.
type Located<'h> = (usize, TensorInfo<'h>);

/// A tensor in both models: in A, in B.
type Pair<'r, 'h> = (&'r Located<'h>, &'r Located<'h>);

/// Every tensor of a model by name, with the index of its file.
fn by_name<'h>(files: &[OpenFile<'h>]) -> BTreeMap<String, Located<'h>> {
    files
        .iter()
        .enumerate()
        .flat_map(|(i, (_, header))| header.iter().map(move |t| (t.name().to_string(), (i, t))))
        .collect()
}

/// The report, and whether the models differ (see [`Diff::exit_code`]).
fn diff_files(diff: &Diff, quiet: bool) -> Result<(String, bool), Failure> {
    let sources_a = files_of(&diff.a)?;
    let sources_b = files_of(&diff.b)?;
    let (mut bufs_a, mut bufs_b) = (buffers(sources_a.len()), buffers(sources_b.len()));
    let mut files_a = open_all(&sources_a, &mut bufs_a)?;
    let mut files_b = open_all(&sources_b, &mut bufs_b)?;
    let a = by_name(&files_a);
    let b = by_name(&files_b);
    let both: Vec<Pair<'_, '_>> = a
        .iter()
        .filter_map(|(n, ta)| b.get(n).map(|tb| (ta, tb)))
        .collect();
    let same_shape =
        |(_, ta): &Located<'_>, (_, tb): &Located<'_>| ta.shape().iter().eq(tb.shape().iter());
    let mut found = Found {
        added: b
            .iter()
            .filter(|(n, _)| !a.contains_key(*n))
            .map(|(_, t)| t.1)
            .collect(),
        removed: a
            .iter()
            .filter(|(n, _)| !b.contains_key(*n))
            .map(|(_, t)| t.1)
            .collect(),
        same: 0,
        changed: both
            .iter()
            .filter(|(ta, tb)| ta.1.dtype() != tb.1.dtype() || !same_shape(ta, tb))
            .map(|(ta, tb)| (ta.1, tb.1))
            .collect(),
        values: Vec::new(),
    };
    found.same = both.len() - found.changed.len();
    if diff.values {
        let comparable: Vec<_> = both.iter().filter(|(ta, tb)| same_shape(ta, tb)).collect();
        found.values = compare_all(&comparable, &mut files_a, &mut files_b, quiet);
    }
    let differ = found.differ();
    let report = if diff.json {
        format!("{}\n", json_report(&found, diff.values))
    } else {
        text_report(&found, diff)
    };
    Ok((report, differ))
}

/// Compares the values of each pair of tensors (same shape), streamed.
fn compare_all(
    pairs: &[&Pair<'_, '_>],
    files_a: &mut [OpenFile<'_>],
    files_b: &mut [OpenFile<'_>],
    quiet: bool,
) -> Vec<(String, Result<Stats, String>)> {
    let bar = crate::progress::bytes(
        pairs.iter().map(|(ta, _)| ta.1.byte_len()).sum(),
        quiet,
        "comparing",
    );
    let mut values = Vec::with_capacity(pairs.len());
    for ((ia, ta), (ib, tb)) in pairs.iter().map(|p| (p.0, p.1)) {
        let result = match (files_a.get_mut(*ia), files_b.get_mut(*ib)) {
            (Some((fa, ha)), Some((fb, hb))) => {
                compare((fa, ha.data_start(), ta), (fb, hb.data_start(), tb), &bar)
            }
            _ => Err("no such shard".to_owned()),
        };
        values.push((ta.name().to_string(), result));
    }
    bar.finish_and_clear();
    values
}

/// The `--json` document.
fn json_report(found: &Found<'_>, with_values: bool) -> Value {
    let values: Vec<Value> = found
        .values
        .iter()
        .map(|(name, r)| match r {
            Ok(s) => json!({"name": name, "elements": s.elements, "changed": s.changed, "max_abs_diff": s.max_abs(), "rel_l2": s.rel_l2()}),
            Err(e) => json!({"name": name, "error": e}),
        })
        .collect();
    json!({
        "ok": true,
        "added": found.added.iter().map(describe).collect::<Vec<_>>(),
        "removed": found.removed.iter().map(describe).collect::<Vec<_>>(),
        "changed": found.changed.iter().map(|(ta, tb)| json!({"name": ta.name().to_string(), "a": describe(ta), "b": describe(tb)})).collect::<Vec<_>>(),
        "same": found.same,
        "values": if with_values { Value::Array(values) } else { Value::Null },
    })
}

/// The text report: a summary line, the tensors added, removed and
/// changed, then with `--values` the table.
fn text_report(found: &Found<'_>, diff: &Diff) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} -> {}: {} added, {} removed, {} changed, {} same dtype and shape",
        diff.a.display(),
        diff.b.display(),
        found.added.len(),
        found.removed.len(),
        found.changed.len(),
        found.same
    );
    for t in &found.added {
        let _ = writeln!(out, "  + {}  {} {}", t.name(), t.dtype(), shape_text(t));
    }
    for t in &found.removed {
        let _ = writeln!(out, "  - {}  {} {}", t.name(), t.dtype(), shape_text(t));
    }
    for (ta, tb) in &found.changed {
        let _ = writeln!(
            out,
            "  ~ {}  {} {} -> {} {}",
            ta.name(),
            ta.dtype(),
            shape_text(ta),
            tb.dtype(),
            shape_text(tb)
        );
    }
    if diff.values {
        values_table(&mut out, &found.values);
    }
    out
}

/// The `--values` table, one row per tensor compared.
fn values_table(out: &mut String, values: &[(String, Result<Stats, String>)]) {
    let width = values
        .iter()
        .map(|(n, _)| n.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 60);
    let _ = writeln!(
        out,
        "  {:<width$}  {:>12}  {:>12}  {:>21}",
        "name", "max_abs_diff", "rel_l2", "changed"
    );
    for (name, r) in values {
        match r {
            Ok(s) => {
                let rel = s.rel_l2().map_or("inf".to_owned(), |r| format!("{r:.6e}"));
                let _ = writeln!(
                    out,
                    "  {name:<width$}  {:>12.6e}  {rel:>12}  {:>21}",
                    s.max_abs,
                    format!("{}/{}", s.changed, s.elements)
                );
            }
            Err(e) => {
                let _ = writeln!(out, "  {name:<width$}  {e}");
            }
        }
    }
}
