/** The committed sample project, read or copied without what a cook wrote into it (`Saved/`, `Intermediates/`). */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { REPO } from './runCli.js';

export const SAMPLE_PROJECT = path.join(REPO, 'samples/project');

/** What a cook writes into a project: `npm run cook:sample` may have cooked the sample in place. */
const COOK_OUTPUT = /(^|[\\/])(Saved|Intermediates)$/;

/** Copy the sample project's sources only: a test starts from them. */
export async function copySampleProject(dest: string, from: string = SAMPLE_PROJECT): Promise<void> {
  await fsp.cp(from, dest, { recursive: true, filter: (src) => !COOK_OUTPUT.test(src) });
}

/** The sample project's source files whose names end with `suffix`, sorted, as absolute paths (never a cook's output). */
export function sampleSourceFiles(suffix: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!COOK_OUTPUT.test(full)) walk(full);
      } else if (e.name.endsWith(suffix)) out.push(full);
    }
  };
  walk(SAMPLE_PROJECT);
  return out.sort();
}
