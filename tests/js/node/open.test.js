// fromBytes / fromHeader: the description of a header, zero-copy views,
// errors with kind, offset and tensor, and the wasm-memory bound.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { SafeTensors, SafeTensorsError, DTYPES, DTYPE_INFO, decodeFloat32, wasmMemoryBytes } from 'safetensors-nano';
import { rawFile, tensorFile } from '../lib/format.js';

const f32 = (...v) => new Float32Array(v);

function sample({ pad = 0 } = {}) {
  return tensorFile(
    [
      ['w', 'F32', [2, 2], f32(1, 2, 3, 4)],
      ['b', 'F32', [2], f32(-1, 0.5)],
      ['ids', 'I64', [3], new BigInt64Array([1n, -2n, 3n ** 30n])],
      ['mask', 'BOOL', [3], Uint8Array.of(1, 0, 1)],
    ],
    { metadata: { format: 'pt', note: 'caf\u00e9' }, pad },
  );
}

test('fromBytes describes the header: names in offset order, shapes, offsets, sizes', () => {
  const file = sample();
  const st = SafeTensors.fromBytes(file);
  assert.deepEqual(st.names(), ['w', 'b', 'ids', 'mask']);
  assert.equal(st.length, 4);
  const n = Number(new DataView(file.buffer).getBigUint64(0, true));
  assert.equal(st.headerSize, n);
  assert.equal(st.dataOffset, n + 8);
  assert.equal(st.fileSize, file.length);
  assert.equal(st.bytesRead, file.length);
  assert.deepEqual(st.metadata(), { format: 'pt', note: 'caf\u00e9' });
  const ids = st.tensor('ids');
  assert.equal(ids.name, 'ids');
  assert.equal(ids.dtype, 'I64');
  assert.deepEqual(ids.shape, [3]);
  assert.deepEqual(ids.dataOffsets, [24, 48]);
  assert.equal(ids.byteOffset, n + 8 + 24);
  assert.equal(ids.byteLength, 24);
  assert.equal(ids.elementCount, 3);
  assert.equal(st.tensor('nope'), undefined);
  assert.deepEqual(
    st.tensors().map((t) => t.name),
    st.names(),
  );
  assert.deepEqual(st.parameterCount(), { total: 12, byDtype: { F32: 6, I64: 3, BOOL: 3 } });
});

test('fromBytes takes an ArrayBuffer, a Uint8Array at an offset, or any view', () => {
  const file = sample();
  const big = new Uint8Array(file.length + 13);
  big.set(file, 13);
  const inner = big.subarray(13);
  for (const input of [file.buffer, inner, new DataView(big.buffer, 13)]) {
    const st = SafeTensors.fromBytes(input);
    assert.deepEqual([...st.tensor('b').bytes()], [...new Uint8Array(f32(-1, 0.5).buffer)]);
  }
});

test('fromBytes on shared memory: the header is read from a private copy, tensors stay views', () => {
  const file = sample();
  const shared = new Uint8Array(new SharedArrayBuffer(file.length));
  shared.set(file);
  const st = SafeTensors.fromBytes(shared.buffer);
  assert.deepEqual(st.names(), ['w', 'b', 'ids', 'mask']);
  // Another thread rewriting the header later changes nothing described.
  shared.fill(0x20, 8, st.dataOffset);
  assert.deepEqual(st.tensor('w').shape, [2, 2]);
  const w = st.tensor('w').bytes();
  assert.equal(w.buffer, shared.buffer);
  assert.deepEqual([...new Float32Array(w.slice().buffer)], [1, 2, 3, 4]);
});

