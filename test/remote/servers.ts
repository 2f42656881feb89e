/**
 * Real cache servers for the remote cache tests: nginx with WebDAV (Debian's nginx-light, as
 * `.ci/apt-packages` installs it) started on 127.0.0.1 with a temp config and folder, and helpers
 * to copy the sample project as another "machine" would check it out.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { REPO } from '../helpers/runCli.js';
import { tempDir } from '../cook/helpers.js';

export interface CacheServer {
  url: string;
  /** The folder nginx stores `/ac` and `/cas` under. */
  root: string;
  stop(): Promise<void>;
}

export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => fs.existsSync(p));

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Resolves when `url` answers at all; rejects when the process exits first. */
function waitUntilServing(url: string, child: ChildProcess, log: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    let done = false;
    const onExit = (code: number | null) => {
      if (done) return;
      done = true;
      reject(new Error(`nginx exited (${code}) before serving: ${log()}`));
    };
    child.once('exit', onExit);
    const attempt = () => {
      if (done) return;
      const req = http.request(url, { method: 'HEAD' }, (res) => {
        res.resume();
        done = true;
        child.off('exit', onExit);
        resolve();
      });
      req.on('error', () => setTimeout(attempt, 25));
      req.end();
    };
    attempt();
  });
}

/**
 * Start nginx serving WebDAV PUT/GET/HEAD from a temp folder on a free loopback port. Run as root
 * (CI and this machine), the workers run as root too so they can write the temp folder.
 */
export async function startNginx(): Promise<CacheServer> {
  if (!NGINX) throw new Error('nginx is not installed: run `bash .ci/install-system-deps` (it installs nginx-light)');
  const dir = await tempDir('lumina-nginx-');
  const root = path.join(dir, 'store');
  await fsp.mkdir(root);
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const conf = path.join(dir, 'nginx.conf');
    const user = process.getuid?.() === 0 ? 'user root root;' : '';
    await fsp.writeFile(
      conf,
      `${user}
worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
    location / {
      root ${root};
      dav_methods PUT DELETE;
      create_full_put_path on;
      client_max_body_size 0;
    }
  }
}
`,
    );
    const child = spawn(NGINX, ['-c', conf, '-p', dir, '-e', path.join(dir, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitUntilServing(url, child, () => stderr);
    } catch (e) {
      // Another process took the port between freePort() and nginx's bind: pick another.
      if (attempt < 5 && /Address already in use/.test(stderr)) continue;
      throw e;
    }
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    return {
      url,
      root,
      stop: async () => {
        if (child.exitCode === null) {
          child.kill('SIGTERM');
          await exited;
        }
        await fsp.rm(dir, { recursive: true, force: true });
      },
    };
  }
}

/** A fresh checkout of the sample project (no Saved, no Intermediates) with config changes merged in. */
export async function copySample(config: Record<string, unknown> = {}, prefix = 'lumina-machine-'): Promise<string> {
  const src = path.join(REPO, 'samples/project');
  const dst = await tempDir(prefix);
  await fsp.cp(src, dst, {
    recursive: true,
    filter: (from) => {
      const rel = path.relative(src, from);
      return rel !== 'Saved' && rel !== 'Intermediates';
    },
  });
  const file = path.join(dst, 'lumina-cook.json');
  const base = JSON.parse(await fsp.readFile(file, 'utf8'));
  await fsp.writeFile(file, JSON.stringify({ ...base, ...config }, null, 2));
  return dst;
}

/** Every pak of a cook, by file name. */
export async function readPaks(project: string): Promise<Map<string, Buffer>> {
  const dir = path.join(project, 'Saved/Paks');
  const out = new Map<string, Buffer>();
  for (const name of (await fsp.readdir(dir)).sort()) if (name.endsWith('.pak')) out.set(name, await fsp.readFile(path.join(dir, name)));
  return out;
}
