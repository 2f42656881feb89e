/**
 * The TTY progress bar, driven by the same typed events a cook emits, on a stream that records
 * what a terminal would receive, with a clock the test sets: the scan shows, the cook shows
 * done/total, rate and ETA, and the assets in flight by name, oldest first with their time once
 * they are slow (a stuck asset is visible); the pak phase shows; the bar is gone at the end.
 */
import { describe, expect, it } from 'vitest';
import { ProgressBus } from '../../src/log/events.js';
import { formatDuration, ProgressBar } from '../../src/log/progressBar.js';

function terminal() {
  const written: string[] = [];
  return { written, columns: 160, isTTY: true, write: (s: string | Uint8Array, cb?: () => void) => (written.push(String(s)), cb?.(), true) } as unknown as NodeJS.WriteStream & { written: string[] };
}

/** What the terminal shows on the bar's line now: the text after the last \r, without erase codes. */
const shown = (t: { written: string[] }) => (t.written.join('').split('\r').pop() ?? '').replace(/\x1b\[K/g, '');

describe('ProgressBar', () => {
  it('follows scan, cook and paks; shows rate, ETA and the assets in flight', () => {
    let now = 0;
    const t = terminal();
    const bus = new ProgressBus();
    const bar = new ProgressBar(t, { now: () => now, tickMs: 0 }).attach(bus);

    bus.emit({ type: 'START', phase: 'scan' });
    now = 1500;
    bus.emit({ type: 'COOK_START', asset: '/x', file: '/x' }); // ignored outside a cook: no crash
    expect(bar.line()).toBe('scanning the project... 1.5 s');
    bus.emit({ type: 'SCAN_PROGRESS', files: 20000, toRead: 300, read: 120 });
    expect(bar.line()).toBe('scanning the project: 20000 files, reading 120/300 changed... 1.5 s');
    bus.emit({ type: 'END', phase: 'scan', ms: 1500, ok: true });
    expect(shown(t)).toBe('');

    bus.emit({ type: 'START', phase: 'cook', total: 10 });
    bus.emit({ type: 'COOK_START', asset: '/Game/Maps/Main.lasset', file: 'Main.lasset' });
    bus.emit({ type: 'COOK_START', asset: '/Game/Textures/T_Rock.lasset', file: 'T_Rock.lasset' });
    expect(bar.line()).toContain('0/10 0%');
    expect(bar.line()).toContain('| Main.lasset, T_Rock.lasset');
    for (let i = 0; i < 4; i++) {
      now += 500;
      bus.emit({ type: 'COOK_START', asset: `/Game/A${i}.lasset`, file: `A${i}` });
      bus.emit({ type: 'COOK_END', asset: `/Game/A${i}.lasset`, file: `A${i}`, cached: i === 0, bytesIn: 1, bytesOut: 1 });
    }
    bus.emit({ type: 'COOK_END', asset: '/Game/Maps/Main.lasset', file: 'Main.lasset', cached: false, bytesIn: 1, bytesOut: 1 });
    // 5 done of 10; the last 5 finished over 1.5 s (4 intervals): 2.7/s, 5 left: 1.9 s to go.
    // T_Rock started 2 s ago and is still going: it shows with its time.
    expect(bar.line()).toMatch(/\] 5\/10 50% 2\.7\/s ETA 1\.9 s \(1 cached\) \| T_Rock\.lasset 2\.0 s$/);
    now += 60_000;
    expect(bar.line()).toMatch(/\| T_Rock\.lasset 1m02s$/);
    // Redraws are throttled to 10 a second: the terminal shows the bar, maybe a few events behind.
    expect(shown(t)).toMatch(/\d\/10 /);

    bus.emit({ type: 'END', phase: 'cook', ms: 1, ok: true });
    bus.emit({ type: 'START', phase: 'pak', total: 2 });
    bus.emit({ type: 'PAK_WRITTEN', file: 'Main.pak', chunk: 'Main', entries: 1, bytes: 1 });
    expect(shown(t)).toBe('writing paks 1/2... 0.0 s');
    bus.emit({ type: 'END', phase: 'pak', ms: 1, ok: true });
    bar.stop();
    expect(shown(t)).toBe('');
  });

  it('never draws a line wider than the terminal (a wrapped line cannot be redrawn)', () => {
    const t = terminal();
    (t as { columns: number }).columns = 40;
    const bus = new ProgressBus();
    new ProgressBar(t, { now: () => 0, tickMs: 0 }).attach(bus);
    bus.emit({ type: 'START', phase: 'cook', total: 3 });
    bus.emit({ type: 'COOK_START', asset: `/Game/${'Long'.repeat(20)}.lasset`, file: 'x' });
    for (const w of t.written.join('').split('\r')) expect(w.replace(/\x1b\[K/g, '').length).toBeLessThan(40);
  });

  it('lifts itself for log lines and puts itself back', async () => {
    const t = terminal();
    const bus = new ProgressBus();
    const bar = new ProgressBar(t, { now: () => 0, tickMs: 0 }).attach(bus);
    bus.emit({ type: 'START', phase: 'cook', total: 3 });
    await new Promise<void>((r) => bar.logStream().write('a log line\n', () => r()));
    const all = t.written.join('');
    expect(all.indexOf('\r\x1b[Ka log line\n')).toBeGreaterThan(0);
    expect(shown(t)).toContain('0/3');
  });

  it('formats durations for people', () => {
    expect([formatDuration(0), formatDuration(59_940), formatDuration(61_000), formatDuration(3_723_000)]).toEqual(['0.0 s', '59.9 s', '1m01s', '1h02m']);
  });
});