test('bytes() and view() are zero-copy views of the caller buffer', () => {
  const file = tensorFile(
    [
      ['w', 'F32', [2, 2], f32(1, 2, 3, 4)],
      ['ids', 'I64', [3], new BigInt64Array([1n, -2n, 3n ** 30n])],
      ['mask', 'BOOL', [3], Uint8Array.of(1, 0, 1)],
    ],
    { align: 8 },
  );
  const st = SafeTensors.fromBytes(file);
  const w = st.tensor('w');
  const bytes = w.bytes();
  assert.equal(bytes.buffer, file.buffer);
  assert.equal(bytes.byteOffset, w.byteOffset);
  const view = w.view();
  assert.ok(view instanceof Float32Array);
  assert.equal(view.buffer, file.buffer);
  assert.deepEqual([...view], [1, 2, 3, 4]);
  file[w.byteOffset + 3] ^= 0x80; // flip the sign of w[0] in the caller's buffer
  assert.equal(view[0], -1);
  const ids = st.tensor('ids').view();
  assert.ok(ids instanceof BigInt64Array);
  assert.deepEqual([...ids], [1n, -2n, 3n ** 30n]);
  assert.ok(st.tensor('mask').view() instanceof Uint8Array);
});

test('view() is null where the data is not aligned for the typed array; bytes() still works', () => {
  // Header padded to an odd length: F32 data starts at an odd address.
  for (const pad of [0, 1, 2, 3, 4, 5, 6, 7]) {
    const file = sample({ pad });
    const st = SafeTensors.fromBytes(file);
    const w = st.tensor('w');
    const aligned = w.byteOffset % 4 === 0;
    assert.equal(w.view() === null, !aligned, `pad ${pad}`);
    assert.deepEqual([...new Float32Array(w.bytes().slice().buffer)], [1, 2, 3, 4]);
    assert.equal(st.tensor('ids').view() === null, st.tensor('ids').byteOffset % 8 !== 0);
    assert.ok(st.tensor('mask').view() instanceof Uint8Array);
  }
});

test('view() types for every dtype (Float16Array where the runtime has it)', () => {
  const expect = {
    BOOL: Uint8Array,
    F4: Uint8Array,
    F6_E2M3: Uint8Array,
    F6_E3M2: Uint8Array,
    U8: Uint8Array,
    I8: Int8Array,
    F8_E5M2: Uint8Array,
    F8_E4M3: Uint8Array,
    F8_E8M0: Uint8Array,
    F8_E4M3FNUZ: Uint8Array,
    F8_E5M2FNUZ: Uint8Array,
    I16: Int16Array,
    U16: Uint16Array,
    F16: globalThis.Float16Array ?? Uint16Array,
    BF16: Uint16Array,
    I32: Int32Array,
    U32: Uint32Array,
    F32: Float32Array,
    C64: Float32Array,
    F64: Float64Array,
    I64: BigInt64Array,
    U64: BigUint64Array,
  };
  assert.deepEqual(DTYPES, Object.keys(expect));
  // 4 elements of each, 64-bit dtypes first so every tensor is aligned.
  const bits = { F4: 4, F6_E2M3: 6, F6_E3M2: 6 };
  const entries = [...DTYPES].reverse().map((d) => {
    const size = ((bits[d] ?? (/64$/.test(d) ? 64 : /32$/.test(d) ? 32 : /16$/.test(d) ? 16 : 8)) * 4) / 8;
    return [`t_${d}`, d, [4], new Uint8Array(size).map((_, i) => i + 1)];
  });
  const st = SafeTensors.fromBytes(tensorFile(entries, { align: 8 }));
  assert.equal(st.length, 22);
  for (const t of st.tensors()) {
    const v = t.view();
    assert.ok(v instanceof expect[t.dtype], `${t.dtype}: ${v.constructor.name}`);
    assert.equal(v.byteLength, t.byteLength);
    if (t.dtype === 'C64') assert.equal(v.length, 8); // re, im interleaved
    // DTYPE_INFO says the same: the view's type, its alignment, the bits.
    const info = DTYPE_INFO[t.dtype];
    assert.equal(info.view, v.constructor.name, t.dtype);
    assert.equal(info.align, v.BYTES_PER_ELEMENT, t.dtype);
    assert.equal(info.bits, (t.byteLength * 8) / t.elementCount, t.dtype);
  }
});

