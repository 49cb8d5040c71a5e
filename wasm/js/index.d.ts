// Type declarations of the npm package safetensors-nano.

// The dtype, error-kind and shard-finding unions are generated from the Rust tables
// (generated/*.d.ts: `cargo xtask gen`).
import type { Dtype, DtypeKind, FloatDtype } from './generated/dtypes.js';
import type { ErrorKind, JsErrorKind, WasmErrorKind } from './generated/errors.js';
import type { ShardFinding } from './generated/shard-findings.js';

export type { Dtype, DtypeKind, FloatDtype, ErrorKind, JsErrorKind, WasmErrorKind };

/** The dtype names in the core's order. */
export const DTYPES: readonly Dtype[];

/** Facts about one dtype (DTYPE_INFO). */
export interface DtypeInfo {
  readonly name: Dtype;
  /** Its place in DTYPES (the core's order). */
  readonly index: number;
  /** Bits per element (4 and 6 for the packed F4 and F6s). */
  readonly bits: number;
  /** Byte alignment `view()` needs: the element size of its typed array. */
  readonly align: number;
  readonly kind: DtypeKind;
  /** The typed array `view()` returns, by name ('Float16Array' for F16 only where the runtime has it). */
  readonly view:
    | 'Uint8Array'
    | 'Int8Array'
    | 'Uint16Array'
    | 'Int16Array'
    | 'Float16Array'
    | 'Uint32Array'
    | 'Int32Array'
    | 'Float32Array'
    | 'Float64Array'
    | 'BigInt64Array'
    | 'BigUint64Array';
}

/** Facts about every dtype, by name (frozen). */
export const DTYPE_INFO: Readonly<Record<Dtype, DtypeInfo>>;

/**
 * What `view()` returns: Float32Array (F32; C64 as interleaved re/im),
 * Float64Array, Int8/16/32Array, Uint8/16/32Array, BigInt64Array (I64),
 * BigUint64Array (U64), Float16Array for F16 where the runtime has it (else
 * Uint16Array of the bits), Uint16Array of the bits for BF16, Uint8Array of
 * the codes (or packed bytes) for BOOL, the F8s, F6 and F4.
 */
export type TypedArray =
  | Uint8Array
  | Int8Array
  | Uint16Array
  | Int16Array
  | Uint32Array
  | Int32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array
  | Float16ArrayIfDeclared;

/**
 * Float16Array where the project's lib declares it (TypeScript's
 * `esnext.float16`), else never: the declarations compile with or without it.
 */
export type Float16ArrayIfDeclared = typeof globalThis extends { Float16Array: { readonly prototype: infer T } }
  ? T
  : never;

/** Every error this package throws (besides AbortError and TypeError). */
export class SafeTensorsError extends Error {
  constructor(
    kind: ErrorKind,
    message: string,
    opts?: { offset?: number | null; tensor?: string | null; cause?: unknown },
  );
  readonly name: 'SafeTensorsError';
  /** What went wrong, e.g. "InvalidOffset". */
  readonly kind: ErrorKind;
  /** Header byte (0 = the first byte after the 8-byte length) where it was found. */
  readonly offset: number | null;
  /** The tensor it concerns (decoded name). */
  readonly tensor: string | null;
}

export interface ReadOptions {
  signal?: AbortSignal;
}

/** Options of every opener. */
export interface OpenOptions {
  /**
   * The longest header accepted, in bytes (default 100,000,000, the
   * reference's limit, which larger values mean; fromUrl: 25,000,000). A
   * longer one is a SafeTensorsError of kind HeaderTooLarge, found from
   * the file's first 8 bytes before the header is read.
   */
  headerLimit?: number;
}

/** Options of fromBlob. */
export interface BlobOptions extends ReadOptions, OpenOptions {}

export interface ReadFloat32Options extends ReadOptions {
  /** Called after each chunk with bytes done and the tensor's byte length. */
  onProgress?: (done: number, total: number) => void;
  /**
   * Bytes a step: each request of a URL, and between onProgress calls (default 8 MiB; rounded down to a multiple of
   * 24). Not a positive integer: TypeError.
   */
  chunkBytes?: number;
  /**
   * Decode into this array instead of a new one, and resolve to it: a
   * Float32Array (of any realm) with one slot per element (`elementCount`).
   * Another length is LengthMismatch; not a Float32Array, or a detached
   * one, is InvalidArgument. When the call rejects, what `out` holds is
   * unspecified (decoding may have begun). Reusing one array for tensor
   * after tensor spares allocating (and first writing) a new result each
   * time:
   *
   * ```ts
   * const buf = new Float32Array(largest);
   * for (const t of st.tensors()) use(await t.readFloat32({ out: buf.subarray(0, t.elementCount) }));
   * ```
   */
  out?: Float32Array;
}

