// How long the web viewer takes to list a DeepSeek-like sharded model (163 shards, 91,990 tensors)
// opened by ?url=, from a server that waits 30 ms before every response (tests/js/lib/hub-server.js,
// in a worker thread), over HTTP/1.1 and over HTTP/2 (TLS with a throwaway certificate,
// tests/js/lib/tls.js, that Chromium is told to trust by its key's hash). Opens the page `--runs`
// times per protocol, alternating, each in a fresh browser context, and prints per protocol the
// fastest and the median time from the open's start (the page's script running) to the list on
// screen, against its goal (1.5 s over HTTP/1.1, 0.5 s over HTTP/2) and the floor that the
// connections set: the index, then the shard requests over the browser's connections to one host
// (6 over HTTP/1.1; over HTTP/2 one connection, 100 requests at a time), each round at least
// 30 ms. The time from navigation (the page's own loading included) is printed beside it, and the
// CPU time an open costs the browser's processes and the test servers (Linux's /proc,
// tests/viewer/cpu-time.mjs): divided by the machine's cores, a floor that no wait removes.
//
// Chromium is driven by puppeteer-core with its network monitoring off (`networkEnabled: false`),
// not by Playwright as in the tests: both otherwise turn on the browser's Network domain for every
// page, which records each of the 164 requests for an inspector while they are timed.
//
// `--profile` adds where the time of each protocol's fastest run went, from the performance marks
// of the page and its open worker (web-demo/app.js, model.js, open-worker.js: the worker reads the
// index and every shard header, the page lists them) and the resource timings, and the CPU time
// of the browser's threads while the shard headers arrive, from one more open with Chromium's
// trace on.
//
//   node tests/viewer/bench-viewer.mjs [--runs 7] [--profile]      (make bench-demo)
//
// Needs dist/demo (make demo-build), Chromium and openssl (scripts/setup.sh web).

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';

import { startServer } from '../../scripts/serve.mjs';
import { testCertificate } from '../js/lib/tls.js';
import { chromiumOptions } from './chromium.mjs';
import { cpuSince, treeCpu } from './cpu-time.mjs';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const DEMO = join(ROOT, 'dist/demo');
const DELAY_MS = 30;

/**
 * The two servers: their goal, and how many requests Chromium has on the wire to one host: 6
 * connections over HTTP/1.1; over HTTP/2 one connection with at most 100 streams, Chromium's limit
 * when the server announces none (as Node's does not; nginx announces 128). The profile prints the
 * most it saw.
 */
const PROTOCOLS = [
  { name: 'HTTP/1.1', version: '1.1', goalMs: 1500, onWire: 6, wire: 'over 6 connections', tls: false },
  { name: 'HTTP/2', version: '2.0', goalMs: 500, onWire: 100, wire: 'on one connection, 100 at a time', tls: true },
];

const { values: opts } = parseArgs({
  options: { runs: { type: 'string', default: '7' }, profile: { type: 'boolean', default: false } },
});
const runs = Number(opts.runs);
if (!existsSync(join(DEMO, 'index.html'))) throw new Error('dist/demo is missing: run make demo-build');

const certificate = testCertificate();

/** Starts the model's server for `protocol` in a worker thread; resolves to {info, ask, stop}. */
async function startHub(protocol) {
  const tls = protocol.tls ? { key: certificate.key, cert: certificate.cert } : null;
  const hub = new Worker(new URL('../js/lib/hub-server.js', import.meta.url), {
    workerData: { deepSeek: true, delay: DELAY_MS, tls },
  });
  const info = await new Promise((res, rej) => {
    hub.once('message', res);
    hub.once('error', rej);
  });
  const ask = (m) =>
    new Promise((res) => {
      hub.once('message', res);
      hub.postMessage(m);
    });
  return { info, ask, stop: () => hub.terminate() };
}

