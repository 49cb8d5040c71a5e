// A file whose float tensors a reader in order cuts mid-element. Read in
// offset order, the first tensor ('lead') is read alone and the second
// opens one stream to the file's end; where Blob streams are byte streams
// (browsers) its pieces are 4 MiB from 'odd''s first byte, and as 'odd' is
// 5 bytes long the first cut falls between the two bytes of a BF16 element
// and the second inside a group of 3 F6 bytes. Only those two cuts are
// certain; where streams are not byte streams (Node) the chunks are the
// stream's own. Seeded bytes: every code of the 8-bit types, 16-bit words
// of all kinds.

import { tensorFile } from './format.js';

const MiB = 1024 * 1024;

function seeded(n, seed) {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    out[i] = seed >>> 24;
  }
  return out;
}

/** About 14 MiB: an F8 of 1 byte, one of 5 bytes, then BF16, F6, F8, F32 and F16 tensors of a few MiB each. */
export function piecesFile() {
  const entries = [
    ['lead', 'F8_E4M3', [1], seeded(1, 7)],
    ['odd', 'F8_E4M3', [5], seeded(5, 1)],
    ['bf16', 'BF16', [(5 * MiB + 6) / 2], seeded(5 * MiB + 6, 2)],
    ['f6', 'F6_E2M3', [((4 * MiB + 2) / 3) * 4], seeded(4 * MiB + 2, 3)],
    ['e5m2', 'F8_E5M2', [3], seeded(3, 4)],
    ['f32', 'F32', [MiB / 4 + 1], seeded(MiB + 4, 5)],
    ['f16', 'F16', [2 * MiB + 7], seeded(4 * MiB + 14, 6)],
  ];
  return tensorFile(entries);
}
