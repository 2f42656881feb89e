/**
 * The shaders the sample project and `samples generate` ship: a lit HLSL vertex/fragment pair
 * (`Lit.hlsl`, VSMain + PSMain, both reading `Common/Lighting.hlsli`), a few defines, and a GLSL
 * compute shader (`Wind.glsl`) with its own include. They compile with glslang and pass spirv-val; `/Game/Shaders/Wind.glsl` ships through
 * `shaders.global`.
 */

/** Files relative to a mount's folder (`Content/`), with their text. */
export const SAMPLE_SHADER_FILES: Readonly<Record<string, string>> = {
  'Shaders/Common/Lighting.hlsli': `// Lighting shared by every lit shader: one directional light plus ambient.
#ifndef LIGHTING_HLSLI
#define LIGHTING_HLSLI

cbuffer Frame : register(b0)
{
  float4x4 ViewProjection;
  float3 LightDirection;
  float AmbientStrength;
};

float3 Lambert(float3 normal, float3 albedo)
{
  float ndotl = saturate(dot(normalize(normal), -LightDirection));
  return albedo * (AmbientStrength + ndotl);
}

#endif
`,
  'Shaders/Lit.hlsl': `// The lit surface shader every sample material uses. Defines:
//   USE_NORMAL_MAP  perturb the normal from a normal map
//   TINT=<float>    scale the albedo
//   ALPHA_TEST=<f>  discard fragments below that alpha (masked materials)
#include "Common/Lighting.hlsli"

Texture2D BaseColor : register(t0);
SamplerState LinearSampler : register(s0);
#ifdef USE_NORMAL_MAP
Texture2D NormalMap : register(t1);
#endif

struct VSIn { float3 position : POSITION; float3 normal : NORMAL; float2 uv : TEXCOORD0; };
struct VSOut { float4 position : SV_Position; float3 normal : NORMAL; float2 uv : TEXCOORD0; };

VSOut VSMain(VSIn i)
{
  VSOut o;
  o.position = mul(ViewProjection, float4(i.position, 1.0));
  o.normal = i.normal;
  o.uv = i.uv;
  return o;
}

float4 PSMain(VSOut i) : SV_Target
{
  float4 albedo = BaseColor.Sample(LinearSampler, i.uv);
#ifdef ALPHA_TEST
  clip(albedo.a - ALPHA_TEST);
#endif
  float3 n = i.normal;
#ifdef USE_NORMAL_MAP
  n = normalize(n + (NormalMap.Sample(LinearSampler, i.uv).xyz * 2.0 - 1.0));
#endif
#ifdef TINT
  albedo.rgb *= TINT;
#endif
  return float4(Lambert(n, albedo.rgb), albedo.a);
}
`,
  'Shaders/Lit.hlsl.shader.json': `${JSON.stringify({ entries: [{ name: 'VSMain', stage: 'vertex' }, { name: 'PSMain', stage: 'fragment' }] }, null, 2)}\n`,
  'Shaders/Common/Noise.glsli': `// Value noise for the wind simulation.
float hash1(vec2 p) { return fract(sin(dot(p, vec2(127.1, 311.7))) * 43758.5453); }
float noise2(vec2 p)
{
  vec2 i = floor(p);
  vec2 f = fract(p);
  vec2 u = f * f * (3.0 - 2.0 * f);
  return mix(mix(hash1(i), hash1(i + vec2(1, 0)), u.x), mix(hash1(i + vec2(0, 1)), hash1(i + vec2(1, 1)), u.x), u.y);
}
`,
  'Shaders/Wind.glsl': `#version 450
// Foliage wind: a compute pass that writes one sway offset per instance.
#extension GL_GOOGLE_include_directive : require
#include "Common/Noise.glsli"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Positions { vec4 positions[]; };
layout(std430, binding = 1) writeonly buffer Offsets { vec4 offsets[]; };
layout(push_constant) uniform Push { float time; float strength; } pc;

void main()
{
  uint i = gl_GlobalInvocationID.x;
  if (i >= positions.length()) return;
  vec2 p = positions[i].xz * 0.05 + vec2(pc.time * 0.3, 0.0);
  offsets[i] = vec4(noise2(p) - 0.5, 0.0, noise2(p + 17.0) - 0.5, 0.0) * pc.strength;
}
`,
  'Shaders/Wind.glsl.shader.json': `${JSON.stringify({ entries: [{ name: 'main', stage: 'compute' }] }, null, 2)}\n`,
};

export const SAMPLE_LIT_SHADER = '/Game/Shaders/Lit.hlsl';
export const SAMPLE_GLOBAL_SHADERS = ['/Game/Shaders/Wind.glsl'];

/** Define sets the generator hands out to materials (by index, so no random draw is added). */
export const GENERATED_MATERIAL_DEFINES: ReadonlyArray<readonly string[]> = [[], ['USE_NORMAL_MAP'], ['TINT=0.8', 'USE_NORMAL_MAP'], ['ALPHA_TEST=0.5']];
