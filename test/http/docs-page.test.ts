/**
 * The reference page `/docs` (DESIGN section 2) in a real headless Chromium over real HTTPS: it shows
 * the price endpoints and their parameters (one day's `date`, a range's `from` and `to`), a reader can authorize with the demo key and try
 * `GET /api/v1/prices/today` from the page, and the page never talks to any host but ours (no CDN,
 * no validator.swagger.io). A screenshot lands in test-artifacts/docs-page.png.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { createHarness, listenHttps } from '../helpers/harness.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
const PRICE_PATHS = [
  '/api/v1/prices/today',
  '/api/v1/prices/{date}',
  '/api/v1/prices',
  '/api/v1/prices/latest',
];
const READ_PARAMETERS = ['symbols', 'tz', 'format', 'resolution'];
/** The parameters each day operation adds to the read parameters; all of them required. */
const DAY_PARAMETERS: Record<string, { name: string; in: 'path' | 'query' }[]> = {
  '/api/v1/prices/{date}': [{ name: 'date', in: 'path' }],
  '/api/v1/prices': [
    { name: 'from', in: 'query' },
    { name: 'to', in: 'query' },
  ],
};

test('/docs shows the price endpoints, tries GET /api/v1/prices/today with the demo key, and loads nothing from elsewhere', async (t) => {
  if (!existsSync(CHROMIUM)) {
    // CI installs Debian's chromium (.ci/run); there a missing browser is a broken setup, not a skip.
    assert.ok(process.env.CI !== 'true', `${CHROMIUM} is missing; install Debian's chromium package`);
    t.skip(`${CHROMIUM} is missing (apt-get install chromium); the browser test of /docs did not run`);
    return;
  }
  const h = await createHarness({ https: true });
  const server = await listenHttps(h);
  const origin = new URL(server.base).origin;
  const browser = await chromium.launch({
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
  try {
    const context = await browser.newContext({
      ignoreHTTPSErrors: true,
      viewport: { width: 1280, height: 1600 },
    });
    const page = await context.newPage();
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));

    await page.goto(`${server.base}/docs`);

    // The document is loaded from /api/v1/openapi.json and every price endpoint is listed.
    for (const path of PRICE_PATHS) {
      await page.locator(`.opblock-summary-path[data-path="${path}"]`).first().waitFor();
    }
    assert.ok(
      requests.some((url) => url === `${origin}/api/v1/openapi.json`),
      `the page loads /api/v1/openapi.json; it asked for ${requests.join(', ')}`,
    );

    // Authorize with the demo key in the x-api-key scheme.
    await page.locator('.auth-wrapper button.authorize').click();
    const apiKeyScheme = page.locator('.auth-container').filter({ hasText: 'x-api-key' });
    await apiKeyScheme.locator('input').fill(h.demoKey);
    await apiKeyScheme.locator('button.authorize').click();
    await apiKeyScheme.locator('button', { hasText: 'Logout' }).waitFor();
    await page.locator('.modal-ux button.close-modal').click();

    /** The GET operation of `path`, expanded by a click on its summary line, as a reader would. */
    const openOperation = async (path: string) => {
      const operation = page.locator('.opblock-get', {
        has: page.locator(`.opblock-summary-path[data-path="${path}"]`),
      });
      await operation.locator('.opblock-summary').first().click();
      await operation.locator('.parameters-container').waitFor();
      return operation;
    };

    // Open GET /api/v1/prices/today: its read parameters are shown.
    const today = await openOperation('/api/v1/prices/today');
    for (const name of READ_PARAMETERS) {
      await today.locator(`tr[data-param-name="${name}"]`).waitFor();
    }

    // Try it out (already on with tryItOutEnabled; click it when it is offered), for NO1, and execute.
    const tryOut = today.locator('button.try-out__btn', { hasText: 'Try it out' });
    if (await tryOut.isVisible()) await tryOut.click();
    await today.locator('tr[data-param-name="symbols"] input').fill('NO1');
    await today.locator('button.execute').click();

    const status = today.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor();
    assert.equal((await status.innerText()).trim(), '200', 'the page shows the status of its request');
    const body = today.locator('.live-responses-table .response-col_description pre').first();
    await body.waitFor();
    const text = await body.innerText();
    assert.match(text, /"symbol": ?"NO1"/, `the page shows the answer for NO1: ${text.slice(0, 300)}`);
    assert.match(text, /"prices": ?\[/, 'the answer holds a prices list');
    assert.match(text, /"price": ?-?\d/, 'the prices are numbers');

    mkdirSync(ARTIFACTS, { recursive: true });
    // The viewport, from the operation down: the whole page is over 10,000 pixels tall.
    await today.scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${ARTIFACTS}docs-page.png` });

    // One day and a range of days: expanded, each shows the read parameters and its own, required.
    for (const [path, own] of Object.entries(DAY_PARAMETERS)) {
      const operation = await openOperation(path);
      for (const name of READ_PARAMETERS) {
        await operation.locator(`tr[data-param-name="${name}"][data-param-in="query"]`).waitFor();
      }
      for (const parameter of own) {
        const row = operation.locator(
          `tr[data-param-name="${parameter.name}"][data-param-in="${parameter.in}"]`,
        );
        await row.waitFor();
        assert.equal(
          await row.locator('.parameter__name.required').count(),
          1,
          `${path} shows ${parameter.name} (${parameter.in}) as required`,
        );
        const input = row.locator('input');
        assert.equal(await input.count(), 1, `${path} offers an input for ${parameter.name} to try it out`);
      }
    }

    const elsewhere = requests.filter((url) => {
      const { protocol } = new URL(url);
      if (protocol === 'data:' || protocol === 'blob:') return false;
      return new URL(url).origin !== origin;
    });
    assert.deepEqual(elsewhere, [], 'the page asked no other host for anything');
    assert.ok(
      requests.some((url) => url.startsWith(`${origin}/api/v1/prices/today`)),
      'the page itself sent GET /api/v1/prices/today',
    );
  } finally {
    await browser.close();
    await server.close();
    await h.close();
  }
});