/**
 * One entry of a slice spec, for one dimension (numpy's basic indexing):
 * `null` the whole dimension; an integer an index, which drops the
 * dimension; `[start, end]` or `[start, end, step]` a range, end exclusive,
 * `null` for an open bound, step 1 or more. Negative numbers count from the
 * end; range bounds past either end are clamped (an empty range is no
 * error); an index outside the dimension is SliceOutOfRange.
 */
export type SliceEntry = null | number | [start: number | null, end: number | null, step?: number | null];

/** Options of readSlice and readSliceFloat32. */
export interface ReadSliceOptions extends ReadOptions {
  /** Called after each read with bytes read and the bytes the slice's reads cover (gaps read through included). */
  onProgress?: (done: number, total: number) => void;
}

/** One tensor of an opened file or sharded model. */
export interface Tensor {
  readonly name: string;
  readonly dtype: Dtype;
  readonly shape: number[];
  /** Absolute byte offset of the data in the file. */
  readonly byteOffset: number;
  readonly byteLength: number;
  /** [begin, end] relative to the data buffer, as in the header. */
  readonly dataOffsets: [number, number];
  /** Number of elements (product of the shape). */
  readonly elementCount: number;
  /** Zero-copy view of the bytes (in-memory files: fromBytes, or fromUrl answered 200 for up to 64 MiB). */
  bytes(): Uint8Array;
  /** Zero-copy typed view when the data is aligned for it, else null (in-memory files). */
  view(): TypedArray | null;
  /** Decodes a float tensor to f32 exactly as the core does (in-memory files). */
  toFloat32(): Float32Array;
  /** Reads the bytes from any source. */
  read(opts?: ReadOptions): Promise<Uint8Array>;
  /** Reads and decodes a float tensor in chunks from any source. */
  readFloat32(opts?: ReadFloat32Options): Promise<Float32Array>;
  /**
   * Reads a slice from any source: one spec entry per leading dimension
   * (missing trailing ones are whole), the result's bytes in row-major
   * order, byte for byte numpy's `t[spec]`. Only the selected bytes are
   * read: runs next to each other (a range of whole rows) in one request
   * or `Blob.slice`, runs up to 64 KiB apart read through as one, at most
   * 8 MiB a read and, gaps allowing, 4096 reads (from a server that
   * ignores Range, one pass through its body from the first run to the
   * last, each run copied out as it goes by). A bad spec fails before
   * anything is read: InvalidArgument, SliceTooManyIndices, SliceOutOfRange,
   * SliceInvalidRange (step below 1), SliceSubByte (F4/F6 selections that
   * start or end inside a byte).
   */
  readSlice(spec: readonly SliceEntry[], opts?: ReadSliceOptions): Promise<{ shape: number[]; bytes: Uint8Array }>;
  /** readSlice, decoded to f32 as readFloat32 decodes (float dtypes; others DtypeMismatch, before any read). */
  readSliceFloat32(
    spec: readonly SliceEntry[],
    opts?: ReadSliceOptions,
  ): Promise<{ shape: number[]; values: Float32Array }>;
}

export interface ParameterCount {
  total: number;
  byDtype: Partial<Record<Dtype, number>>;
}

/**
 * What `new Headers(…)` takes: the DOM's HeadersInit, spelt so that it also
 * resolves without the DOM lib (with Node's types).
 */
type HeadersLike = ConstructorParameters<typeof Headers>[0];

