/**
 * A full cook takes the plan an earlier cook stored (Intermediates/CookPlan.json) only while the
 * registry's records, the config and the planning code are the ones it was made from: any file
 * edited, added, deleted or touched, or a config change, and the cook plans again, and what it
 * plans (and ships) is what a fresh plan says. A damaged or foreign plan file is planned over.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Cooker } from '../../cook/Cooker.js';
import { primaryNameClashes } from '../../cook/cookRoots.js';
import { shippedFingerprints } from '../../cook/cookedOutputs.js';
import { PLAN_CARRY_FILE_NAME, PLAN_FILE_NAME, decodePlanCarry, encodePlanCarry, planKey, readStoredPlan, type PlanFacts } from '../../cook/planStore.js';
import type { CookPlan } from '../../cook/planCook.js';
import type { CookSummary } from '../../cook/Cooker.js';
import { hard, prop, soft } from '../../src/format/packageBuilder.js';
import { AssetRegistry } from '../../src/registry/AssetRegistry.js';
import { loadConfig } from '../../config/index.js';
import { hashString, initHash } from '../../src/util/hash.js';
import { asset, g, tempDir, writeFixture, writeProject } from './helpers.js';

const mesh = (n: number, label = `m${n}`) => ({ exports: [{ guid: g(0x100 + n), name: `Mesh${n}`, className: '/Script/Engine.CStaticMesh', properties: [prop.str('Label', label)] }] });
const main = (deps: number[], softDeps: number[] = []) => ({
  imports: [...deps.map((n) => hard(g(0x100 + n))), ...softDeps.map((n) => soft(g(0x100 + n)))],
  exports: [{ guid: g(1), name: 'Main', className: '/Script/Engine.CWorld', properties: [prop.str('Label', 'main')] }],
});
const config = (extra: Record<string, unknown> = {}) => ({
  name: 'Plans',
  cookRoots: ['/Game/Maps/Main', '/Game/Maps/Gone'],
  plugins: [{ name: 'Extra', path: 'Plugins/Extra', chunk: 'DLC1', cookRoots: ['/Extra/Quest'] }],
  ...extra,
});

let dir: string;
beforeAll(async () => {
  await initHash();
  dir = await tempDir('lc-plans-');
  await writeProject(dir, config(), {
    'Content/Maps/Main.lasset': main([0, 1, 9], [2]),
    'Content/Meshes/Mesh0.lasset': mesh(0),
    'Content/Meshes/Mesh1.lasset': mesh(1),
    'Content/Meshes/Mesh2.lasset': mesh(2),
    'Content/Meshes/Mesh3.lasset': mesh(3),
    'Content/Data/A/Rules.lasset': asset(g(2), 'Rules', { assetFlags: 1 }),
    'Content/Data/B/Rules.lasset': asset(g(3), 'Rules', { assetFlags: 1 }),
    'Content/UI/Hud.rml': { text: '<rml/>', guid: g(0x200) },
    'Plugins/Extra/Content/Quest.lasset': { imports: [hard(g(0x103))], exports: [{ guid: g(0x300), name: 'Quest', className: '/Script/Engine.CQuest' }] },
  });
});
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true });
});

type Facts = CookPlan & Partial<Pick<PlanFacts, 'roots' | 'missingRoots' | 'clashes' | 'fingerprints'>>;

/** Everything a cook takes from its plan, as plain data. */
function planData(p: Facts) {
  return {
    packages: p.packages.map((a) => [a.record.guid, a.record.file, a.chunk, a.via]),
    texts: p.textAssets.map((a) => [a.record.guid, a.chunk, a.via]),
    chunks: p.chunks,
    missing: p.missing.map((e) => [e.referrer.guid, e.guid, e.type]),
    softExcluded: p.softExcluded.map((e) => [e.referrer.guid, e.guid, e.type]),
    softOnly: p.softOnly,
    roots: p.roots,
    missingRoots: p.missingRoots,
    clashes: p.clashes?.map((c) => [c.name, c.records.map((r) => r.guid)]),
    fingerprints: p.fingerprints,
  };
}

/** Only what Cooker.lastPlan holds (the CookPlan part). */
const planOnly = ({ roots: _, missingRoots: __, clashes: ___, fingerprints: ____, ...rest }: ReturnType<typeof planData>) => rest;

