/**
 * The watch daemon: keeps a project's paks current while its content is edited.
 *
 * Start-up: refuse when another live daemon owns the project, take the project lock (one writer),
 * sweep temp files a killed run left, start watching every mount, then scan and run a full cook
 * (the cook cache makes it cheap; it rewrites only chunk paks whose inputs changed) as the first
 * unit of the work chain: saves made meanwhile are batches queued behind it, so none is lost.
 *
 * Per batch of file changes: `registry.updateFiles` once (one registry broadcast per batch), then
 * IncrementalCook cooks what changed and rewrites `Saved/Paks/Dev.pak`. After a quiet period the
 * dev pak is folded back into the chunk paks by a full cook and deleted.
 *
 * All work (batches, full cooks) runs one at a time through one chain, so a full cook and a batch
 * never write the cook cache or the paks together.
 *
 * Crash safety rests on the writers: cooked files, the cook cache, paks and daemon.json are all
 * temp + rename, and a cache entry is recorded only after its output is on disk. A kill at any
 * moment leaves old or new files under final names; the next start sweeps the temps and its full
 * cook reconciles paks with the sources.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig, type ProjectConfig } from '../config/index.js';
import { Cooker, type CookSummary } from '../cook/Cooker.js';
import { ProjectLock } from '../cook/projectLock.js';
import { errors, isLuminaError, type LuminaLog } from '../src/errors.js';
import { ProgressBus } from '../src/log/events.js';
import { silentLogger, type Logger } from '../src/log/logger.js';
import { AssetRegistry } from '../src/registry/AssetRegistry.js';
import { ChangeBatcher, type ChangeBatch } from './ChangeBatcher.js';
import { ControlServer, DAEMON_INFO_FILE, type DaemonStatus, type LastCook } from './controlServer.js';
import { pidAlive } from '../src/util/pidAlive.js';
import { IncrementalCook } from './IncrementalCook.js';
import { ErrorBoard } from './ErrorBoard.js';
import { reportFiles } from '../cook/report/writeCookReport.js';
import { watchMounts, type MountWatcher } from './watcher.js';

export interface DaemonOptions {
  projectDir: string;
  log?: Logger;
  /** Shared across project switches; the SSE stream listens here. */
  bus?: ProgressBus;
  /** Overrides config.watch.debounceMs. */
  debounceMs?: number;
  /** Overrides config.watch.port (0: a free port). */
  port?: number;
  /** Fold the dev pak into the chunk paks after this much quiet time; 0 never. Default 5000. */
  consolidateAfterMs?: number;
  /** How long stop() waits for the in-flight batch before abandoning it. Default 10000. */
  shutdownTimeoutMs?: number;
  /** A mount folder whose subscribe has not settled after this long is not watched (WATCH_FAILED). Default SUBSCRIBE_TIMEOUT_MS (watcher.ts). */
  subscribeTimeoutMs?: number;
}

interface FullCookPending {
  id: string;
  started: boolean;
  done: Promise<CookSummary | undefined>;
}

/** Everything that belongs to one project; replaced whole on a project switch. */
interface Session {
  config: ProjectConfig;
  /** This daemon is the project's one writer while the session lasts. */
  lock: ProjectLock;
  registry: AssetRegistry;
  /** The one cook engine: the start-up and fold cooks and every batch go through it. */
  cooker: Cooker;
  cook: IncrementalCook;
  batcher: ChangeBatcher;
  watcher: MountWatcher;
}

const RECENT_COOKS = 20;

export class Daemon {
  readonly bus: ProgressBus;
  private readonly log: Logger;
  private session!: Session;
  private server!: ControlServer;
  private state: DaemonStatus['state'] = 'starting';
  private readonly startedAt = new Date().toISOString();
  private chain: Promise<unknown> = Promise.resolve();
  /** A full cook that is queued or running: POST /cook joins it. */
  private fullCookPending: FullCookPending | undefined;
  private cookSeq = 0;
  private batches = 0;
  private lastCook: LastCook | null = null;
  /** Current errors for /status and the status page; cleared as their files are fixed. */
  private readonly errorBoard: ErrorBoard;
  /** The last RECENT_COOKS cooks, oldest first, so a client waiting for its cook finds it after a batch. */
  private recentCooks: LastCook[] = [];
  private consolidateTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<{ finished: boolean }> | undefined;

