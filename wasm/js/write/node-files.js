// Writing files in Node: the stream of serializeStream piped into a
// temporary file beside the target, synced and renamed over it only when
// complete. A failure or an abort removes the temporary file; a process
// killed mid-write leaves one named so that the next write to the same
// target recognises it (its process is gone) and removes it: rule W12
// replace-atomically of docs/format.md, which the Rust writer follows too.
//
// The temporary name (W12's pattern, shared with the Rust writer):
//   .<target file name>.<pid>.<16 lowercase hex>.safetensors-nano-tmp
// in the target's directory.

import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { KIND, SafeTensorsError } from '../errors/safetensors-error.js';
import { shardTensors } from './shard-split.js';
import { serializeStream } from './serialize-stream.js';

const TEMP_SUFFIX = '.safetensors-nano-tmp';

function tempName(target) {
  return `.${target}.${process.pid}.${randomBytes(8).toString('hex')}${TEMP_SUFFIX}`;
}

// Whether process `pid` is alive: signal 0 checks without sending (EPERM:
// alive, another user's).
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code !== 'ESRCH';
  }
}

/** Removes our own user's temporary files of writes to `target` in `dir` whose process is gone (W12). */
async function removeStaleTemps(dir, target) {
  let names;
  try {
    names = await readdir(dir);
  } catch {
    return; // (the open of the temporary file reports a missing directory)
  }
  const prefix = `.${target}.`;
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith(TEMP_SUFFIX)) continue;
    const m = /^(\d+)\.[0-9a-f]{16}$/.exec(name.slice(prefix.length, -TEMP_SUFFIX.length));
    if (m === null) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || alive(pid)) continue;
    const path = join(dir, name);
    // Only our own user's (W12): a pid we can't see may be another user's
    // or another PID namespace's live writer.
    const owner = await stat(path).then(
      (st) => st.uid,
      () => null,
    );
    if (owner !== null && (typeof process.getuid !== 'function' || owner === process.getuid()))
      await unlink(path).catch(() => {});
  }
}

function writeFailed(what, path, e) {
  return new SafeTensorsError(KIND.WriteFailed, `could not ${what} ${path}: ${e.message}; nothing was written there`, {
    cause: e,
  });
}

/**
 * Writes the bytes `stream` gives into a temporary file beside `path`,
 * synced and closed: `{ temp, target, size }`, for `commit` to rename into
 * place. Nothing exists under the temporary name until the first chunk is
 * in hand (so an error found before the first byte leaves no file at all);
 * an error or an abort removes it.
 */
async function writeTemp(path, stream, signal) {
  const target = resolve(path);
  const dir = dirname(target);
  const reader = stream.getReader();
  let temp = null;
  let fh = null;
  try {
    let next = await reader.read();
    await removeStaleTemps(dir, basename(target));
    temp = join(dir, tempName(basename(target)));
    try {
      fh = await open(temp, 'wx');
    } catch (e) {
      temp = null;
      throw writeFailed('create a temporary file for', target, e);
    }
    let size = 0;
    for (; !next.done; next = await reader.read()) {
      const chunk = next.value;
      for (let at = 0; at < chunk.byteLength; ) {
        signal?.throwIfAborted();
        let n;
        try {
          ({ bytesWritten: n } = await fh.write(chunk, at, chunk.byteLength - at));
        } catch (e) {
          throw writeFailed('write', target, e);
        }
        at += n;
      }
      size += chunk.byteLength;
    }
    signal?.throwIfAborted();
    try {
      await fh.sync();
      await fh.close();
      fh = null;
    } catch (e) {
      throw writeFailed('complete', target, e);
    }
    const done = { temp, target, size };
    temp = null;
    return done;
  } catch (e) {
    // Not awaited: a cancel aborts the stream's read in flight, and the
    // temporary file is removed (below) without waiting for it to stop.
    reader.cancel(e).catch(() => {});
    throw e;
  } finally {
    if (fh !== null) await fh.close().catch(() => {});
    if (temp !== null) await unlink(temp).catch(() => {});
  }
}

/** Renames a complete temporary file (writeTemp's) over its target. */
async function commit({ temp, target }) {
  try {
    await rename(temp, target);
  } catch (e) {
    throw writeFailed('complete', target, e);
  }
}

// The renames last once the directory is synced (best effort: not every
// system syncs a directory).
async function syncDir(dir) {
  await open(dir, 'r')
    .then((d) => d.sync().finally(() => d.close()))
    .catch(() => {});
}

/** Writes the bytes `stream` gives to `path` through a temporary file renamed over it when complete. */
async function writeAtomically(path, stream, signal) {
  const done = await writeTemp(path, stream, signal);
  try {
    await commit(done);
  } catch (e) {
    await unlink(done.temp).catch(() => {});
    throw e;
  }
  await syncDir(dirname(done.target));
  return done.size;
}

/**
 * Writes `tensors` and `metadata` to the file `path` (see index.d.ts):
 * through a temporary file renamed over `path` when complete. Resolves to
 * the file's size.
 */
export async function writeFile(path, tensors, metadata, options = {}) {
  return writeAtomically(path, serializeStream(tensors, metadata, options), options.signal);
}

/**
 * Writes `tensors` as Hub-style shards into the directory `dir` (made if
 * missing; see shardTensors): every shard, then the index, into a temporary
 * file of its own; only when all are complete are they renamed into place
 * (the index last), so a failure or an abort leaves none of them. Resolves
 * to `{ shards: string[], index: string | null }` (file names).
 */
export async function writeShards(
  dir,
  tensors,
  metadata,
  { maxShardSize, prefix, signal, onProgress, chunkBytes } = {},
) {
  const plan = shardTensors(tensors, { maxShardSize, prefix });
  try {
    await mkdir(dir, { recursive: true });
  } catch (e) {
    throw writeFailed('create the directory', dir, e);
  }
  const written = [];
  try {
    for (const shard of plan.shards) {
      const progress = onProgress && ((done, total) => onProgress(done, total, shard.name));
      const stream = serializeStream(shard.tensors, metadata, { signal, chunkBytes, onProgress: progress });
      written.push(await writeTemp(join(dir, shard.name), stream, signal));
    }
    if (plan.index !== null) {
      const bytes = new TextEncoder().encode(plan.index);
      const stream = new ReadableStream({
        start(c) {
          c.enqueue(bytes);
          c.close();
        },
      });
      written.push(await writeTemp(join(dir, plan.indexName), stream, signal));
    }
    signal?.throwIfAborted();
    while (written.length > 0) {
      await commit(written[0]);
      written.shift();
    }
  } finally {
    for (const { temp } of written) await unlink(temp).catch(() => {});
  }
  await syncDir(resolve(dir));
  return { shards: plan.shards.map((s) => s.name), index: plan.indexName };
}
