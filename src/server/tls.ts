/**
 * TLS material: the operator's files, or a self-signed certificate for localhost generated on
 * first start and kept in the data folder, so restarts (and clients that pinned it) keep working.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import type { Config } from '../config/config.js';
import { ConfigError } from '../config/config.js';

export interface TlsMaterial {
  readonly key: string;
  readonly cert: string;
  /** The certificate file, for `curl --cacert`. */
  readonly certFile: string;
  readonly generated: boolean;
}

async function selfSigned(dataDir: string): Promise<TlsMaterial> {
  const dir = join(dataDir, 'tls');
  const certFile = join(dir, 'localhost-cert.pem');
  const keyFile = join(dir, 'localhost-key.pem');
  if (existsSync(certFile) && existsSync(keyFile)) {
    return {
      key: readFileSync(keyFile, 'utf8'),
      cert: readFileSync(certFile, 'utf8'),
      certFile,
      generated: false,
    };
  }
  const now = new Date();
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(now.getTime() - 86_400_000),
    notAfterDate: new Date(now.getTime() + 825 * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(keyFile, pems.private, { mode: 0o600 });
  writeFileSync(certFile, pems.cert, { mode: 0o644 });
  return { key: pems.private, cert: pems.cert, certFile, generated: true };
}

/** The TLS key and certificate to serve with, or `undefined` for plain HTTP. */
export async function tlsMaterial(config: Config): Promise<TlsMaterial | undefined> {
  switch (config.tls.mode) {
    case 'off':
      return undefined;
    case 'self-signed':
      return selfSigned(config.dataDir);
    case 'files': {
      const { certFile, keyFile } = config.tls;
      const read = (path: string, setting: string) => {
        try {
          return readFileSync(path, 'utf8');
        } catch (error) {
          throw new ConfigError(`${setting}: cannot read ${path}: ${(error as Error).message}`);
        }
      };
      return {
        cert: read(certFile, 'PRICEPOINT_TLS_CERT'),
        key: read(keyFile, 'PRICEPOINT_TLS_KEY'),
        certFile,
        generated: false,
      };
    }
  }
}
