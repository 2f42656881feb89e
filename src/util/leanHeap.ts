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

/**
 * A process at or above this many assets turns lean; one that will build this many long-lived
 * records or results (files a scan reads, packages a cook cooks; or a daemon holding this many
 * assets) turns strict. Below, speed matters more than the heap's slack.
 */
export const LEAN_HEAP_ASSETS = 250_000;

/** The lean level's old-generation growing factor, as V8's `--heap-growing-percent` (1 + x/100). */
export const LEAN_HEAP_GROWING_PERCENT = 30;

let lean = false;
let strict = false;

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
  if (f === true || (f === undefined && work >= threshold(env))) turnStrict();
  return strict;
}

/** Whether this process is lean (strict included). */
export function leanHeapOn(): boolean {
  return lean;
}

/** Whether this process is strict. */
export function leanHeapStrictOn(): boolean {
  return strict;
}
