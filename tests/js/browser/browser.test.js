// The package in each browser engine (Chromium, Firefox ESR, WebKitGTK:
// lib/engines.js), loaded through an import map from the installed
// package's browser entry: fromBytes, fromBlob on a File from a file input
// (including a sparse file over 4 GiB), fromUrl against a local server with
// Range support and one without, and a malformed file's error.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rawFile, tensorFile } from '../lib/format.js';
import { makeSparseFile, SPARSE } from '../lib/sparse.js';
import { piecesFile } from '../lib/pieces.js';
import { startServer } from '../lib/server.js';
import { describeEachEngine } from '../lib/engines.js';
import { scratch } from '../lib/env.js';

const project = join(dirname(fileURLToPath(import.meta.url)), '..');
const fixtures = join(project, 'tmp', 'fixtures');
mkdirSync(fixtures, { recursive: true });
const sparseDir = scratch('stn-browser-');

const f16 = Uint16Array.of(0x3c00, 0xc000, 0x3800, 0x7c00); // 1, -2, 0.5, inf
const model = tensorFile(
  [
    ['w', 'F32', [2, 2], new Float32Array([1, 2, 3, 4])],
    ['h', 'F16', [4], f16],
    ['q', 'F8_E4M3', [4], Uint8Array.of(0x38, 0xb8, 0x7e, 0x00)], // 1, -1, 448, 0
  ],
  { metadata: { format: 'pt' }, align: 8 },
);
const badHeader =
  '{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}';
const bad = rawFile(badHeader.replace('[2,6]', '[3,7]'), new Uint8Array(7));
writeFileSync(join(fixtures, 'model.safetensors'), model);
writeFileSync(join(fixtures, 'bad.safetensors'), bad);
writeFileSync(join(fixtures, 'pieces.safetensors'), piecesFile());
// Names the browser's TextDecoder must keep: a leading U+FEFF (raw and
// escaped), an astral character.
const bomNames = ['\ufeffw', '\ufeff', '\u{1f600}'];
const bomHeader = `{"\ufeffw":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"\\ufeff":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},"\u{1f600}":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}}`;
writeFileSync(join(fixtures, 'bom.safetensors'), rawFile(bomHeader, Uint8Array.of(0, 1, 2)));
const sparse = makeSparseFile(sparseDir);

let ranged;
let plain;
let sparseServer;

before(async () => {
  ranged = await startServer({ root: project, range: true });
  plain = await startServer({ root: project, range: false });
  sparseServer = await startServer({ root: sparseDir, range: true });
});

after(() => Promise.all([ranged?.close(), plain?.close(), sparseServer?.close()]));

// Where the current engine's requests start in the server's log: the writer's .wasm must wait for `serialize`.
let first;
const requested = () => ranged.requests.slice(first).map((q) => q.path);
const writerWasm = () => requested().filter((u) => u.endsWith('/safetensors_nano_writer_bg.wasm')).length;

