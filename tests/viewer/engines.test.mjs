// The viewer's main paths in every browser engine: Chromium, Firefox ESR and WebKitGTK, through
// one page API (tests/js/lib/engines.js). A File from the file input and a tensor's statistics;
// a second File to compare with; a sharded model by ?url=; "Save as…" where the browser cannot
// write files itself (the page states its limit and downloads the result); the digits page's
// CPU path where there is no WebGPU (the page says so).
//
// What each engine lacks, and what the page does instead (asserted below, not skipped):
// - WebGPU: Firefox ESR 153 and WebKitGTK 2.50 have no navigator.gpu (Chromium runs here with
//   --disable-gpu, so no adapter): the digits page states it and runs on the CPU.
// - The File System Access API (showSaveFilePicker, showDirectoryPicker): Firefox and WebKit
//   have none (Chromium's is removed from the page here): Save as… says so and downloads.
//
// The deeper Chromium-only suites are demo.test.mjs, save.test.mjs and digits.test.mjs.
//
//   node --test tests/viewer/engines.test.mjs        (ENGINES=firefox for one engine)

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { startServer } from '../../scripts/serve.mjs';
import { engines, launch } from '../js/lib/engines.js';
import { bf16, bf16ToFloat, hostDigits, rng, safetensors, stats, writeFile } from './fixtures.mjs';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const DEMO = join(ROOT, 'dist/demo');
const OUT = join(ROOT, 'test-output/demo/engines');
const PYTHON = join(ROOT, 'tests/.venv/bin/python');

let server;
let dir;
let pkg; // the built package in Node: the oracle for the saved bytes
let host; // the digits the host's Python model predicts

// The files: A with known values (F32, BF16, NaN and ±Inf), B its edited twin.
const r = rng(5);
const w = Float32Array.from({ length: 40 * 30 }, () => r.gauss() * 0.5);
const w2 = Float32Array.from(w, (x, i) => (i % 7 === 0 ? x + 0.25 : x));
const norm = Array.from({ length: 40 }, (_, i) => 1 + i / 64);
const specials = Float32Array.from([0, -0, 1.5, NaN, Infinity, -Infinity, NaN, 2, 0, -3, 4, 5]);
const A = [
  { name: 'model.proj.weight', dtype: 'F32', shape: [40, 30], data: w },
  { name: 'model.norm.weight', dtype: 'BF16', shape: [40], data: bf16(norm) },
  { name: 'model.specials', dtype: 'F32', shape: [3, 4], data: specials },
  { name: 'gone.bias', dtype: 'F32', shape: [4], data: new Float32Array(4) },
];
const B = [
  { name: 'model.proj.weight', dtype: 'F32', shape: [40, 30], data: w2 },
  { name: 'model.norm.weight', dtype: 'F32', shape: [40], data: Float32Array.from(norm) },
  { name: 'model.specials', dtype: 'F32', shape: [3, 4], data: specials },
  { name: 'new.bias', dtype: 'F32', shape: [4], data: new Float32Array(4) },
];

const ready = (page) => page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 30000 });
const cardValue = (page, id) =>
  page.evaluate((id) => Number(document.querySelector(`[data-testid="${id}"]`).dataset.value), id);

/** Filters the list down to `name` (a unique substring) and opens it; waits for its panel. */
async function openTensor(page, name, panel = 'stats', list = '#list') {
  await page.fill('#filter', name);
  await page.waitForFunction(
    ({ list, name }) =>
      [...document.querySelectorAll(`${list} .vt-row:not([hidden])`)].length === 1 &&
      document.querySelector(`${list} .vt-row:not([hidden])`).textContent.includes(name),
    { list, name },
  );
  await page.click(`${list} .vt-row:not([hidden])`);
  await page.waitForSelector(`#detail[data-tensor="${name}"] [data-testid="${panel}"]`, { timeout: 30000 });
}

/** The numbers of a panel's cards (statistics or difference), at full precision. */
const readCards = (page, panel) =>
  page.evaluate(
    (panel) =>
      Object.fromEntries(
        [...document.querySelectorAll(`#detail [data-testid="${panel}"] .card`)].map((c) => [
          c.dataset.stat,
          c.querySelector('dd').title || c.querySelector('dd').textContent,
        ]),
      ),
    panel,
  );

function close(a, b, what, rel = 1e-6) {
  assert.ok(Math.abs(a - b) <= rel * Math.max(1, Math.abs(b)), `${what}: viewer ${a}, expected ${b}`);
}

