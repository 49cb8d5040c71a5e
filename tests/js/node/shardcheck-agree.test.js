// The CLI's `verify` (the Rust core's IndexCheck) and the package's
// checkShards give the same findings, worded the same, for the same sharded
// models: thousands of small generated ones, with faults injected (tensors
// missing, misplaced, in two shards, not in the index; shard files missing,
// unnamed, corrupt; total_size wrong, absent or written as a float).
//
// The CLI runs once over every index (`verify --json`); the JS side reads
// each shard with fromBytes, as the viewer does, and checks the same files
// in the same order (the index's shards and the unnamed ones beside it, by
// file name). The CLI is VERIFY_CLI (the Makefile passes its release build).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SafeTensors, checkShards, shardFindingMessage } from 'safetensors-nano';
import { tensorFile } from '../lib/format.js';
import { rng } from '../lib/rng.mjs';

const repo = process.env.SAFETENSORS_NANO_REPO;
const cli = process.env.VERIFY_CLI ?? join(repo, 'target', 'release', 'safetensors-nano');

const MODELS = 3000;
const INDEX = 'model.safetensors.index.json';
// Names that test the orders and the wording: integer-like keys (which JS
// objects list first), an astral and a high-BMP character (UTF-16 and code
// point orders differ), characters JSON escapes, Object's own properties.
const ODD = ['7', '10', '\u{1F600}.w', '\uFF21.w', 'a"q', 'tab\tname', 'constructor', 'toString'];

const shardName = (i, n) => `model-${String(i).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.safetensors`;

/** One model's files (name → bytes) and what was injected into it. */
function generate(random) {
  const pick = (n) => Math.floor(random.next() * n);
  const chance = (p) => random.next() < p;
  const n = 1 + pick(4);
  const files = Array.from({ length: n }, (_, i) => shardName(i + 1, n));
  // Each shard's tensors (name → length) and the index's entries.
  const shards = files.map(() => new Map());
  const entries = new Map();
  const pool = Array.from({ length: 3 + pick(6) }, (_, j) =>
    chance(0.2) ? ODD[pick(ODD.length)] : `layers.${j}.weight`,
  );
  for (const name of new Set(pool)) {
    const s = pick(n);
    shards[s].set(name, 1 + pick(3));
    entries.set(name, files[s]);
  }
  const faults = [];
  const names = [...entries.keys()];
  const some = () => names[pick(names.length)];
  const holder = (t) => shards.findIndex((s) => s.has(t));
  if (chance(0.15) && names.length) {
    faults.push('missing');
    const t = some();
    shards[holder(t)]?.delete(t);
  }
  if (chance(0.15) && n > 1) {
    faults.push('misplaced');
    entries.set(some(), files[pick(n)]);
  }
  if (chance(0.15) && n > 1) {
    faults.push('duplicate');
    const t = some();
    shards[pick(n)].set(t, 1 + pick(3));
  }
  if (chance(0.15)) {
    faults.push('unlisted');
    if (chance(0.5)) entries.delete(some());
    else shards[pick(n)].set(`extra.${pick(3)}`, 1);
  }
  const total = () => shards.reduce((sum, s) => sum + [...s.values()].reduce((a, b) => a + b, 0), 0);
  let totalSize = String(total());
  if (chance(0.15)) {
    faults.push('totalSize');
    totalSize = String(total() + 1 + pick(5));
  } else if (chance(0.1)) totalSize = `${total()}.0`;
  // biome-ignore lint/suspicious/noDuplicateElseIf: each chance() is a fresh draw of the seeded generator
  else if (chance(0.1)) totalSize = null;
  const out = new Map();
  shards.forEach((s, i) => {
    out.set(files[i], tensorFile([...s].map(([t, len]) => [t, 'U8', [len], new Uint8Array(len)])));
  });
  if (chance(0.1)) {
    faults.push('missingShard');
    out.delete(files[pick(n)]);
  }
  if (chance(0.1)) {
    faults.push('unnamedShard');
    const extra = new Map([[chance(0.5) && names.length ? some() : 'stray', 2]]);
    out.set(shardName(n + 1, n), tensorFile([...extra].map(([t, len]) => [t, 'U8', [len], new Uint8Array(len)])));
  }
  if (chance(0.05)) {
    faults.push('corrupt');
    const f = files[pick(n)];
    if (out.has(f)) out.set(f, out.get(f).subarray(0, out.get(f).length - 1));
  }
  // The index, its entries in a shuffled order.
  const pairs = [...entries];
  for (let i = pairs.length - 1; i > 0; i--) {
    const j = pick(i + 1);
    [pairs[i], pairs[j]] = [pairs[j], pairs[i]];
  }
  const map = pairs.map(([t, f]) => `${JSON.stringify(t)}: ${JSON.stringify(f)}`).join(', ');
  const metadata = totalSize === null ? '' : `"metadata": {"total_size": ${totalSize}}, `;
  out.set(INDEX, new TextEncoder().encode(`{${metadata}"weight_map": {${map}}}`));
  return { files: out, faults };
}

