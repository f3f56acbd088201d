/**
 * The key holder's portal (docs/portal.md) in Debian's Chromium over real HTTPS, as a customer uses
 * it: sign in with their own key (typed, Enter), see their tier, limits, what is left and the expiry
 * warning, their usage drawn and as a table, download it as CSV, rotate the key where the tier allows
 * it (and find no such button where it does not); claim a key from an invitation's link and meet
 * each refusal in words; sign up where it is open. Every page loads nothing from another host, breaks
 * no rule of its Content-Security-Policy, logs no unexpected error and has no serious or critical
 * axe-core violation; no key is kept by the browser. Screenshots: test-artifacts/portal-*.png (and
 * docs/images/ with PRICEPOINT_SCREENSHOTS=docs).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';
import {
  assertAccessible,
  assertCleanPage,
  keptInBrowser,
  launchChromium,
  openWatchedPage,
  screenshot,
} from '../helpers/pages.js';

const DAY_MS = 86_400_000;
/** Chromium logs every refused request (a 401, a 410) as a console error: those the test causes. */
const REFUSALS = [/status of 40[0-9]/, /status of 410/];

type Server = Awaited<ReturnType<typeof listenHttps>>;

/** Signs in on /portal with `key` as a person does: typed into the focused field, then Enter. */
async function signIn(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/portal`);
  await page.locator('#key-input').waitFor();
  assert.equal(
    await page.evaluate('document.activeElement && document.activeElement.id'),
    'key-input',
    'the key field has the focus when the page opens',
  );
  await page.keyboard.type(key);
  await page.keyboard.press('Enter');
}

/** Waits for the signed-in view; fails with what the page shows instead. */
async function signedIn(page: Page, errors: readonly string[] = []): Promise<void> {
  await page
    .locator('#account:visible, #sign-in-problem:visible')
    .first()
    .waitFor()
    .catch((error: Error) => assert.fail(`${error.message}; the page logged: ${errors.join('\n')}`));
  if (await page.locator('#account').isVisible()) return;
  assert.fail(`the portal refused the key: ${await page.locator('#sign-in-problem').innerText()}`);
}

/** How many pixels of the usage chart's canvas carry `rgb`: the bars of one outcome, drawn. */
async function chartPixels(page: Page, rgb: readonly [number, number, number]): Promise<number> {
  return (await page.evaluate(`(() => {
    const canvas = document.querySelector('#usage-chart canvas');
    if (!canvas) return -1;
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    let n = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (Math.abs(data[i] - ${rgb[0]}) < 3 && Math.abs(data[i + 1] - ${rgb[1]}) < 3 &&
          Math.abs(data[i + 2] - ${rgb[2]}) < 3 && data[i + 3] > 200) n++;
    }
    return n;
  })()`)) as number;
}

/** The usage totals as the page shows them, by label. */
async function shownTotals(page: Page): Promise<Record<string, number>> {
  const boxes = page.locator('#usage-totals > div');
  const totals: Record<string, number> = {};
  for (let i = 0; i < (await boxes.count()); i++) {
    const label = await boxes.nth(i).locator('dt').innerText();
    const value = await boxes.nth(i).locator('dd').innerText();
    totals[label] = Number(value.replaceAll(/[^0-9]/g, ''));
  }
  return totals;
}

async function withServer(
  options: Parameters<typeof createHarness>[0],
  body: (h: Harness, server: Server) => Promise<void>,
): Promise<void> {
  const h = await createHarness({ https: true, ...options });
  const server = await listenHttps(h);
  try {
    await body(h, server);
  } finally {
    await server.close();
    await h.close();
  }
}

test('a key holder signs in with their key, sees tier, limits, expiry and usage, downloads the CSV, and no key is kept', async (t) => {
  const browser = await launchChromium(t);
  if (browser === undefined) return;
  try {
    await withServer({}, async (h, server) => {
      const origin = new URL(server.base).origin;
      const { key, id } = await h.createKey({
        name: 'Acme dashboard',
        tier: 'free',
        expiresAt: h.clock.now + 5 * DAY_MS,
      });
      // What the customer's programs did: three reads served, one refused as a client error.
      for (let n = 0; n < 3; n++) {
        assert.equal(
          (await server.get('/api/v1/prices/today?symbols=NO1', { 'x-api-key': key })).status,
          200,
        );
      }
      assert.equal((await server.get('/api/v1/prices/today?symbols=NOPE', { 'x-api-key': key })).status, 404);

      const { context, page, watch } = await openWatchedPage(browser);
      const loaded = await page.goto(`${server.base}/portal`);
      const csp = loaded?.headers()['content-security-policy'] ?? '';
      assert.match(csp, /script-src 'self'/, `the portal sends its CSP: ${csp}`);
      assert.match(csp, /frame-ancestors 'none'/);

      // A wrong key first: refused in words, and the form stays.
      await signIn(page, server.base, 'pp_live_NotAKeyOfThisServer0000000000000000');
      const refusal = page.locator('#sign-in-problem');
      await refusal.waitFor();
      assert.match(await refusal.innerText(), /not accepted: it is unknown, revoked or expired/);
      assert.match(await refusal.innerText(), /invalid_api_key/);
      await assertAccessible(page, 'the sign-in form with a refusal');
      await screenshot(page, 'portal-sign-in');

      await signIn(page, server.base, key);
      await signedIn(page, watch.errors);
      assert.equal(await page.locator('#fact-tier').innerText(), 'free');
      assert.equal(await page.locator('#fact-id').innerText(), id);
      assert.match(
        await page.locator('#expiry-warning').innerText(),
        /expires .* in 5 days/,
        'the warning of a key that expires in five days',
      );
      // The free tier's limits: 60 a minute and 5,000 a day, with what is left of each.
      const limits = await page.locator('#limits-body tr').allInnerTexts();
      assert.equal(limits.length, 2, `two limits: ${limits.join(' | ')}`);
      assert.match(limits[0] ?? '', /minute\s+60 requests per minute\s+5\d of 60/);
      assert.match(limits[1] ?? '', /day\s+5,000 requests per day\s+4,99\d of 5,000/);

      // The usage of the last day: the four requests (and the page's own reads) in the hour they were made.
      await page.locator('#intervals-body tr').first().waitFor({ state: 'attached' });
      const totals = await shownTotals(page);
      assert.ok((totals.Requests ?? 0) >= 4, `at least the four requests: ${JSON.stringify(totals)}`);
      assert.ok((totals.Served ?? 0) >= 3, `the three served: ${JSON.stringify(totals)}`);
      assert.equal(totals['Other client errors'], 1, 'the one unknown series');
      assert.ok(
        (await chartPixels(page, [15, 118, 110])) > 20,
        'the chart draws the served requests as bars',
      );
      const caption = await page.locator('#usage-caption').innerText();
      assert.match(caption, /per hour, over the last day/);

      // The CSV, downloaded from the page: the same hours, the same counts.
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.locator('#download-csv').click(),
      ]);
      assert.match(download.suggestedFilename(), new RegExp(`^usage-${id}-.*\\.csv$`));
      const csv = readFileSync((await download.path())!, 'utf8')
        .trim()
        .split('\n');
      assert.match(csv[0] ?? '', /^start,end,requests,served,notModified,rateLimited,clientErrors,units/);
      const columns = (csv[0] ?? '').split(',');
      const errors = csv
        .slice(1)
        .map((line) => Number(line.split(',')[columns.indexOf('clientErrors')]))
        .reduce((a, b) => a + b, 0);
      assert.equal(errors, 1, 'the CSV holds the one client error');
      await page.locator('#download-status', { hasText: 'Downloaded' }).waitFor();

      // The month, by day.
      await page.locator('#period-month').click();
      await page.locator('#usage-caption', { hasText: 'per day, over the last month' }).waitFor();
      assert.equal(await page.locator('#period-month').getAttribute('aria-pressed'), 'true');
      await page.locator('#period-day').click();
      await page.locator('#usage-caption', { hasText: 'per hour' }).waitFor();

      // Rotation is not offered to the free tier; the page says whom to ask.
      assert.equal(
        await page.locator('#rotate-start').isVisible(),
        false,
        'no rotate button for the free tier',
      );
      assert.match(await page.locator('#rotate-not-offered').innerText(), /does not let you rotate/);

      await assertAccessible(page, 'the signed-in portal');
      await screenshot(page, 'portal-usage', true);

      // Small screens: nothing wider than the viewport.
      await page.setViewportSize({ width: 390, height: 844 });
      // Two frames: the chart follows its container's width from a ResizeObserver.
      await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
      const wide = await page.evaluate(`[...document.querySelectorAll('body *')]
        .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
        .map((e) => e.tagName + '#' + e.id + '.' + e.className + ':' + Math.round(e.getBoundingClientRect().right))
        .slice(0, 8)`);
      const overflow = (await page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      )) as number;
      assert.ok(overflow <= 0, `no sideways scrolling at 390 pixels: ${overflow} ${JSON.stringify(wide)}`);
      await screenshot(page, 'portal-usage-narrow', true);
      await page.setViewportSize({ width: 1280, height: 900 });

      // The key is kept nowhere: not in storage, cookies or the URL; a reload asks for it again.
      const kept = await keptInBrowser(context, page);
      assert.ok(!kept.includes(key), `the browser keeps the key: ${kept.replaceAll(key, '<KEY>')}`);
      for (const url of watch.requests) assert.ok(!url.includes(key), 'no URL carries the key');
      await page.reload();
      await page.locator('#sign-in').waitFor();
      assert.equal(await page.locator('#account').isVisible(), false, 'a reload signs out');
      const afterReload = await keptInBrowser(context, page);
      assert.ok(!afterReload.includes(key), 'nor after a reload');

      assertCleanPage(watch, origin, REFUSALS);
      await context.close();
    });
  } finally {
    await browser.close();
  }
});

/** Makes an invitation over the admin API; returns its id, token and claim link. */
async function invite(
  server: Server,
  admin: string,
  body: Record<string, unknown> = {},
): Promise<{ id: string; token: string; claimUrl: string }> {
  const made = await server.request('POST', '/api/v1/invitations', {
    headers: { 'x-api-key': admin, 'content-type': 'application/json' },
    body: JSON.stringify({ tier: 'free', ...body }),
  });
  assert.equal(made.status, 201, made.text);
  return JSON.parse(made.text) as { id: string; token: string; claimUrl: string };
}

/** Opens `url` on the claim page, names the key and claims it. */
async function claim(page: Page, url: string, name: string): Promise<void> {
  await page.goto(url);
  await page.locator('#claim-name').waitFor();
  await page.keyboard.type(name);
  await page.keyboard.press('Enter');
  await page.locator('#claim-done:visible, #claim-problem:visible').first().waitFor();
}

test("an invitation's link claims a key once, the key works, every refusal is in words, and the token goes only into the claim's body", async (t) => {
  const browser = await launchChromium(t);
  if (browser === undefined) return;
  try {
    await withServer({}, async (h, server) => {
      const origin = new URL(server.base).origin;
      const admin = (await h.createKey({ name: 'operator', tier: 'pro', scopes: ['read', 'admin'] })).key;
      const invitation = await invite(server, admin);
      assert.equal(invitation.claimUrl, `${origin}/portal/claim#${invitation.token}`);

      const { context, page, watch } = await openWatchedPage(browser);
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
      const claimBodies: string[] = [];
      page.on('request', (request) => {
        if (request.url().endsWith('/api/v1/invitations/claim')) claimBodies.push(request.postData() ?? '');
      });
      const loaded = await page.goto(`${server.base}/portal/claim`);
      assert.match(loaded?.headers()['content-security-policy'] ?? '', /default-src 'none'/);
      // Without the fragment the page says what is missing and offers no form.
      assert.match(await page.locator('#claim-missing').innerText(), /needs the whole invitation link/);
      assert.equal(await page.locator('#claim-form').isVisible(), false);

      await claim(page, invitation.claimUrl, 'Acme dashboard');
      assert.ok(
        await page.locator('#claim-done').isVisible(),
        await page.locator('#claim-problem').innerText(),
      );
      const key = await page.locator('#claimed-key').inputValue();
      assert.match(key, /^pp_live_/);
      assert.match(await page.locator('#claim-done').innerText(), /only time your key is shown/);
      assert.equal(await page.locator('#claimed-name').innerText(), 'Acme dashboard');
      assert.equal(await page.locator('#claimed-tier').innerText(), 'free');
      await page.locator('#claimed-copy').click();
      await page.locator('#claimed-copy-status', { hasText: /Copied|selected/ }).waitFor();
      assert.equal(new URL(page.url()).hash, '', 'the spent token left the address bar');
      await assertAccessible(page, 'the claimed key');
      await screenshot(page, 'portal-claim');

      // The key is real: it reads prices.
      assert.equal((await server.get('/api/v1/prices/today?symbols=NO1', { 'x-api-key': key })).status, 200);
      // The token went to the server in the claim's body and nowhere else.
      assert.equal(claimBodies.length, 1);
      assert.deepEqual(JSON.parse(claimBodies[0] ?? '{}'), {
        token: invitation.token,
        name: 'Acme dashboard',
      });
      for (const url of watch.requests)
        assert.ok(!url.includes(invitation.token), `a URL carries the token: ${url}`);
      const kept = await keptInBrowser(context, page);
      assert.ok(
        !kept.includes(key) && !kept.includes(invitation.token),
        'the browser keeps neither key nor token',
      );

      // The same link again: used up.
      await claim(page, invitation.claimUrl, 'Second try');
      assert.match(
        await page.locator('#claim-problem').innerText(),
        /already been used as many times as it allows/,
      );
      assert.match(await page.locator('#claim-problem').innerText(), /invitation_used_up/);
      assert.equal(await page.locator('#claim-form').isVisible(), false, 'no form to try again');
      await assertAccessible(page, 'a refused claim');
      await screenshot(page, 'portal-claim-refused');

      // A link nobody made.
      await claim(page, `${server.base}/portal/claim#notAnInvitationOfThisServer`, 'Guess');
      assert.match(await page.locator('#claim-problem').innerText(), /link is not known/);

      // Withdrawn by the operator.
      const revoked = await invite(server, admin);
      const gone = await server.request('DELETE', `/api/v1/invitations/${revoked.id}`, {
        headers: { 'x-api-key': admin },
      });
      assert.equal(gone.status, 204, gone.text);
      await claim(page, revoked.claimUrl, 'Too late');
      assert.match(await page.locator('#claim-problem').innerText(), /withdrawn by the operator/);

      // Past its expiry.
      const brief = await invite(server, admin, {
        expiresAt: new Date(h.clock.now + 3_600_000).toISOString(),
      });
      h.clock.advance(2 * 3_600_000);
      await claim(page, brief.claimUrl, 'Too slow');
      assert.match(await page.locator('#claim-problem').innerText(), /invitation has expired/);

      assertCleanPage(watch, origin, REFUSALS);
      await context.close();
    });
  } finally {
    await browser.close();
  }
});

