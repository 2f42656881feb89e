/**
 * The per-asset results a full cook holds until its paks and reports are written, packed into
 * typed columns, one slot per planned asset, instead of a result object with four or five strings
 * each: ~70 bytes an asset where the objects took ~290 (~0.1 GB at a million assets, and half a
 * million fewer objects for the collector to mark on every full GC of the cook).
 *
 * What is packed: status, reason, the byte counts and time, the output identity in its usual form
 * (`<xxh64 hex>:<raw size>:<cooked size>`), the cooked file's xxh64, and whether the output is the
 * asset's usual cooked path. Anything else (a `verbatim:`/`fallback:` identity, an unusual output
 * path, an error, the held output bytes) goes into small side maps. The cache entry, cook key and
 * warnings are not kept: the paks and the reports never read them.
 *
 * `get` builds a new result object on each call: never rely on its identity or mutate it.
 */
import type { LuminaError } from '../src/errors.js';
import type { AssetRecord } from '../src/registry/types.js';
import { hex8 } from '../src/util/hash.js';
import { cookedPathFor, type AssetCookResult } from './cookAsset.js';
import type { HitView } from './cookCacheCodec.js';

const STATUSES: ReadonlyArray<AssetCookResult['status']> = ['cached', 'cooked', 'fetched', 'verbatim', 'failed'];

// Per-slot flags.
const SET = 1;
const OUTPUT = 2; // has an output ...
const OUTPUT_USUAL = 4; // ... and it is cookedPathFor(cookedDir, record)
const IDENTITY_PACKED = 8;
const COOKED_XXH = 16;

// Float64 columns per slot.
const F_MS = 0;
const F_IN = 1;
const F_OUT = 2;
const F_RAW = 3;
const F_COOKED = 4;
const F_COUNT = 5;

const IDENTITY_RE = /^([0-9a-f]{8})([0-9a-f]{8}):(\d+):(\d+)$/;