/** checkShards over a model's folder, as a user of the package would run it. */
function jsCheck(dir) {
  const index = JSON.parse(readFileSync(join(dir, INDEX), 'utf8'));
  const names = readdirSync(dir)
    .filter((f) => /^model-\d+-of-\d+\.safetensors$/.test(f))
    .sort();
  const shards = names.map((name) => {
    try {
      const file = SafeTensors.fromBytes(readFileSync(join(dir, name)));
      return { name, names: file.names(), dataBytes: Number(file.fileSize - file.dataOffset) };
    } catch {
      return { name, names: null };
    }
  });
  const findings = checkShards(index, shards);
  return { names, findings, messages: findings.map((f) => shardFindingMessage(f, names)) };
}

test(`verify and checkShards agree on ${MODELS} generated sharded models with faults injected`, (t) => {
  assert.ok(existsSync(cli), `${cli} is missing: build it (cargo build --release -p safetensors-nano-cli)`);
  const started = performance.now();
  const root = mkdtempSync(join(tmpdir(), 'shardcheck-agree-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const random = rng(31);
  const faults = new Map();
  const indexes = [];
  for (let m = 0; m < MODELS; m++) {
    const dir = join(root, `m${m}`);
    mkdirSync(dir);
    const model = generate(random);
    for (const [name, bytes] of model.files) writeFileSync(join(dir, name), bytes);
    for (const f of model.faults) faults.set(f, (faults.get(f) ?? 0) + 1);
    indexes.push(join(dir, INDEX));
  }
  const run = spawnSync(cli, ['verify', '--json', '--quiet', ...indexes], { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.ok(run.status === 0 || run.status === 1, `verify exited ${run.status}: ${run.stderr}`);
  // JSON Lines: one document per index.
  const docs = run.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.equal(docs.length, MODELS);

  let compared = 0;
  const disagreements = [];
  const kinds = new Map();
  docs.forEach((doc, m) => {
    const js = jsCheck(join(root, `m${m}`));
    compared += js.findings.length;
    for (const f of js.findings) kinds.set(f.kind, (kinds.get(f.kind) ?? 0) + 1);
    // Shards that could not be read come first in the CLI's problems, then the findings.
    const cliMessages = doc.problems.slice(doc.problems.length - (doc.findings?.length ?? 0));
    const same =
      JSON.stringify(doc.checkedShards) === JSON.stringify(js.names) &&
      JSON.stringify(doc.findings) === JSON.stringify(js.findings) &&
      JSON.stringify(cliMessages) === JSON.stringify(js.messages);
    if (!same)
      disagreements.push({
        model: m,
        cli: { shards: doc.checkedShards, findings: doc.findings, problems: doc.problems },
        js,
      });
  });
  const seconds = (performance.now() - started) / 1000;
  t.diagnostic(
    `${MODELS} models, ${compared} findings compared, ${disagreements.length} disagreements, ${seconds.toFixed(1)} s; ` +
      `faults ${JSON.stringify(Object.fromEntries(faults))}; findings ${JSON.stringify(Object.fromEntries(kinds))}`,
  );
  assert.deepEqual(disagreements.slice(0, 3), [], `${disagreements.length} disagreements`);
  // Every kind of finding was met, many times.
  for (const kind of ['missing', 'misplaced', 'duplicate', 'unlisted', 'missingShard', 'unnamedShard', 'totalSize']) {
    assert.ok((kinds.get(kind) ?? 0) >= 50, `${kind}: ${kinds.get(kind) ?? 0}`);
  }
});