for (const protocol of PROTOCOLS) protocol.hub = await startHub(protocol);
const demo = await startServer({ root: DEMO, port: 0 });
const puppeteer = createRequire(join(ROOT, 'tests/js/package.json'))('puppeteer-core');
// (The SPKI flag trusts the test certificate, and no other that fails to verify.)
const { executablePath, args } = chromiumOptions([`--ignore-certificate-errors-spki-list=${certificate.spki}`]);
const browser = await puppeteer.launch({ executablePath, args, headless: true, pipe: true, networkEnabled: false });
const browserPid = browser.process().pid;

/**
 * Starts counting CPU time; the function it returns gives the ms spent since by the browser's
 * processes (in all and by kind of process) and by the test servers, and their total.
 */
function cpuMeter() {
  const browserBefore = treeCpu(browserPid);
  const serversBefore = process.cpuUsage();
  return () => {
    // (This process runs the test servers, each in a worker thread; its main thread waits.)
    const serversUsage = process.cpuUsage(serversBefore);
    const servers = (serversUsage.user + serversUsage.system) / 1000;
    const { ms: browserMs, byKind } = cpuSince(browserBefore, treeCpu(browserPid));
    return { browser: browserMs, byKind, servers, total: browserMs + servers };
  };
}

/** A new tab in a fresh browser context (no cache, no connections), at a desktop's size. */
async function freshPage() {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ width: 1440, height: 900 });
  return { context, page };
}

/** Opens the viewer in `page` on the model's index by ?url=; resolves once it is ready or failed. */
async function openViewer(page, info) {
  await page.goto(`${new URL(demo.url)}?url=${encodeURIComponent(`${info.url}/hub/model.safetensors.index.json`)}`, {
    waitUntil: 'domcontentloaded',
  });
  await page.waitForFunction(() => ['ready', 'error'].includes(document.body?.dataset.state), {
    polling: 50,
    timeout: 60000,
  });
}

/** One open in a fresh context: the page's own times, the server's counts, and (profile) its timeline. */
async function openOnce({ hub: { info, ask } }) {
  await ask('reset');
  const { context, page } = await freshPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const cpuSpent = cpuMeter();
  await openViewer(page, info);
  const cpu = cpuSpent();
  const failed = await page.evaluate(
    () => document.body.dataset.state !== 'ready' && document.getElementById('error').textContent,
  );
  if (failed !== false) throw new Error(`the open failed: ${failed}`);
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  const run = await page.evaluate(() => ({
    listMs: Number(document.body.dataset.listMs),
    fromNavigation: performance.getEntriesByName('viewer:listed')[0].startTime,
    readyFromNavigation: performance.getEntriesByName('viewer:painted')[0].startTime,
    openMs: Number(document.body.dataset.openMs),
    tensors: Number(document.querySelector('[data-testid="tensor-count"]').dataset.value),
    listed: document.getElementById('count').textContent,
  }));
  Object.assign(run, await ask('stats'), { cpu });
  if (opts.profile) run.timeline = await timeline(page);
  await context.close();
  return run;
}

/**
 * The same requests without the viewer, in a fresh context: a page fetches the index and parses
 * it, then every shard's header bytes at once. The browser's and the server's own time, which no
 * change to the viewer can take away (the viewer's first ranges are a little longer, estimated).
 */
async function bareOnce({ hub: { info } }) {
  const { context, page } = await freshPage();
  await page.goto(`${demo.url}/favicon.ico`);
  const cpuSpent = cpuMeter();
  const ms = await page.evaluate(async ({ url, shardHeaders }) => {
    const t0 = performance.now();
    const index = JSON.parse(await (await fetch(`${url}/hub/model.safetensors.index.json`)).text());
    if (!index.weight_map) throw new Error('no weight_map');
    await Promise.all(
      shardHeaders.map(async ({ name, bytes }) =>
        (await fetch(`${url}/hub/${name}`, { headers: { Range: `bytes=0-${bytes - 1}` } })).arrayBuffer(),
      ),
    );
    return performance.now() - t0;
  }, info);
  const cpu = cpuSpent();
  await context.close();
  return { ms, cpu };
}

