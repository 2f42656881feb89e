/**
 * A sharded CI cook: three shard processes on three checkouts (each its own Saved and
 * Intermediates) publish to one nginx cache, an assembling cook on a fourth checkout fetches every
 * package, and its paks are byte-identical to a plain single-machine cook. Default texture encoder.
 */
import { createHash } from 'node:crypto';
import fsp from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CookSummary } from '../../cook/cookProject.js';
import { parseShard, selectShard } from '../../cook/remote/shardPlan.js';
import type { PlannedAsset } from '../../cook/planCook.js';
import { runCli } from '../helpers/runCli.js';
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

async function checkout(): Promise<string> {
  const dir = await copySample();
  made.push(dir);
  return dir;
}

async function cook(args: string[]): Promise<CookSummary> {
  const r = await runCli(['cook', '--json', ...args], { timeoutMs: 300_000 });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as CookSummary;
}

describe('cook --shard i/N, then cook --assemble', () => {
  it('three shards and an assembly write the same paks as one machine', async () => {
    const url = `${server.url}/shards`;
    const [m1, m2, m3, assembler, single] = await Promise.all([checkout(), checkout(), checkout(), checkout(), checkout()]);
    // The plain single-machine cook first: its Saved/CookCosts.json is the recorded cook cost
    // table the shards balance by, committed at each checkout's root (the same bytes on every agent).
    const plain = await cook(['--project', single]);
    const costs = await fsp.readFile(`${single}/Saved/CookCosts.json`);
    const recorded = Object.keys(JSON.parse(costs.toString()).costs as Record<string, number>);
    for (const m of [m1, m2, m3]) await fsp.writeFile(`${m}/CookCosts.json`, costs);
    // One after another: CI agents are separate machines, and three basisu-running cooks at once
    // would only load this 2-core machine for the other suites running beside this one.
    const shards: CookSummary[] = [];
    for (const [i, m] of [m1, m2, m3].entries()) shards.push(await cook(['--project', m, '--remote-cache', url, '--shard', `${i + 1}/3`]));
    // A shard writes no paks: the assembly does.
    for (const m of [m1, m2, m3]) await expect(fsp.readdir(`${m}/Saved/Paks`)).rejects.toMatchObject({ code: 'ENOENT' });
    // Three processes, one split: the same table and the same assignment everywhere.
    const tableHash = createHash('sha256').update(costs).digest('hex');
    for (const s of shards) expect(s.shard).toMatchObject({ costTable: tableHash, recorded: recorded.length, assignment: shards[0].shard!.assignment });
    const shares = shards.map((s) => s.shard!.assets);
    for (const n of shares) expect(n).toBeGreaterThan(0);
    const packages = shares.reduce((a, b) => a + b, 0);
    // Disjoint shares that cover the plan: every package was published exactly once.
    expect(shards.reduce((a, s) => a + s.remoteCache!.published, 0)).toBe(packages);
    // The shader permutations are split too: each shard compiles and publishes its share.
    const permutations = shards.reduce((n, s) => n + s.shaders.permutations, 0);
    for (const s of shards) expect(s.shaders.permutations).toBeGreaterThan(0);
    expect(shards.reduce((n, s) => n + s.remoteCache!.shaders.published, 0)).toBe(permutations);

    const a = await cook(['--project', assembler, '--remote-cache', url, '--assemble']);
    expect(a.ok).toBe(true);
    expect(a.fetched).toBe(packages);
    expect(a.cooked).toBe(a.assets - packages); // only the text assets, which are copied
    // Every permutation came from the shards, none was compiled here.
    expect(a.shaders).toMatchObject({ permutations, fetched: permutations, compiled: 0, failed: 0 });
    expect(recorded.length).toBe(packages);
    expect(plain.assets).toBe(a.assets);
    // The assembly records every package's cost too: the time its shard published for it.
    const assembled = JSON.parse(await fsp.readFile(`${assembler}/Saved/CookCosts.json`, 'utf8')).costs as Record<string, number>;
    expect(Object.keys(assembled)).toEqual(recorded);
    expect(plain.shaders).toMatchObject({ permutations, compiled: permutations });
    // The whole ShaderCache.bin (each chunk pak's own is compared with the paks below).
    const shaderCache = await fsp.readFile(`${assembler}/Saved/Cooked/ShaderCache.bin`);
    expect(shaderCache.byteLength).toBeGreaterThan(1000);
    expect(shaderCache.equals(await fsp.readFile(`${single}/Saved/Cooked/ShaderCache.bin`))).toBe(true);
    const paks = await readPaks(assembler);
    expect([...paks.keys()]).toEqual(['Foliage.pak', 'Main.pak']);
    expect(paks).toEqual(await readPaks(single));
  }, 600_000);

  it('--assemble without a remote cache, or a bad --shard, is a usage error', async () => {
    const m = await checkout();
    const r1 = await runCli(['cook', '--project', m, '--assemble']);
    expect(r1.code).toBe(2);
    expect(r1.stderr).toContain("[USAGE] --assemble fetches the shards' cooks from a remote cache, but none is set to read");
    const r2 = await runCli(['cook', '--project', m, '--shard', '4/3', '--remote-cache', server.url]);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toContain('[USAGE] --shard "4/3" must be i/N with 1 <= i <= N');
    const r3 = await runCli(['cook', '--project', m, '--shard', '1/3', '--remote-cache', server.url, '--shard-costs', 'Nowhere.json']);
    expect(r3.code).toBe(2);
    expect(r3.stderr).toMatch(/\[USAGE\] --shard-costs .*Nowhere\.json cannot be read/);
    const r4 = await runCli(['cook', '--project', m, '--shard-costs', 'CookCosts.json']);
    expect(r4.code).toBe(2);
    expect(r4.stderr).toContain('[USAGE] --shard-costs balances a sharded cook: pass it with --shard i/N');
  });
});

describe('selectShard', () => {
  const asset = (n: number, size: number, className = '/Script/Engine.CStaticMesh'): PlannedAsset =>
    ({ record: { guid: n.toString(16).padStart(32, '0'), size, className }, chunk: 'Main', via: 'hard' }) as unknown as PlannedAsset;

  it('splits into disjoint shares that cover everything, independent of input order, balanced by cost', () => {
    const assets = Array.from({ length: 200 }, (_, i) => asset(i, 1000 + ((i * 7919) % 50_000), i % 10 === 0 ? '/Script/Engine.CTexture' : undefined));
    const shares = [0, 1, 2].map((index) => selectShard(assets, { index, count: 3 }));
    const seen = shares.flat().map((a) => a.record.guid);
    expect(new Set(seen).size).toBe(200);
    expect(seen.length).toBe(200);
    const reversed = [...assets].reverse();
    for (let i = 0; i < 3; i++) expect(new Set(selectShard(reversed, { index: i, count: 3 }).map((a) => a.record.guid))).toEqual(new Set(shares[i].map((a) => a.record.guid)));
    const cost = (s: PlannedAsset[]) => s.reduce((t, a) => t + 4096 + (a.record.className === '/Script/Engine.CTexture' ? 16 : 1) * a.record.size, 0);
    const costs = shares.map(cost);
    const biggest = Math.max(...assets.map((a) => cost([a])));
    expect(Math.max(...costs) - Math.min(...costs)).toBeLessThanOrEqual(biggest);
  });

  it('parses i/N (1-based)', () => {
    expect(parseShard('2/3')).toEqual({ index: 1, count: 3 });
    expect(() => parseShard('0/3')).toThrow(/must be i\/N/);
    expect(() => parseShard('x')).toThrow(/must be i\/N/);
  });
});
