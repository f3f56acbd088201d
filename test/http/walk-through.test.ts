/**
 * The whole round of docs/portal.md and docs/console.md, as the two people would do it, in Debian's
 * Chromium over real HTTPS: the operator signs in to the console with an admin key, creates a key,
 * makes an invitation and copies its link; the customer opens the link in the portal, names and
 * claims a key, makes requests with it, and sees them in the portal's usage chart; the operator finds
 * the claimed key's requests on its page in the console and the invitation, the claim and the new key
 * in the audit log. Each page stays clean (no other host, no CSP violation, no unexpected console
 * error) and no key or token is kept by the browser. Screenshots: test-artifacts/walk-through-*.png.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { createHarness, listenHttps } from '../helpers/harness.js';
import {
  assertAccessible,
  assertCleanPage,
  keptInBrowser,
  launchChromium,
  openWatchedPage,
  screenshot,
} from '../helpers/pages.js';

/** Coloured pixels (not the greys of axes and grid) in the canvases under `selector`: what was drawn. */
async function drawnPixels(page: Page, selector: string): Promise<number> {
  return (await page.evaluate(`(() => {
    let coloured = 0;
    for (const canvas of document.querySelectorAll(${JSON.stringify(`${selector} canvas`)})) {
      const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      for (let i = 0; i < data.length; i += 4) {
        const [r, g, b, a] = [data[i], data[i + 1], data[i + 2], data[i + 3]];
        if (a > 0 && Math.max(r, g, b) - Math.min(r, g, b) > 60) coloured += 1;
      }
    }
    return coloured;
  })()`)) as number;
}

/** The number a stat card of the console shows under `label`. */
async function stat(page: Page, label: string): Promise<number> {
  const card = page.locator('.stat', { has: page.locator('.label', { hasText: label }) }).first();
  return Number((await card.locator('.value').innerText()).replaceAll(',', ''));
}

