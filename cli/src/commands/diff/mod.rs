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

use crate::file::{open, Buffers, Failure};
use crate::source::{Input, Source};

/// Arguments of `diff`.
#[derive(clap::Args, Debug)]
pub struct Diff {
    /// The first file (the base): a path, an http(s):// URL or an
    /// `hf://org/name[@revision][/file]` Hub name.
    pub a: PathBuf,
    /// The second file (e.g. the fine-tune), as the first.
    pub b: PathBuf,
    /// Also compare the values of the tensors both files hold with the same
    /// shape: max |b - a|, ||b - a|| / ||a|| (relative L2 change) and the
    /// count of changed elements. Integers are compared exactly. A change
    /// to or from inf or NaN makes both differences infinite (inf in the
    /// table, null in --json); two NaNs are equal.
    #[arg(long)]
    pub values: bool,
    /// Print one JSON document instead of the table.
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

/// The report, and whether the files differ (see [`Diff::exit_code`]).
fn diff_files(diff: &Diff, quiet: bool) -> Result<(String, bool), Failure> {
    fn named(path: &std::path::Path) -> impl Fn(Failure) -> Failure + '_ {
        move |mut f| {
            f.message = format!("{}: {}", path.display(), f.message);
            f
        }
    }
    /// A file to compare: an index is refused (its shards are several files).
    fn single(path: &std::path::Path) -> Result<Source, Failure> {
        let source = Source::from_arg(path)?;
        if source.is_index() {
            return Err(Failure::other(
                "an index of shards: diff compares two safetensors files; name a shard, or merge the shards first".into(),
            ));
        }
        Ok(source)
    }
    let source_a = single(&diff.a).map_err(named(&diff.a))?;
    let source_b = single(&diff.b).map_err(named(&diff.b))?;
    let (mut bufs_a, mut bufs_b) = (Buffers::default(), Buffers::default());
    let (mut fa, ha) = open(&source_a, &mut bufs_a).map_err(named(&diff.a))?;
    let (mut fb, hb) = open(&source_b, &mut bufs_b).map_err(named(&diff.b))?;
    let a: BTreeMap<String, TensorInfo<'_>> =
        ha.iter().map(|t| (t.name().to_string(), t)).collect();
    let b: BTreeMap<String, TensorInfo<'_>> =
        hb.iter().map(|t| (t.name().to_string(), t)).collect();
    let added: Vec<&TensorInfo<'_>> = b
        .iter()
        .filter(|(n, _)| !a.contains_key(*n))
        .map(|(_, t)| t)
        .collect();
    let removed: Vec<&TensorInfo<'_>> = a
        .iter()
        .filter(|(n, _)| !b.contains_key(*n))
        .map(|(_, t)| t)
        .collect();
    let both: Vec<(&TensorInfo<'_>, &TensorInfo<'_>)> = a
        .iter()
        .filter_map(|(n, ta)| b.get(n).map(|tb| (ta, tb)))
        .collect();
    let changed: Vec<_> = both
        .iter()
        .filter(|(ta, tb)| ta.dtype() != tb.dtype() || !ta.shape().iter().eq(tb.shape().iter()))
        .collect();
    let mut values = Vec::new();
    if diff.values {
        let comparable: Vec<_> = both
            .iter()
            .filter(|(ta, tb)| ta.shape().iter().eq(tb.shape().iter()))
            .collect();
        let bar = crate::progress::bytes(
            comparable.iter().map(|(ta, _)| ta.byte_len()).sum(),
            quiet,
            "comparing",
        );
        for (ta, tb) in comparable {
            let result = compare(
                (&mut fa, ha.data_start(), ta),
                (&mut fb, hb.data_start(), tb),
                &bar,
            );
            values.push((ta.name().to_string(), result));
        }
        bar.finish_and_clear();
    }
    let same = both.len() - changed.len();
    let differ = !(added.is_empty() && removed.is_empty() && changed.is_empty())
        || values
            .iter()
            .any(|(_, r)| r.as_ref().is_ok_and(|s| s.changed > 0));
    if diff.json {
        let values: Vec<Value> = values
            .iter()
            .map(|(name, r)| match r {
                Ok(s) => json!({"name": name, "elements": s.elements, "changed": s.changed, "max_abs_diff": s.max_abs(), "rel_l2": s.rel_l2()}),
                Err(e) => json!({"name": name, "error": e}),
            })
            .collect();
        let doc = json!({
            "ok": true,
            "added": added.iter().map(|t| describe(t)).collect::<Vec<_>>(),
            "removed": removed.iter().map(|t| describe(t)).collect::<Vec<_>>(),
            "changed": changed.iter().map(|(ta, tb)| json!({"name": ta.name().to_string(), "a": describe(ta), "b": describe(tb)})).collect::<Vec<_>>(),
            "same": same,
            "values": if diff.values { Value::Array(values) } else { Value::Null },
        });
        return Ok((format!("{doc}\n"), differ));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} -> {}: {} added, {} removed, {} changed, {} same dtype and shape",
        diff.a.display(),
        diff.b.display(),
        added.len(),
        removed.len(),
        changed.len(),
        same
    );
    for t in &added {
        let _ = writeln!(out, "  + {}  {} {}", t.name(), t.dtype(), shape_text(t));
    }
    for t in &removed {
        let _ = writeln!(out, "  - {}  {} {}", t.name(), t.dtype(), shape_text(t));
    }
    for (ta, tb) in &changed {
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
        for (name, r) in &values {
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
    Ok((out, differ))
}
