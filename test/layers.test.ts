/**
 * The layering rule, checked on the real sources: `src/` (and `config/`) is the core and imports no
 * subsystem and no CLI; `cook`, `pak` and `watch` build on the core and never import the CLI. A
 * relative import that crosses a forbidden boundary fails here, naming the file and the import.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from './helpers/runCli.js';

/** Every `from '...'`, `import '...'` and `import('...')` specifier in a TypeScript source. */
export function importSpecifiers(source: string): string[] {
  const specs: string[] = [];
  const re = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"\n]+)\1/g;
  for (const m of source.matchAll(re)) specs.push(m[2]);
  return specs;
}

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, d.name);
    if (d.isDirectory()) out.push(...tsFiles(p));
    else if (/\.ts$/.test(d.name)) out.push(p);
  }
  return out;
}

/** `top/...` folders (relative to the repo) that the files under `from` import. */
function crossings(from: string, forbidden: readonly string[]): string[] {
  const bad: string[] = [];
  for (const file of tsFiles(path.join(REPO, from))) {
    for (const spec of importSpecifiers(fs.readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const target = path.relative(REPO, path.resolve(path.dirname(file), spec)).split(path.sep);
      if (forbidden.includes(target[0]) || (target.length === 1 && forbidden.includes(target[0].replace(/\.js$/, '')))) {
        bad.push(`${path.relative(REPO, file)} imports ${spec}`);
      }
    }
  }
  return bad;
}

describe('layers', () => {
  it('finds every kind of import statement (the check below cannot pass by seeing none)', () => {
    const src = `import a from '../cli/x.js';\nimport type { B } from "../cook/y.js";\nexport { c } from '../pak/z.js';\nconst d = await import('../watch/w.js');\nimport '../samples/s.js';`;
    expect(importSpecifiers(src)).toEqual(['../cli/x.js', '../cook/y.js', '../pak/z.js', '../watch/w.js', '../samples/s.js']);
    expect(crossings('src', ['src']).length).toBeGreaterThan(0);
  });

  it('src/ and config/ import no subsystem and no CLI', () => {
    const forbidden = ['cli', 'cook', 'pak', 'watch', 'samples'];
    expect(crossings('src', forbidden)).toEqual([]);
    expect(crossings('config', forbidden)).toEqual([]);
  });

  it('cook/, pak/ and watch/ never import the CLI', () => {
    for (const dir of ['cook', 'pak', 'watch']) expect(crossings(dir, ['cli'])).toEqual([]);
  });
});
