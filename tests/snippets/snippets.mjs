#!/usr/bin/env node
// Every code block of the READMEs is tested exactly as printed: the blocks are read from the
// READMEs here, at test time, never copied.
//
//   rust   doctests: core/README.md is the core's crate documentation (its `cargo test`),
//          the other READMEs are the modules of tests/snippets/lib.rs (`cargo test` there).
//          Here: only that each such file is included, and no block is `ignore`d.
//   js     run in Node against the packed tarball installed into a fresh project
//          (`npm install ./dist/safetensors-nano-*.tgz`), with harness.mjs preloaded for
//          what a page would have (see there); a block JS lists as written for a bundler is
//          bundled first, with the command its README gives. All are type-checked by
//          `tsc --strict --checkJs` against the installed declarations, with globals.d.ts
//          declaring the same names.
//   sh     run (bash -e, each in the folder SHELL names), or listed in SHELL as not run,
//          with the reason.
// Any other block, or a shell block SHELL does not list, fails the test: a new block cannot go
// untested unnoticed.
//
//   node tests/snippets/snippets.mjs [check|js|sh|all]     (default: all)
//
// Needs dist/safetensors-nano-*.tgz (scripts/build-package.sh), tests/js/node_modules
// (typescript), the Rust toolchain; the firmware block needs tests/.venv
// (scripts/setup.sh python) and qemu-system-arm (scripts/setup.sh qemu).

import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { startServer } from '../../scripts/serve.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const FIXTURE = join(here, 'model.safetensors');

/** The READMEs whose blocks are all tested. */
const READMES = ['README.md', 'core/README.md', 'wasm/README.md', 'web-demo/README.md', 'firmware/README.md'];

/** Where each file's Rust blocks run as doctests. */
const DOCTESTS = {
  'core/README.md': ['core/src/lib.rs', '#![doc = include_str!("../README.md")]'],
  'README.md': ['tests/snippets/lib.rs', '#[doc = include_str!("../../README.md")]'],
  'wasm/README.md': ['tests/snippets/lib.rs', '#[doc = include_str!("../../wasm/README.md")]'],
  'web-demo/README.md': ['tests/snippets/lib.rs', '#[doc = include_str!("../../web-demo/README.md")]'],
  'firmware/README.md': ['tests/snippets/lib.rs', '#[doc = include_str!("../../firmware/README.md")]'],
};

const VENV_BIN = join(repo, 'tests', '.venv', 'bin');

/**
 * The shell blocks, by file and first line: `cwd` runs the block there (`sandbox`: a fresh
 * folder under target/ holding the fixture as model.safetensors, inside the workspace so that
 * `cargo run -p …` finds it), after `build` (run in the repository) when given; `notRun` says
 * why not.
 */
const SHELL = [
  {
    file: 'README.md',
    first: 'make test',
    notRun: 'the make targets themselves: `make test` runs this test, `make demo` serves until stopped',
  },
  {
    file: 'README.md',
    first: 'cargo install --path cli',
    notRun:
      'installs into ~/.cargo/bin; the block after it runs the binary `cargo build --release -p safetensors-nano-cli` makes',
  },
  {
    file: 'README.md',
    first: 'safetensors-nano inspect model.safetensors',
    cwd: 'sandbox',
    build: 'cargo build --release -q -p safetensors-nano-cli',
    env: { PATH: `${join(repo, 'target', 'release')}:${process.env.PATH}` },
  },
  {
    file: 'README.md',
    first: 'safetensors-nano inspect hf://org/name',
    notRun:
      'reads the Hugging Face Hub, which a test machine may not reach; cli/tests/hub.rs runs these commands against a local Hub stand-in',
  },
  {
    file: 'web-demo/README.md',
    first: 'make demo',
    notRun: 'the make targets themselves: `make test` runs `make test-demo`, `make demo` serves until stopped',
  },
  {
    file: 'firmware/README.md',
    first: 'python3 scripts/train_digits.py',
    cwd: 'repo',
    // "You can use scripts/setup.sh python and then tests/.venv/bin/python": python3 is the venv's.
    env: { PATH: `${VENV_BIN}:${process.env.PATH}` },
  },
];

/**
 * The JavaScript blocks written for a bundler, by file and first line: `bundle` is the command
 * line the README gives for it (run in the block's folder, on main.js), and the bundle is what
 * runs, from a server folder holding what the bundler wrote. The other blocks run as they are.
 */
