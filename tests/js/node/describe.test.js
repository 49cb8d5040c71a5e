// The JS description of a header against a model of it: seeded random
// headers with escaped, non-ASCII and long names, shapes with whitespace,
// tensors listed out of offset order, metadata anywhere, and padding that
// moves everything across the name decoder's 32 KiB blocks.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SafeTensors } from 'safetensors-nano';
import { rawFile } from '../lib/format.js';
import { rng } from '../lib/rng.mjs';

const PIECES = ['a', 'Z', '.', '_', '0', '\u00e9', '\u4e2d', '\u{1F600}', '"', '\\', '\n', '\t', '/'];
const WHITESPACE = ['', '', '', ' ', '\n', '\t', '  \r\n'];

function generator(seed) {
  const { next } = rng(seed);
  const pick = (list) => list[Math.floor(next() * list.length)];
  const int = (n) => Math.floor(next() * n);
  // A JSON string literal for `text`, with some characters escaped as \u.
  const literal = (text) => {
    let out = '"';
    for (const ch of text) {
      if (next() < 0.2 && ch.length === 1) out += `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
      else out += JSON.stringify(ch).slice(1, -1);
    }
    return `${out}"`;
  };
  const text = (max) => Array.from({ length: int(max) }, () => pick(PIECES)).join('');
  return { next, pick, int, literal, text };
}

function randomFile(seed) {
  const g = generator(seed);
  const names = new Set();
  while (names.size < 1 + g.int(12)) names.add(`${g.text(6)}${names.size}`);
  const tensors = [...names].map((name) => {
    const shape = Array.from({ length: g.int(4) }, () => g.int(4));
    return { name, shape, bytes: shape.reduce((a, b) => a * b, 1) };
  });
  // Offsets in one order, listed in another.
  let at = 0;
  for (const t of tensors) {
    t.offsets = [at, at + t.bytes];
    at += t.bytes;
  }
  const listed = [...tensors].sort(() => g.next() - 0.5);
  // names() order: by offsets, then (for empty tensors at one offset) as listed.
  const order = listed
    .map((t, i) => ({ t, i }))
    .sort((a, b) => a.t.offsets[0] - b.t.offsets[0] || a.t.offsets[1] - b.t.offsets[1] || a.i - b.i)
    .map(({ t }) => t);
  const metadata = g.next() < 0.6 ? {} : null;
  if (metadata) {
    for (let i = g.int(4); i > 0; i--) metadata[`${g.text(4)}${i}`] = g.text(8);
    // Sometimes long enough to carry what follows past a block boundary.
    if (g.next() < 0.4) metadata.pad = 'x'.repeat(20000 + g.int(50000));
  }
  const ws = () => g.pick(WHITESPACE);
  const entries = listed.map((t) => {
    const dims = t.shape.map((d) => `${ws()}${d}${ws()}`).join(',');
    return `${g.literal(t.name)}${ws()}:${ws()}{"dtype":"U8",${ws()}"shape":[${dims || ws()}],"data_offsets":[${t.offsets.join(',')}]}`;
  });
  if (metadata) {
    const pairs = Object.entries(metadata).map(([k, v]) => `${g.literal(k)}:${g.literal(v)}`);
    entries.splice(g.int(entries.length + 1), 0, `"__metadata__":{${pairs.join(',')}}`);
  }
  const file = rawFile(`{${ws()}${entries.join(`,${ws()}`)}${ws()}}`, new Uint8Array(at));
  return { file, tensors: order, metadata };
}

test('random headers read as their model says, before and after the caller reuses its buffer', () => {
  for (let seed = 1; seed <= 300; seed++) {
    const { file, tensors, metadata } = randomFile(seed);
    const st = SafeTensors.fromBytes(file);
    const check = () => {
      assert.deepEqual(
        st.names(),
        tensors.map((t) => t.name),
        `seed ${seed}`,
      );
      for (const t of tensors) {
        const got = st.tensor(t.name);
        assert.deepEqual(
          [got.shape, got.dataOffsets, got.dtype],
          [t.shape, t.offsets, 'U8'],
          `seed ${seed}: ${JSON.stringify(t.name)}`,
        );
      }
      assert.deepEqual(st.metadata(), metadata, `seed ${seed}`);
    };
    check();
    file.fill(0x31, 8, file.length);
    check();
  }
});
