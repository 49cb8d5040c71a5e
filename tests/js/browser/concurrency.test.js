// Many callers in each browser engine (lib/engines.js): 8 module Workers, each with its own
// wasm instance, open and decode the mixed files (valid and malformed;
// bytes, Blobs, URLs) while the page's main thread does the same; two
// Workers abort their tasks mid-flight and one is terminated. Every task
// that was not aborted gives exactly what Node gives for that file.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as stn from 'safetensors-nano';
import { mixedFiles, summarize } from '../lib/mixed-files.js';
import { startServer } from '../lib/server.js';
import { describeEachEngine } from '../lib/engines.js';

const project = join(dirname(fileURLToPath(import.meta.url)), '..');
const COUNT = 50;
const FILES = mixedFiles(COUNT);
const mixed = join(project, 'tmp', 'fixtures', 'mixed');
mkdirSync(mixed, { recursive: true });
for (const { name, bytes } of FILES) writeFileSync(join(mixed, name), bytes);

// What a read of a File edited on disk gives. Chromium and WebKit refuse the read (their
// NotReadableError and NotFoundError): SourceChanged. Firefox reads the file as it is now and
// says nothing, so there the package cannot see an edit that keeps the header: the new bytes.
const EDITED = {
  chromium: { kind: 'SourceChanged', cause: 'NotReadableError' },
  firefox: { kind: 'none' },
  webkit: { kind: 'SourceChanged', cause: 'NotFoundError' },
};

let server;

before(async () => {
  server = await startServer({ root: project, range: true });
});

after(() => server?.close());