const JS = [
  {
    file: 'wasm/README.md',
    first: "import { init, SafeTensors, serialize } from 'safetensors-nano';",
    // wasm/README.md's table of bundlers, row esbuild.
    bundle: 'esbuild main.js --bundle --format=esm --loader:.wasm=file --outdir=dist',
  },
];

function die(msg) {
  console.error(`snippets: ${msg}`);
  process.exit(2);
}

/** The fenced code blocks of a Markdown file: { file, line, lang, info, text }. */
export function blocks(file) {
  const lines = readFileSync(join(repo, file), 'utf8').split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)(`{3,}|~{3,})\s*([^`\s]*)(.*)$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const body = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = new RegExp(`^ *${fence[0]}{${fence.length},}\\s*$`).exec(lines[j]);
      if (close) break;
      // CommonMark: up to the opening fence's indentation is removed from each line.
      let k = 0;
      while (k < indent.length && lines[j][k] === ' ') k++;
      body.push(lines[j].slice(k));
    }
    if (j === lines.length) die(`${file}:${i + 1}: unclosed code block`);
    const lang = info.split(',')[0].toLowerCase();
    out.push({ file, line: i + 1, lang, info, text: `${body.join('\n')}\n` });
    i = j;
  }
  return out;
}

const all = READMES.flatMap(blocks);
const isJs = (b) => ['js', 'javascript', 'mjs'].includes(b.lang);
const isSh = (b) => ['sh', 'bash', 'shell', 'console'].includes(b.lang);
const shellEntry = (b) => SHELL.find((e) => e.file === b.file && b.text.startsWith(e.first));
const jsEntry = (b) => JS.find((e) => e.file === b.file && b.text.startsWith(e.first));

/** Every block is tested one way or another, and the list of shell blocks is not stale. */
function check() {
  const problems = [];
  for (const b of all) {
    const where = `${b.file}:${b.line} (${b.info || 'no language'})`;
    if (b.lang === 'rust') {
      const [src, line] = DOCTESTS[b.file] ?? [];
      if (!src || !readFileSync(join(repo, src), 'utf8').includes(line))
        problems.push(`${where}: no doctest includes ${b.file}`);
      if (/\bignore\b/.test(b.info))
        problems.push(`${where}: an ignored Rust block is not tested; make it compile (no_run if it must not run)`);
    } else if (isJs(b)) {
      // run() and typecheck() below
    } else if (isSh(b)) {
      if (!shellEntry(b))
        problems.push(
          `${where}: a shell block SHELL (tests/snippets/snippets.mjs) does not list: run it or say why not`,
        );
    } else if (b.lang === 'text') {
      // prose in a box: nothing to run
    } else {
      problems.push(
        `${where}: no test runs ${b.lang || 'unlabelled'} blocks: label it honestly (text, sh, …) or add a runner`,
      );
    }
  }
  for (const [list, is] of [
    [SHELL, isSh],
    [JS, isJs],
  ]) {
    for (const e of list) {
      const n = all.filter((b) => is(b) && b.file === e.file && b.text.startsWith(e.first)).length;
      if (n !== 1)
        problems.push(`${list === JS ? 'JS' : 'SHELL'} entry ${e.file} "${e.first}" matches ${n} blocks (expected 1)`);
    }
    for (const e of JS) {
      if (e.bundle && !readFileSync(join(repo, e.file), 'utf8').includes(e.bundle))
        problems.push(`JS entry ${e.file}: its README no longer gives the command ${e.bundle}`);
    }
  }
  for (const b of all) {
    const how =
      b.lang === 'rust'
        ? `doctest (${DOCTESTS[b.file][0]})${b.info.includes('no_run') ? ', compiled only' : ''}`
        : isJs(b)
          ? jsEntry(b)?.bundle
            ? `bundled (${jsEntry(b).bundle.split(' ')[0]}), run in Node + tsc --strict`
            : 'Node + tsc --strict'
          : isSh(b)
            ? shellEntry(b)?.notRun
              ? `not run: ${shellEntry(b).notRun}`
              : `run in ${shellEntry(b)?.cwd}`
            : 'nothing to run';
    console.log(`  ${b.file}:${b.line} ${b.lang}: ${how}`);
  }
  if (problems.length) {
    for (const p of problems) console.error(`  FAIL ${p}`);
    die(`${problems.length} block(s) not under test`);
  }
  console.log(`snippets: all ${all.length} blocks of ${READMES.length} READMEs are under test`);
}

