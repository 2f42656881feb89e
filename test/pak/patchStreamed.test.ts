/**
 * The patch step at a million assets holds neither side whole: the release as a ReleaseContent
 * (parsed from release.json's text entry by entry), the new content walked one folder at a time.
 * These check that the streamed forms mean exactly what the whole ones did.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashHex, initHash, xxh64 } from '../../src/util/hash.js';
import { buildPatchPak } from '../../pak/buildPatch.js';
import { collectSources, listFiles, walkFiles } from '../../pak/collectSources.js';
import { comparePathBytes } from '../../pak/pakFormat.js';
import { PakReader } from '../../pak/PakReader.js';
import { ReleaseContent } from '../../pak/releaseContent.js';
import { readReleaseManifest, resolveRelease, writeReleaseManifest, type ReleasePak } from '../../pak/releaseManifest.js';
import type { PakSource } from '../../pak/writePak.js';
import { caught, tempDirEach } from './helpers.js';

beforeAll(initHash);

let dir: string;
tempDirEach((d) => (dir = d));

const hex = (n: number) => n.toString(16).padStart(16, '0');
const entry = (p: string, n: number, method: 0 | 1 | 2 = 1) => ({ path: p, rawSize: method === 2 ? 0 : n, xxh64: method === 2 ? hex(0) : hex(n), method });

async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [p, text] of Object.entries(files)) {
    const f = path.join(root, ...p.slice(1).split('/'));
    await fsp.mkdir(path.dirname(f), { recursive: true });
    await fsp.writeFile(f, text);
  }
}

describe('walkFiles', () => {
  it('yields every file in path byte order, where a folder sorts as its name plus "/"', async () => {
    // Names where folder-name order and path byte order differ: "a.b" < "a/x" < "a0" < "a~", and non-ASCII after all of them.
    const names = ['/a.b', '/a/x', '/a/y/z', '/a-c', '/a0', '/a~', '/ab/c', '/Ü/q', '/\u{1F600}/r', '/\uFFFD', '/A', '/a b'];
    await writeFiles(dir, Object.fromEntries(names.map((n) => [n, n])));
    await fsp.writeFile(path.join(dir, 'a', 'x.lctmp-1-ab'), 'in progress');
    const walked: string[] = [];
    for await (const f of walkFiles(dir)) {
      walked.push(f.path);
      expect(await fsp.readFile(f.file, 'utf8')).toBe(f.path);
    }
    expect(walked).toEqual([...names].sort(comparePathBytes));
    expect((await listFiles(dir)).map((f) => f.path)).toEqual(walked);
  });
});

describe('ReleaseContent', () => {
  it('serves what resolveRelease does: priorities, ties to the later pak, tombstones, mount points', async () => {
    const paks: ReleasePak[] = [
      { file: 'Main.pak', priority: 0, mountPoint: '/', tocHash: hex(1), flags: 0, entries: [entry('/Game/A', 1), entry('/Game/B', 2), entry('/Game/C', 3), entry('/Plug/D', 4)] },
      { file: 'Plug.pak', priority: 0, mountPoint: '/Plug/', tocHash: hex(2), flags: 0, entries: [entry('/D', 40), entry('/E', 50)] },
      { file: 'p1.pak', priority: 1, mountPoint: '/', tocHash: hex(3), flags: 1, entries: [entry('/Game/B', 0, 2), entry('/Game/C', 30), entry('/Game/F', 60), entry('/Plug/E', 0, 2)] },
    ];
    await writeReleaseManifest(dir, { name: 'v2', paks });
    const whole = await readReleaseManifest(dir);
    const want = resolveRelease(whole);
    for (const content of [await ReleaseContent.read(dir), ReleaseContent.of(whole)]) {
      const got = new Map<string, { rawSize: number; xxh64: string }>();
      for (const [p, slot] of content.served()) got.set(p, { rawSize: content.rawSize(slot), xxh64: hashHex(content.xxh64(slot)) });
      expect(got).toEqual(want);
      expect(content.slot('/Game/B')).toBeUndefined();
      expect(content.summary.paks.map((p) => [p.file, p.entryCount])).toEqual([
        ['Main.pak', 4],
        ['Plug.pak', 2],
        ['p1.pak', 4],
      ]);
    }
    expect(want.get('/Plug/D')).toEqual({ rawSize: 40, xxh64: hex(40) });
  });

  it('reports a bad manifest as the whole-object reader did, the first problem in validation order', async () => {
    const file = path.join(dir, 'release.json');
    const good = { format: 'lumina-release', version: 1, name: 'v1', paks: [{ file: 'Main.pak', priority: 0, mountPoint: '/', tocHash: hex(1), flags: 0, entries: [entry('/A', 1), entry('/B', 2)] }] };
    const failsWith = async (json: unknown, message: string) => {
      await fsp.writeFile(file, typeof json === 'string' ? json : JSON.stringify(json));
      for (const read of [() => ReleaseContent.read(file), () => readReleaseManifest(file)]) {
        expect(await caught(read)).toMatchObject({ code: 'PATCH_BASE_INVALID', message, file });
      }
    };
    // Entries come before the pak's other keys in the text, but the pak's fields are checked first.
    const entriesFirst = `{"format":"lumina-release","version":1,"name":"v1","paks":[{"entries":[{"path":"/B","rawSize":1,"xxh64":"${hex(1)}","method":1},{"path":"/A","rawSize":1,"xxh64":"${hex(1)}","method":1}],"file":"Main.pak","priority":0,"mountPoint":"/","tocHash":"nothex","flags":0}]}`;
    await failsWith(entriesFirst, '"paks[0].tocHash" is not 16 lowercase hex digits');
    await failsWith(entriesFirst.replace('nothex', hex(1)), '"paks[0].entries[1].path" is not after the previous entry in byte order');
    await failsWith({ ...good, format: 'x' }, '"format" is not "lumina-release"');
    await failsWith({ ...good, paks: [{ ...good.paks[0], entries: [entry('/A', 1), { ...entry('/B', 2), method: 3 }] }] }, '"paks[0].entries[1].method" is not 0, 1 or 2');
    await failsWith({ ...good, paks: [{ ...good.paks[0], entries: {} }] }, '"paks[0].entries" is not an array');
    await failsWith({ ...good, paks: [{ ...good.paks[0], entries: [5] }] }, '"paks[0].entries[0]" is not an object');
    // JSON.parse keeps the last of two equal keys; the streamed entries cannot be taken back, so a repeat is refused.
    await failsWith(JSON.stringify(good).replace('"entries":[', '"entries":[],"entries":['), '"paks[0].entries" is given twice');
    // Not JSON: JSON.parse's own message, as before.
    let parseMessage = '';
    try {
      JSON.parse('{"format": ');
    } catch (e) {
      parseMessage = (e as Error).message;
    }
    await failsWith('{"format": ', `not valid JSON: ${parseMessage}`);
    await failsWith('{"format": "lumina-release", /* no */ "version": 1}', expect.stringContaining('not valid JSON') as unknown as string);
    // "__proto__" is an own key, as JSON.parse makes it, not the object's prototype.
    await fsp.writeFile(file, JSON.stringify(good).replace('{"format"', '{"__proto__":{"name":"x"},"format"'));
    expect((await ReleaseContent.read(file)).name).toBe('v1');
  });
});

