/**
 * The shader compiler: Slang's `slangc` when it is on PATH (the engine's own), otherwise glslang's
 * `glslangValidator` (Debian glslang-tools: HLSL and GLSL to SPIR-V). Every output is checked by
 * `spirv-val` (Debian spirv-tools) before anyone caches or packs it.
 *
 * Each compile and each validation is a child process with a timeout, started through
 * src/util/runChild (own process group, SIGKILLed as a group on timeout, bounded pool of CPU
 * slots), and never through a shell: arguments are an argv array. They start from the spawn
 * helper (runChild's `viaHelper`): a fork of the cook's large process per run cost more main-thread
 * time than the compiles themselves (src/util/spawnHelper.ts). Defines are still checked
 * against a strict pattern ({@link checkDefine}) so nothing a material says can become an option.
 *
 * What each tool is told:
 * - glslangValidator: `-V --target-env vulkan1.0 -S <stage> -e <entry> [-D] -D<define>... -I<mount Shaders>... -o out file`.
 *   HLSL compiles the named function; GLSL's source function is always `main`, renamed to the
 *   entry's name in the module (`--source-entrypoint main`). GLSL includes need
 *   `#extension GL_GOOGLE_include_directive : require` in the source.
 * - slangc: `file -target spirv -entry <entry> -stage <stage> -D<define>... -I<dir>... -o out`.
 *   (Not on this machine's package registries; its argument and message shapes follow Slang's
 *   documentation and are untested here.)
 *
 * `LUMINA_SHADER_COMPILER` may name a glslangValidator-compatible executable to use instead (tests
 * use it to stand in a compiler that hangs or crashes).
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SPIRV_MAGIC, type ShaderStage } from '../../src/format/shaderCache.js';
import type { ShaderLanguage } from '../../src/registry/shaderSources.js';
import { writeFileAtomicSync } from '../../src/util/atomicWrite.js';
import { describeChildFailure, runChild, type ChildRun } from '../../src/util/runChild.js';
import { makeProcessTempDir, removeProcessTempDir } from '../../src/util/processTempDir.js';

export interface ShaderCompiler {
  /** `glslang` or `slang`. */
  kind: 'glslang' | 'slang';
  exe: string;
  /** Name and version of what produces the code, e.g. `glslang 12.0.0`: in every cache key and in ShaderCache.bin. */
  id: string;
  /** The validator and its version, e.g. `spirv-val SPIRV-Tools v2023.1`: in every cache key. */
  validatorId: string;
  validatorExe: string;
  languages: ReadonlySet<ShaderLanguage>;
}

export interface CompileJob {
  /** Absolute path of the source. */
  file: string;
  language: ShaderLanguage;
  entry: string;
  stage: ShaderStage;
  defines: readonly string[];
  /** Searched after the including file's folder, in order. */
  includeDirs: readonly string[];
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface Diagnostic {
  /** Absolute path as the compiler printed it (or the job's file when it named none). */
  file: string;
  line: number;
  /** 1-based; found from the token the message quotes when the compiler gives no column. */
  column: number;
  message: string;
}

export type CompileOutcome =
  | { ok: true; code: Uint8Array; ms: number }
  /** The source does not compile: what the compiler said, first error first. */
  | { ok: false; kind: 'error'; diagnostics: Diagnostic[]; output: string }
  /** The compiler itself failed: timed out (and was killed), crashed, or produced no code. */
  | { ok: false; kind: 'crash'; why: string }
  /** spirv-val rejected the code. */
  | { ok: false; kind: 'invalid'; why: string };

const DEFINE = /^[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.+-]*)?$/;

/**
 * A define a material may ask for: `NAME` or `NAME=VALUE`, NAME an identifier, VALUE letters,
 * digits and `_ . + -`. Anything else (spaces, quotes, `;`, `$`, a leading `-`...) is refused,
 * so no define can become a second argument or an option even though no shell is involved.
 */
export function checkDefine(define: string): boolean {
  return define.length <= 256 && DEFINE.test(define);
}

const STAGE_FLAG: Record<ShaderStage, string> = { vertex: 'vert', fragment: 'frag', compute: 'comp' };

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

const VERSION_TIMEOUT_MS = 20_000;

async function versionOf(exe: string, args: string[], known: ToolVersions): Promise<string | undefined> {
  const key = toolKey(exe, args);
  const seen = key === undefined ? undefined : known.entries.get(key);
  if (seen !== undefined) return seen;
  try {
    const run = await runChild(exe, args, { timeoutMs: VERSION_TIMEOUT_MS, maxStdoutBytes: 1 << 16, slots: null, viaHelper: true });
    if (run.code !== 0) return undefined;
    if (key !== undefined) {
      known.entries.set(key, run.output);
      known.changed = true;
    }
    return run.output;
  } catch {
    return undefined;
  }
}

/**
 * The versions the tools reported before (`Intermediates/ShaderTools.json`), keyed by each
 * executable's identity: asking is a process start per tool on every cook (two of them, tens of
 * milliseconds of a no-op's wall time), and an upgraded or replaced binary has another size,
 * mtime, ctime or inode, so it is asked again.
 */
