// fromUrl, read(), readFloat32() and openSharded against a server that
// misbehaves on purpose (lib/hostile-server.js): every fault ends in a typed
// SafeTensorsError named for it, or in the right bytes, within a bounded
// time; reads after the open are pinned to the version opened (If-Range,
// validators, Content-Range's total). Writes the table of faults and
// outcomes to test-output/hostile/faults.md.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SafeTensors, SafeTensorsError, openSharded } from 'safetensors-nano';
import { tensorFile } from '../lib/format.js';
import { repo } from '../lib/env.js';
import { FAULTS, startHostileServer } from '../lib/hostile-server.js';

const f32 = (n, k) => new Float32Array(n).map((_, i) => Math.sin(i + k) * 10);
const bf16 = (vals) => new Uint16Array(new Float32Array(vals).buffer).filter((_, i) => i % 2 === 1);
const v1 = tensorFile(
  [
    ['a', 'F32', [64], f32(64, 0)],
    ['b', 'BF16', [40], bf16(f32(40, 1))],
  ],
  { metadata: { v: '1' } },
);
// The new versions: the same size with other names and values, and another size.
const v2 = tensorFile(
  [
    ['c', 'F32', [64], f32(64, 5)],
    ['d', 'BF16', [40], bf16(f32(40, 6))],
  ],
  { metadata: { v: '2' } },
);
const v2sized = tensorFile(
  [
    ['a', 'F32', [65], f32(65, 5)],
    ['b', 'BF16', [40], bf16(f32(40, 6))],
  ],
  { metadata: { v: '2' } },
);
assert.equal(v1.byteLength, v2.byteLength);
const SHARD = 'model-00001-of-00001.safetensors';
const index = new TextEncoder().encode(
  JSON.stringify({ metadata: { total_size: 336 }, weight_map: { a: SHARD, b: SHARD } }),
);
const expectA = SafeTensors.fromBytes(v1).tensor('a').bytes();

// A short deadline for the faults that stall, so that they end fast (the
// defaults, 30 s and 2 retries, are for real links); a long one for the
// others, so that a busy machine never turns them into a Timeout.
const STALLS = new Set(['stall', 'no-answer', 'trickle']);
const optsFor = (fault) => ({ timeout: STALLS.has(fault) ? 500 : 10_000, retries: 1 });
// The longest any case may take: two deadlines, the wait between, room.
const BOUND_MS = 5000;

let server;
let other;
before(async () => {
  const files = new Map([
    ['model.safetensors', v1],
    [SHARD, v1],
    ['model.safetensors.index.json', index],
  ]);
  other = await startHostileServer({ files });
  const changed = new Map([
    ['model.safetensors', v2],
    [SHARD, v2],
    ['change-size/model.safetensors', v2sized],
    [`change-size/${SHARD}`, v2sized],
  ]);
  server = await startHostileServer({ files, changed, redirectTo: other.url });
});
after(async () => {
  await server?.close();
  await other?.close();
});

// What each fault must end in, per entry point ('ok': the right bytes):
// open = fromUrl with the fault from its first request (then a read),
// read = read() and float = readFloat32() with the fault after the open,
// sharded = openSharded on a URL index and a read through the model.
const ALL = (kind) => ({ open: kind, read: kind, float: kind, sharded: kind });
const CHANGED = { open: 'ok', read: 'SourceChanged', float: 'SourceChanged', sharded: 'SourceChanged' };
const EXPECT = {
  'wrong-range': ALL('RangeMismatch'),
  'no-range': ALL('RangeMismatch'),
  'ignore-range': ALL('ok'),
  'not-satisfiable': ALL('RangeMismatch'),
  short: ALL('ShortBody'),
  'length-long': ALL('ShortBody'),
  // (The index has no Content-Range: cut at its Content-Length, the JSON
  // is all a client sees, and it is not JSON.)
  'length-short': { ...ALL('ShortBody'), sharded: 'IndexInvalid' },
  gzip: ALL('ContentEncoded'),
  'redirect-loop': ALL('TooManyRedirects'),
  'cross-origin': ALL('ok'),
  stall: ALL('Timeout'),
  'no-answer': ALL('Timeout'),
  trickle: ALL('Timeout'),
  unavailable: ALL('Http'),
  'unavailable-once': ALL('ok'),
  reset: ALL('Network'),
  endless: ALL('Http'),
  change: CHANGED,
  'change-206': CHANGED,
  'change-lm': CHANGED,
  'change-noval': CHANGED,
  'change-size': CHANGED,
};

