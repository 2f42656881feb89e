/**
 * The Bazel HTTP cache protocol against a real server (nginx WebDAV): CAS and AC round trips, an
 * instance prefix, HEAD-before-PUT so an existing action entry is never overwritten, and the
 * ActionResult wire format with REAPI's field numbers.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeActionResult, encodeActionResult } from '../../cook/remote/actionResult.js';
import { authorizationFromEnv, RemoteCacheClient, sha256Hex } from '../../cook/remote/RemoteCacheClient.js';
import { startNginx, type CacheServer } from './servers.js';

let server: CacheServer;
beforeAll(async () => {
  server = await startNginx();
});
afterAll(async () => {
  await server?.stop();
});

describe('RemoteCacheClient against nginx WebDAV', () => {
  it('stores a blob under /cas/<sha256> and reads it back checked', async () => {
    const c = new RemoteCacheClient({ url: server.url, timeoutMs: 10_000 });
    try {
      const bytes = Buffer.from('cooked bytes '.repeat(1000));
      const hash = sha256Hex(bytes);
      expect(await c.getCas(hash, bytes.byteLength)).toBeUndefined();
      expect(await c.putCas(bytes)).toEqual({ hash, uploaded: true });
      // HEAD first: the second upload of the same bytes sends nothing.
      expect(await c.putCas(bytes)).toEqual({ hash, uploaded: false });
      expect(await fsp.readFile(path.join(server.root, 'cas', hash))).toEqual(bytes);
      expect(await c.getCas(hash, bytes.byteLength)).toEqual(bytes);
      // Asked for another size, the same bytes are not accepted.
      await expect(c.getCas(hash, bytes.byteLength + 1)).rejects.toMatchObject({ kind: 'integrity' });
      // The same new bytes put twice at once (two permutations that compile alike): one HEAD, one PUT.
      const twice = Buffer.from('shader bytes '.repeat(100));
      const before = c.traffic.requests;
      const both = await Promise.all([c.putCas(twice), c.putCas(twice)]);
      expect(both.map((r) => r.uploaded).sort()).toEqual([false, true]);
      expect(c.traffic.requests - before).toBe(2);
    } finally {
      c.close();
    }
  });

  it('never overwrites an action entry, and keeps the instance prefix in the path', async () => {
    const c = new RemoteCacheClient({ url: `${server.url}/studio-a`, timeoutMs: 10_000 });
    try {
      const key = sha256Hex(Buffer.from('an action'));
      const first = encodeActionResult([{ path: 'cooked.lckd', hash: sha256Hex(Buffer.from('x')), size: 1, properties: { 'lumina.cookMs': '5' } }]);
      const second = encodeActionResult([{ path: 'cooked.lckd', hash: sha256Hex(Buffer.from('y')), size: 1, properties: {} }]);
      expect(await c.putAc(key, first)).toBe(true);
      expect(await c.putAc(key, second)).toBe(false);
      expect(await fsp.readFile(path.join(server.root, 'studio-a/ac', key))).toEqual(Buffer.from(first));
      expect(Buffer.from((await c.getAc(key))!)).toEqual(Buffer.from(first));
      expect(await c.has('ac', key)).toBe(true);
      expect(await c.has('ac', sha256Hex(Buffer.from('other')))).toBe(false);
      // HEAD+PUT, HEAD (found: no PUT), GET, HEAD, HEAD.
      expect(c.traffic.requests).toBe(6);
    } finally {
      c.close();
    }
  });
});

describe('ActionResult', () => {
  it('uses REAPI field numbers: output_files = 2, Digest {hash = 1, size_bytes = 2}, node_properties = 7', () => {
    const hash = 'ab'.repeat(32);
    const bytes = encodeActionResult([{ path: 'p', hash, size: 300, properties: { k: 'v' } }]);
    // ActionResult.output_files (2, LEN) -> OutputFile.path (1, LEN) "p", digest (2, LEN) -> hash (1), size_bytes (2, varint 300)
    const hex = Buffer.from(bytes).toString('hex');
    expect(hex.startsWith('12')).toBe(true);
    expect(hex).toContain(`0a0170` + `12` + (2 + 64 + 1 + 2).toString(16).padStart(2, '0') + '0a40' + Buffer.from(hash).toString('hex') + '10ac02');
    expect(hex).toContain('3a080a060a016b120176'); // node_properties (7) { properties (1) { name "k", value "v" } }
    expect(decodeActionResult(bytes)).toEqual({ exitCode: 0, outputs: [{ path: 'p', hash, size: 300, properties: { k: 'v' } }] });
  });

  it('reads the JSON form bazel-remote serves', () => {
    const hash = 'cd'.repeat(32);
    const json = JSON.stringify({ outputFiles: [{ path: 'cooked.lckd', digest: { hash, sizeBytes: '42' } }], executionMetadata: { worker: '10.0.0.7' } });
    expect(decodeActionResult(Buffer.from(json))).toEqual({ exitCode: 0, outputs: [{ path: 'cooked.lckd', hash, size: 42, properties: {} }], worker: '10.0.0.7' });
  });

  it('rejects an entry without a SHA-256 digest', () => {
    expect(() => decodeActionResult(encodeActionResult([{ path: 'p', hash: 'nothex', size: 1, properties: {} }]))).toThrow(/no SHA-256 digest/);
  });
});

describe('credentials', () => {
  it('come only from the environment', () => {
    expect(authorizationFromEnv({})).toBeUndefined();
    expect(authorizationFromEnv({ LUMINA_REMOTE_CACHE_TOKEN: 't0k' })).toBe('Bearer t0k');
    expect(authorizationFromEnv({ LUMINA_REMOTE_CACHE_BASIC: 'ci:pw' })).toBe(`Basic ${Buffer.from('ci:pw').toString('base64')}`);
  });
});
