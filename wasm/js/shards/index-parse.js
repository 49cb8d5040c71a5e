// model.safetensors.index.json parsed as its text arrives, piece by piece.
// Strict JSON (RFC 8259). The weight_map, nearly all of a large index, is
// read by a scanner made for its shape ("name": "file" pairs), which builds
// each shard's list of names in one pass, the file names interned (the
// weight_map object is made from the lists when it is read); every other
// value is found whole and given to JSON.parse, so that it means exactly
// what JSON.parse makes of it.

import { KIND, SafeTensorsError, fail } from '../errors/safetensors-error.js';
import { nameBytes, sizeHeaders, indexShards } from './header-sizes.js';
import { NameTable, TABLE_LISTS, nameHash } from './name-table.js';

/** Default `indexEntryLimit`: weight_map entries (a large model has ~100,000). */
export const INDEX_ENTRY_LIMIT = 2_000_000;

// What the parser expects next, outside a value.
const START = 0; // the opening "{"
const FIRST_KEY = 1; // a key or "}"
const KEY = 2; // a key (after ",")
const NEXT = 3; // "," or "}" after a member
const MAP_FIRST = 4; // a weight_map entry or "}"
const MAP_ENTRY = 5; // a weight_map entry (after ",")
const MAP_NEXT = 6; // "," or "}" after an entry
const DONE = 7; // only whitespace

const EXPECTED = [
  '"{"',
  'a key or "}"',
  'a key',
  '"," or "}"',
  'a weight_map entry or "}"',
  'a weight_map entry',
  '"," or "}"',
  'the end of the index',
];

// A scan that ran into the end of the text so far.
const NEED = -1;

// The first try at reading an item cut between two pieces of the text,
// in characters of the next piece (an entry of an index is ~100).
const JOINT_LENGTH = 256;

const ESCAPES = { 34: '"', 92: '\\', 47: '/', 98: '\b', 102: '\f', 110: '\n', 114: '\r', 116: '\t' };

/** Whether c (a char code) is JSON whitespace. */
const isSpace = (c) => c === 32 || c === 10 || c === 13 || c === 9;

function skipSpace(s, i) {
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  return i;
}

