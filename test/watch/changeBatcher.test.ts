import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeBatcher, mergeKinds, normalizePath, type ChangeBatch, type ChangeKind } from '../../watch/ChangeBatcher.js';
import { watchMounts, type MountWatcher } from '../../watch/watcher.js';
import { sleep, tempDir, waitFor } from './helpers.js';

describe('mergeKinds', () => {
  it.each([
    [undefined, 'create', 'create'],
    ['create', 'update', 'create'],
    ['create', 'delete', undefined],
    ['update', 'update', 'update'],
    ['update', 'delete', 'delete'],
    ['delete', 'create', 'update'],
    ['delete', 'delete', 'delete'],
  ] as const)('%s then %s is %s', (prev, next, want) => {
    expect(mergeKinds(prev as ChangeKind | undefined, next)).toBe(want);
  });
});

describe('ChangeBatcher', () => {
  it('merges repeats per file and drops a file created and deleted in one batch', async () => {
    const batches: ChangeBatch[] = [];
    const b = new ChangeBatcher({ debounceMs: 20, handler: async (x) => void batches.push(x) });
    b.push('add', '/p/A.lasset');
    b.push('change', '/p/A.lasset');
    b.push('change', '/p/B.lasset');
    b.push('add', '/p/C.lasset');
    b.push('unlink', '/p/C.lasset');
    b.push('unlink', '/p/D.rml');
    b.push('add', '/p/D.rml');
    b.push('add', '/p/notes.txt');
    b.push('add', '/p/.A.lasset.swp');
    b.push('add', '/p/A.lasset.lctmp-12-ab');
    await waitFor(() => batches.length === 1, 'one batch');
    await b.idle();
    expect(batches).toEqual([
      {
        seq: 1,
        changes: [
          { file: normalizePath('/p/A.lasset'), kind: 'create' },
          { file: normalizePath('/p/B.lasset'), kind: 'update' },
          { file: normalizePath('/p/D.rml'), kind: 'update' },
        ],
        dirs: [],
      },
    ]);
  });

  it('holds events that arrive during a batch for the next one, never running two at once', async () => {
    const batches: ChangeBatch[] = [];
    let release!: () => void;
    let active = 0;
    let maxActive = 0;
    const b = new ChangeBatcher({
      debounceMs: 5,
      handler: async (x) => {
        active++;
        maxActive = Math.max(maxActive, active);
        batches.push(x);
        if (x.seq === 1) await new Promise<void>((r) => (release = r));
        active--;
      },
    });
    b.push('change', '/p/A.lasset');
    await waitFor(() => batches.length === 1, 'first batch');
    b.push('change', '/p/B.lasset');
    b.push('change', '/p/C.lasset');
    await sleep(30); // well past the debounce: the second batch must still wait for the first
    expect(batches.length).toBe(1);
    expect(b.queued).toBe(2);
    release();
    await waitFor(() => batches.length === 2, 'second batch');
    await b.idle();
    expect(batches[1].changes.map((c) => path.basename(c.file))).toEqual(['B.lasset', 'C.lasset']);
    expect(maxActive).toBe(1);
  });

  it('logs a failing batch and goes on with the next', async () => {
    const seen: number[] = [];
    const errors: unknown[] = [];
    const log = { error: (o: unknown) => errors.push(o) } as never;
    const b = new ChangeBatcher({
      debounceMs: 5,
      log,
      handler: async (x) => {
        seen.push(x.seq);
        if (x.seq === 1) throw new Error('boom');
      },
    });
    b.push('change', '/p/A.lasset');
    await waitFor(() => seen.length === 1, 'first batch');
    await b.idle();
    b.push('change', '/p/A.lasset');
    await waitFor(() => seen.length === 2, 'second batch');
    expect(errors).toHaveLength(1);
  });

  it('close waits for the in-flight batch and then drops new events', async () => {
    const seen: number[] = [];
    let release!: () => void;
    const b = new ChangeBatcher({
      debounceMs: 1,
      handler: async (x) => {
        seen.push(x.seq);
        await new Promise<void>((r) => (release = r));
      },
    });
    b.push('change', '/p/A.lasset');
    await waitFor(() => seen.length === 1, 'batch start');
    const closing = b.close(5_000);
    b.push('change', '/p/B.lasset');
    release();
    expect(await closing).toBe(true);
    await sleep(20);
    expect(seen).toEqual([1]);
    expect(b.queued).toBe(0);
  });

  it('close abandons an in-flight batch after the timeout', async () => {
    const b = new ChangeBatcher({ debounceMs: 1, handler: () => new Promise(() => {}) });
    b.push('change', '/p/A.lasset');
    await waitFor(() => b.busy, 'batch start');
    expect(await b.close(20)).toBe(false);
  });
});

