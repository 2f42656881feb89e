/**
 * A one-line progress bar on a TTY's stderr, fed by the typed progress events. It follows the
 * whole run: the scan (elapsed time), the cook (done/total, rate, ETA, and the assets in flight,
 * oldest first with how long each has taken, so a stuck asset is visible by name), and the pak
 * writes. Logs share the stream, so log lines go through `logStream()`, which lifts the bar,
 * writes the line and puts the bar back: the two never garble each other. Never used when stderr
 * is not a TTY (CI, pipes): the CLI decides that.
 */
import { Writable } from 'node:stream';
import type { ProgressBus, ProgressEvent } from './events.js';

export interface ProgressBarOptions {
  /** Milliseconds clock; tests pass their own. */
  now?: () => number;
  /** Redraw at least this often while a phase runs, so elapsed times move (0: only on events). */
  tickMs?: number;
}

/** Completions kept for the rate: the recent ones, so a cached start does not skew the ETA. */
const RATE_WINDOW = 256;
/** An asset in flight longer than this shows its time. */
const SLOW_MS = 2_000;

type Phase = 'idle' | 'scan' | 'cook' | 'pak';

/** `12.3 s`, `4m05s`, `1h02m`. */
export function formatDuration(ms: number): string {
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.floor(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** The last path segment, which names the asset well enough on one line. */
function shortName(asset: string): string {
  return asset.slice(asset.lastIndexOf('/') + 1);
}

export class ProgressBar {
  private phase: Phase = 'idle';
  private phaseStart = 0;
  private total = 0;
  private done = 0;
  private cached = 0;
  private paksTotal = 0;
  private scan: { files: number; toRead: number; read: number } | undefined;
  private paksDone = 0;
  /** Asset → when it started; Map keeps start order, so the first is the oldest. */
  private readonly inFlight = new Map<string, number>();
  private readonly finishedAt: number[] = [];
  private last = 0;
  private shown = false;
  private off?: () => void;
  private timer?: NodeJS.Timeout;
  private readonly now: () => number;
  private readonly tickMs: number;

  constructor(
    private readonly stream: NodeJS.WritableStream & { columns?: number; isTTY?: boolean },
    opts: ProgressBarOptions = {},
  ) {
    this.now = opts.now ?? (() => performance.now());
    this.tickMs = opts.tickMs ?? 250;
  }

  /** Follow a run's events until `stop()`. */
  attach(bus: ProgressBus): this {
    this.off = bus.on((e) => this.onEvent(e));
    return this;
  }

  private onEvent(e: ProgressEvent): void {
    const now = this.now();
    switch (e.type) {
      case 'START':
        if (e.phase === 'scan' || e.phase === 'cook' || e.phase === 'pak') this.enter(e.phase, now, e.total ?? 0);
        break;
      case 'SCAN_PROGRESS':
        this.scan = { files: e.files, toRead: e.toRead, read: e.read };
        this.draw();
        break;
      case 'COOK_START':
        this.inFlight.set(e.asset, now);
        this.draw();
        break;
      case 'COOK_END':
        this.inFlight.delete(e.asset);
        this.done++;
        if (e.cached) this.cached++;
        this.finishedAt.push(now);
        if (this.finishedAt.length > RATE_WINDOW) this.finishedAt.shift();
        this.draw(this.done === this.total);
        break;
      case 'PAK_WRITTEN':
        this.paksDone++;
        this.draw(true);
        break;
      case 'END':
        if (e.phase === this.phase) this.leave();
        break;
      default:
        break;
    }
  }

  private enter(phase: Phase, now: number, total: number): void {
    this.phase = phase;
    this.phaseStart = now;
    if (phase === 'scan') this.scan = undefined;
    if (phase === 'cook') {
      this.total = total;
      this.done = 0;
      this.cached = 0;
      this.inFlight.clear();
      this.finishedAt.length = 0;
    } else if (phase === 'pak') {
      this.paksTotal = total;
      this.paksDone = 0;
    }
    if (this.tickMs > 0 && !this.timer) {
      this.timer = setInterval(() => this.draw(true), this.tickMs);
      this.timer.unref();
    }
    this.draw(true);
  }

  private leave(): void {
    this.phase = 'idle';
    this.clearTimer();
    this.hide();
  }

  /** Assets finished per second over the recent window; 0 until two have finished. */
  rate(): number {
    const n = this.finishedAt.length;
    if (n < 2) return 0;
    const span = this.finishedAt[n - 1] - this.finishedAt[0];
    return span > 0 ? ((n - 1) * 1000) / span : 0;
  }

  /** The bar's text as it would be drawn now (without the terminal control codes). */
  line(): string {
    const now = this.now();
    const elapsed = formatDuration(now - this.phaseStart);
    if (this.phase === 'scan') {
      const s = this.scan;
      if (!s) return `scanning the project... ${elapsed}`;
      // A warm scan reads only what changed since the registry cache: say both numbers.
      return `scanning the project: ${s.files} files, reading ${s.read}/${s.toRead} changed... ${elapsed}`;
    }
    if (this.phase === 'pak') return `writing paks ${this.paksDone}/${this.paksTotal}... ${elapsed}`;
    if (this.phase !== 'cook') return '';
    const width = Math.max(10, Math.min(30, (this.stream.columns || 80) - 60));
    const filled = this.total ? Math.min(width, Math.round((this.done / this.total) * width)) : 0;
    const pct = this.total ? Math.floor((this.done / this.total) * 100) : 0;
    const rate = this.rate();
    const eta = rate > 0 && this.done < this.total ? ` ETA ${formatDuration(((this.total - this.done) / rate) * 1000)}` : '';
    let text =
      `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${this.done}/${this.total} ${pct}%` +
      `${rate > 0 ? ` ${rate >= 10 ? rate.toFixed(0) : rate.toFixed(1)}/s` : ''}${eta} (${this.cached} cached)`;
    if (this.inFlight.size) {
      const names = [...this.inFlight].map(([asset, since]) => {
        const took = now - since;
        return took >= SLOW_MS ? `${shortName(asset)} ${formatDuration(took)}` : shortName(asset);
      });
      text += ` | ${names.slice(0, 3).join(', ')}${names.length > 3 ? ` +${names.length - 3}` : ''}`;
    }
    return text;
  }

  /** A stream for the logger: each write lifts the bar first and redraws it after. */
  logStream(): Writable {
    const w = new Writable({
      write: (chunk, _enc, cb) => {
        const wasShown = this.shown;
        this.hide();
        this.stream.write(chunk, cb);
        if (wasShown) this.draw(true);
      },
    });
    // The pretty printer colours only for a terminal: this stream stands for one.
    return Object.assign(w, { isTTY: this.stream.isTTY });
  }

  stop(): void {
    this.off?.();
    this.clearTimer();
    this.hide();
  }

  private clearTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private draw(force = false): void {
    if (this.phase === 'idle') return;
    const now = this.now();
    if (!force && now - this.last < 100) return;
    this.last = now;
    // One line that never wraps: a wrapped line cannot be redrawn in place with \r.
    const max = Math.max(20, (this.stream.columns || 80) - 1);
    const text = this.line();
    this.stream.write(`\r${text.length > max ? `${text.slice(0, max - 1)}…` : text}\x1b[K`);
    this.shown = true;
  }

  private hide(): void {
    if (!this.shown) return;
    this.stream.write('\r\x1b[K');
    this.shown = false;
  }
}
