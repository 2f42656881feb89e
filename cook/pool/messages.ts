/** What the cook pool (main thread) and its workers say to each other: plain, structured-cloneable data. */
import type { TextureConfig } from '../../config/index.js';
import type { WrittenOutput } from '../cookAsset.js';
import type { PackageCookOutcome } from '../cookPackageSource.js';
import type { BatchAnswer, ReadJob } from '../../src/registry/readPool.js';

/** The settings every package cook of a project shares; the worker loads the schemas itself. */
export interface WorkerSettings {
  editorOnlyClassPrefixes: readonly string[];
  compressionLevel: number;
  textures: TextureConfig;
  onCookFailure: 'fail' | 'verbatim';
  /** The project's schemas folder, or null for none. */
  schemasDir: string | null;
}

/** Fixed for a worker's life (workerData). */
export interface WorkerInit {
  settings: WorkerSettings;
  /** Tests only: the worker thread exits (code 7) when it starts cooking a file whose path ends with this. */
  exitOn?: string;
}

/** One package: its source, and the cooked file the worker writes. */
export interface WorkerJob {
  file: string;
  output: string;
  /** Its package path: the worker then returns its shader materials with the outcome. */
  packagePath?: string;
  /** The file's whole content, read by the registry's cold scan (transferred): cooked instead of reading the file. */
  source?: Uint8Array;
  /** A text asset: copied byte for byte (read, written, hashed), never parsed. */
  text?: true;
}

/** `scan`: a batch of the registry's cold scan (src/registry/readPool.ts), read and answered as its own read threads do. */
export type ToWorker =
  | { type: 'settings'; settings: WorkerSettings }
  | { type: 'batch'; id: number; jobs: WorkerJob[] }
  | { type: 'scan'; id: number; jobs: ReadJob[]; keep: boolean };

/**
 * One job's answer: its outcome (`written`: the LCKD bytes are in the output file, with its
 * xxh64, size and mtime, so the main thread neither hashes nor stats it; a write that failed is a
 * failed outcome), or "cook it on the main thread" (a basisu texture), or a text job's copy
 * (`copied`: its byte count; `written.cookedXxh64` is the xxh64 of those bytes, the source's too).
 */
export type JobResult = { outcome: PackageCookOutcome; written?: WrittenOutput } | { needsMain: true } | { copied: number; written: WrittenOutput };

/** `ready`: the worker has loaded and takes messages now (a scan reads on the main thread until then). */
export type FromWorker = { type: 'batch'; id: number; results: JobResult[] } | { type: 'scan'; id: number; answer: BatchAnswer } | { type: 'ready' };