test('DTYPE_INFO: frozen facts for each dtype, in DTYPES order; kind says what decodes', () => {
  assert.ok(Object.isFrozen(DTYPE_INFO));
  assert.deepEqual(Object.keys(DTYPE_INFO), [...DTYPES]);
  assert.equal(DTYPE_INFO.constructor, undefined); // only dtype names are keys
  const kinds = { bool: [], uint: [], int: [], float: [], complex: [] };
  DTYPES.forEach((d, i) => {
    const info = DTYPE_INFO[d];
    assert.ok(Object.isFrozen(info));
    assert.deepEqual(Object.keys(info), ['name', 'index', 'bits', 'align', 'kind', 'view']);
    assert.equal(info.name, d);
    assert.equal(info.index, i);
    kinds[info.kind].push(d);
  });
  assert.deepEqual(kinds, {
    bool: ['BOOL'],
    uint: ['U8', 'U16', 'U32', 'U64'],
    int: ['I8', 'I16', 'I32', 'I64'],
    float: [
      'F4',
      'F6_E2M3',
      'F6_E3M2',
      'F8_E5M2',
      'F8_E4M3',
      'F8_E8M0',
      'F8_E4M3FNUZ',
      'F8_E5M2FNUZ',
      'F16',
      'BF16',
      'F32',
      'F64',
    ],
    complex: ['C64'],
  });
  // decodeFloat32 decodes exactly the float kind.
  for (const d of DTYPES) {
    const bytes = new Uint8Array(DTYPE_INFO[d].bits); // 8 elements
    if (DTYPE_INFO[d].kind === 'float') assert.equal(decodeFloat32(d, bytes).length, 8, d);
    else
      assert.throws(
        () => decodeFloat32(d, bytes),
        (e) => e.kind === 'DtypeMismatch',
        d,
      );
  }
});

test('names and metadata with JSON escapes and non-ASCII decode exactly', () => {
  const names = ['A\u00e9\u4e2d', 'emoji \u{1F600}', 'tab\tnl\nq"b\\', '/slash', ''];
  const header =
    '{"__metadata__":{"k\\u00e9y":"v\\ud83d\\ude00","x":"\\"quoted\\""},' +
    names
      .map(
        (n, i) =>
          `${JSON.stringify(n).replace('A', '\\u0041')}:{"dtype":"\\u0055\\u0038","shape":[1],"data_offsets":[${i},${i + 1}]}`,
      )
      .join(',') +
    '}';
  const st = SafeTensors.fromBytes(rawFile(header, Uint8Array.of(1, 2, 3, 4, 5)));
  assert.deepEqual(st.names(), names);
  assert.deepEqual(st.metadata(), { 'k\u00e9y': 'v\u{1F600}', x: '"quoted"' });
  for (const [i, n] of names.entries()) {
    assert.equal(st.tensor(n).dtype, 'U8');
    assert.deepEqual([...st.tensor(n).bytes()], [i + 1]);
  }
});

