// A virtualized, sortable, keyboard-usable table: only the rows in view exist in the DOM, so
// 100,000+ rows scroll smoothly. Arrow keys, Page Up/Down, Home/End move the active row;
// Enter opens it.

let nextId = 0;

export class VirtualTable {
  /**
   * columns: [{key, label, width (CSS grid track), align?, text(row) → string, title?(row),
   *            cls?(row) → class, compare?(a, b)}]
   */
  constructor(container, { columns, rowHeight = 30, label, onOpen, onActive, empty = 'No rows' }) {
    this.allColumns = columns;
    this.columns = columns;
    this.rowHeight = rowHeight;
    this.onOpen = onOpen;
    this.onActive = onActive;
    this.emptyText = empty;
    this.rows = [];
    this.view = [];
    this.sort = null; // {key, dir}
    this.ranks = new Map();
    this.active = -1;
    this.id = `vt${nextId++}`;
    this.pool = [];

    this.viewport = document.createElement('div');
    this.viewport.className = 'vt';
    this.viewport.tabIndex = 0;
    this.viewport.setAttribute('role', 'grid');
    this.viewport.setAttribute('aria-label', label);
    this.viewport.style.setProperty('--vt-row', `${rowHeight}px`);
    this.head = document.createElement('div');
    this.head.className = 'vt-head';
    this.head.setAttribute('role', 'row');
    this.body = document.createElement('div');
    this.body.className = 'vt-body';
    this.body.setAttribute('role', 'rowgroup');
    this.emptyEl = document.createElement('div');
    this.emptyEl.className = 'vt-empty';
    this.viewport.append(this.head, this.body, this.emptyEl);
    container.replaceChildren(this.viewport);
    this.#layout(columns);

    let queued = false;
    const schedule = () => {
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => {
        queued = false;
        this.#fit();
        this.renderRows();
      });
    };
    this.schedule = schedule;
    this.viewport.addEventListener('scroll', schedule, { passive: true });
    new ResizeObserver(schedule).observe(this.viewport);
    this.viewport.addEventListener('keydown', (e) => this.#key(e));
    this.body.addEventListener('click', (e) => {
      const rowEl = e.target.closest('.vt-row');
      if (!rowEl) return;
      const k = Number(rowEl.dataset.k);
      this.setActive(k, false);
      this.onOpen?.(this.view[k]);
    });
  }

