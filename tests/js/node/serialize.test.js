// serialize: the core writer's bytes equal the reference's; round trips.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SafeTensors, SafeTensorsError, serialize, DTYPES } from 'safetensors-nano';
import { referenceFiles } from '../lib/env.js';

const ref = referenceFiles();

test('re-serializing the reference file gives the same bytes (every dtype it writes, odd names)', {
  skip: ref.skip,
}, async () => {
  const st = SafeTensors.fromBytes(ref.mixed);
  const input = {};
  for (const t of st.tensors()) input[t.name] = { dtype: t.dtype, shape: t.shape, data: t.bytes() };
  assert.ok(st.length >= 20);
  const out = await serialize(input, st.metadata());
  assert.equal(out.length, ref.mixed.length);
  assert.deepEqual(Buffer.from(out), Buffer.from(ref.mixed));
  // A Map, in another insertion order, gives the same bytes.
  const map = new Map(Object.entries(input).reverse());
  assert.deepEqual(Buffer.from(await serialize(map, st.metadata())), Buffer.from(ref.mixed));
});

test('the worked example of docs/format.md (writing): 163 bytes', async () => {
  const out = await serialize(
    {
      x: { dtype: 'U8', shape: [3], data: Uint8Array.of(1, 2, 3) },
      y: { dtype: 'F32', shape: [2], data: new Float32Array([1, -2]) },
    },
    { format: 'pt' },
  );
  assert.equal(out.length, 163);
  const text = new TextDecoder().decode(out.subarray(8, 8 + 138));
  assert.equal(
    text,
    '{"__metadata__":{"format":"pt"},"y":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"x":{"dtype":"U8","shape":[3],"data_offsets":[8,11]}}',
  );
  assert.equal(new DataView(out.buffer, out.byteOffset).getBigUint64(0, true), 144n);
  assert.deepEqual([...out.subarray(152)], [0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 1, 2, 3]);
});

test('round trip of every dtype through serialize and fromBytes; data aligned for views', async () => {
  const tensors = {};
  const bits = { F4: 4, F6_E2M3: 6, F6_E3M2: 6 };
  for (const [i, d] of DTYPES.entries()) {
    const b = bits[d] ?? (/64$/.test(d) ? 64 : /32$/.test(d) ? 32 : /16$/.test(d) ? 16 : 8);
    const data = new Uint8Array((8 * b) / 8).map((_, k) => (k * 31 + i) & 0xff);
    tensors[`t${i}`] = { dtype: d, shape: [2, 4], data };
  }
  const st = SafeTensors.fromBytes(await serialize(tensors));
  assert.equal(st.metadata(), null);
  assert.equal(st.dataOffset % 8, 0);
  for (const [name, t] of Object.entries(tensors)) {
    const got = st.tensor(name);
    assert.equal(got.dtype, t.dtype);
    assert.deepEqual(got.shape, [2, 4]);
    assert.deepEqual([...got.bytes()], [...t.data]);
    assert.notEqual(got.view(), null, `${t.dtype} view`);
  }
  assert.deepEqual(SafeTensors.fromBytes(await serialize({}, {})).metadata(), {});
  assert.equal(SafeTensors.fromBytes(await serialize({})).length, 0);
});

test('serialize takes any view of the data (a subarray, a DataView, an ArrayBuffer)', async () => {
  const backing = new Uint8Array([9, 9, 1, 2, 3, 4, 9]);
  const want = [1, 2, 3, 4];
  for (const data of [
    backing.subarray(2, 6),
    new DataView(backing.buffer, 2, 4),
    backing.slice(2, 6).buffer,
    new Int16Array(backing.slice(2, 6).buffer),
  ]) {
    const st = SafeTensors.fromBytes(await serialize({ t: { dtype: 'I16', shape: [2], data } }));
    assert.deepEqual([...st.tensor('t').bytes()], want);
  }
});

test('serialize errors name the tensor (as rejected promises)', async () => {
  const err = (fn, kind, tensor) =>
    assert.rejects(fn, (e) => {
      assert.ok(e instanceof SafeTensorsError, String(e));
      assert.equal(e.kind, kind, e.message);
      assert.equal(e.tensor, tensor);
      return true;
    });
  await err(
    () =>
      serialize({
        a: { dtype: 'U8', shape: [1], data: new Uint8Array(1) },
        b: { dtype: 'F32', shape: [2], data: new Uint8Array(7) },
      }),
    'DataLengthMismatch',
    'b',
  );
  await err(
    () => serialize({ __metadata__: { dtype: 'U8', shape: [1], data: new Uint8Array(1) } }),
    'ReservedName',
    '__metadata__',
  );
  await err(() => serialize({ q: { dtype: 'F4', shape: [3], data: new Uint8Array(2) } }), 'MisalignedSlice', 'q');
  await err(() => serialize({ q: { dtype: 'F99', shape: [1], data: new Uint8Array(1) } }), 'UnknownDtype', 'q');
  await err(() => serialize({ q: { dtype: 'U8', shape: [-1], data: new Uint8Array(1) } }), 'InvalidArgument', 'q');
  await err(() => serialize({ q: { dtype: 'U8', shape: [1], data: [1] } }), 'InvalidArgument', 'q');
  await assert.rejects(
    () => serialize({}, { k: 1 }),
    (e) => e.kind === 'InvalidArgument',
  );
});

test('serialize reads its inputs at the call once the writer is loaded', async () => {
  await serialize({}); // the writer is loaded now
  const data = Uint8Array.of(1, 2, 3, 4);
  const pending = serialize({ t: { dtype: 'U8', shape: [4], data } });
  data.fill(9); // after the call: not in the file
  const st = SafeTensors.fromBytes(await pending);
  assert.deepEqual([...st.tensor('t').bytes()], [1, 2, 3, 4]);
});

test('a writer module that cannot load rejects with WriterUnavailable; reading still works', async () => {
  // A copy of the installed package without the writer's .wasm (a separate
  // module instance: its own import path).
  const installed = dirname(createRequire(import.meta.url).resolve('safetensors-nano/package.json'));
  const copy = join(mkdtempSync(join(tmpdir(), 'stn-nowriter-')), 'safetensors-nano');
  cpSync(installed, copy, { recursive: true });
  rmSync(join(copy, 'safetensors_nano_writer_bg.wasm'));
  const pkg = await import(pathToFileURL(join(copy, 'node.js')).href);
  const file = await serialize({ t: { dtype: 'U8', shape: [1], data: Uint8Array.of(7) } });
  assert.deepEqual(pkg.SafeTensors.fromBytes(file).names(), ['t']);
  for (let attempt = 0; attempt < 2; attempt++) {
    await assert.rejects(pkg.serialize({}), (e) => {
      assert.ok(e instanceof pkg.SafeTensorsError, String(e));
      assert.equal(e.kind, 'WriterUnavailable');
      assert.ok(e.cause, 'the load error is kept as the cause');
      return true;
    });
  }
  rmSync(dirname(copy), { recursive: true, force: true });
});
