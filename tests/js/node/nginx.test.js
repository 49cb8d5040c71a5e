// fromUrl and openSharded, and the CLI's inspect and verify of URLs, against
// nginx (lib/nginx-server.js), the static server many models are hosted
// behind: it answers ranges with 206, gives a strong ETag (mtime-size) and
// Last-Modified, and honours If-Range by sending the whole new file when
// the version changed. Files opened from it list and read right through
// ranged requests only (its access log says so), also when it compresses
// every answer it may, and a file replaced on disk after opening is
// SourceChanged.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SafeTensors, SafeTensorsError, openSharded } from 'safetensors-nano';
import { referenceFiles, repo, scratch, skipReason } from '../lib/env.js';
import { tensorFile } from '../lib/format.js';
import { GOLDEN_FLOAT_DTYPES, expectedFloats, sameBits } from '../lib/golden-floats.js';
import { nginxMissing, startNginx } from '../lib/nginx-server.js';

const noNginx = nginxMissing();
const ref = referenceFiles();
const refSkip = noNginx ?? ref.skip;
const dir = scratch('stn-nginx-root-');
const MiB = 2 ** 20;

// A few MiB of F32 values that say where they are: element i of tensor k is k * 1e6 + i.
const counting = (k, n) => Float32Array.from({ length: n }, (_, i) => k * 1e6 + i);
const BIG_SHAPES = { a: [512, 256], b: [256, 1024], c: [64, 4096] }; // 512 KiB, 1 MiB, 1 MiB
const bigTensors = Object.entries(BIG_SHAPES).map(([name, shape], k) => [
  name,
  'F32',
  shape,
  counting(k + 1, shape[0] * shape[1]),
]);
const big = tensorFile(
  [
    ...bigTensors.slice(0, 2),
    ['small', 'F16', [4], new Uint16Array([0x3c00, 0xc000, 0x3800, 0x7c00])],
    ...bigTensors.slice(2),
  ],
  { metadata: { made: 'nginx.test.js' } },
);
writeFileSync(join(dir, 'big.safetensors'), big);

// Two shards of about 2 MiB each and their index, in a folder: the model's tensors, in order.
const shardNames = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
const INDEX_PATH = '/repo/model.safetensors.index.json';
const MODEL_NAMES = ['embed.weight', 'layers.0.norm', 'layers.1.norm', 'lm_head.weight'];
const shards = [
  tensorFile([
    ['embed.weight', 'F32', [1024, 512], counting(7, 1024 * 512)],
    ['layers.0.norm', 'BF16', [3], new Uint16Array([0x3f80, 0xc000, 0x4040])],
  ]),
  tensorFile([
    ['layers.1.norm', 'F16', [2], new Uint16Array([0x4200, 0x0000])],
    ['lm_head.weight', 'F32', [512, 1024], counting(8, 512 * 1024)],
  ]),
];
mkdirSync(join(dir, 'repo'));
for (const [i, bytes] of shards.entries()) writeFileSync(join(dir, 'repo', shardNames[i]), bytes);
writeFileSync(
  join(dir, INDEX_PATH),
  JSON.stringify({
    metadata: { total_size: 2 * 4 * 512 * 1024 + 6 + 4 },
    weight_map: {
      'embed.weight': shardNames[0],
      'layers.0.norm': shardNames[0],
      'layers.1.norm': shardNames[1],
      'lm_head.weight': shardNames[1],
    },
  }),
);

if (!ref.skip) {
  copyFileSync(join(ref.dir, 'floats.safetensors'), join(dir, 'floats.safetensors'));
  copyFileSync(join(ref.dir, 'mixed.safetensors'), join(dir, 'mixed.safetensors'));
}

let server;
before(async () => {
  if (noNginx === null) server = await startNginx(dir);
});
after(() => server?.close());

// The header as the file's own JSON says it, read here without the package.
function headerOf(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const { __metadata__: metadata = null, ...tensors } = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  return { dataStart: 8 + n, metadata, tensors };
}

