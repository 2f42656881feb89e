/**
 * The daemon never runs blind. A mount root @parcel/watcher cannot subscribe used to be a
 * warning while the daemon said it was watching. The real failure used here is a mount whose
 * folder is a regular file: the native subscribe rejects ("Not a directory") the same way it does
 * for an inotify limit (ENOSPC from inotify_add_watch), through the same path in watcher.ts.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Daemon } from '../../watch/Daemon.js';
import { watchError } from '../../watch/watcher.js';
import { daemonAndRoot, tempDir, waitFor } from './helpers.js';
import { makeProject } from './project.js';

describe('a mount folder the daemon cannot watch', () => {
  const t = daemonAndRoot();

  it('fails the start with WATCH_FAILED and releases what the start took', async () => {
    t.root = await tempDir();
    const p = await makeProject(t.root);
    const kept = path.join(t.root, 'Content.kept');
    await fsp.rename(p.content, kept);
    await fsp.writeFile(p.content, 'not a folder');
    await expect(Daemon.start({ projectDir: p.dir, debounceMs: 20, consolidateAfterMs: 0 })).rejects.toMatchObject({
      code: 'WATCH_FAILED',
      file: p.content,
      message: expect.stringContaining('Not a directory'),
    });
    // The lock and the control server are released: once the folder is one, a start succeeds.
    await fsp.rm(p.content);
    await fsp.rename(kept, p.content);
    t.daemon = await Daemon.start({ projectDir: p.dir, debounceMs: 20, consolidateAfterMs: 0 });
    expect(t.daemon.status().errors).toEqual([]);
  });

  it('after start shows the folder it cannot watch on the error board until it can', async () => {
    t.root = await tempDir();
    const p = await makeProject(t.root, { engineContentDir: 'Engine' });
    const engine = path.join(p.dir, 'Engine');
    t.daemon = await Daemon.start({ projectDir: p.dir, debounceMs: 20, consolidateAfterMs: 0 });
    const d = t.daemon;
    // The missing mount appears, but as a file: its subscribe fails after start.
    await fsp.writeFile(engine, 'not a folder');
    const shown = await waitFor(() => d.status().errors.find((e) => e.code === 'WATCH_FAILED'), 'WATCH_FAILED on the board');
    expect(shown.file).toBe(engine);
    expect(shown.message).toContain('Not a directory');
    // Retried: once it is a folder it is watched, the error goes, and a save in it is seen.
    await fsp.rm(engine);
    await fsp.mkdir(engine);
    await waitFor(() => !d.status().errors.some((e) => e.code === 'WATCH_FAILED'), 'WATCH_FAILED resolved');
    await fsp.writeFile(path.join(engine, 'Note.rml'), '<rml>engine</rml>');
    await waitFor(() => d.registry.byFile(path.join(engine, 'Note.rml')), 'the save in the folder seen');
  });

  it('names the sysctl to raise for the inotify limits', () => {
    const watches = watchError('/x', new Error('inotify_add_watch on \'/x\' failed: No space left on device'));
    expect(watches.code).toBe('WATCH_FAILED');
    expect(watches.hint).toContain('fs.inotify.max_user_watches');
    const instances = watchError('/x', new Error('Unable to initialize inotify: Too many open files'));
    expect(instances.hint).toContain('fs.inotify.max_user_instances');
  });
});
