/**
 * A hash of some modules' source bytes, for caches whose results are a function of code (the
 * stored plan, the shader cook memo): a new version of the tool never takes an older one's result.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { hashString } from './hash.js';

const known = new Map<string, string | null>();

/**
 * The hash of `modules` (paths relative to the module at `moduleUrl`, without extension: each gets
 * that module's own, .ts under tsx and .js when built), once per process; null when one cannot be
 * read (then the caller keeps and takes nothing).
 */
export function codeIdentity(moduleUrl: string, modules: readonly string[]): string | null {
  const id = `${moduleUrl}\0${modules.join('\0')}`;
  let v = known.get(id);
  if (v !== undefined) return v;
  try {
    const self = fileURLToPath(moduleUrl);
    const ext = path.extname(self);
    v = hashString(modules.map((m) => fs.readFileSync(path.resolve(path.dirname(self), m + ext), 'utf8')).join('\0'));
  } catch {
    v = null;
  }
  known.set(id, v);
  return v;
}
