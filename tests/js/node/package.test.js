// The package as a user installs it: its files, its exports, its types.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import * as pkg from 'safetensors-nano';
import { repo } from '../lib/env.js';

const here = dirname(fileURLToPath(import.meta.url));
const project = join(here, '..');
const installed = join(project, 'node_modules', 'safetensors-nano');

test('the installed package holds exactly its files: every module of wasm/js/ ships', () => {
  const files = readdirSync(installed, { recursive: true }).sort();
  // The ES layer as it is in the repository (its modules, any folder of them, the declarations).
  const layer = readdirSync(join(repo, 'wasm', 'js'), { recursive: true }).filter((f) => /\.(js|d\.ts)$/.test(f));
  const folders = [...new Set(layer.filter((f) => f.includes('/')).map((f) => f.slice(0, f.indexOf('/'))))];
  const built = [
    'safetensors_nano_wasm.js',
    'safetensors_nano_wasm_bg.wasm',
    'safetensors_nano_writer.js',
    'safetensors_nano_writer_bg.wasm',
  ];
  assert.deepEqual(
    files,
    [...layer, ...folders, ...built, 'README.md', 'LICENSE-MIT', 'LICENSE-APACHE', 'package.json'].sort(),
  );
  for (const m of [
    'api/package-exports.js',
    'format/dtypes.js',
    'errors/safetensors-error.js',
    'errors/messages.js',
    'read/byte-sources.js',
    'shards/sharded-model.js',
  ])
    assert.ok(files.includes(m), m);
  const meta = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  assert.equal(meta.name, 'safetensors-nano');
  assert.equal(meta.type, 'module');
  assert.match(meta.version, /^\d+\.\d+\.\d+/);
  assert.deepEqual(Object.keys(meta.exports['.']), ['types', 'node', 'default']);
});

test('both .wasm modules are valid; the reader within the 40 KB goal (40,000 bytes); sizes reported', async () => {
  for (const [part, file] of [
    ['reader', 'safetensors_nano_wasm_bg.wasm'],
    ['writer', 'safetensors_nano_writer_bg.wasm'],
  ]) {
    const bytes = readFileSync(join(installed, file));
    assert.ok(WebAssembly.validate(bytes), file);
    const gz = gzipSync(bytes, { level: 9 }).length;
    console.log(`# ${part} .wasm: ${bytes.length} bytes raw, ${gz} bytes gzip -9`);
    assert.ok(bytes.length <= (part === 'reader' ? 40_000 : 100_000), `${file}: ${bytes.length} bytes`);
  }
});

test('runtime exports are exactly the declared ones', () => {
  const dts = readFileSync(join(installed, 'index.d.ts'), 'utf8');
  const declared = [...dts.matchAll(/^export (?:declare )?(?:class|function|const) (\w+)/gm)].map((m) => m[1]).sort();
  assert.deepEqual(Object.keys(pkg).sort(), declared);
  assert.equal(pkg.DTYPES.length, 22);
  // The Dtype union is generated from the Rust table (generated/dtypes.d.ts), and re-exported.
  assert.match(dts, /export type \{[^}]*\bDtype\b[^}]*\} from|export type \{[^}]*\bDtype\b/);
  const generated = readFileSync(join(installed, 'generated', 'dtypes.d.ts'), 'utf8');
  const union = /export type Dtype =([^;]+);/.exec(generated)[1];
  assert.deepEqual(
    [...union.matchAll(/'(\w+)'/g)].map((m) => m[1]),
    [...pkg.DTYPES],
  );
});

// tsc --strict over files of types/ with these libs.
function typeCheck(lib, ...files) {
  const tsc = createRequire(join(project, 'package.json')).resolve('typescript/bin/tsc');
  return spawnSync(
    process.execPath,
    [
      tsc,
      '--noEmit',
      '--strict',
      '--target',
      'es2022',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--lib',
      lib,
      ...files.map((f) => join(project, 'types', f)),
    ],
    { cwd: project, encoding: 'utf8' },
  );
}

test('the declarations type-check a use of the whole API (tsc --strict)', () => {
  const r = typeCheck('es2022,dom', 'usage.ts');
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('with a lib that declares Float16Array, view() may be one (tsc --strict, esnext)', () => {
  const r = typeCheck('esnext,dom', 'usage.ts', 'float16.ts');
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('the webgpu entry type-checks against @webgpu/types (tsc --strict)', () => {
  const r = typeCheck('es2022,dom', 'webgpu.ts');
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('node and browser entries share one API module', () => {
  const node = readFileSync(join(installed, 'node.js'), 'utf8');
  const browser = readFileSync(join(installed, 'index.js'), 'utf8');
  for (const src of [node, browser]) assert.match(src, /export \* from '\.\/api\/package-exports\.js'/);
  assert.ok(statSync(join(installed, 'api', 'package-exports.js')).size > 0);
});
