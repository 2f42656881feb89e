/**
 * Nothing bad ships: against a real server that lies (truncated, flipped and foreign bytes, an
 * action entry of garbage or of another asset, a body that drips past the deadline, a reset
 * mid-body), every lie is caught and cooked locally, and the paks are byte-identical to a cook that
 * never saw the server. A server that fails every request turns the cache off after a short run of
 * failures, with one warning, and the cook still succeeds.
 */
import fsp from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookProject, type CookSummary } from '../../cook/cookProject.js';
import { decodeActionResult } from '../../cook/remote/actionResult.js';
import { MAX_CONSECUTIVE_ERRORS } from '../../cook/remote/RemoteCookCache.js';
import { copySample, readPaks } from './servers.js';
import { startLyingServer, type LyingServer } from './lyingServer.js';

let server: LyingServer;
const made: string[] = [];
beforeAll(async () => {
  server = await startLyingServer();
});
afterAll(async () => {
  await server?.close();
  await Promise.all(made.map((d) => fsp.rm(d, { recursive: true, force: true })));
});

/** One asset at a time, so which answer each lookup gets does not depend on scheduling. */
async function machine(remoteCache: Record<string, unknown>, concurrency = 1): Promise<string> {
  const dir = await copySample({ textures: { encoder: 'rgba8' }, cook: { concurrency }, remoteCache: { url: `${server.url}/lies`, timeoutMs: 5000, ...remoteCache } });
  made.push(dir);
  return dir;
}

const remoteWarnings = (s: CookSummary) => s.problems.filter((p) => p.code === 'REMOTE_CACHE');

describe('a lying remote cache', () => {
  let reference: Map<string, Buffer>;
  let published = 0;

  it('publishes through keep-alive sockets, never more requests in flight than the bound', async () => {
    const a = await machine({ write: true }, 0);
    const s = await cookProject({ projectDir: a });
    expect(s.ok).toBe(true);
    published = s.remoteCache!.published;
    expect(published).toBeGreaterThanOrEqual(8);
    reference = await readPaks(a);
    expect(server.stats.maxInFlight).toBeLessThanOrEqual(16);
    // Per asset: the lookup (GET ac, a miss), then HEAD cas, PUT cas, HEAD ac (right before
    // writing: never over an existing entry), PUT ac; all on at most 16 sockets.
    expect(server.stats.requests).toBe(5 * published);
    expect(server.stats.connections).toBeLessThanOrEqual(16);
  });

  it('catches every lie, cooks those assets locally, and ships the same paks', async () => {
    const acKeys = [...server.store.keys()].filter((k) => k.startsWith('/ac/')).sort();
    const blobOf = (ac: string) => `/cas/${decodeActionResult(server.store.get(ac)!).outputs[0].hash}`;
    server.lies.set(blobOf(acKeys[0]), { kind: 'truncated' });
    server.lies.set(blobOf(acKeys[1]), { kind: 'flipped' });
    server.lies.set(blobOf(acKeys[2]), { kind: 'foreign', bytes: server.store.get(blobOf(acKeys[7]))! });
    server.lies.set(blobOf(acKeys[3]), { kind: 'slow' });
    server.lies.set(blobOf(acKeys[4]), { kind: 'reset' });
    server.lies.set(acKeys[5], { kind: 'foreign', bytes: Buffer.from('\x08\x96\x01not an ActionResult at all\xff\xff') });
    // A well-formed entry and a blob that hashes right, but the cook of another asset.
    server.lies.set(acKeys[6], { kind: 'foreign', bytes: server.store.get(acKeys[7])! });

    const b = await machine({});
    const s = await cookProject({ projectDir: b });
    expect(s.ok).toBe(true);
    expect(s.remoteCache).toMatchObject({
      lookups: published,
      hits: published - 7,
      failures: { integrity: 5, timeout: 1, reset: 1, status: 0 },
      disabled: false,
    });
    expect(s.fetched).toBe(published - 7);
    expect(await readPaks(b)).toEqual(reference);
    // Five failures named one by one, then the count.
    const w = remoteWarnings(s);
    expect(w.length).toBe(6);
    expect(w[5].message).toBe('7 remote cache requests failed (1 timeout, 1 reset, 5 integrity); those assets were cooked locally');
    // Each named one says what was wrong (which five come first depends on the plan's order).
    const why = /blob has \d+ bytes, expected \d+|blob hashes to sha256 [0-9a-f]{64}, not|more than the \d+ expected|is not an ActionResult|another asset's cook|no complete answer within 5000 ms|body was cut off|failed: E/;
    for (const x of w.slice(0, 5)) expect(x.message).toMatch(why);

    // What B's own cache holds is as good: with the server gone it re-cooks nothing and ships the same.
    const again = await cookProject({ projectDir: b, remoteCache: false });
    expect(again.cached).toBe(again.assets);
    expect(await readPaks(b)).toEqual(reference);
  }, 120_000);

  it('turns itself off after a run of failures: one warning, a bounded number of requests, the cook succeeds', async () => {
    server.lies.clear();
    server.failAll = 503;
    const before = server.stats.requests;
    const c = await machine({});
    const s = await cookProject({ projectDir: c });
    server.failAll = undefined;
    expect(s.ok).toBe(true);
    expect(s.remoteCache).toMatchObject({ hits: 0, disabled: true, failures: { status: MAX_CONSECUTIVE_ERRORS } });
    expect(server.stats.requests - before).toBe(MAX_CONSECUTIVE_ERRORS);
    expect(remoteWarnings(s).filter((p) => p.message.includes('off for the rest of this run')).length).toBe(1);
    expect(await readPaks(c)).toEqual(reference);
  });
});
