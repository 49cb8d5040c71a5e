//! The adversarial suite, natively: every case of
//! `tests/adversarial/cases.json` gives the verdict written there, and
//! agrees with the reference crate where the case says it must.
//!
//! The same cases run as wasm32 (`tests/wasm_verdicts.rs`) and on a
//! microcontroller, from the two files this test keeps in step with the
//! JSON: `cases.bin` (the inputs) and `verdicts.txt` (the expected lines).
//! `BLESS=1 cargo test --test adversarial` rewrites them after an edit of
//! `cases.json`; without it, a stale file fails the test.

use std::path::PathBuf;

use safetensors_nano::Slot;
use safetensors_nano_test_support::reference::{compare, Agreement};
use safetensors_nano_test_support::verdicts;
use serde_json::Value;

fn suite_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/adversarial")
}

/// One case as `cases.json` describes it.
struct Spec {
    name: String,
    rule: String,
    mode: u8,
    slots: u16,
    limit: u64,
    input: Vec<u8>,
    header: Vec<u8>,
    expected: String,
    reference: String,
}

fn hex(s: &str) -> Vec<u8> {
    assert!(s.len() % 2 == 0, "odd hex length: {s}");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap_or_else(|_| panic!("bad hex: {s}")))
        .collect()
}

fn u64_field(case: &Value, key: &str, default: u64) -> u64 {
    case.get(key).map_or(default, |v| {
        v.as_u64().unwrap_or_else(|| panic!("{key} must be a u64"))
    })
}

/// The bytes of a case, and its header bytes (for `at` offsets).
fn build_input(case: &Value) -> (Vec<u8>, Vec<u8>) {
    if let Some(h) = case.get("hex") {
        return (hex(h.as_str().expect("hex is a string")), Vec::new());
    }
    let mut header = match (case.get("header"), case.get("header_hex")) {
        (Some(text), None) => text
            .as_str()
            .expect("header is a string")
            .as_bytes()
            .to_vec(),
        (None, Some(h)) => hex(h.as_str().expect("header_hex is a string")),
        _ => panic!("a case needs exactly one of hex, header, header_hex"),
    };
    if case.get("pad").and_then(Value::as_bool) == Some(true) {
        while header.len() % 8 != 0 {
            header.push(b' ');
        }
    }
    let n = u64_field(case, "n", header.len() as u64);
    let mut input = n.to_le_bytes().to_vec();
    input.extend_from_slice(&header);
    let data = u64_field(case, "data", 0) as usize;
    input.extend((0..data).map(|i| (i % 251) as u8));
    if let Some(k) = case.get("truncate") {
        input.truncate(k.as_u64().expect("truncate is a u64") as usize);
    }
    (input, header)
}

/// The verdict line `cases.json` asks for.
fn expected_verdict(case: &Value, header: &[u8]) -> String {
    let expect = case.get("expect").expect("expect");
    if let Some(ok) = expect.get("ok") {
        let meta = match ok.get("meta") {
            Some(Value::Number(n)) => n.to_string(),
            _ => "-".to_owned(),
        };
        return format!(
            "ok tensors={} meta={meta} data_len={}",
            ok["tensors"].as_u64().expect("tensors"),
            ok["data_len"].as_u64().expect("data_len")
        );
    }
    if let Some(needed) = expect.get("partial") {
        return format!("partial needed={}", needed.as_u64().expect("needed"));
    }
    let kind = expect["err"].as_str().expect("err is a kind name");
    let at = if let Some(o) = expect.get("offset") {
        o.as_u64().expect("offset").to_string()
    } else if let Some(needle) = expect.get("at") {
        let needle = needle.as_str().expect("at is a string").as_bytes();
        let nth = u64_field(expect, "nth", 1) as usize;
        let found = header
            .windows(needle.len())
            .enumerate()
            .filter(|(_, w)| *w == needle)
            .map(|(i, _)| i)
            .nth(nth - 1)
            .unwrap_or_else(|| {
                panic!(
                    "{}: {:?} not in the header",
                    case["name"],
                    String::from_utf8_lossy(needle)
                )
            });
        (found as u64 + u64_field(expect, "plus", 0)).to_string()
    } else {
        "-".to_owned()
    };
    format!("err {kind} at={at}")
}

fn load() -> Vec<Spec> {
    let text = std::fs::read_to_string(suite_dir().join("cases.json")).expect("read cases.json");
    let doc: Value = serde_json::from_str(&text).expect("cases.json is JSON");
    let cases = doc["cases"].as_array().expect("cases is an array");
    cases
        .iter()
        .map(|case| {
            let (input, header) = build_input(case);
            let mode = match case.get("mode").and_then(Value::as_str).unwrap_or("file") {
                "file" => 0,
                "header" => 1,
                other => panic!("unknown mode {other}"),
            };
            Spec {
                name: case["name"].as_str().expect("name").to_owned(),
                rule: case["rule"].as_str().expect("rule").to_owned(),
                mode,
                slots: u16::try_from(u64_field(case, "slots", verdicts::MAX_SLOTS as u64))
                    .expect("slots fit u16"),
                limit: u64_field(case, "limit", 0),
                expected: expected_verdict(case, &header),
                reference: case["reference"].as_str().expect("reference").to_owned(),
                input,
                header,
            }
        })
        .collect()
}

