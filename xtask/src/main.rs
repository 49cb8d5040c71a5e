//! The repository's generator. `cargo xtask gen` writes the JS side of the
//! facts that the Rust tables state once:
//!
//! - `wasm/js/generated/dtypes.js`, `.d.ts`: the dtype table
//!   (`core/src/dtype.rs`, `dtypes!`);
//! - `wasm/js/generated/errors.js`, `.d.ts`: the error kinds by wire number,
//!   their fields and message templates, and the texts of `Expected` and
//!   `Field` (`core/src/error/`: `kinds.rs`, `error_kinds!`; this layer's kinds in
//!   `wasm/src/error.rs`, `layer_kinds!`);
//! - `wasm/js/generated/wire.js`, `.d.ts`: the indices of the numbers that
//!   cross the wasm boundary (`wasm/src/wire.rs`);
//! - `wasm/js/generated/shard-findings.js`, `.d.ts`: the kinds of finding of
//!   the sharded-index check, their fields and message templates
//!   (`core/src/shards/check.rs`, `index_problems!`);
//! - the list of error kinds in `wasm/README.md`, between its `kinds`
//!   markers (the rest of the README is hand-written);
//! - `tests/js/lib/rust-messages.js`: sample inputs and the messages the
//!   Rust side gives for them, which the Node tests compare with the JS
//!   package's;
//! - the project's one version (`[workspace.package]` in `Cargo.toml`) in
//!   the npm package's `wasm/js/package.json` and in the version the
//!   published crates require of the core (`[workspace.dependencies]`).
//!
//! `cargo xtask check` (and `cargo test -p xtask`) fails when a file on
//! disk is not what `gen` would write.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use safetensors_nano::decode::decode_f32_into;
use safetensors_nano::write::{Plan, TensorSpec};
use safetensors_nano::{
    Dtype, ErrorKind, Expected, Field, FindingType, IndexProblem, Parser, Status, Table, TensorRef,
};
use safetensors_nano_wasm::{kinds, wire, LayerKind, CORE_TABLE, JS_KINDS, LAYER_TABLE, MAX_SAFE};

/// The command that writes the generated files.
const COMMAND: &str = "cargo xtask gen";

fn main() -> ExitCode {
    let root = root();
    match std::env::args().nth(1).as_deref() {
        Some("gen") => {
            for (path, text) in files() {
                let path = root.join(path);
                if std::fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
                    continue;
                }
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).expect("create the folder");
                }
                std::fs::write(&path, text).expect("write the file");
                println!("wrote {}", path.display());
            }
            ExitCode::SUCCESS
        }
        Some("check") => {
            let stale = stale(&root);
            for path in &stale {
                eprintln!("stale: {path} (run `{COMMAND}`)");
            }
            if stale.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        _ => {
            eprintln!("usage: cargo xtask gen    write the generated files");
            eprintln!("       cargo xtask check  fail if one is stale");
            ExitCode::from(2)
        }
    }
}

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask/ is in the repository")
        .to_path_buf()
}

/// The generated files that differ from what `gen` would write.
fn stale(root: &Path) -> Vec<String> {
    files()
        .into_iter()
        .filter(|(path, text)| {
            std::fs::read_to_string(root.join(path)).ok().as_deref() != Some(text.as_str())
        })
        .map(|(path, _)| path.to_string())
        .collect()
}

/// Every generated file: its path from the root, and its text.
fn files() -> Vec<(&'static str, String)> {
    vec![
        ("wasm/js/generated/dtypes.js", dtypes_js()),
        ("wasm/js/generated/dtypes.d.ts", dtypes_d_ts()),
        ("wasm/js/generated/errors.js", errors_js()),
        ("wasm/js/generated/errors.d.ts", errors_d_ts()),
        ("wasm/js/generated/wire.js", wire_js()),
        ("wasm/js/generated/wire.d.ts", wire_d_ts()),
        ("wasm/js/generated/shard-findings.js", findings_js()),
        ("wasm/js/generated/shard-findings.d.ts", findings_d_ts()),
        ("tests/js/lib/rust-messages.js", messages_js()),
        (README, readme_kinds()),
        (PACKAGE_JSON, package_json()),
        ("Cargo.toml", workspace_manifest()),
    ]
}

