// Edits as data: an opened file or sharded model turned into the tensor map
// that serialize and serializeStream take, with tensors kept or dropped by
// name, renamed, and float dtypes converted, and the map's `metadata` the
// source's with keys set or dropped (edit/metadata-edits.js). Nothing is read here:
// the map's data are the Tensors themselves, read when the stream is pulled.

import { DTYPE_INDEX } from '../format/dtypes.js';
import { KIND, fail } from '../errors/safetensors-error.js';
import { DTYPE_KINDS } from '../generated/dtypes.js';
import { editMetadata } from './metadata-edits.js';
import { CONVERT_TARGETS } from '../write/serialize-stream.js';

// A glob: `*` any run of characters, `?` one; the rest literal; whole name.
function globRegExp(glob) {
  const body = [...glob]
    .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}$`, 'su');
}

/** A name test from a pattern: a RegExp, a glob string, a function, or an array of them (any matches). */
function matcher(pattern, what) {
  if (Array.isArray(pattern)) {
    const tests = pattern.map((p) => matcher(p, what));
    return (name) => tests.some((t) => t(name));
  }
  if (pattern instanceof RegExp) {
    // (A global or sticky RegExp keeps a position between tests: a copy without.)
    const re = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
    return (name) => re.test(name);
  }
  if (typeof pattern === 'string') {
    const re = globRegExp(pattern);
    return (name) => re.test(name);
  }
  if (typeof pattern === 'function') return (name) => Boolean(pattern(name));
  throw new TypeError(`${what}: expected a RegExp, a glob string, a function or an array of them`);
}

/** The rename function: a function, or [prefix, replacement], or [RegExp, replacement]. */
function renamer(rename) {
  if (rename === undefined || rename === null) return (name) => name;
  if (typeof rename === 'function') return rename;
  if (Array.isArray(rename) && rename.length === 2 && typeof rename[1] === 'string') {
    const [from, to] = rename;
    if (typeof from === 'string') return (name) => (name.startsWith(from) ? to + name.slice(from.length) : name);
    if (from instanceof RegExp) return (name) => name.replace(from, to);
  }
  throw new TypeError('rename: expected a function, [prefix, replacement] or [RegExp, replacement]');
}

/** The target dtype of each float dtype: one target for all, or a map from source dtype to target. */
function converter(convert) {
  if (convert === undefined || convert === null) return () => undefined;
  const check = (to) => {
    if (!CONVERT_TARGETS.includes(to)) {
      fail(
        KIND.InvalidArgument,
        `convert: ${JSON.stringify(to)} is not a dtype floats convert to (${CONVERT_TARGETS.join(', ')})`,
      );
    }
    return to;
  };
  if (typeof convert === 'string') {
    check(convert);
    return (dtype) => (DTYPE_KINDS[DTYPE_INDEX.get(dtype)] === 'float' ? convert : undefined);
  }
  if (typeof convert === 'object') {
    const map = new Map(Object.entries(convert));
    for (const [from, to] of map) {
      if (DTYPE_KINDS[DTYPE_INDEX.get(from)] !== 'float')
        fail(KIND.InvalidArgument, `convert: ${JSON.stringify(from)} is not a float dtype`);
      check(to);
    }
    return (dtype) => map.get(dtype);
  }
  throw new TypeError("convert: expected a dtype ('F32', 'F16', 'BF16', 'F64') or an object from float dtype to dtype");
}

// The `__metadata__` a source's tensors come with: a file's own, a sharded
// model's first shard's (as the CLI's merge), none for a list of Tensors.
function sourceMetadata(source) {
  if (Array.isArray(source?.shards)) return source.shards[0]?.file?.metadata() ?? null;
  if (typeof source?.metadata === 'function') return source.metadata();
  return null;
}

/**
 * The tensors of `source` (a SafeTensors, a ShardedModel, or an iterable of
 * Tensors) as a Map for serializeStream, edited (see index.d.ts); its
 * `metadata` property is the source's metadata with `opts.metadata`'s
 * edits. A name two tensors are renamed to is DuplicateTensorName, and
 * `__metadata__` ReservedName, here, before anything is read or written.
 *
 * (The type below is for scripts/check-declarations.mjs: tsc cannot see a
 * property that defineProperty adds.)
 * @returns {Map<string, { dtype: import('../generated/dtypes.js').Dtype, shape: number[], data: import('../read/tensor.js').Tensor }>
 *   & { readonly metadata: Record<string, string> | null }}
 */
export function editTensors(source, { keep, drop, rename, convert, metadata } = {}) {
  const all = typeof source?.tensors === 'function' ? source.tensors() : source;
  if (all === null || typeof all?.[Symbol.iterator] !== 'function') {
    throw new TypeError('source: expected an opened file (SafeTensors), a ShardedModel or an iterable of Tensors');
  }
  const edited = editMetadata(sourceMetadata(source), metadata ?? {});
  const kept = keep === undefined ? () => true : matcher(keep, 'keep');
  const dropped = drop === undefined ? () => false : matcher(drop, 'drop');
  const newName = renamer(rename);
  const target = converter(convert);
  const out = new Map();
  const from = new Map(); // new name → old name, for the error
  for (const t of all) {
    if (!kept(t.name) || dropped(t.name)) continue;
    const name = newName(t.name);
    if (typeof name !== 'string')
      throw new TypeError(`rename: gave ${typeof name} for ${JSON.stringify(t.name)}, expected a string`);
    if (name === '__metadata__') {
      fail(
        KIND.ReservedName,
        `${JSON.stringify(t.name)} would be renamed to "__metadata__", the name the header's metadata holds`,
        { tensor: t.name },
      );
    }
    if (out.has(name)) {
      fail(
        KIND.DuplicateTensorName,
        `${JSON.stringify(from.get(name))} and ${JSON.stringify(t.name)} would both be renamed to it`,
        { tensor: name },
      );
    }
    from.set(name, t.name);
    const dtype = target(t.dtype) ?? t.dtype;
    out.set(name, { dtype, shape: t.shape, data: t });
  }
  return Object.defineProperty(out, 'metadata', { value: edited, enumerable: true });
}
