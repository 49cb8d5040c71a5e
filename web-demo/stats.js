// Streaming statistics over decoded tensor chunks. Pure functions and classes, no DOM and no
// wasm: the worker feeds them Float32Array chunks, Node tests can feed them arrays.

import { DTYPE_BITS, floatsPerElement, isIntegerDtype } from './format.js';

/** Largest chunk, in bytes, for both the raw slice and the decoded Float32Array. */
export const CHUNK_BYTES = 64 * 1024 * 1024;

/**
 * Elements per chunk for a dtype: the raw bytes and the decoded floats both stay within
 * `chunkBytes`, and the element count is a multiple of 8 so every chunk starts on a byte
 * boundary even for 4- and 6-bit dtypes.
 */
export function elementsPerChunk(dtype, chunkBytes = CHUNK_BYTES) {
  const bits = DTYPE_BITS[dtype];
  if (bits === undefined) throw new Error(`unknown dtype ${dtype}`);
  const perElem = Math.max(bits / 8, 4 * floatsPerElement(dtype));
  const n = Math.floor(chunkBytes / perElem / 8) * 8;
  return Math.max(8, n);
}

/** The chunks of a tensor of `count` elements: element and byte ranges, relative to the tensor. */
export function* chunkPlan(dtype, count, chunkBytes = CHUNK_BYTES) {
  const bits = DTYPE_BITS[dtype];
  const step = elementsPerChunk(dtype, chunkBytes);
  for (let e0 = 0; e0 < count; e0 += step) {
    const e1 = Math.min(count, e0 + step);
    yield { e0, e1, b0: (e0 * bits) / 8, b1: Math.ceil((e1 * bits) / 8) };
  }
}

/**
 * A tensor reference (detail.js `tensorRef`) cut to rows [start, end) of its first dimension,
 * the bounds resolved as numpy resolves `t[start:end]` (negative from the end, clamped, null
 * open): a contiguous byte range, so only those rows are read. Adds `firstRow` and `totalRows`.
 * Throws for bounds that are not integers, and for a sub-byte dtype whose rows do not start on
 * a byte (the rows given would need part of a byte).
 */
export function rowRange(ref, start, end) {
  const rows = ref.shape[0];
  if (ref.shape.length === 0) throw new Error('a scalar has no rows');
  for (const v of [start, end])
    if (v !== null && !Number.isSafeInteger(v)) throw new Error(`row bound ${v} is not an integer`);
  const bound = (v, open) => (v === null ? open : Math.min(Math.max(v < 0 ? v + rows : v, 0), rows));
  const r0 = bound(start, 0);
  const r1 = Math.max(r0, bound(end, rows));
  const rowElements = ref.shape.slice(1).reduce((a, b) => a * b, 1);
  const bits = DTYPE_BITS[ref.dtype];
  const bit0 = r0 * rowElements * bits;
  const bit1 = r1 * rowElements * bits;
  if (bit0 % 8 !== 0 || bit1 % 8 !== 0) {
    throw new Error(
      `rows ${r0}–${r1} of this ${ref.dtype} tensor start or end inside a byte: ` +
        'choose rows that hold whole bytes (e.g. even row numbers)',
    );
  }
  return {
    ...ref,
    shape: [r1 - r0, ...ref.shape.slice(1)],
    byteOffset: ref.byteOffset + bit0 / 8,
    byteLength: (bit1 - bit0) / 8,
    firstRow: r0,
    totalRows: rows,
  };
}

/** Flat element indices of the "first values" grid and their cell positions. */
export function gridLayout(shape, count, maxRows = 8, maxCols = 8) {
  const cells = [];
  if (shape.length >= 2) {
    const cols = shape[shape.length - 1];
    const rows = count / Math.max(cols, 1);
    const nr = Math.min(maxRows, rows);
    const nc = Math.min(maxCols, cols);
    for (let r = 0; r < nr; r++) for (let c = 0; c < nc; c++) cells.push({ r, c, index: r * cols + c });
    return { rows: nr, cols: nc, rowStride: cols, cells };
  }
  const n = Math.min(count, maxRows * maxCols);
  for (let i = 0; i < n; i++) cells.push({ r: Math.floor(i / maxCols), c: i % maxCols, index: i });
  return { rows: Math.ceil(n / maxCols), cols: Math.min(n, maxCols), rowStride: maxCols, cells };
}

/**
 * Pass one: min, max, mean, std (over finite values), zeros, NaN, ±Inf, the first values and a
 * block-averaged heatmap. Complex values count as two floats (real, imaginary); the heatmap of a
 * complex tensor shows magnitudes.
 */