/// The npm package's manifest.
const PACKAGE_JSON: &str = "wasm/js/package.json";

/// The project's version: `[workspace.package]`'s, which this crate inherits.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `text` with the quoted value after `key` on the one line that starts
/// with `key` replaced by [`VERSION`] (the rest of the file as written).
fn with_version(path: &str, key: &str) -> String {
    let text = std::fs::read_to_string(root().join(path)).expect("read the manifest");
    let mut found = 0;
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        match line.strip_prefix(key) {
            Some(rest) => {
                let (_, after) = rest
                    .split_once('"')
                    .and_then(|(_, r)| r.split_once('"'))
                    .expect("a quoted version follows the key");
                write!(out, "{key}\"{VERSION}\"{after}").unwrap();
                found += 1;
            }
            None => out.push_str(line),
        }
    }
    assert_eq!(found, 1, "{path}: expected one line starting with {key:?}");
    out
}

/// `wasm/js/package.json` with the project's version.
fn package_json() -> String {
    with_version(PACKAGE_JSON, "  \"version\": ")
}

/// The root `Cargo.toml` with the core's required version equal to its own.
fn workspace_manifest() -> String {
    with_version(
        "Cargo.toml",
        "safetensors-nano = { path = \"core\", version = ",
    )
}

/// The comment every generated file starts with.
fn banner(from: &str) -> String {
    format!(
        "// Generated by `{COMMAND}` (xtask/src/main.rs) from\n\
         // {from}.\n\
         // Do not edit: change the table and regenerate (`cargo test -p xtask` fails\n\
         // while this file is stale).\n"
    )
}

const FROM_DTYPES: &str = "the dtype table in core/src/dtype.rs (`dtypes!`)";
const FROM_ERRORS: &str = "the error-kind lists in core/src/error/kinds.rs (`error_kinds!`) and\n\
    // wasm/src/error.rs (`layer_kinds!`)";
const FROM_WIRE: &str = "the wire layout in wasm/src/wire.rs";
const FROM_FINDINGS: &str =
    "the shard check's findings in core/src/shards/check.rs (`index_problems!`)";