// A fetch that counts the requests the package sends, so that nginx's log
// can be awaited for all of them.
function counter() {
  let sent = 0;
  return {
    fetch(url, init) {
      sent++;
      return fetch(url, init);
    },
    take() {
      const n = sent;
      sent = 0;
      return n;
    },
  };
}
const net = counter();

// nginx's answers to the requests sent since the last call (`through` counts
// them, `from` is the nginx): every one a 206 to a Range request (only
// `plain` paths, such as an index, fetched whole), and after the first
// answer for a file every request pinned to its ETag by If-Range. Returns
// the answers for ranged files and their body bytes, and all it logged.
async function rangedAnswers(plain = [], { from = server, through = net } = {}) {
  const sent = through.take();
  const logged = await from.requests(sent);
  assert.equal(logged.length, sent, 'nginx logged another number of requests than were sent');
  const answers = logged.filter((r) => !plain.includes(r.path));
  assert.ok(answers.length > 0, 'nginx logged no requests');
  const pinned = new Set();
  for (const r of answers) {
    assert.equal(r.status, 206, `nginx answered ${r.status} to ${JSON.stringify(r)}`);
    assert.match(r.range, /^bytes=\d+-\d+$/, JSON.stringify(r));
    if (pinned.has(r.path)) assert.match(r.ifRange ?? '', /^"[0-9a-f]+-[0-9a-f]+"$/, JSON.stringify(r));
    pinned.add(r.path);
  }
  return { answers, bytes: answers.reduce((sum, r) => sum + r.bytes, 0), logged };
}

test('reference files from nginx list as their headers say and read byte for byte, through ranges', {
  skip: refSkip,
}, async () => {
  for (const name of ['mixed.safetensors', 'floats.safetensors']) {
    const bytes = new Uint8Array(readFileSync(join(dir, name)));
    const want = headerOf(bytes);
    const st = await SafeTensors.fromUrl(`${server.base}${name}`, { fetch: net.fetch });
    assert.equal(st.fileSize, bytes.length);
    assert.equal(st.dataOffset, want.dataStart);
    assert.deepEqual(st.metadata(), want.metadata);
    assert.deepEqual(st.names().toSorted(), Object.keys(want.tensors).toSorted());
    for (const t of st.tensors()) {
      const h = want.tensors[t.name];
      assert.deepEqual([t.dtype, t.shape, t.dataOffsets], [h.dtype, h.shape, h.data_offsets], t.name);
      const [begin, end] = h.data_offsets;
      assert.deepEqual(await t.read(), bytes.subarray(want.dataStart + begin, want.dataStart + end), t.name);
    }
    const { answers } = await rangedAnswers();
    assert.ok(answers.length >= 2, `${name}: ${answers.length} requests`);
  }
});

test('float tensors from nginx decode to the values the reference gives (chunked and concurrent reads)', {
  skip: refSkip,
}, async () => {
  const local = SafeTensors.fromBytes(ref.floats);
  const st = await SafeTensors.fromUrl(`${server.base}floats.safetensors`, { fetch: net.fetch });
  const values = await Promise.all(GOLDEN_FLOAT_DTYPES.map((d) => st.tensor(d).readFloat32({ chunkBytes: 4800 })));
  for (const [i, d] of GOLDEN_FLOAT_DTYPES.entries()) sameBits(values[i], expectedFloats(local, d), d);
  const { answers, bytes } = await rangedAnswers();
  // (F16 and BF16 alone are 128 KiB each: many 4800-byte chunks.)
  assert.ok(answers.length > 50, `${answers.length} requests`);
  assert.equal(bytes, st.bytesRead);
});

