// A throwaway TLS certificate for the test servers that speak HTTP/2 (browsers use HTTP/2 over TLS
// only): a fresh P-256 key and a self-signed certificate for 127.0.0.1, made at run time by the
// openssl command (scripts/setup.sh web installs it), so no private key lives in the tree.
// `spki` is what Chromium's --ignore-certificate-errors-spki-list takes: the base64 SHA-256 of
// the certificate's public key, so that Chromium trusts this one certificate and no other.

import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Makes a certificate for 127.0.0.1, valid for two days: `{ key, cert, spki }` (PEM, PEM, base64). */
export function testCertificate() {
  const dir = mkdtempSync(join(tmpdir(), 'st-tls-'));
  try {
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-days',
          '2',
          '-subj',
          '/CN=127.0.0.1',
          '-addext',
          'subjectAltName=IP:127.0.0.1',
          '-keyout',
          key,
          '-out',
          cert,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
    } catch (e) {
      const why =
        e.code === 'ENOENT'
          ? 'the openssl command is missing: run scripts/setup.sh web'
          : String(e.stderr ?? e.message).trim();
      throw new Error(`could not make the test certificate: ${why}`);
    }
    const pem = readFileSync(cert, 'utf8');
    const der = new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' });
    return { key: readFileSync(key, 'utf8'), cert: pem, spki: createHash('sha256').update(der).digest('base64') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
