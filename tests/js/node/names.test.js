// Tensor names (and metadata keys and values) are any valid Unicode text:
// a leading U+FEFF, escapes of every kind, astral characters, all come
// back exactly through names(), tensor(), metadata(), errors and every
// opener; serialize writes them back; names equal once unescaped are
// refused as the core refuses them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SafeTensors, SafeTensorsError, openSharded, serialize } from 'safetensors-nano';
import { rawFile } from '../lib/format.js';
import { rng } from '../lib/rng.mjs';

const enc = new TextEncoder();
const BOM = '\ufeff';

// A tensor entry's JSON (after the key) for a U8 tensor of `n` bytes at `at`.
const entry = (at, n = 1) => `{"dtype":"U8","shape":[${n}],"data_offsets":[${at},${at + n}]}`;

// A file of one-byte U8 tensors, keys written exactly as `rawKeys` (JSON
// string contents: escapes as given), data byte i = i.
function fileOf(rawKeys, { metadata = '' } = {}) {
  const parts = rawKeys.map((k, i) => `"${k}":${entry(i)}`);
  if (metadata !== '') parts.push(`"__metadata__":{${metadata}}`);
  return rawFile(
    `{${parts.join(',')}}`,
    Uint8Array.from(rawKeys, (_, i) => i),
  );
}

// Every opener over the same bytes: fromBytes, fromBlob, fromHeader.
async function openAll(file) {
  return [
    ['fromBytes', SafeTensors.fromBytes(file)],
    ['fromBlob', await SafeTensors.fromBlob(new Blob([file]))],
    ['fromHeader', SafeTensors.fromHeader(file, file.length)],
  ];
}

// The names come back in order, each finds its tensor (by data byte).
function assertNames(st, expected, how) {
  assert.deepEqual(st.names(), expected, how);
  for (const [i, name] of expected.entries()) {
    const t = st.tensor(name);
    assert.ok(t !== undefined, `${how}: tensor(${JSON.stringify(name)})`);
    assert.equal(t.name, name, how);
    assert.deepEqual(t.dataOffsets, [i, i + 1], how);
  }
}

test('a name with a leading U+FEFF keeps it, raw or escaped, through every opener', async () => {
  const names = [`${BOM}w`, BOM, `${BOM}${BOM}x`, `a${BOM}`];
  for (const keys of [names, ['\\ufeffw', '\\uFEFF', '\\ufeff\ufeffx', 'a\\ufeff']]) {
    for (const [how, st] of await openAll(fileOf(keys, { metadata: `"${BOM}k":"${BOM}v"` }))) {
      assertNames(st, names, how);
      assert.deepEqual(st.metadata(), { [`${BOM}k`]: `${BOM}v` }, how);
      assert.equal(st.tensor('w'), undefined, how);
    }
  }
});

test('escapes of every kind, astral characters and raw UTF-8 decode to the same names', async () => {
  const cases = [
    ['\\"', '"'],
    ['\\\\', '\\'],
    ['\\/', '/'],
    ['\\b\\f\\n\\r\\t', '\b\f\n\r\t'],
    ['\\u0000', '\0'],
    ['\\u001f\\u007F', '\x1f\x7f'],
    ['\\u00e9', '\u00e9'],
    ['caf\u00e9', 'caf\u00e9'],
    ['\\uD83D\\uDE00', '\u{1f600}'],
    ['\\ud83d\\ude00 raw \u{1f600}', '\u{1f600} raw \u{1f600}'],
    ['\u{10ffff}\\udbff\\udfff', '\u{10ffff}\u{10ffff}'],
    ['\u2028\\u2029', '\u2028\u2029'],
    ['\uffff\\ufffe', '\uffff\ufffe'],
    ['', ''],
    ['\u4e2d\u6587.\u0648\u0632\u0646', '\u4e2d\u6587.\u0648\u0632\u0646'],
    ['a\\\\u0062', 'a\\u0062'],
  ];
  const file = fileOf(
    cases.map(([raw]) => raw),
    { metadata: '"\\ud83d\\ude00\\n":"\\"\\u00e9\\""' },
  );
  for (const [how, st] of await openAll(file)) {
    assertNames(
      st,
      cases.map(([, name]) => name),
      how,
    );
    assert.deepEqual(st.metadata(), { '\u{1f600}\n': '"\u00e9"' }, how);
  }
});

