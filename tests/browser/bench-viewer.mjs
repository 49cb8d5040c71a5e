// How long the web viewer takes to list a DeepSeek-like sharded model (163 shards, 91,990 tensors)
// opened by ?url=, from a server that waits 30 ms before every response (tests/js/lib/hub-server.js,
// in a worker thread). Opens the page `--runs` times, each in a fresh browser context, and prints
// the fastest and the median time from the open's start to the list on screen, against the goal
// (1.5 s) and the floor that the connection limit sets: the index, then the shard requests over
// the browser's connections to one host (6 over HTTP/1.1), each round at least 30 ms.
//
// `--profile` adds where the time of the fastest run went, from the performance marks of the page
// and its worker (web-demo/model.js, app.js, worker.js) and the requests' resource timings.
//
//   node tests/browser/bench-viewer.mjs [--runs 7] [--profile]      (make bench-demo)
//
// Needs dist/demo (make demo-build), Chromium and playwright-core (scripts/setup.sh web).

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';

import { startServer } from '../../scripts/serve.mjs';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const DEMO = join(ROOT, 'dist/demo');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const DELAY_MS = 30;
const GOAL_MS = 1500;
const CONNECTIONS = 6; // Chromium's limit per host over HTTP/1.1

const { values: opts } = parseArgs({ options: { runs: { type: 'string', default: '7' }, profile: { type: 'boolean', default: false } } });
const runs = Number(opts.runs);
if (!existsSync(join(DEMO, 'index.html'))) throw new Error('dist/demo is missing: run make demo-build');
const { chromium } = createRequire(join(ROOT, 'tests/js/package.json'))('playwright-core');

const hub = new Worker(new URL('../js/lib/hub-server.js', import.meta.url), { workerData: { deepSeek: true, delay: DELAY_MS } });
const info = await new Promise((res, rej) => {
  hub.once('message', res);
  hub.once('error', rej);
});
const ask = (m) =>
  new Promise((res) => {
    hub.once('message', res);
    hub.postMessage(m);
  });
const demo = await startServer({ root: DEMO, port: 0 });
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