test('an operator invites a customer from the console; the customer claims a key in the portal, uses it, and both see the requests', async (t) => {
  const browser = await launchChromium(t);
  if (browser === undefined) return;
  // Usage is flushed to the database every second here; the pages also see what is not flushed yet.
  const h = await createHarness({ https: true, env: { PRICEPOINT_USAGE_FLUSH_SECONDS: '1' } });
  const server = await listenHttps(h);
  const origin = new URL(server.base).origin;
  const admin = await h.createKey({ name: 'operator', tier: 'enterprise', scopes: ['admin'] });
  try {
    // The operator: signs in to the console.
    const operator = await openWatchedPage(browser);
    const console_ = operator.page;
    await console_.goto(`${server.base}/console`);
    await console_.getByLabel('Admin key').fill(admin.key);
    await console_.getByRole('button', { name: 'Sign in' }).click();
    await console_.locator('#who', { hasText: admin.id }).waitFor();

    // Creates a key for a program of their own, shown once, and it works.
    await console_.getByRole('link', { name: 'Keys' }).click();
    await console_.getByRole('heading', { name: 'Keys' }).waitFor();
    await console_.getByRole('button', { name: 'New key' }).click();
    const create = console_.getByRole('dialog', { name: 'New key' });
    await create.getByLabel('Name').fill('Operator monitoring');
    await create.getByLabel('Tier').selectOption('free');
    await create.getByRole('button', { name: 'Create key' }).click();
    const shown = console_.getByLabel('New key for Operator monitoring');
    await shown.waitFor();
    const ownKey = (await shown.innerText()).trim();
    assert.equal((await server.get('/api/v1/usage', { 'x-api-key': ownKey })).status, 200);

    // Makes an invitation to the free tier and copies its link.
    await console_.getByRole('link', { name: 'Invitations' }).click();
    await console_.getByRole('heading', { name: 'Invitations' }).waitFor();
    await console_.getByRole('button', { name: 'New invitation' }).click();
    const form = console_.getByRole('dialog', { name: 'New invitation' });
    await form.getByLabel('Tier').selectOption('free');
    await form.getByLabel('Note').fill('Acme, trial');
    await form.getByRole('button', { name: 'Create invitation' }).click();
    await console_.locator('.notice.success', { hasText: 'Created an invitation' }).waitFor();
    const link = (await console_.getByLabel('Claim link').first().innerText()).trim();
    assert.match(link, new RegExp(`^${origin}/portal/claim#.+`), `a claim link to this server: ${link}`);
    const token = decodeURIComponent(new URL(link).hash.slice(1));
    await screenshot(console_, 'walk-through-invitation');

    // The customer, in a browser of their own: opens the link, names the key, claims it.
    const customer = await openWatchedPage(browser);
    const portal = customer.page;
    await portal.goto(link);
    await portal.getByLabel('Name of your key').fill('Acme dashboard');
    await portal.getByRole('button', { name: 'Claim my key' }).click();
    await portal.locator('#claim-done:visible, #claim-problem:visible').first().waitFor();
    assert.ok(
      await portal.locator('#claim-done').isVisible(),
      await portal.locator('#claim-problem').innerText(),
    );
    const key = await portal.getByRole('textbox', { name: 'Your API key' }).inputValue();
    assert.match(key, /^pp_live_/);
    await screenshot(portal, 'walk-through-claimed');

    // Their program makes requests: five reads served, one of an unknown series.
    for (let n = 0; n < 5; n += 1) {
      const read = await server.get('/api/v1/prices/today?symbols=NO1', { 'x-api-key': key });
      assert.equal(read.status, 200, read.text);
    }
    assert.equal((await server.get('/api/v1/prices/today?symbols=NOPE', { 'x-api-key': key })).status, 404);

    // The customer signs in to the portal with the key and sees the requests in the chart.
    await portal.getByRole('link', { name: 'Open your portal' }).click();
    await portal.getByLabel('API key', { exact: true }).fill(key);
    await portal.getByRole('button', { name: 'Sign in' }).click();
    await portal.locator('#account').waitFor();
    await portal.locator('#intervals-body tr').first().waitFor({ state: 'attached' });
    const totals = await portal.locator('#usage-totals').innerText();
    assert.match(totals, /Served\s+[5-9]\b/, `the five served reads (and the page's own): ${totals}`);
    assert.match(totals, /Other client errors\s+1\b/, `the unknown series: ${totals}`);
    assert.ok((await drawnPixels(portal, '#usage-chart')) > 20, 'the portal draws the requests');
    await assertAccessible(portal, 'the portal after a claim');
    await screenshot(portal, 'walk-through-portal', true);

    // The operator finds the claimed key, its requests on its page, and the round in the audit log.
    await console_.getByRole('link', { name: 'Keys' }).click();
    await console_.getByRole('heading', { name: 'Keys' }).waitFor();
    await console_.getByLabel('Search').fill('Acme dashboard');
    await console_.getByRole('link', { name: 'Acme dashboard' }).click();
    await console_.getByRole('heading', { name: /Acme dashboard/ }).waitFor();
    await console_.locator('.chart canvas').first().waitFor();
    assert.ok((await stat(console_, 'served')) >= 5, 'the key page counts the served reads');
    assert.ok((await drawnPixels(console_, '.chart')) > 20, "the key's chart drew its requests");
    await screenshot(console_, 'walk-through-console-key', true);

    await console_.getByRole('link', { name: 'Audit log' }).click();
    await console_.getByRole('heading', { name: 'Audit log' }).waitFor();
    await console_.locator('tbody tr').first().waitFor();
    const log = await console_.locator('tbody').innerText();
    assert.match(log, /invitations\.claim/, `the claim is in the audit log: ${log}`);
    assert.match(
      log,
      new RegExp(`invitations\\.create\\s+inv_\\w+\\s+${admin.id}`),
      `the invitation: ${log}`,
    );
    assert.match(log, new RegExp(`keys\\.create\\s+key_\\w+\\s+${admin.id}`), `the operator's key: ${log}`);
    assert.doesNotMatch(log, new RegExp(`${token}|${key}|${ownKey}`), 'no token or key in the audit log');
    await screenshot(console_, 'walk-through-audit', true);

    for (const [who, side] of [
      ['the operator', operator],
      ['the customer', customer],
    ] as const) {
      const kept = await keptInBrowser(side.context, side.page);
      for (const secret of [admin.key, ownKey, key, token]) {
        assert.ok(!kept.includes(secret), `${who}'s browser keeps a key or token`);
      }
      assertCleanPage(side.watch, origin, [/status of 404/]);
      await side.context.close();
    }
  } finally {
    await browser.close();
    await server.close();
    await h.close();
  }
});