describe('watchMounts + ChangeBatcher on real files', () => {
  let w: MountWatcher | undefined;
  let root: string | undefined;
  afterEach(async () => {
    await w?.close();
    w = undefined;
    if (root) await fsp.rm(root, { recursive: true, force: true });
  });

  /** Wait out the watcher's re-stat window and the debounce, then for the batch to finish. */
  /** Merge every change seen since `from` per file: the net effect the daemon acts on. */
  function netSince(batches: ChangeBatch[], from: number): Record<string, ChangeKind> {
    const net = new Map<string, ChangeKind>();
    for (const b of batches.slice(from)) {
      for (const c of b.changes) {
        const m = mergeKinds(net.get(c.file), c.kind);
        if (m === undefined) net.delete(c.file);
        else net.set(c.file, m);
      }
    }
    return Object.fromEntries([...net].map(([f, k]) => [path.relative(root!, f), k]));
  }

  it('reports create, update, rename and delete; ignores temp files, dotfiles and other extensions', async () => {
    root = await tempDir();
    const content = path.join(root, 'Content');
    await fsp.mkdir(path.join(content, 'Maps'), { recursive: true });
    await fsp.writeFile(path.join(content, 'Maps', 'Old.lasset'), 'x');
    const batches: ChangeBatch[] = [];
    const batcher = new ChangeBatcher({ debounceMs: 40, handler: async (b) => void batches.push(b) });
    w = watchMounts({ roots: [content], batcher });
    await w.ready;

    // An editor-style save: temp file beside the target, then rename over it.
    const tmp = path.join(content, 'Maps', 'Main.lasset.lctmp-1-aa');
    await fsp.writeFile(tmp, 'v1');
    await fsp.rename(tmp, path.join(content, 'Maps', 'Main.lasset'));
    await fsp.writeFile(path.join(content, 'Maps', 'readme.txt'), 'ignored');
    await fsp.writeFile(path.join(content, '.hidden.lasset'), 'ignored');
    await waitFor(() => 'Content/Maps/Main.lasset' in netSince(batches, 0), 'create');
    await batcher.idle();
    expect(netSince(batches, 0)).toEqual({ 'Content/Maps/Main.lasset': 'create' });

    let mark = batches.length;
    await fsp.writeFile(path.join(content, 'Maps', 'Main.lasset'), 'v2');
    // An in-place write (truncate, then write) may reach the native watcher as two events, and on a
    // loaded machine the second can come after the first one's batch has run. A file created after
    // the write is queued behind both (one inotify queue, read in order): once it is seen, so is
    // every event of the write, and none of them can land in the rename's window below.
    await fsp.writeFile(path.join(content, 'Fence.lasset'), 'f');
    await waitFor(() => 'Content/Fence.lasset' in netSince(batches, mark), 'update');
    await batcher.idle();
    expect(netSince(batches, mark)).toEqual({ 'Content/Maps/Main.lasset': 'update', 'Content/Fence.lasset': 'create' });

    mark = batches.length;
    await fsp.rename(path.join(content, 'Maps', 'Old.lasset'), path.join(content, 'New.lasset'));
    await waitFor(() => Object.keys(netSince(batches, mark)).length === 2, 'rename');
    await batcher.idle();
    expect(netSince(batches, mark)).toEqual({ 'Content/Maps/Old.lasset': 'delete', 'Content/New.lasset': 'create' });

    mark = batches.length;
    await fsp.rm(path.join(content, 'New.lasset'));
    await waitFor(() => batches.length > mark, 'delete');
    await batcher.idle();
    expect(netSince(batches, mark)).toEqual({ 'Content/New.lasset': 'delete' });
  });

  it('sees a second save of a file made right after the first', async () => {
    root = await tempDir();
    const file = path.join(root, 'A.lasset');
    await fsp.writeFile(file, 'v0');
    const seen: string[] = [];
    // Each batch reads the file, as the registry does: the last read must be the last save.
    const batcher = new ChangeBatcher({ debounceMs: 2, handler: async () => void seen.push(await fsp.readFile(file, 'utf8')) });
    w = watchMounts({ roots: [root], batcher });
    await w.ready;
    const save = async (text: string) => {
      await fsp.writeFile(`${file}.lctmp-x`, text);
      await fsp.rename(`${file}.lctmp-x`, file);
    };
    await save('v1');
    await waitFor(() => seen.length > 0, 'first batch');
    await save('v2');
    await waitFor(() => seen.at(-1) === 'v2', 'a batch that reads v2');
  });

  it('reports the files of a removed folder as deleted', async () => {
    root = await tempDir();
    await fsp.mkdir(path.join(root, 'Sub', 'Deep'), { recursive: true });
    await fsp.writeFile(path.join(root, 'Sub', 'A.lasset'), 'a');
    await fsp.writeFile(path.join(root, 'Sub', 'Deep', 'B.rml'), 'b');
    const batches: ChangeBatch[] = [];
    const batcher = new ChangeBatcher({ debounceMs: 40, handler: async (b) => void batches.push(b) });
    w = watchMounts({ roots: [root], batcher });
    await w.ready;
    await fsp.rm(path.join(root, 'Sub'), { recursive: true });
    await waitFor(() => batches.some((b) => b.dirs.includes(normalizePath(path.join(root!, 'Sub')))), 'unlinkDir');
    await waitFor(() => Object.keys(netSince(batches, 0)).length === 2, 'unlinks');
    await batcher.idle();
    expect(netSince(batches, 0)).toEqual({ 'Sub/A.lasset': 'delete', 'Sub/Deep/B.rml': 'delete' });
  });

  it('a folder moved in from outside is re-walked whole, and edits deep inside it are seen', async () => {
    root = await tempDir();
    const content = path.join(root, 'Content');
    const outside = path.join(root, 'Elsewhere');
    await fsp.mkdir(content, { recursive: true });
    await fsp.mkdir(path.join(outside, 'Pack', 'Deep'), { recursive: true });
    await fsp.writeFile(path.join(outside, 'Pack', 'Deep', 'B.lasset'), 'b');
    const batches: ChangeBatch[] = [];
    const batcher = new ChangeBatcher({ debounceMs: 10, handler: async (b) => void batches.push(b) });
    w = watchMounts({ roots: [content], batcher });
    await w.ready;
    await fsp.rename(path.join(outside, 'Pack'), path.join(content, 'Pack'));
    // The watcher names the folder only: the batch hands it over to be walked.
    await waitFor(() => batches.some((b) => b.dirs.includes(normalizePath(path.join(content, 'Pack')))), 'the moved-in folder');
    await batcher.idle();
    const mark = batches.length;
    await fsp.writeFile(path.join(content, 'Pack', 'Deep', 'B.lasset'), 'b2');
    await waitFor(() => 'Content/Pack/Deep/B.lasset' in netSince(batches, mark), 'an edit two folders down');
    expect(netSince(batches, mark)).toEqual({ 'Content/Pack/Deep/B.lasset': 'update' });
  });

  it('a mount folder that does not exist yet is watched once it appears', async () => {
    root = await tempDir();
    const content = path.join(root, 'Plugins', 'Late', 'Content');
    const batches: ChangeBatch[] = [];
    const batcher = new ChangeBatcher({ debounceMs: 10, handler: async (b) => void batches.push(b) });
    w = watchMounts({ roots: [content], batcher });
    await w.ready;
    await fsp.mkdir(content, { recursive: true });
    await waitFor(() => batches.some((b) => b.dirs.includes(normalizePath(content))), 'the new mount folder');
    await batcher.idle();
    const mark = batches.length;
    await fsp.writeFile(path.join(content, 'A.lasset'), 'a');
    await waitFor(() => 'Plugins/Late/Content/A.lasset' in netSince(batches, mark), 'a file in it');
  });
});
