// make bench-wasm: the npm package against the common JS approach, in Node.
//
// 1. Header parsing, on the core benchmark's four headers
//    (core/benches/headers/mod.rs, rebuilt byte for byte by lib/headers.js):
//    - ours, open: SafeTensors.fromHeader(prefix, size).names(): the JS↔wasm
//      crossing, the core's parse and validation, the description (offsets,
//      dtypes, shapes, validated) and every name as a JS string — what the
//      JS approach gives;
//    - ours, all objects: the same plus tensors() (a Tensor object with its
//      shape array for every tensor) and metadata();
//    - JS: DataView + TextDecoder + JSON.parse + a validation loop (lib/jsparse.js).
// 2. Decoding BF16, F16, F8_E4M3 and F4 to Float32 on weight-like values
//    (normal(0, 0.02) rounded to the dtype; for F4, whose codes an MX block
//    scale multiplies, normal(0, 2); 16 Mi elements): decodeFloat32
//    into a reused output (the wasm SIMD decoders) and toFloat32's way
//    (decodeFloat32 allocating its output) against a plain per-element JS
//    loop of bit operations into a reused output (for F8_E4M3 also a
//    256-entry table lookup, the faster JS way, in its own column; F4's JS
//    loop looks each nibble up in its 16 values).
// 3. The two .wasm modules' sizes (reader and writer), raw and gzipped.
//
// Timing: process CPU time (user + system, so a shared machine's waiting
// is not counted), batches of at least 20 ms, ours and JS interleaved.
// Times and ratios are of the fastest batch of each (other work on the
// machine only ever adds time: on a shared machine the median moves by
// ±15% from run to run, the fastest by a few percent); the medians'
// ratios are printed beside them.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { SafeTensors, decodeFloat32 } from 'safetensors-nano';
import { benchHeaders } from './lib/headers.js';
import { jsParseHeader } from './lib/jsparse.js';

const quick = process.argv.includes('--quick');
const BATCH_MS = 20;
const ROUNDS = quick ? 5 : 61;

/** CPU milliseconds of `n` calls. */
function cpuMs(fn, n) {
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) fn();
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / 1000;
}

function batch(fn) {
  let n = 1;
  for (;;) {
    const dt = cpuMs(fn, n);
    if (dt >= BATCH_MS) return { n, dt };
    n = dt < 1 ? n * 8 : Math.ceil((n * BATCH_MS * 1.2) / dt);
  }
}

/** µs per call of each function, `{ best, median }` of interleaved batches. */
function race(fns) {
  const sizes = fns.map((fn) => batch(fn).n); // warm-up and calibration
  const samples = fns.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    fns.forEach((fn, i) => {
      samples[i].push((cpuMs(fn, sizes[i]) / sizes[i]) * 1000);
    });
  }
  return samples.map((s) => {
    s.sort((a, b) => a - b);
    return { best: s[0], median: s[s.length >> 1] };
  });
}

