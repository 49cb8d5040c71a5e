// The webgpu entry's bookkeeping that needs no GPU, against a stand-in
// device that keeps WebGPU's error scopes (a stack per device; an error
// goes to the innermost scope of its filter): concurrent uploads each get
// their own scopes' errors; usage flags the upload cannot have are refused.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SafeTensors, SafeTensorsError } from 'safetensors-nano';
import { toGPUBuffer } from 'safetensors-nano/webgpu';
import { tensorFile } from '../lib/format.js';

// A device whose createBuffer runs out of memory above `oomAbove` bytes.
function standInDevice(oomAbove) {
  const scopes = [];
  const buffer = (d) => ({
    ...d,
    destroyed: false,
    destroy() {
      this.destroyed = true;
    },
  });
  return {
    limits: { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 30 },
    features: new Set(),
    pushErrorScope(filter) {
      scopes.push({ filter, error: null });
    },
    popErrorScope() {
      const scope = scopes.pop();
      if (scope === undefined) return Promise.reject(new Error('popErrorScope with no scope'));
      return new Promise((resolve) => setTimeout(() => resolve(scope.error), 1));
    },
    createBuffer(d) {
      if (d.size > oomAbove) {
        const scope = scopes.findLast((s) => s.filter === 'out-of-memory');
        if (scope !== undefined) scope.error ??= { message: `out of memory for ${d.size} bytes` };
      }
      return buffer(d);
    },
    queue: { writeBuffer() {}, onSubmittedWorkDone: async () => {} },
    scopes,
  };
}

const st = SafeTensors.fromBytes(
  tensorFile([
    ['big', 'U8', [4096], new Uint8Array(4096)],
    ['small', 'U8', [16], new Uint8Array(16)],
  ]),
);

test('concurrent uploads each see their own error scopes: the one out of memory fails, the other succeeds', async () => {
  const device = standInDevice(1024);
  const [big, small] = await Promise.allSettled([
    toGPUBuffer(device, st.tensor('big')),
    toGPUBuffer(device, st.tensor('small')),
  ]);
  assert.equal(big.status, 'rejected', 'the upload out of memory resolved');
  assert.ok(
    big.reason instanceof SafeTensorsError && big.reason.kind === 'GpuLimitExceeded' && big.reason.tensor === 'big',
    String(big.reason),
  );
  assert.equal(small.status, 'fulfilled', String(small.reason));
  assert.equal(small.value.size, 16);
  assert.equal(device.scopes.length, 0);
});

test('usage with MAP_READ or MAP_WRITE is InvalidArgument, before a buffer is made', async () => {
  for (const usage of [0x1, 0x2, 0x2 | 0x4]) {
    let made = 0;
    const device = standInDevice(Infinity);
    const create = device.createBuffer;
    device.createBuffer = (d) => {
      if (d.label === 'small') made++;
      return create(d);
    };
    await assert.rejects(
      toGPUBuffer(device, st.tensor('small'), { usage }),
      (e) => e instanceof SafeTensorsError && e.kind === 'InvalidArgument',
      `usage ${usage}`,
    );
    assert.equal(made, 0);
  }
});
