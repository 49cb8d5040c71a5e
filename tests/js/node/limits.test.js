// Limits: headerLimit on every opener (HeaderTooLarge from the 8-byte
// length, before the header is read or fetched), HTTP answers never read
// past what was asked, and openSharded's bounded concurrency.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SafeTensors, SafeTensorsError, openSharded } from 'safetensors-nano';
import { tensorFile } from '../lib/format.js';
import { scratch } from '../lib/env.js';
import { startServer } from '../lib/server.js';

const HEADER_LIMIT = 100_000_000;
const URL_HEADER_LIMIT = 25_000_000;

const small = tensorFile([['w', 'F32', [2], new Float32Array([1, 2])]], { metadata: { format: 'pt' } });
const N = Number(new DataView(small.buffer).getBigUint64(0, true));

// The first 8 bytes of a file whose header claims `n` bytes.
function lengthPrefix(n) {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n), true);
  return b;
}

// The core's HeaderTooLarge for a header of `n` bytes over `limit`.
function tooLarge(n, limit) {
  return (e) => {
    assert.ok(e instanceof SafeTensorsError, String(e));
    assert.equal(e.kind, 'HeaderTooLarge');
    assert.equal(e.message, `header of ${n} bytes is over the limit of ${limit} bytes`);
    assert.equal(e.offset, null);
    assert.equal(e.tensor, null);
    return true;
  };
}

// A Blob that records the ranges read from it.
class CountingBlob extends Blob {
  reads = [];
  slice(start, end, type) {
    this.reads.push([start, end]);
    return super.slice(start, end, type);
  }
}

test("fromBytes: headerLimit refuses a longer header; the default is the core's 100 MB, larger values mean it", () => {
  assert.equal(SafeTensors.fromBytes(small, { headerLimit: N }).headerSize, N);
  assert.throws(() => SafeTensors.fromBytes(small, { headerLimit: N - 1 }), tooLarge(N, N - 1));
  assert.throws(() => SafeTensors.fromBytes(small, { headerLimit: 0 }), tooLarge(N, 0));
  // (From wasm with the default limit; from JS below it: the same error.)
  const huge = lengthPrefix(HEADER_LIMIT + 1);
  assert.throws(() => SafeTensors.fromBytes(huge), tooLarge(HEADER_LIMIT + 1, HEADER_LIMIT));
  assert.throws(() => SafeTensors.fromBytes(huge, { headerLimit: 2 ** 40 }), tooLarge(HEADER_LIMIT + 1, HEADER_LIMIT));
  assert.throws(
    () => SafeTensors.fromBytes(huge, { headerLimit: HEADER_LIMIT - 1 }),
    tooLarge(HEADER_LIMIT + 1, HEADER_LIMIT - 1),
  );
  // Lengths past 2^32 and 2^53 are shown exactly.
  assert.throws(() => SafeTensors.fromBytes(lengthPrefix(2 ** 40 + 5), { headerLimit: 10 }), tooLarge(2 ** 40 + 5, 10));
  assert.throws(
    () => SafeTensors.fromBytes(lengthPrefix(2n ** 64n - 1n), { headerLimit: 10 }),
    tooLarge(2n ** 64n - 1n, 10),
  );
});

test("headerLimit keeps the core's order: a file under 8 bytes first, the limit before the file length", () => {
  assert.throws(
    () => SafeTensors.fromBytes(new Uint8Array(7), { headerLimit: 0 }),
    (e) => e.kind === 'HeaderTooSmall',
  );
  // A header of 100 bytes in a file of 20: over the limit before too long for the file.
  const short = new Uint8Array(20);
  short.set(lengthPrefix(100));
  assert.throws(() => SafeTensors.fromBytes(short, { headerLimit: 50 }), tooLarge(100, 50));
  assert.throws(
    () => SafeTensors.fromBytes(short, { headerLimit: 100 }),
    (e) => e.kind === 'InvalidHeaderLength',
  );
});