/** A full cook: where its plan came from, that plan (Cooker.lastPlan) as data, and what it reported. */
async function cook() {
  const c = await Cooker.open({ projectDir: dir });
  try {
    const s = await c.cook({ report: false });
    return { from: c.lastPlanFrom, plan: planData(c.lastPlan!), summary: s };
  } finally {
    c.close();
  }
}

/** What planning from scratch says of the project as it is now, and what the plan file holds for it (undefined: none for it). */
async function freshPlan() {
  const c = await Cooker.open({ projectDir: dir });
  try {
    const p = c.plan();
    const fingerprints = shippedFingerprints([...p.packages, ...p.textAssets].map((a) => a.record));
    const fresh = planData({ ...p, clashes: primaryNameClashes({ all: () => p.records }, c.config), fingerprints });
    const key = planKey(c.config, c.registry.contentIdentity);
    const stored = key === undefined ? undefined : readStoredPlan(c.config.intermediatesDir, key, c.registry);
    return { fresh, stored: stored && planData(stored) };
  } finally {
    c.close();
  }
}

/** Before a change: cooks until the cook takes the stored plan (the plan file is the registry's as it is). */
async function settle() {
  let from = (await cook()).from;
  if (from !== 'stored') from = (await cook()).from;
  if (from !== 'stored') from = (await cook()).from;
  expect(from).toBe('stored');
}

/** Problems and per-asset outcomes of a cook, comparable across cooks. */
const outcome = (s: CookSummary) => ({
  problems: s.problems.map((p) => `${p.severity} ${p.code} ${p.file} ${p.message}`).sort(),
  assets: s.assetReports.map((a) => [a.guid, a.path, a.chunk, a.via, a.status]),
});

/**
 * After a change the next cook plans (`first`: 'planned'), or carries the stored plan over a change
 * that touches no planning fact ('carried'); either way what it uses is what planning from scratch
 * says, and it stores that plan under the registry's new identity, so the cook after it takes it
 * ('stored'). That cook reports what a cook that plans reports (the plan file removed).
 */
async function afterChange(first: 'planned' | 'carried' = 'planned') {
  const changed = await cook();
  expect(changed.from).toBe(first);
  const { fresh, stored } = await freshPlan();
  expect(changed.plan).toEqual(planOnly(fresh));
  // The whole of it (roots, missing roots, clashes, fingerprints too) is what the file holds now.
  expect(stored).toEqual(fresh);
  const next = await cook();
  expect(next.from).toBe('stored');
  expect(next.plan).toEqual(planOnly(fresh));
  expect(next.summary.cooked).toBe(0);
  await fsp.rm(path.join(dir, 'Intermediates', PLAN_FILE_NAME));
  const planned = await cook();
  expect(planned.from).toBe('planned');
  expect(planned.plan).toEqual(planOnly(fresh));
  expect(outcome(next.summary)).toEqual(outcome(planned.summary));
  return { fresh, changed: changed.summary };
}

const replansAfterChange = async () => (await afterChange('planned')).fresh;