/** A safetensors file of F32 tensors ({ name: [shape, values] }), as the reference lays it out. */
function safetensors(tensors) {
  let offset = 0;
  const header = {};
  const data = [];
  for (const [name, [shape, values]] of Object.entries(tensors)) {
    const bytes = new Uint8Array(new Float32Array(values).buffer);
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + bytes.length] };
    data.push(bytes);
    offset += bytes.length;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const prefix = new Uint8Array(8);
  new DataView(prefix.buffer).setBigUint64(0, BigInt(json.length), true);
  return Buffer.concat([prefix, Buffer.from(json), ...data]);
}

/** The npm package from its tarball in a fresh project, as a user installs it. */
function project() {
  const dist = join(repo, 'dist');
  const tarballs = existsSync(dist) ? readdirSync(dist).filter((f) => /^safetensors-nano-.*\.tgz$/.test(f)) : [];
  if (tarballs.length !== 1)
    die(
      `expected one dist/safetensors-nano-*.tgz, found ${tarballs.length}: run scripts/build-package.sh (make package)`,
    );
  const typescript = join(repo, 'tests', 'js', 'node_modules', 'typescript');
  if (!existsSync(typescript)) die('tests/js/node_modules/typescript is missing: run scripts/setup.sh web');
  const dir = mkdtempSync(join(tmpdir(), 'safetensors-nano-snippets-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'snippets', private: true, type: 'module' }));
  const r = spawnSync(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', join(dist, tarballs[0])],
    { cwd: dir, stdio: 'inherit' },
  );
  if (r.status !== 0) die('npm install of the tarball failed');
  symlinkSync(typescript, join(dir, 'node_modules', 'typescript'), 'dir');
  for (const e of JS.filter((e) => e.bundle)) {
    const tool = e.bundle.split(' ')[0];
    if (!existsSync(join(repo, 'tests', 'js', 'node_modules', '.bin', tool)))
      die(`tests/js/node_modules/.bin/${tool} is missing: run scripts/setup.sh web`);
  }
  copyFileSync(join(here, 'harness.mjs'), join(dir, 'harness.mjs'));
  copyFileSync(join(here, 'globals.d.ts'), join(dir, 'globals.d.ts'));
  return dir;
}

/** The files the JS blocks open, served with HTTP Range support. */
async function serve(dir) {
  const root = join(dir, 'www');
  mkdirSync(join(root, 'repo'), { recursive: true });
  copyFileSync(FIXTURE, join(root, 'model.safetensors'));
  const shards = {
    'model-00001-of-00002.safetensors': {
      'model.embed.weight': [
        [2, 2],
        [1, 2, 3, 4],
      ],
    },
    'model-00002-of-00002.safetensors': { 'model.norm.weight': [[2], [1, 1]] },
  };
  const weight_map = {};
  let total_size = 0;
  for (const [shard, tensors] of Object.entries(shards)) {
    const bytes = safetensors(tensors);
    writeFileSync(join(root, 'repo', shard), bytes);
    for (const [name, [, values]] of Object.entries(tensors)) {
      weight_map[name] = shard;
      total_size += values.length * 4;
    }
  }
  writeFileSync(
    join(root, 'repo', 'model.safetensors.index.json'),
    JSON.stringify({ metadata: { total_size }, weight_map }),
  );
  return startServer({ root, port: 0 });
}

/** The Hub stand-in with acme/tiny-llama, the same model, gated behind harness.mjs's token. */
async function serveHub(dir) {
  const root = join(dir, 'hub');
  mkdirSync(join(root, 'acme'), { recursive: true });
  cpSync(join(dir, 'www', 'repo'), join(root, 'acme', 'tiny-llama'), { recursive: true });
  const { startHub } = await import('../hub/server.mjs');
  return startHub({ root, gated: { 'acme/tiny-llama': 'token' } });
}

/** spawn, awaited: the test server answers from this process meanwhile (spawnSync would block it). */
function run(cmd, args, { timeout, ...opts }) {
  return new Promise((done) => {
    const child = spawn(cmd, args, opts);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (e) => (out += `${cmd}: ${e.message}\n`));
    const timer = setTimeout(() => child.kill(), timeout);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      done({ status, signal, out });
    });
  });
}

/** A script run in Node with harness.mjs preloaded, `base` its page's origin. */
function runNode(script, base, cwd, harness) {
  return run(process.execPath, ['--import', pathToFileURL(harness).href, script], {
    cwd,
    env: { ...process.env, SNIPPET_BASE: base, SNIPPET_FIXTURE: FIXTURE },
    timeout: 60_000,
  });
}