export interface UrlOptions extends OpenOptions {
  /** Extra request headers (e.g. Authorization). */
  headers?: HeadersLike;
  signal?: AbortSignal;
  /**
   * Bytes asked for in the first request (default 65536, at most 8 +
   * headerLimit): small headers open in one round trip.
   */
  prefetch?: number;
  /**
   * The longest header fetched, in bytes (default 25,000,000, as
   * huggingface_hub: any URL can claim a 100 MB header; at most
   * 100,000,000). A longer one is HeaderTooLarge, from the first 8 bytes.
   */
  headerLimit?: number;
  /** A fetch implementation (default globalThis.fetch). */
  fetch?: typeof fetch;
  /**
   * Milliseconds a request may go without progress (default 30,000; a
   * positive number or Infinity): no answer, or under 16 KiB of body (or
   * all that is left, when less) in that time, is a Timeout. It applies to
   * every request: the open, each `read()`/`readFloat32()` chunk, the index.
   * Over 2^31 − 1 (about 24.8 days, the longest a timer waits) is Infinity.
   */
  timeout?: number;
  /**
   * Further tries after a transient failure (default 2): a 5xx, 408 or 429
   * answer, a network failure, a body cut short, a Timeout; 200 ms, then
   * 400 ms, … apart. A changed file, a wrong range or an encoded range is
   * never retried.
   */
  retries?: number;
  /**
   * Send `If-Range` with the first answer's strong ETag (or Last-Modified)
   * on every later request, so that a server hands back the whole new file
   * instead of a range of it once the file changes. Either way every
   * answer's validators and Content-Range total are compared with the
   * first's, and a change is a SourceChanged error. Default: true, except
   * for a cross-origin URL in a browser, where If-Range (not a
   * CORS-safelisted header) would cost a preflight the server may refuse.
   */
  ifRange?: boolean;
  /**
   * What `read()`/`readFloat32()` do when the server ignores Range (it
   * answered 200 with the whole file) and the file is over 64 MiB, so that
   * only its header was kept (a smaller one is kept whole: in-memory
   * views). `'stream'` (default): each read asks again and walks the new
   * body up to the tensor's end, holding one piece at a time, then cancels
   * it; the bytes before the tensor still cross the wire. `'reject'`: a
   * read is a SafeTensorsError of kind RangeUnsupported, with no request.
   * Either way a changed file is SourceChanged. Not one of them: TypeError.
   */
  noRange?: 'stream' | 'reject';
}

/** Options of openSharded: fromUrl's (passed to each shard's opener), and how many shards open at once. */
export interface ShardedOptions extends UrlOptions {
  /** Shards opened at once (default 8; a positive integer or Infinity). */
  concurrency?: number;
  /** Passed to each shard's opener: fromUrl's default for URLs, fromBlob's for Blobs. */
  headerLimit?: number;
  /**
   * Bytes asked for in each URL shard's first request. Default: sized from
   * the index (the tensors it lists for the shard), so that each shard's
   * header comes in one request.
   */
  prefetch?: number;
  /**
   * Bytes the index may have (default 268,435,456, 256 MiB; a non-negative
   * integer or Infinity). A Blob, text or URL index over it is
   * IndexTooLarge, found as it is read: a URL's body is cancelled there.
   */
  indexLimit?: number;
  /**
   * Entries the index's weight_map may have (default 2,000,000; a
   * non-negative integer or Infinity); past it, IndexTooLarge.
   */
  indexEntryLimit?: number;
}

/** An opened safetensors file. */
export class SafeTensors {
  private constructor();
  /** Opens a whole file held in memory; validates the header and the file length. */
  static fromBytes(buf: ArrayBufferLike | ArrayBufferView, opts?: OpenOptions): SafeTensors;
  /** Opens from the first bytes of a file (at least 8 + N) and its size; tensors have no data. */
  static fromHeader(
    prefix: ArrayBufferLike | ArrayBufferView,
    fileSize: number | bigint,
    opts?: OpenOptions,
  ): SafeTensors;
  /** Opens a Blob or File lazily: reads 8 bytes, then the header; tensors on demand. */
  static fromBlob(blob: Blob, opts?: BlobOptions): Promise<SafeTensors>;
  /**
   * Opens a URL with HTTP Range requests (a 200 answer: read whole up to 64 MiB, else up to the header; see
   * `noRange`).
   */
  static fromUrl(url: string | URL, opts?: UrlOptions): Promise<SafeTensors>;
  /** N, the header length. */
  readonly headerSize: number;
  /** 8 + N: where the data buffer starts. */
  readonly dataOffset: number;
  readonly fileSize: number;
  /** Bytes read from the source so far (for fromBytes: the whole input). */
  readonly bytesRead: number;
  /** Number of tensors. */
  readonly length: number;
  /** Tensor names in data-offset order. */
  names(): string[];
  /** The __metadata__ map, or null when the header has none. */
  metadata(): Record<string, string> | null;
  tensor(name: string): Tensor | undefined;
  /** Every tensor in data-offset order. */
  tensors(): Tensor[];
  parameterCount(): ParameterCount;
}

