/**
 * The virtual file system: mount aliases (`/Game`, `/Engine`, `/Intermediates`, `/<Plugin>`) map to
 * folders on disk. Virtual paths always use `/`; disk paths use the platform separator.
 *
 * `toVirtualPath` is best effort by design: it compares path strings (longest mount folder first)
 * after `path.resolve`, so it does not follow symlinks and is case-sensitive. A file reached through
 * a symlinked folder, or spelled with different case on a case-insensitive filesystem (macOS,
 * Windows), may map to null. Callers that walk a mount build virtual paths from the walk instead.
 */
import path from 'node:path';
import { errors } from '../errors.js';

export interface Mount {
  /** `/Game`: a slash and one segment of letters, digits or `_`. */
  alias: string;
  /** Absolute folder. */
  dir: string;
}

const ALIAS = /^\/[A-Za-z0-9_]+$/;

export class Vfs {
  private readonly table = new Map<string, Mount>();

  /**
   * Mount `dir` at `alias`. Mounting an alias that is already mounted throws MOUNT_CONFLICT unless
   * `replace` is set, in which case the old folder is dropped: an alias is never iterated twice.
   */
  mount(alias: string, dir: string, opts: { replace?: boolean } = {}): void {
    if (!ALIAS.test(alias)) throw errors.mountConflict(alias, 'an alias is "/" and one name of letters, digits or _');
    const existing = this.table.get(alias);
    if (existing && !opts.replace) {
      throw errors.mountConflict(alias, `already mounted at ${existing.dir}; unmount it first or pass replace`);
    }
    this.table.set(alias, { alias, dir: path.resolve(dir) });
  }

  /** Remove a mount. Returns false when the alias was not mounted. */
  unmount(alias: string): boolean {
    return this.table.delete(alias);
  }

  /** The mounts, in mount order (a replaced alias keeps its place). */
  mounts(): Mount[] {
    return [...this.table.values()].map((m) => ({ ...m }));
  }

  has(alias: string): boolean {
    return this.table.has(alias);
  }

  /**
   * Resolve `/Alias/rest/of/path` to an absolute disk path. Throws ASSET_NOT_FOUND for an unknown
   * alias and USAGE for a path that is not absolute or that tries to leave its mount with `..`.
   */
  resolve(virtualPath: string): string {
    if (!virtualPath.startsWith('/')) throw errors.usage(`"${virtualPath}" is not a virtual path (it must start with /)`);
    const segments = virtualPath.split('/').slice(1);
    const alias = `/${segments[0]}`;
    const m = this.table.get(alias);
    if (!m) throw errors.assetNotFound(virtualPath, { hint: `"${alias}" is not mounted` });
    const rest = segments.slice(1);
    for (const s of rest) {
      if (s === '..' || s === '.' || s.includes('\\') || s.includes('\0')) {
        throw errors.usage(`"${virtualPath}" may not contain "${s}" segments`);
      }
    }
    return rest.length === 0 ? m.dir : path.join(m.dir, ...rest.filter((s) => s !== ''));
  }

  /**
   * Best-effort reverse of `resolve`: the mount whose folder is the longest prefix of `absPath`
   * wins. Null when no mount contains the path (see the module note on symlinks and case).
   */
  toVirtualPath(absPath: string): string | null {
    const hit = this.mountOf(absPath);
    if (!hit) return null;
    return hit.rel === '' ? hit.mount.alias : `${hit.mount.alias}/${hit.rel}`;
  }

  /** The mount containing `absPath` (longest folder wins) and the `/`-separated rest. */
  mountOf(absPath: string): { mount: Mount; rel: string } | null {
    const abs = path.resolve(absPath);
    let best: Mount | undefined;
    for (const m of this.table.values()) {
      if ((abs === m.dir || abs.startsWith(m.dir.endsWith(path.sep) ? m.dir : m.dir + path.sep)) && (!best || m.dir.length > best.dir.length)) {
        best = m;
      }
    }
    if (!best) return null;
    const rel = path.relative(best.dir, abs);
    return { mount: { ...best }, rel: path.sep === '/' ? rel : rel.split(path.sep).join('/') };
  }
}
