/**
 * The `cook` command checks its arguments before it loads the cook engine: a usage error or
 * --help must not pay for loading the cooker, the texture pipeline and the pak writer (~1 s of
 * module loading under tsx, far more on a loaded machine, where four usage-error runs of the CLI
 * overran a 60 s test). Checked on the real sources: the static import graph of the command's
 * module (type-only and dynamic imports excluded) must not reach the engine.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/runCli.js';

/** Specifiers a module loads when it is imported: static imports and re-exports, not `import type` nor `import()`. */
export function staticImports(source: string): string[] {
  const out: string[] = [];
  const re = /^\s*(?:import|export)\s+(?!type\b)(?:[^;'"]*?\sfrom\s*)?(['"])([^'"\n]+)\1/gm;
  for (const m of source.matchAll(re)) out.push(m[2]);
  return out;
}

/** Every repo file (relative) the static graph from `entry` loads. */
function staticGraph(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of staticImports(fs.readFileSync(path.join(REPO, file), 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      visit(path.relative(REPO, path.resolve(path.dirname(path.join(REPO, file)), spec)).replace(/\.js$/, '.ts'));
    }
  };
  visit(entry);
  return seen;
}

describe('the cook command loads the engine only to cook', () => {
  it('tells static imports from type-only and dynamic ones (the check below cannot pass by seeing none)', () => {
    const src = `import a from './a.js';\nimport type { B } from './b.js';\nimport { type C, d } from './c.js';\nexport { e } from './e.js';\nimport './f.js';\nconst g = await import('./g.js');`;
    expect(staticImports(src)).toEqual(['./a.js', './c.js', './e.js', './f.js']);
    expect(staticGraph('cli/main.ts').size).toBeGreaterThan(5);
  });

  it("cli/commands/cook.ts's static imports reach neither the cooker, the texture pipeline nor the pak writer", () => {
    const graph = [...staticGraph('cli/commands/cook.ts')];
    expect(graph.filter((f) => /^cook\/(Cooker|cookProject|patchProject)\.ts$|^cook\/texture\/|^pak\//.test(f))).toEqual([]);
  });
});