/** UTF-8 bytes of s[from, to). */
function utf8Length(s, from, to) {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    // (A surrogate pair is 4 bytes, 2 for each half; a lone one is 3.)
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < to && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** `obj[key] = value` as JSON.parse sets it: an own data property (even `__proto__`). */
function own(obj, key, value) {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * Sets `obj[key]` to the weight_map object of `runs`' entries, made when it
 * is first read (an object of a million names costs a second to make, and
 * openSharded needs only the shards' lists). Thereafter a plain property.
 */
function lazyWeightMap(obj, key, runs) {
  Object.defineProperty(obj, key, {
    get() {
      // (As JSON.parse makes it: a name listed twice where it was first, with the last file.)
      const value = Object.fromEntries(entriesOf(runs));
      own(obj, key, value);
      return value;
    },
    set(value) {
      own(obj, key, value);
    },
    enumerable: true,
    configurable: true,
  });
}

// The weight_map's entries, in index order, from its runs: `{ shard, from,
// count }`, `count` names of `shard.names` from `from` on, in `shard.file`.
function* entriesOf(runs) {
  for (const { shard, from, count } of runs) {
    for (let i = from; i < from + count; i++) yield [shard.names[i], shard.file];
  }
}

/**
 * The parser: `push(text, ascii)` each piece of the index's text as it is
 * decoded (`ascii` when the piece is ASCII only, so that its characters
 * are its bytes), then `end()` for `{ json, shards, filesOf }`: the parsed
 * index (what JSON.parse gives), as indexShards gives it each shard file's
 * estimated header bytes and tensor names, and `filesOf(name)`, the shard
 * files that may list the name (null when the names are not in a table). Malformed JSON is IndexInvalid
 * naming the index byte; more than `entryLimit` weight_map entries is
 * IndexTooLarge, raised as soon as the entry is read.
 */
export class IndexParser {
  // The text from the first character not yet consumed (a member or
  // entry is consumed whole, or parsed again with more text).
  #buf = '';
  #pos = 0;
  // Index byte of #buf[0]; whether #buf is ASCII only.
  #base = 0;
  #ascii = true;
  // Pieces held back until they are as long as the unconsumed text, so
  // that a value spanning many pieces is scanned again a bounded number of
  // times (a scan costs no more than the text that came since the last).
  #held = [];
  #heldLength = 0;
  #heldAscii = true;
  #state = START;
  #entryCount = 0;
  #entryLimit;
  #json = {};
  // The weight_map being read, as runs of entries in one file (see
  // entriesOf; null when it is not an object), and its shard records by
  // file name: { file, raw, bytes, names, hashes }, `raw` the file name
  // when it is written without escapes (so it can be matched in the text),
  // else null; `hashes` the names' nameHash, for the NameTable.
  #runs = null;
  #files = new Map();
  #last = null;
  // The last string scanned, and whether it had no escapes.
  #str = '';
  #plain = true;

  constructor({ entryLimit = INDEX_ENTRY_LIMIT } = {}) {
    this.#entryLimit = entryLimit;
  }

  /** Counts `bytes` at the start of the index that are not its text (a BOM). */
  skip(bytes) {
    this.#base += bytes;
  }

  /** Adds a piece of the index's text (`ascii`: it has no character past U+007F). */
  push(text, ascii) {
    this.#held.push(text);
    this.#heldLength += text.length;
    this.#heldAscii &&= ascii;
    if (this.#heldLength >= this.#buf.length - this.#pos) this.#run(false);
  }

  /** The parsed index, once all its text was pushed. */
  end() {
    this.#run(true);
    if (this.#state !== DONE) this.#fail(this.#buf.length, `the index ends early (expected ${EXPECTED[this.#state]})`);
    const json = this.#json;
    // A tensor listed twice: JSON.parse keeps the last file, the shard
    // lists are then made again from the weight_map object (and no table).
    const lists = [...this.#files.values()];
    let table = this.#runs !== null && lists.length <= TABLE_LISTS ? new NameTable(lists) : null;
    if (table?.hasRepeat()) table = null;
    for (const shard of lists) shard.hashes = null;
    if (table === null) return { json, shards: indexShards(json), filesOf: null };
    return {
      json,
      shards: sizeHeaders(this.#files, json),
      filesOf: (name) => table.listsOf(name).map((list) => lists[list].file),
    };
  }

  // Takes the held pieces in, then parses all it can.
  #run(final) {
    if (this.#held.length > 0) this.#takeHeld();
    this.#parse(final);
  }

  // Makes the held pieces the text to parse. The item cut between the
  // unconsumed text and the pieces is read from a short string of the two,
  // then the pieces as they are: most of the index is never copied (and the
  // names, which slice the text they are read from, keep only it alive).
  #takeHeld() {
    const piece = this.#held.join('');
    const pieceAscii = this.#heldAscii;
    this.#held = [];
    this.#heldLength = 0;
    this.#heldAscii = true;
    let tail = this.#buf.slice(this.#pos);
    const tailAscii = this.#ascii || !/[^\0-\x7f]/.test(tail);
    // (Each try is twice as long: the cut is read a few times at most.)
    for (let k = Math.max(JOINT_LENGTH, 2 * tail.length); tail.length > 0 && k < piece.length; k *= 2) {
      // (Not between the halves of a surrogate pair, which an error would name.)
      const cut = (piece.charCodeAt(k - 1) & 0xfc00) === 0xd800 ? k + 1 : k;
      this.#restart(this.#pos, tail + piece.slice(0, cut), tailAscii && pieceAscii);
      this.#parse(false);
      if (this.#pos >= tail.length) {
        const into = this.#pos - tail.length;
        this.#restart(tail.length, piece, pieceAscii);
        this.#pos = into;
        return;
      }
      tail = this.#buf.slice(this.#pos, tail.length);
    }
    this.#restart(this.#pos, tail + piece, tailAscii && pieceAscii);
  }

  // Makes `text` the text to parse, from its start: #buf[0, consumed) was
  // consumed (its bytes are counted in #base).
  #restart(consumed, text, ascii) {
    this.#base += this.#ascii ? consumed : utf8Length(this.#buf, 0, consumed);
    this.#buf = text;
    this.#pos = 0;
    this.#ascii = ascii;
  }

  // Parses #buf from #pos as far as it can.
  #parse(final) {
    const s = this.#buf;
    let i = this.#pos;
    for (;;) {
      i = skipSpace(s, i);
      if (i >= s.length) break;
      const state = this.#state;
      const c = s.charCodeAt(i);
      let next;
      if (state === START) {
        if (c !== 123) this.#unexpected(i);
        this.#state = FIRST_KEY;
        next = i + 1;
      } else if ((state === FIRST_KEY && c === 125) || (state === NEXT && c === 125)) {
        this.#state = DONE;
        next = i + 1;
      } else if (state === FIRST_KEY || state === KEY) {
        next = this.#member(s, i, final);
      } else if (state === NEXT || state === MAP_NEXT) {
        if (c === 44) this.#state = state === NEXT ? KEY : MAP_ENTRY;
        else if (c === 125 && state === MAP_NEXT) this.#state = NEXT;
        else this.#unexpected(i);
        next = i + 1;
      } else if (state === MAP_FIRST && c === 125) {
        this.#state = NEXT;
        next = i + 1;
      } else if (state === MAP_FIRST || state === MAP_ENTRY) {
        next = this.#entries(s, i);
      } else {
        this.#unexpected(i);
      }
      if (next === NEED) break;
      i = next;
      this.#pos = i;
    }
    if (i >= s.length) this.#pos = i;
  }

  // One member of the top object at i: "key": value. The weight_map's
  // opening "{" switches to its entries; any other value is parsed whole.
  #member(s, i, final) {
    if (s.charCodeAt(i) !== 34) this.#unexpected(i);
    let j = this.#string(s, i);
    if (j === NEED) return NEED;
    const key = this.#str;
    j = skipSpace(s, j);
    if (j >= s.length) return NEED;
    if (s.charCodeAt(j) !== 58) this.#unexpected(j, '":"');
    j = skipSpace(s, j + 1);
    if (j >= s.length) return NEED;
    if (key === 'weight_map' && s.charCodeAt(j) === 123) {
      this.#runs = [];
      this.#files = new Map();
      this.#last = null;
      lazyWeightMap(this.#json, key, this.#runs);
      this.#state = MAP_FIRST;
      return j + 1;
    }
    const end = this.#valueEnd(s, j, final);
    if (end === NEED) return NEED;
    own(this.#json, key, this.#parseValue(s, j, end));
    if (key === 'weight_map') this.#runs = null;
    this.#state = NEXT;
    return end;
  }

  // weight_map entries from i ("name": "file", …) until its "}" or the
  // end of the text; the hot loop of a large index.
  #entries(s, i) {
    const n = s.length;
    for (;;) {
      if (s.charCodeAt(i) !== 34) this.#unexpected(i);
      let j = this.#string(s, i);
      if (j === NEED) return NEED;
      const name = this.#str;
      const plain = this.#plain;
      j = skipSpace(s, j);
      if (j >= n) return NEED;
      if (s.charCodeAt(j) !== 58) this.#unexpected(j, '":"');
      j = skipSpace(s, j + 1);
      if (j >= n) return NEED;
      if (s.charCodeAt(j) !== 34) {
        fail(KIND.IndexInvalid, `weight_map value is not a string (at index byte ${this.#at(j)})`, { tensor: name });
      }
      // Neighbouring entries mostly name one file: it is matched in the
      // text, without making a string of it.
      let shard = this.#last;
      if (
        shard !== null &&
        shard.raw !== null &&
        s.startsWith(shard.raw, j + 1) &&
        s.charCodeAt(j + 1 + shard.raw.length) === 34
      ) {
        j += shard.raw.length + 2;
      } else {
        j = this.#string(s, j);
        if (j === NEED) return NEED;
        shard = this.#shard(this.#str, this.#plain);
      }
      this.#add(name, plain, shard);
      this.#pos = j;
      this.#state = MAP_NEXT;
      i = skipSpace(s, j);
      if (i >= n) return i;
      const c = s.charCodeAt(i);
      if (c === 125) {
        this.#state = NEXT;
        return i + 1;
      }
      if (c !== 44) this.#unexpected(i);
      this.#state = MAP_ENTRY;
      this.#pos = i + 1;
      i = skipSpace(s, i + 1);
      if (i >= n) return i;
    }
  }

  #shard(file, plain) {
    let shard = this.#files.get(file);
    if (shard === undefined) {
      shard = { file, raw: plain ? file : null, bytes: 0, names: [], hashes: [] };
      this.#files.set(file, shard);
    }
    this.#last = shard;
    return shard;
  }

  #add(name, plain, shard) {
    if (++this.#entryCount > this.#entryLimit) {
      fail(
        KIND.IndexTooLarge,
        `the index's weight_map has more than indexEntryLimit (${this.#entryLimit}) entries: pass a larger { ` +
          'indexEntryLimit } to open it',
      );
    }
    const runs = this.#runs;
    const run = runs.at(-1);
    if (run?.shard === shard) run.count++;
    else runs.push({ shard, from: shard.names.length, count: 1 });
    shard.names.push(name);
    shard.hashes.push(nameHash(name));
    // (A name written plainly in ASCII is its JSON string: its length and the quotes.)
    shard.bytes += plain && this.#ascii ? name.length + 2 : nameBytes(name);
  }

  // The string whose opening quote is at i: the index after its closing
  // quote (its value in #str), or NEED.
  #string(s, i) {
    const n = s.length;
    let j = i + 1;
    for (; j < n; j++) {
      const c = s.charCodeAt(j);
      if (c === 34) {
        this.#str = s.slice(i + 1, j);
        this.#plain = true;
        return j + 1;
      }
      if (c === 92 || c < 32) break;
    }
    if (j >= n) return NEED;
    return this.#escapedString(s, i);
  }

  #escapedString(s, i) {
    const n = s.length;
    const parts = [];
    let from = i + 1;
    for (let j = from; j < n; j++) {
      const c = s.charCodeAt(j);
      if (c === 34) {
        parts.push(s.slice(from, j));
        this.#str = parts.join('');
        this.#plain = false;
        return j + 1;
      }
      if (c < 32)
        this.#fail(j, 'a control character in a string (it must be written as an escape such as \\n or \\u0000)');
      if (c !== 92) continue;
      if (j + 1 >= n) return NEED;
      parts.push(s.slice(from, j));
      const e = s.charCodeAt(j + 1);
      if (e === 117) {
        if (j + 6 > n) return NEED;
        const hex = s.slice(j + 2, j + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.#fail(j, 'a \\u escape without 4 hex digits');
        // (One UTF-16 unit per escape: a pair of escapes makes one
        // character, a lone surrogate stays one, as JSON.parse does.)
        parts.push(String.fromCharCode(parseInt(hex, 16)));
        j += 5;
      } else {
        const ch = ESCAPES[e];
        if (ch === undefined) this.#fail(j, 'an unknown escape (JSON has \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)');
        parts.push(ch);
        j += 1;
      }
      from = j + 1;
    }
    return NEED;
  }

  // Where the value at i ends (its last character + 1), or NEED. Only
  // strings and brackets are followed; JSON.parse judges the value.
  #valueEnd(s, i, final) {
    const n = s.length;
    const c = s.charCodeAt(i);
    if (c === 34) return skipString(s, i);
    if (c === 123 || c === 91) {
      let depth = 0;
      for (let j = i; j < n; j++) {
        const d = s.charCodeAt(j);
        if (d === 34) {
          j = skipString(s, j);
          if (j === NEED) return NEED;
          j--;
        } else if (d === 123 || d === 91) depth++;
        else if (d === 125 || d === 93) {
          if (--depth === 0) return j + 1;
        }
      }
      return NEED;
    }
    let j = i;
    while (j < n && !ENDS_SCALAR.has(s.charCodeAt(j))) j++;
    if (j === i) this.#unexpected(i, 'a value');
    return j >= n && !final ? NEED : j;
  }

  #parseValue(s, i, end) {
    try {
      return JSON.parse(s.slice(i, end));
    } catch (e) {
      const at = /position (\d+)/.exec(e.message);
      const where = at === null ? i : Math.min(i + Number(at[1]), end);
      return this.#fail(where, `a value that is not JSON (${e.message})`, e);
    }
  }

  // Index byte of #buf[i].
  #at(i) {
    return this.#base + (this.#ascii ? i : utf8Length(this.#buf, 0, i));
  }

  #unexpected(i, expected = EXPECTED[this.#state]) {
    const c = this.#buf.codePointAt(i);
    this.#fail(
      i,
      `expected ${expected}, found ${c === undefined ? 'the end' : JSON.stringify(String.fromCodePoint(c))}`,
    );
  }

  #fail(i, what, cause) {
    throw new SafeTensorsError(
      KIND.IndexInvalid,
      `index is not JSON: ${what} at index byte ${this.#at(i)}`,
      cause === undefined ? undefined : { cause },
    );
  }
}

// Characters that end a number or literal (true, false, null).
const ENDS_SCALAR = new Set([32, 10, 13, 9, 44, 125, 93, 58, 34, 123, 91]);

// The index after the string at i (its closing quote + 1), or NEED;
// escapes are skipped, not checked.
function skipString(s, i) {
  for (let j = i + 1; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === 34) return j + 1;
    if (c === 92) j++;
  }
  return NEED;
}
