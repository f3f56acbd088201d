/**
 * The reference page `/docs` (docs/api.md) in a real headless Chromium over real HTTPS: it shows
 * the price endpoints and their parameters (one day's `date`, a range's `from` and `to`), a reader can authorize with the demo key and try
 * `GET /api/v1/prices/today` from the page, and the page never talks to any host but ours (no CDN,
 * no validator.swagger.io) and works within its Content-Security-Policy. A key pasted into Authorize
 * is kept by no storage of the browser. The page is Pricepoint's, not a stock swagger-ui: title,
 * logo, favicon, and directions to Authorize that lead to the button; the price upload is pre-filled
 * with points that the server takes as they are. Screenshots land in test-artifacts/ (docs-top.png:
 * the top of the page; docs-page.png: a tried read; docs-upload.png: the upload's example).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
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

/** Headless Chromium, or undefined (the test skipped) where it is missing outside CI. */
async function launchChromium(t: TestContext): Promise<Browser | undefined> {
  if (!existsSync(CHROMIUM)) {
    // CI installs Debian's chromium (.ci/run); there a missing browser is a broken setup, not a skip.
    assert.ok(process.env.CI !== 'true', `${CHROMIUM} is missing; install Debian's chromium package`);
    t.skip(`${CHROMIUM} is missing (apt-get install chromium); the browser test of /docs did not run`);
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

/**
 * The page is Pricepoint's: its title, the top bar's logo and favicon, no "Swagger UI" or "Fastify"
 * anywhere a reader sees, and the description's directions to Authorize lead to the button.
 */
async function assertPricepointBranding(page: Page): Promise<void> {
  const title = await page.title();
  assert.match(title, /Pricepoint/, `the page title names Pricepoint: ${title}`);
  assert.doesNotMatch(title, /swagger|fastify/i, `the page title is not swagger-ui's: ${title}`);

  // The logo as a screen reader names it, then as it is drawn.
  const logo = page.locator('.topbar').getByRole('img', { name: 'Pricepoint', exact: true });
  await logo.waitFor();
  const src = (await logo.getAttribute('src')) ?? '';
  const svg = src.startsWith('data:image/svg+xml;base64,')
    ? Buffer.from(src.slice(src.indexOf(',') + 1), 'base64').toString('utf8')
    : '';
  assert.match(svg, />Pricepoint</, `the top bar's logo spells Pricepoint: ${src.slice(0, 80)}`);
  const topBar = await page.locator('.topbar').innerText();
  assert.doesNotMatch(topBar, /swagger|fastify/i, `the top bar: ${topBar}`);
  const icons = await page.locator('link[rel="icon"]').evaluateAll(
    // A string would do too; the tests are type-checked without the DOM's types.
    (links) => links.map((link) => (link as unknown as { href: string }).href),
  );
  assert.ok(
    icons.length > 0 && icons.every((href) => href.endsWith('/theme/favicon.svg')),
    `the favicon is Pricepoint's: ${icons.join(', ')}`,
  );

  const description = page.locator('.info .description');
  await description.waitFor();
  const text = await description.innerText();
  assert.doesNotMatch(await page.locator('body').innerText(), /swagger ui|fastify/i);
  // "the Authorize button at the right, just above the list of operations": where it really is.
  assert.match(text, /Authorize button at the right, just above the list of operations/);
  const button = await page.locator('.auth-wrapper button.authorize').boundingBox();
  const info = await description.boundingBox();
  const firstOperation = await page.locator('.opblock').first().boundingBox();
  const viewport = page.viewportSize();
  assert.ok(button && info && firstOperation && viewport, 'the button, the text and an operation are shown');
  assert.ok(button.y > info.y + info.height, 'Authorize is below the description');
  assert.ok(button.y + button.height <= firstOperation.y, 'Authorize is above the operations');
  assert.ok(button.x > viewport.width / 2, 'Authorize is at the right');
}

test('/docs shows the price endpoints, tries GET /api/v1/prices/today with the demo key, and loads nothing from elsewhere', async (t) => {
  const browser = await launchChromium(t);
  if (browser === undefined) return;
  const h = await createHarness({ https: true });
  const server = await listenHttps(h);
  const origin = new URL(server.base).origin;
  try {
    const context = await browser.newContext({
      ignoreHTTPSErrors: true,
      viewport: { width: 1280, height: 1600 },
    });
    const page = await context.newPage();
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    // What the Content-Security-Policy blocked: Chromium reports each on the console.
    const blocked: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
    });

    const loaded = await page.goto(`${server.base}/docs`);
    const csp = loaded?.headers()['content-security-policy'] ?? '';
    assert.match(csp, /script-src 'self';/, `the page sends a Content-Security-Policy: ${csp}`);
    assert.match(csp, /object-src 'none';/);
    assert.match(csp, /frame-ancestors 'none';/);

    // The document is loaded from /api/v1/openapi.json and every price endpoint is listed.
    for (const path of PRICE_PATHS) {
      await page.locator(`.opblock-summary-path[data-path="${path}"]`).first().waitFor();
    }
    assert.ok(
      requests.some((url) => url === `${origin}/api/v1/openapi.json`),
      `the page loads /api/v1/openapi.json; it asked for ${requests.join(', ')}`,
    );

    await assertPricepointBranding(page);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTIFACTS}docs-top.png` });

    // The development data set is loaded, so the page shows its demo key: a reader copies it from there.
    const description = await page.locator('.info .description').innerText();
    const shown = /demo key (pp_demo_[A-Za-z0-9]+)/.exec(description)?.[1];
    assert.equal(shown, h.demoKey, `the page shows the demo key: ${description.slice(-400)}`);

    // Authorize with the demo key in the x-api-key scheme.
    await page.locator('.auth-wrapper button.authorize').click();
    const apiKeyScheme = page.locator('.auth-container').filter({ hasText: 'x-api-key' });
    await apiKeyScheme.locator('input').fill(shown);
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
    assert.deepEqual(blocked, [], 'the page works within its Content-Security-Policy');
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

test('/docs keeps no pasted key: after Authorize and a reload, no storage of the browser holds it', async (t) => {
  const browser = await launchChromium(t);
  if (browser === undefined) return;
  const h = await createHarness({ https: true });
  const server = await listenHttps(h);
  const apiKey = (await h.createKey({ name: 'pasted as x-api-key' })).key;
  const bearer = (await h.createKey({ name: 'pasted as bearer' })).key;
  try {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    await page.goto(`${server.base}/docs`);

    // Both schemes of the Authorize dialog, as a reader pastes them.
    await page.locator('.auth-wrapper button.authorize').click();
    for (const [scheme, key] of [
      ['x-api-key', apiKey],
      ['bearer', bearer],
    ] as const) {
      const container = page.locator('.auth-container').filter({ hasText: scheme });
      await container.locator('input').fill(key);
      await container.locator('button.authorize').click();
      await container.locator('button', { hasText: 'Logout' }).waitFor();
    }
    await page.locator('.modal-ux button.close-modal').click();

    /** Everything this origin keeps in the browser: cookies, localStorage, sessionStorage, IndexedDB and the URL. */
    const kept = async () => {
      const state = JSON.stringify(await context.storageState());
      // Run in the page (a string: the tests are type-checked without the DOM's types).
      const inPage = await page.evaluate(`(async () => JSON.stringify({
        local: { ...localStorage },
        session: { ...sessionStorage },
        indexedDb: await indexedDB.databases(),
      }))()`);
      return `${state}\n${inPage}\n${page.url()}`;
    };
    for (const moment of ['after Authorize', 'after a reload']) {
      if (moment === 'after a reload') {
        await page.reload();
        await page.locator('.auth-wrapper button.authorize').waitFor();
      }
      const stored = await kept();
      assert.ok(
        !stored.includes(apiKey) && !stored.includes(bearer),
        // Where it is, with the keys themselves masked: test output is kept too.
        `${moment} the browser keeps a key: ${stored.replaceAll(apiKey, '<KEY>').replaceAll(bearer, '<KEY>')}`,
      );
    }
    // And the reloaded page is no longer authorized: the key is gone, not hidden.
    await page.locator('.auth-wrapper button.authorize').click();
    assert.equal(await page.locator('.auth-container button', { hasText: 'Logout' }).count(), 0);
  } finally {
    await browser.close();
    await server.close();
    await h.close();
  }
});

test('/docs pre-fills the price upload with a real example, and executing it as shown writes the points', async (t) => {
  const browser = await launchChromium(t);
  if (browser === undefined) return;
  const h = await createHarness({ https: true });
  const server = await listenHttps(h);
  const writer = (await h.createKey({ name: 'docs writer', scopes: ['read', 'write'] })).key;
  try {
    const context = await browser.newContext({
      ignoreHTTPSErrors: true,
      viewport: { width: 1280, height: 1600 },
    });
    const page = await context.newPage();
    await page.goto(`${server.base}/docs`);

    await page.locator('.auth-wrapper button.authorize').click();
    const apiKeyScheme = page.locator('.auth-container').filter({ hasText: 'x-api-key' });
    await apiKeyScheme.locator('input').fill(writer);
    await apiKeyScheme.locator('button.authorize').click();
    await apiKeyScheme.locator('button', { hasText: 'Logout' }).waitFor();
    await page.locator('.modal-ux button.close-modal').click();

    const upload = page.locator('.opblock-put', {
      has: page.locator('.opblock-summary-path[data-path="/api/v1/series/{symbol}/prices"]'),
    });
    await upload.locator('.opblock-summary').first().click();
    const tryOut = upload.locator('button.try-out__btn', { hasText: 'Try it out' });
    if (await tryOut.isVisible()) await tryOut.click();
    await upload.locator('tr[data-param-name="symbol"] input').fill('NO1');

    // The body as the page offers it for application/json, the first media type: points, not "string".
    const editor = upload.locator('.body-param textarea');
    await editor.waitFor();
    const example = await editor.inputValue();
    assert.match(example, /"start": ?"\d{4}-\d\d-\d\dT/, `the body example holds points: ${example}`);
    assert.match(example, /"price": ?-?\d/, `the body example holds prices: ${example}`);
    assert.doesNotMatch(example, /"string"/, `the body example holds no placeholders: ${example}`);

    mkdirSync(ARTIFACTS, { recursive: true });
    await upload.scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${ARTIFACTS}docs-upload.png` });

    // Executed as shown, the example is written.
    await upload.locator('button.execute').click();
    const status = upload.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor();
    const body = await upload
      .locator('.live-responses-table .response-col_description pre')
      .first()
      .innerText();
    assert.equal((await status.innerText()).trim(), '200', `the example is accepted: ${body.slice(0, 400)}`);
    assert.match(body, /"written": ?[1-9]/, `the example writes points: ${body.slice(0, 400)}`);
  } finally {
    await browser.close();
    await server.close();
    await h.close();
  }
});