test('shapes read the same in every header layout, and after the caller changes its bytes', () => {
  const entry = (name, shape, begin, end) =>
    `${JSON.stringify(name)}:{"dtype":"U8","shape":${shape},"data_offsets":[${begin},${end}]}`;
  const want = { a: [2, 3], b: [], c: [1, 0, 4], d: [1] };
  const spaced = `{ ${entry('a', '[ 2 ,\n3 ]', 0, 6)} , ${entry('b', '[ ]', 6, 7)}, ${entry('c', '[1,0,4]', 7, 7)},${entry('d', '[1]', 7, 8)}}`;
  // Not all ASCII: shapes are read at open, from the bytes.
  const wide = spaced.replace('{ ', '{"__metadata__":{"\u00e9":"é"}, ');
  // A shape across the 32 KiB block boundary of the name decoder.
  const padTo = (n) =>
    `{"__metadata__":{"p":"${'x'.repeat(n)}"},${entry('a', '[2,3]', 0, 6)},${entry('b', '[]', 6, 7)},${entry('c', '[1,0,4]', 7, 7)},${entry('d', '[1]', 7, 8)}}`;
  const at = padTo(0).indexOf('[2,3]');
  const crossing = padTo(32768 - at - 2);
  assert.equal(crossing.indexOf('[2,3]') + 2, 32768);
  // Listed out of offset order (names() gives offset order).
  const reordered = `{${entry('d', '[1]', 7, 8)},${entry('c', '[1,0,4]', 7, 7)},${entry('b', '[]', 6, 7)},${entry('a', '[2,3]', 0, 6)}}`;
  for (const header of [spaced, wide, crossing, reordered]) {
    const file = rawFile(header, new Uint8Array(8));
    const st = SafeTensors.fromBytes(file);
    assert.deepEqual(st.names(), ['a', 'b', 'c', 'd']);
    assert.deepEqual(st.parameterCount(), { total: 8, byDtype: { U8: 8 } });
    // The caller reuses its buffer: the description does not change.
    file.fill(0x39, 8, file.length - 8);
    for (const [name, shape] of Object.entries(want))
      assert.deepEqual(st.tensor(name).shape, shape, `${name} in ${header.slice(0, 40)}`);
    // Each call gives a new array.
    st.tensor('a').shape.push(7);
    assert.deepEqual(st.tensor('a').shape, [2, 3]);
    // Each begins where the one before it in offset order ends.
    assert.deepEqual(
      st.tensors().map((t) => [t.dtype, ...t.dataOffsets]),
      [
        ['U8', 0, 6],
        ['U8', 6, 7],
        ['U8', 7, 7],
        ['U8', 7, 8],
      ],
    );
  }
});

test('a shape that whitespace spreads over three 32 KiB blocks reads whole', () => {
  for (const shape of [`[1,${' '.repeat(70000)}2]`, `[${' '.repeat(70000)}1,0]`]) {
    const want = JSON.parse(shape);
    const bytes = want.reduce((a, b) => a * b, 1);
    const header = `{"t":{"dtype":"U8","shape":${shape},"data_offsets":[0,${bytes}]}}`;
    const st = SafeTensors.fromBytes(rawFile(header, new Uint8Array(bytes)));
    assert.deepEqual(st.tensor('t').shape, want);
  }
});

// Runs `fn`; returns its result and how many TextDecoder calls it made.
function countingTextDecoder(fn) {
  const decode = TextDecoder.prototype.decode;
  let calls = 0;
  TextDecoder.prototype.decode = function (...args) {
    calls++;
    return decode.apply(this, args);
  };
  try {
    return [fn(), calls];
  } finally {
    TextDecoder.prototype.decode = decode;
  }
}

test('a header that is not ASCII is decoded once per block, not once per name', () => {
  const entries = [];
  for (let i = 0; i < 2000; i++)
    entries.push(`"\u00e9${i}é":{"dtype":"U8","shape":[1],"data_offsets":[${i},${i + 1}]}`);
  const file = rawFile(`{${entries.join(',')}}`, new Uint8Array(2000));
  const [st, calls] = countingTextDecoder(() => SafeTensors.fromBytes(file));
  assert.equal(st.names()[1999], '\u00e91999\u00e9');
  // One call per block, then one per name that is not in an ASCII block.
  const blocks = Math.ceil(file.length / 32768);
  assert.ok(calls <= blocks + 2000, `${calls} TextDecoder calls for ${blocks} blocks and 2000 names`);
});

test('in Node, an ASCII header becomes text through Buffer, not TextDecoder (the faster way there)', () => {
  const entries = [];
  for (let i = 0; i < 3000; i++) entries.push(`"w.${i}":{"dtype":"U8","shape":[1],"data_offsets":[${i},${i + 1}]}`);
  const file = rawFile(`{${entries.join(',')}}`, new Uint8Array(3000));
  const [st, calls] = countingTextDecoder(() => SafeTensors.fromBytes(file));
  // Three 32 KiB blocks of names and shapes, none through TextDecoder.
  assert.ok(file.length > 2 * 32768);
  assert.equal(calls, 0);
  assert.equal(st.names()[2999], 'w.2999');
  assert.deepEqual(st.tensor('w.2999').shape, [1]);
  assert.equal(st.tensors().length, 3000);
});

