// The module tree: tensor names split at dots (model.layers.17.mlp.up_proj.weight), with
// tensor, parameter and byte totals per subtree, children in numeric-aware order (layer 2 before
// layer 10). Nodes render lazily: a subtree's children are built when it is first opened.

import { fmtBytes, fmtCount, fmtInt, naturalCompare } from './format.js';

/** Builds the tree from rows ({name, params, bytes, i}). A name may be a leaf and a prefix at once. */
export function buildTree(rows) {
  const root = newRoot();
  for (const r of rows) addRow(root, r);
  return root;
}

/** The same, in slices of `sliceMs`, yielding to the page between them (100,000 rows stay smooth). */
export async function buildTreeSliced(rows, { sliceMs = 12 } = {}) {
  const root = newRoot();
  let i = 0;
  while (i < rows.length) {
    const until = performance.now() + sliceMs;
    do addRow(root, rows[i++]);
    while (i < rows.length && (i & 255 || performance.now() < until));
    if (i < rows.length) await new Promise((r) => setTimeout(r, 0));
  }
  return root;
}

function newRoot() {
  return { label: '', path: '', children: new Map(), tensors: 0, params: 0, bytes: 0, row: null };
}

function addRow(root, r) {
  let node = root;
  node.tensors++;
  node.params += r.params;
  node.bytes += r.bytes;
  for (const part of r.name.split('.')) {
    let child = node.children.get(part);
    if (!child) {
      const path = node.path ? `${node.path}.${part}` : part;
      child = { label: part, path, children: new Map(), tensors: 0, params: 0, bytes: 0, row: null };
      node.children.set(part, child);
    }
    child.tensors++;
    child.params += r.params;
    child.bytes += r.bytes;
    node = child;
  }
  node.row = r;
}

/** Children in display order: numeric-aware by label. */
export function sortedChildren(node) {
  return [...node.children.values()].sort((a, b) => naturalCompare(a.label, b.label));
}

const MAX_CHILDREN = 400;

/**
 * Renders the tree into `container` as nested <details> (keyboard-usable for free: Tab, Enter,
 * Space). `onSelect(node)` fires for a subtree (filter the list to it) or a tensor (open it).
 */
export class TreeView {
  constructor(container, { onPrefix, onTensor }) {
    this.container = container;
    this.onPrefix = onPrefix;
    this.onTensor = onTensor;
  }

  render(root) {
    this.container.replaceChildren();
    const ul = document.createElement('ul');
    ul.className = 'tree';
    ul.setAttribute('role', 'tree');
    this.#fill(ul, root, 0);
    this.container.append(ul);
    // Open the first levels while they are small, so the structure shows at a glance.
    let level = [...ul.querySelectorAll(':scope > li > details')];
    for (let depth = 0; depth < 3 && level.length && level.length <= 4; depth++) {
      const next = [];
      for (const d of level) {
        d.fill();
        d.open = true;
        next.push(...d.querySelectorAll(':scope > ul > li > details'));
      }
      level = next;
    }
  }

  #fill(ul, node, depth) {
    const kids = sortedChildren(node);
    for (const child of kids.slice(0, MAX_CHILDREN)) ul.append(this.#item(child, depth));
    if (kids.length > MAX_CHILDREN) {
      const li = document.createElement('li');
      li.className = 'tree-more';
      li.textContent = `… ${fmtInt(kids.length - MAX_CHILDREN)} more — filter the list to find them`;
      ul.append(li);
    }
  }

  #label(node) {
    const span = document.createElement('span');
    span.className = 'tree-label';
    const name = document.createElement('span');
    name.className = 'tree-name';
    name.textContent = node.label;
    const stat = document.createElement('span');
    stat.className = 'tree-stat';
    stat.textContent = node.children.size
      ? `${fmtCount(node.params)} · ${fmtInt(node.tensors)}`
      : fmtCount(node.params);
    const tensors = `${fmtInt(node.tensors)} tensor${node.tensors === 1 ? '' : 's'}`;
    stat.title = `${fmtInt(node.params)} parameters, ${fmtBytes(node.bytes)}, ${tensors}`;
    span.append(name, stat);
    return span;
  }

  #item(node, depth) {
    const li = document.createElement('li');
    li.setAttribute('role', 'treeitem');
    if (node.children.size === 0) {
      const btn = document.createElement('button');
      btn.type = 'button';
      btn.className = 'tree-leaf';
      btn.append(this.#label(node));
      btn.title = node.path;
      btn.addEventListener('click', () => this.onTensor(node.row));
      li.append(btn);
      return li;
    }
    const details = document.createElement('details');
    const summary = document.createElement('summary');
    summary.append(this.#label(node));
    const filter = document.createElement('button');
    filter.type = 'button';
    filter.className = 'tree-filter';
    filter.textContent = 'list';
    filter.title = `Show only ${node.path}.* in the tensor list`;
    filter.setAttribute('aria-label', `Show only ${node.path} in the tensor list`);
    filter.addEventListener('click', (e) => {
      e.preventDefault();
      e.stopPropagation();
      this.onPrefix(node);
    });
    summary.append(filter);
    details.append(summary);
    let filled = false;
    const ul = document.createElement('ul');
    ul.setAttribute('role', 'group');
    details.fill = () => {
      if (filled) return;
      filled = true;
      if (node.row) ul.append(this.#item({ ...node, label: '(itself)', children: new Map() }, depth + 1));
      this.#fill(ul, node, depth + 1);
      details.append(ul);
    };
    details.addEventListener('toggle', () => details.open && details.fill());
    li.append(details);
    return li;
  }
}