async function js() {
  const jsBlocks = all.filter(isJs);
  const dir = project();
  const server = await serve(dir);
  const hub = await serveHub(dir);
  process.env.SNIPPET_HUB = hub.endpoint;
  let failed = 0;
  try {
    const files = [];
    for (const b of jsBlocks) {
      const name = `${b.file.replace(/\W+/g, '_')}_${b.line}.mjs`;
      writeFileSync(join(dir, name), b.text);
      files.push(name);
      const e = jsEntry(b);
      let r;
      let base = server.url;
      let script = name;
      let cwd = dir;
      if (e?.bundle) {
        // main.js in a folder of the project, bundled there as the README says; the bundle runs
        // with that folder as the page's origin (its .wasm files beside it).
        cwd = join(dir, name.replace(/\.mjs$/, ''));
        mkdirSync(cwd);
        writeFileSync(join(cwd, 'main.js'), b.text);
        const [tool, ...args] = e.bundle.split(' ');
        r = await run(join(repo, 'tests', 'js', 'node_modules', '.bin', tool), args, { cwd, timeout: 60_000 });
        const outdir = join(cwd, /--outdir=(\S+)/.exec(e.bundle)[1]);
        if (r.status === 0) {
          const bundled = await startServer({ root: outdir, port: 0 });
          try {
            base = bundled.url;
            script = join(outdir, 'main.js');
            r = await runNode(script, base, cwd, join(dir, 'harness.mjs'));
          } finally {
            await bundled.close();
          }
        }
      } else {
        r = await runNode(script, base, cwd, join(dir, 'harness.mjs'));
      }
      const ok = r.status === 0;
      if (!ok) failed++;
      const why = r.signal ? ` (killed: ${r.signal}, over 60 s)` : r.status ? ` (exit ${r.status})` : '';
      console.log(
        `  ${ok ? 'ok  ' : 'FAIL'} ${b.file}:${b.line} js, ${e?.bundle ? `bundled (${e.bundle}), ` : ''}run in Node${why}`,
      );
      for (const l of r.out.trimEnd().split('\n')) if (l) console.log(`       ${l}`);
    }
    const tsc = spawnSync(
      process.execPath,
      [
        join(dir, 'node_modules', 'typescript', 'bin', 'tsc'),
        '--noEmit',
        '--strict',
        '--allowJs',
        '--checkJs',
        '--target',
        'es2022',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--lib',
        'es2022,dom',
        'globals.d.ts',
        ...files,
      ],
      { cwd: dir, encoding: 'utf8' },
    );
    const ok = tsc.status === 0;
    if (!ok) failed++;
    console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${jsBlocks.length} js blocks type-check (tsc --strict --checkJs)`);
    for (const l of `${tsc.stdout}${tsc.stderr}`.trimEnd().split('\n')) if (l) console.log(`       ${l}`);
  } finally {
    await Promise.all([server.close(), hub.close()]);
  }
  if (failed) die(`${failed} JS check(s) failed`);
}

function sh() {
  let failed = 0;
  for (const b of all.filter(isSh)) {
    const e = shellEntry(b);
    if (!e || e.notRun) continue;
    let cwd = repo;
    if (e.build) {
      const built = spawnSync('bash', ['-euo', 'pipefail', '-c', e.build], { cwd: repo, stdio: 'inherit' });
      if (built.status !== 0) die(`${b.file}:${b.line}: \`${e.build}\` failed`);
    }
    if (e.cwd === 'sandbox') {
      cwd = join(repo, 'target', 'snippets-sh');
      rmSync(cwd, { recursive: true, force: true });
      mkdirSync(cwd, { recursive: true });
      copyFileSync(FIXTURE, join(cwd, 'model.safetensors'));
    }
    console.log(`  ${b.file}:${b.line} sh, in ${cwd}:`);
    const r = spawnSync('bash', ['-euo', 'pipefail', '-c', b.text], {
      cwd,
      stdio: 'inherit',
      env: { ...process.env, ...e.env },
    });
    const ok = r.status === 0;
    if (!ok) failed++;
    console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${b.file}:${b.line} sh (exit ${r.status})`);
  }
  if (failed) die(`${failed} shell block(s) failed`);
}

const what = process.argv[2] ?? 'all';
if (!['check', 'js', 'sh', 'all'].includes(what)) die(`unknown command ${what} (check | js | sh | all)`);
check();
if (what === 'js' || what === 'all') await js();
if (what === 'sh' || what === 'all') sh();