test('names equal once unescaped are refused (DuplicateTensorName, DuplicateMetadataKey)', async () => {
  const dups = [
    ['a', '\\u0061'],
    [`${BOM}b`, '\\ufeffb'],
    ['\u{1f600}', '\\ud83d\\ude00'],
    ['\\/', '/'],
    ['\\n', '\\u000a'],
  ];
  for (const [first, second] of dups) {
    const file = fileOf(['x', first, second]);
    const name = JSON.parse(`"${first}"`);
    for (const open of [
      () => SafeTensors.fromBytes(file),
      () => SafeTensors.fromBlob(new Blob([file])),
      () => SafeTensors.fromHeader(file, file.length),
    ]) {
      await assert.rejects(
        async () => open(),
        (e) => {
          assert.ok(e instanceof SafeTensorsError);
          assert.equal(e.kind, 'DuplicateTensorName');
          assert.equal(e.tensor, name);
          return true;
        },
      );
    }
  }
  const meta = fileOf(['x'], { metadata: `"${BOM}k":"1","\\ufeffk":"2"` });
  assert.throws(
    () => SafeTensors.fromBytes(meta),
    (e) => e.kind === 'DuplicateMetadataKey',
  );
});

test('an error names its tensor with the leading U+FEFF kept', () => {
  const file = rawFile(`{"${BOM}t":{"dtype":"F33","shape":[],"data_offsets":[0,0]}}`);
  assert.throws(
    () => SafeTensors.fromBytes(file),
    (e) => e.kind === 'UnknownDtype' && e.tensor === `${BOM}t`,
  );
});

test('serialize then fromBytes: every valid name, key and value comes back', async () => {
  const names = [
    `${BOM}lead`,
    BOM,
    '',
    '"quoted"',
    'back\\slash',
    '\0\x01\x1f\x7f',
    '\u2028\u2029',
    '\u{1f600}\u{10ffff}',
    '\uffff\ufffe',
    'caf\u00e9',
    '__metadata__x',
  ];
  const tensors = Object.fromEntries(names.map((n, i) => [n, { dtype: 'U8', shape: [1], data: Uint8Array.of(i) }]));
  const metadata = { [`${BOM}k`]: `${BOM}v`, '\u{1f600}': '\n"\\' };
  const st = SafeTensors.fromBytes(await serialize(tensors, metadata));
  assert.deepEqual(new Set(st.names()), new Set(names));
  for (const [i, n] of names.entries()) assert.deepEqual([...st.tensor(n).bytes()], [i], JSON.stringify(n));
  assert.deepEqual(st.metadata(), metadata);
});

test('serialize refuses a lone surrogate (it has no UTF-8) rather than write U+FFFD', async () => {
  for (const bad of ['\ud800', 'a\udc00', '\ude00\ud83d', 'x\ud83d']) {
    const kinds = [];
    for (const [tensors, metadata] of [
      [{ [bad]: { dtype: 'U8', shape: [0], data: new Uint8Array(0) } }, undefined],
      [{}, { [bad]: 'v' }],
      [{}, { k: bad }],
    ]) {
      await assert.rejects(serialize(tensors, metadata), (e) => {
        kinds.push(e.kind);
        return e instanceof SafeTensorsError;
      });
    }
    assert.deepEqual(kinds, ['InvalidArgument', 'InvalidArgument', 'InvalidArgument'], JSON.stringify(bad));
  }
  // A well-formed pair is a character.
  const st = SafeTensors.fromBytes(
    await serialize({ '\ud83d\ude00': { dtype: 'U8', shape: [0], data: new Uint8Array(0) } }),
  );
  assert.deepEqual(st.names(), ['\u{1f600}']);
});

// A random valid name: code points of every kind (ASCII, controls, quotes,
// the BOM, BMP, astral), never a lone surrogate.
function randomName(r) {
  const pools = [
    () => 0x20 + Math.floor(r.next() * 0x5f),
    () => Math.floor(r.next() * 0x20),
    () => [0x22, 0x5c, 0x2f, 0xfeff, 0x7f][Math.floor(r.next() * 5)],
    () => 0x80 + Math.floor(r.next() * 0x780),
    () => {
      const c = 0x800 + Math.floor(r.next() * (0x10000 - 0x800 - 0x800));
      return c >= 0xd800 ? c + 0x800 : c; // past the surrogates
    },
    () => 0x10000 + Math.floor(r.next() * 0x100000),
  ];
  const n = Math.floor(r.next() * 12);
  let s = r.next() < 0.2 ? BOM : '';
  for (let i = 0; i < n; i++) s += String.fromCodePoint(pools[Math.floor(r.next() * pools.length)]());
  return s;
}

