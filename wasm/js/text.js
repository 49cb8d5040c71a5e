// Header bytes to JS strings: the platform's TextDecoder, unless the entry
// installed a faster way for ASCII text (node.js does: Node's TextDecoder
// is slower there than its Buffer).

const utf8 = new TextDecoder();
let ascii = null;

/**
 * Called once by an entry: `decode(bytes)` returns the text of `bytes`
 * when they are all ASCII, else null.
 */
export function setAsciiDecoder(decode) {
  ascii = decode;
}

/** The text of UTF-8 `bytes` (the core validated them). */
export function decodeText(bytes) {
  const text = ascii === null ? null : ascii(bytes);
  return text === null ? utf8.decode(bytes) : text;
}