// (gc() in Chromium's page: a test collects garbage while a read is in flight.)
describeEachEngine(
  () => `${server.url}/browser/page.html`,
  (session, engine) => {
    test('8 Workers and the main thread open and decode at once; aborted or terminated ones leave the others correct', async () => {
      const expected = [];
      for (const { bytes } of FILES) expected.push(await summarize(stn, async () => stn.SafeTensors.fromBytes(bytes)));
      const WORKERS = 8;
      const PER = 150; // tasks per Worker and on the main thread: every file, each of the three ways
      const ABORTING = [2, 5];
      const TERMINATED = 7;
      const out = await session.page.evaluate(
        async ({ WORKERS, PER, COUNT, ABORTING, TERMINATED }) => {
          const { runTasks } = await import('/browser/tasks.js');
          const indices = (k) => Array.from({ length: PER }, (_, j) => (j + k * 17) % PER);
          const workers = Array.from({ length: WORKERS }, () => new Worker('/browser/worker.js', { type: 'module' }));
          const fromWorker = workers.map(
            (w, k) =>
              new Promise((resolve, reject) => {
                w.onmessage = (e) => {
                  if (e.data !== 'ready') return resolve(e.data);
                  w.postMessage({ count: COUNT, indices: indices(k), abortAfter: ABORTING.includes(k) ? 15 : null });
                  if (k === TERMINATED) setTimeout(() => w.terminate(), 15);
                };
                w.onerror = (e) => reject(new Error(`worker ${k}: ${e.message}`));
              }),
          );
          const main = runTasks(window.stn, { count: COUNT, indices: indices(WORKERS) });
          const settled = await Promise.all(
            fromWorker.map((p, k) =>
              k === TERMINATED ? Promise.race([p, new Promise((r) => setTimeout(() => r(null), 3000))]) : p,
            ),
          );
          for (const w of workers) w.terminate();
          return { workers: settled, main: await main };
        },
        { WORKERS, PER, COUNT, ABORTING, TERMINATED },
      );
      let correct = 0;
      let aborted = 0;
      const check = (results, who, mayAbort) => {
        assert.equal(results.length, PER, who);
        for (const { i, result, aborted: abortName } of results) {
          if (abortName !== undefined) {
            assert.ok(mayAbort, `${who}, task ${i}: ${abortName}`);
            assert.equal(abortName, 'AbortError');
            aborted++;
            continue;
          }
          assert.deepEqual(result, expected[i % COUNT], `${who}, task ${i}`);
          correct++;
        }
      };
      out.workers.forEach((results, k) => {
        if (k === TERMINATED) {
          // Terminated before it answered (if it was that quick, its answer counts).
          if (results !== null) check(results, `worker ${k}`, false);
          return;
        }
        check(results, `worker ${k}`, ABORTING.includes(k));
      });
      check(out.main, 'main thread', false);
      assert.ok(aborted > 0, 'the aborts landed mid-flight');
      console.log(
        `${engine}: ${WORKERS} workers + main thread, ${correct} tasks correct, ${aborted} aborted, worker ${TERMINATED} terminated${out.workers[TERMINATED] === null ? ' mid-flight' : ' after it answered'}`,
      );
    });

    test('a File edited on disk after fromBlob: where the browser refuses it, the package says SourceChanged', async () => {
      const path = join(mixed, 'edited.safetensors');
      const v1 = FILES[0].bytes;
      writeFileSync(path, v1);
      await session.page.setInputFiles('#file', path);
      const opened = await session.page.evaluate(async () => {
        window.edited = await window.stn.SafeTensors.fromBlob(document.querySelector('#file').files[0]);
        return window.edited.names();
      });
      assert.deepEqual(opened, stn.SafeTensors.fromBytes(v1).names());
      // Another version of the same size, a moment later (a new modification time).
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const v2 = v1.slice();
      v2.fill(7, stn.SafeTensors.fromBytes(v1).dataOffset);
      writeFileSync(path, v2);
      const r = await session.page.evaluate(async () => {
        try {
          await window.edited.tensors()[0].read();
          return { kind: 'none' };
        } catch (e) {
          return { kind: e.kind, cause: e.cause?.name };
        }
      });
      assert.deepEqual(r, EDITED[engine]);
    });

    test('readFloat32 of a File edited on disk: SourceChanged before a pass, never the new bytes after its stream started (Firefox: what is on disk)', async () => {
      const { tensorFile } = await import('../lib/format.js');
      const big = 2 * 1024 * 1024; // floats: 8 MiB, two of the stream's pieces
      const version = (v) =>
        tensorFile([
          ['a', 'F32', [64], new Float32Array(64).fill(v)],
          ['b', 'F32', [big], new Float32Array(big).fill(v)],
          ['c', 'F32', [big], new Float32Array(big).fill(v)],
        ]);
      const path = join(mixed, 'edited-floats.safetensors');
      const edit = async (v) => {
        // A moment later: a new modification time, the same size.
        await new Promise((resolve) => setTimeout(resolve, 1100));
        writeFileSync(path, version(v));
      };
      // What readFloat32 of a tensor gives: its distinct values, or the error's kind.
      const readAll = (name) =>
        session.page.evaluate(async (name) => {
          try {
            return { values: [...new Set(await window.floats.tensor(name).readFloat32())] };
          } catch (e) {
            return { kind: e.kind ?? e.name, message: e.message, cause: e.cause?.name };
          }
        }, name);
      const open = () =>
        session.page.evaluate(async () =>
          (window.floats = await window.stn.SafeTensors.fromBlob(document.querySelector('#file').files[0])).names(),
        );

      // Edited before any read: the first read (of its own bytes) says so.
      writeFileSync(path, version(1));
      await session.page.setInputFiles('#file', path);
      assert.deepEqual(await open(), ['a', 'b', 'c']);
      await edit(2);
      const first = await readAll('a');
      if (engine === 'firefox') assert.deepEqual(first, { values: [2] });
      else assert.equal(first.kind, 'SourceChanged', JSON.stringify(first));

      // Edited while an in-order pass streams the file (a, then b: the stream
      // runs on into c): c is the old values or SourceChanged, never new ones.
      writeFileSync(path, version(1));
      await session.page.setInputFiles('#file', path);
      assert.deepEqual(await open(), ['a', 'b', 'c']);
      assert.deepEqual(await readAll('a'), { values: [1] });
      assert.deepEqual(await readAll('b'), { values: [1] });
      await edit(3);
      const after = await readAll('c');
      console.log(`${engine}: c after an edit mid-pass: ${JSON.stringify(after)}`);
      if (engine === 'firefox') {
        // Firefox's stream reads on into the edited file, and its range reads succeed: c may mix
        // both versions, and nothing tells the package (an open problem, noted in issue 28).
        assert.ok(
          after.values?.every((v) => v === 1 || v === 3),
          JSON.stringify(after),
        );
      } else {
        assert.ok(
          after.kind === 'SourceChanged' || (after.values?.length === 1 && after.values[0] === 1),
          JSON.stringify(after),
        );
      }
    });

    test('readFloat32 and read of a File settle while the page collects garbage during their reads', async () => {
      const { tensorFile } = await import('../lib/format.js');
      // 32 MiB of BF16: eight of the stream's pieces, each a read in flight.
      const count = 16 * 1024 * 1024;
      const words = new Uint16Array(count);
      for (let i = 0; i < count; i++) words[i] = 0x3c00 + (i % 128); // 0.0078125 … 0.0155…
      const path = join(mixed, 'collected.safetensors');
      writeFileSync(path, tensorFile([['w', 'BF16', [count], words]]));
      await session.page.setInputFiles('#file', path);
      const outcomes = await session.page.evaluate(async () => {
        const file = document.querySelector('#file').files[0];
        const { SafeTensors, decodeFloat32 } = window.stn;
        // Chromium collects on demand (--expose-gc); elsewhere garbage makes the engine collect.
        const collect =
          window.gc ??
          (() => {
            for (let i = 0; i < 8; i++) new Uint8Array(4 << 20).fill(i);
          });
        const outcomes = [];
        for (let k = 0; k < 6; k++) {
          // Nothing here refers to the SafeTensors or its stream once the read starts. readFloat32
          // streams the File; read() reads it by range.
          let outcome = null;
          SafeTensors.fromBlob(file)
            .then((st) =>
              k % 2 === 0
                ? st.tensor('w').readFloat32()
                : st
                    .tensor('w')
                    .read()
                    .then((bytes) => decodeFloat32('BF16', bytes)),
            )
            .then(
              (f) => (outcome = { length: f.length, first: f[0], last: f[f.length - 1] }),
              (e) => (outcome = { error: String(e) }),
            );
          const t0 = performance.now();
          while (outcome === null && performance.now() - t0 < 10000) {
            collect();
            await new Promise((resolve) => setTimeout(resolve, 1));
          }
          outcomes.push(outcome ?? 'still waiting after 10 s');
        }
        return outcomes;
      });
      const bf16 = (word) => new Float32Array(new Uint32Array([word << 16]).buffer)[0];
      const want = { length: count, first: bf16(words[0]), last: bf16(words[count - 1]) };
      assert.deepEqual(outcomes, Array(6).fill(want));
    });
  },
  { args: ['--js-flags=--expose-gc'] },
);
