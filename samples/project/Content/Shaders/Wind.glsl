#version 450
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
