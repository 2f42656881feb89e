/**
 * A registry read worker (readPool.ts starts it and says why): takes batches of jobs, answers each
 * batch with one message, in order.
 */
import { parentPort } from 'node:worker_threads';
import { initHash } from '../util/hash.js';
import { answerBatch, type ReadJob } from './readPool.js';

await initHash();
const port = parentPort!;
// One batch at a time, in arrival order: the pool matches answers to batches by order.
let chain: Promise<void> = Promise.resolve();
port.on('message', ({ jobs, keep }: { jobs: ReadJob[]; keep: boolean }) => {
  chain = chain.then(async () => {
    const a = await answerBatch(jobs, keep);
    // The image is copied, not transferred (a small one may sit in Node's shared Buffer pool);
    // the kept bytes are this batch's own buffer.
    port.postMessage(a, a.kept ? [a.kept.bytes.buffer as ArrayBuffer] : []);
  });
});
port.postMessage('ready');