// Opens `header` with fromHeader from the start of a large buffer; returns
// the file and a weak reference to the buffer (nothing else holds it).
function openFromLargeBuffer(header) {
  const big = new Uint8Array(8 << 20);
  const file = rawFile(header, new Uint8Array(2));
  big.set(file);
  return [SafeTensors.fromHeader(big.subarray(0, file.length - 2), file.length), new WeakRef(big.buffer)];
}

test('an opened file keeps no reference to the header bytes it was given', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  // ASCII (shapes read later from the decoded text), and not (read at open).
  const opened = [
    openFromLargeBuffer('{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}'),
    openFromLargeBuffer('{"\u00e9":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}'),
  ];
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  for (const [i, [, ref]] of opened.entries()) assert.equal(ref.deref(), undefined, `header ${i}`);
  assert.deepEqual(
    opened.map(([f]) => f.tensor(f.names()[0]).shape),
    [[2], [2]],
  );
});

test('metadata: null, absent, empty, and a key named __proto__', () => {
  assert.equal(SafeTensors.fromBytes(rawFile('{}')).metadata(), null);
  assert.equal(SafeTensors.fromBytes(rawFile('{"__metadata__":null}')).metadata(), null);
  assert.deepEqual(SafeTensors.fromBytes(rawFile('{"__metadata__":{}}')).metadata(), {});
  const m = SafeTensors.fromBytes(rawFile('{"__metadata__":{"__proto__":"x","constructor":"y"}}')).metadata();
  assert.equal(Object.getPrototypeOf(m), Object.prototype);
  assert.deepEqual(Object.entries(m), [
    ['__proto__', 'x'],
    ['constructor', 'y'],
  ]);
  // Callers get a copy.
  m.extra = '1';
  assert.equal(SafeTensors.fromBytes(rawFile('{"__metadata__":{}}')).metadata().extra, undefined);
});

test('a header with far more metadata pairs than tensors (table grows once)', () => {
  const meta = {};
  for (let i = 0; i < 5000; i++) meta[`k${i}`] = `${i}`;
  const st = SafeTensors.fromBytes(tensorFile([['t', 'U8', [1], Uint8Array.of(9)]], { metadata: meta }));
  assert.equal(Object.keys(st.metadata()).length, 5000);
  assert.equal(st.metadata().k4999, '4999');
  assert.deepEqual([...st.tensor('t').bytes()], [9]);
});

function throws(fn, want) {
  let err;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof SafeTensorsError, `expected a SafeTensorsError, got ${err}`);
  assert.ok(err instanceof Error);
  assert.equal(err.name, 'SafeTensorsError');
  for (const [k, v] of Object.entries(want)) assert.deepEqual(err[k], v, `${k} of ${err.message}`);
  return err;
}

test('errors carry kind, header offset and tensor name', () => {
  const ok =
    '{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}';
  const data = new Uint8Array(6);
  throws(() => SafeTensors.fromBytes(new Uint8Array(5)), { kind: 'HeaderTooSmall', offset: null, tensor: null });
  const huge = new Uint8Array(16);
  new DataView(huge.buffer).setBigUint64(0, 100_000_001n, true);
  throws(() => SafeTensors.fromBytes(huge), { kind: 'HeaderTooLarge' });
  throws(() => SafeTensors.fromBytes(rawFile(ok, data).subarray(0, 50)), { kind: 'InvalidHeaderLength' });
  throws(() => SafeTensors.fromBytes(rawFile(ok, data.subarray(0, 5))), {
    kind: 'MetadataIncompleteBuffer',
    tensor: null,
  });
  const e = throws(() => SafeTensors.fromBytes(rawFile(ok.replace('F32', 'F33'), data)), {
    kind: 'UnknownDtype',
    offset: ok.indexOf('F32') - 1,
    tensor: 'b',
  });
  assert.match(e.message, /unknown dtype at header byte \d+ \(tensor "b"\)/);
  throws(() => SafeTensors.fromBytes(rawFile(ok.replace('[2,6]', '[3,7]'), new Uint8Array(7))), {
    kind: 'InvalidOffset',
    tensor: 'b',
  });
  throws(() => SafeTensors.fromBytes(rawFile(ok.replace('"b"', '"a"'), data)), {
    kind: 'DuplicateTensorName',
    tensor: 'a',
  });
  throws(() => SafeTensors.fromBytes(rawFile(ok.replace('"shape":[1]', '"shape":[2]'), data)), {
    kind: 'TensorInvalidInfo',
    tensor: 'b',
  });
  const trailing = '{"\\u00e9":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},}';
  throws(() => SafeTensors.fromBytes(rawFile(trailing, data)), { kind: 'UnexpectedByte', offset: trailing.length - 1 });
  throws(() => SafeTensors.fromBytes(rawFile('{"x\\ud800":{}}')), { kind: 'LoneSurrogate' });
  const bad = rawFile(ok, data);
  bad[8 + 3] = 0xff;
  throws(() => SafeTensors.fromBytes(bad), { kind: 'InvalidUtf8', offset: 3 });
});