// Chromium has the pickers: without them, it takes the path Firefox and WebKit take.
function removePickers() {
  delete window.showSaveFilePicker;
  delete window.showDirectoryPicker;
  delete Window.prototype.showSaveFilePicker;
  delete Window.prototype.showDirectoryPicker;
}

describe('the viewer in every engine', { timeout: 600000 }, () => {
  before(async () => {
    if (!existsSync(join(DEMO, 'index.html')) || !existsSync(join(DEMO, 'vendor/digits/model.safetensors'))) {
      execFileSync('bash', [join(ROOT, 'scripts/build-demo.sh')], { stdio: 'inherit', cwd: ROOT });
    }
    pkg = await import(pathToFileURL(join(DEMO, 'vendor/safetensors-nano/node.js')).href);
    host = hostDigits(ROOT, PYTHON, join(DEMO, 'vendor/digits'));
    mkdirSync(OUT, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'st-engines-'));
    writeFile(join(dir, 'A.safetensors'), safetensors(A, { format: 'pt' }));
    writeFile(join(dir, 'B.safetensors'), safetensors(B, { format: 'pt' }));
    server = await startServer({ root: DEMO, port: 0 });
  });

  after(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const engine of engines()) {
    describe(engine, () => {
      let browser;
      const pages = [];
      const newPage = async (path, options) => {
        const page = await browser.newPage(options);
        pages.push(page);
        await page.goto(server.url + path);
        // (The viewer's listeners are on once its module ran: the last thing it does is set window.viewer.)
        if (!path.startsWith('digits'))
          await page.waitForFunction(() => window.viewer !== undefined, null, { timeout: 30000 });
        return page;
      };

      before(async () => {
        browser = await launch(engine);
      });

      after(async () => {
        const errors = [];
        for (const p of pages) errors.push(...(await p.pageErrors().catch(() => [])));
        await browser?.close();
        assert.deepEqual(errors, []);
      });

      test('a File from the file input: summary and statistics; a second File compared with it', async () => {
        const page = await newPage('');
        await page.setInputFiles('#file-input', join(dir, 'A.safetensors'));
        await ready(page);
        assert.equal(await cardValue(page, 'tensor-count'), A.length);
        assert.equal(await cardValue(page, 'total-params'), 1200 + 40 + 12 + 4);

        await openTensor(page, 'model.proj.weight');
        const want = stats(Array.from(w));
        const got = await readCards(page, 'stats');
        for (const k of ['min', 'max', 'mean', 'std']) close(Number(got[k]), want[k], k);
        await page.waitForFunction(() => document.querySelector('#detail canvas.heatmap')?.dataset.drawn === '1');
        await page.screenshot(join(OUT, `${engine}-stats.png`));
        await openTensor(page, 'model.specials');
        const sp = await readCards(page, 'stats');
        const ws = stats(Array.from(specials));
        assert.deepEqual([sp.NaN, sp['+Inf'], sp['−Inf'], sp.zeros].map(Number), [
          ws.nan,
          ws.posInf,
          ws.negInf,
          ws.zeros,
        ]);
        await openTensor(page, 'model.norm.weight');
        close(Number((await readCards(page, 'stats')).max), Math.max(...bf16ToFloat(bf16(norm))), 'BF16 max');

        await page.fill('#filter', '');
        await page.setInputFiles('#compare-input', join(dir, 'B.safetensors'));
        await page.waitForSelector('[data-testid="compare-summary"]');
        const counts = await page.evaluate(() =>
          Object.fromEntries(
            [...document.querySelectorAll('[data-testid="compare-summary"] [data-status]')].map((e) => [
              e.dataset.status,
              Number(e.dataset.count),
            ]),
          ),
        );
        assert.deepEqual(counts, { removed: 1, added: 1, dtype: 1, same: 2 });
        await openTensor(page, 'model.proj.weight', 'diff', '#compare');
        const diff = await readCards(page, 'diff');
        let maxAbs = 0;
        let differing = 0;
        for (let i = 0; i < w.length; i++) {
          maxAbs = Math.max(maxAbs, Math.abs(w2[i] - w[i]));
          if (w2[i] !== w[i]) differing++;
        }
        close(Number(diff.maxAbs), maxAbs, 'max |Δ|');
        assert.equal(Number(diff.differing.replace(/,/g, '')), differing);
        await page.screenshot(join(OUT, `${engine}-compare.png`));
      });

      test("?url= of a sharded index: both shards by HTTP Range, a tensor's statistics", async () => {
        const index = JSON.parse(readFileSync(join(DEMO, 'samples/tiny-llama/model.safetensors.index.json'), 'utf8'));
        const page = await newPage('?url=samples/tiny-llama/model.safetensors.index.json');
        await ready(page);
        assert.equal(await cardValue(page, 'files'), 2);
        assert.equal(await cardValue(page, 'tensor-count'), Object.keys(index.weight_map).length);
        assert.equal(await cardValue(page, 'integrity'), 0);
        const name = 'model.layers.0.mlp.down_proj.weight';
        const file = pkg.SafeTensors.fromBytes(readFileSync(join(DEMO, 'samples/tiny-llama', index.weight_map[name])));
        await openTensor(page, name);
        const want = stats(Array.from(file.tensor(name).toFloat32()));
        const got = await readCards(page, 'stats');
        for (const k of ['min', 'max', 'mean', 'std']) close(Number(got[k]), want[k], k, 1e-5);
      });

      test('Save as… without the File System Access API: the stated limit, and a download of the edited bytes', async () => {
        const page = await newPage('', engine === 'chromium' ? { initScript: removePickers } : {});
        // (Firefox and WebKit lack the API; when one gains it, give it the picker tests.)
        assert.equal(await page.evaluate(() => typeof window.showSaveFilePicker), 'undefined');
        await page.catchDownloads();
        await page.setInputFiles('#file-input', join(dir, 'A.safetensors'));
        await ready(page);
        await page.click('#save-btn');
        await page.fill('#save-dialog input[name=from]', 'model.');
        await page.select('#save-dialog select[name=convert]', 'BF16');
        await page.waitForFunction(() => !document.querySelector('#save-dialog .save-actions button.primary').disabled);
        assert.match(
          await page.text('#save-dialog .save-note'),
          /cannot write files itself.*downloaded, up to 1.00 GiB/,
        );
        await page.click('#save-dialog .save-actions button.primary');
        await page.waitForFunction(
          () => ['done', 'cancelled', 'error'].includes(document.getElementById('save-dialog').dataset.state),
          null,
          { timeout: 60000 },
        );
        assert.equal(await page.evaluate(() => document.getElementById('save-dialog').dataset.state), 'done');
        const source = pkg.SafeTensors.fromBytes(readFileSync(join(dir, 'A.safetensors')));
        const chunks = [];
        for await (const c of pkg.serializeStream(
          pkg.editTensors(source, { rename: ['model.', ''], convert: 'BF16' }),
          source.metadata(),
        ))
          chunks.push(c);
        const got = await page.downloads();
        assert.deepEqual(
          got.map((d) => d.name),
          ['A-edited.safetensors'],
        );
        assert.deepEqual(got[0].bytes, Buffer.concat(chunks));
      });

      test('the digits page without WebGPU: it says so, and on the CPU predicts what the host model does', async () => {
        const page = await newPage('digits.html', { width: 1100, height: 900 });
        await page.waitForFunction(() => document.body.dataset.state !== 'loading', null, { timeout: 30000 });
        assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready', await page.text('#backend'));
        const backend = await page.text('#backend');
        console.log(`# ${engine}: ${backend}`);
        assert.equal(await page.evaluate(() => document.body.dataset.backend), 'cpu');
        assert.match(backend, /^WebGPU is not available .*: running on the CPU/);
        await page.click('#run-samples');
        await page.waitForFunction(() => document.getElementById('samples-result').dataset.predictions, null, {
          timeout: 60000,
        });
        const predictions = await page.evaluate(() => document.getElementById('samples-result').dataset.predictions);
        assert.equal(host.total, 360);
        assert.equal(predictions, host.predictions);
        // A "1" drawn with the pointer.
        await page.click('#clear');
        const box = await page.evaluate(() => {
          const b = document.getElementById('pad').getBoundingClientRect();
          return { x: b.x, y: b.y };
        });
        await page.draw([
          [
            [box.x + 128, box.y + 30],
            [box.x + 128, box.y + 128],
            [box.x + 128, box.y + 226],
          ],
        ]);
        await page.waitForFunction(
          () =>
            document.getElementById('prediction').textContent !== '–' && !document.getElementById('pad').dataset.busy,
        );
        assert.equal(Number(await page.text('#prediction')), 1);
        await page.screenshot(join(OUT, `${engine}-digits.png`));
      });
    });
  }
});
