// The streaming writer in each browser engine (lib/engines.js), through the browser entry:
// a File converted to BF16, a URL's tensors renamed, and shards, each the
// same bytes as Node's package makes of the same input; an abort.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SafeTensors, editTensors, serializeStream, shardTensors } from 'safetensors-nano';
import { tensorFile } from '../lib/format.js';
import { startServer } from '../lib/server.js';
import { describeEachEngine } from '../lib/engines.js';
import { collect } from '../lib/streams.js';

const project = join(dirname(fileURLToPath(import.meta.url)), '..');
const fixtures = join(project, 'tmp', 'stream-fixtures');
mkdirSync(fixtures, { recursive: true });

const values = new Float32Array(1_500_000).map((_, i) => Math.sin(i) * 1000);
const model = tensorFile(
  [
    ['model.w', 'F32', [values.length], values],
    ['model.h', 'F16', [4], Uint16Array.of(0x3c00, 0xc000, 0x3800, 0x7c00)],
    ['model.i', 'I32', [2], Int32Array.of(7, -7)],
  ],
  { metadata: { format: 'pt' }, align: 8 },
);
writeFileSync(join(fixtures, 'model.safetensors'), model);

const sha = (bytes) => createHash('sha256').update(bytes).digest('hex');

let server;

before(async () => {
  server = await startServer({ root: project, range: true });
});

after(() => server?.close());

describeEachEngine(
  () => `${server.url}/browser/page.html`,
  (session) => {
    test('a File converted to BF16 and a URL renamed, streamed: the bytes Node makes', async () => {
      const got = await session.page.evaluate(async () => {
        const { SafeTensors, editTensors, serializeStream } = window.stn;
        const file = new File(
          [await (await fetch('/tmp/stream-fixtures/model.safetensors')).blob()],
          'model.safetensors',
        );
        // (A SHA-256 crosses back, not the bytes.)
        const bytes = async (stream) =>
          [...new Uint8Array(await crypto.subtle.digest('SHA-256', await new Response(stream).arrayBuffer()))]
            .map((b) => b.toString(16).padStart(2, '0'))
            .join('');
        const fromFile = await SafeTensors.fromBlob(file);
        const fromUrl = await SafeTensors.fromUrl('/tmp/stream-fixtures/model.safetensors');
        let chunks = 0;
        const converted = await bytes(
          serializeStream(editTensors(fromFile, { convert: 'BF16' }), fromFile.metadata(), {
            chunkBytes: 65536,
            onProgress: () => chunks++,
          }),
        );
        const renamed = await bytes(serializeStream(editTensors(fromUrl, { rename: ['model.', 'm.'], drop: '*.i' })));
        return { converted, renamed, chunks };
      });
      const file = SafeTensors.fromBytes(model);
      const want = (await collect(serializeStream(editTensors(file, { convert: 'BF16' }), file.metadata()))).bytes;
      assert.equal(got.converted, sha(want));
      assert.ok(got.chunks >= 3, `${got.chunks} progress calls`);
      const want2 = (await collect(serializeStream(editTensors(file, { rename: ['model.', 'm.'], drop: '*.i' }))))
        .bytes;
      assert.equal(got.renamed, sha(want2));
    });

    test('shards and their index, and an abort mid-stream', async () => {
      const got = await session.page.evaluate(async () => {
        const { SafeTensors, editTensors, serializeStream, shardTensors } = window.stn;
        const file = await SafeTensors.fromUrl('/tmp/stream-fixtures/model.safetensors');
        const split = shardTensors(editTensors(file), { maxShardSize: 1000 });
        const shards = [];
        const hash = async (stream) =>
          [...new Uint8Array(await crypto.subtle.digest('SHA-256', await new Response(stream).arrayBuffer()))]
            .map((b) => b.toString(16).padStart(2, '0'))
            .join('');
        for (const s of split.shards) shards.push([s.name, await hash(serializeStream(s.tensors, file.metadata()))]);
        const controller = new AbortController();
        const reader = serializeStream(editTensors(file, { convert: 'F16' }), null, {
          chunkBytes: 4096,
          signal: controller.signal,
        }).getReader();
        await reader.read();
        controller.abort();
        let aborted = '';
        try {
          for (;;) if ((await reader.read()).done) break;
        } catch (e) {
          aborted = e.name;
        }
        return { shards, index: split.index, aborted };
      });
      const file = SafeTensors.fromBytes(model);
      const split = shardTensors(editTensors(file), { maxShardSize: 1000 });
      assert.equal(got.index, split.index);
      assert.deepEqual(
        got.shards.map(([n]) => n),
        split.shards.map((s) => s.name),
      );
      for (const [i, s] of split.shards.entries()) {
        assert.equal(got.shards[i][1], sha((await collect(serializeStream(s.tensors, file.metadata()))).bytes));
      }
      assert.equal(got.aborted, 'AbortError');
    });
  },
);
