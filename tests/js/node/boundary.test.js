// Differential fuzzing across the JS boundary, the short run (`make fuzz`
// runs a million cases: tests/js/boundary-fuzz.mjs): the packed package's
// fromBytes against the native inspect --json on the fuzz seeds, the
// adversarial suite and 30,000 generated files (lib/boundary.js).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as stn from 'safetensors-nano';
import { difference, jsDescribe, runBoundary, seedFiles } from '../lib/boundary.js';
import { repo } from '../lib/env.js';
import { inspectCommands } from '../lib/inspect-commands.js';

test('fromBytes and inspect --json agree on the seeds and 30,000 generated files', async () => {
  const stats = await runBoundary({
    stn,
    repo,
    count: 30_000,
    seed: Date.now() % 1e9,
    ...inspectCommands(repo),
    outDir: join(repo, 'test-output', 'boundary'),
  });
  console.log(
    `boundary: ${stats.cases} cases (${stats.seeds} seeds), ${stats.agreed} identical, ${stats.allowed} refused above 2^53 by JS only, ${stats.crossChecked} checked against the inspect command, ${stats.disagreements.length} disagreements`,
  );
  assert.deepEqual(stats.disagreements, []);
  assert.equal(stats.cases, stats.seeds + 30_000);
  assert.ok(stats.crossChecked > stats.seeds);
});

test('the comparison sees a difference in each field it compares', () => {
  const file = seedFiles(repo).find((s) => s.name.endsWith('/all_dtypes')).bytes;
  const js = jsDescribe(stn, file);
  assert.ok(js.ok && js.tensors.length > 1);
  const same = structuredClone(js);
  assert.equal(difference(js, same), null);
  const edits = [
    (n) => (n.ok = false),
    (n) => (n.header_size = '1'),
    (n) => (n.metadata = { x: 'y' }),
    (n) => n.tensors.pop(),
    (n) => (n.tensors[1].name += 'x'),
    (n) => (n.tensors[1].dtype = 'U8'),
    (n) => n.tensors[1].shape.push('1'),
    (n) => (n.tensors[1].data_offsets = ['0', '0']),
  ];
  for (const edit of edits) {
    const native = structuredClone(js);
    if (edit.toString().includes('ok = false')) native.error = { kind: 'InvalidOffset' };
    edit(native);
    assert.notEqual(difference(js, native), null, edit.toString());
  }
  const err = { ok: false, error: { kind: 'InvalidOffset', offset: 3, tensor: 'a' } };
  assert.equal(difference(err, structuredClone(err)), null);
  for (const [k, v] of [
    ['kind', 'UnexpectedByte'],
    ['offset', 4],
    ['tensor', 'b'],
  ]) {
    assert.notEqual(difference(err, { ok: false, error: { ...err.error, [k]: v } }), null, k);
  }
});
