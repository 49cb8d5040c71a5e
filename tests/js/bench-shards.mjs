// make bench-wasm, part 2: Hub-scale sharded opens (openSharded over HTTP).
//
// A local Range server (lib/server.js, in a worker thread: lib/hub-server.js)
// serves generated DeepSeek-V3-like models (lib/hub.js: the index and each
// shard's header, the data sparse) and waits 30 ms before every answer, as
// a distant server would. Timed:
// openSharded(indexUrl) to the model with every name, wall clock (the
// waiting is the point), with the default concurrency (8).
//
// 1. The 163-shard, 91,990-tensor model: each shard's first range sized from
//    the index (the default) against a fixed 64 KiB first range (the
//    previous default), interleaved, fastest and median of the runs.
// 2. How the open grows with shards (10, 40, 163, 500 at ~92,000 tensors)
//    and with tensors (10k, 100k, 1M in 163 shards).
//
// 3. A 1,000,000-tensor index (97 MB) in 163 shards: openSharded(indexUrl),
//    which parses the index as it arrives, against the way before it (the
//    index's text() and JSON.parse, then openSharded of the object and the
//    shard URLs), interleaved.
//
// Bytes are the answers' bodies, against the least an open must read: the
// index and each shard's 8 + N header bytes. Beside the open time: how long
// the client's thread was busy during it (its event loop's active time: the
// index's JSON.parse, the HTTP requests, the headers' parse and checks;
// the server is another thread), and the least an open can wait: the index,
// then the shards in rounds of 8, 30 ms each. The heap: its most (sampled
// every 20 ms while the open runs, so a single long call such as
// JSON.parse shows only what it left) and what the model holds once open,
// both above the heap before the open (after a gc()).

import { Worker } from 'node:worker_threads';
import { openSharded } from 'safetensors-nano';

const quick = process.argv.includes('--quick');
const DELAY = 30;
const runs = quick ? 2 : 7;

/** The model served from a worker thread (lib/hub-server.js). */
async function serve(model) {
  const worker = new Worker(new URL('./lib/hub-server.js', import.meta.url), {
    workerData: { ...model, delay: DELAY },
  });
  const ask = (m) =>
    new Promise((resolve) => {
      worker.once('message', resolve);
      worker.postMessage(m);
    });
  const info = await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return { ...info, ask, close: () => worker.terminate() };
}

/** One open: milliseconds, the client thread's busy milliseconds, requests, bytes. */
async function openOnce(server, opts = {}) {
  await server.ask('reset');
  const elu = performance.eventLoopUtilization();
  const t0 = performance.now();
  const m = await openSharded(`${server.url}/hub/model.safetensors.index.json`, [], {
    concurrency: CONCURRENCY,
    ...opts,
  });
  const ms = performance.now() - t0;
  const busy = performance.eventLoopUtilization(elu).active;
  if (m.names().length !== server.tensors) throw new Error(`opened ${m.names().length} of ${server.tensors} tensors`);
  return { ms, busy, ...(await server.ask('stats')) };
}

/** Shards opened at once (given to openSharded, so the least wait below holds). */
const CONCURRENCY = 8;
/** The least an open waits: the index, then the shards, CONCURRENCY at a time. */
const waitFloor = (shards) => (1 + Math.ceil(shards / CONCURRENCY)) * DELAY;

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { best: s[0], median: s[s.length >> 1] };
};
const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;

console.log('\n## Sharded opens over HTTP (openSharded, a Range server adding 30 ms to every answer)\n');
{
  const server = await serve({ deepSeek: true });
  const least = server.least;
  const sides = [
    ['first range from the index (default)', {}],
    ['first range 64 KiB (before)', { prefetch: 65536 }],
  ];
  const results = sides.map(() => []);
  await openOnce(server); // warm-up
  for (let r = 0; r < runs; r++) {
    for (const [i, [, opts]] of sides.entries()) results[i].push(await openOnce(server, opts));
  }
  await server.close();
  console.log(
    `DeepSeek-V3-like: ${server.shards} shards, ${server.tensors} tensors, index ${mb(server.indexBytes)}, least to read ${mb(least)}; fastest of ${runs} interleaved opens, the median beside it.\n`,
  );
  console.log(
    '| first range | open (fastest) | open (median) | client busy (median) | requests | bytes fetched | ÷ least |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const [i, [name]] of sides.entries()) {
    const t = stats(results[i].map((x) => x.ms));
    const busy = stats(results[i].map((x) => x.busy));
    const last = results[i].at(-1);
    console.log(
      `| ${name} | ${t.best.toFixed(0)} ms | ${t.median.toFixed(0)} ms | ${busy.median.toFixed(0)} ms | ${last.requests} | ${mb(last.bytes)} | ${(last.bytes / least).toFixed(3)}× |`,
    );
  }
  console.log(
    `\nThe least an open of ${server.shards} shards waits: ${waitFloor(server.shards)} ms (the index, then ${Math.ceil(server.shards / CONCURRENCY)} rounds of ${CONCURRENCY} requests).`,
  );
  const [ours, before] = results.map((r) => stats(r.map((x) => x.ms)));
  console.log(
    `\nBefore ÷ default: ${(before.best / ours.best).toFixed(2)}× (medians ${(before.median / ours.median).toFixed(2)}×). Goal: open ≤ 1,000 ms, requests ≤ shards + 2, bytes ≤ 1.1× the least.`,
  );
}