const _pad = (s, n) => String(s).padStart(n);
const fmt = (us) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`);

console.log(
  `safetensors-nano ${JSON.parse(readFileSync(new URL('./node_modules/safetensors-nano/package.json', import.meta.url))).version} — Node ${process.version}`,
);
console.log("\n## Header parsing (the core benchmark's four headers)\n");
console.log(`Fastest of ${ROUNDS} interleaved batches; the last column, the medians' ratio.\n`);
console.log(
  '| header | bytes | ours: open | ours: all objects | JS: JSON.parse + checks | JS ÷ open | JS ÷ all objects | JS ÷ open (medians) |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
const parse = [];
for (const h of benchHeaders()) {
  const size = Number(h.fileSize);
  // Both sides must agree before they are timed.
  const ours = SafeTensors.fromHeader(h.header, size);
  const js = jsParseHeader(h.header, size);
  if (ours.length !== h.tensors || js.tensors.length !== h.tensors) throw new Error(`${h.name}: tensor counts differ`);
  if (ours.names().join('\n') !== js.tensors.map((t) => t.name).join('\n')) throw new Error(`${h.name}: orders differ`);
  const [openT, allT, baseT] = race([
    () => SafeTensors.fromHeader(h.header, size).names(),
    () => {
      const st = SafeTensors.fromHeader(h.header, size);
      st.tensors();
      st.metadata();
    },
    () => jsParseHeader(h.header, size),
  ]);
  const [open, all, base] = [openT.best, allT.best, baseT.best];
  const medianRatio = baseT.median / openT.median;
  parse.push({ name: h.name, open, all, base, medianRatio });
  const mbs = (us) => `${fmt(us)} (${(h.header.length / us) | 0} MB/s)`;
  console.log(
    `| ${h.name} | ${h.header.length} | ${mbs(open)} | ${mbs(all)} | ${mbs(base)} | ${(base / open).toFixed(2)}× | ${(base / all).toFixed(2)}× | ${medianRatio.toFixed(2)}× |`,
  );
}

// ---- toFloat32 ----

function jsBf16(u16, out) {
  const o = new Uint32Array(out.buffer, out.byteOffset, out.length);
  for (let i = 0; i < u16.length; i++) o[i] = u16[i] << 16;
}

function jsF16(u16, out) {
  const o = new Uint32Array(out.buffer, out.byteOffset, out.length);
  for (let i = 0; i < u16.length; i++) {
    const h = u16[i];
    const sign = (h & 0x8000) << 16;
    const exp = (h >> 10) & 0x1f;
    const man = h & 0x3ff;
    if (exp === 0x1f) o[i] = sign | 0x7f800000 | (man << 13) | (man ? 0x400000 : 0);
    else if (exp !== 0) o[i] = sign | ((exp + 112) << 23) | (man << 13);
    else if (man === 0) o[i] = sign;
    else out[i] = (sign ? -man : man) * 2 ** -24;
  }
}

// F8_E4M3 the way the two functions above are written: bit operations on
// the code's fields, the subnormals through a multiplication. (No
// infinities; exponent and mantissa all ones is NaN.)
function jsE4m3(u8, out) {
  const o = new Uint32Array(out.buffer, out.byteOffset, out.length);
  for (let i = 0; i < u8.length; i++) {
    const c = u8[i];
    const sign = (c & 0x80) << 24;
    const exp = (c >> 3) & 0xf;
    const man = c & 7;
    if (exp === 15 && man === 7) o[i] = sign | 0x7fc00000;
    else if (exp !== 0) o[i] = sign | ((exp + 120) << 23) | (man << 20);
    else if (man === 0) o[i] = sign;
    else out[i] = (sign ? -man : man) * 2 ** -9;
  }
}

// The other way users decode 8-bit floats: a 256-entry table (reported
// beside the bit operations: it is the faster of the two JS loops).
const E4M3 = new Float32Array(256).map((_, c) => {
  const s = c & 0x80 ? -1 : 1;
  const e = (c >> 3) & 0xf;
  const m = c & 7;
  if (e === 15 && m === 7) return NaN;
  return s * (e === 0 ? m * 2 ** -9 : (1 + m / 8) * 2 ** (e - 7));
});
function jsE4m3Table(u8, out) {
  for (let i = 0; i < u8.length; i++) out[i] = E4M3[u8[i]];
}

const N = quick ? 1 << 22 : 1 << 24;
// Weight-like values: normal(0, 0.02) (Box-Muller on a seeded LCG), each
// rounded to nearest (ties to even) in the dtype. Uniformly random codes
// would make the JS loops mispredict their branches, which real weights
// do not.
let x = 12345;
const uniform = () => ((x = (x * 1103515245 + 12345) >>> 0) + 0.5) / 2 ** 32;
const weights = new Float32Array(N);
for (let i = 0; i < N; i += 2) {
  const r = Math.sqrt(-2 * Math.log(uniform())) * 0.02;
  const t = 2 * Math.PI * uniform();
  weights[i] = r * Math.cos(t);
  weights[i + 1] = r * Math.sin(t);
}
const wbits = new Uint32Array(weights.buffer);
const bf16 = new Uint16Array(N);
const f16 = new Uint16Array(N);
const e4m3 = new Uint8Array(N);
const e4m3Values = [...E4M3.subarray(0, 127)]; // the positive codes, increasing
for (let i = 0; i < N; i++) {
  const b = wbits[i];
  bf16[i] = (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
  f16[i] = toF16(b);
  e4m3[i] = toE4m3(weights[i]);
}

/** f32 bits → F16 bits, rounded to nearest, ties to even (finite, |v| < 65504). */
function toF16(b) {
  const sign = (b >>> 16) & 0x8000;
  const e = ((b >>> 23) & 0xff) - 112;
  const m = (b & 0x7fffff) | 0x800000;
  const shift = e > 0 ? 13 : 14 - e; // a subnormal F16 keeps fewer bits
  if (shift > 24) return sign;
  const half = 1 << (shift - 1);
  const rest = m & ((1 << shift) - 1);
  let r = e > 0 ? (e << 10) | ((m & 0x7fffff) >>> 13) : m >>> shift;
  if (rest > half || (rest === half && r & 1)) r++;
  return sign | r;
}

/** A value → the nearest F8_E4M3 code (ties to the even code; |v| ≤ 448). */
function toE4m3(v) {
  const a = Math.abs(v);
  let lo = 0;
  let hi = 126;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (e4m3Values[mid] <= a) lo = mid;
    else hi = mid - 1;
  }
  let c = lo;
  if (c < 126) {
    const below = a - e4m3Values[c];
    const above = e4m3Values[c + 1] - a;
    if (above < below || (above === below && c & 1)) c++;
  }
  return c | (v < 0 ? 0x80 : 0);
}

// F4 (E2M1): two codes a byte, the first in the low nibble.
const F4 = [0, 0.5, 1, 1.5, 2, 3, 4, 6, -0, -0.5, -1, -1.5, -2, -3, -4, -6];
const f4 = new Uint8Array(N / 2);
for (let i = 0; i < N; i++) f4[i >> 1] |= toF4(weights[i] * 100) << ((i & 1) * 4);

/** A value → the nearest F4 code (ties to the even code; beyond ±6, ±6). */
function toF4(v) {
  let best = 0;
  for (let c = 1; c < 8; c++) {
    const d = Math.abs(Math.abs(v) - F4[c]) - Math.abs(Math.abs(v) - F4[best]);
    if (d < 0 || (d === 0 && (c & 1) === 0)) best = c;
  }
  return best | (v < 0 ? 8 : 0);
}

function jsF4(u8, out) {
  for (let i = 0; i < out.length; i++) out[i] = F4[(u8[i >> 1] >> ((i & 1) * 4)) & 15];
}

const outA = new Float32Array(N);
const outB = new Float32Array(N);
console.log(
  `\n## Decoding to Float32 (${N / 2 ** 20} Mi weight-like elements: normal(0, 0.02) in the dtype; F4's codes normal(0, 2), as a block scale leaves them)\n`,
);
console.log(`Fastest of ${ROUNDS} interleaved batches; the last column, the medians' ratio.\n`);
console.log(
  '| dtype | ours: decodeFloat32 into a reused output | ours: toFloat32 (allocates) | plain JS loop (bit operations; F4: a lookup per nibble) | JS ÷ ours | JS ÷ toFloat32 | JS ÷ ours (medians) | JS table lookup | table ÷ ours |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
const decode = [];
for (const [dtype, bytes, js, table] of [
  ['BF16', bf16, jsBf16],
  ['F16', f16, jsF16],
  ['F8_E4M3', e4m3, jsE4m3, jsE4m3Table],
  ['F4', f4, jsF4],
]) {
  decodeFloat32(dtype, bytes, outA);
  // Both sides (and the table) must agree before they are timed.
  for (const other of table === undefined ? [js] : [js, table]) {
    other(bytes, outB);
    const a = new Uint32Array(outA.buffer);
    const b = new Uint32Array(outB.buffer);
    for (let i = 0; i < N; i++) {
      if (a[i] !== b[i] && !(Number.isNaN(outA[i]) && Number.isNaN(outB[i])))
        throw new Error(`${dtype}: ${other.name} and ours differ at ${i}: ${outA[i]} vs ${outB[i]}`);
    }
  }
  const fns = [() => decodeFloat32(dtype, bytes, outA), () => decodeFloat32(dtype, bytes), () => js(bytes, outB)];
  if (table !== undefined) fns.push(() => table(bytes, outB));
  const [oursT, allocT, baseT, tableT] = race(fns);
  const [ours, alloc, base] = [oursT.best, allocT.best, baseT.best];
  const rate = (us) => `${(N / us).toFixed(0)} M/s`;
  decode.push({ dtype, ours, base, medianRatio: baseT.median / oursT.median });
  const tableCells =
    tableT === undefined ? '— | —' : `${rate(tableT.best)} (${fmt(tableT.best)}) | ${(tableT.best / ours).toFixed(2)}×`;
  console.log(
    `| ${dtype} | ${rate(ours)} (${fmt(ours)}) | ${rate(alloc)} (${fmt(alloc)}) | ${rate(base)} (${fmt(base)}) | ${(base / ours).toFixed(2)}× | ${(base / alloc).toFixed(2)}× | ${(baseT.median / oursT.median).toFixed(2)}× | ${tableCells} |`,
  );
}

const pkgDir = dirname(createRequire(import.meta.url).resolve('safetensors-nano/package.json'));
const size = (file) => {
  const bytes = readFileSync(join(pkgDir, file));
  return `${bytes.length} bytes raw, ${gzipSync(bytes, { level: 9 }).length} bytes gzip -9`;
};
console.log('\n## Size\n');
console.log(`reader .wasm (loaded to open files): ${size('safetensors_nano_wasm_bg.wasm')} (goal ≤ 40 KB raw)`);
console.log(`writer .wasm (loaded by the first serialize): ${size('safetensors_nano_writer_bg.wasm')}`);
const worst = Math.min(...parse.map((p) => p.base / p.open));
const worstMedian = Math.min(...parse.map((p) => p.medianRatio));
// The goal's dtypes (F4's row is shown, not part of the goal).
const slowest = decode.filter((d) => d.dtype !== 'F4').reduce((w, d) => (d.base / d.ours < w.base / w.ours ? d : w));
console.log(
  `decode: plain JS loop ÷ ours ≥ ${(slowest.base / slowest.ours).toFixed(2)}× (${slowest.dtype}), fastest batches (goal ≥ 4× for BF16, F16 and F8_E4M3)`,
);
console.log(
  `\nparse: JS approach ÷ ours (open) ≥ ${worst.toFixed(2)}× on all four headers, fastest batches (medians: ≥ ${worstMedian.toFixed(2)}×) (goal ≥ 4×)`,
);