test('sign-up: where it is off the page says it is by invitation; where it is on, a visitor gets a key of its tier', async (t) => {
  const browser = await launchChromium(t);
  if (browser === undefined) return;
  try {
    await withServer({}, async (_h, server) => {
      const { context, page, watch } = await openWatchedPage(browser);
      await page.goto(`${server.base}/portal/signup`);
      await page.locator('#signup-closed').waitFor();
      assert.match(await page.locator('#signup-closed').innerText(), /by invitation/);
      assert.equal(await page.locator('#signup-form').isVisible(), false);
      await assertAccessible(page, 'closed sign-up');
      await screenshot(page, 'portal-signup-closed');
      assertCleanPage(watch, new URL(server.base).origin);
      await context.close();
    });
    const signup = { tier: 'free', scopes: ['read'], perAddress: { limit: 3, windowSeconds: 86_400 } };
    await withServer(
      { config: { signup: { ...signup, keyExpiresInMs: null } as never } },
      async (_h, server) => {
        const { context, page, watch } = await openWatchedPage(browser);
        await page.goto(`${server.base}/portal/signup`);
        await page.locator('#signup-form').waitFor();
        assert.match(await page.locator('#signup-intro').innerText(), /in the free tier/);
        await page.keyboard.type('Weekend project');
        await page.keyboard.press('Enter');
        await page.locator('#signup-done:visible, #signup-problem:visible').first().waitFor();
        assert.ok(
          await page.locator('#signup-done').isVisible(),
          await page.locator('#signup-problem').innerText(),
        );
        const key = await page.locator('#signed-up-key').inputValue();
        assert.equal(await page.locator('#signed-up-tier').innerText(), 'free');
        assert.equal((await server.get('/api/v1/usage', { 'x-api-key': key })).status, 200, 'the key works');
        await assertAccessible(page, 'a key from sign-up');
        await screenshot(page, 'portal-signup');
        assertCleanPage(watch, new URL(server.base).origin);
        await context.close();
      },
    );
  } finally {
    await browser.close();
  }
});