/// A JS string literal (single quotes).
fn js(s: &str) -> String {
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => write!(out, "\\u{:04x}", c as u32).unwrap(),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// `Object.freeze([…])` of items, wrapped to lines of at most ~100 columns.
fn frozen(items: impl IntoIterator<Item = String>) -> String {
    let mut out = String::from("Object.freeze([\n");
    let mut line = String::from(" ");
    for item in items {
        if line.len() + item.len() + 2 > 100 {
            out.push_str(line.trim_end());
            out.push('\n');
            line = String::from(" ");
        }
        write!(line, " {item},").unwrap();
    }
    if line.trim().is_empty() {
        out.push_str("])");
    } else {
        out.push_str(line.trim_end());
        out.push_str("\n])");
    }
    out
}

/// A union of string literals, wrapped.
fn union(items: impl IntoIterator<Item = String>) -> String {
    let mut out = String::new();
    let mut line = String::from(" ");
    for item in items {
        if line.len() + item.len() + 3 > 100 {
            out.push('\n');
            out.push_str(line.trim_end());
            line = String::from(" ");
        }
        write!(line, " | {item}").unwrap();
    }
    out.push('\n');
    out.push_str(line.trim_end());
    out
}

/// A doc comment's lines as a JS block comment at `indent`.
fn jsdoc(doc: &str, indent: &str) -> String {
    let lines: Vec<&str> = doc
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    match lines.as_slice() {
        [] => String::new(),
        [one] => format!("{indent}/** {one} */\n"),
        many => {
            let mut out = format!("{indent}/**\n");
            for l in many {
                writeln!(out, "{indent} * {l}").unwrap();
            }
            writeln!(out, "{indent} */").unwrap();
            out
        }
    }
}

fn dtypes_js() -> String {
    let mut out = banner(FROM_DTYPES);
    let all = Dtype::ALL;
    out.push_str("\n/** The dtype names, by dtype index (the core's `Dtype as u8`). */\n");
    writeln!(
        out,
        "export const DTYPES = {};",
        frozen(all.iter().map(|d| js(d.name())))
    )
    .unwrap();
    out.push_str("\n/** Each dtype's index, by name. */\n");
    out.push_str("export const DTYPE_INDEX = new Map(DTYPES.map((d, i) => [d, i]));\n");
    out.push_str("\n/** Bits per element, by dtype index. */\n");
    writeln!(
        out,
        "export const BITS = {};",
        frozen(all.iter().map(|d| d.bits().to_string()))
    )
    .unwrap();
    out.push_str("\n/** Alignment in bytes that a typed view needs, by dtype index. */\n");
    writeln!(
        out,
        "export const ALIGN = {};",
        frozen(all.iter().map(|d| d.align().to_string()))
    )
    .unwrap();
    out.push_str(
        "\n/** What kind of number an element is, by dtype index: 'bool', 'uint', 'int', 'float' or 'complex'. */\n",
    );
    writeln!(
        out,
        "export const DTYPE_KINDS = {};",
        frozen(all.iter().map(|d| js(d.kind().name())))
    )
    .unwrap();
    out.push_str(
        "\n/**\n * The bit layout of each float dtype (null for the others), by dtype index:\n \
         * `[sign] exponent mantissa`; `specials` is 'finite', 'ieee', 'all-ones-nan' or\n \
         * 'negative-zero-nan' (see `FloatSpecials` in the Rust crate).\n */\n",
    );
    let formats = all.iter().map(|d| match d.float_format() {
        None => "null".to_string(),
        Some(f) => format!(
            "Object.freeze({{ signed: {}, exponentBits: {}, mantissaBits: {}, bias: {}, subnormals: {}, specials: {} }})",
            f.signed,
            f.exponent_bits,
            f.mantissa_bits,
            f.bias,
            f.subnormals,
            js(specials(f.specials))
        ),
    });
    let formats: Vec<String> = formats.collect();
    writeln!(
        out,
        "export const FLOAT_FORMATS = Object.freeze([\n{}\n]);",
        formats
            .iter()
            .map(|f| format!("  {f},"))
            .collect::<Vec<_>>()
            .join("\n")
    )
    .unwrap();
    out.push_str(
        "\n// Float16Array where the runtime has it; else the bits, as a Uint16Array.\n\
         const Float16 = typeof globalThis.Float16Array === 'function' ? globalThis.Float16Array : Uint16Array;\n",
    );
    out.push_str("\n/** The typed array a tensor's `view()` is, by dtype index. */\n");
    let views = all.iter().map(|d| match d.js_view() {
        safetensors_nano::JsView::Float16Array => "Float16".to_string(),
        v => v.name().to_string(),
    });
    writeln!(out, "export const VIEW = {};", frozen(views)).unwrap();
    out
}

fn specials(s: safetensors_nano::FloatSpecials) -> &'static str {
    use safetensors_nano::FloatSpecials::*;
    match s {
        Finite => "finite",
        Ieee => "ieee",
        AllOnesNan => "all-ones-nan",
        NegativeZeroNan => "negative-zero-nan",
    }
}