  private resolveStopped!: (r: { finished: boolean }) => void;
  /** Resolves once the daemon has stopped, however it was asked to (stop(), POST /shutdown, a signal). */
  readonly stopped: Promise<{ finished: boolean }> = new Promise((r) => (this.resolveStopped = r));

  private constructor(private readonly opts: DaemonOptions) {
    this.log = opts.log ?? silentLogger;
    this.bus = opts.bus ?? new ProgressBus();
    this.errorBoard = new ErrorBoard(this.bus, () => (this.session as Session | undefined)?.config.projectDir ?? opts.projectDir);
  }

  /** Start a daemon on `projectDir`. Resolves once the first cook is done and events are live. */
  static async start(opts: DaemonOptions): Promise<Daemon> {
    const d = new Daemon(opts);
    const config = d.loadProject(opts.projectDir);
    const infoFile = path.join(config.intermediatesDir, DAEMON_INFO_FILE);
    d.server = await ControlServer.start({
      port: opts.port ?? config.watch.port,
      infoFile,
      project: config.projectDir,
      bus: d.bus,
      log: d.log,
      status: () => d.status(),
      triggerCook: () => d.triggerCook(),
      shutdown: () => void d.stop(),
      reportFile: () => d.reportFile(),
    });
    try {
      d.session = await d.openSession(config);
    } catch (e) {
      await d.server.close();
      throw e;
    }
    d.state = 'idle';
    return d;
  }

  /** Port and token of the control API. */
  get control(): { url: string; port: number; token: string } {
    return { url: this.server.url, port: this.server.port, token: this.server.token };
  }

  /** A fresh one-time URL that logs a browser in to the status page. */
  loginUrl(): string {
    return this.server.loginUrl();
  }

  private reportFile(): string | undefined {
    const s = this.session as Session | undefined;
    return s && reportFiles(s.config).html;
  }

  get config(): ProjectConfig {
    return this.session.config;
  }

  get registry(): AssetRegistry {
    return this.session.registry;
  }

  private loadProject(projectDir: string): ProjectConfig {
    const { config, warnings } = loadConfig(projectDir);
    for (const w of warnings) this.log.warn({ file: config.configFile }, w);
    const infoFile = path.join(config.intermediatesDir, DAEMON_INFO_FILE);
    // A live pid with someone else's token owns the project (our own file is fine: a switch back).
    const other = readInfo(infoFile);
    if (other && other.token !== (this.server as ControlServer | undefined)?.token && pidAlive(other.pid)) throw errors.daemonRunning(infoFile, other.pid);
    return config;
  }