/** The 8 lowercase hex digits of `s` from `at` as a u32, or -1 when they are not that. */
function hexWord(s: string, at: number): number {
  let v = 0;
  for (let k = at; k < at + 8; k++) {
    const c = s.charCodeAt(k);
    const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/** The decimal digits of `s` in [from, to) (at most 15, so exact) as a number, or -1 when they are not digits or have a leading zero. */
function decimal(s: string, from: number, to: number): number {
  if (to <= from || (s.charCodeAt(from) === 0x30 && to - from > 1)) return -1;
  let v = 0;
  for (let k = from; k < to; k++) {
    const c = s.charCodeAt(k);
    if (c < 0x30 || c > 0x39) return -1;
    v = v * 10 + (c - 0x30);
  }
  return v;
}

/** The fields of a result an asset's report is made of (see `brief`). */
export type AssetReportFields = Pick<AssetCookResult, 'status' | 'reason' | 'ms' | 'bytesIn' | 'bytesOut' | 'error'>;

/** The fields of a result a pak entry is made of (see `pakSource`); `cookedSize`: the output's size, from its identity. */
export type PakSourceFields = Pick<AssetCookResult, 'output' | 'cookedXxh64' | 'bytes'> & { cookedSize?: number };


export class HeldResults {
  private readonly slotOf = new Map<string, number>();
  private readonly flags: Uint8Array;
  private readonly status: Uint8Array;
  /** 0: none, else 1 + index in `reasons`. */
  private readonly reason: Uint8Array;
  private readonly reasons: string[] = [];
  private readonly nums: Float64Array;
  /** Per slot: identity xxh64 high, low; cooked file xxh64 high, low. */
  private readonly hashes: Uint32Array;
  /** strippedExports, nulledRefs. */
  private readonly counts: Uint32Array;
  private readonly oddIdentity = new Map<number, string>();
  private readonly oddOutput = new Map<number, string>();
  private readonly oddCookedXxh64 = new Map<number, string>();
  private readonly errors = new Map<number, LuminaError>();
  private readonly held = new Map<number, Uint8Array>();
  private count = 0;

  /** Slots for these assets (a result can be set only for one of them). */
  constructor(
    private readonly records: ReadonlyArray<{ record: Pick<AssetRecord, 'guid' | 'virtualPath'> }>,
    private readonly cookedDir: string,
  ) {
    const n = records.length;
    for (let i = 0; i < n; i++) this.slotOf.set(records[i].record.guid, i);
    this.flags = new Uint8Array(n);
    this.status = new Uint8Array(n);
    this.reason = new Uint8Array(n);
    this.nums = new Float64Array(n * F_COUNT);
    this.hashes = new Uint32Array(n * 4);
    this.counts = new Uint32Array(n * 2);
  }

  /** Assets with a result. */
  get size(): number {
    return this.count;
  }

  has(guid: string): boolean {
    const i = this.slotOf.get(guid);
    return i !== undefined && (this.flags[i] & SET) !== 0;
  }

  /** Whether the asset's result has an output (what ships), without building the result. */
  hasOutput(guid: string): boolean {
    const i = this.slotOf.get(guid);
    return i !== undefined && (this.flags[i] & (SET | OUTPUT)) === (SET | OUTPUT);
  }

  /** Before a slot is written: count it once, and drop what its previous result kept on the side. */
  private clearSlot(i: number): void {
    if (!(this.flags[i] & SET)) this.count++;
    this.oddIdentity.delete(i);
    this.oddOutput.delete(i);
    this.oddCookedXxh64.delete(i);
    this.errors.delete(i);
    this.held.delete(i);
  }

  set(guid: string, r: AssetCookResult): this {
    const i = this.slotOf.get(guid);
    if (i === undefined) throw new Error(`HeldResults: ${guid} is not an asset of this cook`);
    this.clearSlot(i);
    let f = SET;
    this.status[i] = STATUSES.indexOf(r.status);
    this.reason[i] = r.reason === undefined ? 0 : this.reasonIndex(r.reason);
    const nums = i * F_COUNT;
    this.nums[nums + F_MS] = r.ms;
    this.nums[nums + F_IN] = r.bytesIn;
    this.nums[nums + F_OUT] = r.bytesOut;
    this.counts[i * 2] = r.strippedExports;
    this.counts[i * 2 + 1] = r.nulledRefs;
    if (r.output !== undefined) {
      f |= OUTPUT;
      if (r.output === cookedPathFor(this.cookedDir, this.records[i].record)) f |= OUTPUT_USUAL;
      else this.oddOutput.set(i, r.output);
    }
    if (r.identity !== undefined) {
      if (this.packIdentity(i, r.identity)) f |= IDENTITY_PACKED;
      else this.oddIdentity.set(i, r.identity);
    }
    if (r.cookedXxh64 !== undefined) {
      const c = r.cookedXxh64;
      const hi = c.length === 16 ? hexWord(c, 0) : -1;
      const lo = hi < 0 ? -1 : hexWord(c, 8);
      if (lo >= 0) {
        f |= COOKED_XXH;
        this.hashes[i * 4 + 2] = hi;
        this.hashes[i * 4 + 3] = lo;
      } else this.oddCookedXxh64.set(i, c);
    }
    if (r.error !== undefined) this.errors.set(i, r.error);
    if (r.bytes !== undefined) this.held.set(i, r.bytes);
    this.flags[i] = f;
    return this;
  }

  /**
   * Pack an identity `<16 hex>:<raw size>:<cooked size>` into slot i, only when it prints back
   * exactly (lowercase hex, sizes without leading zeros that are safe integers). Read by hand, not
   * by IDENTITY_RE: a first cook sets every asset's result, and the match array and its four
   * strings were most of `set`. Sizes of more than 15 digits take the expression's way.
   */
  private packIdentity(i: number, id: string): boolean {
    const n = id.length;
    let raw = -1;
    let cooked = -1;
    let hi = -1;
    let lo = -1;
    const second = n > 19 && id.charCodeAt(16) === 0x3a ? id.indexOf(':', 17) : -1;
    if (second > 17 && second < n - 1 && second - 17 <= 15 && n - second - 1 <= 15) {
      hi = hexWord(id, 0);
      lo = hi < 0 ? -1 : hexWord(id, 8);
      raw = lo < 0 ? -1 : decimal(id, 17, second);
      cooked = raw < 0 ? -1 : decimal(id, second + 1, n);
    } else {
      const m = IDENTITY_RE.exec(id);
      if (m && `${m[3]}` === String(Number(m[3])) && `${m[4]}` === String(Number(m[4]))) {
        hi = parseInt(m[1], 16);
        lo = parseInt(m[2], 16);
        raw = Number(m[3]);
        cooked = Number(m[4]);
      }
    }
    if (cooked < 0) return false;
    this.hashes[i * 4] = hi;
    this.hashes[i * 4 + 1] = lo;
    this.nums[i * F_COUNT + F_RAW] = raw;
    this.nums[i * F_COUNT + F_COOKED] = cooked;
    return true;
  }

  /**
   * A cache hit at the asset's usual output, straight from the cache record (CookCache.probe): what
   * `set` stores for cachedResult's slim result, without its hex strings. False when the sizes
   * would not print back as they are (then `set` the result instead).
   */
  setCachedHit(guid: string, v: HitView): boolean {
    const i = this.slotOf.get(guid);
    if (i === undefined) throw new Error(`HeldResults: ${guid} is not an asset of this cook`);
    if (!(Number.isSafeInteger(v.rawSize) && v.rawSize >= 0 && Number.isSafeInteger(v.cookedSize) && v.cookedSize >= 0)) return false;
    this.clearSlot(i);
    this.status[i] = 0; // cached
    this.reason[i] = 0;
    const nums = i * F_COUNT;
    this.nums[nums + F_MS] = 0;
    this.nums[nums + F_IN] = v.sourceSize;
    this.nums[nums + F_OUT] = v.cookedSize;
    this.nums[nums + F_RAW] = v.rawSize;
    this.nums[nums + F_COOKED] = v.cookedSize;
    this.counts[i * 2] = v.strippedExports;
    this.counts[i * 2 + 1] = v.nulledRefs;
    this.hashes[i * 4] = v.xxhHi;
    this.hashes[i * 4 + 1] = v.xxhLo;
    this.hashes[i * 4 + 2] = v.cookedHi;
    this.hashes[i * 4 + 3] = v.cookedLo;
    this.flags[i] = SET | OUTPUT | OUTPUT_USUAL | IDENTITY_PACKED | (v.hasCookedXxh ? COOKED_XXH : 0);
    return true;
  }

  /** `get(guid)?.identity` without building the result: the pak fingerprint asks it of every shipped asset, every cook. */
  identity(guid: string): string | undefined {
    const i = this.setSlot(guid);
    return i === undefined ? undefined : this.identityAt(i);
  }

  /** What a pak entry needs of the result (output, cooked file hash, held bytes), without building the rest. */
  pakSource(guid: string): PakSourceFields | undefined {
    const i = this.setSlot(guid);
    if (i === undefined) return undefined;
    const out: PakSourceFields = this.pakSourceInto(i, {});
    // The identity's cooked size is the output's size as written: the pak writer reads it without a stat.
    if (this.flags[i] & IDENTITY_PACKED) out.cookedSize = this.nums[i * F_COUNT + F_COOKED];
    return out;
  }

  /**
   * Whether the asset's cooked file hash (its xxh64, as u32 halves) is `hi`/`lo`, without a hex
   * string: a pak splice asks it of every entry (pak/splicePak.ts). False when it has none.
   */
  cookedXxh64Is(guid: string, hi: number, lo: number): boolean {
    const i = this.setSlot(guid);
    if (i === undefined) return false;
    if (this.flags[i] & COOKED_XXH) return this.hashes[i * 4 + 2] === hi && this.hashes[i * 4 + 3] === lo;
    const odd = this.oddCookedXxh64.get(i);
    return odd !== undefined && odd === `${hex8(hi)}${hex8(lo)}`;
  }

  /**
   * What a cook's per-asset report reads of the result (status, reason, time, byte counts, error),
   * without building the rest: a no-op reports every asset, and `get` made an output path and two
   * hex strings for each.
   */
  brief(guid: string): AssetReportFields | undefined {
    const i = this.setSlot(guid);
    return i === undefined ? undefined : this.briefAt(i);
  }

  /** The asset's result, as a new object (see the module comment); undefined when it has none. */
  get(guid: string): AssetCookResult | undefined {
    const i = this.setSlot(guid);
    if (i === undefined) return undefined;
    // The brief's object, completed here (the counts are set right below).
    const out = this.briefAt(i) as AssetCookResult;
    out.strippedExports = this.counts[i * 2];
    out.nulledRefs = this.counts[i * 2 + 1];
    const identity = this.identityAt(i);
    if (identity !== undefined) out.identity = identity;
    return this.pakSourceInto(i, out);
  }

  /**
   * `brief` by slot: the i-th of the assets given to the constructor (a full cook's report loop
   * walks them in that order, so no lookup by GUID per asset).
   */
  briefOfSlot(i: number): AssetReportFields | undefined {
    return this.flags[i] & SET ? this.briefAt(i) : undefined;
  }

  /** `hasOutput` by slot (see briefOfSlot). */
  hasOutputAt(i: number): boolean {
    return (this.flags[i] & (SET | OUTPUT)) === (SET | OUTPUT);
  }

  /** The slot of `guid` when it holds a result. */
  private setSlot(guid: string): number | undefined {
    const i = this.slotOf.get(guid);
    return i !== undefined && this.flags[i] & SET ? i : undefined;
  }

  private identityAt(i: number): string | undefined {
    if (this.flags[i] & IDENTITY_PACKED) return `${hex8(this.hashes[i * 4])}${hex8(this.hashes[i * 4 + 1])}:${this.nums[i * F_COUNT + F_RAW]}:${this.nums[i * F_COUNT + F_COOKED]}`;
    return this.oddIdentity.get(i);
  }

  /** Adds the output, the cooked file's hash and the held bytes (what a pak entry needs) to `out`. */
  private pakSourceInto<T extends Omit<PakSourceFields, 'cookedSize'>>(i: number, out: T): T {
    const f = this.flags[i];
    if (f & OUTPUT) out.output = f & OUTPUT_USUAL ? cookedPathFor(this.cookedDir, this.records[i].record) : this.oddOutput.get(i);
    if (f & COOKED_XXH) out.cookedXxh64 = `${hex8(this.hashes[i * 4 + 2])}${hex8(this.hashes[i * 4 + 3])}`;
    else if (this.oddCookedXxh64.has(i)) out.cookedXxh64 = this.oddCookedXxh64.get(i);
    const bytes = this.held.get(i);
    if (bytes) out.bytes = bytes;
    return out;
  }

  private briefAt(i: number): AssetReportFields {
    const nums = i * F_COUNT;
    const out: AssetReportFields = { status: STATUSES[this.status[i]], ms: this.nums[nums + F_MS], bytesIn: this.nums[nums + F_IN], bytesOut: this.nums[nums + F_OUT] };
    if (this.reason[i]) out.reason = this.reasons[this.reason[i] - 1] as AssetCookResult['reason'];
    const error = this.errors.get(i);
    if (error) out.error = error;
    return out;
  }


  /** Let go of every held output's bytes (the paks are written). */
  dropBytes(): void {
    this.held.clear();
  }

  /** Forget every result (the slots stay). */
  clear(): void {
    this.flags.fill(0);
    this.count = 0;
    this.oddIdentity.clear();
    this.oddOutput.clear();
    this.oddCookedXxh64.clear();
    this.errors.clear();
    this.held.clear();
  }

  private reasonIndex(reason: string): number {
    let k = this.reasons.indexOf(reason);
    if (k < 0) {
      k = this.reasons.push(reason) - 1;
      if (k >= 255) throw new Error('HeldResults: too many distinct reasons');
    }
    return k + 1;
  }
}