test('a few MiB file from nginx: one small tensor moves a few KiB; several reads and a strided slice are right', {
  skip: noNginx ?? false,
}, async () => {
  const st = await SafeTensors.fromUrl(`${server.base}big.safetensors`, { fetch: net.fetch });
  assert.deepEqual(st.names(), ['a', 'b', 'small', 'c']);
  assert.deepEqual(st.metadata(), { made: 'nginx.test.js' });
  assert.deepEqual(
    st.tensors().map((t) => [t.dtype, t.shape]),
    [
      ['F32', BIG_SHAPES.a],
      ['F32', BIG_SHAPES.b],
      ['F16', [4]],
      ['F32', BIG_SHAPES.c],
    ],
  );
  assert.deepEqual([...(await st.tensor('small').readFloat32())], [1, -2, 0.5, Infinity]);
  let moved = await rangedAnswers();
  assert.ok(moved.bytes <= 80 * 1024, `listing and one 8-byte tensor moved ${moved.bytes} bytes`);
  assert.ok(big.length > 2.5 * MiB);

  // Several tensors at once, each in 256 KiB requests.
  const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((n) => st.tensor(n).readFloat32({ chunkBytes: 256 * 1024 })));
  assert.deepEqual(a, bigTensors[0][3]);
  assert.deepEqual(b, bigTensors[1][3]);
  assert.deepEqual(c, bigTensors[2][3]);
  moved = await rangedAnswers();
  assert.ok(moved.answers.length >= 2 + 4 + 4, `${moved.answers.length} requests`);

  // Every 16th row of c: rows 256 KiB apart, so one range each.
  const slice = await st.tensor('c').readSliceFloat32([
    [null, null, 16],
    [100, 104],
  ]);
  assert.deepEqual(slice.shape, [4, 4]);
  const rows = [0, 16, 32, 48].flatMap((r) => [100, 101, 102, 103].map((col) => 3e6 + r * 4096 + col));
  assert.deepEqual([...slice.values], rows);
  moved = await rangedAnswers();
  assert.equal(moved.answers.length, 4);
  assert.equal(moved.bytes, 4 * 16);
});

test('openSharded on an index and shards from nginx lists the model and reads its tensors through ranges', {
  skip: noNginx ?? false,
}, async () => {
  const model = await openSharded(`${server.base}${INDEX_PATH.slice(1)}`, [], { fetch: net.fetch });
  assert.deepEqual(model.names(), MODEL_NAMES);
  assert.deepEqual(
    model.shards.map((s) => s.name),
    shardNames,
  );
  assert.deepEqual(model.metadata(), { total_size: 2 * 4 * 512 * 1024 + 6 + 4 });
  assert.deepEqual(model.parameterCount(), {
    total: 2 * 512 * 1024 + 5,
    byDtype: { F32: 2 * 512 * 1024, BF16: 3, F16: 2 },
  });
  assert.deepEqual([...(await model.tensor('layers.0.norm').readFloat32())], [1, -2, 3]);
  assert.deepEqual([...(await model.tensor('layers.1.norm').readFloat32())], [3, 0]);
  const head = await model.tensor('lm_head.weight').readSliceFloat32([[510, null]]);
  assert.deepEqual(head.shape, [2, 1024]);
  assert.deepEqual([...head.values], [...counting(8, 512 * 1024).subarray(510 * 1024)]);
  assert.deepEqual(await model.tensor('embed.weight').readFloat32(), counting(7, 1024 * 512));
  const { answers } = await rangedAnswers([INDEX_PATH]);
  assert.deepEqual(new Set(answers.map((r) => r.path)), new Set(shardNames.map((n) => `/repo/${n}`)));
  assert.ok(model.bytesRead < 2.5 * MiB, `${model.bytesRead} bytes moved of ${shards[0].length + shards[1].length}`);
});

// Writes `bytes` to `name` with the given mtime (nginx's ETag is mtime-size,
// in seconds: the same size needs another second to get another ETag).
function put(name, bytes, year) {
  writeFileSync(join(dir, name), bytes);
  utimesSync(join(dir, name), new Date(Date.UTC(year, 0, 1)), new Date(Date.UTC(year, 0, 1)));
}

const isSourceChanged = (pattern) => (e) =>
  e instanceof SafeTensorsError && e.kind === 'SourceChanged' && pattern.test(e.message);

