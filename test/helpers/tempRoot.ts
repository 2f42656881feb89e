/**
 * Vitest global setup: every temp folder of this test run (the tests' fixtures, the CLI children
 * they start, the cook's own scratch folders) goes under one `lumina-test-<pid>-*` folder, set as
 * TMPDIR for the forks, and removed when the run ends. A run that was killed leaves its folder to
 * the next run's sweep. LUMINA_KEEP_TEST_TMP=1 keeps it (until the next run) to look into.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sweepDeadProcessDirs } from '../../src/util/processTempDir.js';

const PREFIX = 'lumina-test-';

export default function setup(): () => void {
  const base = os.tmpdir();
  sweepDeadProcessDirs(base, PREFIX);
  const root = fs.mkdtempSync(path.join(base, `${PREFIX}${process.pid}-`));
  // mkdtemp makes it 0700; like /tmp it must be open to the other users the tests run things as
  // (nginx workers; the CLI run as `nobody`, whose tsx keeps its cache in TMPDIR).
  fs.chmodSync(root, 0o1777);
  process.env.TMPDIR = root;
  return () => {
    if (process.env.LUMINA_KEEP_TEST_TMP) process.stderr.write(`test temp folders kept in ${root}\n`);
    else fs.rmSync(root, { recursive: true, force: true });
  };
}
