/**
 * What a shader source file is and what it names: its kind by extension, its `#include`
 * directives, and its `.shader.json` sidecar (FORMAT.md, "Shaders and the shader cache").
 *
 * Includes are found by a line scan after comments are blanked, not by a preprocessor: an include
 * inside `#if 0` still counts. That errs on the safe side (a permutation re-compiles when a file
 * it might read changes) and keeps the registry free of any compiler.
 */
import { errors } from '../errors.js';
import { SHADER_STAGES, type ShaderStage } from '../format/shaderCache.js';

/** The folder under every mount that holds shaders. */
export const SHADERS_DIR = 'Shaders';
export const SHADER_SIDECAR_EXT = '.shader.json';

export type ShaderLanguage = 'slang' | 'hlsl' | 'glsl';
export type ShaderFileKind = 'source' | 'include';

const KINDS: Record<string, { kind: ShaderFileKind; language: ShaderLanguage }> = {
  '.slang': { kind: 'source', language: 'slang' },
  '.hlsl': { kind: 'source', language: 'hlsl' },
  '.glsl': { kind: 'source', language: 'glsl' },
  '.slangh': { kind: 'include', language: 'slang' },
  '.hlsli': { kind: 'include', language: 'hlsl' },
  '.glsli': { kind: 'include', language: 'glsl' },
};

/** The kind and language of a shader file name, or null when it is not one (sidecars included). */
export function shaderKindOf(name: string): { kind: ShaderFileKind; language: ShaderLanguage } | null {
  if (name.startsWith('.')) return null;
  const dot = name.lastIndexOf('.');
  return dot < 0 ? null : (KINDS[name.slice(dot).toLowerCase()] ?? null);
}

export interface IncludeDirective {
  /** The text between the quotes (or angle brackets). */
  spec: string;
  /** 1-based line of the directive. */
  line: number;
}

/** Blank out comments, keeping line breaks, so a commented-out include is not one. */
function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (m) => m.replace(/[^\n]/g, ' '));
}

const INCLUDE = /^[ \t]*#[ \t]*include[ \t]*(?:"([^"\n]+)"|<([^>\n]+)>)/;

/** The `#include` directives of a source, in file order. */
export function parseIncludes(text: string): IncludeDirective[] {
  const out: IncludeDirective[] = [];
  const lines = stripComments(text).split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = INCLUDE.exec(lines[i]);
    if (m) out.push({ spec: m[1] ?? m[2], line: i + 1 });
  }
  return out;
}

export interface ShaderEntry {
  name: string;
  stage: ShaderStage;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Parse a `.shader.json` sidecar: `{"entries": [{"name": "VSMain", "stage": "vertex"}, ...]}`.
 * Throws SHADER_SIDECAR_INVALID naming the sidecar and the key at fault.
 */
export function parseShaderSidecar(text: string, file: string): ShaderEntry[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw errors.shaderSidecarInvalid(file, `not valid JSON: ${(e as Error).message}`);
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) throw errors.shaderSidecarInvalid(file, 'must be an object {"entries": [...]}');
  const entries = (json as { entries?: unknown }).entries;
  if (!Array.isArray(entries) || entries.length === 0) throw errors.shaderSidecarInvalid(file, '"entries" must be a non-empty array of {"name", "stage"}', 'entries');
  const out: ShaderEntry[] = [];
  const seen = new Set<string>();
  entries.forEach((e: unknown, i) => {
    const o = e as { name?: unknown; stage?: unknown } | null;
    if (!o || typeof o !== 'object') throw errors.shaderSidecarInvalid(file, `entries[${i}] must be an object {"name", "stage"}`, `entries[${i}]`);
    if (typeof o.name !== 'string' || !IDENT.test(o.name)) {
      throw errors.shaderSidecarInvalid(file, `entries[${i}].name must be a function name (letters, digits, _)`, `entries[${i}].name`);
    }
    if (typeof o.stage !== 'string' || !(SHADER_STAGES as readonly string[]).includes(o.stage)) {
      throw errors.shaderSidecarInvalid(file, `entries[${i}].stage must be one of ${SHADER_STAGES.map((s) => `"${s}"`).join(', ')}`, `entries[${i}].stage`);
    }
    const id = `${o.name}\n${o.stage}`;
    if (seen.has(id)) throw errors.shaderSidecarInvalid(file, `entries[${i}] repeats ${o.name} (${o.stage})`, `entries[${i}]`);
    seen.add(id);
    out.push({ name: o.name, stage: o.stage as ShaderStage });
  });
  return out;
}
