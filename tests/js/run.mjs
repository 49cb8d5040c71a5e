#!/usr/bin/env node
// Runs the npm package's tests or benchmark against the packed tarball,
// installed into a fresh temporary project exactly as a user would
// (`npm install ./safetensors-nano-*.tgz`).
//
//   node tests/js/run.mjs node      Node tests (node:test)
//   node tests/js/run.mjs node stream.test.js …   only those Node test files
//   node tests/js/run.mjs browser   browser tests in Chromium, Firefox ESR and WebKitGTK
//                                   (lib/engines.js; ENGINES=firefox,webkit for fewer)
//   node tests/js/run.mjs browser hostile.test.js …   only those browser test files
//   node tests/js/run.mjs test      both
//   node tests/js/run.mjs bench     the benchmarks (make bench-wasm): bench.mjs, then bench-*.mjs
//   node tests/js/run.mjs bench shards   one of them (bench-shards.mjs)
//   node tests/js/run.mjs fuzz [N]  fromBytes against the native inspect, N cases (make fuzz)
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

const tarballs = existsSync(join(repo, 'dist'))
  ? readdirSync(join(repo, 'dist')).filter((f) => /^safetensors-nano-.*\.tgz$/.test(f))
  : [];
if (tarballs.length !== 1)
  die(
    `expected one dist/safetensors-nano-*.tgz, found ${tarballs.length}: run scripts/build-package.sh (make package)`,
  );
const tarball = join(repo, 'dist', tarballs[0]);
for (const dep of ['playwright-core', 'puppeteer-core', 'selenium-webdriver', 'typescript']) {
  if (!existsSync(join(here, 'node_modules', dep)))
    die(`tests/js/node_modules/${dep} is missing: run npm ci in tests/js (scripts/setup.sh web)`);
}

// The temporary project: the tarball installed by npm, the tests beside it.
const project = mkdtempSync(join(tmpdir(), 'safetensors-nano-project-'));
const cleanup = () => rmSync(project, { recursive: true, force: true });
process.on('exit', cleanup);
writeFileSync(
  join(project, 'package.json'),
  JSON.stringify({ name: 'user-project', private: true, type: 'module' }, null, 2),
);
const install = spawnSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], {
  cwd: project,
  stdio: 'inherit',
});
if (install.status !== 0) die('npm install of the tarball failed');
// The test tools come from tests/js (they are not the package's dependencies).
for (const dep of ['playwright-core', 'puppeteer-core', 'selenium-webdriver', 'typescript', '@webgpu/types']) {
  mkdirSync(dirname(join(project, 'node_modules', dep)), { recursive: true });
  symlinkSync(join(here, 'node_modules', dep), join(project, 'node_modules', dep), 'dir');
}
for (const dir of ['lib', 'node', 'browser', 'types']) cpSync(join(here, dir), join(project, dir), { recursive: true });
// bench.mjs, and the other benches (bench-*.mjs) run after it.
const benches = readdirSync(here)
  .filter((f) => /^bench(-[\w-]+)?\.mjs$/.test(f))
  .sort((a, b) => (a === 'bench.mjs' ? -1 : b === 'bench.mjs' ? 1 : a < b ? -1 : 1));
for (const f of benches) cpSync(join(here, f), join(project, f));
cpSync(join(here, 'boundary-fuzz.mjs'), join(project, 'boundary-fuzz.mjs'));

const env = { ...process.env, SAFETENSORS_NANO_REPO: repo, SAFETENSORS_NANO_TARBALL: tarball };
const testFiles = (dir) =>
  readdirSync(join(project, dir))
    .filter((f) => f.endsWith('.test.js'))
    .sort()
    .map((f) => join(dir, f));

let files;
if (what === 'node' || what === 'browser') {
  // `node FILE…` (`browser FILE…`) runs only those test files (names in tests/js/node or browser).
  const only = process.argv.slice(3);
  files = testFiles(what);
  for (const f of only) if (!files.includes(join(what, f))) die(`no test file ${what}/${f}`);
  if (only.length > 0) files = only.map((f) => join(what, f));
} else if (what === 'test') files = [...testFiles('node'), ...testFiles('browser')];
else if (what === 'bench') {
  // `bench NAME` runs bench-NAME.mjs alone; other arguments (--quick) go to each.
  const only = process.argv.slice(3).find((a) => !a.startsWith('-'));
  const args = process.argv.slice(3).filter((a) => a.startsWith('-'));
  for (const f of only === undefined ? benches : [`bench-${only}.mjs`]) {
    const r = spawnSync(process.execPath, ['--expose-gc', f, ...args], { cwd: project, stdio: 'inherit', env });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
  process.exit(0);
} else if (what === 'fuzz') {
  const r = spawnSync(process.execPath, ['boundary-fuzz.mjs', ...process.argv.slice(3)], {
    cwd: project,
    stdio: 'inherit',
    env,
  });
  process.exit(r.status ?? 1);
} else die(`unknown command ${what} (node | browser | test | bench | fuzz)`);

mkdirSync(join(project, 'tmp'), { recursive: true });
const r = spawnSync(process.execPath, ['--test', '--test-reporter=spec', ...files], {
  cwd: project,
  stdio: 'inherit',
  env,
});
process.exit(r.status ?? 1);
