/**
 * Start a worker thread on a module next to the caller: the `.js` file in the build; from the
 * TypeScript sources (tests, benches under tsx), the worker loads tsx's ESM hooks first, because a
 * worker does not inherit the loader of a tsx or vitest parent.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** `callerUrl` is the caller's `import.meta.url`; `stem` the worker module's name without extension. */
export function startWorker(callerUrl: string, stem: string, opts: WorkerOptions = {}): Worker {
  const here = new URL(callerUrl);
  if (here.pathname.endsWith('.js')) return new Worker(new URL(`./${stem}.js`, here), opts);
  const tsx = pathToFileURL(path.join(path.dirname(createRequire(callerUrl).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
  const entry = new URL(`./${stem}.ts`, here).href;
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { ...opts, eval: true });
}
