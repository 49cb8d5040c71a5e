// Reading what wasm returns: its numbers are read in place, in the reader
// module's memory, and the part a description keeps is copied to a slab.
// Also the one conversion of the caller's buffers to bytes.

import { onRenew } from './wasm-guard.js';
import { requireReader } from './load-wasm.js';
import { reader } from './reader-exports.js';

// The numbers of wasm's last `open` are read where they are, in wasm
// memory: only the part a description keeps is copied out, into a shared
// slab (a typed array costs about half a microsecond to make, outside the
// JS heap, plus about 2 ns a number). A description keeps its slab alive
// (32 KiB at most), so only small ones (up to 8 KiB, ~500 tensors) share.
const SLAB_NUMBERS = 4096;
let slab = new Float64Array(0);
let slabUsed = 0;

// wasm memory as numbers; a new view after the memory grew (which
// detaches the old one's buffer, leaving it empty).
let memoryNumbers = new Float64Array(0);
onRenew(() => {
  memoryNumbers = new Float64Array(0);
});

/** The reader module's memory as f64s (wasm answers at 8-byte aligned addresses). */
export function wasmNumbers() {
  if (memoryNumbers.length === 0) memoryNumbers = new Float64Array(wasmMemory().buffer);
  return memoryNumbers;
}

/** The reader module's memory. (Once the entry has instantiated the module, initSync only returns its exports.) */
export function wasmMemory() {
  requireReader();
  return reader.memory();
}

/**
 * A copy of `nums[at..at + n)` that lasts: its array (shared or, when
 * large, its own) and where the copy starts in it.
 */
export function keep(nums, at, n) {
  const part = nums.subarray(at, at + n);
  if (n > SLAB_NUMBERS / 4) return { array: part.slice(), from: 0 };
  if (slabUsed + n > slab.length) {
    slab = new Float64Array(SLAB_NUMBERS);
    slabUsed = 0;
  }
  slab.set(part, slabUsed);
  slabUsed += n;
  return { array: slab, from: slabUsed - n };
}

/** The bytes of an ArrayBuffer, SharedArrayBuffer or view (no copy). */
export function u8(buf) {
  if (buf instanceof Uint8Array) return buf;
  if (buf instanceof ArrayBuffer || (typeof SharedArrayBuffer === 'function' && buf instanceof SharedArrayBuffer)) {
    return new Uint8Array(buf);
  }
  if (ArrayBuffer.isView(buf)) return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  throw new TypeError('expected an ArrayBuffer or a typed array');
}

/** Bytes of the reader module's wasm memory grown so far (a diagnostic: tensor data never enters it). */
export function wasmMemoryBytes() {
  return wasmMemory().buffer.byteLength;
}
