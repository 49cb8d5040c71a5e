// A TCP port for a program the tests start that cannot be told to pick its own (nginx,
// WebKitWebDriver).

import { createServer } from 'node:net';

/**
 * A port on 127.0.0.1 that nothing listens on now. Another process may take it before the
 * program binds it: callers retry on a clash.
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}