/** One open in a fresh context: the page's own times, the server's counts, and (profile) its timeline. */
async function openOnce() {
  await ask('reset');
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${new URL(demo.url)}?url=${encodeURIComponent(`${info.url}/hub/model.safetensors.index.json`)}`);
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { polling: 50, timeout: 60000 });
  const run = await page.evaluate(() => ({ openMs: Number(document.body.dataset.openMs), tensors: Number(document.querySelector('[data-testid="tensor-count"]').dataset.value) }));
  Object.assign(run, await ask('stats'), { errors });
  if (opts.profile) run.timeline = await timeline(page);
  await context.close();
  return run;
}

/** Marks and resource timings of the page and its workers, in ms since the open started. */
async function timeline(page) {
  const grab = () => ({
    origin: performance.timeOrigin,
    marks: performance.getEntriesByType('mark').map((m) => ({ name: m.name, t: m.startTime, detail: m.detail })),
    res: performance.getEntriesByType('resource').map((r) => ({ name: r.name, start: r.startTime, sent: r.requestStart, first: r.responseStart, end: r.responseEnd })),
  });
  const main = await page.evaluate(grab);
  const out = { marks: [], res: [] };
  const t0 = main.marks.find((m) => m.name === 'viewer:open').t;
  const add = (g) => {
    const shift = g.origin - main.origin - t0;
    for (const m of g.marks) out.marks.push({ ...m, t: m.t + shift });
    for (const r of g.res) out.res.push({ ...r, start: r.start + shift, sent: r.sent + shift, first: r.first + shift, end: r.end + shift });
  };
  add(main);
  for (const w of page.workers()) add(await w.evaluate(grab));
  return out;
}

function report(tl) {
  const mark = (name) => tl.marks.filter((m) => m.name === name);
  const at = (name) => mark(name)[0]?.t;
  const hubRes = tl.res.filter((r) => r.name.startsWith(info.url));
  const shardRes = hubRes.filter((r) => r.name.endsWith('.safetensors'));
  const span = (list, f) => [Math.min(...list.map(f)), Math.max(...list.map(f))];
  const [firstShard] = span(shardRes, (r) => r.start);
  const [, lastShard] = span(shardRes, (r) => r.end);
  // How many shard requests were in flight, sampled every ms across their span.
  let sum = 0;
  let n = 0;
  for (let t = firstShard; t < lastShard; t += 1) {
    sum += shardRes.filter((r) => r.start <= t && r.end > t).length;
    n++;
  }
  const per = (a, b) => {
    const byUrl = new Map(mark(a).map((m) => [m.detail, m.t]));
    return mark(b).map((m) => m.t - (byUrl.get(m.detail) ?? m.t));
  };
  const total = (xs) => xs.reduce((s, x) => s + x, 0);
  const resEnd = new Map(shardRes.map((r) => [r.name, r.end]));
  const parse = mark('worker:parsed').map((m) => m.t - (resEnd.get(m.detail) ?? m.t));
  const f = (x) => `${x.toFixed(0)} ms`;
  const indexRes = hubRes.find((r) => r.name.endsWith('.json'));
  const lines = [
    ['index: request sent → first byte → last byte', indexRes.first - indexRes.sent],
    ['  first byte → last byte', indexRes.end - indexRes.first],
    ['  last byte → bytes on the page', at('viewer:index-fetched') - indexRes.end],
    ['index request → text', at('viewer:index-fetched') - at('viewer:index-request')],
    ['index JSON.parse, sizes', at('viewer:index-parsed') - at('viewer:index-fetched')],
    ['index parsed → shard sizes estimated', at('viewer:shards-request') - at('viewer:index-parsed')],
    ['shard sizes → first shard request', firstShard - at('viewer:shards-request')],
    [`shard requests, first start → last response end (mean ${(sum / n).toFixed(1)} in flight)`, lastShard - firstShard],
    ['last response → all headers on the page', at('viewer:shards-read') - lastShard],
    ['rows built (Model)', at('viewer:rows-built') - at('viewer:shards-read')],
    ['integrity check', at('viewer:model-built') - at('viewer:rows-built')],
    ['model built → rendered', at('viewer:rendered') - at('viewer:model-built')],
    ['  model built → summary', at('viewer:summed') - at('viewer:model-built')],
    ['  side', at('viewer:side') - at('viewer:summed')],
    ['  table', at('viewer:table') - at('viewer:side')],
    ['  list', at('viewer:rendered') - at('viewer:table')],
    ['rendered → painted (ready)', at('viewer:painted') - at('viewer:rendered')],
  ];
  const mean = (xs) => total(xs) / xs.length;
  lines.splice(7, 0, [`  per shard request: sent → first byte ${mean(shardRes.map((r) => r.first - r.sent)).toFixed(1)} ms, → last byte ${mean(shardRes.map((r) => r.end - r.first)).toFixed(1)} ms, queued ${mean(shardRes.map((r) => r.sent - r.start)).toFixed(0)} ms`, NaN]);
  console.log('  where the fastest open spent its time (page clock, from the open):');
  for (const [what, ms] of lines) console.log(`    ${f(ms).padStart(8)}  ${what}`);
  console.log(`    worker, summed over shards: wasm parse after the response ${f(total(parse))}, columns ${f(total(per('worker:parsed', 'worker:columns')))}, post ${f(total(per('worker:columns', 'worker:posted')))}`);
  console.log(`    page, summed over shards: names split ${f(total(per('viewer:header-in', 'viewer:header-done')))}`);
}

const results = [];
for (let i = 0; i < runs; i++) {
  const r = await openOnce();
  if (r.tensors !== info.tensors) throw new Error(`listed ${r.tensors} tensors, expected ${info.tensors}`);
  if (r.errors.length) throw new Error(`page errors: ${r.errors.join('; ')}`);
  results.push(r);
}
await browser.close();
await demo.close();
await hub.terminate();

const times = results.map((r) => r.openMs).sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)];
const fastest = results.find((r) => r.openMs === times[0]);
const rounds = 1 + Math.ceil(info.shards / CONNECTIONS);
console.log(`viewer: ?url= of a DeepSeek-like index (${info.shards} shards, ${info.tensors} tensors, ${DELAY_MS} ms per response), ${runs} opens`);
console.log(`  listed in: fastest ${times[0].toFixed(0)} ms, median ${median.toFixed(0)} ms (goal ≤ ${GOAL_MS} ms: ${times[0] <= GOAL_MS ? 'met' : 'NOT met'} by the fastest, ${median <= GOAL_MS ? 'met' : 'not met'} by the median)`);
console.log(`  HTTP/1.1 floor: ${rounds} rounds of requests (the index, then ${info.shards} shards over ${CONNECTIONS} connections) × ${DELAY_MS} ms = ${rounds * DELAY_MS} ms`);
console.log(`  requests ${fastest.requests} (goal ≤ ${info.shards + 2}), bytes ${fastest.bytes} = ${(fastest.bytes / info.least).toFixed(3)}× the index + headers (goal ≤ 1.1×)`);
if (opts.profile) report(fastest.timeline);
if (process.env.DUMP) {
  const tl = fastest.timeline;
  const parsed = new Map(tl.marks.filter((m) => m.name === 'worker:parsed').map((m) => [m.detail, m.t]));
  const posted = new Map(tl.marks.filter((m) => m.name === 'worker:posted').map((m) => [m.detail, m.t]));
  for (const r of tl.res.filter((r) => r.name.endsWith('.safetensors')).sort((a, b) => a.sent - b.sent)) console.log(r.start.toFixed(1), r.sent.toFixed(1), r.first.toFixed(1), r.end.toFixed(1), parsed.get(r.name)?.toFixed(1), posted.get(r.name)?.toFixed(1), r.name.slice(-30));
}
