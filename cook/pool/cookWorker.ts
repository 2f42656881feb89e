/**
 * A cook worker thread (started by CookPool): takes batches of package files and, for each, reads
 * the source once (or takes the bytes a cold scan already read), hashes it, parses, strips, cooks its textures (rgba8) and LCKD-encodes it
 * (cookPackageSource); a text asset's job (`text`) is only copied to its output. The outcomes go back in one message per batch, the LCKD
 * bytes transferred, not copied. Batches run one after another, in order, so memory per worker is
 * one asset's at a time and the pool knows which batch a crash happened in.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { initHash } from '../../src/util/hash.js';
import { answerBatch, type ReadJob } from '../../src/registry/readPool.js';
import { ClassSchemas } from '../../src/schemas/classSchemas.js';
import { loadSchemas } from '../../src/schemas/loadSchemas.js';
import { readSource, writeAssetOutput } from '../cookAsset.js';
import { asCookError, cookPackageSource, NeedsMainThread, type PackageCookOutcome, type PackageCookSettings } from '../cookPackageSource.js';
import type { FromWorker, JobResult, ToWorker, WorkerInit, WorkerJob, WorkerSettings } from './messages.js';

const init = workerData as WorkerInit;
const port = parentPort!;

/** The settings in force, or the error loading the schemas gave (every job then fails with it). */
let settings: PackageCookSettings | Error;

function apply(s: WorkerSettings): void {
  try {
    settings = {
      editorOnlyClassPrefixes: s.editorOnlyClassPrefixes,
      compressionLevel: s.compressionLevel,
      textures: s.textures,
      onCookFailure: s.onCookFailure,
      schemas: s.schemasDir ? loadSchemas(s.schemasDir) : ClassSchemas.empty,
      // basisu textures batch across the whole cook in the main thread's encoder runners.
      beforeTexture:
        s.textures.encoder === 'basis'
          ? () => {
              throw new NeedsMainThread();
            }
          : undefined,
    };
  } catch (e) {
    settings = e as Error;
  }
}

function failed(file: string, e: unknown, sourceSize = 0): PackageCookOutcome {
  return { status: 'failed', contentHash: '', sourceSize, rawSize: 0, strippedExports: 0, nulledRefs: 0, texture: false, warnings: [], fallbacks: [], error: asCookError(e, file).toLog() };
}

/** A text asset's copy (cookTextAsset's read, write and hash, here instead of on the main thread). */
function copyText(file: string, output: string): JobResult {
  try {
    const source = readSource(file);
    return { copied: source.byteLength, written: writeAssetOutput(output, source) };
  } catch (e) {
    return { outcome: failed(file, e) };
  }
}

async function cookFile({ file, output, packagePath, source: given, text }: WorkerJob): Promise<JobResult> {
  if (init.exitOn !== undefined && file.endsWith(init.exitOn)) process.exit(7);
  if (text) return copyText(file, output);
  if (settings instanceof Error) return { outcome: failed(file, settings) };
  let source: Uint8Array;
  try {
    // The bytes the registry's scan read and hashed, when it handed them on: not read again.
    source = given ?? readSource(file);
  } catch (e) {
    return { outcome: failed(file, e) };
  }
  let outcome: PackageCookOutcome;
  try {
    outcome = await cookPackageSource(source, file, settings, packagePath);
  } catch (e) {
    if (e instanceof NeedsMainThread) return { needsMain: true };
    return { outcome: failed(file, e, source.byteLength) };
  }
  if (!outcome.lckd) return { outcome };
  // Written here, not on the main thread: creating the file is the largest single cost of an
  // asset's output, and here it runs on every core.
  try {
    return { outcome, written: writeAssetOutput(output, outcome.lckd) };
  } catch (e) {
    // An output we could not write is not the asset's fault: never verbatim, always failed.
    return { outcome: failed(file, e, source.byteLength) };
  }
}

async function runBatch(id: number, jobs: WorkerJob[]): Promise<void> {
  const results: JobResult[] = [];
  const transfer: ArrayBuffer[] = [];
  for (const j of jobs) {
    const r = await cookFile(j);
    if ('outcome' in r && r.outcome.lckd) {
      // Transfer the bytes, never copy them; a view into a shared buffer is copied out first.
      let b = r.outcome.lckd;
      if (b.byteOffset !== 0 || b.byteLength !== b.buffer.byteLength || !(b.buffer instanceof ArrayBuffer)) b = b.slice();
      r.outcome.lckd = b;
      transfer.push(b.buffer as ArrayBuffer);
    }
    results.push(r);
  }
  const msg: FromWorker = { type: 'batch', id, results };
  port.postMessage(msg, transfer);
}

/** A batch of the registry's cold scan: read, hashed and parsed here while the main thread walks and merges. */
async function runScan(id: number, jobs: ReadJob[], keep: boolean): Promise<void> {
  const answer = await answerBatch(jobs, keep);
  const msg: FromWorker = { type: 'scan', id, answer };
  // The image is copied (a small one may sit in Node's shared Buffer pool); the kept bytes are this batch's own buffer.
  port.postMessage(msg, answer.kept ? [answer.kept.bytes.buffer as ArrayBuffer] : []);
}

await initHash();
apply(init.settings);
let chain = Promise.resolve();
port.on('message', (m: ToWorker) => {
  if (m.type === 'settings') chain = chain.then(() => apply(m.settings));
  else if (m.type === 'scan') chain = chain.then(() => runScan(m.id, m.jobs, m.keep));
  else chain = chain.then(() => runBatch(m.id, m.jobs));
});
port.postMessage({ type: 'ready' } satisfies FromWorker);
