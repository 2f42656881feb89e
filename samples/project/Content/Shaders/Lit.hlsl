// The lit surface shader every sample material uses. Defines:
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
