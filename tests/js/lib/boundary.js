// Differential fuzzing across the JS boundary: the packed package's
// fromBytes against the native `inspect --json` on the same bytes. Cases:
// the fuzz corpus seeds (fuzz/seeds/*) and the adversarial suite
// (tests/adversarial/cases.json), then files generated from a seed: random
// headers, and mutations of seeds and generated files. The verdict, error
// kind, offset and tensor, header size, metadata, and every tensor's name,
// dtype, shape and offsets must be identical; the one allowed difference is
// the JS layer's refusal of a value above 2^53 (OffsetTooLarge,
// DimensionTooLarge) where a JS number would stop being exact.
//
// The native side is the CLI's `inspect --json --no-hash` (`inspectCmd`),
// given a batch of files per process; every run also compares a batch's
// answer with the command on the file alone for a sample of the cases.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DTYPES, bitsOf } from './headers.js';
import { rng } from './rng.mjs';

const MAX_SAFE = 2n ** 53n;

/** The seed files: every file under fuzz/seeds/, and the adversarial suite's inputs. */
export function seedFiles(repo) {
  const out = [];
  const root = join(repo, 'fuzz', 'seeds');
  for (const dir of readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()) {
    for (const f of readdirSync(join(root, dir)).sort())
      out.push({ name: `fuzz/seeds/${dir}/${f}`, bytes: new Uint8Array(readFileSync(join(root, dir, f))) });
  }
  const suite = JSON.parse(readFileSync(join(repo, 'tests', 'adversarial', 'cases.json'), 'utf8'));
  for (const c of suite.cases) out.push({ name: `adversarial/${c.name}`, bytes: adversarialInput(c) });
  return out;
}

const hex = (s) => Uint8Array.from(s.match(/../g) ?? [], (h) => parseInt(h, 16));

// A case of tests/adversarial/cases.json as bytes (its 'about' says how).
function adversarialInput(c) {
  if (c.hex !== undefined) return hex(c.hex);
  let header = c.header_hex !== undefined ? hex(c.header_hex) : new TextEncoder().encode(c.header);
  if (c.pad) {
    const padded = new Uint8Array(header.length + ((8 - (header.length % 8)) % 8)).fill(0x20);
    padded.set(header);
    header = padded;
  }
  const n = BigInt(c.n ?? header.length);
  const data = c.data ?? 0;
  let out = new Uint8Array(8 + header.length + data);
  new DataView(out.buffer).setBigUint64(0, BigInt.asUintN(64, n), true);
  out.set(header, 8);
  for (let i = 0; i < data; i++) out[8 + header.length + i] = i % 251;
  if (c.truncate !== undefined) out = out.subarray(0, c.truncate);
  return out;
}

// ---------------------------------------------------------------- generation

const NAMES = [
  'w',
  'a.b',
  'layer.0.weight',
  '',
  '__metadata__',
  '\u00e9t\u00e9',
  '\u{1f600}',
  'x\\"y',
  '\\u0041',
  '\\ud83d\\ude00',
  '\\ud800',
  'tab\\t',
  '\ufeffbom',
  'dup',
  'dup',
];
const TOKENS = [
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  '"',
  '\\',
  ' ',
  '0',
  '-1',
  '1e3',
  '00',
  '18446744073709551616',
  '9007199254740993',
  'null',
  'true',
  '"dtype"',
  '"shape"',
  '"data_offsets"',
  '"__metadata__"',
  '"F32"',
  '"BF16"',
  '\u00ff',
  '\x00',
];
const enc = new TextEncoder();

function pick(r, a) {
  return a[Math.floor(r.next() * a.length)];
}
const int = (r, n) => Math.floor(r.next() * n);

function dim(r) {
  const x = r.next();
  if (x < 0.1) return '0';
  if (x < 0.8) return String(1 + int(r, 9));
  if (x < 0.9) return String(1 + int(r, 300));
  return pick(r, ['9007199254740993', '18446744073709551615', '4294967296', '65536', '1e2', '01', '-1', '2.0']);
}

