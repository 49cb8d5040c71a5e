// The columns of the viewer's two tables: the tensor list of one model and the comparison of two.

import { STATUS_LABEL } from './compare.js';
import { DTYPES, fmtBytes, fmtCount, fmtInt, fmtShape, naturalCompare } from './format.js';

const offsetsText = (r) => `${fmtInt(r.begin)} – ${fmtInt(r.end)}`;

/** The tensor list's columns; a sharded model's have the file of each tensor too. */
export function tensorColumns(m) {
  const cols = [
    {
      key: 'name',
      label: 'Name',
      width: 'minmax(220px, 3fr)',
      text: (r) => r.name,
      compare: (a, b) => naturalCompare(a.name, b.name),
    },
    {
      key: 'dtype',
      label: 'dtype',
      width: '120px',
      text: (r) => r.dtype,
      cls: (r) => `dtype-cell d-${r.dtype}`,
      compare: (a, b) => DTYPES.indexOf(a.dtype) - DTYPES.indexOf(b.dtype) || a.i - b.i,
    },
    {
      key: 'shape',
      label: 'Shape',
      width: 'minmax(110px, 1.2fr)',
      text: (r) => fmtShape(r.shape),
      compare: (a, b) => a.rank - b.rank || cmpShape(a.shape, b.shape),
    },
    {
      key: 'params',
      label: 'Params',
      width: '92px',
      align: 'right',
      text: (r) => fmtCount(r.params),
      title: (r) => `${fmtInt(r.params)} parameters`,
      compare: (a, b) => a.params - b.params || a.i - b.i,
    },
    {
      key: 'bytes',
      label: 'Bytes',
      width: '92px',
      drop: 3,
      align: 'right',
      text: (r) => fmtBytes(r.bytes),
      title: (r) => `${fmtInt(r.bytes)} bytes`,
      compare: (a, b) => a.bytes - b.bytes || a.i - b.i,
    },
    {
      key: 'offsets',
      label: 'Offsets',
      width: 'minmax(150px, 1.2fr)',
      drop: 1,
      align: 'right',
      text: offsetsText,
      title: (r) => `data_offsets [${r.begin}, ${r.end}), file bytes ${r.offset}…`,
      compare: (a, b) => a.shard - b.shard || a.begin - b.begin,
    },
  ];
  if (m.sharded)
    cols.push({
      key: 'shard',
      label: 'File',
      width: 'minmax(120px, 1fr)',
      drop: 2,
      text: (r) => m.shards[r.shard].name,
      compare: (a, b) => a.shard - b.shard || a.begin - b.begin,
    });
  return cols;
}

function cmpShape(a, b) {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

const dtypeAndShape = (r) => (r ? `${r.dtype} ${fmtShape(r.shape)}` : '—');

/** The comparison's columns: each tensor's status, its name, and what it is in A and in B. */
export function compareColumns(modelA, modelB) {
  return [
    {
      key: 'status',
      label: 'Status',
      width: '150px',
      text: (r) => STATUS_LABEL[r.status],
      cls: (r) => `status s-${r.status}`,
      compare: (a, b) => a.status.localeCompare(b.status) || a.i - b.i,
    },
    { key: 'name', label: 'Name', width: 'minmax(220px, 3fr)', text: (r) => r.name, compare: (a, b) => a.i - b.i },
    {
      key: 'a',
      label: `A: ${modelA.name}`,
      width: 'minmax(140px, 1.2fr)',
      drop: 2,
      text: (r) => dtypeAndShape(r.a),
      compare: (a, b) => (a.a?.params ?? -1) - (b.a?.params ?? -1),
    },
    {
      key: 'b',
      label: `B: ${modelB.name}`,
      width: 'minmax(140px, 1.2fr)',
      drop: 1,
      text: (r) => dtypeAndShape(r.b),
      compare: (a, b) => (a.b?.params ?? -1) - (b.b?.params ?? -1),
    },
  ];
}
