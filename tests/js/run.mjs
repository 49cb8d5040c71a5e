#!/usr/bin/env node
// Runs the npm package's tests or benchmark against the packed tarball,
// installed into a fresh temporary project exactly as a user would
// (`npm install ./safetensors-nano-*.tgz`).
//
//   node tests/js/run.mjs node      Node tests (node:test)
//   node tests/js/run.mjs browser   headless Chromium tests (playwright-core)
//   node tests/js/run.mjs test      both
//   node tests/js/run.mjs bench     the benchmarks (make bench-wasm): bench.mjs, bench-stream.mjs
//
// Needs dist/safetensors-nano-*.tgz (scripts/build-package.sh) and
// tests/js/node_modules (npm ci in tests/js).

import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const what = process.argv[2] ?? 'test';

function die(msg) {
  console.error(`run.mjs: ${msg}`);
  process.exit(2);
}

const tarballs = existsSync(join(repo, 'dist')) ? readdirSync(join(repo, 'dist')).filter((f) => /^safetensors-nano-.*\.tgz$/.test(f)) : [];
if (tarballs.length !== 1) die(`expected one dist/safetensors-nano-*.tgz, found ${tarballs.length}: run scripts/build-package.sh (make package)`);
const tarball = join(repo, 'dist', tarballs[0]);
for (const dep of ['playwright-core', 'typescript']) {
  if (!existsSync(join(here, 'node_modules', dep))) die(`tests/js/node_modules/${dep} is missing: run npm ci in tests/js (scripts/setup.sh web)`);
}

// The temporary project: the tarball installed by npm, the tests beside it.
const project = mkdtempSync(join(tmpdir(), 'safetensors-nano-project-'));
const cleanup = () => rmSync(project, { recursive: true, force: true });
process.on('exit', cleanup);
writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'user-project', private: true, type: 'module' }, null, 2));
const install = spawnSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], {
  cwd: project,
  stdio: 'inherit',
});
if (install.status !== 0) die('npm install of the tarball failed');
// The test tools come from tests/js (they are not the package's dependencies).
for (const dep of ['playwright-core', 'typescript']) {
  symlinkSync(join(here, 'node_modules', dep), join(project, 'node_modules', dep), 'dir');
}
for (const dir of ['lib', 'node', 'browser', 'types']) cpSync(join(here, dir), join(project, dir), { recursive: true });
cpSync(join(here, 'bench.mjs'), join(project, 'bench.mjs'));
cpSync(join(here, 'bench-stream.mjs'), join(project, 'bench-stream.mjs'));
// The seeded random numbers the demo and the viewer's tests draw from, for tests too.
cpSync(join(repo, 'scripts', 'rng.mjs'), join(project, 'lib', 'rng.mjs'));

const env = { ...process.env, SAFETENSORS_NANO_REPO: repo, SAFETENSORS_NANO_TARBALL: tarball };
const testFiles = (dir) =>
  readdirSync(join(project, dir))
    .filter((f) => f.endsWith('.test.js'))
    .sort()
    .map((f) => join(dir, f));

let files;
if (what === 'node') files = testFiles('node');
else if (what === 'browser') files = testFiles('browser');
else if (what === 'test') files = [...testFiles('node'), ...testFiles('browser')];
else if (what === 'bench') {
  // bench.mjs (parsing, decoding, sizes), then bench-stream.mjs (the streaming writer).
  for (const bench of ['bench.mjs', 'bench-stream.mjs']) {
    const r = spawnSync(process.execPath, ['--expose-gc', bench, ...process.argv.slice(3)], { cwd: project, stdio: 'inherit', env });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
  process.exit(0);
} else die(`unknown command ${what} (node | browser | test | bench)`);

mkdirSync(join(project, 'tmp'), { recursive: true });
const r = spawnSync(process.execPath, ['--test', '--test-reporter=spec', ...files], { cwd: project, stdio: 'inherit', env });
process.exit(r.status ?? 1);
