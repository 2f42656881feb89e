/**
 * A minimal async mutex: `run` calls queue up and execute one at a time, in call order. A failing
 * call releases the lock like a successful one.
 */
export class AsyncMutex {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn);
    this.tail = result.catch(() => {});
    return result;
  }
}
