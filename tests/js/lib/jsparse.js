// The common JS approach to reading a safetensors header, as the benchmark's
// baseline: DataView for the length, TextDecoder + JSON.parse for the
// header, then a validation loop over the entries (dtype, shape, offsets
// tiling the buffer, exact file length). Same checks as ours, minus the
// strictness JSON.parse cannot give (duplicate keys, escapes in dtypes…).

import { DTYPE_BITS as BITS } from './headers.js';

const decoder = new TextDecoder('utf-8', { fatal: true });

export function jsParseHeader(bytes, fileSize) {
  if (bytes.byteLength < 8) throw new Error('HeaderTooSmall');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = dv.getUint32(0, true) + dv.getUint32(4, true) * 2 ** 32;
  if (n > 100_000_000) throw new Error('HeaderTooLarge');
  if (8 + n > fileSize) throw new Error('InvalidHeaderLength');
  const header = JSON.parse(decoder.decode(bytes.subarray(8, 8 + n)));
  if (header === null || typeof header !== 'object' || Array.isArray(header)) throw new Error('InvalidHeader');
  let metadata = null;
  const tensors = [];
  for (const name in header) {
    const info = header[name];
    if (name === '__metadata__') {
      if (info !== null) {
        for (const k in info) if (typeof info[k] !== 'string') throw new Error('InvalidMetadata');
        metadata = info;
      }
      continue;
    }
    const bits = BITS[info.dtype];
    if (bits === undefined) throw new Error(`UnknownDtype ${name}`);
    const { shape, data_offsets: off } = info;
    if (!Array.isArray(shape) || !Array.isArray(off) || off.length !== 2) throw new Error(`InvalidInfo ${name}`);
    let elements = 1;
    for (const d of shape) {
      if (!Number.isSafeInteger(d) || d < 0) throw new Error(`InvalidShape ${name}`);
      elements *= d;
    }
    const [begin, end] = off;
    if (!Number.isSafeInteger(begin) || !Number.isSafeInteger(end) || begin < 0 || end < begin) {
      throw new Error(`InvalidOffset ${name}`);
    }
    const totalBits = elements * bits;
    if (totalBits % 8 !== 0) throw new Error(`MisalignedSlice ${name}`);
    if (end - begin !== totalBits / 8) throw new Error(`TensorInvalidInfo ${name}`);
    tensors.push({ name, dtype: info.dtype, shape, begin, end });
  }
  tensors.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let at = 0;
  for (const t of tensors) {
    if (t.begin !== at) throw new Error(`InvalidOffset ${t.name}`);
    at = t.end;
  }
  if (8 + n + at !== fileSize) throw new Error('MetadataIncompleteBuffer');
  return { headerSize: n, metadata, tensors };
}