// The version a case must read: the new one when the change is there from
// the first request (then it is simply the file opened).
function expected(fault, from) {
  const file = fault.startsWith('change') && from === 0 ? (fault === 'change-size' ? v2sized : v2) : v1;
  const st = SafeTensors.fromBytes(file);
  return { names: st.names(), first: st.tensors()[0].bytes(), second: st.tensors()[1].toFloat32() };
}

async function run(fault, phase) {
  const changes = fault.startsWith('change');
  const from = phase === 'read' || phase === 'float' || (phase === 'sharded' && changes) ? 1 : 0;
  const base = `${server.url}/${fault}@${from}~${phase}`;
  const want = expected(fault, from);
  if (phase === 'sharded') {
    const model = await openSharded(`${base}/model.safetensors.index.json`, [], optsFor(fault));
    assert.deepEqual(await model.tensor('a').read(), want.first);
    return;
  }
  const st = await SafeTensors.fromUrl(`${base}/model.safetensors`, optsFor(fault));
  assert.deepEqual(st.names(), want.names);
  if (phase === 'float') {
    assert.deepEqual(await st.tensors()[1].readFloat32({ chunkBytes: 24 }), want.second);
  } else {
    assert.deepEqual(await st.tensors()[0].read(), want.first);
  }
}

test('every fault ends in its typed error or the right bytes, within a bounded time', async () => {
  assert.deepEqual(Object.keys(EXPECT).sort(), [...FAULTS].sort());
  const cases = FAULTS.flatMap((fault) => ['open', 'read', 'float', 'sharded'].map((phase) => ({ fault, phase })));
  const results = await Promise.all(
    cases.map(async ({ fault, phase }) => {
      const t0 = performance.now();
      let outcome = 'ok';
      let message = '';
      try {
        await run(fault, phase);
      } catch (e) {
        if (!(e instanceof SafeTensorsError))
          throw new Error(`${fault}/${phase}: not a SafeTensorsError: ${e?.stack ?? e}`);
        outcome = e.kind;
        message = e.message;
      }
      return { fault, phase, outcome, message, ms: performance.now() - t0 };
    }),
  );
  const rows = ['| fault | fromUrl | read() | readFloat32() | openSharded | slowest |', '|---|---|---|---|---|---|'];
  for (const fault of FAULTS) {
    const r = results.filter((x) => x.fault === fault);
    const cell = (phase) => {
      const x = r.find((y) => y.phase === phase);
      return `${x.outcome} (${Math.round(x.ms)} ms)`;
    };
    rows.push(
      `| ${fault} | ${cell('open')} | ${cell('read')} | ${cell('float')} | ${cell('sharded')} | ${Math.round(Math.max(...r.map((x) => x.ms)))} ms |`,
    );
  }
  const table = rows.join('\n');
  mkdirSync(join(repo, 'test-output', 'hostile'), { recursive: true });
  writeFileSync(
    join(repo, 'test-output', 'hostile', 'faults.md'),
    `timeout 500 ms (stall, no-answer, trickle) or 10 s, retries 1\n\n${table}\n`,
  );
  console.log(table);
  for (const r of results) {
    assert.equal(r.outcome, EXPECT[r.fault][r.phase], `${r.fault}/${r.phase}: ${r.message}`);
    assert.ok(r.ms < BOUND_MS, `${r.fault}/${r.phase} took ${Math.round(r.ms)} ms`);
  }
  // A client that gave up closed its connections (nothing left trickling).
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(server.openSockets, 0);
});

test('reads after the open carry If-Range with the ETag (or Last-Modified) of the first answer', async () => {
  const st = await SafeTensors.fromUrl(`${server.url}/none@0~pin/model.safetensors`, { prefetch: 8 });
  await st.tensor('b').read();
  const mine = server.requests.filter((r) => r.path === '/none@0~pin/model.safetensors');
  assert.equal(mine[0].headers['if-range'], undefined);
  assert.ok(mine.length >= 3);
  for (const r of mine.slice(1)) assert.equal(r.headers['if-range'], '"v1"');
  const lm = await SafeTensors.fromUrl(`${server.url}/change-lm@9~pin/model.safetensors`);
  await lm.tensor('a').read();
  assert.equal(server.requests.at(-1).headers['if-range'], 'Mon, 30 Nov 2026 12:00:00 GMT');
  // ifRange: false leaves it out; the answers are still checked.
  const off = await SafeTensors.fromUrl(`${server.url}/change@1~off/model.safetensors`, { ifRange: false });
  await assert.rejects(
    off.tensor('a').read(),
    (e) => e.kind === 'SourceChanged' && /ETag "v1", now "v2"/.test(e.message),
  );
  assert.equal(server.requests.at(-1).headers['if-range'], undefined);
});