fn dtypes_d_ts() -> String {
    let mut out = banner(FROM_DTYPES);
    let all = Dtype::ALL;
    writeln!(
        out,
        "\n/** The {} element types of the safetensors format. */\nexport type Dtype ={};",
        all.len(),
        union(all.iter().map(|d| js(d.name())))
    )
    .unwrap();
    writeln!(
        out,
        "\n/** The float dtypes `toFloat32()` and `decodeFloat32()` decode. */\nexport type FloatDtype ={};",
        union(all.iter().filter(|d| d.is_float()).map(|d| js(d.name())))
    )
    .unwrap();
    out.push_str(
        "\n/** What kind of number a dtype's elements are. */\n\
         export type DtypeKind = 'bool' | 'uint' | 'int' | 'float' | 'complex';\n\
         \n/** The bit layout of a float dtype. */\n\
         export interface FloatFormat {\n\
         \x20 readonly signed: boolean;\n\
         \x20 readonly exponentBits: number;\n\
         \x20 readonly mantissaBits: number;\n\
         \x20 readonly bias: number;\n\
         \x20 readonly subnormals: boolean;\n\
         \x20 readonly specials: 'finite' | 'ieee' | 'all-ones-nan' | 'negative-zero-nan';\n\
         }\n\
         \nexport declare const DTYPES: readonly Dtype[];\n\
         export declare const DTYPE_INDEX: ReadonlyMap<string, number>;\n\
         export declare const BITS: readonly number[];\n\
         export declare const ALIGN: readonly number[];\n\
         export declare const DTYPE_KINDS: readonly DtypeKind[];\n\
         export declare const FLOAT_FORMATS: readonly (FloatFormat | null)[];\n\
         export declare const VIEW: readonly (\n\
         \x20 | Uint8ArrayConstructor | Int8ArrayConstructor | Uint16ArrayConstructor | Int16ArrayConstructor\n\
         \x20 | Uint32ArrayConstructor | Int32ArrayConstructor | Float32ArrayConstructor | Float64ArrayConstructor\n\
         \x20 | BigInt64ArrayConstructor | BigUint64ArrayConstructor\n\
         )[];\n",
    );
    out
}

fn errors_js() -> String {
    let mut out = banner(FROM_ERRORS);
    let all: Vec<_> = kinds().collect();
    writeln!(
        out,
        "\n/**\n * The error kinds by the number wasm sends: the core's `ErrorKind` ({} kinds,\n \
         * numbered by `ErrorKind::code()`), then the wasm layer's own.\n */\nexport const KINDS = {};",
        ErrorKind::COUNT,
        frozen(all.iter().map(|k| js(k.name)))
    )
    .unwrap();
    writeln!(
        out,
        "\n/** The kinds the package's JavaScript raises itself (never numbered by wasm). */\n\
         export const JS_KINDS = {};",
        frozen(JS_KINDS.iter().map(|k| js(k.name)))
    )
    .unwrap();
    out.push_str(
        "\n/**\n * Each kind's message template, by kind number: `{name}` is the field `name`\n \
         * (a number in decimal, an 'expected' as its EXPECTED text, a 'field' as its\n \
         * FIELD key, a 'dtype' as its name), `{name:x}` a number in lower-case hex,\n \
         * `{name:02x}` in hex of at least two digits, `{name:or_more}` a number\n \
         * followed by ' or more' when it is 3 or more.\n */\n",
    );
    writeln!(
        out,
        "export const TEMPLATES = Object.freeze([\n{}\n]);",
        all.iter()
            .map(|k| format!("  {},", js(k.template)))
            .collect::<Vec<_>>()
            .join("\n")
    )
    .unwrap();
    out.push_str(
        "\n/**\n * Each kind's fields, by kind number: `[name, type]` in wire order (the\n \
         * numbers after ERROR_FIELDS), type 'number', 'expected', 'field' or 'dtype'.\n */\n",
    );
    let fields = all.iter().map(|k| {
        let f: Vec<String> = k
            .fields
            .iter()
            .map(|f| format!("[{}, {}]", js(f.name), js(f.ty.name())))
            .collect();
        format!("  [{}],", f.join(", "))
    });
    writeln!(
        out,
        "export const FIELDS = Object.freeze([\n{}\n]);",
        fields.collect::<Vec<_>>().join("\n")
    )
    .unwrap();
    out.push_str("\n/** What the header parser wanted, by the core's `Expected` number. */\n");
    writeln!(
        out,
        "export const EXPECTED = {};",
        frozen(Expected::ALL.iter().map(|e| js(e.describe())))
    )
    .unwrap();
    out.push_str("\n/** The tensor entry fields' keys, by the core's `Field` number. */\n");
    writeln!(
        out,
        "export const FIELD = {};",
        frozen(Field::ALL.iter().map(|f| js(f.key())))
    )
    .unwrap();
    out
}

