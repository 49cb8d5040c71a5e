// The viewer's "Save as…" panel in headless Chromium: a real file opened through the file input,
// saved with the current filter, a rename and BF16 conversion through a save picker (stubbed
// with the origin-private file system, whose handles the worker writes as it would a picked
// file's), checked against the reference (Python computes the expected BF16 bytes); metadata
// keys dropped and set (the reference's save_file with that metadata, byte for byte); shards
// through a folder picker; Cancel mid-write. (The download where the browser has no pickers, in
// every engine: engines.test.mjs.)
//
//   node --test tests/viewer/save.test.mjs      (needs dist/demo: scripts/build-demo.sh)

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  ftruncateSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { startServer } from '../../scripts/serve.mjs';
import { chromiumOptions, playwright, unavailable } from './chromium.mjs';
import { assemble, safetensors } from './fixtures.mjs';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const DEMO = join(ROOT, 'dist/demo');
const PYTHON = join(ROOT, 'tests/.venv/bin/python');

const missing = unavailable('the Save as… tests', () =>
  existsSync(PYTHON) ? null : `no ${PYTHON} (scripts/setup.sh python)`,
);

let server;
let browser;
let dir;
let pkg; // the built package in Node: the same edit, written here, is the expected file

// The pickers, answered from the origin-private file system (no dialog in a headless run).
function stubPickers() {
  let n = 0;
  window.showSaveFilePicker = async ({ suggestedName }) => {
    window.__picked = suggestedName;
    return (await navigator.storage.getDirectory()).getFileHandle(suggestedName, { create: true });
  };
  window.showDirectoryPicker = async () => {
    window.__picked = `folder-${++n}`;
    return (await navigator.storage.getDirectory()).getDirectoryHandle(window.__picked, { create: true });
  };
}

async function newPage() {
  const context = await browser.newContext({ acceptDownloads: true });
  await context.addInitScript(stubPickers);
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  await page.goto(server.url);
  return page;
}

async function openFile(page, path) {
  await page.setInputFiles('#file-input', path);
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 20000 });
}

/** Opens the panel, fills it in, waits for the summary; returns the dialog's summary text. */
async function fill(
  page,
  { which = 'all', from = '', to = '', convert = 'keep', output = 'file', shardSize = '5GB', dropKeys = [], set = [] },
) {
  await page.click('#save-btn');
  const d = page.locator('#save-dialog');
  for (const key of dropKeys) await d.locator(`input[name=dropKey][value="${key}"]`).check();
  for (const [i, [key, value]] of set.entries()) {
    if (i > 0) await d.getByRole('button', { name: 'Add a key' }).click();
    await d.locator('input[name=setKey]').nth(i).fill(key);
    await d.locator('input[name=setValue]').nth(i).fill(value);
  }
  await d.locator(`input[name=which][value=${which}]`).check();
  await d.locator('input[name=from]').fill(from);
  await d.locator('input[name=to]').fill(to);
  await d.locator('select[name=convert]').selectOption(convert);
  await d.locator(`input[name=output][value=${output}]`).check();
  await d.locator('input[name=shardSize]').fill(shardSize);
  await page.waitForFunction(
    () => !document.querySelector('#save-dialog .save-actions button.primary').disabled,
    null,
    { timeout: 20000 },
  );
  return d.locator('.save-summary').textContent();
}

const save = (page) => page.click('#save-dialog .save-actions button.primary');
const settled = (page) =>
  page
    .waitForFunction(
      () => ['done', 'cancelled', 'error'].includes(document.getElementById('save-dialog').dataset.state),
      null,
      { timeout: 60000 },
    )
    .then(() => page.evaluate(() => document.getElementById('save-dialog').dataset.state));

/** A file of the origin-private file system, as bytes ('a/b' for one in a folder). */
async function opfsFile(page, path) {
  const bytes = await page.evaluate(async (p) => {
    let d = await navigator.storage.getDirectory();
    const parts = p.split('/');
    for (const part of parts.slice(0, -1)) d = await d.getDirectoryHandle(part);
    const f = await (await d.getFileHandle(parts.at(-1))).getFile();
    return btoa(String.fromCharCode(...new Uint8Array(await f.arrayBuffer())));
  }, path);
  return Buffer.from(bytes, 'base64');
}