console.log('\n### Growth with shards and tensors (default first ranges)\n');
console.log(
  '| shards | tensors | least to read | least wait | open (fastest) | open (median) | client busy (median) | requests | bytes ÷ least |',
);
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
const cases = [
  [10, 92_000],
  [40, 92_000],
  [163, 92_000],
  [500, 92_000],
  [163, 10_000],
  [163, 100_000],
  [163, 1_000_000],
];
for (const [shards, tensors] of quick ? cases.slice(0, 5) : cases) {
  const server = await serve({ tensors, shards });
  const least = server.least;
  const n = tensors >= 1_000_000 ? Math.min(runs, 3) : runs;
  const res = [];
  // The URL limit for a header is 25 MB (fromUrl's default); the 10-shard
  // model's headers are ~1.2 MB each, well within it.
  for (let r = 0; r < n; r++) res.push(await openOnce(server));
  await server.close();
  const t = stats(res.map((x) => x.ms));
  const busy = stats(res.map((x) => x.busy));
  const last = res.at(-1);
  console.log(
    `| ${server.shards} | ${server.tensors} | ${mb(least)} | ${waitFloor(server.shards)} ms | ${t.best.toFixed(0)} ms | ${t.median.toFixed(0)} ms | ${busy.median.toFixed(0)} ms | ${last.requests} | ${(last.bytes / least).toFixed(3)}× |`,
  );
}

/**
 * Collects garbage until the heap stops shrinking: one gc() leaves what the previous open's
 * model let go (its wasm objects' finalizers run after it), which would count against the next.
 */
async function settleHeap() {
  let used = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5 && process.memoryUsage().heapUsed < used; round++) {
    used = process.memoryUsage().heapUsed;
    globalThis.gc?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

console.log('\n### A 1,000,000-tensor index: parsed as it arrives, against text() and JSON.parse\n');
{
  const tensors = quick ? 100_000 : 1_000_000;
  const server = await serve({ tensors, shards: 163 });
  const indexUrl = `${server.url}/hub/model.safetensors.index.json`;
  const shardUrls = Array.from(
    { length: server.shards },
    (_, i) =>
      `${server.url}/hub/model-${String(i + 1).padStart(5, '0')}-of-${String(server.shards).padStart(5, '0')}.safetensors`,
  );
  const sides = [
    ['openSharded(url): streamed parse', () => openSharded(indexUrl, [], { concurrency: CONCURRENCY })],
    [
      'text() + JSON.parse, then openSharded(object) (before)',
      async () =>
        openSharded(JSON.parse(await (await fetch(indexUrl)).text()), shardUrls, { concurrency: CONCURRENCY }),
    ],
  ];
  const results = sides.map(() => []);
  const n = quick ? 2 : 3;
  for (let r = 0; r < n; r++) {
    for (const [i, [, open]] of sides.entries()) {
      await settleHeap();
      const before = process.memoryUsage().heapUsed;
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().heapUsed);
      }, 20);
      const elu = performance.eventLoopUtilization();
      const t0 = performance.now();
      let m = await open();
      const ms = performance.now() - t0;
      const busy = performance.eventLoopUtilization(elu).active;
      clearInterval(sampler);
      if (m.names().length !== server.tensors)
        throw new Error(`opened ${m.names().length} of ${server.tensors} tensors`);
      await settleHeap();
      const held = process.memoryUsage().heapUsed - before;
      peak = Math.max(peak, process.memoryUsage().heapUsed);
      m = null;
      results[i].push({ ms, busy, peak: peak - before, held });
    }
  }
  await server.close();
  console.log(
    `${server.tensors} tensors in ${server.shards} shards, index ${mb(server.indexBytes)}; ${n} interleaved opens each (30 ms per answer).\n`,
  );
  console.log(
    '| index read | open (fastest) | open (median) | client busy (median) | heap peak (sampled) | heap held by the model |',
  );
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const [i, [name]] of sides.entries()) {
    const t = stats(results[i].map((x) => x.ms));
    const busy = stats(results[i].map((x) => x.busy));
    const peak = Math.max(...results[i].map((x) => x.peak));
    const held = stats(results[i].map((x) => x.held));
    console.log(
      `| ${name} | ${t.best.toFixed(0)} ms | ${t.median.toFixed(0)} ms | ${busy.median.toFixed(0)} ms | ${mb(peak)} | ${mb(held.median)} |`,
    );
  }
  const [ours, before] = results.map((r) => stats(r.map((x) => x.ms)));
  console.log(
    `\nBefore ÷ streamed: ${(before.best / ours.best).toFixed(2)}× (medians ${(before.median / ours.median).toFixed(2)}×). Goal: the 1,000,000-tensor open ≤ 4,000 ms.`,
  );
}
