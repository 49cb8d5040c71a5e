//! Differential tests against the reference crate: random valid files made
//! by the reference writer, and random mutations of them. Verdicts must agree
//! except for the differences docs/format.md lists (D1 no-duplicates …); accepted files must read the same.

use proptest::prelude::*;
use safetensors_nano::{Dtype, Name, Parser, SafeTensors, Shape, Slot, Status, Visitor};
use safetensors_nano_test_support::files::parse;
use safetensors_nano_test_support::reference::{compare, dtype as reference_dtype, Agreement};

#[derive(Debug, Clone)]
struct Spec {
    name: String,
    dtype: Dtype,
    shape: Vec<usize>,
}

fn spec() -> impl Strategy<Value = Spec> {
    let name = prop_oneof![
        "[a-z.]{0,12}",
        "\\PC{0,6}",
        "[\"\\\\/\\u{0}-\\u{1f}\\u{7f}é😀a]{1,5}",
    ];
    let dtype = (0..Dtype::ALL.len()).prop_map(|i| Dtype::ALL[i]);
    let shape = prop::collection::vec(0usize..5, 0..4);
    (name, dtype, shape).prop_map(|(name, dtype, mut shape)| {
        // Sub-byte dtypes need a whole number of bytes.
        let n: usize = shape.iter().product();
        if dtype.byte_len(n as u64).is_none() {
            shape.push(8);
        }
        Spec { name, dtype, shape }
    })
}

fn specs() -> impl Strategy<Value = (Vec<Spec>, Option<(String, String)>)> {
    let meta = prop::option::of(("\\PC{0,8}", "\\PC{0,8}"));
    (prop::collection::vec(spec(), 0..6), meta).prop_map(|(mut specs, meta)| {
        specs.sort_by(|a, b| a.name.cmp(&b.name));
        specs.dedup_by(|a, b| a.name == b.name);
        specs.retain(|s| s.name != "__metadata__");
        (specs, meta)
    })
}

fn reference_file(specs: &[Spec], meta: &Option<(String, String)>, seed: u8) -> Vec<u8> {
    let buffers: Vec<Vec<u8>> = specs
        .iter()
        .map(|s| {
            let n = s
                .dtype
                .byte_len(s.shape.iter().product::<usize>() as u64)
                .unwrap() as usize;
            (0..n)
                .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
                .collect()
        })
        .collect();
    let views: Vec<(String, safetensors::tensor::TensorView)> = specs
        .iter()
        .zip(&buffers)
        .map(|(s, b)| {
            let v =
                safetensors::tensor::TensorView::new(reference_dtype(s.dtype), s.shape.clone(), b)
                    .unwrap();
            (s.name.clone(), v)
        })
        .collect();
    let info = meta.clone().map(|(k, v)| [(k, v)].into_iter().collect());
    safetensors::tensor::serialize(views, info).unwrap()
}

/// Both accept `bytes`: every tensor and the metadata must read the same.
fn assert_same_contents(bytes: &[u8]) {
    let theirs = safetensors::SafeTensors::deserialize(bytes).unwrap();
    let (_, their_meta) = safetensors::SafeTensors::read_metadata(bytes).unwrap();
    let ours = SafeTensors::parse(bytes, vec![Slot::EMPTY; 64]).unwrap();
    assert_eq!(ours.len(), theirs.len());
    for (name, view) in theirs.tensors() {
        let t = ours
            .tensor(&name)
            .unwrap_or_else(|| panic!("missing {name:?}"));
        assert_eq!(t.dtype().name(), format!("{:?}", view.dtype()));
        assert_eq!(
            t.shape().iter().map(|d| d as usize).collect::<Vec<_>>(),
            view.shape()
        );
        assert_eq!(t.data(), view.data());
    }
    let their_meta = their_meta.metadata().clone();
    match (ours.metadata(), their_meta) {
        (None, None) => {}
        (Some(m), Some(map)) => {
            assert_eq!(m.len(), map.len());
            for (k, v) in map {
                assert_eq!(m.get(&k).unwrap(), v.as_str());
            }
        }
        (a, b) => panic!("metadata differs: {a:?} vs {b:?}"),
    }
}