// A header and data that are valid most of the time, with the odd corner
// (escapes, huge numbers, gaps, metadata, whitespace).
function generated(r) {
  const n = int(r, 6);
  const parts = [];
  let offset = 0n;
  const names = new Set();
  for (let i = 0; i < n; i++) {
    let name = r.next() < 0.7 ? `t${i}` : pick(r, NAMES);
    if (names.has(name) && r.next() < 0.8) name = `${name}${i}`;
    names.add(name);
    const d = int(r, DTYPES.length);
    const shape = Array.from({ length: int(r, 4) }, () => dim(r));
    let elements = 1n;
    for (const s of shape) elements *= /^\d+$/.test(s) ? BigInt(s) : 1n;
    let size = (elements * BigInt(bitsOf(DTYPES[d]))) / 8n;
    if (size > 4096n || r.next() < 0.05) size = BigInt(int(r, 64));
    let begin = offset;
    if (r.next() < 0.05) begin += BigInt(int(r, 3)) - 1n;
    const end = r.next() < 0.03 ? pick(r, [MAX_SAFE + 1n, 2n ** 64n - 1n, 2n ** 64n, begin - 1n]) : begin + size;
    const dtype = r.next() < 0.03 ? pick(r, ['"F33"', '"f32"', '3', '"BF16 "']) : `"${DTYPES[d]}"`;
    const fields = [`"dtype":${dtype}`, `"shape":[${shape.join(',')}]`, `"data_offsets":[${begin},${end}]`];
    if (r.next() < 0.1) fields.reverse();
    if (r.next() < 0.02) fields.pop();
    parts.push(`"${name}":{${fields.join(r.next() < 0.1 ? ' , ' : ',')}}`);
    if (end > offset && end - offset < 1n << 20n) offset = end;
  }
  if (r.next() < 0.4) {
    const meta =
      r.next() < 0.1
        ? 'null'
        : `{${Array.from({ length: int(r, 3) }, (_, i) => `"${pick(r, ['k', 'format', '\\u00e9', '__proto__'])}${i}":"${pick(r, ['pt', 'v\\n', '\u00e9', ''])}"`).join(',')}}`;
    parts.splice(int(r, parts.length + 1), 0, `"__metadata__":${meta}`);
  }
  let text = `{${parts.join(',')}}`;
  if (r.next() < 0.3) text += ' '.repeat((8 - (enc.encode(text).length % 8)) % 8);
  const header = enc.encode(text);
  const dataLen = Number(offset) + (r.next() < 0.05 ? int(r, 5) - 2 : 0);
  const out = new Uint8Array(8 + header.length + Math.max(0, dataLen));
  new DataView(out.buffer).setBigUint64(0, BigInt(header.length), true);
  out.set(header, 8);
  for (let i = 8 + header.length; i < out.length; i++) out[i] = int(r, 256);
  return out;
}