  static #minWidth(cols) {
    return cols.reduce((sum, c) => sum + (Number(/(\d+)px/.exec(c.width)?.[1]) || 80), 0);
  }

  /**
   * Columns that fit the width: columns with a `drop` rank are left out, lowest rank first, while
   * the minimum widths add up to more than there is room for. What still does not fit scrolls.
   */
  #fit() {
    const width = this.viewport.clientWidth;
    if (!width) return;
    let cols = this.allColumns;
    const droppable = cols.filter((c) => c.drop).sort((a, b) => a.drop - b.drop);
    while (VirtualTable.#minWidth(cols) > width && droppable.length) {
      const gone = droppable.shift();
      cols = cols.filter((c) => c !== gone);
    }
    if (cols.length !== this.columns.length) this.#layout(cols);
  }

  /** Builds the header for these columns; header and rows share one grid and minimum width. */
  #layout(cols) {
    this.columns = cols;
    this.viewport.style.setProperty('--vt-cols', cols.map((c) => c.width).join(' '));
    this.viewport.style.setProperty('--vt-min', `${VirtualTable.#minWidth(cols)}px`);
    this.head.replaceChildren();
    for (const col of cols) {
      const cell = document.createElement('div');
      cell.setAttribute('role', 'columnheader');
      cell.className = `vt-cell ${col.align === 'right' ? 'num' : ''}`;
      cell.dataset.key = col.key;
      const state = this.sort?.key === col.key ? (this.sort.dir === 1 ? 'ascending' : 'descending') : 'none';
      cell.setAttribute('aria-sort', state);
      const btn = document.createElement('button');
      btn.type = 'button';
      btn.textContent = col.label;
      btn.dataset.key = col.key;
      btn.addEventListener('click', () => this.sortBy(col.key));
      cell.append(btn);
      this.head.append(cell);
    }
    for (const el of this.pool) el.remove();
    this.pool = [];
  }

  /** Replaces the rows (already filtered); the current sort is kept. */
  setRows(rows, { keepScroll = false } = {}) {
    this.rows = rows;
    this.#applySort();
    if (!keepScroll) this.viewport.scrollTop = 0;
    this.active = this.view.length ? Math.min(Math.max(this.active, 0), this.view.length - 1) : -1;
    if (!keepScroll) this.active = this.view.length ? 0 : -1;
    this.body.style.height = `${this.view.length * this.rowHeight}px`;
    this.viewport.setAttribute('aria-rowcount', String(this.view.length + 1));
    this.emptyEl.textContent = this.view.length ? '' : this.emptyText;
    this.renderRows();
  }

  /** Sort by a column: first click ascending, second descending, third back to file order. */
  sortBy(key, dir) {
    if (dir === undefined) {
      if (this.sort?.key !== key) dir = 1;
      else dir = this.sort.dir === 1 ? -1 : 0;
    }
    this.sort = dir ? { key, dir } : null;
    for (const cell of this.head.children) {
      const s = this.sort?.key === cell.dataset.key ? (this.sort.dir === 1 ? 'ascending' : 'descending') : 'none';
      cell.setAttribute('aria-sort', s);
    }
    this.setRows(this.rows, { keepScroll: false });
  }

  /** The rank of every row (by `row.i`) under one column's order, computed once. */
  #rank(key) {
    let rank = this.ranks.get(key);
    if (rank) return rank;
    const col = this.allColumns.find((c) => c.key === key);
    const all = this.allRows ?? this.rows;
    const sorted = all.slice().sort(col.compare);
    rank = new Int32Array(all.length);
    sorted.forEach((r, k) => {
      rank[r.i] = k;
    });
    this.ranks.set(key, rank);
    return rank;
  }

  /** The full row set the ranks refer to (set once per model). */
  setAllRows(rows) {
    this.allRows = rows;
    this.ranks.clear();
  }

  #applySort() {
    if (!this.sort) {
      this.view = this.rows;
      return;
    }
    const rank = this.#rank(this.sort.key);
    const dir = this.sort.dir;
    this.view = this.rows.slice().sort((a, b) => dir * (rank[a.i] - rank[b.i]));
  }

  renderRows() {
    const h = this.rowHeight;
    const top = this.viewport.scrollTop; // rows sit below the sticky header
    const height = this.viewport.clientHeight;
    const first = Math.max(0, Math.floor(top / h) - 4);
    const last = Math.min(this.view.length, Math.ceil((top + height) / h) + 4);
    const need = Math.max(0, last - first);
    while (this.pool.length < need) {
      const el = document.createElement('div');
      el.className = 'vt-row';
      el.setAttribute('role', 'row');
      for (const col of this.columns) {
        const c = document.createElement('div');
        c.className = `vt-cell ${col.align === 'right' ? 'num' : ''} c-${col.key}`;
        c.setAttribute('role', 'gridcell');
        el.append(c);
      }
      this.pool.push(el);
      this.body.append(el);
    }
    for (let p = 0; p < this.pool.length; p++) {
      const el = this.pool[p];
      const k = first + p;
      if (p >= need) {
        el.hidden = true;
        continue;
      }
      el.hidden = false;
      const row = this.view[k];
      el.dataset.k = String(k);
      el.id = `${this.id}-r${k}`;
      el.style.transform = `translateY(${k * h}px)`;
      el.setAttribute('aria-rowindex', String(k + 2));
      el.classList.toggle('active', k === this.active);
      el.setAttribute('aria-selected', k === this.active ? 'true' : 'false');
      this.columns.forEach((col, j) => {
        const cell = el.children[j];
        const text = col.text(row);
        if (cell.textContent !== text) cell.textContent = text;
        cell.title = col.title ? col.title(row) : text;
        if (col.cls) cell.className = `vt-cell ${col.align === 'right' ? 'num' : ''} c-${col.key} ${col.cls(row)}`;
      });
    }
    if (this.active >= first && this.active < last)
      this.viewport.setAttribute('aria-activedescendant', `${this.id}-r${this.active}`);
    else this.viewport.removeAttribute('aria-activedescendant');
  }

  setActive(k, scroll = true) {
    if (!this.view.length) return;
    this.active = Math.max(0, Math.min(this.view.length - 1, k));
    if (scroll) {
      const h = this.rowHeight;
      const headH = this.head.offsetHeight;
      const y = this.active * h;
      const vp = this.viewport;
      const visible = vp.clientHeight - headH;
      if (y < vp.scrollTop) vp.scrollTop = y;
      else if (y + h > vp.scrollTop + visible) vp.scrollTop = y + h - visible;
    }
    this.renderRows();
    this.onActive?.(this.view[this.active]);
  }

  /** Makes the row with this `i` active and visible, if it is in the view. */
  reveal(i) {
    const k = this.view.findIndex((r) => r.i === i);
    if (k >= 0) this.setActive(k);
  }

  #key(e) {
    if (e.target !== this.viewport) return;
    const page = Math.max(1, Math.floor((this.viewport.clientHeight - this.head.offsetHeight) / this.rowHeight) - 1);
    const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page };
    if (e.key in moves) this.setActive(this.active + moves[e.key]);
    else if (e.key === 'Home') this.setActive(0);
    else if (e.key === 'End') this.setActive(this.view.length - 1);
    else if (e.key === 'Enter' || e.key === ' ') {
      if (this.active >= 0) this.onOpen?.(this.view[this.active]);
    } else return;
    e.preventDefault();
  }
}
