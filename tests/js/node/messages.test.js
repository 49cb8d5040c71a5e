// Error messages: a wasm error's message is the Rust `Display` text of its
// kind (then where and which tensor), for samples of the core's kinds and
// of the wasm layer's. The samples and their Rust texts are generated
// (lib/rust-messages.js: `cargo xtask gen`).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SafeTensors, SafeTensorsError, decodeFloat32, serialize } from 'safetensors-nano';
import { SAMPLES } from '../lib/rust-messages.js';

const bytes = (hex) => Uint8Array.from(hex.match(/../g) ?? [], (b) => parseInt(b, 16));

// The error a sample's call throws (or rejects with).
async function errorOf(s) {
  try {
    switch (s.call) {
      case 'fromBytes':
        SafeTensors.fromBytes(bytes(s.hex));
        break;
      case 'fromHeader':
        SafeTensors.fromHeader(bytes(s.hex), BigInt(s.fileSize));
        break;
      case 'serialize':
        await serialize(
          Object.fromEntries(
            s.tensors.map(([name, dtype, shape, n]) => [name, { dtype, shape, data: new Uint8Array(n) }]),
          ),
        );
        break;
      case 'decodeFloat32':
        decodeFloat32(s.dtype, new Uint8Array(s.byteLength));
        break;
      default:
        throw new Error(`unknown call ${s.call}`);
    }
  } catch (e) {
    return e;
  }
  return null;
}

test('wasm errors have the Rust message of their kind, then their place', async () => {
  assert.ok(SAMPLES.length >= 15);
  const kinds = new Set();
  for (const s of SAMPLES) {
    const e = await errorOf(s);
    assert.ok(e instanceof SafeTensorsError, `${s.kind}: ${e}`);
    assert.equal(e.kind, s.kind, s.message);
    assert.equal(e.message, s.message);
    kinds.add(s.kind);
  }
  // The layer's kinds and the format codes (hex, "or more", Expected, Field, Dtype) are among them.
  for (const k of [
    'OffsetTooLarge',
    'DimensionTooLarge',
    'UnexpectedByte',
    'DataOffsetsNotPair',
    'MissingField',
    'DtypeMismatch',
  ]) {
    assert.ok(kinds.has(k), k);
  }
});