test('a file replaced on disk behind nginx is SourceChanged: the same size with a new mtime, then another size', {
  skip: noNginx ?? false,
}, async () => {
  put('replaced.safetensors', big, 2020);
  const st = await SafeTensors.fromUrl(`${server.base}replaced.safetensors`, { fetch: net.fetch });
  assert.deepEqual([...(await st.tensor('small').readFloat32())], [1, -2, 0.5, Infinity]);
  const before = (await rangedAnswers()).answers;
  const etag = before.at(-1).ifRange;

  // The same bytes but one, the same size: only the ETag tells.
  const edited = big.slice();
  edited[st.tensor('small').byteOffset] ^= 1;
  put('replaced.safetensors', edited, 2021);
  // (Found by comparing the answer's ETag with the one pinned at opening.)
  await assert.rejects(
    st.tensor('small').read(),
    isSourceChanged(/\(ETag "[0-9a-f]+-[0-9a-f]+", now "[0-9a-f]+-[0-9a-f]+"\)/),
  );
  // nginx saw the old ETag in If-Range and sent the new file whole (which the read refused).
  const answers = await server.requests(net.take());
  assert.deepEqual(
    answers.map((r) => [r.status, r.ifRange]),
    [[200, etag]],
  );

  // Another file altogether: another size (and ETag).
  put('replaced.safetensors', tensorFile([['small', 'F16', [4], new Uint16Array(4)]]), 2022);
  await assert.rejects(st.tensor('a').readFloat32(), isSourceChanged(/ETag|bytes/));
  await server.requests(net.take());
});

test('with etag off nginx still pins a file by Last-Modified: a replaced file is SourceChanged', {
  skip: noNginx ?? false,
}, async () => {
  const plain = await startNginx(dir, { etag: false });
  const plainNet = counter();
  try {
    put('dated.safetensors', big, 2020);
    const st = await SafeTensors.fromUrl(`${plain.base}dated.safetensors`, { fetch: plainNet.fetch });
    assert.deepEqual([...(await st.tensor('small').readFloat32())], [1, -2, 0.5, Infinity]);
    const edited = big.slice();
    edited[st.tensor('small').byteOffset] ^= 1;
    put('dated.safetensors', edited, 2021);
    await assert.rejects(
      st.tensor('small').read(),
      isSourceChanged(/\(Last-Modified Wed, 01 Jan 2020 00:00:00 GMT, now Fri, 01 Jan 2021 00:00:00 GMT\)/),
    );
    const answers = await plain.requests(plainNet.take());
    assert.ok(answers.length >= 3, JSON.stringify(answers));
    assert.ok(
      answers.slice(1).every((r) => r.ifRange === 'Wed, 01 Jan 2020 00:00:00 GMT'),
      JSON.stringify(answers),
    );
    assert.equal(answers.at(-1).status, 200);
  } finally {
    await plain.close();
  }
});

test('nginx compressing all it may (gzip_types *): the index comes gzipped, ranges stay whole 206s; openSharded lists and reads', {
  skip: noNginx ?? false,
}, async () => {
  const gzip = await startNginx(dir, { directives: ['gzip on;', 'gzip_types *;', 'gzip_min_length 0;'] });
  const gzipNet = counter();
  try {
    const model = await openSharded(`${gzip.base}${INDEX_PATH.slice(1)}`, [], { fetch: gzipNet.fetch });
    assert.deepEqual(model.names(), MODEL_NAMES);
    assert.deepEqual([...(await model.tensor('layers.1.norm').readFloat32())], [3, 0]);
    assert.deepEqual(await model.tensor('embed.weight').readFloat32(), counting(7, 1024 * 512));
    // (Fetch asks for any coding unless it sends a Range, when it asks for identity only.)
    const { answers: ranged, logged } = await rangedAnswers([INDEX_PATH], { from: gzip, through: gzipNet });
    const [index] = logged;
    assert.deepEqual([index.path, index.status, index.range], [INDEX_PATH, 200, null]);
    const indexSize = statSync(join(dir, INDEX_PATH)).size;
    assert.ok(index.bytes < indexSize, `the index came whole (${index.bytes} of ${indexSize} bytes), not compressed`);
    assert.ok(ranged.length >= 3, JSON.stringify(logged));
  } finally {
    await gzip.close();
  }
});