// The JSON string contents of `s`, each character escaped or raw at random
// (raw only where JSON allows it).
function randomlyEscaped(s, r) {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    const mustEscape = c < 0x20 || ch === '"' || ch === '\\';
    if (!mustEscape && r.next() < 0.5) out += ch;
    else if (c > 0xffff)
      out += ch
        .split('')
        .map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, '0')}`)
        .join('');
    else if (r.next() < 0.5 && JSON.stringify(ch).length === 4) out += JSON.stringify(ch).slice(1, -1);
    else {
      const hex = c.toString(16).padStart(4, '0');
      out += `\\u${r.next() < 0.5 ? hex : hex.toUpperCase()}`;
    }
  }
  return out;
}

test('random valid names, randomly escaped, in headers over many 32 KiB blocks: all come back', async () => {
  const r = rng(18);
  for (let round = 0; round < 4; round++) {
    const seen = new Set();
    const names = [];
    while (names.length < 1500) {
      const name = randomName(r);
      if (name === '__metadata__' || seen.has(name)) continue;
      seen.add(name);
      names.push(name);
    }
    const file = fileOf(names.map((n) => randomlyEscaped(n, r)));
    for (const [how, st] of await openAll(file)) assertNames(st, names, `round ${round} ${how}`);
    // And back through the writer.
    const tensors = new Map(names.map((n, i) => [n, { dtype: 'U8', shape: [1], data: Uint8Array.of(i & 255) }]));
    const again = SafeTensors.fromBytes(await serialize(tensors));
    assert.deepEqual(new Set(again.names()), seen);
    for (const [i, n] of names.entries()) assert.equal(again.tensor(n).bytes()[0], i & 255);
  }
});

test('a name starting exactly at a 32 KiB block of the header keeps its U+FEFF', async () => {
  // Names are decoded a 32 KiB block of header text at a time: put a
  // BOM-leading name (raw, then escaped) at the start of the second block,
  // and around it.
  for (const [name, raw] of [
    [`${BOM}edge`, `${BOM}edge`],
    [`${BOM}esc`, '\\ufeffesc'],
    [`a${BOM}\u{1f600}b`, `a${BOM}\u{1f600}b`],
  ]) {
    for (const shift of [0, -1, -2, -3, -5, 1]) {
      const filler = [];
      let text = '{';
      while (text.length < 32768 - 200) {
        text += `"f${filler.length}":${entry(filler.length)},`;
        filler.push(`f${filler.length}`);
      }
      // A filler name long enough that the edge name's first byte (after
      // its quote) is header byte 32768 + shift.
      const at = filler.length;
      const pad = 'p'.repeat(32768 + shift - text.length - 5 - entry(at).length);
      text += `"${pad}":${entry(at)},"`;
      assert.equal(enc.encode(text).length, 32768 + shift);
      text += `${raw}":${entry(at + 1)}}`;
      const file = rawFile(
        text,
        Uint8Array.from({ length: at + 2 }, (_, i) => i),
      );
      for (const [how, st] of await openAll(file))
        assertNames(st, [...filler, pad, name], `${JSON.stringify(name)} ${shift} ${how}`);
    }
  }
});

test('openSharded: BOM-leading and astral names in the weight_map and the shards agree', async () => {
  const names = [`${BOM}a`, '\u{1f600}', 'b\\"'];
  const shard = rawFile(
    `{${names.map((n, i) => `${JSON.stringify(n)}:${entry(i)}`).join(',')}}`,
    Uint8Array.of(0, 1, 2),
  );
  const index = { weight_map: Object.fromEntries(names.map((n) => [n, 'model.safetensors'])) };
  const file = () => new File([shard], 'model.safetensors');
  // The index as an object, as JSON text (with a leading BOM, as editors
  // write it), and as a File.
  const text = JSON.stringify(index);
  for (const idx of [index, text, BOM + text, new File([BOM + text], 'model.safetensors.index.json')]) {
    const model = await openSharded(idx, [file()]);
    assert.deepEqual(model.names(), names);
    for (const [i, n] of names.entries()) assert.deepEqual(await model.tensor(n).read(), Uint8Array.of(i));
  }
  // A name that differs only by its BOM is a mismatch.
  const wrong = {
    weight_map: { a: 'model.safetensors', '\u{1f600}': 'model.safetensors', 'b\\"': 'model.safetensors' },
  };
  await assert.rejects(openSharded(wrong, [file()]), (e) => e.kind === 'IndexMismatch');
});
