import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/index.js';
import { ShaderRegistry } from '../../src/registry/ShaderRegistry.js';
import { parseIncludes } from '../../src/registry/shaderSources.js';
import { tempDir } from '../cook/helpers.js';
import { sidecar, writeShaderProject } from './fixtures.js';

async function open(dir: string): Promise<ShaderRegistry> {
  return ShaderRegistry.open(loadConfig(dir).config);
}

/** Rewrite a file with a new mtime (some filesystems keep the old one within the same tick). */
function rewrite(file: string, text: string): void {
  fs.writeFileSync(file, text);
  const t = new Date(Date.now() + 5000);
  fs.utimesSync(file, t, t);
}

describe('shader registry', () => {
  it('finds includes by line, not in comments', () => {
    expect(parseIncludes('#include "a.hlsli"\n// #include "no.hlsli"\n/* #include "no2.hlsli" */\n  #  include <b/c.glsli>\n')).toEqual([
      { spec: 'a.hlsli', line: 1 },
      { spec: 'b/c.glsli', line: 4 },
    ]);
  });

  it('tracks sources, includes and sidecars under every mount, and records the include graph', async () => {
    const dir = await writeShaderProject(await tempDir(), {
      'Engine/Shaders/Shared.hlsli': 'float shared() { return 1; }\n',
      'Content/Shaders/UsesEngine.hlsl': '#include "Shared.hlsli"\nfloat4 PSMain() : SV_Target { return shared().xxxx; }\n',
      'Content/Shaders/UsesEngine.hlsl.shader.json': sidecar(['PSMain', 'fragment']),
    }, { cookRoots: ['/Game/Maps/Main'], engineContentDir: 'Engine' });
    const reg = await open(dir);
    const scan = reg.scan();
    expect(scan.problems).toEqual([]);
    expect(reg.all().map((r) => `${r.virtualPath} ${r.kind}`)).toEqual([
      '/Engine/Shaders/Shared.hlsli include',
      '/Game/Shaders/Blur.glsl source',
      '/Game/Shaders/Common/Math.glsli include',
      '/Game/Shaders/Lighting.hlsli include',
      '/Game/Shaders/Lit.hlsl source',
      '/Game/Shaders/Unlit.hlsl source',
      '/Game/Shaders/UsesEngine.hlsl source',
    ]);
    expect(reg.get('/Game/Shaders/Lit.hlsl')!.entries).toEqual([{ name: 'VSMain', stage: 'vertex' }, { name: 'PSMain', stage: 'fragment' }]);
    expect(reg.closure('/Game/Shaders/Lit.hlsl').files.map((f) => f.virtualPath)).toEqual(['/Game/Shaders/Lighting.hlsli', '/Game/Shaders/Lit.hlsl']);
    // Not beside it: found in the /Engine mount's Shaders/.
    expect(reg.closure('/Game/Shaders/UsesEngine.hlsl').files.map((f) => f.virtualPath)).toEqual(['/Engine/Shaders/Shared.hlsli', '/Game/Shaders/UsesEngine.hlsl']);
    expect(reg.closure('/Game/Shaders/Blur.glsl').files.map((f) => f.virtualPath)).toEqual(['/Game/Shaders/Blur.glsl', '/Game/Shaders/Common/Math.glsli']);
    expect(reg.includers('/Game/Shaders/Lighting.hlsli')).toEqual(['/Game/Shaders/Lit.hlsl']);
    expect(reg.includeDirs).toEqual([path.join(dir, 'Content', 'Shaders'), path.join(dir, 'Engine', 'Shaders')]);
  });

  it('re-reads only what changed, from its cache across opens', async () => {
    const dir = await writeShaderProject(await tempDir());
    const first = (await open(dir)).scan();
    expect(first.read).toBe(5);
    const reg = await open(dir);
    const again = reg.scan();
    expect({ read: again.read, changed: again.changed }).toEqual({ read: 0, changed: [] });
    rewrite(path.join(dir, 'Content/Shaders/Lighting.hlsli'), '// edited\nfloat3 lambert(float3 n, float3 l) { return n; }\n');
    const third = reg.scan();
    expect({ read: third.read, changed: third.changed }).toEqual({ read: 1, changed: ['/Game/Shaders/Lighting.hlsli'] });
    // Touched, same bytes: hashed, not re-parsed, not a change.
    const f = path.join(dir, 'Content/Shaders/Unlit.hlsl');
    rewrite(f, fs.readFileSync(f, 'utf8'));
    const fourth = reg.scan();
    expect({ read: fourth.read, changed: fourth.changed }).toEqual({ read: 0, changed: [] });
    fs.rmSync(f);
    expect(reg.scan().changed).toEqual(['/Game/Shaders/Unlit.hlsl']);
    expect(reg.get('/Game/Shaders/Unlit.hlsl')).toBeUndefined();
  });

  it('a missing include, an include cycle and a bad sidecar are typed errors naming the file', async () => {
    const dir = await writeShaderProject(await tempDir(), {
      'Content/Shaders/Missing.hlsl': 'float a;\n#include "Nowhere.hlsli"\n',
      'Content/Shaders/Missing.hlsl.shader.json': sidecar(['PSMain', 'fragment']),
      'Content/Shaders/CycleA.hlsli': '#include "CycleB.hlsli"\n',
      'Content/Shaders/CycleB.hlsli': '#include "CycleA.hlsli"\n',
      'Content/Shaders/Cycle.hlsl': '#include "CycleA.hlsli"\n',
      'Content/Shaders/Cycle.hlsl.shader.json': sidecar(['PSMain', 'fragment']),
      'Content/Shaders/BadStage.hlsl': 'float4 PSMain() : SV_Target { return 1; }\n',
      'Content/Shaders/BadStage.hlsl.shader.json': JSON.stringify({ entries: [{ name: 'PSMain', stage: 'pixel' }] }),
      'Content/Shaders/NoSidecar.hlsl': 'float4 PSMain() : SV_Target { return 1; }\n',
      'Content/Shaders/BadJson.hlsl': 'float4 PSMain() : SV_Target { return 1; }\n',
      'Content/Shaders/BadJson.hlsl.shader.json': '{"entries": [',
    });
    const reg = await open(dir);
    reg.scan();
    const thrown = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return { code: (e as { code: string }).code, message: (e as Error).message, file: (e as { file: string }).file };
      }
      return undefined;
    };
    const sh = (n: string) => path.join(dir, 'Content', 'Shaders', n);
    expect(thrown(() => reg.closure('/Game/Shaders/Missing.hlsl'))).toEqual({
      code: 'SHADER_INCLUDE_MISSING',
      message: `line 2: #include "Nowhere.hlsli" matches no file beside it or in any mount's Shaders/`,
      file: sh('Missing.hlsl'),
    });
    expect(thrown(() => reg.closure('/Game/Shaders/Cycle.hlsl'))).toEqual({
      code: 'SHADER_INCLUDE_CYCLE',
      message: '#include cycle: /Game/Shaders/CycleA.hlsli -> /Game/Shaders/CycleB.hlsli -> /Game/Shaders/CycleA.hlsli',
      file: sh('CycleB.hlsli'),
    });
    const problem = (n: string) => {
      const e = reg.sidecarProblem(reg.get(`/Game/Shaders/${n}`)!)!;
      return { code: e.code, message: e.message, file: e.file, field: e.field };
    };
    expect(problem('BadStage.hlsl')).toEqual({
      code: 'SHADER_SIDECAR_INVALID',
      message: 'entries[0].stage must be one of "vertex", "fragment", "compute"',
      file: sh('BadStage.hlsl.shader.json'),
      field: 'entries[0].stage',
    });
    expect(problem('NoSidecar.hlsl')).toEqual({
      code: 'SHADER_SIDECAR_INVALID',
      message: 'compiled shader source has no .shader.json sidecar declaring its entry points',
      file: sh('NoSidecar.hlsl.shader.json'),
      field: undefined,
    });
    expect(problem('BadJson.hlsl').message).toMatch(/^not valid JSON: /);
    // Fixing the sidecar is picked up by the next scan.
    rewrite(sh('BadStage.hlsl.shader.json'), sidecar(['PSMain', 'fragment']));
    expect(reg.scan().changed).toEqual(['/Game/Shaders/BadStage.hlsl']);
    expect(reg.sidecarProblem(reg.get('/Game/Shaders/BadStage.hlsl')!)).toBeUndefined();
  });

  it('an unreadable cache is a warning and a re-read of everything', async () => {
    const dir = await writeShaderProject(await tempDir());
    (await open(dir)).scan();
    fs.writeFileSync(path.join(dir, 'Intermediates', 'ShaderRegistry.json'), '{"version": 1, "files": [null]}');
    const scan = (await open(dir)).scan();
    expect(scan.read).toBe(5);
    expect(scan.problems.map((p) => [p.code, p.message])).toEqual([['CACHE_INVALID', 'cache is unusable: an entry is malformed; re-reading every shader']]);
  });
});
