/**
 * Testing the pages Pricepoint serves (/console, /portal) as a person uses them: Debian's Chromium
 * through playwright-core, with everything a page must not do collected as it happens (a request to
 * another host, a Content-Security-Policy violation, a console error), axe-core's accessibility
 * check run inside the page without loosening its CSP, and screenshots kept in test-artifacts/ (and
 * in docs/images/ with `PRICEPOINT_SCREENSHOTS=docs`, for docs/console.md).
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
export const DOC_IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));

/** Headless Chromium, or undefined (the test skipped) where it is missing outside CI. */
export async function launchChromium(t: TestContext): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM)) {
    // CI installs Debian's chromium (.ci/run); there a missing browser is a broken setup, not a skip.
    assert.ok(process.env.CI !== 'true', `${CHROMIUM} is missing; install Debian's chromium package`);
    t.skip(`${CHROMIUM} is missing (apt-get install chromium); the browser test did not run`);
    return undefined;
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** What a page did that a test looks at afterwards. */
export interface PageWatch {
  /** Every URL the page asked for, in order. */
  readonly requests: string[];
  /** What the Content-Security-Policy blocked (Chromium reports each on the console). */
  readonly blocked: string[];
  /** Console errors and uncaught exceptions. */
  readonly errors: string[];
}

export interface WatchedPage {
  readonly context: BrowserContext;
  readonly page: Page;
  readonly watch: PageWatch;
}

/** A fresh context (no storage shared with other tests) and page, watched from its first request. */
export async function openWatchedPage(
  browser: Browser,
  viewport: { width: number; height: number } = { width: 1280, height: 900 },
): Promise<WatchedPage> {
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport });
  const page = await context.newPage();
  const watch: PageWatch = { requests: [], blocked: [], errors: [] };
  page.on('request', (request) => watch.requests.push(request.url()));
  page.on('console', (message) => {
    const text = message.text();
    if (/Content Security Policy/i.test(text)) watch.blocked.push(text);
    if (message.type() === 'error') watch.errors.push(text);
  });
  page.on('pageerror', (error) => watch.errors.push(`uncaught: ${error.message}`));
  return { context, page, watch };
}

/** The URLs in `watch` that went to another origin than `origin` (`data:` and `blob:` stay in the page). */
export function otherHosts(watch: PageWatch, origin: string): string[] {
  return watch.requests.filter((url) => {
    const { protocol } = new URL(url);
    if (protocol === 'data:' || protocol === 'blob:') return false;
    return new URL(url).origin !== origin;
  });
}

/**
 * Fails unless the page asked no other host for anything, broke no rule of its CSP and logged no
 * error. `expectedErrors` names console errors the test caused on purpose (Chromium logs a failed
 * request, such as a refused sign-in, as an error).
 */
export function assertCleanPage(watch: PageWatch, origin: string, expectedErrors: RegExp[] = []): void {
  assert.deepEqual(otherHosts(watch, origin), [], 'the page asked no other host for anything');
  assert.deepEqual(watch.blocked, [], 'the page works within its Content-Security-Policy');
  const errors = watch.errors.filter((text) => !expectedErrors.some((pattern) => pattern.test(text)));
  assert.deepEqual(errors, [], 'the page logged no error');
}

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: string[];
}

/**
 * axe-core's violations on the page as it is now, of the given impacts (serious and critical by
 * default). axe's source is evaluated through the DevTools protocol, not added as a `<script>`, so
 * the page's CSP stays as it is served.
 */
export async function axeViolations(
  page: Page,
  impacts: readonly string[] = ['serious', 'critical'],
): Promise<AxeViolation[]> {
  const source = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(source);
  // A string, run in the page: the tests are type-checked without the DOM's types.
  const found = (await page.evaluate(`(async () => {
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => n.target.join(' ') + ': ' + n.failureSummary),
    }));
  })()`)) as AxeViolation[];
  return found.filter((violation) => violation.impact !== null && impacts.includes(violation.impact));
}

/** Fails with axe's words when the page has serious or critical accessibility violations. */
export async function assertAccessible(page: Page, where: string): Promise<void> {
  const violations = await axeViolations(page);
  assert.deepEqual(
    violations.map((v) => `${v.impact} ${v.id}: ${v.help}\n  ${v.nodes.join('\n  ')}`),
    [],
    `axe-core finds no serious or critical violation on ${where}`,
  );
}

/**
 * A screenshot of the viewport (or the whole page) as test-artifacts/NAME.png, also copied to
 * docs/images/NAME.png when `PRICEPOINT_SCREENSHOTS=docs` (the docs show them).
 */
export async function screenshot(page: Page, name: string, fullPage = false): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = `${ARTIFACTS}${name}.png`;
  await page.screenshot({ path, fullPage });
  if (process.env.PRICEPOINT_SCREENSHOTS === 'docs') {
    mkdirSync(DOC_IMAGES, { recursive: true });
    copyFileSync(path, `${DOC_IMAGES}${name}.png`);
  }
  return path;
}

/**
 * Everything this origin keeps in the browser, as one text to search for a key: cookies,
 * localStorage, sessionStorage, IndexedDB databases, Cache Storage names and the page's URL.
 */
export async function keptInBrowser(context: BrowserContext, page: Page): Promise<string> {
  const state = JSON.stringify(await context.storageState());
  const inPage = await page.evaluate(`(async () => JSON.stringify({
    local: { ...localStorage },
    session: { ...sessionStorage },
    indexedDb: await indexedDB.databases(),
    caches: await caches.keys(),
    history: history.state,
  }))()`);
  return `${state}\n${inPage}\n${page.url()}`;
}
