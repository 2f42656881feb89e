/**
 * V8's memory-over-speed mode for processes holding a very large project (`--optimize-for-size`,
 * set at run time).
 *
 * Why: V8 lets the old generation grow to a multiple of what the last full GC found live before it
 * collects again (up to 4x on a machine with a large heap limit), so a million-asset cold cook with
 * ~1.2 GiB live peaked near 2.5 GiB of RSS. With this flag set, every later GC of this process's
 * isolates (the main thread and the cook workers) grows the heap by a small factor instead.
 * Measured on a cold 100k-file cook (memPhases, side by side, load ~17): see the README's
 * million-asset section.
 */
import v8 from 'node:v8';

/**
 * Registries at least this large turn it on for a full cook, and a registry scan that counts this
 * many files turns it on at once (below, speed matters more than the heap's slack). A full cook in
 * this mode also holds no cooked outputs for its paks and stops its workers after the loop.
 */
export const LEAN_HEAP_ASSETS = 250_000;

let on = false;

/**
 * Whether the process is in lean-heap mode after this call: turns it on when `assets` reaches
 * LEAN_HEAP_ASSETS. `LUMINA_LEAN_HEAP=1` turns it on at any size, `=0` never. Once on, it stays on
 * for the process (V8 flags are process-wide).
 */
export function leanHeapFor(assets: number, env: NodeJS.ProcessEnv = process.env): boolean {
  if (on) return true;
  const forced = env.LUMINA_LEAN_HEAP;
  if (forced === '0' || (forced !== '1' && assets < LEAN_HEAP_ASSETS)) return false;
  v8.setFlagsFromString('--optimize-for-size');
  on = true;
  return true;
}

/** Whether this process is in lean-heap mode. */
export function leanHeapOn(): boolean {
  return on;
}
