/**
 * V8's memory-over-speed settings for processes holding a very large project, in two levels, set
 * at run time.
 *
 * Why: V8 lets the old generation grow to a multiple of what the last full GC found live before it
 * collects again (up to 4x on a machine with a large heap limit), so a million-asset cold cook with
 * ~1.2 GiB live peaked near 2.5 GiB of RSS. Both levels bound that factor for every later GC of
 * this process's isolates (the main thread and the cook workers):
 * - lean (`--heap-growing-percent`, LEAN_HEAP_GROWING_PERCENT): the factor alone, 1.3, with V8's
 *   own young generation, for any process holding LEAN_HEAP_ASSETS or more;
 * - strict (`--optimize-for-size`, on top of lean): for a process about to build that much
 *   long-lived data (a cold scan's records, a cold cook's results) or living for hours (a daemon).
 *   It also pins the young generation at 1 MiB, which is why it is not for everyone: a 1M no-op
 *   cook in it ran ~1,200 scavenges and took 258 s (100k: 3.1 s).
 * Measured at 1M assets (rgba8) with this split: cold cook peak 1,890,512 KiB, no-op 30.9 s; lean
 * alone for the cold cook too peaked at 2,197,732 KiB. In V8 11 (Node 20) `--heap-growing-percent`
 * overrides the factor strict would pick (1.1), so strict's factor is lean's: what strict adds is
 * the small young generation and V8's other memory-first choices.
 * Both are read by V8 at each GC, so setting them at run time works (checked with
 * `--trace-gc-verbose`: new limits at 1.3x the old size instead of 4x).
 */
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * A process at or above this many assets turns lean; one that will build this many long-lived
 * records or results (files a scan reads, packages a cook cooks; or a daemon holding this many
 * assets) turns strict. Below, speed matters more than the heap's slack.
 */
export const LEAN_HEAP_ASSETS = 250_000;

/** The lean level's old-generation growing factor, as V8's `--heap-growing-percent` (1 + x/100). */
export const LEAN_HEAP_GROWING_PERCENT = 30;

/**
 * The growing factor while strict is held off (`holdStrictHeap`): without `--optimize-for-size`'s
 * memory-reducing collections a held cook's old generation keeps less slack than lean's.
 */
export const HELD_HEAP_GROWING_PERCENT = 15;

let lean = false;
let strict = false;
/** A one-shot cook holds strict off until its tail (`holdStrictHeap`). */
let held = false;
/** Strict was asked for while held: `releaseStrictHeap` turns it on. */
let wanted = false;

/**
 * The levels' threshold: LEAN_HEAP_ASSETS, or `LUMINA_LEAN_HEAP_ASSETS` (a positive integer), which
 * lets a smaller project take the levels a million-asset one would (benches, tests). Only the
 * levels: the other choices made at LEAN_HEAP_ASSETS (read threads, output prestat) keep it.
 */
function threshold(env: NodeJS.ProcessEnv): number {
  const n = Number(env.LUMINA_LEAN_HEAP_ASSETS);
  return Number.isSafeInteger(n) && n > 0 ? n : LEAN_HEAP_ASSETS;
}

/** `LUMINA_LEAN_HEAP=1` forces strict (so lean too) at any size, `=0` turns both off. */
function forced(env: NodeJS.ProcessEnv): boolean | undefined {
  const v = env.LUMINA_LEAN_HEAP;
  return v === '1' ? true : v === '0' ? false : undefined;
}

function turnLean(): void {
  if (lean) return;
  v8.setFlagsFromString(`--heap-growing-percent=${LEAN_HEAP_GROWING_PERCENT}`);
  lean = true;
}

function turnStrict(): void {
  turnLean();
  if (strict) return;
  v8.setFlagsFromString('--optimize-for-size');
  strict = true;
}

/**
 * Whether the process is lean after this call: turns lean on when `assets` (what the process
 * holds: a scan's files, a registry) reaches the threshold. Once on, a level stays on for the
 * process (V8 flags are process-wide).
 */
export function leanHeapFor(assets: number, env: NodeJS.ProcessEnv = process.env): boolean {
  if (strict) return true;
  const f = forced(env);
  if (f === true) turnStrict();
  else if (f === undefined && assets >= threshold(env)) turnLean();
  return lean;
}

/**
 * Whether the process is strict after this call: turns strict (and lean) on when `work` (the
 * long-lived data about to be built: files a scan reads, packages a cook cooks) reaches the
 * threshold. Once on, it stays on.
 */
export function leanHeapStrictFor(work: number, env: NodeJS.ProcessEnv = process.env): boolean {
  if (strict) return true;
  const f = forced(env);
  if (f === true) turnStrict();
  else if (f === undefined && work >= threshold(env)) {
    if (!held) turnStrict();
    else if (!wanted) {
      // Held: lean with a smaller factor now, strict at the release.
      turnLean();
      v8.setFlagsFromString(`--heap-growing-percent=${HELD_HEAP_GROWING_PERCENT}`);
      wanted = true;
    }
  }
  return strict || wanted;
}

/**
 * Hold strict off (until `releaseStrictHeap`) for a cook that runs once in its process: a strict
 * level asked for meanwhile is lean with HELD_HEAP_GROWING_PERCENT instead.
 *
 * Why: strict's `--optimize-for-size` makes every full GC a memory-reducing compaction and keeps
 * the young generation small, which a garbage-heavy scan and cook pay for in GC (a million-asset
 * cold cook: main thread ~4,300 scavenges, 129 s, + 52 reducing full GCs, 46 s). Without it the
 * scan and the loop stay under the peak, but the tail after the paks (release, asset reports, cook
 * cache, report) allocated on top of the loop's garbage and peaked above 2 GiB: that tail is what
 * strict is for. A daemon (hours, many batches) is never held.
 */
export function holdStrictHeap(): void {
  if (!strict) held = true;
}

/**
 * End the hold: when strict was asked for meanwhile, collect the garbage now (one full GC, which
 * gives the freed pages back) and turn strict on for what follows. Returns whether strict is on.
 */
export function releaseStrictHeap(): boolean {
  if (!held) return strict;
  held = false;
  if (wanted) {
    wanted = false;
    collectGarbage();
    turnStrict();
  }
  return strict;
}

/**
 * One full GC now. Node has no call for it without --expose-gc, so the flag is set just long
 * enough to take `gc` from a new context (as jest's leak detector does).
 */
export function collectGarbage(): void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed();
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  v8.setFlagsFromString('--no-expose-gc');
  gc();
}

/** Whether this process is lean (strict included). */
export function leanHeapOn(): boolean {
  return lean;
}

/** Whether this process is strict. */
export function leanHeapStrictOn(): boolean {
  return strict;
}