describe('the stored cook plan', () => {
  it('is taken by a no-op cook, and equals planning again', async () => {
    // The first cook of all plans, and stores its plan under what its scan saved.
    const fresh = await replansAfterChange();
    expect(fs.existsSync(path.join(dir, 'Intermediates', PLAN_FILE_NAME))).toBe(true);
    // What the plan holds here: chunks, a soft-only asset, a missing dependency and root, a clash, a text asset.
    expect(fresh.chunks).toEqual(['Main', 'DLC1']);
    expect(fresh.softOnly).toBe(1);
    expect(fresh.missing).toEqual([[g(1), g(0x109), 0]]);
    expect(fresh.missingRoots).toEqual(['/Game/Maps/Gone']);
    expect(fresh.clashes).toEqual([['Rules', [g(2), g(3)]]]);
    expect(fresh.texts).toEqual([[g(0x200), 'Main', 'mount']]);
    expect((await cook()).from).toBe('stored');
  });

  it('a cook on the stored plan, without the report, never builds every record', async () => {
    await settle();
    // all() thaws and sorts every record: at a million assets seconds and tens of MiB that a no-op
    // on a stored plan does not need (the plan names its records; the size comes from the registry).
    const all = vi.spyOn(AssetRegistry.prototype, 'all');
    try {
      const c = await cook();
      expect(c.from).toBe('stored');
      expect(c.summary.cooked).toBe(0);
      expect(all).not.toHaveBeenCalled();
    } finally {
      all.mockRestore();
    }
  });

  it('a no-op on the stored plan with the report reuses the report body without building every record', async () => {
    await settle();
    const withReport = async () => {
      const c = await Cooker.open({ projectDir: dir });
      try {
        const s = await c.cook();
        return { from: c.lastPlanFrom, reused: s.report?.reused };
      } finally {
        c.close();
      }
    };
    // The first report after cooks without one builds its body (every record, for referrers).
    await withReport();
    // The body's key names the records by the registry's identity: nothing to thaw when it matches.
    const all = vi.spyOn(AssetRegistry.prototype, 'all');
    try {
      expect(await withReport()).toEqual({ from: 'stored', reused: true });
      expect(all).not.toHaveBeenCalled();
    } finally {
      all.mockRestore();
    }
  });

  it('is planned again when a package is edited (a new dependency)', async () => {
    await settle();
    await writeFixture(dir, 'Content/Maps/Main.lasset', main([0, 1, 3, 9], [2]));
    const fresh = await replansAfterChange();
    expect(fresh.packages.find((p) => p[0] === g(0x103))?.[2]).toBe('Main');
  });

  it('is planned again when a file is added (a missing dependency appears)', async () => {
    await settle();
    await writeFixture(dir, 'Content/Meshes/Mesh9.lasset', mesh(9));
    const fresh = await replansAfterChange();
    expect(fresh.missing).toEqual([]);
  });

  it('is planned again when a file is deleted', async () => {
    await settle();
    await fsp.rm(path.join(dir, 'Content/Meshes/Mesh1.lasset'));
    const fresh = await replansAfterChange();
    expect(fresh.missing).toEqual([[g(1), g(0x101), 0]]);
  });

  it('is carried over a file only touched (same bytes, new mtime)', async () => {
    await settle();
    const file = path.join(dir, 'Content/Meshes/Mesh0.lasset');
    const later = new Date(Date.now() + 5000);
    await fsp.utimes(file, later, later);
    expect((await afterChange('carried')).changed.cooked).toBe(0);
  });

  it('is carried over edits that change no planning fact (a property, a text asset), with new fingerprints', async () => {
    await settle();
    const before = (await freshPlan()).fresh;
    await writeFixture(dir, 'Content/Meshes/Mesh0.lasset', mesh(0, 'an edited label, longer than before'));
    await writeFixture(dir, 'Content/UI/Hud.rml', { text: '<rml><body/></rml>', guid: g(0x200) });
    const { fresh, changed } = await afterChange('carried');
    expect(changed.cooked).toBe(2);
    expect(fresh.packages).toEqual(before.packages);
    expect(fresh.fingerprints!.outputs).toBe(before.fingerprints!.outputs);
    expect(fresh.fingerprints!.registryInputs).not.toBe(before.fingerprints!.registryInputs);
  });

  it('a carry leaves the plan file as it is: a small carry file names it under the new key, also over several edits', async () => {
    await settle();
    const file = path.join(dir, 'Intermediates', PLAN_FILE_NAME);
    for (const label of ['first edit', 'second edit, longer', 'third']) {
      await writeFixture(dir, 'Content/Meshes/Mesh0.lasset', mesh(0, label));
      // Carried, equal to a fresh plan, and taken by the next no-op (afterChange) each time.
      await afterChange('carried');
      // afterChange ends by planning from scratch (plan file removed): carry from that plan next.
      await settle();
    }
    // Between a full plan and the no-op after a carry, the plan file was not rewritten.
    await writeFixture(dir, 'Content/Meshes/Mesh0.lasset', mesh(0, 'once more'));
    const stored = await fsp.readFile(file);
    expect((await cook()).from).toBe('carried');
    expect((await cook()).from).toBe('stored');
    expect(Buffer.compare(await fsp.readFile(file), stored)).toBe(0);
    expect(fs.existsSync(path.join(dir, 'Intermediates', PLAN_CARRY_FILE_NAME))).toBe(true);
    await writeFixture(dir, 'Content/Meshes/Mesh0.lasset', mesh(0));
  });

  it('a damaged carry, or one from another plan than the file holds, is planned over', async () => {
    await settle();
    const carry = path.join(dir, 'Intermediates', PLAN_CARRY_FILE_NAME);
    await writeFixture(dir, 'Content/Meshes/Mesh0.lasset', mesh(0, 'carry me'));
    expect((await cook()).from).toBe('carried');
    const good = await fsp.readFile(carry, 'utf8');
    const body = JSON.parse(good.slice(0, good.indexOf('\n'))) as { fingerprints: [string, string]; from: string };
    // Damaged: a fingerprint changed, the hash line kept.
    await fsp.writeFile(carry, good.replace(body.fingerprints[1], '0'.repeat(body.fingerprints[1].length)));
    let next = await cook();
    expect(next.from).toBe('planned');
    expect(next.plan).toEqual(planOnly((await freshPlan()).fresh));
    // Whole, but from a key the plan file was not stored under.
    await writeFixture(dir, 'Content/Meshes/Mesh0.lasset', mesh(0, 'carry me again'));
    expect((await cook()).from).toBe('carried');
    const again = decodePlanCarry(await fsp.readFile(carry, 'utf8'))!;
    await fsp.writeFile(carry, encodePlanCarry({ ...again, from: hashString('another plan') }));
    next = await cook();
    expect(next.from).toBe('planned');
    const { fresh, stored } = await freshPlan();
    expect(next.plan).toEqual(planOnly(fresh));
    expect(stored).toEqual(fresh);
    await writeFixture(dir, 'Content/Meshes/Mesh0.lasset', mesh(0));
  });

  it('is planned again for every change of a planning fact, each equal to a fresh plan', async () => {
    const changes: Array<[string, () => Promise<void>]> = [
      ['a dependency becomes hard', () => writeFixture(dir, 'Content/Maps/Main.lasset', main([0, 1, 9, 2]))],
      ['dependencies reordered', () => writeFixture(dir, 'Content/Maps/Main.lasset', main([1, 0, 9, 2]))],
      ['a dependency removed', () => writeFixture(dir, 'Content/Maps/Main.lasset', main([1, 9], [2]))],
      ['a GUID', () => writeFixture(dir, 'Content/Meshes/Mesh3.lasset', { exports: [{ guid: g(0x150), name: 'Mesh3', className: '/Script/Engine.CStaticMesh' }] })],
      ['a class', () => writeFixture(dir, 'Content/Meshes/Mesh1.lasset', { exports: [{ guid: g(0x101), name: 'Mesh1', className: '/Script/Engine.CSkeletalMesh', properties: [prop.str('Label', 'm1')] }] })],
      ['the primary flag off', () => writeFixture(dir, 'Content/Data/B/Rules.lasset', asset(g(3), 'Rules', { assetFlags: 0 }))],
      ['the primary flag on', () => writeFixture(dir, 'Content/Meshes/Mesh2.lasset', asset(g(0x102), 'Mesh2', { assetFlags: 1 }))],
      ['a file renamed', () => fsp.rename(path.join(dir, 'Content/Meshes/Mesh0.lasset'), path.join(dir, 'Content/Meshes/Mesh0b.lasset'))],
    ];
    await settle();
    for (const [what, change] of changes) {
      await change();
      const changed = await cook();
      expect({ what, from: changed.from }).toEqual({ what, from: 'planned' });
      const { fresh, stored } = await freshPlan();
      expect(changed.plan).toEqual(planOnly(fresh));
      expect(stored).toEqual(fresh);
      expect((await cook()).from).toBe('stored');
    }
    // The project as the other cases expect it.
    await fsp.rename(path.join(dir, 'Content/Meshes/Mesh0b.lasset'), path.join(dir, 'Content/Meshes/Mesh0.lasset'));
    await writeFixture(dir, 'Content/Maps/Main.lasset', main([0, 1, 9], [2]));
    for (const n of [1, 2, 3]) await writeFixture(dir, `Content/Meshes/Mesh${n}.lasset`, mesh(n));
    await writeFixture(dir, 'Content/Data/B/Rules.lasset', asset(g(3), 'Rules', { assetFlags: 1 }));
  });

  it('is planned again when a text asset sidecar changes its GUID', async () => {
    await settle();
    await fsp.writeFile(path.join(dir, 'Content/UI/Hud.rml.lmeta'), JSON.stringify({ guid: g(0x201) }));
    const fresh = await replansAfterChange();
    expect(fresh.texts).toEqual([[g(0x201), 'Main', 'mount']]);
  });

  it('is planned again when the config changes (a root, soft references, a plugin)', async () => {
    await settle();
    await fsp.writeFile(path.join(dir, 'lumina-cook.json'), JSON.stringify(config({ cookRoots: ['/Game/Maps/Main', '/Game/Meshes/Mesh2'] })));
    expect((await replansAfterChange()).roots!.map((r) => r.packagePath)).toContain('/Game/Meshes/Mesh2');
    await fsp.writeFile(path.join(dir, 'lumina-cook.json'), JSON.stringify(config({ cook: { soft: 'exclude' } })));
    expect((await replansAfterChange()).softExcluded).toEqual([[g(1), g(0x102), 1]]);
    await fsp.writeFile(path.join(dir, 'lumina-cook.json'), JSON.stringify(config({ plugins: [{ name: 'Extra', path: 'Plugins/Extra', chunk: 'DLC1', enabled: false }] })));
    expect((await replansAfterChange()).chunks).toEqual(['Main']);
  });

  it('a damaged plan file, or one made under another key, is planned over', async () => {
    const file = path.join(dir, 'Intermediates', PLAN_FILE_NAME);
    await cook();
    const good = await fsp.readFile(file, 'utf8');
    const damaged = good.replace(g(0x100), g(0x103));
    expect(damaged).not.toBe(good);
    await fsp.writeFile(file, damaged);
    await replansAfterChange();
    // Whole and of this key, but a file named with another record's GUID (two records swapped):
    // the lookup by file must check the GUID it finds.
    const whole = await fsp.readFile(file, 'utf8');
    const body = JSON.parse(whole.slice(0, whole.indexOf('\n'))) as { guids: string };
    expect(body.guids.length).toBeGreaterThanOrEqual(64);
    body.guids = body.guids.slice(32, 64) + body.guids.slice(0, 32) + body.guids.slice(64);
    const swapped = JSON.stringify(body);
    await fsp.writeFile(file, `${swapped}\n${hashString(swapped)}\n`);
    await replansAfterChange();
    // A valid file of another key: a plan made before an edit, put back after it.
    const before = await fsp.readFile(file, 'utf8');
    await writeFixture(dir, 'Content/Maps/Main.lasset', main([0, 9], [2]));
    await replansAfterChange();
    await fsp.writeFile(file, before);
    const next = await cook();
    expect(next.from).toBe('planned');
    expect(next.plan).toEqual(planOnly((await freshPlan()).fresh));
  });
});