test('a key whose tier allows it rotates itself from the portal: the new key is shown once, works, and the page goes on with it', async (t) => {
  const browser = await launchChromium(t);
  if (browser === undefined) return;
  try {
    // The development data set's pro tier says selfRotate: true (docs/keys-and-tiers.md).
    await withServer({}, async (h, server) => {
      const origin = new URL(server.base).origin;
      const { key, id } = await h.createKey({ name: 'Acme trading', tier: 'pro' });
      const { context, page, watch } = await openWatchedPage(browser);
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
      await signIn(page, server.base, key);
      await signedIn(page, watch.errors);
      assert.equal(await page.locator('#rotate-not-offered').isVisible(), false);

      // By keyboard: the button, then the confirmation.
      await page.locator('#rotate-start').focus();
      await page.keyboard.press('Enter');
      await page.locator('#rotate-yes').waitFor();
      assert.equal(
        await page.evaluate('document.activeElement.id'),
        'rotate-yes',
        'the confirmation has the focus',
      );
      await page.keyboard.press('Enter');
      await page.locator('#rotate-done:visible, #rotate-problem:visible').first().waitFor();
      assert.ok(
        await page.locator('#rotate-done').isVisible(),
        await page.locator('#rotate-problem').innerText(),
      );

      const rotated = await page.locator('#new-key').inputValue();
      assert.match(rotated, /^pp_live_/);
      assert.notEqual(rotated, key);
      assert.match(await page.locator('#rotate-done').innerText(), /only time it is shown/);
      assert.match(await page.locator('#rotate-grace').innerText(), /old key keeps working until/);
      await page.locator('#new-key-copy').click();
      await page.locator('#new-key-copy-status', { hasText: /Copied|selected/ }).waitFor();

      // The new key is real and the page uses it: its id is the one shown now.
      const usage = await server.get('/api/v1/usage', { 'x-api-key': rotated });
      assert.equal(usage.status, 200);
      const newId = (JSON.parse(usage.text) as { keyId: string }).keyId;
      assert.notEqual(newId, id);
      await page.locator('#fact-id', { hasText: newId }).waitFor();
      // The old one lives on for its grace period.
      assert.equal((await server.get('/api/v1/usage', { 'x-api-key': key })).status, 200);

      await assertAccessible(page, 'a rotated key');
      await page.locator('#rotate').scrollIntoViewIfNeeded();
      await screenshot(page, 'portal-rotate');
      const kept = await keptInBrowser(context, page);
      assert.ok(!kept.includes(key) && !kept.includes(rotated), 'the browser keeps neither key');
      assertCleanPage(watch, origin);
      await context.close();
    });
  } finally {
    await browser.close();
  }
});
