/**
 * The daemon reports 'idle' only once start() has returned. The start-up cook used to set 'idle'
 * when it finished, while start() still waited for the watcher (and `lumina-cook watch` had not yet
 * installed its SIGTERM handler): a client that saw 'idle' and sent SIGTERM killed the process
 * outright (the crash test's intermittent "exited null").
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Daemon } from '../../watch/Daemon.js';
import { daemonStatus } from '../../watch/daemonClient.js';
import { daemonAndRoot, tempDir } from './helpers.js';
import { makeProject } from './project.js';

describe('daemon start-up status', () => {
  const t = daemonAndRoot();

  it('is never idle before start() has returned', async () => {
    t.root = await tempDir();
    const p = await makeProject(t.root);
    let started = false;
    const starting = Daemon.start({ projectDir: p.dir, debounceMs: 20, consolidateAfterMs: 0 }).then((d) => {
      started = true;
      return d;
    });
    const inter = path.join(p.dir, 'Intermediates');
    const seenBeforeStart = new Set<string>();
    while (!started) {
      const s = await daemonStatus(inter).catch(() => undefined);
      if (s && !started) seenBeforeStart.add(s.state);
      await new Promise((r) => setImmediate(r));
    }
    t.daemon = await starting;
    expect(seenBeforeStart.has('idle')).toBe(false);
    expect(seenBeforeStart.size).toBeGreaterThan(0);
    expect((await daemonStatus(inter)).state).toBe('idle');
  });
});
