import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProgressBus } from '../../src/log/events.js';
import { ControlServer, type DaemonStatus } from '../../watch/controlServer.js';
import { daemonCook, daemonStatus, readDaemonInfo } from '../../watch/daemonClient.js';
import { tempDir, waitFor } from './helpers.js';

describe('ControlServer', () => {
  let dir: string;
  let server: ControlServer;
  const bus = new ProgressBus();
  let cooks = 0;
  let stopped = 0;
  const status = (): DaemonStatus => ({
    state: 'idle',
    pid: process.pid,
    project: dir,
    startedAt: 'now',
    queue: 3,
    batches: 7,
    lastCook: null,
    errors: [{ code: 'COOK_FAILED', message: 'nope' }],
  });

  beforeEach(async () => {
    dir = await tempDir();
    cooks = 0;
    stopped = 0;
    server = await ControlServer.start({
      port: 0,
      infoFile: path.join(dir, 'Intermediates', 'daemon.json'),
      project: dir,
      bus,
      status,
      triggerCook: () => ({ id: `cook-${++cooks}`, joined: false }),
      shutdown: () => stopped++,
      heartbeatMs: 50,
    });
  });

  afterEach(async () => {
    await server.close();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it('writes daemon.json with mode 0600 and removes it on close', async () => {
    const file = path.join(dir, 'Intermediates', 'daemon.json');
    const info = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(info).toEqual({ pid: process.pid, port: server.port, token: server.token, startedAt: expect.any(String), project: dir });
    expect(info.token).toMatch(/^[0-9a-f]{64}$/);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    await server.close();
    expect(fs.existsSync(file)).toBe(false);
  });

  it('refuses requests without the token or with a wrong one', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer nope' }, { authorization: server.token }, { authorization: `Bearer ${server.token}x` }]) {
      const res = await fetch(`${server.url}/status`, { headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'missing or wrong bearer token (see daemon.json)' });
    }
    const cook = await fetch(`${server.url}/cook`, { method: 'POST' });
    expect(cook.status).toBe(401);
    expect(cooks).toBe(0);
  });

  it('listens on 127.0.0.1 only', () => {
    expect((server as unknown as { server: import('node:http').Server }).server.address()).toMatchObject({ address: '127.0.0.1' });
  });

  it('answers status and cook with the token, 404/405 otherwise', async () => {
    const auth = { authorization: `Bearer ${server.token}` };
    const st = await fetch(`${server.url}/status`, { headers: auth });
    expect(st.status).toBe(200);
    expect(await st.json()).toEqual(status());
    const cook = await fetch(`${server.url}/cook`, { method: 'POST', headers: auth });
    expect(cook.status).toBe(202);
    expect(await cook.json()).toEqual({ id: 'cook-1', joined: false });
    expect((await fetch(`${server.url}/cook`, { headers: auth })).status).toBe(405);
    expect((await fetch(`${server.url}/nope`, { headers: auth })).status).toBe(404);
    const stop = await fetch(`${server.url}/shutdown`, { method: 'POST', headers: auth });
    expect(stop.status).toBe(202);
    await waitFor(() => stopped === 1, 'shutdown callback');
  });

  it('the client reads daemon.json and calls the API', async () => {
    const inter = path.join(dir, 'Intermediates');
    expect(readDaemonInfo(inter)).toMatchObject({ port: server.port, token: server.token });
    expect(await daemonStatus(inter)).toEqual(status());
    expect(await daemonCook(inter)).toEqual({ id: 'cook-1', joined: false });
    await server.close();
    await expect(daemonStatus(inter)).rejects.toMatchObject({ code: 'DAEMON_UNAVAILABLE', message: 'no daemon is running for this project (no daemon.json)' });
  });

  it('streams progress events as SSE with heartbeats and drops the listener when the client goes', async () => {
    const ac = new AbortController();
    const res = await fetch(`${server.url}/events`, { headers: { authorization: `Bearer ${server.token}` }, signal: ac.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let text = '';
    const readUntil = async (pred: (t: string) => boolean) => {
      while (!pred(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended: ${text}`);
        text += dec.decode(value, { stream: true });
      }
    };
    await readUntil((t) => t.includes(': connected'));
    bus.emit({ type: 'BATCH_START', batch: 1, files: 2 });
    bus.emit({ type: 'BATCH_END', batch: 1, ms: 5, ok: true, changed: 2, removed: 0, cooked: 2 });
    await readUntil((t) => t.includes('event: BATCH_END'));
    expect(text).toContain(`event: BATCH_START\ndata: ${JSON.stringify({ type: 'BATCH_START', batch: 1, files: 2 })}\n\n`);
    await readUntil((t) => t.includes(': heartbeat'));
    const listeners = (bus as unknown as { listeners: Set<unknown> }).listeners;
    expect(listeners.size).toBe(1);
    ac.abort();
    await waitFor(() => listeners.size === 0, 'listener cleanup');
  });
});
