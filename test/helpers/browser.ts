/**
 * A real browser for tests: Debian's Chromium (`/usr/bin/chromium`, from .ci/apt-packages) driven
 * headless by playwright-core, in a new empty profile folder that `close()` removes. The flags
 * keep it off the network (no component updates, sync or background requests).
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Uncaught page errors and console errors, for asserting a page ran cleanly. */
  errors: string[];
  close(): Promise<void>;
}

export async function openBrowser(viewport = { width: 1400, height: 900 }): Promise<TestBrowser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run bash .ci/install-system-deps`);
  const profile = await fsp.mkdtemp(path.join(os.tmpdir(), 'lumina-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  return {
    context,
    page,
    errors,
    close: async () => {
      await context.close();
      await fsp.rm(profile, { recursive: true, force: true });
    },
  };
}