describe('buildPatchPak from a walk and a ReleaseContent', () => {
  it('writes the same pak and summary as from listed sources and the whole manifest', async () => {
    const cooked = path.join(dir, 'Cooked');
    await writeFiles(cooked, { '/Game/A.txt': 'a', '/Game/B.txt': 'b', '/Game/C.txt': 'c', '/Game/D/E.txt': 'e' });
    const id = async (text: string) => ({ rawSize: Buffer.byteLength(text), xxh64: hashHex(xxh64(Buffer.from(text))) });
    const base: ReleasePak = {
      file: 'Main.pak',
      priority: 3,
      mountPoint: '/',
      tocHash: hex(9),
      flags: 0,
      entries: [
        { path: '/Game/A.txt', ...(await id('a')), method: 1 },
        { path: '/Game/B.txt', ...(await id('old b')), method: 1 },
        { path: '/Game/Gone.txt', ...(await id('gone')), method: 1 },
      ],
    };
    await writeReleaseManifest(path.join(dir, 'r1'), { name: 'r1', paks: [base] });
    const whole = await buildPatchPak({ base: await readReleaseManifest(path.join(dir, 'r1')), entries: await collectSources(cooked), out: path.join(dir, 'whole.pak') });
    async function* walked(): AsyncGenerator<PakSource> {
      for await (const f of walkFiles(cooked)) yield { ...f, kind: 'file' };
    }
    const streamed = await buildPatchPak({ base: await ReleaseContent.read(path.join(dir, 'r1')), entries: walked(), out: path.join(dir, 'streamed.pak') });
    expect(streamed).toEqual({ ...whole, file: path.join(dir, 'streamed.pak') });
    expect(streamed).toMatchObject({ added: ['/Game/C.txt', '/Game/D/E.txt'], changed: ['/Game/B.txt'], removed: ['/Game/Gone.txt'], unchanged: 1, priority: 4 });
    expect(await fsp.readFile(path.join(dir, 'streamed.pak'))).toEqual(await fsp.readFile(path.join(dir, 'whole.pak')));
    const pak = await PakReader.open(path.join(dir, 'streamed.pak'));
    expect(pak.entries.map((e) => [e.path, e.method === 2])).toEqual([
      ['/Game/B.txt', false],
      ['/Game/C.txt', false],
      ['/Game/D/E.txt', false],
      ['/Game/Gone.txt', true],
    ]);
    await pak.close();

    // A source iterable that repeats a path of the release is refused like a listed repeat.
    async function* twice(): AsyncGenerator<PakSource> {
      yield { path: '/Game/A.txt', kind: 'file', file: path.join(cooked, 'Game', 'A.txt') };
      yield { path: '/Game/A.txt', kind: 'file', file: path.join(cooked, 'Game', 'A.txt') };
    }
    const r1 = await ReleaseContent.read(path.join(dir, 'r1'));
    expect(await caught(() => buildPatchPak({ base: r1, entries: twice(), out: path.join(dir, 'twice.pak') }))).toMatchObject({
      code: 'PAK_PATH_INVALID',
    });
  });
});
