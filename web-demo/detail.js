// The tensor detail panel: facts from the header at once, then statistics, first values, a
// histogram and (for 2-D and higher) a heatmap computed in the worker with progress and cancel;
// .npy export; and, when comparing two models, the value difference of a tensor pair.

import { drawHeatmap, drawHistogram } from './charts.js';
import { download, h, kvTable } from './dom.js';
import { Cancelled } from './jobs.js';
import { NPY_DESCR, floatsPerElement, fmtBytes, fmtInt, fmtMs, fmtNum, fmtShape, viewAlignment } from './format.js';

/** What the worker needs to read one tensor. */
export function tensorRef(model, row) {
  const { kind, blob, url } = model.shards[row.shard].src;
  return {
    src: kind === 'blob' ? { kind, blob } : { kind, url },
    dtype: row.dtype,
    shape: row.shape,
    byteOffset: row.offset,
    byteLength: row.bytes,
    chunkBytes: DetailPanel.chunkBytes,
  };
}

/** Flat index → multi-index, e.g. 7 in [2, 4] → [1, 3]. */
export function unravel(index, shape) {
  const out = new Array(shape.length).fill(0);
  let rest = index;
  for (let d = shape.length - 1; d >= 0; d--) {
    out[d] = rest % shape[d];
    rest = Math.floor(rest / shape[d]);
  }
  return out;
}

function viewNote(row) {
  if (row.subByte) return 'sub-byte dtype: always decoded';
  if (row.aligned) return `aligned to ${viewAlignment(row.dtype)} bytes: a zero-copy typed view`;
  return `not aligned to ${viewAlignment(row.dtype)} bytes: a view needs a copy`;
}

/** A progress bar with a label and a Cancel button. */
function progressWidget(onCancel) {
  const bar = h('progress', { max: 1, value: 0 });
  const text = h('span', { class: 'progress-text' }, 'starting…');
  const cancel = h('button', { type: 'button', class: 'btn small', onclick: onCancel }, 'Cancel');
  const el = h('div', { class: 'progress', role: 'status', 'aria-live': 'polite' }, bar, text, cancel);
  return {
    el,
    update(done, total, phase) {
      bar.max = total || 1;
      bar.value = done;
      text.textContent = `${phase}: ${fmtBytes(done)} of ${fmtBytes(total)}`;
    },
  };
}

export class DetailPanel {
  /** Read chunk size for the worker (undefined: its 64 MiB default); tests make it small. */
  static chunkBytes = undefined;

  constructor(el, { jobs, onBytes, onClose }) {
    this.el = el;
    this.jobs = jobs;
    this.onBytes = onBytes ?? (() => {});
    this.onClose = onClose ?? (() => {});
    this.running = new Set();
    this.logHist = false;
  }

  close() {
    this.#cancelAll();
    this.el.hidden = true;
    this.el.replaceChildren();
    this.row = null;
    this.onClose();
  }

