// Lighting shared by every lit shader: one directional light plus ambient.
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
