/**
 * Two "machines" (two checkouts of the sample project in different folders, each with its own
 * Saved and Intermediates) sharing one nginx WebDAV cache: what one publishes the other uses, the
 * paks come out byte-identical, and keys depend on nothing machine-specific.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookProject } from '../../cook/cookProject.js';
import { runCli } from '../helpers/runCli.js';
import { Daemon } from '../../watch/Daemon.js';
import { copySample, readPaks, startNginx, type CacheServer } from './servers.js';

let server: CacheServer;
const made: string[] = [];
beforeAll(async () => {
  server = await startNginx();
});
afterAll(async () => {
  await server?.stop();
  await Promise.all(made.map((d) => fsp.rm(d, { recursive: true, force: true })));
});

async function machine(config: Record<string, unknown>): Promise<string> {
  const dir = await copySample({ textures: { encoder: 'rgba8' }, ...config });
  made.push(dir);
  return dir;
}

async function files(dir: string): Promise<string[]> {
  return (await fsp.readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

describe('remote cache between two machines (nginx WebDAV)', () => {
  it('a second checkout cooks nothing itself and writes the same paks', async () => {
    const remoteCache = { url: `${server.url}/ci`, write: true };
    const a = await machine({ remoteCache });
    const sa = await cookProject({ projectDir: a });
    expect(sa.ok).toBe(true);
    const texts = await textAssets(a);
    const packages = sa.assets - texts;
    expect(texts).toBeGreaterThan(0);
    expect(packages).toBeGreaterThan(0);
    expect(sa.remoteCache).toMatchObject({ lookups: packages, hits: 0, misses: packages, published: packages, disabled: false });
    // Blobs and entries both landed, under the instance prefix: one per package and one per
    // shader permutation (two permutations may compile to the same blob).
    const published = sa.remoteCache!.published;
    const permutations = sa.shaders.permutations;
    expect(permutations).toBeGreaterThan(0);
    expect(sa.remoteCache!.shaders).toMatchObject({ lookups: permutations, misses: permutations, published: permutations });
    expect((await fsp.readdir(path.join(server.root, 'ci/ac'))).length).toBe(published + permutations);
    const blobs = (await fsp.readdir(path.join(server.root, 'ci/cas'))).length;
    expect(blobs).toBeGreaterThan(published);
    expect(blobs).toBeLessThanOrEqual(published + permutations);

    // Machine B only reads (the default) and lives in another folder.
    const b = await machine({ remoteCache: { url: `${server.url}/ci` } });
    const sb = await cookProject({ projectDir: b });
    expect(sb.ok).toBe(true);
    expect(sb.fetched).toBe(published);
    expect(sb.cooked).toBe(texts);
    expect(sb.remoteCache).toMatchObject({ hits: published, published: 0, shaders: { hits: permutations, published: 0 }, disabled: false });
    expect(sb.shaders).toMatchObject({ fetched: permutations, compiled: 0 });
    expect(Object.values(sb.remoteCache!.failures).every((n) => n === 0)).toBe(true);
    expect(await readPaks(b)).toEqual(await readPaks(a));

    // B's local cache took the remote cooks in: a re-cook is all local hits, no request.
    const sb2 = await cookProject({ projectDir: b });
    expect(sb2.cached).toBe(sb2.assets);
    expect(sb2.remoteCache!.requests).toBe(0);
  });

  it('a new salt disowns every entry; an existing entry is never overwritten', async () => {
    const a = await machine({ remoteCache: { url: `${server.url}/salted`, write: true, salt: 'gen-1' } });
    const s1 = await cookProject({ projectDir: a });
    const entries = await fsp.readdir(path.join(server.root, 'salted/ac'));
    const before = new Map(await Promise.all(entries.map(async (k) => [k, await fsp.readFile(path.join(server.root, 'salted/ac', k))] as const)));
    // Packages and shader permutations alike.
    const shaders = s1.shaders.permutations;
    expect(before.size).toBe(s1.remoteCache!.published + shaders);

    // Same content, same salt, clean machine that writes: everything comes from the cache, nothing is re-published.
    const b = await machine({ remoteCache: { url: `${server.url}/salted`, write: true, salt: 'gen-1' } });
    const s2 = await cookProject({ projectDir: b });
    expect(s2.fetched).toBe(before.size - shaders);
    expect(s2.shaders.fetched).toBe(shaders);
    expect(s2.remoteCache!.published + s2.remoteCache!.shaders.published).toBe(0);

    // Another salt: nothing matches, and the new generation is written beside the old one.
    const c = await machine({ remoteCache: { url: `${server.url}/salted`, write: true, salt: 'gen-2' } });
    const s3 = await cookProject({ projectDir: c });
    expect(s3.fetched + s3.shaders.fetched).toBe(0);
    expect(s3.remoteCache!.published + s3.remoteCache!.shaders.published).toBe(before.size);
    const after = await fsp.readdir(path.join(server.root, 'salted/ac'));
    expect(after.length).toBe(2 * before.size);
    for (const [k, bytes] of before) expect(await fsp.readFile(path.join(server.root, 'salted/ac', k))).toEqual(bytes);
    expect(await readPaks(c)).toEqual(await readPaks(a));
  });

  it("the watch daemon's first start after a pull fetches instead of cooking", async () => {
    const a = await machine({ remoteCache: { url: `${server.url}/daemon`, write: true } });
    const published = (await cookProject({ projectDir: a })).remoteCache!.published;
    const b = await machine({ remoteCache: { url: `${server.url}/daemon` } });
    const d = await Daemon.start({ projectDir: b, consolidateAfterMs: 0 });
    try {
      const last = d.status().lastCook!;
      expect(last.ok).toBe(true);
      expect(last.summary).toMatchObject({ fetched: published, cooked: await textAssets(b) });
    } finally {
      await d.stop();
    }
    expect(await readPaks(b)).toEqual(await readPaks(a));
  });

  it('the CLI: --remote-cache reads, --remote-cache-write publishes, credentials in the URL are refused', async () => {
    const a = await machine({});
    const url = `${server.url}/cli`;
    const w = await runCli(['cook', '--project', a, '--remote-cache', url, '--remote-cache-write', '--json'], { timeoutMs: 120_000 });
    expect(w.code).toBe(0);
    const published = JSON.parse(w.stdout).remoteCache.published;
    expect(published).toBeGreaterThan(0);

    const b = await machine({});
    const r = await runCli(['cook', '--project', b, '--remote-cache', url], { timeoutMs: 120_000 });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${published} from the remote cache`);
    expect(r.stdout).toContain(`remote cache ${url}: ${published} of ${published} lookups hit, 0 published`);

    const bad = await runCli(['cook', '--project', b, '--remote-cache', 'http://ci:secret@127.0.0.1:1/']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('[USAGE] --remote-cache must not carry credentials: set LUMINA_REMOTE_CACHE_TOKEN or LUMINA_REMOTE_CACHE_BASIC in the environment');
    // Two whole CLI cooks, each allowed 120 s above: the suite's 60 s default for a test cut it
    // short on a loaded machine (60.1 s at load ~22), before either cook's own limit.
  }, 300_000);
});

/** Text assets shipped by a cook: copied locally, never shared through the remote cache. */
async function textAssets(project: string): Promise<number> {
  return (await files(path.join(project, 'Saved/Cooked'))).filter((f) => /\.(rml|rcss|luau)$/.test(f)).length;
}