export class StatsAccumulator {
  constructor({ dtype, shape, count, heatmap = { maxRows: 256, maxCols: 256 }, grid = true }) {
    this.dtype = dtype;
    this.shape = shape;
    this.count = count;
    this.fpe = floatsPerElement(dtype);
    this.min = Infinity;
    this.max = -Infinity;
    this.finite = 0;
    this.mean = 0;
    this.m2 = 0;
    this.zeros = 0;
    this.nan = 0;
    this.posInf = 0;
    this.negInf = 0;
    this.grid = grid ? gridLayout(shape, count) : null;
    this.gridValues = this.grid ? new Array(this.grid.cells.length).fill(null) : null;
    this.heat = null;
    if (heatmap && shape.length >= 2 && count > 0) {
      const cols = shape[shape.length - 1];
      const rows = count / cols;
      const outH = Math.min(rows, heatmap.maxRows);
      const outW = Math.min(cols, heatmap.maxCols);
      // Column → block lookup, unless the rows are so long the table itself would be big.
      let colBin = null;
      if (cols <= 1 << 22) {
        colBin = new Int32Array(cols);
        for (let c = 0; c < cols; c++) colBin[c] = Math.floor((c * outW) / cols);
      }
      this.heat = {
        rows,
        cols,
        outH,
        outW,
        colBin,
        sum: new Float64Array(outH * outW),
        n: new Float64Array(outH * outW),
      };
    }
  }

  /** Feed the decoded floats of elements [e0, e0 + values.length / fpe). */
  add(values, e0) {
    const fpe = this.fpe;
    let min = Infinity;
    let max = -Infinity;
    let finite = 0;
    let sum = 0;
    let zeros = 0;
    let nan = 0;
    let posInf = 0;
    let negInf = 0;
    const len = values.length;
    for (let i = 0; i < len; i++) {
      const v = values[i];
      if (v - v === 0) {
        finite++;
        sum += v;
        if (v < min) min = v;
        if (v > max) max = v;
        if (v === 0) zeros++;
      } else if (Number.isNaN(v)) nan++;
      else if (v > 0) posInf++;
      else negInf++;
    }
    // Chan et al.: merge this chunk's mean and M2 into the running ones.
    if (finite > 0) {
      const mean = sum / finite;
      let m2 = 0;
      for (let i = 0; i < len; i++) {
        const v = values[i];
        if (v - v === 0) {
          const d = v - mean;
          m2 += d * d;
        }
      }
      const n = this.finite + finite;
      const delta = mean - this.mean;
      this.mean += (delta * finite) / n;
      this.m2 += m2 + (delta * delta * this.finite * finite) / n;
      this.finite = n;
      if (min < this.min) this.min = min;
      if (max > this.max) this.max = max;
    }
    this.zeros += zeros;
    this.nan += nan;
    this.posInf += posInf;
    this.negInf += negInf;

    const elems = len / fpe;
    if (this.grid) {
      this.grid.cells.forEach((cell, k) => {
        const j = cell.index - e0;
        if (j >= 0 && j < elems) {
          this.gridValues[k] = fpe === 2 ? [values[2 * j], values[2 * j + 1]] : values[j];
        }
      });
    }
    if (this.heat) this.#addHeat(values, e0, elems);
  }

  #addHeat(values, e0, elems) {
    const { cols, rows, outH, outW, colBin, sum, n } = this.heat;
    const fpe = this.fpe;
    let e = e0;
    const end = e0 + elems;
    while (e < end) {
      const r = Math.floor(e / cols);
      const c0 = e - r * cols;
      const c1 = Math.min(cols, c0 + (end - e));
      const base = Math.floor((r * outH) / rows) * outW;
      let j = e - e0;
      for (let c = c0; c < c1; c++, j++) {
        const v = fpe === 2 ? Math.hypot(values[2 * j], values[2 * j + 1]) : values[j];
        if (v - v === 0) {
          const b = base + (colBin ? colBin[c] : Math.floor((c * outW) / cols));
          sum[b] += v;
          n[b] += 1;
        }
      }
      e += c1 - c0;
    }
  }

  /** The finite range a histogram should span, or null when there is no finite value. */
  range() {
    return this.finite > 0 ? [this.min, this.max] : null;
  }

  result() {
    const out = {
      count: this.count,
      floats: this.count * this.fpe,
      finite: this.finite,
      min: this.finite ? this.min : null,
      max: this.finite ? this.max : null,
      mean: this.finite ? this.mean : null,
      std: this.finite ? Math.sqrt(this.m2 / this.finite) : null,
      zeros: this.zeros,
      nan: this.nan,
      posInf: this.posInf,
      negInf: this.negInf,
      complex: this.fpe === 2,
      grid: this.grid
        ? {
            rows: this.grid.rows,
            cols: this.grid.cols,
            rowStride: this.grid.rowStride,
            cells: this.grid.cells.map((c, k) => ({ r: c.r, c: c.c, index: c.index, value: this.gridValues[k] })),
          }
        : null,
      heatmap: null,
    };
    if (this.heat) out.heatmap = finishHeatmap(this.heat);
    return out;
  }
}

