// openSharded reads the index as it arrives: the same result as JSON.parse
// on any index (tricky names, in pieces of any size), typed errors with the
// index byte for malformed ones, and limits on the index's bytes and
// entries that stop the read as soon as they are crossed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { openSharded, SafeTensorsError } from 'safetensors-nano';
import { rng } from '../lib/rng.mjs';

const enc = new TextEncoder();

/** A shard whose tensors are `names` (one U8 each, in order), header written by hand (any name, even __proto__). */
function shard(names) {
  const parts = names.map((n, i) => `${JSON.stringify(n)}:{"dtype":"U8","shape":[1],"data_offsets":[${i},${i + 1}]}`);
  const json = enc.encode(`{${parts.join(',')}}`);
  const out = new Uint8Array(8 + json.length + names.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  return out;
}

/** The shard Files that agree with `index` (as JSON.parse reads it). */
function shardsOf(index) {
  const byFile = new Map();
  for (const [name, file] of Object.entries(index.weight_map)) {
    if (!byFile.has(file)) byFile.set(file, []);
    byFile.get(file).push(name);
  }
  return [...byFile].map(([file, names]) => new File([shard(names)], file));
}

/** A fetch answering every request with `bytes`, in pieces of the sizes `sizes()` gives. */
function piecesFetch(bytes, sizes) {
  return async () => {
    let at = 0;
    const body = new ReadableStream({
      pull(c) {
        if (at >= bytes.length) return c.close();
        const n = Math.max(1, sizes());
        c.enqueue(bytes.slice(at, at + n));
        at += n;
      },
    });
    return new Response(body, { status: 200, headers: { 'Content-Type': 'application/json' } });
  };
}

const CHARS = [
  'a',
  '.',
  '0',
  '7',
  ' ',
  '"',
  '\\',
  '/',
  '\n',
  '\t',
  '\u0000',
  '\u001f',
  '\u007f',
  'é',
  'ß',
  '中',
  '\u2028',
  '😀',
  '\ud83e\udd16',
  '\ufeff',
  '\ufffd',
];

/** A random index of 1 to `most` tricky names, its text written with random spacing and escapes. */
function randomIndex(r, most = 12) {
  const pick = (xs) => xs[Math.floor(r.next() * xs.length)];
  const names = [];
  const n = 1 + Math.floor(r.next() * most);
  for (let i = 0; i < n; i++) {
    const special = ['__proto__', 'constructor', 'toString', '0', '17', '-1', 'model.layers.0.weight', ''];
    if (r.next() < 0.2) names.push(pick(special));
    else names.push(Array.from({ length: 1 + Math.floor(r.next() * 8) }, () => pick(CHARS)).join(''));
  }
  const files = Array.from({ length: 1 + Math.floor(r.next() * 3) }, (_, i) =>
    r.next() < 0.3 ? `shard ${i} é.safetensors` : `model-0000${i + 1}.safetensors`,
  );
  const ws = () => pick(['', '', ' ', '\n  ', '\t', '\r\n']);
  // A string as JSON, each character either plain or as a \u escape (a
  // surrogate pair as two escapes).
  const str = (s) => {
    let out = '"';
    for (const ch of s) {
      const plain = JSON.stringify(ch).slice(1, -1);
      const escaped = Array.from(
        { length: ch.length },
        (_, k) => `\\u${ch.charCodeAt(k).toString(16).padStart(4, '0')}`,
      ).join('');
      out += r.next() < 0.3 ? escaped : plain;
    }
    return `${out}"`;
  };
  const entries = names.map((name) => `${ws()}${str(name)}${ws()}:${ws()}${str(pick(files))}${ws()}`);
  const members = [`${ws()}"weight_map"${ws()}:${ws()}{${entries.join(',')}}${ws()}`];
  if (r.next() < 0.7)
    members.push(
      `${ws()}"metadata"${ws()}:${ws()}{"total_size":${ws()}${new Set(names).size},"format":${str('pt')},"nested":[1,-2.5e3,true,null,{"k":[]}]}`,
    );
  else if (r.next() < 0.5) members.push('"metadata":null');
  if (r.next() < 0.3) members.push(`${str('extra')}:[${str('x')},{}]`);
  if (r.next() < 0.5) members.reverse();
  return `${r.next() < 0.1 ? '\ufeff' : ''}${ws()}{${members.join(',')}}${ws()}`;
}

const same = (a, b) => {
  assert.deepEqual(a, b);
  // (deepEqual ignores key order; JSON.parse's order is kept too.)
  assert.equal(JSON.stringify(a), JSON.stringify(b));
};

test('any index, in pieces of any size, means what JSON.parse makes of it', async () => {
  const r = rng(30);
  let opened = 0;
  for (let i = 0; i < 150; i++) {
    const text = randomIndex(r);
    const expected = JSON.parse(text.replace(/^\ufeff/, ''));
    const shards = shardsOf(expected);
    const bytes = enc.encode(text);
    const sizes = [() => 1, () => 1 + Math.floor(r.next() * 5), () => 64 * 1024];
    const ways = [
      ['text', () => openSharded(text, shards)],
      ['Blob', () => openSharded(new File([bytes], 'model.safetensors.index.json'), shards)],
      ...sizes.map((s, k) => [
        `URL in pieces (${k})`,
        () =>
          openSharded('http://127.0.0.1:9/m/model.safetensors.index.json', shards, {
            fetch: piecesFetch(bytes, s),
            retries: 0,
          }),
      ]),
    ];
    for (const [how, open] of ways) {
      let model;
      try {
        model = await open();
      } catch (e) {
        assert.fail(`${how}: ${JSON.stringify(text)}: ${e.stack}`);
      }
      same(model.index, expected);
      assert.deepEqual(
        model.metadata(),
        expected.metadata === undefined || expected.metadata === null ? null : expected.metadata,
      );
      for (const [name, file] of Object.entries(expected.weight_map)) {
        const t = model.tensor(name);
        assert.ok(t !== undefined, `${how}: ${JSON.stringify(name)} is found`);
        assert.equal(model.shards.find((s) => s.file.tensor(name) !== undefined).name, file);
      }
      opened++;
    }
  }
  assert.equal(opened, 150 * 5);
});

test('an index that is not JSON is IndexInvalid naming the index byte; JSON with another shape is judged as before', async () => {
  const r = rng(7);
  let invalid = 0;
  for (let i = 0; i < 300; i++) {
    let text = randomIndex(r).replace(/^\ufeff/, '');
    // One character dropped, doubled or replaced.
    const at = Math.floor(r.next() * text.length);
    const op = Math.floor(r.next() * 3);
    const ch = ['{', '}', '"', ',', ':', '\\', 'x', '1', ']', '\u0001'][Math.floor(r.next() * 10)];
    text =
      op === 0
        ? text.slice(0, at) + text.slice(at + 1)
        : op === 1
          ? text.slice(0, at) + text[at] + text.slice(at)
          : text.slice(0, at) + ch + text.slice(at + 1);
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const bytes = enc.encode(text);
    const sizes = () => 1 + Math.floor(r.next() * 7);
    // (Text that does not start with "{" is taken for a URL.)
    const ways = [
      () =>
        openSharded('http://127.0.0.1:9/model.safetensors.index.json', [], {
          fetch: piecesFetch(bytes, sizes),
          retries: 0,
        }),
    ];
    if (text.trimStart().startsWith('{')) ways.push(() => openSharded(text, []));
    for (const open of ways) {
      if (parsed === undefined) {
        invalid++;
        await assert.rejects(open(), (e) => {
          assert.ok(e instanceof SafeTensorsError, e.stack);
          assert.equal(e.kind, 'IndexInvalid', `${JSON.stringify(text)}: ${e.message}`);
          assert.match(e.message, /at index byte \d+/);
          return true;
        });
      } else {
        // The same outcome as the parsed object's.
        const map = parsed?.weight_map;
        const shards =
          typeof map === 'object' &&
          map !== null &&
          !Array.isArray(map) &&
          Object.values(map).every((f) => typeof f === 'string' && f !== '')
            ? shardsOf(parsed)
            : [];
        let want;
        try {
          await openSharded(parsed, shards);
          want = 'ok';
        } catch (e) {
          want = e.kind;
        }
        let got;
        try {
          await openSharded(new File([text], 'i.json'), shards);
          got = 'ok';
        } catch (e) {
          got = e.kind;
        }
        assert.equal(got, want, JSON.stringify(text));
      }
    }
  }
  assert.ok(invalid > 200, `${invalid} invalid cases`);
});

// Pieces longer than an entry: the parser reads the entry cut between two
// pieces from a short string of both, then the rest of the next piece as it
// is. The outcome, an error's message and byte too, is the whole text's.
test('an index in long pieces: the entries cut between pieces, valid or not, read as in the whole text', async () => {
  const r = rng(11);
  const outcome = async (open) => {
    try {
      const model = await open();
      return { index: JSON.stringify(model.index), names: model.names().join('\n') };
    } catch (e) {
      return { kind: e.kind, message: e.message, tensor: e.tensor };
    }
  };
  let broken = 0;
  for (let i = 0; i < 60; i++) {
    let text = randomIndex(r, 400).replace(/^\ufeff/, '');
    // A long value first: cut between pieces, it is read again in longer tries.
    if (i % 3 === 0) text = text.replace('{', `{"long":[${JSON.stringify('é'.repeat(i * 40))},2],`);
    if (i % 2 === 1) {
      const at = Math.floor(r.next() * text.length);
      text = `${text.slice(0, at)}${['"', ',', '\u0001', '\\', 'x', '😀'][i % 6]}${text.slice(at + 1)}`;
    }
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch {
      broken++;
    }
    const map = parsed?.weight_map;
    const shards =
      typeof map === 'object' && map !== null && Object.values(map).every((f) => typeof f === 'string' && f !== '')
        ? shardsOf(parsed)
        : [];
    const whole = await outcome(() => openSharded(text, shards));
    const bytes = enc.encode(text);
    for (const most of [300, 700, 3000]) {
      const pieces = await outcome(() =>
        openSharded('http://127.0.0.1:9/m/model.safetensors.index.json', shards, {
          fetch: piecesFetch(bytes, () => 1 + Math.floor(r.next() * most)),
          retries: 0,
        }),
      );
      assert.deepEqual(pieces, whole, `pieces of up to ${most} bytes: ${JSON.stringify(text)}`);
    }
  }
  assert.ok(broken > 10, `${broken} broken indexes`);
});

test('malformed indexes: the error says what and at which byte', async () => {
  const cases = [
    ['{"weight_map":{"a":"f"}', 'the index ends early (expected "," or "}") at index byte 23'],
    ['{"weight_map":{"a":"f",}}', 'expected a weight_map entry, found "}" at index byte 23'],
    ['{"weight_map":{"é":"f" "b":"f"}}', 'expected "," or "}", found "\\"" at index byte 24'],
    ['{"weight_map":{"a\u0001":"f"}}', 'a control character in a string'],
    ['{"weight_map":{"\\x":"f"}}', 'an unknown escape'],
    ['{"weight_map":{"\\u12g4":"f"}}', 'a \\u escape without 4 hex digits at index byte 16'],
    ['{"weight_map":{}} x', 'expected the end of the index, found "x" at index byte 18'],
    ['{"metadata":{"total_size":01},"weight_map":{}}', 'a value that is not JSON'],
    ['[]', 'expected "{", found "[" at index byte 0'],
    ['', 'the index ends early (expected "{") at index byte 0'],
  ];
  for (const [text, message] of cases) {
    await assert.rejects(openSharded(new File([text], 'i.json'), []), (e) => {
      assert.equal(e.kind, 'IndexInvalid', text);
      assert.ok(e.message.includes(message), `${text}: ${e.message}`);
      return true;
    });
  }
  // Not UTF-8: the byte of the first bad sequence (after a BOM and a two-byte é).
  const bad = new Uint8Array([0xef, 0xbb, 0xbf, ...enc.encode('{"weight_map":{"é'), 0xff, ...enc.encode('":"f"}}')]);
  await assert.rejects(openSharded(new File([bad], 'i.json'), []), {
    kind: 'IndexInvalid',
    message: /not UTF-8 text: an invalid byte sequence at index byte 21/,
  });
  // A weight_map value that is not a string names its tensor.
  await assert.rejects(openSharded('{"weight_map":{"a":1}}', []), { kind: 'IndexInvalid', tensor: 'a' });
});

// The parser keeps the names in a table by hash (the package's
// shards/name-table.js, as installed): which lists may hold a name, and
// whether one is listed twice, against a Set and a search of every name,
// with names that share a hash and are not equal.
test('NameTable: the lists that may hold a name, and a name listed twice', async () => {
  const { NameTable, nameHash } = await import(
    new URL('./shards/name-table.js', import.meta.resolve('safetensors-nano/facts'))
  );
  const r = rng(5);
  const pick = (xs) => xs[Math.floor(r.next() * xs.length)];
  const randomName = () => Array.from({ length: 1 + Math.floor(r.next() * 10) }, () => pick(CHARS)).join('');
  // Distinct names with one hash (a 30-bit hash: among ~10^5 names, a few pairs).
  const byHash = new Map();
  const sharing = [];
  for (let i = 0; sharing.length < 4; i++) {
    const name = `layers.${i}.weight`;
    const h = nameHash(name);
    const other = byHash.get(h);
    if (other !== undefined) sharing.push([other, name]);
    byHash.set(h, name);
  }
  for (const [a, b] of sharing) assert.equal(nameHash(a), nameHash(b));
  const lists = (groups) => groups.map((names) => ({ names, hashes: names.map(nameHash) }));
  for (let i = 0; i < 400; i++) {
    const names = Array.from({ length: Math.floor(r.next() * 30) }, randomName);
    if (r.next() < 0.5) names.push(...pick(sharing));
    if (r.next() < 0.3 && names.length > 0) names.push(pick(names));
    // The same names split into lists at random points.
    const groups = [[]];
    for (const n of names) {
      if (r.next() < 0.2) groups.push([]);
      groups.at(-1).push(n);
    }
    const table = new NameTable(lists(groups));
    assert.equal(table.hasRepeat(), new Set(names).size !== names.length, JSON.stringify(names));
    for (const name of [...names, randomName(), ...pick(sharing)]) {
      const holding = groups.flatMap((g, k) => (g.includes(name) ? [k] : []));
      const sameHash = groups.flatMap((g, k) => (g.some((n) => nameHash(n) === nameHash(name)) ? [k] : []));
      const found = table.listsOf(name);
      assert.deepEqual(found, sameHash, JSON.stringify(name));
      for (const k of holding) assert.ok(found.includes(k));
    }
  }
  assert.equal(new NameTable([]).hasRepeat(), false);
  assert.deepEqual(new NameTable([]).listsOf('a'), []);
  const pair = lists([sharing[0], [sharing[0][1]]]);
  assert.equal(new NameTable(lists([sharing.flat()])).hasRepeat(), false);
  assert.equal(new NameTable(pair).hasRepeat(), true);
  assert.deepEqual(new NameTable(pair).listsOf(sharing[0][0]), [0, 1]);
});

/** An index of `n` entries in one shard file, and the shard. */
function bigIndex(n) {
  const names = Array.from({ length: n }, (_, i) => `layers.${i}.weight`);
  const index = { weight_map: Object.fromEntries(names.map((t) => [t, 'model.safetensors'])) };
  return { text: JSON.stringify(index), shards: [new File([shard(names)], 'model.safetensors')] };
}

test('indexLimit and indexEntryLimit: IndexTooLarge naming the option, from every source; at the limit it opens', async () => {
  const { text, shards } = bigIndex(100);
  const bytes = enc.encode(text).length;
  const file = new File([text], 'model.safetensors.index.json');
  const url = 'http://127.0.0.1:9/model.safetensors.index.json';
  const fetchFn = piecesFetch(enc.encode(text), () => 100);
  for (const index of [text, file, url]) {
    const opts = { fetch: fetchFn, retries: 0 };
    await assert.rejects(openSharded(index, shards, { ...opts, indexLimit: bytes - 1 }), (e) => {
      assert.equal(e.kind, 'IndexTooLarge');
      assert.match(
        e.message,
        new RegExp(`larger than indexLimit \\(${bytes - 1} bytes\\): pass a larger \\{ indexLimit \\}`),
      );
      return true;
    });
    await assert.rejects(openSharded(index, shards, { ...opts, indexEntryLimit: 99 }), {
      kind: 'IndexTooLarge',
      message: /more than indexEntryLimit \(99\) entries: pass a larger \{ indexEntryLimit \}/,
    });
    const model = await openSharded(index, shards, { ...opts, indexLimit: bytes, indexEntryLimit: 100 });
    assert.equal(model.names().length, 100);
  }
  for (const bad of [-1, 1.5, '10', NaN]) {
    await assert.rejects(openSharded(text, shards, { indexLimit: bad }), TypeError);
    await assert.rejects(openSharded(text, shards, { indexEntryLimit: bad }), TypeError);
  }
});

/**
 * A server whose index never ends (chunked, no Content-Length, or a
 * Content-Length that claims `claim` bytes): a weight_map of entries
 * without end, written as fast as the client reads. Resolves `closed`
 * with the bytes written once the client hangs up.
 */
async function endlessServer({ claim } = {}) {
  let closed;
  const done = new Promise((resolve) => (closed = resolve));
  const server = createServer((_req, res) => {
    let written = 0;
    const headers = { 'Content-Type': 'application/json' };
    if (claim !== undefined) headers['Content-Length'] = String(claim);
    res.writeHead(200, headers);
    let i = 0;
    const pump = () => {
      while (!res.destroyed) {
        let chunk = i === 0 ? '{"weight_map":{' : '';
        for (let k = 0; k < 500; k++, i++)
          chunk += `"model.layers.${i}.mlp.weight":"model-00001-of-00001.safetensors",`;
        written += chunk.length;
        if (!res.write(chunk)) return res.once('drain', pump);
      }
    };
    res.on('close', () => closed(written));
    pump();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise((resolve) => {
      server.close(resolve);
      // (Else close waits for the keep-alive connections to time out.)
      server.closeAllConnections();
    });
  return { url: `http://127.0.0.1:${server.address().port}/model.safetensors.index.json`, closed: done, close };
}

test('an endless index is cut off at the limit: the body is cancelled, not buffered', async () => {
  const MiB = 2 ** 20;
  for (const [opts, limit] of [
    [{ indexLimit: 4 * MiB }, 4 * MiB],
    // ~60 bytes an entry: the entry limit stops it after ~1.2 MB.
    [{ indexEntryLimit: 20_000 }, 20_000 * 60],
  ]) {
    const s = await endlessServer();
    await assert.rejects(openSharded(s.url, [], { ...opts, retries: 0 }), { kind: 'IndexTooLarge' });
    const written = await s.closed;
    await s.close();
    // What the server wrote: the limit, and what socket buffers held when
    // the client hung up (a few MB on loopback), nowhere near endless.
    assert.ok(written < limit + 16 * MiB, `${written} bytes written for a limit of ${limit}`);
  }
  // A Content-Length over the limit is refused before its body is read.
  const s = await endlessServer({ claim: 2 ** 40 });
  await assert.rejects(openSharded(s.url, [], { retries: 0 }), {
    kind: 'IndexTooLarge',
    message: /Content-Length 1099511627776/,
  });
  const written = await s.closed;
  await s.close();
  assert.ok(written < 16 * MiB, `${written} bytes written`);
});