// One to four edits of a file: bit flips, interesting bytes, JSON tokens
// inserted, ranges removed or repeated, a cut, another length prefix.
function mutated(r, bytes) {
  let b = bytes.slice();
  const edits = r.next() < 0.6 ? 1 : 2 + int(r, 3);
  for (let e = 0; e < edits; e++) {
    const at = b.length === 0 ? 0 : int(r, b.length);
    // Most edits land in the header, where the grammar is.
    const n = b.length >= 8 ? Number(new DataView(b.buffer, b.byteOffset).getBigUint64(0, true) & 0xffffffn) : 0;
    const inHeader = b.length > 8 ? 8 + int(r, Math.max(1, Math.min(n, b.length - 8))) : at;
    // (Cuts and length prefixes are 2 of 12: most edits reach the grammar.)
    switch ([0, 0, 1, 1, 2, 2, 3, 4, 5, 6, 7, 7][int(r, 12)]) {
      case 0:
        if (b.length > 0) b[inHeader] ^= 1 << int(r, 8);
        break;
      case 1:
        if (b.length > 0)
          b[inHeader] = pick(
            r,
            [0x00, 0xff, 0x22, 0x5c, 0x7b, 0x7d, 0x2c, 0x3a, 0x5b, 0x5d, 0x30, 0x39, 0x20, 0x80, 0xc0],
          );
        break;
      case 2: {
        const t = enc.encode(pick(r, TOKENS));
        const c = new Uint8Array(b.length + t.length);
        c.set(b.subarray(0, inHeader));
        c.set(t, inHeader);
        c.set(b.subarray(inHeader), inHeader + t.length);
        b = c;
        break;
      }
      case 3: {
        const len = 1 + int(r, 8);
        b = Uint8Array.from([...b.subarray(0, inHeader), ...b.subarray(inHeader + len)]);
        break;
      }
      case 4: {
        const len = 1 + int(r, 16);
        const piece = b.slice(at, at + len);
        b = Uint8Array.from([...b.subarray(0, at), ...piece, ...b.subarray(at)]);
        break;
      }
      case 5:
        b = b.subarray(0, int(r, b.length + 1)).slice();
        break;
      case 6:
        if (b.length >= 8) {
          const v = new DataView(b.buffer, b.byteOffset);
          const cur = v.getBigUint64(0, true);
          v.setBigUint64(
            0,
            BigInt.asUintN(
              64,
              pick(r, [cur + 1n, cur - 1n, cur + 8n, 0n, 2n ** 64n - 1n, 100000001n, BigInt(b.length), cur << 32n]),
            ),
            true,
          );
        }
        break;
      default: {
        // A digit run replaced by another number.
        const text = new TextDecoder('latin1').decode(b);
        const runs = [...text.matchAll(/\d+/g)].filter((m) => m.index >= 8);
        if (runs.length > 0) {
          const m = pick(r, runs);
          const v = enc.encode(
            pick(r, [
              '0',
              '1',
              '9007199254740992',
              '9007199254740993',
              '18446744073709551615',
              '18446744073709551616',
              String(Number(m[0]) + 1),
            ]),
          );
          b = Uint8Array.from([...b.subarray(0, m.index), ...v, ...b.subarray(m.index + m[0].length)]);
        }
      }
    }
  }
  return b;
}

/** The cases: the seeds, then `count` generated from `seed` (new files and mutations). */
export function* cases(seeds, count, seed) {
  for (const s of seeds) yield s;
  const r = rng(seed);
  const pool = seeds.map((s) => s.bytes);
  for (let i = 0; i < count; i++) {
    const x = r.next();
    let bytes;
    if (x < 0.3) bytes = generated(r);
    else if (x < 0.6) bytes = mutated(r, pick(r, pool));
    else bytes = mutated(r, generated(r));
    // Keep a few of what we made as material for later mutations.
    if (pool.length < 4096 && r.next() < 0.01) pool.push(bytes);
    yield { name: `generated/${seed}/${i}`, bytes };
  }
}

// ------------------------------------------------------------------ native

// inspect's JSON with every number of a shape, data_offsets and header_size
// kept as its digits (a JS number would round those above 2^53). An
// unescaped quote cannot occur inside a JSON string, so the keys matched are
// keys.
function parseInspect(line) {
  const exact = line
    .replace(
      /"(shape|data_offsets)":\[([\d,]*)\]/g,
      (_, k, v) =>
        `"${k}":[${
          v === ''
            ? ''
            : v
                .split(',')
                .map((d) => `"${d}"`)
                .join(',')
        }]`,
    )
    .replace(/"header_size":(\d+)/g, '"header_size":"$1"');
  return JSON.parse(exact);
}

/**
 * The native side: the inspect command (`inspectCmd`: its words) on a batch
 * of files at once. Each batch is written to files in `dir` and inspected in
 * one process (`inspect --json --no-hash FILE...` prints one JSON line per
 * file): one process per case would spend its time starting processes.
 */
