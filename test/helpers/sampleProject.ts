/** Copy the committed sample project, without what a cook wrote into it (`Saved/`, `Intermediates/`). */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { REPO } from './runCli.js';

export const SAMPLE_PROJECT = path.join(REPO, 'samples/project');

/** `npm run cook:sample` may have cooked the sample in place: a test starts from its sources only. */
export async function copySampleProject(dest: string, from: string = SAMPLE_PROJECT): Promise<void> {
  await fsp.cp(from, dest, { recursive: true, filter: (src) => !/[\\/](Saved|Intermediates)$/.test(src) });
}