/** A model split into shards, with one namespace over all of them. */
export class ShardedModel {
  private constructor();
  /** The parsed model.safetensors.index.json. */
  readonly index: { metadata?: Record<string, unknown> | null; weight_map: Record<string, string> };
  /** The shards in file-name order. */
  readonly shards: { name: string; file: SafeTensors }[];
  readonly bytesRead: number;
  /** Names in shard order, then data-offset order. */
  names(): string[];
  /**
   * The tensor called `name`, the same object every time; undefined when no
   * shard has it. The first name the index's weight_map does not lead to
   * (such as one not in the model) builds a map of all the shards' names,
   * so existence checks after it are cheap.
   */
  tensor(name: string): Tensor | undefined;
  tensors(): Tensor[];
  /** The index's "metadata" object, or null. */
  metadata(): Record<string, unknown> | null;
  parameterCount(): ParameterCount;
}

/**
 * Opens a sharded model. `index`: model.safetensors.index.json as a Blob or
 * File, a URL, its JSON text, or the parsed object. `shards`: Files, Blobs
 * with names, or URLs, matched to the index by file name; with a URL index,
 * missing shards are fetched from beside it. The index must agree with the
 * shard headers (IndexMismatch, ShardMissing otherwise). At most
 * `concurrency` shards are opened at once.
 */
export function openSharded(
  index: Blob | string | URL | object,
  shards?: readonly (Blob | File | string | URL)[],
  opts?: ShardedOptions,
): Promise<ShardedModel>;

/** Options of openHub: where the model is on the Hub, and openSharded's (passed on). */
export interface HubOptions extends ShardedOptions {
  /** A branch, tag or commit (default "main"; `refs/pr/1` works, encoded as one segment). */
  revision?: string;
  /**
   * The file to open, a path in the repository: a `.json` index (its shards
   * are fetched from its folder) or a safetensors file, e.g.
   * "unet/diffusion_pytorch_model.safetensors". Default:
   * model.safetensors.index.json, then model.safetensors when there is no index.
   */
  file?: string;
  /** The Hub's address (default "https://huggingface.co", as huggingface_hub's HF_ENDPOINT). */
  endpoint?: string | URL;
  /**
   * A Hub access token, for gated and private repositories. It is sent as
   * `Authorization: Bearer …` to the endpoint's origin only, never to the
   * CDN a file redirects to (nor to any other origin), and kept nowhere.
   */
  token?: string;
}

/** What openHub opens: a ShardedModel, with where it came from. */
export interface HubModel extends ShardedModel {
  /** The file opened: the index (its path in the repository) or the single file. */
  readonly file: string;
  /**
   * Each shard, with `url`: where its bytes are read from (for a file the Hub redirects, the signed CDN URL, which
   * needs no token and expires as the Hub decides).
   */
  readonly shards: { name: string; file: SafeTensors; url: string }[];
}

/**
 * Opens a model on the Hugging Face Hub by its name ("org/name"), from
 * `{endpoint}/{repo}/resolve/{revision}/{file}`: its index and shards, or a
 * single file as a model of one shard (under an index made from its header:
 * `metadata.total_size` and a `weight_map`). Large files redirect to a
 * signed CDN URL, which is then pinned: a file replaced after the open is
 * SourceChanged, as with fromUrl. A 401/403 is HubUnauthorized (gated or
 * private: pass `token`); a 404 is HubNotFound, naming the files tried.
 */
export function openHub(repo: string, opts?: HubOptions): Promise<HubModel>;

/** One shard's header as checkShards compares it. */
export interface ShardHeader {
  /** The shard's file name. */
  name: string;
  /** Its tensor names in data-offset order; null when its header was not read (only its name is compared). */
  names: readonly string[] | null;
  /** Bytes of its data buffer (file size − 8 − N): summed for the index's total_size. */
  dataBytes?: number;
}

/** A disagreement between an index and shard headers (its kinds, fields and
 * wording are the Rust core's `IndexProblem`, generated). */
export type { ShardFinding, ShardFindingKind } from './generated/shard-findings.js';
/**
 * Whether a sharded model's index agrees with its shards' headers (what
 * openSharded checks before it opens a model, and the CLI's `verify` finds
 * for the same files). Returns every finding: `missing` and `misplaced` by
 * tensor name, then `duplicate` and `unlisted` in shard order, then
 * `missingShard` by file name, `unnamedShard`, `totalSize` (judged when every
 * shard the index names was read); none when they agree. With a null index
 * only duplicates are looked for.
 * `fileKey` maps the index's and the shards' file names to what is compared
 * (default: the names themselves).
 */
