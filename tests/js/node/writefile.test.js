// Node's writeFile: through a temporary file renamed into place; nothing
// left behind on an error, an abort, a full disk (RLIMIT_FSIZE) or a
// SIGKILL; stale temporary files of dead writers removed by the next write;
// multi-GB conversions in bounded memory.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chownSync,
  closeSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SafeTensors, SafeTensorsError, editTensors, serialize, serializeStream, writeFile } from 'safetensors-nano';
import { scratch } from '../lib/env.js';
import { rawFile } from '../lib/format.js';
import { collect } from '../lib/streams.js';
import { newTensors } from '../lib/write-child.mjs';

const child = fileURLToPath(new URL('../lib/write-child.mjs', import.meta.url));
const memoryChild = fileURLToPath(new URL('../lib/stream-memory-child.mjs', import.meta.url));
const TEMP = /^\.out\.safetensors\.(\d+)\.[0-9a-f]{16}\.safetensors-nano-tmp$/;
const sha = (bytes) => createHash('sha256').update(bytes).digest('hex');

function freshDir(root, name) {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

const isKind = (kind) => (e) => {
  assert.ok(e instanceof SafeTensorsError, String(e));
  assert.equal(e.kind, kind, e.message);
  return true;
};

// A pid no process has: a child's, once it has exited and been reaped.
const deadPid = () => {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
};

const root = scratch('stn-writefile-');

test('writeFile writes what serialize gives, replacing the target; only the target is left', async () => {
  const dir = freshDir(root, 'basic');
  const path = join(dir, 'out.safetensors');
  writeFileSync(path, 'old');
  const tensors = {
    a: { dtype: 'F16', shape: [3], data: new Float32Array([1, 2, 3]) },
    b: { dtype: 'U8', shape: [1], data: Uint8Array.of(9) },
  };
  const size = await writeFile(path, tensors, { format: 'pt' });
  const want = (await collect(serializeStream(tensors, { format: 'pt' }))).bytes;
  assert.equal(size, want.length);
  assert.deepEqual(readFileSync(path), Buffer.from(want));
  assert.deepEqual(readdirSync(dir), ['out.safetensors']);
  assert.deepEqual([...SafeTensors.fromBytes(readFileSync(path)).tensor('a').toFloat32()], [1, 2, 3]);
});

test('an abort mid-write leaves no file (and an existing target untouched)', async () => {
  const dir = freshDir(root, 'abort');
  const path = join(dir, 'out.safetensors');
  const data = new Float32Array(16 * 2 ** 20);
  for (const existing of [false, true]) {
    if (existing) writeFileSync(path, 'old');
    const controller = new AbortController();
    let chunks = 0;
    const onProgress = () => {
      if (++chunks === 4) controller.abort();
    };
    await assert.rejects(
      writeFile(path, { x: { dtype: 'BF16', shape: [data.length], data } }, null, {
        signal: controller.signal,
        onProgress,
        chunkBytes: 2 ** 20,
      }),
      (e) => e.name === 'AbortError',
    );
    assert.ok(chunks >= 4, 'aborted mid-stream');
    assert.deepEqual(readdirSync(dir), existing ? ['out.safetensors'] : []);
    if (existing) assert.equal(readFileSync(path, 'utf8'), 'old');
  }
});

test('errors found before the first byte create no file at all; a duplicate after renaming is refused before writing', async () => {
  const dir = freshDir(root, 'early');
  const path = join(dir, 'out.safetensors');
  await assert.rejects(
    writeFile(path, { a: { dtype: 'U8', shape: [3], data: new Uint8Array(2) } }),
    isKind('DataLengthMismatch'),
  );
  assert.deepEqual(readdirSync(dir), []);
  const file = SafeTensors.fromBytes(
    await serialize({
      'x.w': { dtype: 'U8', shape: [1], data: new Uint8Array(1) },
      'y.w': { dtype: 'U8', shape: [1], data: new Uint8Array(1) },
    }),
  );
  await assert.rejects(
    async () => writeFile(path, editTensors(file, { rename: [/^\w\./, ''] })),
    isKind('DuplicateTensorName'),
  );
  assert.deepEqual(readdirSync(dir), []);
  await assert.rejects(
    writeFile(join(dir, 'missing', 'out.safetensors'), { a: { dtype: 'U8', shape: [1], data: new Uint8Array(1) } }),
    isKind('WriteFailed'),
  );
});

test("stale temporary files of dead writers to the same target are removed; live ones and other targets' are kept", async () => {
  const dir = freshDir(root, 'stale');
  const hex = '0123456789abcdef';
  const dead = `.out.safetensors.${deadPid()}.${hex}.safetensors-nano-tmp`;
  const live = `.out.safetensors.${process.ppid}.${hex}.safetensors-nano-tmp`;
  const other = `.other.safetensors.${deadPid()}.${hex}.safetensors-nano-tmp`;
  for (const f of [dead, live, other]) writeFileSync(join(dir, f), 'partial');
  await writeFile(join(dir, 'out.safetensors'), { a: { dtype: 'U8', shape: [1], data: new Uint8Array(1) } });
  assert.deepEqual(readdirSync(dir).sort(), [live, other, 'out.safetensors'].sort());
});

test("another user's temporary file of a process we can't see is kept (W12: only our own user's are removed)", async (t) => {
  if (process.getuid?.() !== 0) return t.skip('needs root to give a file to another user');
  const dir = freshDir(root, 'stale-owner');
  const theirs = `.out.safetensors.${deadPid()}.0123456789abcdef.safetensors-nano-tmp`;
  writeFileSync(join(dir, theirs), 'partial');
  chownSync(join(dir, theirs), 54321, 54321);
  await writeFile(join(dir, 'out.safetensors'), { a: { dtype: 'U8', shape: [1], data: new Uint8Array(1) } });
  assert.deepEqual(readdirSync(dir).sort(), [theirs, 'out.safetensors'].sort());
});

test('a full disk (RLIMIT_FSIZE): WriteFailed from EFBIG, no partial target, no temporary file', () => {
  const dir = freshDir(root, 'full');
  const path = join(dir, 'out.safetensors');
  for (const existing of [false, true]) {
    if (existing) writeFileSync(path, 'old');
    // 1 MiB allowed (bash counts ulimit -f in 1024-byte blocks); the file is 17 MiB.
    const out = execFileSync('bash', ['-c', 'ulimit -f 1024; exec "$0" "$1" "$2"', process.execPath, child, path], {
      encoding: 'utf8',
    });
    const r = JSON.parse(out);
    assert.equal(r.ok, false, out);
    assert.equal(r.kind, 'WriteFailed', out);
    assert.equal(r.code, 'EFBIG', out); // (Node ignores SIGXFSZ: the write fails instead of the process dying)
    assert.deepEqual(readdirSync(dir), existing ? ['out.safetensors'] : []);
    if (existing) assert.equal(readFileSync(path, 'utf8'), 'old');
  }
});

test('SIGKILL at random points, 20 runs: the target is the old file or the whole new one; the next write removes the stale temporary files', async (t) => {
  const dir = freshDir(root, 'kill');
  const path = join(dir, 'out.safetensors');
  const oldBytes = await serialize({ old: { dtype: 'U8', shape: [4096], data: new Uint8Array(4096).fill(1) } });
  const newBytes = (await collect(serializeStream(newTensors(), { format: 'pt' }))).bytes;
  const [oldHash, newHash] = [sha(oldBytes), sha(newBytes)];
  const run = (killAfterMs) =>
    new Promise((resolve) => {
      const p = spawn(process.execPath, [child, path], { stdio: 'ignore' });
      const timer = killAfterMs === null ? null : setTimeout(() => p.kill('SIGKILL'), killAfterMs);
      p.on('exit', (_code, signal) => {
        clearTimeout(timer);
        resolve(signal);
      });
    });
  // How long a whole run takes here: the kills fall anywhere in 0–160% of it
  // (a run is slower when the disk is busy: both outcomes come up).
  writeFileSync(path, oldBytes);
  const t0 = performance.now();
  assert.equal(await run(null), null);
  const full = performance.now() - t0;
  assert.equal(sha(readFileSync(path)), newHash);
  let seed = 2166136261;
  const random = () => ((seed = Math.imul(seed ^ (seed >>> 15), 2246822507) >>> 0) % 10007) / 10007;
  const outcomes = { old: 0, new: 0, killed: 0, tempsLeft: 0 };
  for (let i = 0; i < 20; i++) {
    writeFileSync(path, oldBytes); // (not writeFile: only the children clean up)
    const signal = await run(Math.floor(random() * 1.6 * full));
    if (signal === 'SIGKILL') outcomes.killed++;
    const hash = sha(readFileSync(path));
    assert.ok(hash === oldHash || hash === newHash, `run ${i}: the target is torn`);
    outcomes[hash === oldHash ? 'old' : 'new']++;
    const temps = readdirSync(dir).filter((f) => f !== 'out.safetensors');
    assert.ok(
      temps.every((f) => TEMP.test(f)),
      `unrecognised files: ${temps}`,
    );
    // At most the last writer's own temporary file: every earlier one was removed by the next run.
    assert.ok(temps.length <= 1, `run ${i}: ${temps}`);
    outcomes.tempsLeft += temps.length;
  }
  t.diagnostic(`one run: ${full.toFixed(0)} ms; 20 runs: ${JSON.stringify(outcomes)}`);
  await writeFile(path, { a: { dtype: 'U8', shape: [1], data: new Uint8Array(1) } });
  assert.deepEqual(readdirSync(dir), ['out.safetensors']);
});

test('a multi-GB sparse file converted F32 → BF16 by writeFile: peak RSS grows by less than 256 MB', (t) => {
  const dir = freshDir(root, 'memory');
  // One F32 tensor of 3 GiB (below Node 20's 4 GiB openAsBlob wrap), a hole
  // but for values at both ends.
  const elements = 3 * 2 ** 28;
  const head = rawFile({
    __metadata__: { format: 'pt' },
    w: { dtype: 'F32', shape: [elements], data_offsets: [0, elements * 4] },
  });
  const input = join(dir, 'in.safetensors');
  const fd = openSync(input, 'w');
  const ends = new Float32Array([1.5, -2.25, 3.0]);
  try {
    writeSync(fd, head, 0, head.length, 0);
    ftruncateSync(fd, head.length + elements * 4);
    writeSync(fd, new Uint8Array(ends.buffer), 0, 12, head.length);
    writeSync(fd, new Uint8Array(ends.buffer), 0, 12, head.length + elements * 4 - 12);
  } finally {
    closeSync(fd);
  }
  const output = join(dir, 'out.safetensors');
  const r = spawnSync(process.execPath, [memoryChild, input, output], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const { before, after, size, seconds } = JSON.parse(r.stdout);
  rmSync(input);
  const MB = 1e6;
  t.diagnostic(
    `3 GiB F32 → BF16 in ${seconds.toFixed(1)} s; VmHWM ${(before / MB).toFixed(0)} MB → ${(after / MB).toFixed(0)} MB`,
  );
  assert.ok(after - before < 256 * MB, `peak RSS grew by ${((after - before) / MB).toFixed(0)} MB`);
  // The output: its header, and the values at both ends.
  const out = openSync(output, 'r');
  try {
    const prefix = new Uint8Array(4096);
    readSync(out, prefix, 0, prefix.length, 0);
    const file = SafeTensors.fromHeader(prefix, size);
    const w = file.tensor('w');
    assert.equal(w.dtype, 'BF16');
    assert.equal(size, file.dataOffset + elements * 2);
    const at = (i) => {
      const b = new Uint8Array(2);
      readSync(out, b, 0, 2, w.byteOffset + i * 2);
      return b[0] | (b[1] << 8);
    };
    assert.deepEqual(
      [at(0), at(1), at(2), at(3), at(elements - 3), at(elements - 1)],
      [0x3fc0, 0xc010, 0x4040, 0, 0x3fc0, 0x4040],
    );
  } finally {
    closeSync(out);
    rmSync(output);
  }
});

test('an abort while a source read stalls (a fetch that ignores its signal): writeFile rejects at once and leaves no file', async () => {
  const MiB = 2 ** 20;
  const dir = freshDir(scratch('stn-write-'), 'stall');
  const file = rawFile({ x: { dtype: 'U8', shape: [3 * MiB], data_offsets: [0, 3 * MiB] } }, new Uint8Array(3 * MiB));
  const dataStart = file.length - 3 * MiB;
  const fetch = async (_url, init) => {
    const [, s, e] = /bytes=(\d+)-(\d+)/.exec(new Headers(init.headers).get('Range'));
    const [start, end] = [Number(s), Math.min(file.length, Number(e) + 1)];
    if (start >= dataStart + MiB) return new Promise(() => {}); // never answers, whatever the signal
    return new Response(file.slice(start, end), {
      status: 206,
      headers: { 'Content-Range': `bytes ${start}-${end - 1}/${file.length}` },
    });
  };
  const st = await SafeTensors.fromUrl('http://test.invalid/x.safetensors', {
    fetch,
    prefetch: 8,
    timeout: Infinity,
    retries: 0,
  });
  const controller = new AbortController();
  const written = writeFile(join(dir, 'out.safetensors'), { x: { data: st.tensor('x') } }, null, {
    chunkBytes: MiB,
    signal: controller.signal,
  });
  setTimeout(() => controller.abort(), 100);
  const timeout = new Promise((_resolve, reject) =>
    setTimeout(() => reject(new Error('writeFile still waiting 2 s after the abort')), 2100).unref(),
  );
  await assert.rejects(Promise.race([written, timeout]), (e) => e.name === 'AbortError');
  assert.deepEqual(readdirSync(dir), []);
});
