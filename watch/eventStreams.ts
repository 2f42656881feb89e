/**
 * The daemon's server-sent event streams, with bounded memory. Each event is serialized once and
 * the same string is written to every open stream. A client that stops reading makes its
 * socket's write buffer grow; once a stream holds more than `maxBufferedBytes` unsent, it is
 * disconnected (an EventSource reconnects by itself and re-reads /status), so 200 stalled clients
 * cost at most 200 x the bound instead of every event since they stalled.
 */
import type http from 'node:http';
import type { ProgressBus, ProgressEvent } from '../src/log/events.js';

/** Why a stream ended: the client left, it fell behind, too many streams, or the server closed. */
export type StreamEndReason = 'client' | 'slow' | 'closing';

export interface EventStreamsOptions {
  bus: ProgressBus;
  /** Unsent bytes one stream may hold before it is dropped. */
  maxBufferedBytes: number;
  heartbeatMs: number;
  onEnd?: (reason: StreamEndReason) => void;
}

/** Format one SSE message. Event types are single words, data is one line of JSON. */
export function formatSse(event: ProgressEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

export class EventStreams {
  private readonly open = new Map<http.ServerResponse, { endedBy?: StreamEndReason }>();
  private off: (() => void) | undefined;
  private beat: NodeJS.Timeout | undefined;

  constructor(private readonly opts: EventStreamsOptions) {}

  get size(): number {
    return this.open.size;
  }

  /** Start streaming to `res` (the request was already authenticated). */
  add(req: http.IncomingMessage, res: http.ServerResponse): void {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
    // A first comment flushes the headers, so the client knows it is subscribed.
    res.write(': connected\n\n');
    // The stream is meant to be quiet between events: the idle timeout does not apply to it
    // (a stalled reader is caught by the buffer bound instead).
    req.socket.setTimeout(0);
    const state: { endedBy?: StreamEndReason } = {};
    this.open.set(res, state);
    const done = () => {
      if (!this.open.delete(res)) return;
      this.opts.onEnd?.(state.endedBy ?? 'client');
      if (this.open.size === 0) this.stop();
    };
    // Not req's 'close': that fires as soon as the (empty) request body has been read.
    res.once('close', done);
    this.start();
  }

  /** Send a text to every stream, dropping the ones that fell behind. */
  private broadcast(text: string): void {
    for (const [res, state] of this.open) {
      if (res.writableEnded || res.destroyed) continue;
      if (res.writableLength + text.length > this.opts.maxBufferedBytes) {
        state.endedBy = 'slow';
        res.destroy();
        continue;
      }
      res.write(text);
    }
  }

  /** One bus listener and one heartbeat timer for all streams, only while any is open. */
  private start(): void {
    if (this.off) return;
    this.off = this.opts.bus.on((e) => this.broadcast(formatSse(e)));
    this.beat = setInterval(() => this.broadcast(': heartbeat\n\n'), this.opts.heartbeatMs);
    this.beat.unref();
  }

  private stop(): void {
    this.off?.();
    this.off = undefined;
    clearInterval(this.beat);
    this.beat = undefined;
  }

  /** End every stream (server shutdown). */
  closeAll(): void {
    for (const [res, state] of this.open) {
      state.endedBy = 'closing';
      res.end();
    }
  }
}