export function checkShards(
  index: { weight_map: Record<string, string>; metadata?: Record<string, unknown> | null } | null,
  shards: readonly ShardHeader[],
  opts?: { fileKey?: (name: string) => string },
): ShardFinding[];

/**
 * A finding's message, worded as the Rust core and the CLI word it: a
 * tensor as a JSON string, a shard position named by `shardNames`.
 */
export function shardFindingMessage(finding: ShardFinding, shardNames: readonly string[]): string;

/**
 * Each shard file the index's weight_map names, with the estimated bytes of
 * its header (8 + N) from the tensors the index lists in it: pass it as
 * fromUrl's `prefetch` and a shard opens with one request (openSharded
 * does). Errs long; throws IndexInvalid when the index has no weight_map
 * object or a weight_map value is not a string.
 *
 * @example
 * const sizes = shardHeaderBytes(index);
 * const shard = await SafeTensors.fromUrl(url, { prefetch: sizes.get('model-00001-of-00002.safetensors') });
 */
export function shardHeaderBytes(index: {
  weight_map: Record<string, string>;
  metadata?: Record<string, unknown> | null;
}): Map<string, number>;

/**
 * Bytes of the reader module's wasm memory grown so far: a diagnostic (only headers and bounded decode chunks ever
 * enter it).
 */
export function wasmMemoryBytes(): number;

/**
 * Decodes whole elements of a float dtype (a {@link FloatDtype}; others throw
 * DtypeMismatch) to f32, exactly as the core does. `out`, when given, is
 * checked as readFloat32's (LengthMismatch, InvalidArgument) and returned.
 */
export function decodeFloat32(dtype: Dtype, bytes: ArrayBufferLike | ArrayBufferView, out?: Float32Array): Float32Array;

export interface TensorInput {
  dtype: Dtype;
  shape: readonly number[];
  /** Exactly shape × dtype bytes (any typed array or DataView; its bytes are taken as they are). */
  data: ArrayBufferLike | ArrayBufferView;
}

/**
 * Writes a safetensors file through the core writer: the same bytes as the
 * reference implementation (metadata keys sorted, so identical whenever
 * there is at most one key). Async: the writer is a second wasm module,
 * loaded by the first call, so pages that only read never download it
 * (a failed load rejects with kind "WriterUnavailable"). The inputs are
 * read at the call, except by the first call, which reads them once the
 * writer has loaded: keep them unchanged until its promise settles.
 */
export function serialize(
  tensors: Record<string, TensorInput> | Map<string, TensorInput>,
  metadata?: Record<string, string> | null,
): Promise<Uint8Array>;

/** The float dtypes conversion writes (the core's `convert_into` targets). */
export type ConvertTarget = 'F64' | 'F32' | 'F16' | 'BF16';

/**
 * One tensor for {@link serializeStream}: what `serialize` takes, or data
 * read lazily as the stream is pulled:
 * - a `Blob` (its bytes, exactly shape × dtype of them);
 * - a {@link Tensor} of any opened file (fromBytes, fromBlob, fromUrl,
 *   openSharded), read in bounded chunks; `dtype` and `shape` default to
 *   the tensor's. A different float `dtype` ({@link ConvertTarget})
 *   converts its values; another dtype is DtypeMismatch.
 *
 * A Float32Array or Float64Array whose `dtype` is another
 * {@link ConvertTarget} is converted too (round to nearest, ties to even);
 * any other typed array, ArrayBuffer or DataView is taken as bytes.
 * Keep the data unchanged until the stream is done: it is read as pulled.
 */
export interface StreamTensorInput {
  dtype?: Dtype;
  shape?: readonly number[];
  data: ArrayBufferLike | ArrayBufferView | Blob | Tensor;
}

/** A tensor map for {@link serializeStream}. */
export type StreamTensors = Record<string, StreamTensorInput> | Map<string, StreamTensorInput>;

export interface StreamOptions {
  /** Aborting errors the stream with the signal's reason (and stops its reads). */
  signal?: AbortSignal;
  /** Called with the bytes made so far and the file's size: at the start (0) and after each chunk. */
  onProgress?: (done: number, total: number) => void;
  /** Source bytes read per step (default 8 MiB; rounded down to a multiple of 24). */
  chunkBytes?: number;
}

