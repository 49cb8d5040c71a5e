// "Save as…": writes the open model (one file or a sharded model) again, with the tensors chosen
// (all, or the current filter), renamed by a prefix rule, floats converted (BF16, F16, F32 or
// kept), as one file or Hub-style shards. The worker does the work (save-job.js); the page shows
// the result's size and tensor count first, then progress, bytes written and an estimate, and
// Cancel stops it. Files go through the File System Access API where the browser has it (a
// save picker for one file, a folder picker for shards); elsewhere each file is assembled in
// memory and downloaded, up to BLOB_LIMIT.

import { Cancelled } from './jobs.js';
import { download, h } from './dom.js';
import { fmtBytes, fmtInt } from './format.js';

/** The largest download assembled in memory where the browser cannot write files itself. */
export const BLOB_LIMIT = 2 ** 30;

let dialog = null;

const canPickFile = () => typeof window.showSaveFilePicker === 'function';
const canPickFolder = () => typeof window.showDirectoryPicker === 'function';

function baseName(model) {
  const n = (model.name ?? 'model').replace(/\.(safetensors|index\.json|json)$/i, '').replace(/\.safetensors$/i, '');
  return `${n || 'model'}-edited.safetensors`;
}

function fmtSeconds(s) {
  if (!Number.isFinite(s)) return '';
  if (s < 60) return `${Math.ceil(s)} s`;
  return `${Math.floor(s / 60)} min ${Math.ceil(s % 60)} s`;
}

/**
 * Opens the panel over `model`: `filtered()` gives the rows the list shows now; `jobs` runs the
 * worker's jobs.
 */