export class Native {
  constructor(inspectCmd, dir) {
    this.inspectCmd = inspectCmd;
    this.dir = dir;
    mkdirSync(dir, { recursive: true });
  }
  /** inspect's JSON documents (parsed) for these files, in order. */
  async describe(files) {
    const paths = files.map((bytes, i) => {
      const path = join(this.dir, `${i}.safetensors`);
      writeFileSync(path, bytes);
      return path;
    });
    const [exe, ...args] = this.inspectCmd;
    const { code, stdout, stderr } = await new Promise((resolve, reject) => {
      const child = spawn(exe, [...args, '--json', '--no-hash', ...paths], { stdio: ['ignore', 'pipe', 'pipe'] });
      const out = [];
      const err = [];
      child.stdout.on('data', (c) => out.push(c));
      child.stderr.on('data', (c) => err.push(c));
      child.on('error', reject);
      child.on('close', (code) =>
        resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }),
      );
    });
    const lines = stdout.split('\n');
    if (lines.pop() !== '' || lines.length !== files.length || (code !== 0 && code !== 1)) {
      throw new Error(
        `${this.inspectCmd.join(' ')} on ${files.length} files: exit ${code}, ${lines.length} lines: ${stderr}`,
      );
    }
    return lines.map(parseInspect);
  }
}

/** The inspect command itself on one file (`inspectCmd`: the command's words). */
export function inspectOnce(inspectCmd, path) {
  const [exe, ...args] = inspectCmd;
  const r = spawnSync(exe, [...args, path, '--json', '--no-hash'], { encoding: 'utf8' });
  if (r.status !== 0 && r.status !== 1)
    throw new Error(`${inspectCmd.join(' ')} ${path}: exit ${r.status}: ${r.stderr}`);
  return parseInspect(r.stdout.trim());
}

// ------------------------------------------------------------- comparison

/** fromBytes's answer in inspect's terms (numbers as digits). */
export function jsDescribe(stn, bytes) {
  try {
    const st = stn.SafeTensors.fromBytes(bytes);
    return {
      ok: true,
      header_size: String(st.headerSize),
      metadata: st.metadata(),
      tensors: st.tensors().map((t) => ({
        name: t.name,
        dtype: t.dtype,
        shape: t.shape.map(String),
        data_offsets: t.dataOffsets.map(String),
      })),
    };
  } catch (e) {
    if (!(e instanceof stn.SafeTensorsError))
      return { ok: false, error: { kind: `not a SafeTensorsError: ${e?.stack ?? e}` } };
    return { ok: false, error: { kind: e.kind, offset: e.offset, tensor: e.tensor } };
  }
}

// JSON text with every object's keys sorted (serde_json's key order depends
// on its features).
function canonical(v) {
  const sort = (x) =>
    Array.isArray(x)
      ? x.map(sort)
      : x !== null && typeof x === 'object'
        ? Object.fromEntries(
            Object.keys(x)
              .sort()
              .map((k) => [k, sort(x[k])]),
          )
        : x;
  return JSON.stringify(sort(v));
}