/**
 * Resident memory of every Chromium process this test started (the browser, its renderers and
 * workers, its storage and GPU processes): the sum of VmRSS over this process's descendants.
 */
function chromiumRss() {
  const children = new Map();
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(pid));
    } catch {
      // (gone meanwhile)
    }
  }
  let total = 0;
  const todo = [...(children.get(process.pid) ?? [])];
  while (todo.length) {
    const pid = todo.pop();
    todo.push(...(children.get(pid) ?? []));
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      if (/^Name:\s*chrom/m.test(status)) total += Number(/VmRSS:\s*(\d+) kB/.exec(status)[1]) * 1024;
    } catch {
      // (gone meanwhile)
    }
  }
  return total;
}

async function expected(source, opts, metadata) {
  const file = pkg.SafeTensors.fromBytes(source);
  const chunks = [];
  for await (const c of pkg.serializeStream(pkg.editTensors(file, opts), metadata ?? file.metadata())) chunks.push(c);
  return Buffer.concat(chunks);
}

// The model: F32 weights, an F16 bias, an I32 table; "model." prefixed.
const values = (n, k) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * k) * 100 + 1 / (i + 1));
const model = safetensors(
  [
    { name: 'model.a.weight', dtype: 'F32', shape: [40, 30], data: values(1200, 0.37) },
    { name: 'model.b.weight', dtype: 'F32', shape: [300], data: values(300, 1.1) },
    { name: 'model.b.bias', dtype: 'F16', shape: [4], data: Uint16Array.of(0x3c00, 0xc000, 0x3800, 0x7c00) },
    { name: 'table', dtype: 'I32', shape: [3], data: Int32Array.of(1, -2, 3) },
  ],
  { format: 'pt' },
);

