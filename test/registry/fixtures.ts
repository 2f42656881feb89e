/** Real temp projects for the registry tests: lumina-cook.json, /Game content and a plugin. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, type ProjectConfig } from '../../config/index.js';
import { buildPackage, hard, soft } from '../../src/format/packageBuilder.js';
import type { ImportEntry } from '../../src/format/packageTypes.js';

export { hard, soft };

export interface TempProject {
  dir: string;
  content: string;
  plugin: string;
  config(overrides?: Record<string, unknown>): ProjectConfig;
  /** Write a package at a path relative to the project; its asset export is named like the file. */
  pkg(rel: string, guid: string, opts?: { imports?: ImportEntry[]; flags?: number; className?: string; extra?: number }): string;
  write(rel: string, text: string): string;
  abs(rel: string): string;
  cleanup(): void;
}

export const CLASS_MESH = '/Script/Engine.CStaticMesh';

/** GUID n as 32 hex digits, readable in failures: g(1) = '000...01'. */
export const g = (n: number) => n.toString(16).padStart(32, '0');

export function makeProject(config: Record<string, unknown> = {}): TempProject {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lumina-reg-'));
  const base = {
    name: 'RegTest',
    plugins: [{ name: 'Foliage', path: 'Plugins/Foliage', chunk: 'FoliageChunk' }],
    ...config,
  };
  const writeConfig = (c: Record<string, unknown>) => fs.writeFileSync(path.join(dir, 'lumina-cook.json'), JSON.stringify(c, null, 2));
  writeConfig(base);
  const abs = (rel: string) => path.join(dir, ...rel.split('/'));
  fs.mkdirSync(abs('Content'), { recursive: true });
  fs.mkdirSync(abs('Plugins/Foliage/Content'), { recursive: true });
  return {
    dir,
    content: abs('Content'),
    plugin: abs('Plugins/Foliage/Content'),
    abs,
    config(overrides) {
      if (overrides) writeConfig({ ...base, ...overrides });
      return loadConfig(dir).config;
    },
    pkg(rel, guid, opts = {}) {
      const file = abs(rel);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      const name = path.basename(file).replace(/\.lasset$/, '');
      const bytes = buildPackage({
        imports: opts.imports ?? [],
        exports: [
          { guid, name, className: opts.className ?? CLASS_MESH, assetFlags: opts.flags ?? 0 },
          // A second export so the asset is found by name, not by position.
          { guid: g(0xfff000 + (opts.extra ?? 0)), name: `${name}_Extra`, className: '/Script/Engine.CMaterial' },
        ],
      });
      fs.writeFileSync(file, bytes);
      return file;
    },
    write(rel, text) {
      const file = abs(rel);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
      return file;
    },
    cleanup() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Move a file's mtime by `seconds` (tests must not depend on the clock's granularity). */
export function bumpMtime(file: string, seconds = 10): void {
  const s = fs.statSync(file);
  const t = new Date(s.mtimeMs + seconds * 1000);
  fs.utimesSync(file, t, t);
}

/** What scanChild.ts prints: the scan's counts, which fast paths were in use, a digest of every record. */
export interface ChildScan {
  fast: boolean;
  fastReaddir: boolean;
  digest: string;
  assets: number;
  read: number;
  cached: number;
  rehashed: number;
  problems: number;
}

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Scan the project in `dir` in a child process (scanChild.ts) with `env` on top of this one's. */
export function scanInChild(dir: string, env: Record<string, string>): ChildScan {
  const child = path.join(repo, 'test', 'registry', 'scanChild.ts');
  return JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', child, dir], { cwd: repo, env: { ...process.env, ...env }, encoding: 'utf8' })) as ChildScan;
}