/**
 * Writes a safetensors file as a stream: the same bytes as `serialize` and
 * the reference, for any total size in memory bounded by a few chunks.
 * Pull-based: each chunk is read (and converted, through the writer's wasm
 * module) when the consumer asks for it, with at most one chunk waiting.
 * Never throws: every error (a bad input, a repeated name, a length that
 * is not shape × dtype, a failed read) errors the stream, the input's
 * before its first byte.
 *
 * ```js
 * const file = await SafeTensors.fromBlob(input);
 * const stream = serializeStream(editTensors(file, { convert: 'BF16' }), file.metadata());
 * await stream.pipeTo(writable);
 * ```
 */
export function serializeStream(
  tensors: StreamTensors,
  metadata?: Record<string, string> | null,
  opts?: StreamOptions,
): ReadableStream<Uint8Array>;

/**
 * The size in bytes of the file {@link serializeStream} writes for these
 * tensors and metadata (a download's Content-Length, a progress bar's
 * total), from the core's plan: nothing is read. Rejects with the plan's
 * errors, as the stream would.
 */
export function serializedSize(tensors: StreamTensors, metadata?: Record<string, string> | null): Promise<number>;

/**
 * Which tensor names a rule takes: a RegExp, a glob (`*` any run, `?` one character, the whole name), a test, or any
 * of several.
 */
export type NamePattern = RegExp | string | ((name: string) => boolean) | readonly NamePattern[];

export interface EditOptions {
  /** Keep only the tensors whose (old) name matches. */
  keep?: NamePattern;
  /** Drop the tensors whose (old) name matches. */
  drop?: NamePattern;
  /**
   * New names: `[prefix, replacement]` replaces a leading prefix,
   * `[RegExp, replacement]` is `name.replace(re, replacement)`, or a function.
   */
  rename?: readonly [string | RegExp, string] | ((name: string) => string);
  /** Convert float tensors: every float dtype to one target, or per source dtype (`{ F32: 'BF16' }`). */
  convert?: ConvertTarget | Partial<Record<Dtype, ConvertTarget>>;
  /** Edits of the source's metadata, given as the result's `metadata` (see {@link editMetadata}). */
  metadata?: MetadataEdits;
}

/**
 * Edits of a `__metadata__` map, applied in this order: `clear`, `drop`,
 * `set`. A key both set and dropped is InvalidArgument, as is a value that
 * is not a string; the key `__metadata__` (the header's name for the map
 * itself) is ReservedName.
 */
export interface MetadataEdits {
  /** Write no metadata at all (then `set` starts a new map). */
  clear?: boolean;
  /** Keys to remove; a key the metadata lacks changes nothing. A map left with no keys is written `{}`. */
  drop?: string | readonly string[];
  /** Keys to add or give a new value; creates the metadata if there is none. */
  set?: Record<string, string> | ReadonlyMap<string, string>;
}

/**
 * A metadata map with {@link MetadataEdits} applied: a new object, or null
 * when the result has no metadata (`metadata` itself is not changed). For
 * {@link serialize}, {@link serializeStream} and `writeFile`; the file is
 * then the reference's `save_file` with that metadata, byte for byte (keys
 * sorted).
 *
 * ```js
 * editMetadata({ format: 'pt', license: 'x' }, { set: { format: 'np' }, drop: ['license'] }); // { format: 'np' }
 * ```
 */
export function editMetadata(
  metadata: Readonly<Record<string, string>> | null | undefined,
  edits?: MetadataEdits,
): Record<string, string> | null;

/** The tensor map {@link editTensors} gives, with the metadata to write beside it. */
export interface EditedTensors extends Map<string, StreamTensorInput> {
  /**
   * The source's `__metadata__` (a file's; a sharded model's first shard's;
   * null for a list of Tensors) with `opts.metadata`'s edits: what to pass
   * as serializeStream's, serializedSize's or writeFile's `metadata`.
   */
  readonly metadata: Record<string, string> | null;
}