interface ToolVersions {
  file: string | undefined;
  entries: Map<string, string>;
  changed: boolean;
}

function toolKey(exe: string, args: string[]): string | undefined {
  try {
    const real = fs.realpathSync(exe);
    const st = fs.statSync(real);
    return [real, args.join(' '), st.size, st.mtimeMs, st.ctimeMs, st.ino].join('\0');
  } catch {
    return undefined;
  }
}

function loadToolVersions(file: string | undefined): ToolVersions {
  const known: ToolVersions = { file, entries: new Map(), changed: false };
  if (file === undefined) return known;
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') known.entries.set(k, v);
    }
  } catch {
    // missing or damaged: the tools are asked again
  }
  return known;
}

function saveToolVersions(known: ToolVersions): void {
  if (!known.changed || known.file === undefined) return;
  try {
    writeFileAtomicSync(known.file, JSON.stringify(Object.fromEntries(known.entries)));
  } catch {
    // a cache that cannot be written costs the next cook two process starts, nothing more
  }
}

/** Beside the other intermediates: the versions the tools reported (see ToolVersions). */
export const SHADER_TOOLS_FILE = 'ShaderTools.json';

let detected: Promise<ShaderCompiler | string> | undefined;

/**
 * Find the compiler and validator (once per process). Resolves with the compiler, or with a
 * sentence saying what is missing. `versionsFile` remembers the versions the tools reported,
 * per executable, between processes.
 */
export function detectCompiler(versionsFile?: string): Promise<ShaderCompiler | string> {
  detected ??= findCompiler(versionsFile);
  return detected;
}

/** {@link detectCompiler} without the per-process memo (tests). */
export async function findCompiler(versionsFile?: string): Promise<ShaderCompiler | string> {
  const known = loadToolVersions(versionsFile);
  try {
    return await detect(known);
  } finally {
    saveToolVersions(known);
  }
}

async function detect(known: ToolVersions): Promise<ShaderCompiler | string> {
  const validatorExe = onPath('spirv-val');
  if (!validatorExe) return 'spirv-val (Debian spirv-tools) is not on PATH, so no compiled shader can be validated';
  const vOut = await versionOf(validatorExe, ['--version'], known);
  const validatorId = `spirv-val ${/SPIRV-Tools v[^\s]+/.exec(vOut ?? '')?.[0] ?? 'unknown'}`;
  const forced = process.env.LUMINA_SHADER_COMPILER;
  const slangc = forced ? undefined : onPath('slangc');
  if (slangc) {
    const out = await versionOf(slangc, ['-version'], known);
    if (out !== undefined) {
      return { kind: 'slang', exe: slangc, id: `slang ${out.trim().split('\n')[0]}`, validatorId, validatorExe, languages: new Set(['slang', 'hlsl', 'glsl']) };
    }
  }
  const glslang = forced || onPath('glslangValidator');
  if (!glslang) return 'neither slangc nor glslangValidator (Debian glslang-tools) is on PATH';
  const out = await versionOf(glslang, ['--version'], known);
  const version = /Glslang Version:\s*(?:\d+:)?([^\s]+)/.exec(out ?? '')?.[1];
  if (!version) return `${glslang} --version did not report a glslang version`;
  return { kind: 'glslang', exe: glslang, id: `glslang ${version}`, validatorId, validatorExe, languages: new Set(['hlsl', 'glsl']) };
}

/** The argv for one compile (exported for the bench, which runs the same command line itself). */
export function compileArgs(compiler: Pick<ShaderCompiler, 'kind'>, job: Omit<CompileJob, 'timeoutMs' | 'signal'>, out: string): string[] {
  const defines = job.defines.map((d) => `-D${d}`);
  const includes = job.includeDirs.map((d) => `-I${d}`);
  if (compiler.kind === 'slang') {
    return [job.file, '-target', 'spirv', '-entry', job.entry, '-stage', job.stage, ...defines, ...includes, '-o', out];
  }
  const lang = job.language === 'hlsl' ? ['-D', '-e', job.entry] : ['-e', job.entry, '--source-entrypoint', 'main'];
  return ['-V', '--target-env', 'vulkan1.0', '-S', STAGE_FLAG[job.stage], ...lang, ...defines, ...includes, '-o', out, job.file];
}

let tempDir: string | undefined;
let tempSeq = 0;

function outPath(): string {
  tempDir ??= makeProcessTempDir(os.tmpdir(), 'lumina-shaders-');
  return path.join(tempDir, `${++tempSeq}.spv`);
}

/** Remove this process's compile folder (outputs are deleted as they are read; this drops the folder). */
export function cleanupCompilerTemp(): void {
  if (tempDir) removeProcessTempDir(tempDir);
  tempDir = undefined;
}

