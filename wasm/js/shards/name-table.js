// The weight_map's names by hash, without a Map of every name: for a
// million names, filling one is most of the time the index takes to parse.
// Each name's hash is kept beside it as it is read; the hashes, each with
// the number of its shard's list, are sorted as numbers into one table.
// The table says which shards may hold a name (a binary search), and
// whether a name is listed twice: only names whose hash is not unique
// (about a thousand in a million) are compared, in a Set.

/** How many lists a NameTable holds: a key is hash × TABLE_LISTS + list, exact as a double (30 + 22 bits). */
export const TABLE_LISTS = 2 ** 22;
const LISTS = TABLE_LISTS;

/** A 30-bit FNV-1a hash of a string's UTF-16 units (a small integer: an array of them stays compact). */
export function nameHash(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h & 0x3fffffff;
}

/**
 * The names of `lists` (`{ names, hashes }` each, the hashes (nameHash)
 * beside the names, in the same order), at most 2^22 lists.
 */
export class NameTable {
  #keys;
  #lists;

  constructor(lists) {
    if (lists.length > LISTS) throw new RangeError(`NameTable: more than ${LISTS} lists`);
    let count = 0;
    for (const { hashes } of lists) count += hashes.length;
    const keys = new Float64Array(count);
    let at = 0;
    lists.forEach(({ hashes }, list) => {
      for (let i = 0; i < hashes.length; i++) keys[at++] = hashes[i] * LISTS + list;
    });
    this.#keys = keys.sort();
    this.#lists = lists;
  }

  /** The numbers of the lists that have a name of `name`'s hash, ascending (mostly the one list that has it). */
  listsOf(name) {
    const keys = this.#keys;
    const low = nameHash(name) * LISTS;
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (keys[mid] < low) lo = mid + 1;
      else hi = mid;
    }
    const lists = [];
    for (let i = lo; i < keys.length && keys[i] < low + LISTS; i++) {
      if (lists.at(-1) !== keys[i] - low) lists.push(keys[i] - low);
    }
    return lists;
  }

  /** Whether a name occurs twice in the table's lists (while their hashes are still there). */
  hasRepeat() {
    const keys = this.#keys;
    const shared = new Set();
    for (let i = 1; i < keys.length; i++) {
      const hash = Math.floor(keys[i] / LISTS);
      if (hash === Math.floor(keys[i - 1] / LISTS)) shared.add(hash);
    }
    if (shared.size === 0) return false;
    const seen = new Set();
    for (const { names, hashes } of this.#lists) {
      for (let i = 0; i < names.length; i++) {
        if (!shared.has(hashes[i])) continue;
        if (seen.has(names[i])) return true;
        seen.add(names[i]);
      }
    }
    return false;
  }
}
