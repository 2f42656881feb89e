/**
 * What a release serves, by full virtual path, tombstones and priorities applied, held compactly:
 * one map of path -> slot and the slots' raw sizes and hashes in flat arrays. A patch at a
 * million entries compares against this instead of the manifest's entry objects (and a second
 * map of them): read straight from release.json's text, it never holds the entries as objects.
 */
import { mountedPath, priorityOrder } from './pakFormat.js';
import { ownString, parseReleaseManifest, readManifestText, type ReleaseManifest, type ReleaseSummary } from './releaseManifest.js';

/** A tombstone's raw size in the slot table: the path is not served. */
const DEAD = -1;

export class ReleaseContent {
  private constructor(
    /** The manifest without its entry lists. */
    readonly summary: ReleaseSummary,
    /** Full virtual path -> slot of the entry that serves it, or DEAD when a tombstone wins. */
    private readonly slots: Map<string, number>,
    private readonly rawSizes: readonly number[],
    private readonly hashes: BigUint64Array,
  ) {}

  /** Read `<folder>/release.json` (or the file named) as a ReleaseContent; PATCH_BASE_INVALID when it is not a valid manifest. */
  static async read(folderOrJson: string): Promise<ReleaseContent & { file: string }> {
    const { file, text } = await readManifestText(folderOrJson);
    const b = new Builder();
    const summary = parseReleaseManifest(text, file, (pak, e) => b.add(pak, ownString(e.path), e.method === 2 ? DEAD : e.rawSize, e.xxh64));
    return Object.assign(new ReleaseContent(summary, ...b.finish(summary)), { file });
  }

  /** The content of a manifest already read whole (readReleaseManifest). */
  static of(manifest: ReleaseManifest): ReleaseContent {
    const b = new Builder();
    manifest.paks.forEach((p, i) => {
      for (const e of p.entries) b.add(i, e.path, e.method === 2 ? DEAD : e.rawSize, e.xxh64);
    });
    const { paks, ...rest } = manifest;
    const summary = { ...rest, paks: paks.map(({ entries, ...p }) => ({ ...p, entryCount: entries.length })) };
    return new ReleaseContent(summary, ...b.finish(summary));
  }

  get name(): string {
    return this.summary.name;
  }

  /** Upper bound (exclusive) of slot numbers: the size of an array indexed by slot. */
  get slotCount(): number {
    return this.rawSizes.length;
  }

  /** The slot of the entry serving `fullPath`, or undefined when the release does not serve it. */
  slot(fullPath: string): number | undefined {
    const s = this.slots.get(fullPath);
    return s === undefined || this.rawSizes[s] === DEAD ? undefined : s;
  }

  rawSize(slot: number): number {
    return this.rawSizes[slot];
  }

  xxh64(slot: number): bigint {
    return this.hashes[slot];
  }

  /** Every served path with its slot (in no particular order). */
  *served(): IterableIterator<[string, number]> {
    for (const [p, s] of this.slots) if (this.rawSizes[s] !== DEAD) yield [p, s];
  }
}

/** Collects entries in flat columns as they are parsed, then resolves paths by pak priority. */
class Builder {
  private readonly paths: string[] = [];
  private readonly rawSizes: number[] = [];
  private hashes = new BigUint64Array(1 << 12);
  /** Each pak's entries are one run of slots: [first, end). */
  private readonly runs: Array<[number, number]> = [];

  add(pak: number, entryPath: string, rawSize: number, xxh64: string): void {
    const n = this.paths.length;
    if (n === this.hashes.length) {
      const grown = new BigUint64Array(n * 2);
      grown.set(this.hashes);
      this.hashes = grown;
    }
    this.paths.push(entryPath);
    this.rawSizes.push(rawSize);
    this.hashes[n] = BigInt(`0x${xxh64}`);
    const run = (this.runs[pak] ??= [n, n]);
    if (run[1] !== n) throw new Error(`internal: the entries of pak ${pak} are not contiguous`);
    run[1] = n + 1;
  }

  /** The path -> slot map, raw sizes and hashes of the ReleaseContent. */
  finish(summary: ReleaseSummary): [Map<string, number>, number[], BigUint64Array] {
    const slots = new Map<string, number>();
    // The winner first: a path keeps the slot of the highest-priority pak that has it.
    for (const i of priorityOrder(summary.paks)) {
      const run = this.runs[i];
      if (!run) continue;
      const mp = summary.paks[i].mountPoint;
      for (let s = run[0]; s < run[1]; s++) {
        const full = mountedPath(mp, this.paths[s]);
        if (!slots.has(full)) slots.set(full, s);
      }
    }
    return [slots, this.rawSizes, this.hashes];
  }
}
