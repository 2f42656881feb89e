/**
 * How a browser may reach the daemon without the bearer token ever being readable by a web page.
 *
 * - Host and Origin: the server listens on 127.0.0.1, but a page on evil.example can point its own
 *   host name at 127.0.0.1 (DNS rebinding) and then make same-origin requests to us. Such requests
 *   carry `Host: evil.example`, so every request whose Host is not 127.0.0.1/localhost on our port,
 *   or whose Origin (when sent) is not one of those, is refused before anything else.
 * - Login: `watch` prints a one-time URL (`/login?token=...`). Opening it exchanges the one-time
 *   token for a session cookie that is HttpOnly (no script can read it) and SameSite=Strict (no
 *   other site's request carries it); the token is then spent, so a leaked history entry is useless.
 *   Cookies are not scoped by port, so the cookie's name carries the port.
 */
import crypto from 'node:crypto';
import type http from 'node:http';

/** Keep a few unspent login tokens (each `watch`/`daemon url` mints one), dropping the oldest. */
const MAX_PENDING_LOGINS = 16;

function sameSecret(given: string, want: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(want).digest();
  return crypto.timingSafeEqual(a, b);
}

/** Constant-time bearer check; hashing first makes the lengths equal, as timingSafeEqual needs. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  return header !== undefined && header.startsWith('Bearer ') && sameSecret(header.slice(7), token);
}

/** The value of cookie `name` in a Cookie header, if present. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export class BrowserAccess {
  private readonly session = crypto.randomBytes(32).toString('hex');
  private readonly pendingLogins: string[] = [];
  private readonly hosts: Set<string>;
  private readonly origins: Set<string>;
  readonly cookieName: string;

  constructor(readonly port: number) {
    this.hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
    this.origins = new Set([...this.hosts].map((h) => `http://${h}`));
    this.cookieName = `lumina_session_${port}`;
  }

  /** Why a request must be refused for where it claims to come from, or undefined when it is fine. */
  refusal(req: http.IncomingMessage): string | undefined {
    const host = req.headers.host?.toLowerCase();
    if (!host || !this.hosts.has(host)) return `Host "${req.headers.host ?? ''}" is not 127.0.0.1:${this.port} or localhost:${this.port}`;
    const origin = req.headers.origin;
    if (origin !== undefined && !this.origins.has(origin.toLowerCase())) return `Origin "${origin}" is not this daemon`;
    return undefined;
  }

  /** A request carries the session cookie. */
  hasSession(req: http.IncomingMessage): boolean {
    const c = readCookie(req.headers.cookie, this.cookieName);
    return c !== undefined && sameSecret(c, this.session);
  }

  /** A fresh one-time login URL. */
  mintLoginUrl(): string {
    const t = crypto.randomBytes(24).toString('hex');
    this.pendingLogins.push(t);
    if (this.pendingLogins.length > MAX_PENDING_LOGINS) this.pendingLogins.shift();
    return `http://127.0.0.1:${this.port}/login?token=${t}`;
  }

  /** Spend a one-time token: the Set-Cookie value on success, undefined when unknown or spent. */
  redeem(token: string | null): string | undefined {
    if (!token) return undefined;
    const i = this.pendingLogins.findIndex((t) => sameSecret(token, t));
    if (i < 0) return undefined;
    this.pendingLogins.splice(i, 1);
    return `${this.cookieName}=${this.session}; HttpOnly; SameSite=Strict; Path=/`;
  }
}