  private async openSession(config: ProjectConfig): Promise<Session> {
    // One writer per project: held for as long as this daemon watches it (a `cook` meanwhile gets
    // PROJECT_LOCKED and is told to use `daemon cook`).
    const lock = ProjectLock.acquire(config.intermediatesDir, 'watch');
    let session: Session | undefined;
    try {
      // What a killed run left half-written is swept by the start-up cook like by any cook:
      // Cooker.open beside the paks and caches, its full cook in Saved/Cooked (cookedOutputs.ts).
      // A file that turns corrupt keeps shipping its last good version while the error is shown.
      // autoSave: each batch appends one small journal frame to the registry cache (its changes),
      // so a kill loses no finished batch and no batch rewrites the whole cache.
      const registry = await AssetRegistry.open({ config, log: this.log, mintSidecars: true, autoSave: true, keepLastGood: true });
      const batcher = new ChangeBatcher({
        debounceMs: this.opts.debounceMs ?? config.watch.debounceMs,
        log: this.log,
        handler: (b) => this.runBatch(b),
      });
      session = { config, lock, registry, batcher } as Session;
      this.session = session;
      const s = session;
      // Start-up (scan, then the full cook) is one unit of the work chain, queued before the
      // watcher starts: batches of saves made during start-up run after it and re-check those
      // files, so no save is lost, and none is cooked against a half-scanned registry.
      let go!: (run: boolean) => void;
      const gate = new Promise<boolean>((r) => (go = r));
      const startup = this.exclusive(async () => {
        // A start that failed before the scan (the watcher) leaves the chain free for the next session.
        if (!(await gate)) return 0;
        const scan = await registry.scan();
        this.bus.emit({ type: 'SCAN_END', assets: scan.assets, read: scan.read, cached: scan.cached, removed: scan.removed, ms: scan.ms });
        for (const p of scan.problems) this.noteProblem(p);
        await registry.save().catch((e: unknown) => this.log.warn({ err: e }, 'registry cache not saved'));
        s.cooker = await Cooker.open({ config, registry, log: this.log, bus: this.bus, lock: false });
        s.cook = new IncrementalCook(s.cooker);
        // The start-up cook also drops a dev pak a killed run left: the chunk paks now hold its content.
        await this.fullCook(this.newFullCook(), 'full');
        return scan.assets;
      });
      // The watcher first (it sees every save from here on), then the scan. Sidecars the scan
      // mints come back as events too: a re-check that finds them unchanged costs a stat.
      // A root that cannot be watched fails the start (WATCH_FAILED): a daemon that says it is
      // watching and sees no save is worse than none. Later failures go to the error board.
      s.watcher = watchMounts({
        roots: config.mounts.map((m) => m.dir),
        batcher,
        log: this.log,
        onWatchError: (e) => this.bus.emit({ type: 'ERROR', log: e.toLog() }),
        onWatchRestored: (dir) => this.errorBoard.resolve('WATCH_FAILED', dir),
        subscribeTimeoutMs: this.opts.subscribeTimeoutMs,
      });
      try {
        await s.watcher.ready;
      } catch (e) {
        go(false);
        throw e;
      }
      go(true);
      const assets = await startup;
      this.log.info({ project: config.projectDir, port: this.server.port, assets }, 'watching');
      return s;
    } catch (e) {
      await session?.watcher?.close().catch(() => {});
      await session?.batcher.close(0).catch(() => false);
      session?.registry?.close();
      session?.cooker?.close();
      lock.release();
      throw e;
    }
  }

  /** Run `fn` after all earlier work; failures are the caller's, the chain goes on. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => {});
    return run;
  }

  private noteCook(c: LastCook): void {
    this.lastCook = c;
    this.recentCooks.push(c);
    if (this.recentCooks.length > RECENT_COOKS) this.recentCooks.shift();
  }

  private noteProblem(p: { code: string; message: string; file?: string; hint?: string; severity?: 'error' | 'warning' }): void {
    const log = { code: p.code, message: p.message, file: p.file } as LuminaLog;
    if (p.hint) log.hint = p.hint;
    this.bus.emit({ type: p.severity === 'warning' ? 'WARNING' : 'ERROR', log });
  }

  private runBatch(batch: ChangeBatch): Promise<void> {
    return this.exclusive(async () => {
      if (this.stopping) return;
      const s = this.session;
      const t0 = performance.now();
      const startedAt = new Date().toISOString();
      const id = `batch-${batch.seq}`;
      this.state = 'cooking';
      this.clearConsolidate();
      this.bus.emit({ type: 'BATCH_START', batch: batch.seq, files: batch.changes.length + batch.dirs.length });
      let ok = false;
      let summary: { changed: number; removed: number; cooked: number } = { changed: 0, removed: 0, cooked: 0 };
      try {
        const scan = await s.registry.updateFiles([...batch.changes.map((c) => c.file), ...batch.dirs]);
        const change = scan.change;
        for (const p of scan.problems) this.noteProblem(p);
        // A save under a Shaders/ folder re-cooks the permutations it reaches (the shader cache keys say which).
        const shadersChanged = [...batch.changes.map((c) => c.file), ...batch.dirs].some((f) => s.cooker.shaders.isShaderPath(f));
        const r = await s.cook.runBatch(change, { shadersChanged });
        // The registry cache was journaled by updateFiles (one frame with this batch's changes).
        summary = { changed: change.added.length + change.changed.length, removed: change.removed.length, cooked: r.cooked };
        ok = r.failed.length === 0;
        this.log.info({ batch: batch.seq, files: batch.changes.length, ...summary, devPak: r.devPakWritten, ms: Math.round(performance.now() - t0) }, 'batch done');
      } catch (e) {
        const log = isLuminaError(e) ? e.toLog() : ({ code: 'IO_FAILED', message: String((e as Error)?.message ?? e) } as LuminaLog);
        this.bus.emit({ type: 'ERROR', log });
        this.log.error({ code: log.code, file: log.file, batch: batch.seq }, log.message);
      } finally {
        const ms = performance.now() - t0;
        this.batches++;
        this.noteCook({ id, kind: 'batch', ok, startedAt, ms: Math.round(ms), summary });
        this.errorBoard.settleBatch([...batch.changes.map((c) => c.file), ...batch.dirs]);
        this.bus.emit({ type: 'BATCH_END', batch: batch.seq, ms, ok, ...summary });
        this.state = 'idle';
        this.armConsolidate();
      }
    });
  }

  private clearConsolidate(): void {
    if (this.consolidateTimer) clearTimeout(this.consolidateTimer);
    this.consolidateTimer = undefined;
  }

  /** After a quiet period, fold the dev pak into the chunk paks. */
  private armConsolidate(): void {
    this.clearConsolidate();
    const after = this.opts.consolidateAfterMs ?? 5000;
    if (after <= 0 || this.stopping || this.session.cook.devPak.size === 0) return;
    this.consolidateTimer = setTimeout(() => {
      this.consolidateTimer = undefined;
      if (this.session.batcher.busy || this.session.batcher.queued > 0) return this.armConsolidate();
      void this.enqueueFullCook('full');
    }, after);
    this.consolidateTimer.unref();
  }

