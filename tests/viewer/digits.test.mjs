// The digits page (web-demo/digits.html) in headless Chromium: the firmware's
// model loaded through safetensors-nano onto the GPU (--enable-unsafe-webgpu:
// SwiftShader) and on the CPU by choice (?backend=cpu); without WebGPU, in
// every engine, in engines.test.mjs. On the 360 bundled test samples every
// path predicts what the host's Python model does
// (tests/firmware/reference.py, the firmware's arithmetic in numpy); digits
// drawn with the mouse are classified. The viewer's landing page links the page.
//
// Needs: dist/demo (scripts/build-demo.sh, which trains the model into
// vendor/digits/), tests/.venv (scripts/setup.sh python), chromium, playwright-core.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { startServer } from '../../scripts/serve.mjs';
import { CHROMIUM_FLAGS } from '../js/lib/engines.js';
import { CHROMIUM, playwright } from './chromium.mjs';
import { hostDigits } from './fixtures.mjs';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const DEMO = join(ROOT, 'dist/demo');
const OUT = join(ROOT, 'test-output/demo');
const PYTHON = join(ROOT, 'tests/.venv/bin/python');

let server;
let host; // { predictions, correct, total } of the Python model
const browsers = [];

async function open(args, query = '') {
  const browser = await playwright.chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_FLAGS, ...args] });
  browsers.push(browser);
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.errors = errors;
  await page.goto(`${server.url}digits.html${query}`);
  await page.waitForFunction(() => document.body.dataset.state !== 'loading', null, { timeout: 30000 });
  assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready', await page.textContent('#backend'));
  return page;
}

async function runSamples(page) {
  await page.click('#run-samples');
  await page.waitForFunction(() => document.getElementById('samples-result').dataset.predictions, null, {
    timeout: 60000,
  });
  return page.evaluate(() => {
    const r = document.getElementById('samples-result');
    return { predictions: r.dataset.predictions, correct: Number(r.dataset.correct), text: r.textContent };
  });
}

// Strokes (lists of points on the 256 × 256 pad) drawn with mouse events.
async function draw(page, strokes) {
  await page.click('#clear');
  const box = await page.locator('#pad').boundingBox();
  for (const stroke of strokes) {
    await page.mouse.move(box.x + stroke[0][0], box.y + stroke[0][1]);
    await page.mouse.down();
    for (const [x, y] of stroke.slice(1)) await page.mouse.move(box.x + x, box.y + y, { steps: 8 });
    await page.mouse.up();
  }
  // The last stroke's classification, not an earlier stroke's.
  await page.waitForFunction(
    () => document.getElementById('prediction').textContent !== '–' && !document.getElementById('pad').dataset.busy,
  );
  return Number(await page.textContent('#prediction'));
}

const ZERO = [
  Array.from({ length: 41 }, (_, i) => [
    128 + 60 * Math.sin((i / 40) * 2 * Math.PI),
    128 - 95 * Math.cos((i / 40) * 2 * Math.PI),
  ]),
];
const ONE = [
  [
    [128, 30],
    [128, 226],
  ],
];
const FOUR = [
  [
    [150, 30],
    [60, 160],
    [200, 160],
  ],
  [
    [150, 30],
    [150, 226],
  ],
];

describe('the digits page', { timeout: 180000 }, () => {
  before(async () => {
    if (!existsSync(join(DEMO, 'digits.html')) || !existsSync(join(DEMO, 'vendor/digits/model.safetensors'))) {
      execFileSync('bash', [join(ROOT, 'scripts/build-demo.sh')], { stdio: 'inherit', cwd: ROOT });
    }
    mkdirSync(OUT, { recursive: true });
    host = hostDigits(ROOT, PYTHON, join(DEMO, 'vendor/digits'));
    server = await startServer({ root: DEMO, port: 0 });
  });

  after(async () => {
    for (const b of browsers) await b.close();
    await server?.close();
  });

  test('the viewer links it', async () => {
    const page = await open(['--disable-gpu']);
    await page.goto(server.url);
    await page.click('#digits-link');
    await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 30000 });
    assert.match(page.url(), /digits\.html$/);
  });

  test('on WebGPU: the 360 samples as the host model predicts them (the firmware 347/360); drawn digits classified', async () => {
    const page = await open(['--enable-unsafe-webgpu']);
    assert.equal(await page.evaluate(() => document.body.dataset.backend), 'gpu');
    assert.match(await page.textContent('#backend'), /^WebGPU/);
    const r = await runSamples(page);
    console.log(`# GPU: ${r.text} (host: ${host.correct} / ${host.total})`);
    assert.equal(host.total, 360);
    assert.equal(r.predictions, host.predictions);
    assert.equal(r.correct, host.correct);
    assert.equal(await draw(page, ZERO), 0);
    assert.equal(await draw(page, ONE), 1);
    assert.equal(await draw(page, FOUR), 4);
    await page.screenshot({ path: join(OUT, 'digits-gpu.png'), fullPage: true });
    assert.deepEqual(page.errors, []);
  });

  test('?backend=cpu, where WebGPU is there: the CPU path, the same predictions', async () => {
    const page = await open(['--enable-unsafe-webgpu'], '?backend=cpu');
    assert.equal(await page.evaluate(() => document.body.dataset.backend), 'cpu');
    const r = await runSamples(page);
    assert.equal(r.predictions, host.predictions);
    assert.equal(await draw(page, ZERO), 0);
    assert.deepEqual(page.errors, []);
  });
});
