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
port.on('message', (jobs: ReadJob[]) => {
  chain = chain.then(async () => {
    const a = await answerBatch(jobs);
    // Copied, not transferred: a small image may sit in Node's shared Buffer pool.
    port.postMessage(a);
  });
});
port.postMessage('ready');
