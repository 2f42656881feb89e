/** A small project with real shaders: a lit HLSL pair sharing an include, a GLSL compute shader, and materials. */
import { prop, hard } from '../../src/format/packageBuilder.js';
import type { PackageSpec } from '../../src/format/packageBuilder.js';
import type { Property } from '../../src/format/packageTypes.js';
import { g, writeProject, type FixtureFile } from '../cook/helpers.js';

export const MATERIAL_CLASS = '/Script/Engine.CMaterial';

export const LIGHTING_HLSLI = `// Shared lighting
#ifndef LIGHTING_HLSLI
#define LIGHTING_HLSLI
float3 lambert(float3 n, float3 l) { return max(dot(normalize(n), l), 0.0).xxx; }
#endif
`;

export const LIT_HLSL = `#include "Lighting.hlsli"
struct VSOut { float4 pos : SV_Position; float3 n : NORMAL; };
VSOut VSMain(float3 p : POSITION, float3 n : NORMAL) {
  VSOut o;
  o.pos = float4(p, 1.0);
  o.n = n;
  return o;
}
float4 PSMain(VSOut i) : SV_Target {
#ifdef TINT
  float3 c = lambert(i.n, float3(0, 0, 1)) * TINT;
#else
  float3 c = lambert(i.n, float3(0, 0, 1));
#endif
  return float4(c, 1.0);
}
`;

export const UNLIT_HLSL = `float4 PSMain() : SV_Target { return float4(1, 1, 1, 1); }
`;

export const BLUR_GLSL = `#version 450
#extension GL_GOOGLE_include_directive : require
#include "Common/Math.glsli"
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Data { float v[]; };
void main() { v[gl_GlobalInvocationID.x] = twice(v[gl_GlobalInvocationID.x]); }
`;

export const MATH_GLSLI = `float twice(float x) { return x * 2.0; }
`;

export const sidecar = (...entries: Array<[string, string]>) => JSON.stringify({ entries: entries.map(([name, stage]) => ({ name, stage })) });

export function material(guid: string, name: string, source: string | undefined, defines: string[] = []): PackageSpec {
  const props: Property[] = [];
  if (source !== undefined) props.push(prop.str('ShaderSource', source));
  if (defines.length) props.push({ name: 'ShaderDefines', arrayIndex: 0, type: 'ArrayProperty', innerType: 'StrProperty', value: defines });
  return { exports: [{ guid, name, className: MATERIAL_CLASS, properties: props }] };
}

export const GUIDS = { map: g(0x100), rock: g(0x101), plain: g(0x102), blur: g(0x103) };

/** Files of the fixture; tests override single entries. */
export function shaderFiles(): Record<string, FixtureFile> {
  return {
    'Content/Shaders/Lighting.hlsli': LIGHTING_HLSLI,
    'Content/Shaders/Lit.hlsl': LIT_HLSL,
    'Content/Shaders/Lit.hlsl.shader.json': sidecar(['VSMain', 'vertex'], ['PSMain', 'fragment']),
    'Content/Shaders/Unlit.hlsl': UNLIT_HLSL,
    'Content/Shaders/Unlit.hlsl.shader.json': sidecar(['PSMain', 'fragment']),
    'Content/Shaders/Blur.glsl': BLUR_GLSL,
    'Content/Shaders/Blur.glsl.shader.json': sidecar(['main', 'compute']),
    'Content/Shaders/Common/Math.glsli': MATH_GLSLI,
    'Content/Maps/Main.lasset': {
      imports: [hard(GUIDS.rock), hard(GUIDS.plain), hard(GUIDS.blur)],
      exports: [{ guid: GUIDS.map, name: 'Main', className: '/Script/Engine.CWorld', properties: [prop.int('X', 1)] }],
    },
    'Content/Materials/Rock.lasset': material(GUIDS.rock, 'Rock', '/Game/Shaders/Lit.hlsl', ['TINT=0.5', 'USE_SHADOWS']),
    'Content/Materials/Plain.lasset': material(GUIDS.plain, 'Plain', '/Game/Shaders/Lit.hlsl'),
    'Content/Materials/BlurMat.lasset': material(GUIDS.blur, 'BlurMat', '/Game/Shaders/Blur.glsl'),
  };
}

export const CONFIG = { name: 'ShaderFixture', cookRoots: ['/Game/Maps/Main'], textures: { encoder: 'rgba8' }, shaders: { global: ['/Game/Shaders/Unlit.hlsl'] } };

export async function writeShaderProject(dir: string, overrides: Record<string, FixtureFile | null> = {}, config: Record<string, unknown> = CONFIG): Promise<string> {
  const files = { ...shaderFiles(), ...overrides };
  for (const [k, v] of Object.entries(files)) if (v === null) delete files[k];
  return writeProject(dir, config, files as Record<string, FixtureFile>);
}