  /** POST /cook: start a full cook, or join the one queued or running. */
  triggerCook(): { id: string; joined: boolean } {
    if (this.fullCookPending) return { id: this.fullCookPending.id, joined: true };
    return { id: this.enqueueFullCook('full').id, joined: false };
  }

  /** A new pending full cook (what POST /cook joins until it starts). */
  private newFullCook(): FullCookPending {
    const pending: FullCookPending = { id: `cook-${++this.cookSeq}`, started: false, done: Promise.resolve(undefined) };
    this.fullCookPending = pending;
    return pending;
  }

  /** Queue a full cook on the work chain. */
  private enqueueFullCook(kind: 'full'): { id: string; done: Promise<CookSummary | undefined> } {
    const pending = this.newFullCook();
    pending.done = this.exclusive(() => this.fullCook(pending, kind));
    return pending;
  }

  /** A full cook through the session's Cooker; call only from within the work chain. */
  private async fullCook(pending: FullCookPending, kind: 'full'): Promise<CookSummary | undefined> {
    pending.started = true;
    if (this.stopping) return undefined;
    const s = this.session;
    const t0 = performance.now();
    const startedAt = new Date().toISOString();
    this.state = 'cooking';
    this.clearConsolidate();
    let summary: CookSummary | undefined;
    let ok = false;
    try {
      summary = await s.cooker.cook();
      ok = summary.ok;
      if (ok) this.errorBoard.clearUnfiled();
      // Only a cook that wrote the paks makes the dev pak redundant (the cook removed its file).
      s.cook.reset();
      if (ok) await s.cook.devPak.clear();
      // Batches journal the registry cache as they go; anything a scan left unsaved is saved here.
      await s.registry.save().catch((e: unknown) => this.log.warn({ err: e }, 'registry cache not saved'));
    } catch (e) {
      const log = isLuminaError(e) ? e.toLog() : ({ code: 'COOK_FAILED', message: String((e as Error)?.message ?? e) } as LuminaLog);
      this.bus.emit({ type: 'ERROR', log });
      this.log.error({ code: log.code, file: log.file }, log.message);
      // Nothing to cook (no roots) still leaves text assets and edits to track.
      try {
        s.cook.reset();
      } catch {
        // Reported by the next batch.
      }
    } finally {
      if (this.fullCookPending === pending) this.fullCookPending = undefined;
      this.noteCook({ id: pending.id, kind, ok, startedAt, ms: Math.round(performance.now() - t0), summary: summary && brief(summary) });
      this.state = 'idle';
      this.armConsolidate();
    }
    return summary;
  }

