// Many callers on the one wasm instance of a process: 1,000 opens and reads
// in flight at once across 50 files (valid and malformed, from memory, Blobs
// and a local HTTP server) give exactly what each gives alone; wasm memory
// does not grow past what the sequential run left; aborting some of them
// mid-flight leaves the others correct.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as stn from 'safetensors-nano';
import { mixedFiles, summarize } from '../lib/mixed-files.js';
import { startServer } from '../lib/server.js';
import { scratch } from '../lib/env.js';

const { SafeTensors, wasmMemoryBytes } = stn;
const FILES = mixedFiles(50);
const TASKS = 1000;
let server;

before(async () => {
  const virtual = new Map(
    FILES.map(({ name, bytes }) => [
      `/${name}`,
      { size: BigInt(bytes.length), read: (s, e) => bytes.subarray(Number(s), Number(e)) },
    ]),
  );
  server = await startServer({ root: scratch('stn-concurrency-'), virtual });
});
after(() => server?.close());

// Task i: file i % 50, opened the (i / 50 % 3)-th way.
const WAYS = ['bytes', 'blob', 'url'];
function opener(i, signal) {
  const { name, bytes } = FILES[i % FILES.length];
  const way = WAYS[Math.floor(i / FILES.length) % WAYS.length];
  if (way === 'bytes') return async () => SafeTensors.fromBytes(bytes);
  if (way === 'blob') return () => SafeTensors.fromBlob(new Blob([bytes]), { signal });
  return () => SafeTensors.fromUrl(`${server.url}/${name}`, { signal, prefetch: 64 });
}

test('1,000 concurrent opens and reads equal the sequential results; wasm memory stays at its baseline', async () => {
  const alone = [];
  for (let i = 0; i < FILES.length * WAYS.length; i++) alone.push(await summarize(stn, opener(i)));
  // Every way of opening a file agrees with the others.
  for (let i = 0; i < alone.length; i++)
    assert.deepEqual(
      alone[i],
      alone[i % FILES.length],
      `file ${i % FILES.length}, ${WAYS[Math.floor(i / FILES.length)]}`,
    );
  const valid = alone.slice(0, FILES.length).filter((s) => s.ok).length;
  assert.ok(valid >= 30 && valid < FILES.length, `${valid} of ${FILES.length} files valid`);
  const baseline = wasmMemoryBytes();
  for (let round = 0; round < 3; round++) {
    const results = await Promise.all(Array.from({ length: TASKS }, (_, i) => summarize(stn, opener(i))));
    for (let i = 0; i < TASKS; i++) assert.deepEqual(results[i], alone[i % FILES.length], `task ${i}`);
    assert.equal(wasmMemoryBytes(), baseline, `round ${round}`);
  }
});

test('aborting some tasks mid-flight leaves the others correct', async () => {
  const alone = await Promise.all(FILES.map((_, i) => summarize(stn, opener(i))));
  const controllers = Array.from({ length: TASKS }, () => new AbortController());
  const tasks = Array.from({ length: TASKS }, (_, i) =>
    summarize(stn, opener(i, controllers[i].signal), controllers[i].signal).then(
      (r) => ({ r }),
      (e) => ({ e }),
    ),
  );
  // Every fourth task is aborted at some point while the rest run.
  for (let i = 0; i < TASKS; i += 4) setTimeout(() => controllers[i].abort(), (i % 37) * 2);
  const results = await Promise.all(tasks);
  let aborted = 0;
  for (let i = 0; i < TASKS; i++) {
    const { r, e } = results[i];
    if (e !== undefined) {
      assert.equal(i % 4, 0, `task ${i} failed without an abort: ${e}`);
      assert.equal(e.name, 'AbortError');
      aborted++;
    } else {
      assert.deepEqual(r, alone[i % FILES.length], `task ${i}`);
    }
  }
  assert.ok(aborted > 0, 'some aborts landed mid-flight');
  console.log(`concurrency: ${TASKS} tasks, ${aborted} aborted mid-flight, the other ${TASKS - aborted} correct`);
});