fn encode_bin(specs: &[Spec]) -> Vec<u8> {
    let mut out = verdicts::MAGIC.to_vec();
    out.extend_from_slice(&(specs.len() as u32).to_le_bytes());
    for s in specs {
        out.push(s.mode);
        out.push(0);
        out.extend_from_slice(&s.slots.to_le_bytes());
        out.extend_from_slice(&s.limit.to_le_bytes());
        out.extend_from_slice(&(s.name.len() as u32).to_le_bytes());
        out.extend_from_slice(s.name.as_bytes());
        out.extend_from_slice(&(s.input.len() as u32).to_le_bytes());
        out.extend_from_slice(&s.input);
    }
    out
}

fn encode_verdicts(specs: &[Spec]) -> String {
    specs
        .iter()
        .map(|s| format!("{} {}\n", s.name, s.expected))
        .collect()
}

/// `cases.bin` and `verdicts.txt` are exactly what `cases.json` compiles to.
#[test]
fn derived_files_are_up_to_date() {
    let specs = load();
    let bin = encode_bin(&specs);
    let txt = encode_verdicts(&specs);
    let dir = suite_dir();
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(dir.join("cases.bin"), &bin).expect("write cases.bin");
        std::fs::write(dir.join("verdicts.txt"), &txt).expect("write verdicts.txt");
    }
    let on_disk_bin = std::fs::read(dir.join("cases.bin")).expect("read cases.bin");
    let on_disk_txt = std::fs::read_to_string(dir.join("verdicts.txt")).expect("read verdicts.txt");
    assert!(
        on_disk_bin == bin,
        "tests/adversarial/cases.bin is stale: rerun with BLESS=1"
    );
    assert_eq!(
        on_disk_txt, txt,
        "tests/adversarial/verdicts.txt is stale: rerun with BLESS=1"
    );
}

/// The cases are well formed and cover every reading rule of docs/format.md
/// (R1 prefix-present … R13 exact-length).
#[test]
fn suite_is_well_formed() {
    let specs = load();
    let mut names = std::collections::HashSet::new();
    for s in &specs {
        assert!(
            !s.name.is_empty()
                && s.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "case name {:?}",
            s.name
        );
        assert!(
            names.insert(s.name.clone()),
            "duplicate case name {}",
            s.name
        );
        assert!(
            usize::from(s.slots) <= verdicts::MAX_SLOTS,
            "{}: too many slots for a firmware",
            s.name
        );
        assert!(
            ["same", "listed", "n/a"].contains(&s.reference.as_str()),
            "{}: reference {}",
            s.name,
            s.reference
        );
        assert!(
            s.input.len() <= 4096,
            "{}: keep inputs small (a firmware embeds them)",
            s.name
        );
        if s.reference != "n/a" {
            assert!(
                s.mode == 0 && s.limit == 0 && usize::from(s.slots) == verdicts::MAX_SLOTS,
                "{}: only default whole-file cases compare with the reference",
                s.name
            );
        }
    }
    for r in 1..=13 {
        assert!(
            specs.iter().any(|s| s.rule == format!("R{r}")),
            "no case for R{r}"
        );
    }
    assert!(
        specs.iter().any(|s| s.expected.contains("data_len=")
            && s.expected
                .split("data_len=")
                .nth(1)
                .and_then(|d| d.parse::<u64>().ok())
                .is_some_and(|d| d >= 1 << 32)),
        "the suite must hold offsets past 4 GiB"
    );
}

/// Every case gives its verdict, run from the committed binary files
/// exactly as the wasm32 and firmware runs do.
#[test]
fn native_verdicts() {
    let dir = suite_dir();
    let bin = std::fs::read(dir.join("cases.bin")).expect("read cases.bin");
    let txt = std::fs::read_to_string(dir.join("verdicts.txt")).expect("read verdicts.txt");
    let mut scratch = [Slot::EMPTY; verdicts::MAX_SLOTS];
    let mut failures = Vec::new();
    let (count, mismatches) =
        verdicts::run_all(&bin, &txt, &mut scratch, |case, verdict, line, same| {
            if !same {
                failures.push(format!("expected `{line}`, got `{} {verdict}`", case.name));
            }
        })
        .expect("cases.bin and verdicts.txt are well formed and of equal length");
    assert!(count > 0);
    assert!(
        failures.is_empty(),
        "{mismatches} of {count} cases differ:\n{}",
        failures.join("\n")
    );
}

/// Where a case says so, the reference crate gives the same verdict, or
/// one of the differences docs/format.md lists (D1 no-duplicates …).
#[test]
fn reference_agrees_where_it_should() {
    let mut failures = Vec::new();
    for s in load() {
        let agreement = compare(&s.input);
        let fine = matches!(
            (s.reference.as_str(), &agreement),
            ("same", Agreement::Same) | ("listed", Agreement::Listed(_)) | ("n/a", _)
        );
        if !fine {
            failures.push(format!(
                "{}: case says {}, comparison gives {agreement:?}",
                s.name, s.reference
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Header offsets in the expectations point inside the header.
#[test]
fn error_offsets_are_inside_the_header() {
    for s in load() {
        if let Some(at) = s
            .expected
            .strip_prefix("err ")
            .and_then(|r| r.split("at=").nth(1))
        {
            if let Ok(at) = at.parse::<usize>() {
                assert!(
                    at <= s.header.len(),
                    "{}: offset {at} past a header of {}",
                    s.name,
                    s.header.len()
                );
            }
        }
    }
}