test('every opener refuses a headerLimit that is not a non-negative integer (TypeError)', async () => {
  for (const headerLimit of [-1, 1.5, NaN, '100', 10n, Infinity, null]) {
    assert.throws(() => SafeTensors.fromBytes(small, { headerLimit }), TypeError);
    assert.throws(() => SafeTensors.fromHeader(small, small.length, { headerLimit }), TypeError);
    await assert.rejects(SafeTensors.fromBlob(new Blob([small]), { headerLimit }), TypeError);
    await assert.rejects(SafeTensors.fromUrl('http://127.0.0.1:9/x', { headerLimit }), TypeError);
    await assert.rejects(openSharded({ weight_map: {} }, [], { headerLimit }), TypeError);
  }
});

test('fromHeader: 8 bytes are enough to refuse a header over the limit', () => {
  const first8 = small.subarray(0, 8);
  assert.throws(() => SafeTensors.fromHeader(first8, small.length, { headerLimit: N - 1 }), tooLarge(N, N - 1));
  assert.throws(
    () => SafeTensors.fromHeader(first8, small.length, { headerLimit: N }),
    (e) => e.kind === 'HeaderIncomplete',
  );
  assert.equal(SafeTensors.fromHeader(small, small.length, { headerLimit: N }).names()[0], 'w');
  assert.throws(
    () => SafeTensors.fromHeader(lengthPrefix(HEADER_LIMIT + 8), 2n ** 60n),
    tooLarge(HEADER_LIMIT + 8, HEADER_LIMIT),
  );
});

test('fromBlob: over the limit, only the 8-byte length is read', async () => {
  const blob = new CountingBlob([small]);
  await assert.rejects(SafeTensors.fromBlob(blob, { headerLimit: N - 1 }), tooLarge(N, N - 1));
  assert.deepEqual(blob.reads, [[0, 8]]);
  const ok = new CountingBlob([small]);
  const st = await SafeTensors.fromBlob(ok, { headerLimit: N });
  assert.deepEqual(ok.reads, [
    [0, 8],
    [8, 8 + N],
  ]);
  assert.equal(st.bytesRead, 8 + N);
  // A Blob claiming a 100 MB + 1 header: refused by default, unread.
  const claim = new CountingBlob([lengthPrefix(HEADER_LIMIT + 1), new Uint8Array(16)]);
  await assert.rejects(SafeTensors.fromBlob(claim), tooLarge(HEADER_LIMIT + 1, HEADER_LIMIT));
  assert.deepEqual(claim.reads, [[0, 8]]);
});

// ---- over HTTP ----

const dir = scratch('stn-limits-');
let ranged;
let plain;
// A 40 MB "file" whose 8-byte length claims a 30 MB header (over fromUrl's
// default, under the others'), its bytes made on demand.
const CLAIM = 30_000_000;
const claimSize = 40_000_000n;
const virtual = new Map([
  [
    '/claims.safetensors',
    {
      size: claimSize,
      read: (start, end) => {
        const out = new Uint8Array(Number(end - start)).fill(0x20);
        const prefix = lengthPrefix(CLAIM);
        for (let i = start; i < 8n && i < end; i++) out[Number(i - start)] = prefix[Number(i)];
        return out;
      },
    },
  ],
]);
const SHARDS = 20;
const shardName = (i) => `model-${String(i + 1).padStart(5, '0')}-of-${String(SHARDS).padStart(5, '0')}.safetensors`;

before(async () => {
  writeFileSync(join(dir, 'small.safetensors'), small);
  mkdirSync(join(dir, 'sharded'));
  const weightMap = {};
  for (let i = 0; i < SHARDS; i++) {
    writeFileSync(join(dir, 'sharded', shardName(i)), tensorFile([[`t${i}`, 'U8', [1], Uint8Array.of(i)]]));
    weightMap[`t${i}`] = shardName(i);
  }
  writeFileSync(join(dir, 'sharded', 'model.safetensors.index.json'), JSON.stringify({ weight_map: weightMap }));
  // Shard 3 of a second model is missing (404).
  mkdirSync(join(dir, 'broken'));
  for (let i = 0; i < SHARDS; i++) {
    if (i !== 2) writeFileSync(join(dir, 'broken', shardName(i)), tensorFile([[`t${i}`, 'U8', [1], Uint8Array.of(i)]]));
  }
  writeFileSync(join(dir, 'broken', 'model.safetensors.index.json'), JSON.stringify({ weight_map: weightMap }));
  ranged = await startServer({ root: dir, virtual, delay: 20 });
  plain = await startServer({ root: dir, virtual, range: false });
});

