// Slices of a tensor (Tensor.readSlice): a spec checked and resolved as
// numpy resolves it, the selection laid out as runs of bytes exactly as the
// core lays it out (core/src/view/slice.rs: every run the same length, the
// inner dimensions selected whole merged with the next one out when that
// one is a step-1 range), and the runs grouped into bounded reads.
//
// The planning is here, not in wasm: the reader .wasm has no room left
// under its size limit, and the arithmetic is small. A golden file that the
// core writes (tests/js/lib/slice-ranges.json) keeps the two in step.

import { KIND, fail } from '../errors/safetensors-error.js';

/** Bytes a gap between two runs may have and still be read through rather than cost a new request. */
export const SLICE_GAP_BYTES = 64 * 1024;
/** At most this many reads per slice: the gap allowance doubles until the plan fits. */
export const SLICE_MAX_READS = 4096;
/** Bytes of one read at most (a run longer than this is read in parts). */
export const SLICE_READ_BYTES = 8 * 1024 * 1024;

// Elements of a dtype of `bits` bits that make a whole number of bytes (as
// the core's `granule`): 1 for whole-byte dtypes, 2 for F4, 4 for the F6s.
function granule(bits) {
  let g = 1;
  while ((g * bits) % 8 !== 0) g *= 2;
  return g;
}

const isInt = (v) => Number.isSafeInteger(v);

