// The one way JS calls into the wasm modules, and the one conversion of
// the engine's own errors. A call that throws from inside wasm (a trap:
// `unreachable` after a failed allocation; the engine's stack overflow; a
// JS exception unwinding through wasm frames) leaves the instance unusable:
// its state's lock stays held and its stack pointer where it was. So the
// module is renewed at once: its `renew` export (wasm/src/lib.rs) has
// wasm-bindgen's glue make a new instance at the next call of any export,
// which `settle` then is, and JS drops what it kept of the old one
// (onRenew). The error leaves the package as
// an Internal SafeTensorsError whose `cause` is the original.

import { KIND, SafeTensorsError } from '../errors/safetensors-error.js';

const forgets = [];

/**
 * Registers `forget()`, called after a wasm call threw: it drops what JS
 * keeps of the old instance (views of its memory, addresses in it).
 */
export function onRenew(forget) {
  forgets.push(forget);
}

/**
 * The exports `names` of a wasm-bindgen module (the namespace of its glue),
 * each guarded: an exception out of the call renews the module and is
 * thrown as an Internal error.
 */
export function guardExports(module, names) {
  const guarded = {};
  for (const name of names) {
    const call = module[name];
    guarded[name] = (...args) => {
      try {
        return call(...args);
      } catch (e) {
        throw trapped(module, name, e);
      }
    };
  }
  return guarded;
}

function trapped(module, name, e) {
  try {
    module.renew();
    module.settle();
  } catch {
    // (No new instance could be made, e.g. out of memory: the call's own
    // error is the one to report.)
  }
  for (const forget of forgets) forget();
  return new SafeTensorsError(
    KIND.Internal,
    `the package's wasm module failed in ${name} (${e?.name ?? 'error'}: ${e?.message ?? e}); it is made anew for ` +
      'the next call. ' +
      'This is a bug, or the module ran out of memory (wasm has 4 GiB at most, browsers may give less): report it ' +
      'with the input, or try a smaller one',
    { cause: e },
  );
}

/**
 * A new typed array of `n` elements; the engine's RangeError when it cannot
 * allocate it (or `n` is past its largest array) becomes an Internal error
 * that names `what`.
 */
export function allocate(Ctor, n, what, where) {
  try {
    return new Ctor(n);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    throw new SafeTensorsError(
      KIND.Internal,
      `could not allocate ${n * Ctor.BYTES_PER_ELEMENT} bytes for ${what} (${e.message}): free memory, or read in ` +
        `parts (readFloat32's \`out\` with a smaller tensor, serializeStream)`,
      { ...where, cause: e },
    );
  }
}