test('a changed file never yields the new bytes: the 200 with the new file is not read whole', async () => {
  const st = await SafeTensors.fromUrl(`${server.url}/change@1~whole/model.safetensors`);
  const before = st.bytesRead;
  await assert.rejects(st.tensor('a').read(), (e) => e.kind === 'SourceChanged');
  assert.equal(st.bytesRead, before);
  assert.throws(
    () => st.tensor('a').bytes(),
    (e) => e.kind === 'NotInMemory',
  );
});

test('a cross-origin redirect is followed without the Authorization header', async () => {
  const st = await SafeTensors.fromUrl(`${server.url}/cross-origin@0~auth/model.safetensors`, {
    headers: { Authorization: 'Bearer secret' },
  });
  assert.deepEqual(await st.tensor('a').read(), expectA);
  assert.equal(server.requests.at(-1).headers.authorization, 'Bearer secret');
  assert.ok(other.requests.length > 0);
  for (const r of other.requests) assert.equal(r.headers.authorization, undefined);
});

test('an abort during a stall or a retry wait ends at once with the AbortError', async () => {
  for (const fault of ['stall', 'unavailable']) {
    const st = await SafeTensors.fromUrl(`${server.url}/${fault}@1~abort/model.safetensors`, {
      timeout: 10_000,
      retries: 5,
    });
    const ctrl = new AbortController();
    setTimeout(() => ctrl.abort(), 100);
    const t0 = performance.now();
    await assert.rejects(st.tensor('a').read({ signal: ctrl.signal }), (e) => e.name === 'AbortError');
    assert.ok(performance.now() - t0 < 2000, fault);
  }
});

test('timeout and retries are checked', async () => {
  for (const opts of [{ timeout: 0 }, { timeout: -1 }, { timeout: '5' }, { retries: -1 }, { retries: 1.5 }]) {
    await assert.rejects(SafeTensors.fromUrl(`${server.url}/none@0/model.safetensors`, opts), TypeError);
    await assert.rejects(openSharded(`${server.url}/none@0/model.safetensors.index.json`, [], opts), TypeError);
  }
  const st = await SafeTensors.fromUrl(`${server.url}/none@0/model.safetensors`, { timeout: Infinity, retries: 0 });
  assert.deepEqual(await st.tensor('a').read(), expectA);
});

test('a timeout longer than a timer can wait (over 2^31 - 1 ms) is no deadline, not one that fires at once', async () => {
  // Answers from memory, each 50 ms late (no progress in that time); an abort rejects, as fetch does.
  const slow = async (_url, init) => {
    await new Promise((resolve, reject) => {
      setTimeout(resolve, 50);
      init.signal.addEventListener('abort', () => reject(init.signal.reason), { once: true });
    });
    const [, s, e] = /bytes=(\d+)-(\d+)/.exec(new Headers(init.headers).get('Range'));
    const [start, end] = [Number(s), Math.min(v1.length, Number(e) + 1)];
    return new Response(v1.slice(start, end), {
      status: 206,
      headers: { 'Content-Range': `bytes ${start}-${end - 1}/${v1.length}` },
    });
  };
  for (const timeout of [2 ** 31, 1e12]) {
    const st = await SafeTensors.fromUrl('http://test.invalid/v1.safetensors', {
      fetch: slow,
      prefetch: 8,
      timeout,
      retries: 0,
    });
    assert.deepEqual(await st.tensor('a').read(), expectA, `timeout ${timeout}`);
  }
});

test('fromBlob on a file edited on disk after the open: SourceChanged, never the new bytes', async () => {
  const { openAsBlob } = await import('node:fs');
  const { scratch } = await import('../lib/env.js');
  const path = join(scratch('stn-hostile-'), 'edited.safetensors');
  writeFileSync(path, v1);
  const st = await SafeTensors.fromBlob(await openAsBlob(path));
  assert.deepEqual(await st.tensor('a').read(), expectA);
  // Another version of the same size, written a moment later (a new mtime).
  await new Promise((resolve) => setTimeout(resolve, 20));
  writeFileSync(path, v2);
  await assert.rejects(
    st.tensor('a').read(),
    (e) => e instanceof SafeTensorsError && e.kind === 'SourceChanged' && e.cause?.name === 'NotReadableError',
  );
  await assert.rejects(st.tensor('b').readFloat32(), (e) => e.kind === 'SourceChanged');
});
