// Header bytes to JS strings: the platform's TextDecoder, unless the entry
// installed a faster way for ASCII text (node.js does: Node's TextDecoder
// is slower there than its Buffer).

// ignoreBOM: a decoder drops a leading U+FEFF by default, and header text
// is decoded in pieces (a block, a name), any of which may begin with one
// that is part of a name.
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
let asciiText = null;
let isAscii = null;

/**
 * Called once by an entry: `decode(bytes)` returns the text of bytes that
 * are all ASCII, `check(bytes)` whether they are.
 */
export function setAsciiDecoder(decode, check) {
  asciiText = decode;
  isAscii = check;
}

/** The text of UTF-8 `bytes` (the core validated them). */
export function decodeText(bytes) {
  return asciiText !== null && isAscii(bytes) ? asciiText(bytes) : utf8.decode(bytes);
}

/** The text of bytes the core found to be ASCII. */
export function decodeAscii(bytes) {
  return asciiText === null ? utf8.decode(bytes) : asciiText(bytes);
}