describe('Save as…', { skip: missing ?? false, timeout: 240000 }, () => {
  before(async () => {
    if (!existsSync(join(DEMO, 'index.html')) || !existsSync(join(DEMO, 'save.js'))) {
      execFileSync('bash', [join(ROOT, 'scripts/build-demo.sh')], { stdio: 'inherit', cwd: ROOT });
    }
    pkg = await import(pathToFileURL(join(DEMO, 'vendor/safetensors-nano/node.js')).href);
    dir = mkdtempSync(join(tmpdir(), 'st-save-'));
    writeFileSync(join(dir, 'model.safetensors'), model);
    server = await startServer({ root: DEMO, port: 0 });
    browser = await playwright.chromium.launch(chromiumOptions());
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("the current filter, a prefix renamed, floats to BF16, through a save picker: the reference's BF16 values", async () => {
    const page = await newPage();
    await openFile(page, join(dir, 'model.safetensors'));
    await page.fill('#filter', 'weight');
    await page.waitForFunction(() => document.getElementById('count').textContent.includes('2 of 4'));
    const summary = await fill(page, { which: 'filter', from: 'model.', to: 'm.', convert: 'BF16' });
    const want = await expected(model, { keep: /weight/, rename: ['model.', 'm.'], convert: 'BF16' });
    assert.match(summary, /^2 tensors · /);
    assert.equal(await page.evaluate(() => Number(document.getElementById('save-dialog').dataset.total)), want.length);
    await save(page);
    assert.equal(await settled(page), 'done');
    const name = await page.evaluate(() => window.__picked);
    assert.equal(name, 'model-edited.safetensors');
    const got = await opfsFile(page, name);
    assert.deepEqual(got, want);
    // The reference reads it, and its BF16 values are ml_dtypes' rounding of the F32 values.
    const out = join(dir, 'saved.safetensors');
    writeFileSync(out, got);
    const check = `
import sys, numpy as np, ml_dtypes
from safetensors import deserialize
saved = dict(deserialize(open(sys.argv[1], "rb").read()))
src = dict(deserialize(open(sys.argv[2], "rb").read()))
assert sorted(saved) == ["m.a.weight", "m.b.weight"], sorted(saved)
for new, old in [("m.a.weight", "model.a.weight"), ("m.b.weight", "model.b.weight")]:
    assert saved[new]["dtype"] == "BF16" and saved[new]["shape"] == src[old]["shape"]
    want = np.frombuffer(bytes(src[old]["data"]), np.float32).astype(ml_dtypes.bfloat16).tobytes()
    assert bytes(saved[new]["data"]) == want, new
`;
    const r = spawnSync(PYTHON, ['-c', check, out, join(dir, 'model.safetensors')], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(page.errors, []);
  });

  test("metadata: a key dropped and one set through the save picker: the reference's save_file with that metadata", async () => {
    const page = await newPage();
    await openFile(page, join(dir, 'model.safetensors'));
    // A key both set and dropped is refused in the summary, and Save stays disabled.
    await page.click('#save-btn');
    const d = page.locator('#save-dialog');
    await d.locator('input[name=dropKey][value="format"]').check();
    await d.locator('input[name=setKey]').fill('format');
    await d.locator('input[name=setValue]').fill('np');
    await page.waitForFunction(
      () => document.querySelector('#save-dialog .save-summary').classList.contains('error'),
      null,
      { timeout: 20000 },
    );
    assert.match(await d.locator('.save-summary').textContent(), /"format" is both set and dropped/);
    assert.equal(await d.locator('.save-actions button.primary').isDisabled(), true);
    await page.keyboard.press('Escape');
    // Now "format" dropped and "source" set (a value holding "=" and non-ASCII).
    const value = 'viewer=1 é';
    await fill(page, { dropKeys: ['format'], set: [['source', value]] });
    await save(page);
    assert.equal(await settled(page), 'done');
    const got = await opfsFile(page, await page.evaluate(() => window.__picked));
    assert.deepEqual(pkg.SafeTensors.fromBytes(got).metadata(), { source: value });
    assert.deepEqual(got, await expected(model, {}, { source: value }));
    const out = join(dir, 'relabelled.safetensors');
    writeFileSync(out, got);
    const check = `
import sys
from safetensors.numpy import load_file, save_file
from safetensors import safe_open
with safe_open(sys.argv[1], framework="np") as f:
    assert f.metadata() == {"source": sys.argv[3]}, f.metadata()
save_file(load_file(sys.argv[2]), sys.argv[1] + ".ref", metadata={"source": sys.argv[3]})
assert open(sys.argv[1], "rb").read() == open(sys.argv[1] + ".ref", "rb").read()
`;
    const r = spawnSync(PYTHON, ['-c', check, out, join(dir, 'model.safetensors'), value], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    // Two keys set on top of the file's: the package's bytes for that metadata (keys sorted).
    const page2 = await newPage();
    await openFile(page2, join(dir, 'model.safetensors'));
    await fill(page2, {
      set: [
        ['b', '2'],
        ['a', '1'],
      ],
    });
    await save(page2);
    assert.equal(await settled(page2), 'done');
    const two = await opfsFile(page2, await page2.evaluate(() => window.__picked));
    assert.deepEqual(two, await expected(model, {}, { format: 'pt', a: '1', b: '2' }));
    assert.deepEqual([page.errors, page2.errors], [[], []]);
  });

  test("shards of a chosen size through a folder picker: the Hub's names, the index, the bytes", async () => {
    const page = await newPage();
    await openFile(page, join(dir, 'model.safetensors'));
    const summary = await fill(page, { output: 'shards', shardSize: '2KB', convert: 'F16' });
    const split = pkg.shardTensors(pkg.editTensors(pkg.SafeTensors.fromBytes(model), { convert: 'F16' }), {
      maxShardSize: '2KB',
    });
    assert.ok(split.shards.length >= 2);
    assert.match(summary, new RegExp(`^4 tensors · .* in ${split.shards.length + 1} files$`));
    await save(page);
    assert.equal(await settled(page), 'done');
    const folder = await page.evaluate(() => window.__picked);
    const names = await page.evaluate(async (f) => {
      const d = await (await navigator.storage.getDirectory()).getDirectoryHandle(f);
      const out = [];
      for await (const name of d.keys()) out.push(name);
      return out.sort();
    }, folder);
    assert.deepEqual(names, [...split.shards.map((s) => s.name), split.indexName].sort());
    assert.equal((await opfsFile(page, `${folder}/${split.indexName}`)).toString('utf8'), split.index);
    const file = pkg.SafeTensors.fromBytes(model);
    for (const s of split.shards) {
      const chunks = [];
      for await (const c of pkg.serializeStream(s.tensors, file.metadata())) chunks.push(c);
      assert.deepEqual(await opfsFile(page, `${folder}/${s.name}`), Buffer.concat(chunks), s.name);
    }
    assert.deepEqual(page.errors, []);
  });

  test('Cancel stops a large conversion mid-write: nothing is written', async () => {
    // A sparse 512 MiB F32 tensor (the file input reads it from disk lazily).
    const elements = 2 ** 27;
    const head = assemble(
      JSON.stringify({ big: { dtype: 'F32', shape: [elements], data_offsets: [0, elements * 4] } }),
    );
    const path = join(dir, 'big.safetensors');
    const fd = openSync(path, 'w');
    writeSync(fd, head, 0, head.length, 0);
    ftruncateSync(fd, head.length + elements * 4);
    closeSync(fd);
    const page = await newPage();
    await openFile(page, path);
    await fill(page, { convert: 'BF16' });
    await save(page);
    await page.waitForFunction(() => Number(document.getElementById('save-dialog').dataset.written ?? 0) > 0, null, {
      timeout: 30000,
    });
    await page.click('#save-dialog .save-actions button:not(.primary)'); // "Cancel" while writing
    assert.equal(await settled(page), 'cancelled');
    assert.match(await page.locator('#save-dialog .save-status').textContent(), /Cancelled/);
    const name = await page.evaluate(() => window.__picked);
    const size = await page.evaluate(
      async (n) => (await (await (await navigator.storage.getDirectory()).getFileHandle(n)).getFile()).size,
      name,
    );
    assert.equal(size, 0, 'the picked file keeps none of the aborted write');
    assert.deepEqual(page.errors, []);
  });

  test("a 3 GiB file converted F32 → BF16 through the save picker: Chromium's memory grows by less than 256 MB", async (t) => {
    const elements = 3 * 2 ** 28;
    const head = assemble(
      JSON.stringify({ big: { dtype: 'F32', shape: [elements], data_offsets: [0, elements * 4] } }),
    );
    const path = join(dir, 'big3.safetensors');
    const fd = openSync(path, 'w');
    writeSync(fd, head, 0, head.length, 0);
    writeSync(fd, new Uint8Array(new Float32Array([1.5, -2.25]).buffer), 0, 8, head.length);
    ftruncateSync(fd, head.length + elements * 4);
    closeSync(fd);
    // A profile on disk: an incognito context would keep the 1.5 GiB result in memory.
    const profile = mkdtempSync(join(tmpdir(), 'st-save-profile-'));
    const context = await playwright.chromium.launchPersistentContext(profile, chromiumOptions());
    try {
      await context.addInitScript(stubPickers);
      const page = await context.newPage();
      await page.goto(server.url);
      await openFile(page, path);
      await fill(page, { convert: 'BF16' });
      const before = chromiumRss();
      let peak = before;
      await save(page);
      const t0 = performance.now();
      for (;;) {
        peak = Math.max(peak, chromiumRss());
        const state = await page.evaluate(() => document.getElementById('save-dialog').dataset.state);
        if (['done', 'cancelled', 'error'].includes(state)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(await page.evaluate(() => document.getElementById('save-dialog').dataset.state), 'done');
      const MB = 1e6;
      t.diagnostic(
        `3 GiB F32 → 1.5 GiB BF16 in ${((performance.now() - t0) / 1000).toFixed(1)} s; Chromium's processes ${(before / MB).toFixed(0)} MB → peak ${(peak / MB).toFixed(0)} MB`,
      );
      assert.ok(peak - before < 256 * MB, `grew by ${((peak - before) / MB).toFixed(0)} MB`);
      const first = await page.evaluate(
        async (n) => {
          const f = await (await (await navigator.storage.getDirectory()).getFileHandle(n)).getFile();
          const h = new DataView(await f.slice(0, 8).arrayBuffer()).getUint32(0, true);
          return { size: f.size, values: [...new Uint16Array(await f.slice(8 + h, 8 + h + 6).arrayBuffer())] };
        },
        await page.evaluate(() => window.__picked),
      );
      assert.deepEqual(first.values, [0x3fc0, 0xc010, 0]);
      assert.ok(first.size > elements * 2);
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
      rmSync(path, { force: true });
    }
  });
});
