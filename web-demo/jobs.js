// The page's side of the worker: numbered jobs with progress callbacks and cancel. A worker that
// dies (a crash, an out-of-memory) fails its jobs with a message and is started again.

export class Cancelled extends Error {
  constructor() {
    super('cancelled');
    this.name = 'Cancelled';
  }
}

export class Jobs {
  constructor(url = new URL('./worker.js', import.meta.url)) {
    this.url = url;
    this.seq = 0;
    this.pending = new Map();
    this.#start();
  }

  #start() {
    this.worker = new Worker(this.url, { type: 'module' });
    this.worker.onmessage = (e) => this.#message(e.data);
    this.worker.onerror = (e) => {
      e.preventDefault?.();
      const msg = e.message || 'the worker failed to load or crashed';
      for (const p of this.pending.values()) p.reject(new Error(`worker: ${msg}`));
      this.pending.clear();
      this.worker.terminate();
      this.#start();
    };
  }

  #message(m) {
    const p = this.pending.get(m.id);
    if (!p) return;
    if (m.type === 'progress') p.onProgress?.(m.done, m.total, m.phase);
    else if (m.type === 'part') p.onPart?.(m.part);
    else {
      this.pending.delete(m.id);
      if (m.type === 'result') p.resolve(m.result);
      else if (m.error.name === 'Cancelled') p.reject(new Cancelled());
      else p.reject(Object.assign(new Error(m.error.message), m.error));
    }
  }

  /**
   * Starts a job; returns {id, promise, cancel}. `onPart` takes the pieces of its answer that
   * the worker sends before the answer itself.
   */
  run(type, payload, { onProgress, onPart } = {}) {
    const id = ++this.seq;
    const promise = new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress, onPart });
    });
    this.worker.postMessage({ type, id, ...payload });
    return {
      id,
      promise,
      cancel: () => this.worker.postMessage({ type: 'cancel', id }),
    };
  }
}
