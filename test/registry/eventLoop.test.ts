/**
 * A cold scan reads small packages synchronously, and its read queue settles by microtasks: the
 * scan must still give the event loop a turn now and then, or Ctrl-C, timers, progress and a
 * daemon's HTTP server wait for its last read (an hour at a million files).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AssetRegistry } from '../../src/registry/AssetRegistry.js';
import { initHash } from '../../src/util/hash.js';
import { g, makeProject, type TempProject } from './fixtures.js';

let p: TempProject;
beforeEach(() => {
  p = makeProject();
});
afterEach(() => p.cleanup());

describe('a cold scan and the event loop', () => {
  it('lets an immediate (a signal handler, a timer, a request) run while packages are still being read', async () => {
    await initHash();
    const FILES = 1_200;
    for (let i = 0; i < FILES; i++) p.pkg(`Content/F${i % 4}/P${i}.lasset`, g(i + 1));
    const reg = await AssetRegistry.open({ config: p.config() });
    let readWhenRan: number | undefined;
    let read = 0;
    // Armed once the walk is over (the walk itself is synchronous by design, ~2 µs a file): the
    // first progress report comes from the read phase.
    let armed = false;
    const r = await reg.scan({
      onProgress: (x) => {
        read = x.read;
        if (armed) return;
        armed = true;
        setImmediate(() => {
          readWhenRan = read;
        });
      },
      });
    expect(r.read).toBe(FILES);
    // The immediate ran before the scan was over: with reads left to do.
    expect(readWhenRan).toBeDefined();
    expect(readWhenRan!).toBeLessThan(FILES);
  });
});