fn errors_d_ts() -> String {
    let mut out = banner(FROM_ERRORS);
    writeln!(
        out,
        "\n/** The error kinds of the core (the Rust crate's `ErrorKind`) and of the wasm layer. */\nexport type WasmErrorKind ={};",
        union(kinds().map(|k| js(k.name)))
    )
    .unwrap();
    writeln!(
        out,
        "\n/** The kinds the package's JavaScript raises itself. */\nexport type JsErrorKind ={};\n\
         \n/** Every kind of `SafeTensorsError`. */\nexport type ErrorKind = WasmErrorKind | JsErrorKind;",
        union(JS_KINDS.iter().map(|k| js(k.name)))
    )
    .unwrap();
    out.push_str(
        "\n/** What a field of an error kind is. */\n\
         export type FieldType = 'number' | 'expected' | 'field' | 'dtype';\n\
         \nexport declare const KINDS: readonly WasmErrorKind[];\n\
         export declare const JS_KINDS: readonly JsErrorKind[];\n\
         export declare const TEMPLATES: readonly string[];\n\
         export declare const FIELDS: readonly (readonly [string, FieldType][])[];\n\
         export declare const EXPECTED: readonly string[];\n\
         export declare const FIELD: readonly string[];\n",
    );
    out
}

fn wire_js() -> String {
    let mut out = banner(FROM_WIRE);
    for (name, value, doc) in wire::CONSTANTS {
        out.push('\n');
        out.push_str(&jsdoc(doc, ""));
        writeln!(out, "export const {name} = {value};").unwrap();
    }
    out
}

fn wire_d_ts() -> String {
    let mut out = banner(FROM_WIRE);
    out.push('\n');
    for (name, value, _) in wire::CONSTANTS {
        writeln!(out, "export declare const {name}: {value};").unwrap();
    }
    out
}

fn findings_js() -> String {
    let mut out = banner(FROM_FINDINGS);
    let all = IndexProblem::TABLE;
    out.push_str("\n/** The kinds of finding, in the order checkShards reports them. */\n");
    writeln!(
        out,
        "export const FINDING_KINDS = {};",
        frozen(all.iter().map(|k| js(k.name)))
    )
    .unwrap();
    out.push_str(
        "\n/**\n * Each kind's fields, by kind: `[name, type]` in the order the constructors in\n \
         * `finding` take them; type 'tensor', 'file', 'shard', 'position' or 'bytes'.\n */\n",
    );
    out.push_str("export const FINDING_FIELDS = Object.freeze({\n");
    for k in all {
        let f: Vec<String> = k
            .fields
            .iter()
            .map(|f| format!("[{}, {}]", js(f.name), js(f.ty.name())))
            .collect();
        writeln!(out, "  {}: Object.freeze([{}]),", k.name, f.join(", ")).unwrap();
    }
    out.push_str("});\n");
    out.push_str(
        "\n/**\n * Each kind's message template, by kind: `{name}` is the field `name`, a\n \
         * 'tensor' as a JSON string, a 'shard' (a position in the shards given) as\n \
         * that shard's file name, the others as they are.\n */\n",
    );
    out.push_str("export const FINDING_TEMPLATES = Object.freeze({\n");
    for k in all {
        writeln!(out, "  {}: {},", k.name, js(k.template)).unwrap();
    }
    out.push_str("});\n");
    out.push_str("\n/** A finding of each kind, from its fields (FINDING_FIELDS' order). */\n");
    out.push_str("export const finding = Object.freeze({\n");
    for k in all {
        let names: Vec<&str> = k.fields.iter().map(|f| f.name).collect();
        writeln!(
            out,
            "  {}: ({}) => ({{ kind: {}, {} }}),",
            k.name,
            names.join(", "),
            js(k.name),
            names.join(", ")
        )
        .unwrap();
    }
    out.push_str("});\n");
    out
}

/// A finding field's TypeScript type.
fn ts_type(ty: FindingType) -> &'static str {
    match ty {
        FindingType::Tensor | FindingType::File => "string",
        FindingType::Shard | FindingType::Position | FindingType::Bytes => "number",
    }
}

