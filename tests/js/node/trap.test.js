// No untyped error leaves the package, and the module outlives a trap: in a
// process whose engine gives wasm little memory (--wasm-max-mem-pages), a
// header whose parse needs more makes the reader's allocation fail and its
// module trap (`unreachable`); that is an Internal SafeTensorsError with
// the RuntimeError as its cause, and the next calls (open, readFloat32,
// decodeFloat32) run on a new instance and succeed, trap after trap.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SafeTensors } from 'safetensors-nano';
import { metadataFile } from '../lib/trap-files.js';

const here = dirname(fileURLToPath(import.meta.url));
// 50,000 pairs: a 0.6 MB header whose parse takes over 8 MiB of wasm memory.
const PAIRS = 50_000;
// 4 MiB of wasm memory at most: room for the module, not for that parse.
const PAGES = 64;

test('the header opens where wasm may have the memory it needs', () => {
  const st = SafeTensors.fromBytes(metadataFile(PAIRS));
  assert.equal(Object.keys(st.metadata()).length, PAIRS);
});

test('a real wasm trap is an Internal error, and the next calls succeed on a new instance', () => {
  const r = spawnSync(process.execPath, [`--wasm-max-mem-pages=${PAGES}`, join(here, '..', 'lib', 'trap-child.mjs'), String(PAIRS)], {
    encoding: 'utf8',
    timeout: 60_000,
  });
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