/** Block means, plus the 1st and 99th percentile of them for colour clipping. */
export function finishHeatmap({ rows, cols, outH, outW, sum, n }) {
  const values = new Float32Array(outH * outW);
  const finite = [];
  for (let i = 0; i < values.length; i++) {
    values[i] = n[i] > 0 ? sum[i] / n[i] : NaN;
    if (n[i] > 0) finite.push(values[i]);
  }
  const sorted = Float64Array.from(finite).sort();
  const pick = (p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * (sorted.length - 1)))] : 0);
  return { rows, cols, width: outW, height: outH, values, lo: pick(0.01), hi: pick(0.99), min: pick(0), max: pick(1) };
}

/**
 * Pass two: a histogram of finite values over [lo, hi]. Integer dtypes with a small range get
 * one bin per integer.
 */
export class Histogram {
  constructor(lo, hi, { bins = 64, dtype = null } = {}) {
    // Integer dtypes get integer-aligned bins when their range is small.
    if (isIntegerDtype(dtype) && hi - lo < bins && Number.isInteger(lo) && Number.isInteger(hi)) {
      bins = hi - lo + 1;
      lo -= 0.5;
      hi += 0.5;
    } else if (hi === lo) {
      bins = 1;
      lo -= 0.5;
      hi += 0.5;
    }
    this.lo = lo;
    this.hi = hi;
    this.counts = new Float64Array(bins);
    this.scale = bins / (hi - lo);
  }

  add(values) {
    const { lo, hi, scale, counts } = this;
    const last = counts.length - 1;
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (v >= lo && v <= hi) {
        const b = Math.floor((v - lo) * scale);
        counts[Math.min(b, last)]++;
      }
    }
  }

  result() {
    return { lo: this.lo, hi: this.hi, counts: Array.from(this.counts) };
  }
}

/**
 * Differences b − a of two equally long chunks of floats: max |Δ| and where, mean |Δ|, RMS,
 * exact matches (NaN matches NaN), NaN mismatches, and the range of finite deltas.
 */
export class DiffAccumulator {
  constructor() {
    this.n = 0;
    this.finite = 0;
    this.maxAbs = 0;
    this.argMax = -1;
    this.sumAbs = 0;
    this.sumSq = 0;
    this.equal = 0;
    this.nanMismatch = 0;
    this.min = Infinity;
    this.max = -Infinity;
    this.maxAbsA = 0;
  }

  add(a, b, f0) {
    for (let i = 0; i < a.length; i++) {
      const x = a[i];
      const y = b[i];
      if (x === y || (Number.isNaN(x) && Number.isNaN(y))) this.equal++;
      if (Number.isNaN(x) !== Number.isNaN(y)) this.nanMismatch++;
      const ax = Math.abs(x);
      if (ax > this.maxAbsA && ax !== Infinity) this.maxAbsA = ax;
      const d = y - x;
      if (d - d === 0) {
        this.finite++;
        const ad = Math.abs(d);
        this.sumAbs += ad;
        this.sumSq += d * d;
        if (ad > this.maxAbs) {
          this.maxAbs = ad;
          this.argMax = f0 + i;
        }
        if (d < this.min) this.min = d;
        if (d > this.max) this.max = d;
      }
    }
    this.n += a.length;
  }

  /** Deltas of finite pairs for the histogram pass. */
  static deltas(a, b, out) {
    for (let i = 0; i < a.length; i++) out[i] = b[i] - a[i];
    return out.subarray(0, a.length);
  }

  range() {
    return this.finite > 0 ? [this.min, this.max] : null;
  }

  result() {
    return {
      floats: this.n,
      finite: this.finite,
      equal: this.equal,
      differing: this.n - this.equal,
      nanMismatch: this.nanMismatch,
      maxAbs: this.maxAbs,
      argMax: this.argMax,
      meanAbs: this.finite ? this.sumAbs / this.finite : null,
      rms: this.finite ? Math.sqrt(this.sumSq / this.finite) : null,
      maxAbsA: this.maxAbsA,
      min: this.finite ? this.min : null,
      max: this.finite ? this.max : null,
    };
  }
}

/** The npy v1.0 preamble (magic, version, header dict padded to 64 bytes). */
export function npyHeader(descr, shape) {
  const dims = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${dims}, }`;
  const total = Math.ceil((10 + dict.length + 1) / 64) * 64;
  dict = `${dict.padEnd(total - 10 - 1, ' ')}\n`;
  const out = new Uint8Array(total);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  out[8] = dict.length & 0xff;
  out[9] = dict.length >> 8;
  for (let i = 0; i < dict.length; i++) out[10 + i] = dict.charCodeAt(i);
  return out;
}