// Thread names in Chromium's trace, as the report names them.
const THREADS = new Map([
  ['CrRendererMain', 'page'],
  ['DedicatedWorker thread', 'workers'],
  ['ThreadPoolForegroundWorker', "V8's background tasks (compiling wasm and JS, GC)"],
  ['CrBrowserMain', 'browser'],
]);

/**
 * One more open, not timed, with Chromium's trace on: the CPU time (thread time) of the renderer's
 * and the browser's threads while the shard headers arrive (viewer:shards-request →
 * viewer:shards-read), by thread, the largest first, and that window's length.
 */
async function tracedOpen({ hub: { info } }) {
  const { context, page } = await freshPage();
  await page.tracing.start({ categories: ['toplevel', 'blink.user_timing', '__metadata'] });
  await openViewer(page, info);
  const events = JSON.parse(Buffer.from(await page.tracing.stop()).toString('utf8')).traceEvents;
  await context.close();
  const names = new Map();
  for (const e of events) if (e.ph === 'M') names.set(`${e.name}:${e.pid}:${e.tid}`, e.args.name);
  const at = (mark) => events.find((e) => e.name === mark && e.cat.includes('user_timing'))?.ts;
  const [from, to] = [at('viewer:shards-request'), at('viewer:shards-read')];
  const cpu = new Map();
  for (const e of events) {
    // (Each task's thread time, the part of it inside the window.)
    if (e.ph !== 'X' || !e.dur || !e.tdur || !e.name.endsWith('RunTask')) continue;
    const inside = Math.min(e.ts + e.dur, to) - Math.max(e.ts, from);
    const process = names.get(`process_name:${e.pid}:0`);
    const thread = THREADS.get(names.get(`thread_name:${e.pid}:${e.tid}`));
    if (inside <= 0 || thread === undefined || (process === 'Browser') !== (thread === 'browser')) continue;
    cpu.set(thread, (cpu.get(thread) ?? 0) + (e.tdur * inside) / e.dur / 1000);
  }
  return { windowMs: (to - from) / 1000, cpu: [...cpu].sort((a, b) => b[1] - a[1]) };
}

/** Marks and resource timings of the page and its workers, in ms since the open started. */
async function timeline(page) {
  const grab = () => ({
    origin: performance.timeOrigin,
    marks: performance.getEntriesByType('mark').map((m) => ({ name: m.name, t: m.startTime, detail: m.detail })),
    res: performance.getEntriesByType('resource').map((r) => ({
      name: r.name,
      start: r.startTime,
      sent: r.requestStart,
      first: r.responseStart,
      end: r.responseEnd,
    })),
  });
  const main = await page.evaluate(grab);
  const out = { marks: [], res: [] };
  const t0 = main.marks.find((m) => m.name === 'viewer:open').t;
  const add = (g) => {
    const shift = g.origin - main.origin - t0;
    for (const m of g.marks) out.marks.push({ ...m, t: m.t + shift });
    for (const r of g.res)
      out.res.push({ ...r, start: r.start + shift, sent: r.sent + shift, first: r.first + shift, end: r.end + shift });
  };
  add(main);
  for (const w of page.workers()) add(await w.evaluate(grab));
  return out;
}

