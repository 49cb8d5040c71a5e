// A sparse file over 4 GiB: "lo" fills the first 4 GiB + 16 bytes of the data
// buffer, so "hi" (three BF16 values: 1, -2, 3) starts past 2^32; only the
// header and a few bytes are written, the rest is a hole.

import { closeSync, openSync, writeSync, ftruncateSync } from 'node:fs';
import { join } from 'node:path';
import { rawFile } from './format.js';

export const SPARSE = {
  lo: 4 * 2 ** 30 + 16,
  hi: Uint8Array.from([0x80, 0x3f, 0x00, 0xc0, 0x40, 0x40]), // BF16 1.0, -2.0, 3.0
  tail: 1024,
};

/** Writes the file into `dir`; returns { path, size, hiOffset } (hiOffset absolute in the file). */
export function makeSparseFile(dir) {
  const { lo, hi, tail } = SPARSE;
  const header = {
    __metadata__: { purpose: 'sparse > 4 GiB' },
    lo: { dtype: 'U8', shape: [lo], data_offsets: [0, lo] },
    hi: { dtype: 'BF16', shape: [3], data_offsets: [lo, lo + 6] },
    tail: { dtype: 'U8', shape: [tail], data_offsets: [lo + 6, lo + 6 + tail] },
  };
  const head = rawFile(header);
  const path = join(dir, 'sparse-4gib.safetensors');
  const size = head.length + lo + 6 + tail;
  const hiOffset = head.length + lo;
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, head, 0, head.length, 0);
    ftruncateSync(fd, size);
    writeSync(fd, hi, 0, hi.length, hiOffset);
    writeSync(fd, Uint8Array.of(7), 0, 1, hiOffset - 1); // last byte of "lo"
    writeSync(fd, Uint8Array.of(9), 0, 1, size - 1); // last byte of "tail"
  } finally {
    closeSync(fd);
  }
  return { path, size, hiOffset };
}