export function openSaveDialog({ model, filtered, jobs }) {
  dialog?.remove();
  const rowsAll = model.rows;
  const rowsFiltered = filtered();
  const sources = model.shards.filter((s) => s.header).map((s) => (s.src.kind === 'blob' ? { kind: 'blob', blob: s.src.blob } : { kind: 'url', url: s.src.url }));
  const field = (name, attrs = {}) => h('input', { name, ...attrs });
  const form = h(
    'form',
    { method: 'dialog', class: 'save-form' },
    h('h2', {}, 'Save as…'),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Tensors'),
      h('label', {}, field('which', { type: 'radio', value: 'all', checked: true }), ` all (${fmtInt(rowsAll.length)})`),
      h('label', {}, field('which', { type: 'radio', value: 'filter', disabled: rowsFiltered.length === rowsAll.length }), ` the current filter (${fmtInt(rowsFiltered.length)})`),
    ),
    h('fieldset', {}, h('legend', {}, 'Rename'), h('label', {}, 'replace the prefix ', field('from', { type: 'text', placeholder: 'model.', size: 14, class: 'mono' })), h('label', {}, ' with ', field('to', { type: 'text', placeholder: '(nothing)', size: 14, class: 'mono' }))),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Floats'),
      h('select', { name: 'convert', 'aria-label': 'Convert float tensors' }, h('option', { value: 'keep' }, 'keep their dtype'), ...['BF16', 'F16', 'F32'].map((d) => h('option', { value: d }, `convert to ${d}`))),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Output'),
      h('label', {}, field('output', { type: 'radio', value: 'file', checked: true }), ' one file ', field('name', { type: 'text', value: baseName(model), size: 28, class: 'mono', 'aria-label': 'File name' })),
      h('label', {}, field('output', { type: 'radio', value: 'shards' }), ' shards of at most ', field('shardSize', { type: 'text', value: '5GB', size: 7, class: 'mono', 'aria-label': 'Largest shard' })),
    ),
    h('p', { class: 'save-summary', role: 'status', 'aria-live': 'polite' }),
    h('p', { class: 'save-note' }),
    h('progress', { class: 'save-progress', max: 1, value: 0, hidden: true }),
    h('p', { class: 'save-status', role: 'status', 'aria-live': 'polite' }),
    h('div', { class: 'save-actions' }, h('button', { type: 'button', class: 'btn', value: 'cancel' }, 'Close'), h('button', { type: 'button', class: 'btn primary', value: 'save' }, 'Save')),
  );
  dialog = h('dialog', { id: 'save-dialog', class: 'save-dialog', 'aria-label': 'Save as', dataset: { state: 'idle' } }, form);
  document.body.append(dialog);
  const $ = (sel) => form.querySelector(sel);
  const [closeBtn, saveBtn] = form.querySelectorAll('.save-actions button');
  let plan = null;
  let running = null;
  let ticket = 0;

  const request = () => {
    const f = new FormData(form);
    const rows = f.get('which') === 'filter' ? rowsFiltered : rowsAll;
    const shards = f.get('output') === 'shards';
    const size = String(f.get('shardSize')).trim();
    return {
      sources,
      names: rows.map((r) => r.name),
      rename: f.get('from') ? [String(f.get('from')), String(f.get('to') ?? '')] : null,
      convert: String(f.get('convert')),
      maxShardSize: shards ? (/^\d+$/.test(size) ? Number(size) : size) : null,
      name: String(f.get('name')).trim() || baseName(model),
    };
  };

  const note = () => {
    const shards = new FormData(form).get('output') === 'shards';
    const direct = shards ? canPickFolder() : canPickFile();
    $('.save-note').textContent = direct
      ? `Written straight to the ${shards ? 'folder' : 'file'} you choose, a few MB at a time.`
      : `This browser cannot write files itself (no File System Access API): each file is assembled in memory and downloaded, up to ${fmtBytes(BLOB_LIMIT)}. For larger results use Chrome or Edge.`;
  };

  const summarize = async () => {
    const mine = ++ticket;
    plan = null;
    saveBtn.disabled = true;
    const summary = $('.save-summary');
    summary.classList.remove('error');
    summary.textContent = 'Computing the result’s size…';
    note();
    try {
      const p = await jobs.run('savePlan', { request: request() }).promise;
      if (mine !== ticket) return;
      plan = p;
      const files = p.files.length === 1 ? '' : ` in ${fmtInt(p.files.length)} files`;
      summary.textContent = `${fmtInt(p.tensors)} tensors · ${fmtBytes(p.total)}${files}`;
      dialog.dataset.total = String(p.total);
      dialog.dataset.files = p.files.map((f) => f.name).join('\n');
      saveBtn.disabled = p.tensors === 0;
    } catch (e) {
      if (mine !== ticket) return;
      summary.classList.add('error');
      summary.textContent = e.message;
    }
  };

  // Any change makes the summary stale: Save waits for the new one.
  let debounce = 0;
  const changed = (ms) => {
    clearTimeout(debounce);
    ticket++; // (a summary on its way is stale now)
    plan = null;
    saveBtn.disabled = true;
    debounce = setTimeout(summarize, ms);
  };
  // ('input' only: a text field's 'change' comes on blur, which a click on Save causes, and
  // would disable the button under the click.)
  form.addEventListener('input', (e) => changed(e.target.type === 'text' ? 150 : 0));

  const setRunning = (on) => {
    for (const el of form.querySelectorAll('input, select')) el.disabled = on;
    saveBtn.disabled = on;
    closeBtn.textContent = on ? 'Cancel' : 'Close';
  };

  const write = async () => {
    if (!plan) return;
    const req = request();
    const shards = req.maxShardSize !== null;
    const status = $('.save-status');
    // The pickers first: they need the click's user activation.
    let target;
    try {
      if (shards && canPickFolder()) target = { kind: 'directory', handle: await window.showDirectoryPicker({ mode: 'readwrite' }) };
      else if (!shards && canPickFile()) target = { kind: 'file', handle: await window.showSaveFilePicker({ suggestedName: req.name, types: [{ description: 'safetensors', accept: { 'application/octet-stream': ['.safetensors'] } }] }) };
      else if (Math.max(...plan.files.map((f) => f.size)) > BLOB_LIMIT) {
        status.textContent = `Too large to assemble in memory (over ${fmtBytes(BLOB_LIMIT)} a file) in this browser: use Chrome or Edge, which write files directly.`;
        dialog.dataset.state = 'error';
        return;
      } else target = { kind: 'blob' };
    } catch (e) {
      if (e?.name === 'AbortError') return; // the picker was dismissed
      throw e;
    }
    const bar = $('.save-progress');
    bar.hidden = false;
    bar.value = 0;
    setRunning(true);
    dialog.dataset.state = 'writing';
    const t0 = performance.now();
    running = jobs.run('save', { request: req, target }, {
      onProgress: (done, total) => {
        bar.value = total ? done / total : 0;
        const rate = done / ((performance.now() - t0) / 1000);
        const left = rate > 0 ? (total - done) / rate : Infinity;
        status.textContent = `Written ${fmtBytes(done)} of ${fmtBytes(total)}${done < total && done > 0 ? ` · about ${fmtSeconds(left)} left` : ''}`;
        dialog.dataset.written = String(done);
      },
    });
    try {
      const result = await running.promise;
      bar.value = 1;
      for (const f of result.files) if (f.blob) download(f.blob, f.name);
      status.textContent = `Saved ${result.files.length === 1 ? result.files[0].name : `${fmtInt(result.files.length)} files`} (${fmtBytes(result.files.reduce((n, f) => n + f.size, 0))}) in ${fmtSeconds((performance.now() - t0) / 1000)}.`;
      dialog.dataset.state = 'done';
    } catch (e) {
      const cancelled = e instanceof Cancelled;
      status.textContent = cancelled ? 'Cancelled: nothing was written.' : `Could not save: ${e.message}`;
      dialog.dataset.state = cancelled ? 'cancelled' : 'error';
    } finally {
      running = null;
      setRunning(false);
    }
  };

  saveBtn.addEventListener('click', () => void write());
  closeBtn.addEventListener('click', () => {
    if (running) running.cancel();
    else dialog.close();
  });
  dialog.addEventListener('cancel', (e) => {
    // Esc while writing cancels the write instead of hiding it.
    if (running) {
      e.preventDefault();
      running.cancel();
    }
  });
  dialog.showModal();
  void summarize();
  return dialog;
}
