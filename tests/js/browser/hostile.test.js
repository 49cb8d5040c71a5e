// fromUrl and read() in each browser engine against the misbehaving server
// (lib/hostile-server.js), cross-origin as a page meets a CDN: each fault
// ends in its typed error or the right bytes, within a bounded time, with
// the browser's own fetch (which says less about a failure than Node's: a
// redirect loop or an encoded range is a Network error there).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SafeTensors } from 'safetensors-nano';
import { tensorFile } from '../lib/format.js';
import { startServer } from '../lib/server.js';
import { describeEachEngine } from '../lib/engines.js';
import { startHostileServer } from '../lib/hostile-server.js';

const project = join(dirname(fileURLToPath(import.meta.url)), '..');
const f32 = (n, k) => new Float32Array(n).map((_, i) => Math.sin(i + k) * 10);
const v1 = tensorFile(
  [
    ['a', 'F32', [64], f32(64, 0)],
    ['b', 'F32', [40], f32(40, 1)],
  ],
  { metadata: { v: '1' } },
);
const v2 = tensorFile(
  [
    ['c', 'F32', [64], f32(64, 5)],
    ['d', 'F32', [40], f32(40, 6)],
  ],
  { metadata: { v: '2' } },
);
const expectA = [...SafeTensors.fromBytes(v1).tensor('a').bytes()];

// Fault → what read() of tensor 'a' after a clean open ends in ('ok': the right bytes).
const EXPECT = {
  none: 'ok',
  'wrong-range': 'RangeMismatch',
  'ignore-range': 'ok',
  short: 'ShortBody',
  // (Chromium itself refuses an encoded answer to its Range request, which
  // asked for identity: fetch fails with no reason given. ENGINE_EXPECT: others.)
  gzip: 'Network',
  'redirect-loop': 'Network',
  'cross-origin': 'ok',
  stall: 'Timeout',
  trickle: 'Timeout',
  'unavailable-once': 'ok',
  unavailable: 'Http',
  // (Chromium errors the body of a 206 that runs past its Content-Range
  // before a byte of it reaches the page.)
  endless: 'ShortBody',
  change: 'SourceChanged',
  'change-206': 'SourceChanged',
  'change-noval': 'SourceChanged',
};

// Where an engine's own fetch ends a fault differently from Chromium's.
const ENGINE_EXPECT = {
  chromium: {},
  // (Firefox and WebKit hand an encoded answer to a Range request to the page: the package
  // sees its Content-Encoding and says so. They pass on a 206 that runs past its Content-Range
  // too: the package stops it at the bytes it asked for, "sent more than … asked for".)
  firefox: { gzip: 'ContentEncoded', endless: 'Http' },
  webkit: { gzip: 'ContentEncoded', endless: 'Http' },
};

let site;
let hostile;
let other;

before(async () => {
  const files = new Map([['model.safetensors', v1]]);
  other = await startHostileServer({ files });
  hostile = await startHostileServer({ files, changed: new Map([['model.safetensors', v2]]), redirectTo: other.url });
  site = await startServer({ root: project, range: true });
});

after(() => Promise.all([site?.close(), hostile?.close(), other?.close()]));

describeEachEngine(
  () => `${site.url}/browser/page.html`,
  (session, engine) => {
    test('every fault after the open ends in its typed error or the right bytes, within a bounded time', async () => {
      const from = hostile.requests.length;
      const results = await session.page.evaluate(
        async ({ base, faults, tag }) => {
          const { SafeTensors, SafeTensorsError } = window.stn;
          return Promise.all(
            faults.map(async (fault) => {
              const t0 = performance.now();
              try {
                const st = await SafeTensors.fromUrl(`${base}/${fault}@1~${tag}/model.safetensors`, {
                  timeout: 500,
                  retries: 1,
                });
                return { fault, outcome: 'ok', bytes: [...(await st.tensor('a').read())], ms: performance.now() - t0 };
              } catch (e) {
                return {
                  fault,
                  outcome: e instanceof SafeTensorsError ? e.kind : `not a SafeTensorsError: ${e}`,
                  message: e.message,
                  ms: performance.now() - t0,
                };
              }
            }),
          );
        },
        { base: hostile.url, faults: Object.keys(EXPECT), tag: engine },
      );
      console.log(
        `${engine} faults: ${results.map((r) => `${r.fault} ${r.outcome} ${Math.round(r.ms)} ms`).join('; ')}`,
      );
      const want = { ...EXPECT, ...ENGINE_EXPECT[engine] };
      assert.deepEqual(
        Object.fromEntries(results.map((r) => [r.fault, r.outcome])),
        want,
        results.map((r) => `${r.fault}: ${r.message}`).join('\n'),
      );
      for (const r of results) {
        if (r.outcome === 'ok') assert.deepEqual(r.bytes, expectA, r.fault);
        assert.ok(r.ms < 5000, `${r.fault} took ${Math.round(r.ms)} ms`);
      }
      // Cross-origin, no If-Range (it would cost a preflight); the checks caught the changes anyway.
      const reads = hostile.requests.slice(from).filter((q) => q.path.endsWith(`~${engine}/model.safetensors`));
      assert.ok(reads.length > Object.keys(EXPECT).length);
      assert.ok(reads.every((q) => q.method === 'GET' && q.headers['if-range'] === undefined));
    });
  },
);
