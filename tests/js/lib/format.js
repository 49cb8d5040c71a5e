// Builds safetensors bytes by hand for the tests: any header text (valid or
// not) in front of any data, so the tests do not depend on the writer they test.

const enc = new TextEncoder();

/** 8-byte LE length + header text (a string, or an object to JSON.stringify) + data. */
export function rawFile(header, data = new Uint8Array(0), { pad = 0, align = 1 } = {}) {
  const text = typeof header === 'string' ? header : JSON.stringify(header);
  const len = enc.encode(text).length + pad;
  const json = enc.encode(text + ' '.repeat(pad + ((align - (len % align)) % align)));
  const out = new Uint8Array(8 + json.length + data.byteLength);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  out.set(new Uint8Array(data.buffer ?? data, data.byteOffset ?? 0, data.byteLength), 8 + json.length);
  return out;
}

/**
 * A valid file from [name, dtype, shape, bytes] entries, in the given order,
 * data packed without gaps; `pad` spaces after the JSON (to control
 * alignment of the data) or `align` (pad the JSON to a multiple of it).
 */
export function tensorFile(entries, { metadata, pad = 0, align = 1 } = {}) {
  const header = {};
  if (metadata !== undefined) header.__metadata__ = metadata;
  let offset = 0;
  for (const [name, dtype, shape, bytes] of entries) {
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes.byteLength] };
    offset += bytes.byteLength;
  }
  const data = new Uint8Array(offset);
  offset = 0;
  for (const [, , , bytes] of entries) {
    data.set(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset);
    offset += bytes.byteLength;
  }
  return rawFile(header, data, { pad, align });
}

/** Bytes of a typed array (a copy, so tests own it). */
export const bytesOf = (ta) => new Uint8Array(ta.buffer.slice(ta.byteOffset, ta.byteOffset + ta.byteLength));