// The CLI's release build, as the Makefile gives it to the tests that run it.
const CLI = process.env.VERIFY_CLI ?? join(repo, 'target', 'release', 'safetensors-nano');
const noCli = noNginx ?? skipReason(existsSync(CLI) ? null : `${CLI} is missing: run make test-js (it builds the CLI)`);

/** The CLI's output for `args` (it must succeed): one JSON document. */
function cliJson(...args) {
  const r = spawnSync(CLI, ['--quiet', ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/**
 * nginx's answers to a command that has exited. A request of ours after it
 * is logged after all of the command's, but for one it dropped mid-body,
 * which nginx logs once it sees the connection closed: a short wait takes
 * those in too.
 */
async function answersToCommand() {
  const AFTER = '/.after-command';
  await (await fetch(`${server.base}${AFTER.slice(1)}`)).arrayBuffer();
  const seen = [];
  for (let tries = 0; tries < 5; tries++) {
    seen.push(...(await server.requests(1)));
    const end = seen.findIndex((r) => r.path === AFTER);
    if (end >= 0) {
      await new Promise((r) => setTimeout(r, 200));
      return [...seen.slice(0, end), ...seen.slice(end + 1), ...(await server.requests(0))];
    }
  }
  throw new Error(`nginx never logged ${AFTER}: ${JSON.stringify(seen)}`);
}

test('the CLI inspects and verifies files and a sharded model on nginx by URL as on disk, through ranges only', {
  skip: noCli ?? false,
}, async () => {
  net.take();
  const url = (name) => `${server.base}${name}`;
  // A URL lists its header only (the CLI's default for URLs), as the file on disk does with --no-hash.
  assert.deepEqual(
    cliJson('inspect', '--json', url('big.safetensors')),
    cliJson('inspect', '--json', '--no-hash', join(dir, 'big.safetensors')),
  );
  let answers = await answersToCommand();
  assert.ok(answers.length >= 1, JSON.stringify(answers));
  for (const r of answers) assert.deepEqual([r.path, r.status], ['/big.safetensors', 206], JSON.stringify(r));
  const listed = answers.reduce((n, r) => n + r.bytes, 0);
  assert.ok(listed <= 256 * 1024 && listed < big.length / 8, `listing moved ${listed} of ${big.length} bytes`);

  // --hash streams every tensor's bytes: the same SHA-256s as on disk, and later requests pinned to nginx's ETag.
  assert.deepEqual(
    cliJson('inspect', '--json', '--hash', url('big.safetensors')),
    cliJson('inspect', '--json', join(dir, 'big.safetensors')),
  );
  answers = await answersToCommand();
  assert.ok(
    answers.every((r) => r.status === 206),
    JSON.stringify(answers),
  );
  assert.ok(
    answers.slice(1).every((r) => /^"[0-9a-f]+-[0-9a-f]+"$/.test(r.ifRange ?? '')),
    JSON.stringify(answers),
  );
  assert.ok(answers.reduce((n, r) => n + r.bytes, 0) >= big.length - 2 * 1024, 'the data was not all read');

  // A sharded model by its index's URL: checked against its shards, listed as one model, as on disk.
  const verified = cliJson('verify', '--json', url(INDEX_PATH.slice(1)));
  assert.deepEqual({ ...verified, file: null }, { ...cliJson('verify', '--json', join(dir, INDEX_PATH)), file: null });
  assert.equal(verified.ok, true, JSON.stringify(verified));
  const inspected = cliJson('inspect', '--json', url(INDEX_PATH.slice(1)));
  assert.deepEqual(inspected, cliJson('inspect', '--json', '--no-hash', join(dir, INDEX_PATH)));
  assert.deepEqual(inspected.tensors.map((t) => t.name).toSorted(), MODEL_NAMES);
  answers = await answersToCommand();
  for (const r of answers.filter((a) => a.path !== INDEX_PATH)) assert.equal(r.status, 206, JSON.stringify(r));
});