/// The same file with a space after every `:` and `,` of the header's JSON
/// (outside strings): no longer the byte-exact form the reference writes,
/// so our parser reads it the general way instead of by its fast path.
fn spaced(file: &[u8]) -> Vec<u8> {
    let n = u64::from_le_bytes(file[..8].try_into().unwrap()) as usize;
    let (json, data) = file[8..].split_at(n);
    let mut header = Vec::with_capacity(n * 2);
    let (mut in_string, mut escaped) = (false, false);
    for &b in json {
        header.push(b);
        match b {
            _ if escaped => escaped = false,
            b'\\' if in_string => escaped = true,
            b'"' => in_string = !in_string,
            b':' | b',' if !in_string => header.push(b' '),
            _ => {}
        }
    }
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&header);
    out.extend_from_slice(data);
    out
}

/// One tensor as the readings below compare it.
fn tensor_line(name: Name<'_>, dtype: Dtype, shape: Shape<'_>, offsets: (u64, u64)) -> String {
    let shape: Vec<u64> = shape.iter().collect();
    format!("{name} {dtype:?} {shape:?} {offsets:?}")
}

/// Everything our parser reports about a file, in data-offset order.
fn our_reading(bytes: &[u8]) -> Vec<String> {
    let file = SafeTensors::parse(bytes, vec![Slot::EMPTY; 64]).unwrap();
    let mut out: Vec<String> = file
        .iter()
        .map(|t| {
            let by_name = file.tensor(&t.name().to_string()).unwrap();
            assert_eq!(by_name.data_offsets(), t.data_offsets());
            tensor_line(t.name(), t.dtype(), t.shape(), t.data_offsets())
        })
        .collect();
    if let Some(m) = file.metadata() {
        out.extend(m.iter().map(|(k, v)| format!("meta {k}={v}")));
    }
    out
}

/// What a visitor is shown: tensors, then metadata pairs, each in header order.
#[derive(Default)]
struct Shown {
    tensors: Vec<String>,
    pairs: Vec<String>,
}

impl<'h> Visitor<'h> for Shown {
    fn tensor(&mut self, name: Name<'h>, dtype: Dtype, shape: Shape<'h>, offsets: (u64, u64)) {
        self.tensors.push(tensor_line(name, dtype, shape, offsets));
    }

    fn metadata(&mut self, key: Name<'h>, value: Name<'h>) {
        self.pairs.push(format!("{key}={value}"));
    }
}

/// A visitor is shown exactly what the parsed header holds, in header
/// order (when the parse succeeds).
fn assert_visitor_sees_the_header(bytes: &[u8]) {
    let mut shown = Shown::default();
    // (Through `dyn`: any visitor is accepted, sized or not.)
    let visitor: &mut dyn Visitor = &mut shown;
    let parsed = Parser::new().parse_header_with(bytes, vec![Slot::EMPTY; 64], visitor);
    let Ok(Status::Complete(header)) = parsed else {
        return;
    };
    let tensors: Vec<String> = header
        .iter_header_order()
        .map(|t| tensor_line(t.name(), t.dtype(), t.shape(), t.data_offsets()))
        .collect();
    let pairs: Vec<String> = header
        .metadata()
        .map(|m| m.iter().map(|(k, v)| format!("{k}={v}")).collect())
        .unwrap_or_default();
    assert_eq!(shown.tensors, tensors);
    assert_eq!(shown.pairs, pairs);
    // (In a valid header a backslash can only start an escape.)
    let json = header.json();
    assert_eq!(
        header.is_plain_ascii(),
        json.is_ascii() && !json.contains(&b'\\'),
        "{}",
        String::from_utf8_lossy(json)
    );
}

const JSON_BYTES: &[u8] = b"{}[],:\"\\0123456789-.eE ntfu \t\n\r\x00\x7f";

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    Replace(usize, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let pos = any::<usize>();
    let byte = prop_oneof![
        any::<u8>(),
        (0..JSON_BYTES.len()).prop_map(|i| JSON_BYTES[i])
    ];
    prop_oneof![
        (pos, any::<u8>()).prop_map(|(p, b)| Mutation::Flip(p, b)),
        (pos, byte.clone()).prop_map(|(p, b)| Mutation::Insert(p, b)),
        pos.prop_map(Mutation::Delete),
        (pos, byte).prop_map(|(p, b)| Mutation::Replace(p, b)),
    ]
}

