/**
 * The daemon's status page in a real browser (Chromium through playwright-core): the one-time
 * login URL gives an HttpOnly, SameSite=Strict cookie that page scripts cannot read; a file saved
 * while the page is open shows up live; an error (a corrupted package) shows with its time and
 * file and disappears once the file is fixed; the latest cook report is one click away.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Daemon } from '../../watch/Daemon.js';
import { openBrowser, type TestBrowser } from '../helpers/browser.js';
import { daemonAndRoot, tempDir } from './helpers.js';
import { G, makeProject, savePackage } from './project.js';

describe('daemon status page', () => {
  let browser: TestBrowser;
  const t = daemonAndRoot();

  beforeAll(async () => {
    browser = await openBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('logs in with the one-time URL, shows a save live, and an error until its file is fixed', async () => {
    t.root = await tempDir();
    const p = await makeProject(t.root);
    t.daemon = await Daemon.start({ projectDir: p.dir, debounceMs: 20, consolidateAfterMs: 0 });
    const { page, context, errors } = browser;

    // Without the cookie the page only says how to log in.
    const denied = await page.goto(`${t.daemon.control.url}/`);
    expect(denied!.status()).toBe(401);
    errors.splice(0); // the browser logs the 401 itself

    const login = t.daemon.loginUrl();
    await page.goto(login);
    expect(new URL(page.url()).pathname).toBe('/');
    await page.locator('#conn', { hasText: 'live' }).waitFor();
    const [cookie] = await context.cookies(t.daemon.control.url);
    expect(cookie).toMatchObject({ name: `lumina_session_${t.daemon.control.port}`, httpOnly: true, sameSite: 'Strict' });
    expect(await page.evaluate('document.cookie')).toBe('');
    expect(await page.locator('#state').textContent()).toBe('idle');
    // The start-up cook wrote a report; the page links to it and it opens.
    await page.locator('#report-link:not([hidden])').waitFor();

    // A save while the page is open.
    const rock = path.join(p.content, 'Meshes', 'Rock.lasset');
    await savePackage(rock, 'Rock', G.rock, 'rock-v2');
    await page.locator('#activity-body tr', { hasText: '/Game/Meshes/Rock.lasset' }).first().waitFor();
    expect(await page.locator('#activity-body tr', { hasText: '/Game/Meshes/Rock.lasset' }).first().textContent()).toContain('Content/Meshes/Rock.lasset');

    // Corrupt it: the error shows with its file and time...
    await fsp.writeFile(rock, Buffer.from('LUMP this is not a package'));
    const row = page.locator('#errors-body tr', { hasText: 'Content/Meshes/Rock.lasset' });
    await row.waitFor();
    const cells = await row.locator('td').allTextContents();
    expect(cells[0]).toMatch(/\d{1,2}:\d{2}:\d{2}/);
    expect(cells[1]).toBe('Content/Meshes/Rock.lasset');
    expect(await page.locator('#errcount').textContent()).not.toBe('0');
    // ...and disappears once the file is fixed.
    await savePackage(rock, 'Rock', G.rock, 'rock-v3');
    await row.waitFor({ state: 'detached' });
    await page.locator('#errors-empty:not([hidden])').waitFor();
    expect(t.daemon.status().errors).toEqual([]);

    const [reportPage] = await Promise.all([context.waitForEvent('page'), page.locator('#report-link').click()]);
    await reportPage.locator('#treemap [data-kind="chunk"][data-name="Main"]').waitFor();
    await reportPage.close();
    expect(errors).toEqual([]);

    // The session ends (as when the daemon restarts): the page says how to log in again.
    await context.clearCookies();
    await savePackage(rock, 'Rock', G.rock, 'rock-v4');
    await page.locator('#loggedout:not([hidden])').waitFor();
    expect(await page.locator('#conn').textContent()).toBe('logged out');
  });
});