fn findings_d_ts() -> String {
    let mut out = banner(FROM_FINDINGS);
    out.push_str(
        "\n/**\n * A disagreement between an index and shard headers (checkShards). `shard` and\n \
         * `first` are positions in the shards given; `at` a position in that shard's\n \
         * `names`; `file` a shard file name as the index writes it.\n */\nexport type ShardFinding =\n",
    );
    let all = IndexProblem::TABLE;
    for (i, k) in all.iter().enumerate() {
        out.push_str(&jsdoc(k.doc, "  "));
        let fields: Vec<String> = k
            .fields
            .iter()
            .map(|f| format!("{}: {}", f.name, ts_type(f.ty)))
            .collect();
        let end = if i + 1 == all.len() { ";" } else { "" };
        writeln!(
            out,
            "  | {{ kind: {}; {} }}{end}",
            js(k.name),
            fields.join("; ")
        )
        .unwrap();
    }
    out.push_str(
        "\n/** The kinds of ShardFinding. */\n\
         export type ShardFindingKind = ShardFinding['kind'];\n\
         \n/** What a field of a finding is. */\n\
         export type FindingFieldType = 'tensor' | 'file' | 'shard' | 'position' | 'bytes';\n\
         \nexport declare const FINDING_KINDS: readonly ShardFindingKind[];\n\
         export declare const FINDING_FIELDS: Readonly<Record<ShardFindingKind, readonly (readonly [string, FindingFieldType])[]>>;\n\
         export declare const FINDING_TEMPLATES: Readonly<Record<ShardFindingKind, string>>;\n\
         export declare const finding: {\n",
    );
    for k in all {
        let args: Vec<String> = k
            .fields
            .iter()
            .map(|f| format!("{}: {}", f.name, ts_type(f.ty)))
            .collect();
        writeln!(
            out,
            "  readonly {}: ({}) => Extract<ShardFinding, {{ kind: {} }}>;",
            k.name,
            args.join(", "),
            js(k.name)
        )
        .unwrap();
    }
    out.push_str("};\n");
    out
}

