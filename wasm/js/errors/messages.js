// The error tables: kind names by the number wasm sends and their message
// templates (generated/errors.js, from the Rust tables: `cargo xtask
// gen`; this layer's own kinds too), and the one template formatter, so that a
// wasm error's message is the Rust `Display` text of its kind.

import { DTYPES } from '../generated/dtypes.js';
import { EXPECTED, FIELD, FIELDS, JS_KINDS, KINDS, TEMPLATES } from '../generated/errors.js';

export { JS_KINDS, KINDS };

// How a field of each type is shown (a number by the template's code).
const NAMED = { expected: EXPECTED, field: FIELD, dtype: DTYPES };

/**
 * The message of the kind with wire number `kind` for its field values
 * (numbers, or BigInts above 2^53), from its template: `{name}`,
 * `{name:x}`, `{name:02x}`, `{name:or_more}` as the core's `KindInfo`
 * documents them. An unknown number gives undefined.
 */
export function message(kind, values) {
  const template = TEMPLATES[kind];
  if (template === undefined) return undefined;
  const fields = FIELDS[kind];
  return template.replace(/\{(\w+)(?::(\w+))?\}/g, (_, name, code) => {
    const i = fields.findIndex(([n]) => n === name);
    // (The Rust tests check that every template names its own fields.)
    if (i < 0) return '';
    const v = values[i];
    const named = NAMED[fields[i][1]];
    if (named !== undefined) return named[Number(v)] ?? '?';
    if (code === 'x') return v.toString(16);
    if (code === '02x') return v.toString(16).padStart(2, '0');
    if (code === 'or_more' && v >= 3) return `${v} or more`;
    return String(v);
  });
}
