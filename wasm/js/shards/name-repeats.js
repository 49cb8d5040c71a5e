// Whether an index's weight_map names a tensor twice, found without a Set
// of every name: for a million names, filling one is most of the time the
// index takes to parse. Each name's hash is kept as the name is read, the
// hashes are sorted as numbers, and only the names whose hash is not
// unique (about a thousand in a million) are compared, in a Set.

/** A 30-bit FNV-1a hash of a string's UTF-16 units (a small integer: an array of them stays compact). */
export function nameHash(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h & 0x3fffffff;
}

/**
 * Whether a name occurs twice in `lists`: `{ names, hashes }` each, the
 * hashes (nameHash) beside the names, in the same order.
 */
export function hasRepeat(lists) {
  let count = 0;
  for (const { hashes } of lists) count += hashes.length;
  const sorted = new Int32Array(count);
  let at = 0;
  for (const { hashes } of lists) {
    sorted.set(hashes, at);
    at += hashes.length;
  }
  sorted.sort();
  const shared = new Set();
  for (let i = 1; i < count; i++) if (sorted[i] === sorted[i - 1]) shared.add(sorted[i]);
  if (shared.size === 0) return false;
  const seen = new Set();
  for (const { names, hashes } of lists) {
    for (let i = 0; i < names.length; i++) {
      if (!shared.has(hashes[i])) continue;
      if (seen.has(names[i])) return true;
      seen.add(names[i]);
    }
  }
  return false;
}
