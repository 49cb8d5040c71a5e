// No untyped error leaves the package, and the module outlives a trap: in a
// process whose engine gives wasm little memory (--wasm-max-mem-pages), a
// header whose parse needs more makes the reader's allocation fail and its
// module trap (`unreachable`); that is an Internal SafeTensorsError with
// the RuntimeError as its cause, and the next calls (open, readFloat32,
// decodeFloat32) run on a new instance and succeed, trap after trap. An
// array too large to allocate is Internal too.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SafeTensors, SafeTensorsError } from 'safetensors-nano';
import { metadataFile } from '../lib/trap-files.js';

const here = dirname(fileURLToPath(import.meta.url));
// 50,000 pairs: a 0.6 MB header whose parse takes over 8 MiB of wasm memory.
const PAIRS = 50_000;
// 4 MiB of wasm memory at most: room for the module, not for that parse.
const PAGES = 64;

test('the header opens where wasm may have the memory it needs', () => {
  const file = metadataFile(PAIRS);
  const st = SafeTensors.fromBytes(file);
  assert.equal(st.headerSize, file.length - 8);
  assert.equal(st.length, 0);
});

test('a real wasm trap is an Internal error, and the next calls succeed on a new instance', () => {
  const r = spawnSync(
    process.execPath,
    [`--wasm-max-mem-pages=${PAGES}`, join(here, '..', 'lib', 'trap-child.mjs'), String(PAIRS)],
    {
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  const works = { names: ['h'], values: [1, -2], decoded: [1] };
  assert.deepEqual(out.before, works);
  assert.equal(out.traps.length, 2);
  for (const trap of out.traps) {
    assert.ok(trap !== null, 'the header opened: the engine gave wasm more memory than asked');
    assert.equal(trap.typed, true);
    assert.equal(trap.kind, 'Internal');
    assert.deepEqual(trap.cause, { name: 'RuntimeError', message: trap.cause.message, runtimeError: true });
    assert.match(trap.message, /wasm module failed in open \(RuntimeError: .*\); it is made anew for the next call/);
  }
  assert.deepEqual(out.after, [works, works]);
});

test('an array too large to allocate is an Internal error that names it, not a RangeError', async () => {
  // A header for a 2^42-byte F32 tensor (no data needed: fromHeader).
  const header = new TextEncoder().encode(
    JSON.stringify({ huge: { dtype: 'F32', shape: [2 ** 40], data_offsets: [0, 2 ** 42] } }),
  );
  const prefix = new Uint8Array(8 + header.length);
  new DataView(prefix.buffer).setBigUint64(0, BigInt(header.length), true);
  prefix.set(header, 8);
  const st = SafeTensors.fromHeader(prefix, prefix.length + 2 ** 42);
  await assert.rejects(st.tensor('huge').readFloat32(), (e) => {
    assert.ok(e instanceof SafeTensorsError, String(e));
    assert.equal(e.kind, 'Internal');
    assert.ok(e.cause instanceof RangeError);
    assert.match(e.message, /could not allocate 4398046511104 bytes for the tensor as f32 .*\(tensor "huge"\)/);
    return true;
  });
});