  #cancelAll() {
    for (const job of this.running) job.cancel();
    this.running.clear();
  }

  /** Runs a worker job with a progress widget in `slot`; resolves to the result or null. */
  async #run(slot, type, payload) {
    let counted = 0;
    let job = null;
    const widget = progressWidget(() => job?.cancel());
    slot.replaceChildren(widget.el);
    job = this.jobs.run(type, payload, {
      onProgress: (done, total, phase) => {
        widget.update(done, total, phase);
        this.onBytes(done - counted);
        counted = done;
      },
    });
    this.running.add(job);
    const t0 = performance.now();
    try {
      const result = await job.promise;
      if (result.bytesRead > counted) this.onBytes(result.bytesRead - counted);
      result.ms = performance.now() - t0;
      slot.replaceChildren();
      return result;
    } catch (err) {
      if (err instanceof Cancelled) {
        slot.replaceChildren(
          h(
            'p',
            { class: 'note' },
            'Cancelled. ',
            h(
              'button',
              { type: 'button', class: 'btn small', onclick: () => this.#again(type, payload) },
              'Compute again',
            ),
          ),
        );
      } else {
        slot.replaceChildren(
          h('p', { class: 'error-inline', role: 'alert' }, `Failed: ${err.kind ? `${err.kind}: ` : ''}${err.message}`),
        );
      }
      return null;
    } finally {
      this.running.delete(job);
    }
  }

  #again(type, payload) {
    if (type === 'stats') this.#stats(payload.tensor, payload.rows);
    else if (type === 'diff') this.#diff();
  }

  /** Shows one tensor; `pair` = {model, row} of the same name in the compared model. */
  show(model, row, pair = null) {
    this.#cancelAll();
    this.model = model;
    this.row = row;
    this.pair = pair;
    const shard = model.shards[row.shard];
    this.el.hidden = false;
    this.el.dataset.tensor = row.name;
    const facts = [
      ['dtype', h('span', { class: `dtype d-${row.dtype}` }, row.dtype)],
      ['shape', fmtShape(row.shape)],
      ['parameters', fmtInt(row.params)],
      ['bytes', `${fmtInt(row.bytes)} (${fmtBytes(row.bytes)})`],
      ['data_offsets', `[${fmtInt(row.begin)}, ${fmtInt(row.end)})`],
      ['file offset', fmtInt(row.offset)],
      ['view', viewNote(row)],
    ];
    if (model.sharded) facts.splice(5, 0, ['file', shard.name]);
    this.statsSlot = h('div', { class: 'slot' });
    this.statsOut = h('div', { class: 'stats-out' });
    this.exportSlot = h('div', { class: 'slot' });
    const actions = h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'btn', onclick: () => this.#exportNpy() }, 'Export .npy'),
      NPY_DESCR[row.dtype] ? null : h('span', { class: 'note' }, `${row.dtype} is exported as float32`),
    );
    const parts = [
      h(
        'header',
        { class: 'detail-head' },
        h('h2', { id: 'detail-title', tabindex: -1 }, row.name),
        h(
          'button',
          {
            type: 'button',
            class: 'icon-btn',
            'aria-label': 'Close tensor detail',
            title: 'Close (Esc)',
            onclick: () => this.close(),
          },
          '×',
        ),
      ),
      kvTable(facts),
      actions,
      this.exportSlot,
    ];
    if (pair) {
      this.diffSlot = h('div', { class: 'slot' });
      this.diffOut = h('div', { class: 'diff-out' });
      parts.push(this.#pairSection());
    }
    parts.push(h('h3', {}, 'Values'), this.#rowRangeForm(model, row), this.statsSlot, this.statsOut);
    this.el.replaceChildren(...parts);
    this.el.setAttribute('aria-labelledby', 'detail-title');
    this.#stats(tensorRef(model, row));
    if (pair && this.#comparable()) this.#diff();
    return this.el.querySelector('#detail-title');
  }

  #comparable() {
    const a = this.row;
    const b = this.pair.row;
    return a.params === b.params && floatsPerElement(a.dtype) === floatsPerElement(b.dtype);
  }

  #pairSection() {
    const a = this.row;
    const b = this.pair.row;
    const same = a.dtype === b.dtype && a.shape.join() === b.shape.join();
    const sec = h(
      'section',
      { class: 'pair' },
      h('h3', {}, 'Compared with B'),
      kvTable([
        ['B dtype', h('span', { class: `dtype d-${b.dtype}` }, b.dtype)],
        ['B shape', fmtShape(b.shape)],
        ['B file', this.pair.model.shards[b.shard].name],
      ]),
      same ? null : h('p', { class: 'note' }, 'dtype or shape differ between A and B.'),
    );
    if (this.#comparable()) sec.append(this.diffSlot, this.diffOut);
    else sec.append(h('p', { class: 'note' }, 'The element counts differ, so values cannot be compared.'));
    return sec;
  }

  /**
   * Rows [start, end) of the first dimension for the statistics and the heatmap (numpy's
   * `t[start:end]`: negative from the end, empty for an open end), so that a huge tensor can be
   * looked at a part at a time; only those rows are read. Null for a tensor of one row or none.
   */
  #rowRangeForm(model, row) {
    if (row.shape.length === 0 || row.shape[0] < 2) return null;
    const field = (name, label) =>
      h('input', {
        name,
        type: 'number',
        step: 1,
        class: 'row-bound',
        'aria-label': label,
        placeholder: name === 'start' ? '0' : String(row.shape[0]),
      });
    const form = h(
      'form',
      { class: 'actions row-range', 'data-testid': 'row-range' },
      h('span', {}, 'Rows'),
      field('start', 'first row'),
      h('span', {}, 'to'),
      field('end', 'end row (excluded)'),
      h('button', { type: 'submit', class: 'btn small' }, 'Compute'),
      h(
        'span',
        { class: 'note' },
        `of ${fmtInt(row.shape[0])}; end excluded, empty for the ends, negative from the end`,
      ),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const value = (name) => (form.elements[name].value === '' ? null : Number(form.elements[name].value));
      const rows = [value('start'), value('end')];
      this.#stats(tensorRef(model, row), rows[0] === null && rows[1] === null ? undefined : rows);
    });
    return form;
  }

  async #stats(ref, rows) {
    this.statsOut.replaceChildren();
    const row = this.row;
    const r = await this.#run(this.statsSlot, 'stats', rows ? { tensor: ref, rows } : { tensor: ref });
    if (!r || this.row !== row) return;
    this.stats = r;
    const cards = [
      ['min', r.min],
      ['max', r.max],
      ['mean', r.mean],
      ['std', r.std],
      ['zeros', r.zeros, 'int'],
      ['NaN', r.nan, 'int'],
      ['+Inf', r.posInf, 'int'],
      ['−Inf', r.negInf, 'int'],
    ];
    const statGrid = h(
      'dl',
      { class: 'stat-cards', 'data-testid': 'stats' },
      cards.map(([k, v, t]) =>
        h(
          'div',
          { class: `card ${t === 'int' && v > 0 && k !== 'zeros' ? 'warn' : ''}`, dataset: { stat: k } },
          h('dt', {}, k),
          h('dd', { title: v === null ? '' : String(v) }, t === 'int' ? fmtInt(v) : fmtNum(v)),
        ),
      ),
    );
    const part = r.rows
      ? `Rows ${fmtInt(r.rows[0])} to ${fmtInt(r.rows[1])} (end excluded) of ${fmtInt(row.shape[0])}. `
      : '';
    const note = h(
      'p',
      { class: 'note', 'data-testid': 'stats-note' },
      `${part}${r.complex ? 'Over real and imaginary parts. ' : ''}${fmtInt(r.finite)} finite values; ` +
        `read ${fmtBytes(r.bytesRead)} in ${fmtMs(r.ms)}.`,
    );
    const out = [statGrid, note];
    if (r.histogram) out.push(...this.#histogram(r.histogram, row));
    if (r.heatmap) out.push(...this.#heatmap(r.heatmap, row));
    if (r.grid?.cells.length) out.push(h('h3', {}, 'First values'), this.#grid(r.grid, row, r.rows?.[0] ?? 0));
    this.statsOut.replaceChildren(...out);
  }

  /** The histogram's heading, its log-scale toggle and its canvas (drawn on the next frame). */
  #histogram(histogram, row) {
    const canvas = h('canvas', { class: 'hist', 'aria-label': `Histogram of ${row.name}`, role: 'img' });
    const toggle = h(
      'label',
      { class: 'toggle' },
      h('input', {
        type: 'checkbox',
        checked: this.logHist,
        onchange: (e) => {
          this.logHist = e.target.checked;
          draw();
        },
      }),
      ' log scale',
    );
    const draw = () => drawHistogram(canvas, histogram, { width: this.#chartWidth(), log: this.logHist });
    requestAnimationFrame(draw);
    return [h('div', { class: 'chart-head' }, h('h3', {}, 'Histogram'), toggle), canvas];
  }

  /** The heatmap's heading, canvas (drawn on the next frame), legend and what it shows. */
  #heatmap(hm, row) {
    const canvas = h('canvas', { class: 'heatmap', role: 'img', 'aria-label': `Heatmap of ${row.name}` });
    const legend = h(
      'div',
      { class: 'legend' },
      h('span', { class: 'legend-lo' }),
      h('span', { class: 'legend-bar' }),
      h('span', { class: 'legend-hi' }),
    );
    const down = hm.rows !== hm.height || hm.cols !== hm.width;
    requestAnimationFrame(() => drawHeatmap(canvas, legend, hm, { maxCss: this.#chartWidth() }));
    return [
      h('h3', {}, 'Heatmap'),
      canvas,
      legend,
      h(
        'p',
        { class: 'note' },
        `${fmtInt(hm.rows)} × ${fmtInt(hm.cols)}${row.rank > 2 ? ' (leading dims flattened)' : ''}` +
          `${down ? `, block means on ${hm.height} × ${hm.width}` : ''}; ` +
          'colours clipped to the 1st–99th percentile.',
      ),
    ];
  }

  #chartWidth() {
    return Math.max(200, Math.min(520, this.el.clientWidth - 40));
  }

  /** The first values; `firstRow`: the row of the first-dimension range they start at. */
  #grid(grid, row, firstRow) {
    const skip = firstRow * row.shape.slice(1).reduce((a, b) => a * b, 1);
    const twoD = row.rank >= 2;
    const cell = (v) =>
      v === null
        ? ''
        : Array.isArray(v)
          ? `${fmtNum(v[0])}${v[1] < 0 ? '−' : '+'}${fmtNum(Math.abs(v[1]))}i`
          : fmtNum(v);
    const byRow = [];
    for (const c of grid.cells) (byRow[c.r] ??= [])[c.c] = c;
    const headRow = h(
      'tr',
      {},
      h('th', {}, ''),
      Array.from({ length: grid.cols }, (_, c) => h('th', { scope: 'col' }, twoD ? c : `+${c}`)),
    );
    const rows = byRow.map((cells, r) =>
      h(
        'tr',
        {},
        h('th', { scope: 'row' }, twoD ? r + skip / row.shape[row.shape.length - 1] : r * grid.cols + skip),
        cells.map((c) =>
          h(
            'td',
            { title: `[${twoD ? unravel(c.index + skip, row.shape).join(', ') : c.index + skip}] = ${c.value}` },
            cell(c.value),
          ),
        ),
      ),
    );
    return h(
      'div',
      { class: 'grid-wrap' },
      h('table', { class: 'values', 'data-testid': 'values' }, h('thead', {}, headRow), h('tbody', {}, rows)),
    );
  }

  async #diff() {
    this.diffOut.replaceChildren();
    const row = this.row;
    const r = await this.#run(this.diffSlot, 'diff', {
      a: tensorRef(this.model, row),
      b: tensorRef(this.pair.model, this.pair.row),
    });
    if (!r || this.row !== row) return;
    const at = r.argMax >= 0 ? unravel(r.complex ? Math.floor(r.argMax / 2) : r.argMax, row.shape) : null;
    const out = [
      h(
        'dl',
        { class: 'stat-cards', 'data-testid': 'diff' },
        [
          ['max |Δ|', r.maxAbs, 'maxAbs'],
          ['mean |Δ|', r.meanAbs, 'meanAbs'],
          ['RMS Δ', r.rms, 'rms'],
          ['max |Δ| / max |A|', r.maxAbsA ? r.maxAbs / r.maxAbsA : null, 'rel'],
          ['equal', r.equal, 'equal', true],
          ['differing', r.differing, 'differing', true],
        ].map(([k, v, key, int]) =>
          h(
            'div',
            { class: 'card', dataset: { stat: key } },
            h('dt', {}, k),
            h('dd', { title: v === null ? '' : String(v) }, int ? fmtInt(v) : fmtNum(v)),
          ),
        ),
      ),
      h(
        'p',
        { class: 'note' },
        `Δ = B − A over ${fmtInt(r.floats)} values${at ? `; largest at [${at.join(', ')}]` : ''}` +
          `${r.nanMismatch ? `; ${fmtInt(r.nanMismatch)} NaN in only one of them` : ''}; ` +
          `read ${fmtBytes(r.bytesRead)} in ${fmtMs(r.ms)}.`,
      ),
    ];
    if (r.histogram) {
      const canvas = h('canvas', { class: 'hist', role: 'img', 'aria-label': 'Histogram of differences' });
      out.push(h('h3', {}, 'Histogram of Δ'), canvas);
      requestAnimationFrame(() => drawHistogram(canvas, r.histogram, { width: this.#chartWidth(), log: true }));
    }
    this.diffOut.replaceChildren(...out);
  }

  async #exportNpy() {
    const row = this.row;
    const r = await this.#run(this.exportSlot, 'npy', { tensor: tensorRef(this.model, row) });
    if (!r) return;
    const safe = row.name.replace(/[^A-Za-z0-9._-]+/g, '_');
    download(r.blob, `${safe}.npy`);
    this.exportSlot.replaceChildren(
      h(
        'p',
        { class: 'note' },
        `Saved ${safe}.npy (${fmtBytes(r.blob.size)}, ${r.descr}${r.converted ? ', converted to float32' : ''}).`,
      ),
    );
  }
}
