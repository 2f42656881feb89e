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
import { decodeActionResult, encodeActionResult } from '../../cook/remote/actionResult.js';
import { sha256Hex } from '../../cook/remote/RemoteCacheClient.js';
import { COOKED_OUTPUT, MAX_CONSECUTIVE_ERRORS, SHADER_OUTPUT } from '../../cook/remote/RemoteCookCache.js';
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
/** The server's action keys whose one output is `output` (packages or shader permutations), sorted. */
const acKeysOf = (output: string) =>
  [...server.store.keys()]
    .filter((k) => k.startsWith('/ac/') && decodeActionResult(server.store.get(k)!).outputs[0].path === output)
    .sort();
const blobOf = (ac: string) => `/cas/${decodeActionResult(server.store.get(ac)!).outputs[0].hash}`;

describe('a lying remote cache', () => {
  let reference: Map<string, Buffer>;
  let published = 0;
  let permutations = 0;

  it('publishes through keep-alive sockets, never more requests in flight than the bound', async () => {
    const a = await machine({ write: true }, 0);
    const s = await cookProject({ projectDir: a });
    expect(s.ok).toBe(true);
    published = s.remoteCache!.published;
    expect(published).toBeGreaterThanOrEqual(8);
    // Every compiled shader permutation is published too, in its own action entry.
    permutations = s.shaders.permutations;
    expect(permutations).toBeGreaterThanOrEqual(5);
    expect(s.shaders.compiled).toBe(permutations);
    expect(s.remoteCache!.shaders).toMatchObject({ lookups: permutations, misses: permutations, published: permutations });
    expect(acKeysOf(COOKED_OUTPUT).length).toBe(published);
    expect(acKeysOf(SHADER_OUTPUT).length).toBe(permutations);
    reference = await readPaks(a);
    expect(server.stats.maxInFlight).toBeLessThanOrEqual(16);
    // Per entry: the lookup (GET ac, a miss), HEAD ac (right before writing: never over an
    // existing entry), PUT ac; per distinct blob (two permutations may compile alike, and may be
    // published at the same moment) one HEAD cas and one PUT cas; all on at most 16 sockets.
    const casCount = [...server.store.keys()].filter((k) => k.startsWith('/cas/')).length;
    expect(casCount).toBeLessThan(published + permutations);
    expect(server.stats.requests).toBe(3 * (published + permutations) + 2 * casCount);
    expect(server.stats.connections).toBeLessThanOrEqual(16);
  });

  it('catches every lie, cooks those assets locally, and ships the same paks', async () => {
    const acKeys = acKeysOf(COOKED_OUTPUT);
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
    expect(s.shaders).toMatchObject({ fetched: permutations, compiled: 0 });
    expect(s.remoteCache!.shaders).toMatchObject({ lookups: permutations, hits: permutations });
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

  it("a shader blob that is cut short, flipped, another permutation's, invalid SPIR-V or no entry at all is compiled locally, never packed", async () => {
    server.lies.clear();
    const all = acKeysOf(SHADER_OUTPUT);
    const blob = (ac: string) => server.store.get(blobOf(ac))!;
    const entryLie = (ac: string, bytes: Buffer) => {
      const original = decodeActionResult(server.store.get(ac)!).outputs[0];
      const hash = sha256Hex(bytes);
      server.store.set(`/cas/${hash}`, bytes);
      server.lies.set(ac, { kind: 'foreign', bytes: Buffer.from(encodeActionResult([{ ...original, hash, size: bytes.byteLength }])) });
    };
    // A well-formed entry naming a valid module in the CAS, of another entry point: a fragment
    // shader's code for a vertex permutation.
    const vertex = all.find((k) => blob(k).includes('VSMain') && !blob(k).includes('PSMain'))!;
    const fragment = all.find((k) => blob(k).includes('PSMain') && !blob(k).includes('VSMain'))!;
    expect(vertex && fragment).toBeTruthy();
    // Lies about a blob are per path: only code no other permutation shares is cut or flipped.
    const unique = all.filter((k) => k !== vertex && k !== fragment && all.filter((o) => blobOf(o) === blobOf(k)).length === 1);
    const [truncated, flipped] = unique;
    const [invalid, garbage] = all.filter((k) => ![vertex, fragment, truncated, flipped].includes(k));
    expect([truncated, flipped, invalid, garbage].every(Boolean)).toBe(true);
    entryLie(vertex, blob(fragment));
    server.lies.set(blobOf(truncated), { kind: 'truncated' });
    server.lies.set(blobOf(flipped), { kind: 'flipped' });
    // Well-formed all the way (entry, blob in the CAS, hash and size right, SPIR-V magic and the
    // right entry point), but its id bound says no id may exist: only spirv-val can tell.
    const bad = Buffer.from(blob(invalid));
    bad.writeUInt32LE(1, 12);
    entryLie(invalid, bad);
    server.lies.set(garbage, { kind: 'foreign', bytes: Buffer.from('\x08\x96\x01not an ActionResult at all\xff\xff') });

    const c = await machine({}, 0);
    const s = await cookProject({ projectDir: c });
    expect(s.ok).toBe(true);
    expect(s.shaders).toMatchObject({ permutations, fetched: permutations - 5, compiled: 5, failed: 0 });
    expect(s.remoteCache).toMatchObject({ hits: published, shaders: { lookups: permutations, hits: permutations - 5 }, failures: { integrity: 5, timeout: 0, reset: 0, status: 0 }, disabled: false });
    expect(await readPaks(c)).toEqual(reference);
    const w = remoteWarnings(s).map((p) => p.message);
    expect(w.length).toBe(5);
    expect(w.some((m) => /shader blob is unusable: declares no vertex entry point "VSMain" \(entry points: 4:PSMain\)/.test(m))).toBe(true);
    expect(w.some((m) => /shader blob is unusable: spirv-val: /.test(m))).toBe(true);
    expect(w.filter((m) => /blob has \d+ bytes, expected \d+|blob hashes to sha256|is not an ActionResult/.test(m)).length).toBe(3);
  }, 120_000);
});
