/**
 * A one-line progress bar on a TTY's stderr, fed by the typed progress events. Logs share that
 * stream, so log lines go through `logStream()`, which lifts the bar, writes the line and puts the
 * bar back: the two never garble each other. Never used when stderr is not a TTY (CI, pipes).
 */
import { Writable } from 'node:stream';
import type { ProgressBus, ProgressEvent } from './events.js';

export class ProgressBar {
  private total = 0;
  private done = 0;
  private cached = 0;
  private last = 0;
  private shown = false;
  private off?: () => void;

  constructor(private readonly stream: NodeJS.WriteStream) {}

  /** Follow a cook's events until `stop()`. */
  attach(bus: ProgressBus): this {
    this.off = bus.on((e: ProgressEvent) => {
      if (e.type === 'START' && e.phase === 'cook') {
        this.total = e.total ?? 0;
        this.draw(true);
      } else if (e.type === 'COOK_END') {
        this.done++;
        if (e.cached) this.cached++;
        this.draw(this.done === this.total);
      } else if (e.type === 'END' && e.phase === 'cook') {
        this.hide();
      }
    });
    return this;
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
    this.hide();
  }

  private draw(force = false): void {
    const now = Date.now();
    if (!force && now - this.last < 100) return;
    this.last = now;
    const width = Math.max(10, Math.min(40, (this.stream.columns || 80) - 40));
    const filled = this.total ? Math.round((this.done / this.total) * width) : 0;
    this.stream.write(`\r[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${this.done}/${this.total} (${this.cached} cached)\x1b[K`);
    this.shown = true;
  }

  private hide(): void {
    if (!this.shown) return;
    this.stream.write('\r\x1b[K');
    this.shown = false;
  }
}
