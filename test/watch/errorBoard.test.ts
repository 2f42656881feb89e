/** The daemon's current errors: raised with a time, cleared when the file is fixed, not before. */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProgressBus } from '../../src/log/events.js';
import { ErrorBoard } from '../../watch/ErrorBoard.js';

const project = '/p';
const abs = (rel: string) => path.join(project, rel);
const cookEnd = (file: string, status: 'cooked' | 'cached' | 'failed') =>
  ({ type: 'COOK_END', asset: '/Game/X.lasset', file, cached: status === 'cached', status, bytesIn: 1, bytesOut: 1, ms: 1 }) as const;

function board() {
  const bus = new ProgressBus();
  return { bus, board: new ErrorBoard(bus, () => project) };
}

describe('ErrorBoard', () => {
  it('keeps one entry per file with the time it was raised, relative and absolute names alike', () => {
    const { bus, board: b } = board();
    bus.emit({ type: 'BATCH_START', batch: 1, files: 1 });
    bus.emit({ type: 'ERROR', log: { code: 'PACKAGE_TRUNCATED', message: 'first', file: 'Content/A.lasset' } });
    bus.emit({ type: 'ERROR', log: { code: 'PACKAGE_INVALID', message: 'second', file: abs('Content/A.lasset') } });
    bus.emit({ type: 'ERROR', log: { code: 'CONFIG_INVALID', message: 'no file' } });
    expect(b.list()).toEqual([
      { code: 'PACKAGE_INVALID', message: 'second', file: abs('Content/A.lasset'), time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
      { code: 'CONFIG_INVALID', message: 'no file', time: expect.any(String) },
    ]);
  });

  it('clears a file when a later batch saves it without an error, not in the batch that raised it', () => {
    const { bus, board: b } = board();
    bus.emit({ type: 'BATCH_START', batch: 1, files: 1 });
    bus.emit({ type: 'ERROR', log: { code: 'PACKAGE_TRUNCATED', message: 'bad', file: abs('Content/A.lasset') } });
    // The old (last good) entry still cooks in the same batch: that does not fix the file.
    bus.emit(cookEnd(abs('Content/A.lasset'), 'cached'));
    b.settleBatch([abs('Content/A.lasset')]);
    bus.emit({ type: 'BATCH_END', batch: 1, ms: 1, ok: false, changed: 1, removed: 0, cooked: 0 });
    expect(b.list()).toHaveLength(1);
    // An unrelated save leaves it.
    bus.emit({ type: 'BATCH_START', batch: 2, files: 1 });
    b.settleBatch([abs('Content/B.lasset')]);
    bus.emit({ type: 'BATCH_END', batch: 2, ms: 1, ok: true, changed: 1, removed: 0, cooked: 1 });
    expect(b.list()).toHaveLength(1);
    // Saving it fixed.
    bus.emit({ type: 'BATCH_START', batch: 3, files: 1 });
    b.settleBatch([abs('Content/A.lasset')]);
    expect(b.list()).toEqual([]);
  });

  it('clears on a later successful cook of the file, and everything under a removed folder', () => {
    const { bus, board: b } = board();
    bus.emit({ type: 'ERROR', log: { code: 'COOK_FAILED', message: 'x', file: abs('Content/A.lasset') } });
    bus.emit({ type: 'ERROR', log: { code: 'COOK_FAILED', message: 'y', file: abs('Content/Sub/B.lasset') } });
    bus.emit({ type: 'END', phase: 'cook', ms: 1, ok: false });
    bus.emit(cookEnd(abs('Content/A.lasset'), 'failed'));
    expect(b.list()).toHaveLength(2);
    bus.emit(cookEnd(abs('Content/A.lasset'), 'cooked'));
    expect(b.list().map((e) => e.file)).toEqual([abs('Content/Sub/B.lasset')]);
    bus.emit({ type: 'BATCH_START', batch: 1, files: 1 });
    b.settleBatch([abs('Content/Sub')]);
    expect(b.list()).toEqual([]);
  });
});
