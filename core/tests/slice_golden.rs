//! The core's slice layout for the npm package's tests: `slice_ranges` on
//! pseudo-random specs over several dtypes (F4 and F6 included), written to
//! `tests/js/lib/slice-ranges.json`. The package plans slices in JavaScript
//! (`wasm/js/read/tensor-slice.js`) and its test reads this file, so the two cannot
//! drift apart. The specs stay where the core and numpy agree (no negative
//! numbers, no bound past the end, no reversed range: the package follows
//! numpy there, the core refuses). `BLESS=1 cargo test -p safetensors-nano
//! --test slice_golden` rewrites the file after a change.

use safetensors_nano::{Dtype, SafeTensors, SliceIndex, Slot};
use serde_json::{json, Value};

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// A spec of at most `rank + 1` entries (one more: SliceTooManyIndices)
/// with bounds inside the dimensions, steps 0 to 3 and, now and then, an
/// index one past the end.
fn spec(rng: &mut Rng, shape: &[u64]) -> Vec<SliceIndex> {
    let n = if rng.below(20) == 0 {
        shape.len() + 1
    } else {
        rng.below(shape.len() as u64 + 1) as usize
    };
    (0..n)
        .map(|d| {
            let size = shape.get(d).copied().unwrap_or(1);
            match rng.below(4) {
                0 => SliceIndex::Full,
                1 => SliceIndex::Index(rng.below(size + 1)),
                _ => {
                    let end = rng.below(size + 1);
                    let start = rng.below(end + 1);
                    let step = if rng.below(12) == 0 {
                        0
                    } else {
                        1 + rng.below(3)
                    };
                    let end = if rng.below(4) == 0 { None } else { Some(end) };
                    SliceIndex::Range { start, end, step }
                }
            }
        })
        .collect()
}

fn spec_json(indices: &[SliceIndex]) -> Value {
    indices
        .iter()
        .map(|i| match *i {
            SliceIndex::Full => Value::Null,
            SliceIndex::Index(i) => json!(i),
            SliceIndex::Range { start, end, step } => json!([start, end, step]),
        })
        .collect()
}

fn case(dtype: Dtype, shape: &[u64], indices: &[SliceIndex]) -> Value {
    let elements: u64 = shape.iter().product();
    let bytes = elements * u64::from(dtype.bits()) / 8;
    let header = format!(
        r#"{{"t":{{"dtype":"{}","shape":{:?},"data_offsets":[0,{bytes}]}}}}"#,
        dtype.name(),
        shape
    );
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(header.as_bytes());
    file.resize(file.len() + bytes as usize, 0);
    let st = SafeTensors::parse(&file, vec![Slot::EMPTY; 1]).expect("test file is valid");
    let t = st.tensor("t").expect("tensor t");
    let mut out = json!({ "dtype": dtype.name(), "shape": shape, "spec": spec_json(indices) });
    match t.info().slice_ranges(indices) {
        Err(e) => out["error"] = json!(e.kind().name()),
        Ok(ranges) => {
            out["result_shape"] = json!(ranges.shape().collect::<Vec<_>>());
            out["run_bytes"] = json!(ranges.run_len());
            out["runs"] = json!(ranges.map(|(begin, _)| begin).collect::<Vec<_>>());
        }
    }
    out
}

#[test]
fn slice_ranges_golden_file_is_current() {
    let mut rng = Rng(0x5eed_511c);
    let shapes: [&[u64]; 8] = [
        &[],
        &[8],
        &[4, 6],
        &[3, 4, 8],
        &[2, 3, 2, 4],
        &[1, 12],
        &[4, 1, 8],
        &[0, 4],
    ];
    let mut cases = Vec::new();
    for name in ["U8", "I16", "F32", "BF16", "F64", "F4", "F6_E2M3"] {
        let dtype = Dtype::from_name(name.as_bytes()).expect("a dtype name");
        // (A sub-byte tensor holds whole bytes: a lone F4 or F6 cannot be stored.)
        for shape in shapes
            .into_iter()
            .filter(|s| s.iter().product::<u64>() * u64::from(dtype.bits()) % 8 == 0)
        {
            for _ in 0..12 {
                cases.push(case(dtype, shape, &spec(&mut rng, shape)).to_string());
            }
        }
    }
    let text = format!("{{\"cases\":[\n{}\n]}}\n", cases.join(",\n"));
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/js/lib/slice-ranges.json");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, &text).expect("write the golden file");
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        golden == text,
        "{} is stale: rerun with BLESS=1",
        path.display()
    );
}