/// A file of `header` with `data` bytes of data.
fn file(header: &str, data: usize) -> Vec<u8> {
    let mut f = (header.len() as u64).to_le_bytes().to_vec();
    f.extend_from_slice(header.as_bytes());
    f.resize(f.len() + data, 0);
    f
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The message the JS package gives: the kind's text, then where and which
/// tensor (its own suffix, not Rust's `Error` one).
fn js_message(text: &str, offset: Option<u64>, tensor: Option<&str>) -> String {
    let mut m = text.to_string();
    if let Some(o) = offset {
        write!(m, " at header byte {o}").unwrap();
    }
    if let Some(t) = tensor {
        write!(m, " (tensor \"{t}\")").unwrap();
    }
    m
}

/// A JS object literal of a sample.
fn sample(call: &str, input: String, kind: &str, message: &str) -> String {
    format!(
        "  {{ call: {}, {input}, kind: {}, message: {} }},",
        js(call),
        js(kind),
        js(message)
    )
}

/// An error of `fromBytes(file)`, as the core gives it.
fn open_sample(bytes: Vec<u8>) -> String {
    let Err(err) = Table::<8>::new().parse(&bytes) else {
        panic!("a sample fails: {bytes:?}")
    };
    let json = bytes.get(8..).unwrap_or_default();
    let name = err.tensor_name(json).map(|n| n.to_string());
    let text = err.kind().to_string();
    let message = js_message(&text, err.offset(), name.as_deref());
    sample(
        "fromBytes",
        format!("hex: {}", js(&hex(&bytes))),
        err.kind().name(),
        &message,
    )
}

/// An error of this layer's for a file the core accepts: of `fromBytes`,
/// or with a file size of `fromHeader`.
fn layer_sample(bytes: Vec<u8>, size: Option<u64>, kind: LayerKind, value: u64) -> String {
    let parsed = Parser::new().parse_header(&bytes, Table::<8>::new());
    assert!(
        matches!(parsed, Ok(Status::Complete(_))),
        "the core accepts it"
    );
    let info = &LAYER_TABLE[kind as usize];
    let name = "t";
    // (This layer's kinds carry plain numbers, shown in decimal.)
    let text = info
        .fields
        .iter()
        .fold(info.template.to_string(), |text, field| {
            text.replace(&format!("{{{}}}", field.name), &value.to_string())
        });
    let message = js_message(&text, None, Some(name));
    let (call, input) = match size {
        None => ("fromBytes", format!("hex: {}", js(&hex(&bytes)))),
        Some(size) => (
            "fromHeader",
            format!("hex: {}, fileSize: '{size}'", js(&hex(&bytes))),
        ),
    };
    sample(call, input, info.name, &message)
}

/// An error of `serialize` for tensors `(name, dtype, shape, byte_len)`.
fn write_sample(tensors: &[(&str, Dtype, &[u64], u64)]) -> String {
    let mut specs: Vec<TensorSpec<'_>> = tensors
        .iter()
        .map(|&(n, d, s, b)| TensorSpec::new(n, d, s, b))
        .collect();
    let Err(err) = Plan::new(&mut specs) else {
        panic!("a sample fails")
    };
    // (The index is the tensor's place in `specs`, which the plan sorted.)
    let name = match err.tensor() {
        Some(TensorRef::Index(i)) => Some(specs[i as usize].name()),
        _ => None,
    };
    let message = js_message(&err.kind().to_string(), err.offset(), name);
    let list: Vec<String> = tensors
        .iter()
        .map(|(n, d, s, b)| format!("[{}, {}, {s:?}, {b}]", js(n), js(d.name())))
        .collect();
    sample(
        "serialize",
        format!("tensors: [{}]", list.join(", ")),
        err.kind().name(),
        &message,
    )
}

/// An error of `decodeFloat32(dtype, bytes)`.
fn decode_sample(dtype: Dtype, len: usize) -> String {
    let bytes = vec![0; len];
    let mut out = vec![0.0; len];
    let Err(err) = decode_f32_into(dtype, &bytes, &mut out) else {
        panic!("a sample fails")
    };
    sample(
        "decodeFloat32",
        format!("dtype: {}, byteLength: {len}", js(dtype.name())),
        err.kind().name(),
        &js_message(&err.kind().to_string(), err.offset(), None),
    )
}

fn messages_js() -> String {
    let mut out = banner("sample errors of the core (their `Display`) and of the wasm layer");
    let t =
        |rest: &str| format!(r#"{{"t":{{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}{rest}"#);
    let huge = MAX_SAFE + 1;
    let end = MAX_SAFE;
    let mut samples = vec![
        open_sample(vec![1, 2, 3]),
        open_sample(100_000_001u64.to_le_bytes().to_vec()),
        open_sample({
            let mut f = 100u64.to_le_bytes().to_vec();
            f.resize(20, b' ');
            f
        }),
        open_sample(file(&t("x"), 4)),
        open_sample(file(r#"{"t";"#, 0)),
        open_sample(file(r#"{"t":{"dtype":"F32","shape":[1]}}"#, 4)),
        open_sample(file(
            r#"{"t":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#,
            4,
        )),
        open_sample(file(
            r#"{"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}"#,
            8,
        )),
        open_sample(file(
            r#"{"t":{"dtype":"F32","shape":[1],"data_offsets":[4]}}"#,
            4,
        )),
        open_sample(file(
            r#"{"t":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}}"#,
            4,
        )),
        open_sample(file(
            r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"t":{"dtype":"U8","shape":[2],"data_offsets":[3,5]}}"#,
            5,
        )),
        open_sample(file(
            r#"{"t":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#,
            4,
        )),
        open_sample(file(&t("}"), 5)),
        open_sample(file(
            r#"{"__metadata__":{"k":1},"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#,
            4,
        )),
        layer_sample(
            file(
                &format!(r#"{{"t":{{"dtype":"U8","shape":[{huge},0],"data_offsets":[0,0]}}}}"#),
                0,
            ),
            None,
            LayerKind::DimensionTooLarge,
            huge,
        ),
    ];
    let header = format!(r#"{{"t":{{"dtype":"U8","shape":[{end}],"data_offsets":[0,{end}]}}}}"#);
    let prefix = file(&header, 0);
    let size = prefix.len() as u64 + end;
    samples.push(layer_sample(
        prefix,
        Some(size),
        LayerKind::OffsetTooLarge,
        size,
    ));
    samples.push(write_sample(&[("__metadata__", Dtype::U8, &[1], 1)]));
    samples.push(write_sample(&[
        ("a", Dtype::U8, &[1], 1),
        ("b", Dtype::F32, &[2], 4),
    ]));
    samples.push(decode_sample(Dtype::I8, 4));
    out.push_str(
        "\n/**\n * Inputs that fail, each with the error kind and the message the package must\n \
         * give: the Rust `Display` of the kind, then where and which tensor. `call`\n \
         * says what gets the input: fromBytes(hex), fromHeader(hex, BigInt(fileSize)),\n \
         * serialize(tensors as [name, dtype, shape, byteLength]), decodeFloat32(dtype,\n \
         * byteLength zero bytes).\n */\n",
    );
    writeln!(out, "export const SAMPLES = [\n{}\n];", samples.join("\n")).unwrap();
    out
}

/// The README whose list of error kinds is generated.
const README: &str = "wasm/README.md";
/// The markers around that list.
const KINDS_BEGIN: &str =
    "<!-- kinds: generated by `cargo xtask gen` from core/src/error/kinds.rs and wasm/src/error.rs -->\n";
const KINDS_END: &str = "<!-- /kinds -->\n";

/// `wasm/README.md` with the list between its markers written from the
/// tables: every kind a `SafeTensorsError` can have.
fn readme_kinds() -> String {
    let text = std::fs::read_to_string(root().join(README)).expect("read wasm/README.md");
    let (before, rest) = text
        .split_once(KINDS_BEGIN)
        .expect("wasm/README.md has the kinds markers");
    let (_, after) = rest.split_once(KINDS_END).expect("the kinds list ends");
    let core: Vec<String> = CORE_TABLE.iter().map(|k| format!("`{}`", k.name)).collect();
    let mut list = String::from(
        "- the core's, with the same names and messages as the Rust `ErrorKind` (the rule\n  \
         behind each is in `docs/format.md`, \"Rules\", in the project's source):",
    );
    let mut width = 100;
    for (i, name) in core.iter().enumerate() {
        let sep = if i + 1 == core.len() { "." } else { "," };
        if width + name.len() + 2 > 98 {
            list.push_str("\n ");
            width = 1;
        }
        write!(list, " {name}{sep}").unwrap();
        width += name.len() + 2;
    }
    list.push('\n');
    list.push_str("- this package's:\n\n| kind | when |\n|---|---|\n");
    for k in LAYER_TABLE {
        // (Its message, with each number's place in italics.)
        let when = k.template.replace(['{', '}'], "*");
        writeln!(list, "| `{}` | {when} |", k.name).unwrap();
    }
    for k in JS_KINDS {
        writeln!(list, "| `{}` | {} |", k.name, k.when).unwrap();
    }
    format!("{before}{KINDS_BEGIN}{list}{KINDS_END}{after}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generated files are what the tables say: change a table, run
    /// `cargo xtask gen`, commit both.
    #[test]
    fn generated_files_are_fresh() {
        let stale = stale(&root());
        assert!(
            stale.is_empty(),
            "stale generated files (run `{COMMAND}`): {stale:?}"
        );
    }

    /// Every kind crossing to JS has its own name, and the samples cover
    /// the format codes.
    #[test]
    fn kind_names_are_distinct_and_samples_cover_the_codes() {
        let mut names: Vec<&str> = kinds().map(|k| k.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), kinds().count());
        let samples = messages_js();
        for text in ["0x78", "3 or more", "\"data_offsets\"", "dtype I8", "2^53"] {
            assert!(samples.contains(text), "{text}");
        }
    }
}