after(async () => {
  await ranged?.close();
  await plain?.close();
});

// The requests a call made to `server`.
async function requestsOf(server, call) {
  const from = server.requests.length;
  let error;
  try {
    await call();
  } catch (e) {
    error = e;
  }
  return { requests: server.requests.slice(from), error };
}

test('fromUrl: the default limit is 25 MB; a longer header is refused after the first request', async () => {
  const { requests, error } = await requestsOf(ranged, () => SafeTensors.fromUrl(`${ranged.url}/claims.safetensors`));
  assert.ok(tooLarge(CLAIM, URL_HEADER_LIMIT)(error));
  assert.deepEqual(
    requests.map((r) => r.range),
    ['bytes=0-65535'],
  );
  // With prefetch 8, exactly the 8-byte length is fetched.
  const eight = await requestsOf(ranged, () =>
    SafeTensors.fromUrl(`${ranged.url}/claims.safetensors`, { prefetch: 8 }),
  );
  assert.ok(tooLarge(CLAIM, URL_HEADER_LIMIT)(eight.error));
  assert.deepEqual(
    eight.requests.map((r) => r.range),
    ['bytes=0-7'],
  );
});

test('fromUrl: headerLimit caps the first request at 8 + headerLimit bytes', async () => {
  const url = `${ranged.url}/small.safetensors`;
  const over = await requestsOf(ranged, () => SafeTensors.fromUrl(url, { headerLimit: N - 1 }));
  assert.ok(tooLarge(N, N - 1)(over.error));
  assert.deepEqual(
    over.requests.map((r) => r.range),
    [`bytes=0-${8 + N - 2}`],
  );
  const exact = await requestsOf(ranged, async () => {
    const st = await SafeTensors.fromUrl(url, { headerLimit: N });
    assert.deepEqual([...(await st.tensor('w').readFloat32())], [1, 2]);
  });
  assert.equal(exact.error, undefined);
  assert.deepEqual(
    exact.requests.map((r) => r.range),
    [`bytes=0-${8 + N - 1}`, `bytes=${8 + N}-${8 + N + 7}`],
  );
  // Above 100 MB means 100 MB.
  const max = await requestsOf(ranged, () => SafeTensors.fromUrl(url, { headerLimit: 2 ** 40, prefetch: 2 ** 30 }));
  assert.equal(max.error, undefined);
  assert.equal(max.requests[0].range, `bytes=0-${HEADER_LIMIT + 7}`);
  await assert.rejects(SafeTensors.fromUrl(url, { prefetch: -1 }), TypeError);
});

test('fromUrl: a server answering 200 to a header over the limit is read no further than its first chunk', async () => {
  // Through the network (a server without ranges)...
  const net = await requestsOf(plain, () => SafeTensors.fromUrl(`${plain.url}/claims.safetensors`));
  assert.ok(tooLarge(CLAIM, URL_HEADER_LIMIT)(net.error));
  assert.equal(net.requests.length, 1);
  // ...and counted: a body of 64 KiB chunks, pulled as read.
  let pulled = 0;
  const fetch = async () => {
    const body = new ReadableStream({
      pull(controller) {
        const chunk = new Uint8Array(65536);
        if (pulled === 0) chunk.set(lengthPrefix(CLAIM));
        pulled++;
        controller.enqueue(chunk);
        if (pulled === 1000) controller.close();
      },
    });
    return new Response(body, { status: 200 });
  };
  await assert.rejects(SafeTensors.fromUrl('http://example.invalid/x', { fetch }), tooLarge(CLAIM, URL_HEADER_LIMIT));
  assert.ok(pulled <= 3, `${pulled} chunks pulled`);
});

test('fromUrl: a 206 answer with more bytes than asked is an Http error before the rest arrives', async () => {
  let pulled = 0;
  const fetch = async () => {
    const body = new ReadableStream({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(65536));
        if (pulled === 1000) controller.close();
      },
    });
    return new Response(body, { status: 206, headers: { 'Content-Range': 'bytes 0-65535/100000000' } });
  };
  await assert.rejects(
    SafeTensors.fromUrl('http://example.invalid/x', { fetch }),
    (e) => e.kind === 'Http' && /more than the 65536 bytes/.test(e.message),
  );
  assert.ok(pulled <= 4, `${pulled} chunks pulled`);
});