function report(tl, info) {
  const mark = (name) => tl.marks.filter((m) => m.name === name);
  const at = (name) => mark(name)[0]?.t;
  const total = (xs) => xs.reduce((sum, x) => sum + x, 0);
  const mean = (xs) => total(xs) / xs.length;
  const hubRes = tl.res.filter((r) => r.name.startsWith(info.url));
  const index = hubRes.find((r) => r.name.endsWith('.json'));
  const shards = hubRes.filter((r) => r.name.endsWith('.safetensors'));
  const firstQueued = Math.min(...shards.map((r) => r.start));
  const firstSent = Math.min(...shards.map((r) => r.sent));
  const lastSent = Math.max(...shards.map((r) => r.sent));
  const firstStart = Math.min(...shards.map((r) => r.first));
  const lastEnd = Math.max(...shards.map((r) => r.end));
  // Shard requests on the wire (sent, not yet answered), sampled every millisecond.
  let onWire = 0;
  let mostOnWire = 0;
  for (let t = firstSent; t < lastEnd; t++) {
    const n = shards.filter((r) => r.sent <= t && r.end > t).length;
    onWire += n;
    mostOnWire = Math.max(mostOnWire, n);
  }
  const lines = [
    [index.first - index.start, 'index: requested → its answer begins'],
    [index.end - index.first, `index: its ${(info.indexBytes / 1e6).toFixed(1)} MB arrive`],
    [at('viewer:index-fetched') - index.end, 'index: its last bytes read and decoded (open worker)'],
    [at('viewer:index-parsed') - at('viewer:index-fetched'), 'index: JSON.parse (open worker)'],
    [
      at('viewer:shards-request') - at('viewer:index-parsed'),
      "index: each shard's header size estimated (the first range)",
    ],
    [
      firstQueued - at('viewer:shards-request'),
      `first shard request issued (by the open worker; its package ready at ${at('worker:ready').toFixed(0)} ms)`,
    ],
    [
      lastEnd - firstQueued,
      `shard requests, first issued → last answered (${(onWire / (lastEnd - firstSent)).toFixed(1)} on the wire on average, ${mostOnWire} at the most; sent → answer begins ${mean(shards.map((r) => r.first - r.sent)).toFixed(1)} ms each)`,
    ],
    [lastSent - firstQueued, '  of which: first issued → last sent'],
    [firstStart - firstQueued, '  of which: first issued → first answer begins'],
    [at('viewer:shards-read') - lastEnd, 'last answer → its header parsed (open worker) and its rows built (page)'],
    [at('viewer:rendered') - at('viewer:shards-read'), 'model, summary and list built'],
    [at('viewer:listed') - at('viewer:rendered'), 'list painted (all tensors listed)'],
    [at('viewer:painted') - at('viewer:listed'), 'integrity report and side panels, painted (ready)'],
  ];
  console.log('  where the fastest open spent its time (ms from the open, page clock):');
  for (const [ms, what] of lines) console.log(`    ${ms.toFixed(0).padStart(6)}  ${what}`);
}

// Alternating, so that both protocols see the same machine load.
for (const p of PROTOCOLS) p.results = [];
for (let i = 0; i < runs; i++) {
  for (const p of PROTOCOLS) {
    const r = await openOnce(p);
    const { info } = p.hub;
    if (r.tensors !== info.tensors || r.listed !== `${info.tensors.toLocaleString('en-US')} tensors`)
      throw new Error(`${p.name}: listed ${r.tensors} tensors (${r.listed}), expected ${info.tensors}`);
    if (r.versions.join() !== p.version)
      throw new Error(`${p.name}: the server saw HTTP/${r.versions.join(', HTTP/')} requests`);
    p.results.push(r);
    if (opts.profile) (p.bare ??= []).push(await bareOnce(p));
  }
}
if (opts.profile) for (const p of PROTOCOLS) p.traced = await tracedOpen(p);
await browser.close();
await demo.close();
for (const p of PROTOCOLS) await p.hub.stop();

const median = (xs) => xs[Math.floor(xs.length / 2)];
/** CPU ms by kind of browser process, the largest first. */
const cpuParts = (byKind) =>
  Object.entries(byKind)
    .filter(([, ms]) => ms >= 1)
    .sort((a, b) => b[1] - a[1])
    .map(([kind, ms]) => `${kind} ${ms.toFixed(0)}`)
    .join(', ');