describeEachEngine(
  () => `${ranged.url}/browser/page.html`,
  (session) => {
    test('fromBytes in the browser: names, metadata, typed views (Float16Array), toFloat32', async () => {
      const r = await session.page.evaluate(async () => {
        const { SafeTensors } = window.stn;
        const buf = await (await fetch('/tmp/fixtures/model.safetensors')).arrayBuffer();
        const st = SafeTensors.fromBytes(buf);
        const h = st.tensor('h').view();
        return {
          names: st.names(),
          metadata: st.metadata(),
          w: [...st.tensor('w').view()],
          wBuffer: st.tensor('w').view().buffer === buf,
          hasF16: typeof Float16Array === 'function',
          hType: h.constructor.name,
          h: [...st.tensor('h').toFloat32()],
          q: [...st.tensor('q').toFloat32()],
          count: st.parameterCount(),
        };
      });
      assert.deepEqual(r.names, ['w', 'h', 'q']);
      assert.deepEqual(r.metadata, { format: 'pt' });
      assert.deepEqual(r.w, [1, 2, 3, 4]);
      assert.ok(r.wBuffer, 'view() is over the fetched ArrayBuffer');
      assert.equal(r.hType, r.hasF16 ? 'Float16Array' : 'Uint16Array');
      assert.deepEqual(r.h, [1, -2, 0.5, Infinity]);
      assert.deepEqual(r.q, [1, -1, 448, 0]);
      assert.deepEqual(r.count, { total: 12, byDtype: { F32: 4, F16: 4, F8_E4M3: 4 } });
    });

    test('serialize in the browser: edit a tensor, save, reopen the saved Blob; the writer loads only then', async () => {
      // Reading (the tests above) never fetched the writer's module.
      assert.ok(
        requested().some((u) => u.endsWith('/safetensors_nano_wasm_bg.wasm')),
        requested().join('\n'),
      );
      assert.equal(writerWasm(), 0);
      const r = await session.page.evaluate(async () => {
        const { SafeTensors, serialize } = window.stn;
        const st = SafeTensors.fromBytes(await (await fetch('/tmp/fixtures/model.safetensors')).arrayBuffer());
        const edited = {};
        for (const t of st.tensors()) edited[t.name] = { dtype: t.dtype, shape: t.shape, data: t.bytes() };
        edited.w = {
          dtype: 'F32',
          shape: [4],
          data: st
            .tensor('w')
            .toFloat32()
            .map((v) => v * 10),
        };
        const saved = await serialize(edited, st.metadata());
        await serialize({}, null); // a second call reuses the loaded module
        const back = await SafeTensors.fromBlob(new Blob([saved]));
        return {
          names: back.names(),
          w: [...(await back.tensor('w').readFloat32())],
          shape: back.tensor('w').shape,
          q: [...(await back.tensor('q').readFloat32())],
        };
      });
      assert.deepEqual(r.names, ['w', 'h', 'q']);
      assert.deepEqual(r.w, [10, 20, 30, 40]);
      assert.deepEqual(r.shape, [4]);
      assert.deepEqual(r.q, [1, -1, 448, 0]);
      assert.equal(writerWasm(), 1);
    });

    async function pick(path) {
      await session.page.setInputFiles('#file', path);
    }

    test('fromBlob on a File from a file input reads only the header, then tensors on demand', async () => {
      await pick(join(fixtures, 'model.safetensors'));
      const r = await session.page.evaluate(async () => {
        const { SafeTensors } = window.stn;
        const file = document.querySelector('#file').files[0];
        const st = await SafeTensors.fromBlob(file);
        const afterOpen = st.bytesRead;
        const q = await st.tensor('q').readFloat32();
        return {
          name: file.name,
          size: file.size,
          names: st.names(),
          afterOpen,
          dataOffset: st.dataOffset,
          q: [...q],
          read: st.bytesRead,
        };
      });
      assert.equal(r.name, 'model.safetensors');
      assert.deepEqual(r.names, ['w', 'h', 'q']);
      assert.equal(r.afterOpen, r.dataOffset);
      assert.deepEqual(r.q, [1, -1, 448, 0]);
      assert.equal(r.read, r.dataOffset + 4);
    });

    test('a sparse File over 4 GiB opens from a file input reading only its header', async () => {
      await pick(sparse.path);
      const r = await session.page.evaluate(async () => {
        const { SafeTensors } = window.stn;
        const file = document.querySelector('#file').files[0];
        const t0 = performance.now();
        const st = await SafeTensors.fromBlob(file);
        const ms = performance.now() - t0;
        const hi = st.tensor('hi');
        return {
          size: file.size,
          fileSize: st.fileSize,
          bytesRead: st.bytesRead,
          hiOffset: hi.byteOffset,
          hi: [...(await hi.readFloat32())],
          tail: (await st.tensor('tail').read())[1023],
          ms,
        };
      });
      assert.equal(r.size, sparse.size);
      assert.equal(r.fileSize, sparse.size);
      assert.ok(r.bytesRead < 400, `read ${r.bytesRead}`);
      assert.equal(r.hiOffset, sparse.hiOffset);
      assert.ok(r.hiOffset > 2 ** 32);
      assert.deepEqual(r.hi, [1, -2, 3]);
      assert.equal(r.tail, 9);
      assert.equal(SPARSE.tail, 1024);
    });

    test('fromUrl with Range requests, and against a server without Range support', async () => {
      const r = await session.page.evaluate(
        async ({ plainUrl, sparseUrl }) => {
          const { SafeTensors } = window.stn;
          const a = await SafeTensors.fromUrl('/tmp/fixtures/model.safetensors', { prefetch: 8 });
          const aOpen = a.bytesRead;
          const w = await a.tensor('w').readFloat32();
          const b = await SafeTensors.fromUrl(`${plainUrl}/tmp/fixtures/model.safetensors`, { prefetch: 8 });
          const c = await SafeTensors.fromUrl(`${sparseUrl}/sparse-4gib.safetensors`);
          return {
            aOpen,
            aData: a.dataOffset,
            w: [...w],
            aRead: a.bytesRead,
            bRead: b.bytesRead,
            bSize: b.fileSize,
            bView: [...b.tensor('w').view()],
            cSize: c.fileSize,
            cHi: [...(await c.tensor('hi').readFloat32())],
          };
        },
        { plainUrl: plain.url, sparseUrl: sparseServer.url },
      );
      assert.equal(r.aOpen, r.aData);
      assert.deepEqual(r.w, [1, 2, 3, 4]);
      assert.equal(r.aRead, r.aData + 16);
      assert.equal(r.bRead, model.length);
      assert.equal(r.bSize, model.length);
      assert.deepEqual(r.bView, [1, 2, 3, 4]);
      assert.equal(r.cSize, sparse.size);
      assert.deepEqual(r.cHi, [1, -2, 3]);
      const sparseRanges = sparseServer.requests.map((q) => q.status);
      assert.ok(
        sparseRanges.every((s) => s === 206),
        `statuses ${sparseRanges}`,
      );
      assert.ok(
        plain.requests.every((q) => q.status === 200),
        'no preflight: Range is CORS-safelisted',
      );
    });

    test('names keep a leading U+FEFF in the browser; headerLimit refuses a header before fetching it', async () => {
      const from = requested().length;
      const r = await session.page.evaluate(async (names) => {
        const { SafeTensors, serialize } = window.stn;
        const buf = await (await fetch('/tmp/fixtures/bom.safetensors')).arrayBuffer();
        const opened = [
          SafeTensors.fromBytes(buf),
          await SafeTensors.fromBlob(new Blob([buf])),
          await SafeTensors.fromUrl('/tmp/fixtures/bom.safetensors'),
        ];
        const saved = SafeTensors.fromBytes(
          await serialize(
            Object.fromEntries(names.map((n, i) => [n, { dtype: 'U8', shape: [1], data: Uint8Array.of(i) }])),
          ),
        );
        const found = [];
        for (const st of [...opened, saved])
          found.push(await Promise.all(names.map(async (n) => (await st.tensor(n)?.read())?.[0] ?? null)));
        let limited;
        try {
          await SafeTensors.fromUrl('/tmp/fixtures/model.safetensors', { headerLimit: 16 });
        } catch (e) {
          limited = [e.kind, e.message];
        }
        return { names: opened.map((st) => st.names()), found, limited };
      }, bomNames);
      for (const names of r.names) assert.deepEqual(names, bomNames);
      for (const found of r.found) assert.deepEqual(found, [0, 1, 2]);
      assert.equal(r.limited[0], 'HeaderTooLarge');
      assert.match(r.limited[1], /is over the limit of 16 bytes$/);
      // The refused header: only its first 8 + 16 bytes were asked for.
      assert.equal(
        requested()
          .slice(from)
          .filter((u) => u.endsWith('/model.safetensors')).length,
        1,
      );
    });

    test('a malformed file gives a SafeTensorsError with kind, offset and tensor', async () => {
      await pick(join(fixtures, 'bad.safetensors'));
      const r = await session.page.evaluate(async () => {
        const { SafeTensors, SafeTensorsError } = window.stn;
        const out = [];
        const buf = await (await fetch('/tmp/fixtures/bad.safetensors')).arrayBuffer();
        for (const open of [
          () => SafeTensors.fromBytes(buf),
          () => SafeTensors.fromBlob(document.querySelector('#file').files[0]),
          () => SafeTensors.fromUrl('/tmp/fixtures/bad.safetensors'),
        ]) {
          try {
            await open();
            out.push('opened');
          } catch (e) {
            out.push({
              isError: e instanceof Error,
              isOurs: e instanceof SafeTensorsError,
              name: e.name,
              kind: e.kind,
              offset: e.offset,
              tensor: e.tensor,
              message: e.message,
            });
          }
        }
        return out;
      });
      for (const e of r) {
        assert.equal(e.isError, true);
        assert.equal(e.isOurs, true);
        assert.equal(e.name, 'SafeTensorsError');
        assert.equal(e.kind, 'InvalidOffset');
        assert.equal(e.tensor, 'b');
        assert.equal(typeof e.offset === 'number' || e.offset === null, true);
        assert.match(e.message, /tensor "b"/);
      }
    });

    test('readFloat32 over every tensor of a File in order (its stream cut mid-element), new arrays and one reused `out`', async () => {
      await pick(join(fixtures, 'pieces.safetensors'));
      const r = await session.page.evaluate(async () => {
        const { SafeTensors } = window.stn;
        const file = document.querySelector('#file').files[0];
        const mem = SafeTensors.fromBytes(await file.arrayBuffer());
        const same = (a, b) =>
          a.length === b.length &&
          new Uint32Array(a.buffer, a.byteOffset, a.length).every((v, i) => v === new Uint32Array(b.buffer)[i]);
        const st = await SafeTensors.fromBlob(file);
        const fresh = [];
        for (const t of st.tensors()) fresh.push([t.name, same(await t.readFloat32(), mem.tensor(t.name).toFloat32())]);
        const again = await SafeTensors.fromBlob(file);
        const buf = new Float32Array(Math.max(...again.tensors().map((t) => t.elementCount)));
        const reused = [];
        for (const t of again.tensors()) {
          const out = buf.subarray(0, t.elementCount);
          const got = await t.readFloat32({ out });
          reused.push([t.name, got === out && same(got, mem.tensor(t.name).toFloat32())]);
        }
        let wrong;
        try {
          await again.tensor('bf16').readFloat32({ out: buf.subarray(0, 3) });
        } catch (e) {
          wrong = { kind: e.kind, tensor: e.tensor };
        }
        return { fresh, reused, wrong, bytesRead: st.bytesRead, size: file.size };
      });
      const names = ['lead', 'odd', 'bf16', 'f6', 'e5m2', 'f32', 'f16'];
      assert.deepEqual(
        r.fresh,
        names.map((n) => [n, true]),
      );
      assert.deepEqual(
        r.reused,
        names.map((n) => [n, true]),
      );
      assert.deepEqual(r.wrong, { kind: 'LengthMismatch', tensor: 'bf16' });
      assert.equal(r.bytesRead, r.size);
    });
  },
  {
    beforeOpen: () => {
      first = ranged.requests.length;
    },
  },
);