const sortedEntries = (m) => (m === null ? null : Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/**
 * How fromBytes's answer and inspect's differ: null when they agree,
 * 'allowed' for the JS layer's 2^53 refusals of a file inspect accepts,
 * else a description.
 */
export function difference(js, native) {
  if (js.ok !== native.ok) {
    if (!js.ok && native.ok && allowedRefusal(js.error.kind, native)) return 'allowed';
    return `verdict: js ${js.ok ? 'ok' : js.error.kind}, native ${native.ok ? 'ok' : native.error.kind}`;
  }
  if (!js.ok) {
    const n = native.error;
    if (js.error.kind !== n.kind) return `kind: js ${js.error.kind}, native ${n.kind}`;
    if (js.error.offset !== n.offset) return `offset (${n.kind}): js ${js.error.offset}, native ${n.offset}`;
    if (js.error.tensor !== n.tensor)
      return `tensor (${n.kind}): js ${JSON.stringify(js.error.tensor)}, native ${JSON.stringify(n.tensor)}`;
    return null;
  }
  if (js.header_size !== native.header_size) return `header_size: js ${js.header_size}, native ${native.header_size}`;
  if (JSON.stringify(sortedEntries(js.metadata)) !== JSON.stringify(sortedEntries(native.metadata))) return 'metadata';
  if (js.tensors.length !== native.tensors.length)
    return `tensor count: js ${js.tensors.length}, native ${native.tensors.length}`;
  for (let i = 0; i < js.tensors.length; i++) {
    const [a, b] = [js.tensors[i], native.tensors[i]];
    for (const k of ['name', 'dtype', 'shape', 'data_offsets']) {
      if (JSON.stringify(a[k]) !== JSON.stringify(b[k]))
        return `tensor ${i} ${k}: js ${JSON.stringify(a[k])}, native ${JSON.stringify(b[k])}`;
    }
  }
  return null;
}

function allowedRefusal(kind, native) {
  const dataOffset = BigInt(native.header_size) + 8n;
  if (kind === 'OffsetTooLarge') return native.tensors.some((t) => dataOffset + BigInt(t.data_offsets[1]) > MAX_SAFE);
  if (kind === 'DimensionTooLarge') return native.tensors.some((t) => t.shape.some((d) => BigInt(d) > MAX_SAFE));
  return false;
}

/**
 * Runs the seeds and `count` generated cases through fromBytes and the
 * inspect command, `batch` files per run; checks a batch's answer against
 * the command on that file alone for the seeds and every `crossEvery`-th
 * generated case. Resolves
 * to the counts and the first disagreements (also written, with their
 * bytes, under `outDir`).
 */
export async function runBoundary({
  stn,
  repo,
  count,
  seed = 1,
  inspectCmd,
  batch = 2000,
  crossEvery = 500,
  outDir,
  log = () => {},
}) {
  if (!existsSync(inspectCmd[0]))
    throw new Error(`${inspectCmd[0]} is missing: build it (make test-js does: see the Makefile's INSPECT_JSON)`);
  const seeds = seedFiles(repo);
  const native = new Native(inspectCmd, join(outDir, 'batch'));
  const stats = { cases: 0, seeds: seeds.length, agreed: 0, allowed: 0, crossChecked: 0, disagreements: [] };
  mkdirSync(outDir, { recursive: true });
  const record = (c, what) => {
    if (stats.disagreements.length < 20) {
      const file = join(outDir, `case-${stats.disagreements.length}.safetensors`);
      writeFileSync(file, c.bytes);
      stats.disagreements.push({ case: c.name, what, file });
    } else stats.disagreements.push({ case: c.name, what });
  };
  let pending = [];
  let generatedSeen = 0;
  const crossFile = join(outDir, 'cross.safetensors');
  const flush = async () => {
    const answers = await native.describe(pending.map((c) => c.bytes));
    for (let i = 0; i < pending.length; i++) {
      const c = pending[i];
      const d = difference(jsDescribe(stn, c.bytes), answers[i]);
      stats.cases++;
      if (d === null) stats.agreed++;
      else if (d === 'allowed') stats.allowed++;
      else record(c, d);
      if (c.cross) {
        writeFileSync(crossFile, c.bytes);
        const once = inspectOnce(inspectCmd, crossFile);
        stats.crossChecked++;
        if (canonical(once) !== canonical(answers[i])) {
          record(
            c,
            `${inspectCmd.join(' ')} on a batch and on the file alone differ: ${JSON.stringify(answers[i])} vs ${JSON.stringify(once)}`,
          );
        }
      }
    }
    pending = [];
    if (stats.cases % 100000 < batch) log(`${stats.cases} cases, ${stats.disagreements.length} disagreements`);
  };
  for (const c of cases(seeds, count, seed)) {
    const isSeed = !c.name.startsWith('generated/');
    if (!isSeed) generatedSeen++;
    pending.push({ ...c, cross: isSeed || generatedSeen % crossEvery === 0 });
    if (pending.length >= batch) await flush();
  }
  if (pending.length > 0) await flush();
  return stats;
}