  status(): DaemonStatus {
    const s = this.session as Session | undefined;
    return {
      state: this.stopping ? 'stopping' : this.state,
      pid: process.pid,
      project: s?.config.projectDir ?? this.opts.projectDir,
      startedAt: this.startedAt,
      queue: (s?.batcher.queued ?? 0) + (this.fullCookPending && !this.fullCookPending.started ? 1 : 0),
      batches: this.batches,
      lastCook: this.lastCook,
      recentCooks: [...this.recentCooks],
      errors: this.errorBoard.list(),
      report: s !== undefined && fs.existsSync(reportFiles(s.config).html),
    };
  }

  /** Resolves when no batch is pending or running and no full cook is queued (tests, bench). */
  async whenIdle(): Promise<void> {
    for (;;) {
      await this.session.batcher.idle();
      await this.chain;
      if (!this.session.batcher.busy && this.session.batcher.queued === 0 && !this.fullCookPending) return;
    }
  }

  /**
   * Switch to another project: the old watcher and batcher are closed (the in-flight batch
   * finishes) before the new project's registry and watcher open, so no event is seen twice and
   * no mount is doubled. The control server stays; daemon.json moves to the new project.
   */
  async switchProject(projectDir: string): Promise<void> {
    const config = this.loadProject(projectDir);
    const old = this.session;
    this.clearConsolidate();
    await old.watcher.close();
    this.errorBoard.resolve('WATCH_FAILED'); // the old project's folders are no longer watched or retried
    await old.batcher.close(this.opts.shutdownTimeoutMs ?? 10_000);
    await this.chain;
    await old.registry.save().catch(() => {});
    old.registry.close();
    old.cooker?.close();
    old.lock.release();
    this.state = 'starting';
    this.server.relocate(path.join(config.intermediatesDir, DAEMON_INFO_FILE), config.projectDir);
    this.session = await this.openSession(config);
    this.state = 'idle';
  }

  /**
   * Stop: no new batches, the in-flight one finishes (or is abandoned after shutdownTimeoutMs;
   * every output is atomic, so abandoning is safe), watcher and server close, daemon.json goes.
   */
  stop(): Promise<{ finished: boolean }> {
    this.stopping ??= (async () => {
      this.clearConsolidate();
      const s = this.session as Session | undefined;
      const timeout = this.opts.shutdownTimeoutMs ?? 10_000;
      let finished = true;
      if (s) {
        await s.watcher?.close();
        finished = await s.batcher.close(timeout);
        if (finished) {
          let t: NodeJS.Timeout | undefined;
          finished = await Promise.race([this.chain.then(() => true), new Promise<boolean>((r) => (t = setTimeout(() => r(false), timeout)))]);
          clearTimeout(t);
        }
        if (finished) {
          await s.registry.save().catch(() => {});
          s.registry.close();
          s.cooker?.close();
        }
        s.lock.release();
      }
      await this.server.close();
      this.log.info({ finished }, finished ? 'daemon stopped' : 'daemon stopped; the in-flight batch was abandoned');
      this.resolveStopped({ finished });
      return { finished };
    })();
    return this.stopping;
  }
}

/** The summary without the bulky lists, for /status. */
function brief(s: CookSummary): Omit<CookSummary, 'problems' | 'paks' | 'assetReports'> & { problems: number; paks: number } {
  const { assetReports: _, ...rest } = s;
  return { ...rest, problems: s.problems.length, paks: s.paks.length };
}

function readInfo(infoFile: string): { pid: number; token?: string } | undefined {
  try {
    const info = JSON.parse(fs.readFileSync(infoFile, 'utf8')) as { pid?: unknown; token?: unknown };
    if (!Number.isInteger(info.pid)) return undefined;
    return { pid: info.pid as number, token: typeof info.token === 'string' ? info.token : undefined };
  } catch {
    return undefined;
  }
}