/** Compile one permutation, then validate it. Never throws for what the source or the tools did. */
export async function compileShader(compiler: ShaderCompiler, job: CompileJob): Promise<CompileOutcome> {
  const started = performance.now();
  for (const d of job.defines) if (!checkDefine(d)) throw new Error(`define ${JSON.stringify(d)} was not checked before compiling`);
  const out = outPath();
  let run: ChildRun;
  try {
    run = await runChild(compiler.exe, compileArgs(compiler, job, out), { timeoutMs: job.timeoutMs, signal: job.signal, cwd: path.dirname(job.file), viaHelper: true });
  } catch (e) {
    return { ok: false, kind: 'crash', why: `${compiler.exe} could not be started: ${(e as Error).message}` };
  }
  try {
    if (run.timedOut || run.aborted || run.signal || run.stdoutOverflow) {
      return { ok: false, kind: 'crash', why: describeChildFailure(compiler.exe, run, { timeoutMs: job.timeoutMs }) };
    }
    const diagnostics = parseDiagnostics(run.output, job.file);
    if (run.code !== 0) {
      if (diagnostics.length) return { ok: false, kind: 'error', diagnostics, output: run.output };
      return { ok: false, kind: 'crash', why: describeChildFailure(compiler.exe, run) };
    }
    let code: Buffer;
    try {
      code = await fsp.readFile(out);
    } catch {
      return { ok: false, kind: 'crash', why: `${path.basename(compiler.exe)} exited with 0 but wrote no code` };
    }
    if (code.byteLength < 20 || code.byteLength % 4 !== 0 || code.readUInt32LE(0) !== SPIRV_MAGIC) {
      return { ok: false, kind: 'invalid', why: `the output (${code.byteLength} bytes) is not a SPIR-V module` };
    }
    const why = await validateSpirv(compiler, code, job);
    if (why) return { ok: false, kind: 'invalid', why };
    return { ok: true, code: new Uint8Array(code.buffer, code.byteOffset, code.byteLength), ms: performance.now() - started };
  } finally {
    await fsp.rm(out, { force: true });
  }
}

/** spirv-val over stdin; undefined when the module is valid, else what it said. */
export async function validateSpirv(compiler: Pick<ShaderCompiler, 'validatorExe'>, code: Uint8Array, job: Pick<CompileJob, 'timeoutMs' | 'signal'>): Promise<string | undefined> {
  let run: ChildRun;
  try {
    run = await runChild(compiler.validatorExe, ['--target-env', 'vulkan1.0', '-'], { timeoutMs: job.timeoutMs, signal: job.signal, input: code, viaHelper: true });
  } catch (e) {
    return `spirv-val could not be started: ${(e as Error).message}`;
  }
  if (run.code === 0) return undefined;
  if (run.timedOut || run.signal) return describeChildFailure(compiler.validatorExe, run, { timeoutMs: job.timeoutMs });
  return run.output.trim().split('\n').filter(Boolean).slice(0, 3).join(' / ') || `exited with ${run.code}`;
}

/**
 * Errors from compiler output, first first. glslang: `ERROR: <file>:<line>: '<token>' : <text>`
 * plus, for HLSL, `<file>(<line>): error at column <n>, ...`. slangc: `<file>(<line>[,<col>]): error <n>: <text>`.
 * glslang's GLSL front end prints no column: it is the quoted token's place on that line.
 */
export function parseDiagnostics(output: string, defaultFile: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  const columns = new Map<string, number>();
  for (const m of output.matchAll(/^(.+?)\((\d+)\): error at column (\d+)/gm)) columns.set(`${m[1]}:${m[2]}`, Number(m[3]) + 1);
  for (const line of output.split('\n')) {
    let m = /^ERROR: (.+?):(\d+): (.*)$/.exec(line);
    if (m && !/^(?:Linking|\d+ compilation errors)/.test(m[1])) {
      out.push({ file: m[1], line: Number(m[2]), column: 0, message: m[3].trim() });
      continue;
    }
    m = /^(.+?)\((\d+)(?:,\s*(\d+))?\): (?:fatal )?error[^:]*: (.*)$/.exec(line);
    if (m && !/^error at column/.test(m[4])) {
      out.push({ file: m[1], line: Number(m[2]), column: m[3] ? Number(m[3]) : 0, message: m[4].trim() });
      continue;
    }
    m = /^ERROR: (.*)$/.exec(line);
    if (m && !/compilation errors|No code generated/.test(m[1])) out.push({ file: defaultFile, line: 0, column: 0, message: m[1].trim() });
  }
  for (const d of out) {
    if (d.column > 0) continue;
    d.column = tokenColumn(d.file, d.line, d.message) ?? columns.get(`${d.file}:${d.line}`) ?? 1;
  }
  // Real errors before the summary lines glslang adds ("Linking ...": no line).
  return out.sort((a, b) => (a.line > 0 ? 0 : 1) - (b.line > 0 ? 0 : 1));
}

/** Where the token a message quotes (`'foo' : undeclared identifier`) first appears on that line, 1-based. */
function tokenColumn(file: string, line: number, message: string): number | undefined {
  const tok = /^'([^']+)'/.exec(message)?.[1];
  if (!tok || line < 1) return undefined;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const src = text.split('\n')[line - 1];
  if (src === undefined) return undefined;
  const re = new RegExp(`(^|[^A-Za-z0-9_])${tok.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
  const m = re.exec(src);
  return m ? m.index + m[1].length + 1 : undefined;
}
