/** Run the real CLI in a child process, as a user would, and capture its output. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** tsx's loader by absolute URL, so child processes can run TS sources from any cwd. */
export const TSX_LOADER = pathToFileURL(path.join(REPO, 'node_modules/tsx/dist/loader.mjs')).href;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TSX_LOADER, path.join(REPO, 'cli/main.ts'), ...args], {
      cwd: opts.cwd ?? REPO,
      // CI would switch every command to JSON lines: tests that want that set it themselves.
      env: { ...process.env, NO_COLOR: '1', CI: '', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}