describe('AssetRegistry.contentIdentity', () => {
  it("names the cache a full scan leaves saved (what a fresh open then has), nothing before a scan or after an update's change", async () => {
    const open = async () => AssetRegistry.open({ config: loadConfig(dir).config, logProblems: false });
    const a = await open();
    expect(a.contentIdentity).toBeUndefined();
    await a.scan();
    const first = a.contentIdentity;
    a.close();
    const b = await open();
    await b.scan();
    const id = b.contentIdentity;
    expect(id).toMatch(/^[0-9a-f]{16}:/);
    expect(id).toBe(first);
    // An update that reads nothing keeps it; one that reads a changed file ends it.
    await b.updateFiles([path.join(dir, 'Content/Meshes/Mesh2.lasset')]);
    expect(b.contentIdentity).toBe(id);
    await writeFixture(dir, 'Content/Meshes/Mesh2.lasset', mesh(2, 'changed'));
    await b.updateFiles([path.join(dir, 'Content/Meshes/Mesh2.lasset')]);
    expect(b.contentIdentity).toBeUndefined();
    expect(b.lastScanChanges).toBeUndefined();
    // A full scan names what the update saved (a journal frame): a new identity, the one a fresh open has.
    await b.scan();
    const after = b.contentIdentity;
    expect(after).toMatch(/^[0-9a-f]{16}:[0-9a-f]+$/);
    expect(after).not.toBe(id);
    b.close();
    const c = await open();
    await c.scan();
    expect(c.contentIdentity).toBe(after);
    // A scan that reads a changed file names what it saved, and lists the change against where it started.
    await writeFixture(dir, 'Content/Meshes/Mesh2.lasset', mesh(2, 'changed again'));
    await c.scan();
    expect(c.contentIdentity).toMatch(/^[0-9a-f]{16}:[0-9a-f]+$/);
    expect(c.contentIdentity).not.toBe(after);
    expect(c.lastScanChanges?.from).toBe(after);
    expect(c.lastScanChanges?.files.map((f) => [f.before?.guid, f.after?.guid, f.before?.hash === f.after?.hash])).toEqual([[g(0x102), g(0x102), false]]);
    const saved = c.contentIdentity;
    c.close();
    const d = await open();
    await d.scan();
    expect(d.contentIdentity).toBe(saved);
    expect(d.lastScanChanges).toEqual({ from: saved, files: [] });
    d.close();
  });
});