const { info } = PROTOCOLS[0].hub;
console.log(
  `viewer: ?url= of a DeepSeek-like index (${info.shards} shards, ${info.tensors} tensors, ${DELAY_MS} ms per response), ${runs} opens per protocol`,
);
for (const p of PROTOCOLS) {
  const { results } = p;
  const sorted = (key) => results.map((r) => r[key]).sort((a, b) => a - b);
  const list = sorted('listMs');
  const ready = sorted('openMs');
  const fastest = results.find((r) => r.listMs === list[0]);
  const verdict = (ms) => (ms <= p.goalMs ? 'met' : 'NOT met');
  const rounds = 1 + Math.ceil(info.shards / p.onWire);
  console.log(`${p.name}:`);
  console.log(
    `  all tensors listed: fastest ${list[0].toFixed(0)} ms, median ${median(list).toFixed(0)} ms (goal ≤ ${p.goalMs} ms: ${verdict(list[0])} by the fastest, ${verdict(median(list))} by the median)`,
  );
  console.log(
    `  from navigation (loading the page included): fastest ${sorted('fromNavigation')[0].toFixed(0)} ms, median ${median(sorted('fromNavigation')).toFixed(0)} ms`,
  );
  console.log(
    `  with the integrity report and side panels: fastest ${ready[0].toFixed(0)} ms, median ${median(ready).toFixed(0)} ms`,
  );
  const cpus = results.map((r) => r.cpu.total).sort((a, b) => a - b);
  if (!Number.isNaN(cpus[0])) {
    const cores = availableParallelism();
    const lightest = results.find((r) => r.cpu.total === cpus[0]);
    console.log(
      `  CPU per open, from navigation to ready: median ${median(cpus).toFixed(0)} ms (the least: ${lightest.cpu.browser.toFixed(0)} ms in the browser's processes: ${cpuParts(lightest.cpu.byKind)}; ${lightest.cpu.servers.toFixed(0)} ms in the test servers); on ${cores} cores that is ≥ ${(cpus[0] / cores).toFixed(0)} ms of wall time, against ${sorted('readyFromNavigation')[0].toFixed(0)} ms from navigation to ready (fastest)`,
    );
  }
  console.log(
    `  floor: ${rounds} rounds of requests (the index, then ${info.shards} shards ${p.wire}) × ${DELAY_MS} ms = ${rounds * DELAY_MS} ms`,
  );
  const requests = Math.max(...results.map((r) => r.requests));
  const bytes = Math.max(...results.map((r) => r.bytes));
  console.log(
    `  requests ${requests} (goal ≤ ${info.shards + 2}), bytes ${bytes} = ${(bytes / info.least).toFixed(3)}× the index + headers (goal ≤ 1.1×), the most of any open`,
  );
  if (opts.profile) {
    const bare = p.bare.map((b) => b.ms).sort((a, b) => a - b);
    const bareCpu = p.bare.map((b) => b.cpu.total).sort((a, b) => a - b);
    const bareLightest = p.bare.find((b) => b.cpu.total === bareCpu[0]);
    const left = p.goalMs - bare[0];
    console.log(
      `  the same requests from a bare page (index fetched and parsed, then every shard's header bytes at once, no viewer): fastest ${bare[0].toFixed(0)} ms, median ${median(bare).toFixed(0)} ms; CPU (browser and servers) median ${median(bareCpu).toFixed(0)} ms (the least: ${cpuParts(bareLightest.cpu.byKind)})`,
    );
    console.log(
      left > 0
        ? `  so the goal leaves the viewer ${left.toFixed(0)} ms beyond the bare requests on this machine, for its worker, its parse of every header and its list`
        : `  so on this machine the bare requests alone take longer than the goal, by ${(-left).toFixed(0)} ms`,
    );
    report(fastest.timeline, p.hub.info);
    const { traced } = p;
    console.log(
      `  CPU while the shard headers arrive (one more open, traced: ${traced.windowMs.toFixed(0)} ms): ${traced.cpu.map(([thread, ms]) => `${thread} ${ms.toFixed(0)} ms`).join(', ')}`,
    );
  }
  if (process.env.DUMP)
    for (const r of fastest.timeline.res.filter((r) => !r.name.includes('/hub/')).sort((a, b) => a.start - b.start))
      console.log(r.start.toFixed(0), r.sent.toFixed(0), r.end.toFixed(0), r.name.replace(/.*:\d+\//, ''));
  if (process.env.DUMP) console.log(fastest.timeline.marks.filter((m) => m.name === 'worker:ready'));
}