function describe(v) {
  if (v === undefined) return 'undefined';
  if (typeof v === 'bigint') return `${v}n`;
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

// Resolves one spec entry against a dimension of `size` as numpy does:
// negative numbers count from the end, slice bounds are clamped, an index
// must fall inside. Returns { start, count, step, kept }; `step` is 1 when
// count ≤ 1 (then "step 1" means "contiguous", as in the core).
function resolve(entry, size, dim, where) {
  const usage =
    `spec[${dim}] is ${describe(entry)}: use null (the whole dimension), an integer index, or [start, ` +
    'end] / [start, end, step] with integers or null';
  if (entry === null || entry === undefined) return { start: 0, count: size, step: 1, kept: true };
  if (typeof entry === 'number') {
    if (!isInt(entry)) fail(KIND.InvalidArgument, usage, where);
    const i = entry < 0 ? entry + size : entry;
    if (i < 0 || i >= size) {
      fail(
        KIND.SliceOutOfRange,
        `index ${entry} is out of range for dimension ${dim} of size ${size}: use an index from ${-size} to ` +
          `${size - 1}`,
        where,
      );
    }
    return { start: i, count: 1, step: 1, kept: false };
  }
  if (!Array.isArray(entry) || entry.length < 2 || entry.length > 3) fail(KIND.InvalidArgument, usage, where);
  const [a, b, s = null] = entry;
  for (const v of [a, b, s]) if (v !== null && !isInt(v)) fail(KIND.InvalidArgument, usage, where);
  const step = s ?? 1;
  if (step < 1) {
    fail(
      KIND.SliceInvalidRange,
      `spec[${dim}] has step ${step}: a step must be 1 or more (reversed slices are not read; reverse the result ` +
        'instead)',
      where,
    );
  }
  const bound = (v, open) => {
    if (v === null) return open;
    const x = v < 0 ? v + size : v;
    return Math.min(Math.max(x, 0), size);
  };
  const start = bound(a, 0);
  const end = bound(b, size);
  const count = end > start ? Math.floor((end - start - 1) / step) + 1 : 0;
  return { start, count, step: count > 1 ? step : 1, kept: true };
}

/**
 * Checks `spec` against a tensor of `shape` whose elements have `bits`
 * bits, and lays the selection out as runs. Returns `{ shape, byteLength,
 * runBytes, runCount, runStarts() }`: the result's shape and byte length,
 * the bytes of every run, how many there are, and a generator of each run's
 * first byte relative to the tensor's data, in increasing order (row-major).
 * Errors (`where`: the tensor, for SafeTensorsError): InvalidArgument,
 * SliceTooManyIndices, SliceOutOfRange, SliceInvalidRange, SliceSubByte.
 */
export function planSlice(shape, bits, spec, where = {}) {
  if (!Array.isArray(spec)) {
    fail(
      KIND.InvalidArgument,
      `spec is ${describe(spec)}: pass an array with one entry per leading dimension ([] for the whole tensor)`,
      where,
    );
  }
  const rank = shape.length;
  if (spec.length > rank) {
    fail(
      KIND.SliceTooManyIndices,
      `${spec.length} slice entries for a tensor of rank ${rank}: give at most one per dimension`,
      where,
    );
  }
  const axes = shape.map((size, dim) => resolve(spec[dim] ?? null, size, dim, where));
  const resultShape = axes.filter((a) => a.kept).map((a) => a.count);
  const elements = resultShape.reduce((n, c) => n * c, 1);
  const g = granule(bits);
  // Bytes of `n` elements, n a multiple of the granule (exact in doubles
  // for any n a tensor can hold: n / g ≤ its bytes).
  const bytesOf = (n) => (n / g) * ((g * bits) / 8);
  const empty = { shape: resultShape, byteLength: 0, runBytes: 0, runCount: 0, *runStarts() {} };
  if (elements === 0) return empty;

  const { strides, outer, runElements, base } = runLayout(shape, axes);
  const walked = axes.slice(0, outer);
  let first = base;
  for (let d = 0; d < outer; d++) first += walked[d].start * strides[d];
  // Sub-byte dtypes: every run must start and end on a byte (the core's rule).
  const whole = (n) => n % g === 0;
  if (!(whole(runElements) && whole(first) && walked.every((a, d) => a.count <= 1 || whole(a.step * strides[d])))) {
    fail(
      KIND.SliceSubByte,
      `this slice of a ${bits}-bit dtype starts or ends inside a byte: make starts, steps and lengths on the sliced ` +
        `dimensions multiples of ${g} elements along the last one, or read the whole rows`,
      where,
    );
  }
  const runCount = walked.reduce((n, a) => n * a.count, 1);
  return {
    shape: resultShape,
    byteLength: bytesOf(elements),
    runBytes: bytesOf(runElements),
    runCount,
    // An odometer over the walked dimensions, innermost fastest.
    *runStarts() {
      const digit = new Array(outer).fill(0);
      let at = first;
      for (let i = 0; i < runCount; i++) {
        yield bytesOf(at);
        for (let d = outer - 1; d >= 0; d--) {
          const a = walked[d];
          if (digit[d] + 1 < a.count) {
            digit[d]++;
            at += a.step * strides[d];
            break;
          }
          at -= digit[d] * a.step * strides[d];
          digit[d] = 0;
        }
      }
    },
  };
}

// Where a slice's runs lie: each dimension's stride in elements, how many leading dimensions
// are walked (`outer`: one run per combination of their indices), the elements of one run and
// the first run's offset within them. The last dimension not selected whole bounds the runs;
// the ones after it are merged into every run, and it too when it is contiguous.
function runLayout(shape, axes) {
  const rank = shape.length;
  let last = -1;
  axes.forEach((a, d) => {
    if (!(a.start === 0 && a.count === shape[d])) last = d;
  });
  const strides = new Array(rank);
  let stride = 1;
  for (let d = rank - 1; d >= 0; d--) {
    strides[d] = stride;
    stride *= shape[d];
  }
  if (last < 0) return { strides, outer: 0, runElements: stride, base: 0 };
  if (axes[last].step === 1) {
    return {
      strides,
      outer: last,
      runElements: axes[last].count * strides[last],
      base: axes[last].start * strides[last],
    };
  }
  return { strides, outer: last + 1, runElements: strides[last], base: 0 };
}

// The plan's runs cut to at most `readBytes` each, as [begin, end] pairs.
function* pieces(plan, readBytes) {
  for (const start of plan.runStarts()) {
    for (let at = 0; at < plan.runBytes; at += readBytes)
      yield [start + at, start + Math.min(plan.runBytes, at + readBytes)];
  }
}

// Reads of the plan with gap allowance `gap`: consecutive pieces go in one
// read while the gap before the next is at most `gap` and the read stays
// within `readBytes`. Yields [begin, end] pairs.
function* reads(plan, gap, readBytes) {
  let begin = -1;
  let end = -1;
  for (const [b, e] of pieces(plan, readBytes)) {
    if (begin >= 0 && b - end <= gap && e - begin <= readBytes) {
      end = e;
      continue;
    }
    if (begin >= 0) yield [begin, end];
    begin = b;
    end = e;
  }
  if (begin >= 0) yield [begin, end];
}

/**
 * The reads for a plan: `{ gap, count, bytes }`. Runs closer than the gap
 * allowance are read together (the bytes between them are read and
 * dropped); the allowance starts at `gap` and doubles while the plan needs
 * more than `maxReads` reads; no read is longer than `readBytes`, so a
 * slice spread over a huge tensor is read as its covering span in
 * `readBytes` parts at worst. `reads()` gives the [begin, end] pairs.
 */
export function planReads(
  plan,
  { gap = SLICE_GAP_BYTES, maxReads = SLICE_MAX_READS, readBytes = SLICE_READ_BYTES } = {},
) {
  for (;;) {
    let count = 0;
    let bytes = 0;
    for (const [b, e] of reads(plan, gap, readBytes)) {
      count++;
      bytes += e - b;
      if (count > maxReads && gap < readBytes) break;
    }
    if (count <= maxReads || gap >= readBytes) {
      const g = gap;
      return { gap: g, count, bytes, reads: () => reads(plan, g, readBytes), pieces: () => pieces(plan, readBytes) };
    }
    gap *= 2;
  }
}
