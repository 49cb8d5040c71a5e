// Comparing two models by header: tensors added, removed, changed in dtype or shape, or the
// same spec. Values are compared on demand, one pair at a time, in the detail panel.

import { naturalCompare } from './format.js';

export const STATUS_LABEL = {
  removed: 'removed',
  added: 'added',
  dtype: 'dtype changed',
  shape: 'shape changed',
  both: 'dtype + shape',
  same: 'same spec',
};

/** One row per tensor name in A or B: changes first, then the same, each in numeric-aware name order. */
export function compareModels(a, b) {
  const names = new Set([...a.byName.keys(), ...b.byName.keys()]);
  const rows = [...names].sort(naturalCompare).map((name) => {
    const ra = a.byName.get(name) ?? null;
    const rb = b.byName.get(name) ?? null;
    let status;
    if (!rb) status = 'removed';
    else if (!ra) status = 'added';
    else {
      const dt = ra.dtype !== rb.dtype;
      const sh = ra.shape.join() !== rb.shape.join();
      status = dt && sh ? 'both' : dt ? 'dtype' : sh ? 'shape' : 'same';
    }
    return { i: 0, name, status, a: ra, b: rb };
  });
  rows.sort((x, y) => (x.status === 'same') - (y.status === 'same'));
  rows.forEach((r, i) => {
    r.i = i;
  });
  const counts = { removed: 0, added: 0, dtype: 0, shape: 0, both: 0, same: 0 };
  for (const r of rows) counts[r.status]++;
  return { rows, counts };
}