/// Applies mutations inside the header and fixes the length prefix (most of
/// the time) so that they reach the JSON parser.
fn mutate(file: &[u8], mutations: &[Mutation], fix_len: bool) -> Vec<u8> {
    let n = u64::from_le_bytes(file[..8].try_into().unwrap()) as usize;
    let mut header = file[8..8 + n].to_vec();
    let data = &file[8 + n..];
    for m in mutations {
        let len = header.len().max(1);
        match *m {
            Mutation::Flip(p, b) => {
                if let Some(x) = header.get_mut(p % len) {
                    *x ^= b;
                }
            }
            Mutation::Insert(p, b) => header.insert(p % (header.len() + 1), b),
            Mutation::Delete(p) => {
                if !header.is_empty() {
                    header.remove(p % len);
                }
            }
            Mutation::Replace(p, b) => {
                if let Some(x) = header.get_mut(p % len) {
                    *x = b;
                }
            }
        }
    }
    let declared = if fix_len { header.len() } else { n };
    let mut out = (declared as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&header);
    out.extend_from_slice(data);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn valid_reference_files_read_the_same((specs, meta) in specs(), seed in any::<u8>()) {
        let file = reference_file(&specs, &meta, seed);
        prop_assert_eq!(compare(&file), Agreement::Same);
        assert_same_contents(&file);
    }

    #[test]
    fn the_fast_path_and_the_general_grammar_read_the_same((specs, meta) in specs(), seed in any::<u8>()) {
        let file = reference_file(&specs, &meta, seed);
        let general = spaced(&file);
        prop_assert_eq!(compare(&general), Agreement::Same);
        prop_assert_eq!(our_reading(&file), our_reading(&general));
        assert_visitor_sees_the_header(&file);
        assert_visitor_sees_the_header(&general);
    }

    #[test]
    fn mutated_files_get_the_same_verdict(
        (specs, meta) in specs(),
        mutations in prop::collection::vec(mutation(), 1..4),
        fix_len in prop::bool::weighted(0.9),
    ) {
        let file = reference_file(&specs, &meta, 7);
        let bytes = mutate(&file, &mutations, fix_len);
        let agreement = compare(&bytes);
        prop_assert!(!matches!(agreement, Agreement::Disagree(_)), "{:?} on {:?}", agreement, String::from_utf8_lossy(&bytes));
        if agreement == Agreement::Same && parse(&bytes).is_ok() {
            assert_same_contents(&bytes);
        }
        assert_visitor_sees_the_header(&bytes);
    }

    #[test]
    fn data_mutations_never_change_the_verdict_of_a_valid_header(
        (specs, meta) in specs(),
        cut in 0usize..3,
        extra in 0usize..3,
    ) {
        let mut file = reference_file(&specs, &meta, 1);
        let keep = file.len().saturating_sub(cut);
        file.truncate(keep);
        file.extend(std::iter::repeat_n(0u8, extra));
        prop_assert_eq!(compare(&file), Agreement::Same);
    }
}

/// A fixed-seed sweep that also counts outcomes, so the test would notice
/// mutations that stopped reaching the parser.
#[test]
fn mutation_sweep_counts() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        proptest::test_runner::TestRng::deterministic_rng(
            proptest::test_runner::RngAlgorithm::ChaCha,
        ),
    );
    let strategy = (specs(), prop::collection::vec(mutation(), 1..4));
    let (mut same_ok, mut same_err, mut listed, mut varies) = (0u32, 0u32, 0u32, 0u32);
    let cases = 10_000;
    for _ in 0..cases {
        let ((specs, meta), mutations) = strategy.new_tree(&mut runner).unwrap().current();
        let bytes = mutate(&reference_file(&specs, &meta, 3), &mutations, true);
        match compare(&bytes) {
            Agreement::Same if parse(&bytes).is_ok() => same_ok += 1,
            Agreement::Same => same_err += 1,
            Agreement::Listed(_) => listed += 1,
            Agreement::ReferenceVaries => varies += 1,
            Agreement::Disagree(why) => panic!("{why} on {:?}", String::from_utf8_lossy(&bytes)),
        }
    }
    println!("{cases} mutated files: {same_ok} both accept, {same_err} both reject with the same error, {listed} listed differences, {varies} where the reference's own verdict varies");
    assert!(
        same_ok > 100 && same_err > cases / 2,
        "{same_ok} {same_err}"
    );
}