/**
 * The tensors of an opened file, a sharded model (merging: its tensors in
 * one map) or a list of Tensors, as a map for {@link serializeStream},
 * edited: kept or dropped by name, renamed, floats converted; its
 * `metadata` is the source's, edited by `opts.metadata`. Nothing is
 * read: the map's data are the Tensors. Two tensors renamed to one name
 * throw DuplicateTensorName (and a rename to `__metadata__` ReservedName)
 * at once, before anything is written.
 *
 * ```js
 * const tensors = editTensors(file, { convert: 'BF16', metadata: { set: { dtype: 'bf16' }, drop: ['license'] } });
 * await writeFile('out.safetensors', tensors, tensors.metadata);
 * ```
 */
export function editTensors(source: SafeTensors | ShardedModel | Iterable<Tensor>, opts?: EditOptions): EditedTensors;

/** One shard of {@link shardTensors}. */
export interface ShardPlan {
  /** Its file name: `model.safetensors`, or `model-00001-of-00003.safetensors`… */
  name: string;
  /** Its tensors, to write with serializeStream (or writeFile). */
  tensors: Map<string, StreamTensorInput>;
  /** Bytes of tensor data in it (after conversion). */
  dataBytes: number;
}

/**
 * Splits a tensor map into shards of at most `maxShardSize` bytes of tensor
 * data (a number, or "5GB" = 5·10^9, "500MiB"…), as huggingface_hub does: in
 * the map's order, a tensor that would take the shard over the size starts
 * the next; one larger than the size gets its own. One shard is
 * `<prefix>.safetensors` with no index; more are
 * `<prefix>-0000i-of-0000N.safetensors` with `index`, the text of
 * `<prefix>.safetensors.index.json` as transformers writes it
 * (`weight_map` and `metadata.total_size`, sorted keys, two-space indent).
 * An unusable size is InvalidArgument.
 */
export function shardTensors(
  tensors: StreamTensors,
  opts: { maxShardSize: number | string; prefix?: string },
): { shards: ShardPlan[]; indexName: string | null; index: string | null; totalSize: number };

/**
 * **Node only** (the package's Node entry; absent from the browser entry).
 * Writes a file with {@link serializeStream} into a temporary file beside
 * `path` (`.<name>.<pid>.<16 hex>.safetensors-nano-tmp`), synced and renamed
 * over `path` once complete: `path` is never partly written. On an error
 * or an abort the temporary file is removed and `path` is untouched; an
 * error found before the first byte creates no file at all. Temporary
 * files of earlier writers to the same name whose process is gone (killed
 * mid-write) are removed first. A failed write, sync or rename (a full
 * disk, a file size limit, permissions) is WriteFailed, with the system
 * error as `cause`. Resolves to the file's size.
 *
 * `fs.openAsBlob(path)` files are lazy sources: open them with
 * `SafeTensors.fromBlob`. (On Node 20 its Blob's size wraps at 4 GiB.)
 */
export function writeFile(
  path: string,
  tensors: StreamTensors,
  metadata?: Record<string, string> | null,
  opts?: StreamOptions,
): Promise<number>;

/**
 * **Node only.** Writes {@link shardTensors}'s shards into the directory
 * `dir` (made if missing), each as {@link writeFile} does, then the index.
 * They are renamed into place only once all are complete (the index last):
 * an error or an abort leaves none of them.
 * `onProgress` gets each shard's progress and its file name. Resolves to
 * the file names written.
 */
export function writeShards(
  dir: string,
  tensors: StreamTensors,
  metadata: Record<string, string> | null | undefined,
  opts: {
    maxShardSize: number | string;
    prefix?: string;
    signal?: AbortSignal;
    chunkBytes?: number;
    onProgress?: (done: number, total: number, shard: string) => void;
  },
): Promise<{ shards: string[]; index: string | null }>;

/** A `.wasm` file, as `init` takes it. */
export type WasmInput = string | URL | Request | Response | PromiseLike<Response> | BufferSource | WebAssembly.Module;

/**
 * Loads the wasm modules where the bundler did not put them beside the
 * entry (esbuild; Rollup without an assets plugin): the reader's `.wasm`
 * (`safetensors_nano_wasm_bg.wasm`), or `{ reader, writer }` with the
 * writer's too (`safetensors_nano_writer_bg.wasm`, fetched by the first
 * `serialize`). Vite, webpack, plain pages and Node need no call: the entry
 * loads both from beside itself. Resolves once the reader is loaded; rejects
 * with kind "ReaderUnavailable" when it fails to load (or none is given and
 * the entry's own load failed); every call that parses or decodes throws
 * that kind while the reader is not loaded.
 */
export function init(input?: WasmInput | { reader?: WasmInput; writer?: WasmInput }): Promise<void>;