test('openSharded: headerLimit reaches each shard (URLs and Files)', async () => {
  const index = `${ranged.url}/sharded/model.safetensors.index.json`;
  const shardN = Number(new DataView(tensorFile([['t0', 'U8', [1], Uint8Array.of(0)]]).buffer).getBigUint64(0, true));
  await assert.rejects(openSharded(index, [], { headerLimit: shardN - 1 }), (e) => {
    assert.equal(e.kind, 'HeaderTooLarge');
    assert.match(e.message, /^model-\d+-of-00020\.safetensors: header of \d+ bytes is over the limit of \d+ bytes$/);
    return true;
  });
  const files = [new File([tensorFile([['t0', 'U8', [1], Uint8Array.of(0)]])], shardName(0))];
  const one = { weight_map: { t0: shardName(0) } };
  await assert.rejects(openSharded(one, files, { headerLimit: shardN - 1 }), (e) => e.kind === 'HeaderTooLarge');
  assert.deepEqual((await openSharded(one, files, { headerLimit: shardN })).names(), ['t0']);
});

test('openSharded: passes prefetch to fromUrl', async () => {
  const index = `${ranged.url}/sharded/model.safetensors.index.json`;
  const { requests, error } = await requestsOf(ranged, () => openSharded(index, [], { prefetch: 16 }));
  assert.equal(error, undefined);
  const shardRequests = requests.filter((r) => r.path.endsWith('.safetensors'));
  // Each shard: its first 16 bytes, then the rest of its header.
  assert.equal(shardRequests.filter((r) => r.range === 'bytes=0-15').length, SHARDS);
});

test('openSharded: at most `concurrency` shards are fetched at once (default 8)', async () => {
  const index = `${ranged.url}/sharded/model.safetensors.index.json`;
  for (const [concurrency, most] of [
    [1, 1],
    [3, 3],
    [undefined, 8],
  ]) {
    ranged.stats.maxInFlight = 0;
    const model = await openSharded(index, [], concurrency === undefined ? {} : { concurrency });
    assert.equal(model.names().length, SHARDS);
    assert.equal(ranged.stats.maxInFlight, most, `concurrency ${concurrency}`);
  }
  ranged.stats.maxInFlight = 0;
  await openSharded(index, [], { concurrency: Infinity });
  assert.ok(ranged.stats.maxInFlight > 8, `${ranged.stats.maxInFlight} at once`);
  for (const concurrency of [0, -1, 1.5, '3', NaN]) {
    await assert.rejects(openSharded(index, [], { concurrency }), TypeError);
  }
});

test('openSharded: after a shard fails no more are started', async () => {
  const index = `${ranged.url}/broken/model.safetensors.index.json`;
  const { requests, error } = await requestsOf(ranged, () => openSharded(index, [], { concurrency: 1 }));
  assert.equal(error?.kind, 'Http');
  assert.match(error.message, /^model-00003-of-00020\.safetensors: HTTP 404/);
  assert.deepEqual(
    requests.map((r) => r.path.slice(r.path.lastIndexOf('/') + 1)),
    ['model.safetensors.index.json', shardName(0), shardName(1), shardName(2)],
  );
});

test('fromUrl: answers read as a stream still come back in buffers of their own (aligned views)', async () => {
  const st1 = await SafeTensors.fromUrl(`${ranged.url}/small.safetensors`);
  const bytes = await st1.tensor('w').read();
  assert.equal(bytes.byteOffset, 0);
  assert.equal(bytes.buffer.byteLength, 8);
  assert.deepEqual([...new Float32Array(bytes.buffer)], [1, 2]);
  // The whole file from a server without ranges: views work where the file aligns them.
  const aligned = tensorFile([['w', 'F32', [2], new Float32Array([1, 2])]], { align: 8 });
  writeFileSync(join(dir, 'aligned.safetensors'), aligned);
  const st = await SafeTensors.fromUrl(`${plain.url}/aligned.safetensors`);
  assert.deepEqual([...st.tensor('w').view()], [1, 2]);
});