test('fromHeader opens from the header bytes and a file size; tensors have no data', async () => {
  const file = sample();
  const st = SafeTensors.fromHeader(file.subarray(0, SafeTensors.fromBytes(file).dataOffset), file.length);
  assert.deepEqual(st.names(), ['w', 'b', 'ids', 'mask']);
  assert.equal(st.bytesRead, 0);
  throws(() => st.tensor('w').bytes(), { kind: 'NotInMemory', tensor: 'w' });
  await assert.rejects(st.tensor('w').read(), (e) => e.kind === 'NoSource');
  throws(() => SafeTensors.fromHeader(file.subarray(0, 20), file.length), { kind: 'HeaderIncomplete' });
  throws(() => SafeTensors.fromHeader(file.subarray(0, st.dataOffset), BigInt(file.length) + 1n), {
    kind: 'MetadataIncompleteBuffer',
  });
  assert.equal(SafeTensors.fromHeader(file.subarray(0, st.dataOffset), BigInt(file.length)).fileSize, file.length);
  // The size must be a whole, non-negative number (or a bigint below 2^64).
  for (const size of [undefined, NaN, 67.5, -1, 2 ** 53, '64', -1n, 2n ** 64n]) {
    assert.throws(() => SafeTensors.fromHeader(file.subarray(0, st.dataOffset), size), TypeError, String(size));
  }
});

test('offsets and sizes beyond 4 GiB are exact; beyond 2^53 they are an OffsetTooLarge error', () => {
  const hdr = (end) => rawFile(`{"big":{"dtype":"U8","shape":[${end}],"data_offsets":[0,${end}]}}`);
  const five = 5n * 2n ** 30n + 3n;
  const h = hdr(five);
  const st = SafeTensors.fromHeader(h, BigInt(h.length) + five);
  const t = st.tensor('big');
  assert.equal(t.byteLength, Number(five));
  assert.deepEqual(t.shape, [Number(five)]);
  assert.equal(st.fileSize, h.length + Number(five));
  const over = 2n ** 53n;
  const h2 = hdr(over);
  throws(() => SafeTensors.fromHeader(h2, BigInt(h2.length) + over), { kind: 'OffsetTooLarge', tensor: 'big' });
  // A dimension above 2^53 in an empty tensor.
  const h3 = rawFile(`{"e":{"dtype":"F32","shape":[0,${2n ** 60n}],"data_offsets":[0,0]}}`);
  throws(() => SafeTensors.fromBytes(h3), { kind: 'DimensionTooLarge', tensor: 'e' });
});

test('opening a large in-memory file brings only the header into wasm memory', () => {
  const n = 256 * 2 ** 20;
  const header = rawFile(`{"w":{"dtype":"F32","shape":[${n / 4}],"data_offsets":[0,${n}]}}`);
  const before = wasmMemoryBytes();
  const big = new Uint8Array(header.length + n);
  big.set(header);
  const st = SafeTensors.fromBytes(big);
  assert.equal(st.tensor('w').byteLength, n);
  assert.ok(wasmMemoryBytes() - before < 2 ** 20, `wasm memory grew by ${wasmMemoryBytes() - before}`);
});
