/**
 * The operator's console (/console, docs/console.md) in Debian's Chromium over real HTTPS, used as an
 * operator would: sign in with an admin key, see the overview's charts drawn from real usage, create
 * a key (shown once) and use it, see its usage on its page and download it as CSV, revoke another
 * key, and find those actions in the audit log. Throughout: no request to another host, no CSP
 * violation, no console error, no serious or critical axe-core finding, and the key in no storage
 * of the browser. Screenshots land in test-artifacts/ (and docs/images/ with
 * PRICEPOINT_SCREENSHOTS=docs).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { parseSources } from '../../src/sources/source-config.js';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';
import {
  assertAccessible,
  assertCleanPage,
  keptInBrowser,
  launchChromium,
  openWatchedPage,
  screenshot,
} from '../helpers/pages.js';

/** Pixels of a colour (not the greys of axes and grid) in the chart's canvases: what the series drew. */
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

/** Signs in to the console at `base` with `key`; resolves once the overview is drawn. */
async function signIn(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/console`);
  await page.getByLabel('Admin key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('[data-chart] canvas').nth(5).waitFor();
}

/** The number a stat card of the section shows under `label`. */
async function stat(page: Page, label: string): Promise<number> {
  const card = page.locator('.stat', { has: page.locator('.label', { hasText: label }) }).first();
  return Number((await card.locator('.value').innerText()).replaceAll(',', ''));
}

test('an operator signs in, sees usage drawn, creates and uses a key, revokes one, and reads it all in the audit log', async (t) => {
  const browser = await launchChromium(t);
  if (browser === undefined) return;
  const h = await createHarness({ https: true, now: '2026-11-14T09:00:00Z' });
  const server = await listenHttps(h);
  const origin = new URL(server.base).origin;
  const admin = await h.createKey({ name: 'operator', tier: 'enterprise', scopes: ['admin'] });
  const doomed = await h.createKey({ name: 'old integration', tier: 'free' });
  const reader = await h.createKey({ name: 'dashboard', tier: 'pro' });
  try {
    // A week and a day of traffic before the operator looks, at the server's (fake) clock: reads of
    // two keys on most days and hours, and bursts of the demo key that its minute limit refuses.
    let served = 0;
    let refused = 0;
    const read = async (key: string) => {
      const answer = await server.get('/api/v1/prices/today?symbols=NO1', { 'x-api-key': key });
      if (answer.status === 200) served += 1;
      else if (answer.status === 429) refused += 1;
      else assert.fail(`a read answered ${answer.status}: ${answer.text}`);
    };
    h.clock.set('2026-11-14T09:20:00Z');
    for (let day = 0; day < 7; day += 1) {
      for (let n = 0; n < 3 + ((day * 5) % 7); n += 1) await read(reader.key);
      for (let n = 0; n < 2 + (day % 3); n += 1) await read(doomed.key);
      h.clock.advance(86_400_000);
    }
    h.clock.set('2026-11-21T12:10:00Z');
    const beforeLastDay = served + refused;
    for (let hour = 0; hour < 22; hour += 1) {
      for (let n = 0; n < 2 + ((hour * 7) % 5); n += 1) await read(reader.key);
      if (hour % 6 === 3) for (let n = 0; n < 34; n += 1) await read(h.demoKey);
      h.clock.advance(3_600_000);
    }
    const lastDay = served + refused - beforeLastDay;
    assert.ok(
      refused > 0 && served > 100,
      `the demo tier refused some requests (${served} served, ${refused} refused)`,
    );

    const { context, page, watch } = await openWatchedPage(browser);
    const loaded = await page.goto(`${server.base}/console`);
    assert.match(loaded?.headers()['content-security-policy'] ?? '', /default-src 'none'/);
    assert.equal(loaded?.headers()['x-frame-options'], 'DENY');
    await assertAccessible(page, 'the sign-in form');
    await screenshot(page, 'console-sign-in');

    // A key that is not an admin's is refused in words, and nothing else happens.
    await page.getByLabel('Admin key').fill(reader.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const refusal = page.locator('#sign-in-error');
    await refusal.filter({ hasText: /admin/ }).waitFor();
    assert.match(await refusal.innerText(), /insufficient_scope/);
    assert.equal(await page.locator('#signed-in').isVisible(), false);

    await page.getByLabel('Admin key').fill(admin.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#who', { hasText: admin.id }).waitFor();
    assert.equal(await page.getByLabel('Admin key').inputValue(), '', 'the key is not left in the form');

    // Overview: six charts, each drawn, and the counts of the traffic above.
    await page.locator('[data-chart] canvas').nth(5).waitFor();
    // Of the last day: what was sent since 12:10 yesterday, and the console's own requests.
    const dayRequests = await stat(page, 'requests');
    assert.ok(dayRequests >= lastDay, `the requests are counted: ${dayRequests} of at least ${lastDay}`);
    assert.equal(await stat(page, 'refused by a limit (429)'), refused, 'every 429 is counted');
    assert.ok(
      (await drawnPixels(page, '[data-chart="requests"]')) > 50,
      'the requests chart drew its series',
    );
    assert.ok((await drawnPixels(page, '[data-chart="rateLimited"]')) > 50, 'the 429 chart drew its series');
    await assertAccessible(page, 'the overview');
    await screenshot(page, 'console-overview', true);

    // Keys: a new key, shown once, that works at once.
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('heading', { name: 'Keys' }).waitFor();
    await page.getByRole('button', { name: 'New key' }).click();
    const create = page.getByRole('dialog', { name: 'New key' });
    await create.getByLabel('Name').fill('Acme weather app');
    await create.getByLabel('Tier').selectOption('pro');
    await create.getByLabel('Customer reference').fill('ACME-0042');
    await assertAccessible(page, 'the new key dialog');
    await screenshot(page, 'console-new-key');
    await create.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByLabel('New key for Acme weather app');
    await shown.waitFor();
    const newKey = (await shown.innerText()).trim();
    assert.match(newKey, /^pp_/, 'the new key is shown');
    await screenshot(page, 'console-key-created');
    for (let n = 0; n < 3; n += 1) {
      const used = await server.get('/api/v1/prices/today?symbols=NO1', { 'x-api-key': newKey });
      assert.equal(used.status, 200, 'the new key works');
    }

    // Search finds it by its customer reference; its page shows its usage, as a chart and as CSV.
    await page.getByLabel('Search').fill('acme-0042');
    const row = page.locator('tbody tr');
    await row.filter({ hasText: 'Acme weather app' }).waitFor();
    assert.equal(await row.count(), 1, 'the search leaves the one key');
    await page.getByRole('link', { name: 'Acme weather app' }).click();
    await page.getByRole('heading', { name: /Acme weather app/ }).waitFor();
    await page.locator('.chart canvas').first().waitFor();
    assert.equal(await stat(page, 'served'), 3, "the key's page counts its three requests");
    assert.ok((await drawnPixels(page, '.chart')) > 20, "the key's chart drew its requests");
    const saving = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download CSV' }).click();
    const csv = readFileSync((await (await saving).path())!, 'utf8');
    assert.match(csv, /^start,end,/, `a usage CSV: ${csv.slice(0, 200)}`);
    assert.equal(
      csv
        .trim()
        .split('\n')
        .slice(1)
        .reduce((sum, line) => sum + Number(line.split(',')[3] ?? 0), 0) > 0,
      true,
      'its rows count the requests',
    );
    await assertAccessible(page, "a key's page");
    await screenshot(page, 'console-key-page', true);

    // Revoke the old key from the list: it stops working.
    await page.getByRole('link', { name: '← All keys' }).click();
    await page.getByRole('button', { name: 'Revoke old integration' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await page.locator('.notice.success', { hasText: 'Revoked old integration' }).waitFor();
    assert.equal(
      (await server.get('/api/v1/prices/today?symbols=NO1', { 'x-api-key': doomed.key })).status,
      401,
      'the revoked key is refused',
    );
    await screenshot(page, 'console-keys', true);

    // The audit log lists both actions, by the operator's key.
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const entries = page.locator('tbody tr');
    await entries.first().waitFor();
    const log = await page.locator('tbody').innerText();
    assert.match(log, new RegExp(`keys\\.revoke\\s+${doomed.id}\\s+${admin.id}`), `revoke listed: ${log}`);
    assert.match(log, new RegExp(`keys\\.create\\s+key_\\w+\\s+${admin.id}`), `create listed: ${log}`);
    // The sign-ins too: the refused one with the reader's key and its code, then the operator's.
    assert.match(
      log,
      new RegExp(`console\\.sign_in\\s+${admin.id}\\s+${admin.id}\\s+127\\.0\\.0\\.1\\s+200`),
      `sign-in listed: ${log}`,
    );
    assert.match(
      log,
      new RegExp(
        `console\\.sign_in\\s+${reader.id}\\s+${reader.id}\\s+127\\.0\\.0\\.1\\s+403 insufficient_scope`,
      ),
    );
    assert.ok(!log.includes(reader.key) && !log.includes(admin.key), 'the log shows no key');
    await assertAccessible(page, 'the audit log');
    await screenshot(page, 'console-audit', true);
    // Filtered to one action.
    await page.getByLabel('Action').selectOption('keys.revoke');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForFunction(
      `[...document.querySelectorAll('tbody tr')].every((r) => r.innerText.includes('keys.revoke'))`,
    );
    assert.equal(await entries.count(), 1, 'one revocation');

    // Small screens: the sections stack, nothing is cut off.
    await page.setViewportSize({ width: 420, height: 900 });
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.locator('[data-chart] canvas').nth(5).waitFor();
    const overflow = (await page.evaluate(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    )) as number;
    assert.ok(overflow <= 0, `no sideways scrolling on a phone (${overflow}px)`);
    await screenshot(page, 'console-phone');

    // The keys are in no storage of the browser, and a reload asks for the admin key again.
    for (const moment of ['signed in', 'after a reload']) {
      if (moment === 'after a reload') {
        await page.reload();
        await page.getByLabel('Admin key').waitFor();
        assert.equal(await page.locator('#signed-in').isVisible(), false, 'the reloaded page is signed out');
      }
      const kept = await keptInBrowser(context, page);
      for (const key of [admin.key, newKey]) {
        assert.ok(
          !kept.includes(key),
          `${moment}, the browser keeps no key: ${kept.replaceAll(key, '<KEY>')}`,
        );
      }
    }

    // The refused sign-in is the one error the console logged (Chromium reports the 403 itself).
    assertCleanPage(watch, origin, [/status of 403/]);
  } finally {
    await browser.close();
    await server.close();
    await h.close();
  }
});

/** A webhook of `h` with one failed delivery, made as hostile-requests.test.ts makes its own. */
async function webhookWithFailedDelivery(
  h: Harness,
  adminKey: string,
): Promise<{ id: string; eventId: string }> {
  const created = await h.app.inject({
    method: 'POST',
    url: '/api/v1/webhooks',
    headers: { 'x-api-key': adminKey, 'content-type': 'application/json' },
    payload: { url: 'https://hooks.example.com/prices', events: ['day.published'] },
  });
  assert.equal(created.statusCode, 201, created.body);
  const { id } = created.json() as { id: string };
  const eventId = 'evt_000000000042';
  await h.stores.webhooks?.enqueue([id], 0, [
    {
      endpoint_id: id,
      event_id: eventId,
      event_seq: 1,
      payload: '{}',
      state: 'failed' as const,
      attempts: 8,
      next_attempt_at: null,
      last_attempt_at: h.clock.now - 60_000,
      last_status: 503,
      last_latency_ms: 120,
      last_error: 'the receiver answered 503',
    },
  ]);
  return { id, eventId };
}

test('invitations made, claimed and revoked, a source run by hand, and a failed webhook delivery sent again, all from the console', async (t) => {
  const browser = await launchChromium(t);
  if (browser === undefined) return;
  // A source whose upstream refuses connections (nothing leaves this machine): a run fails at once.
  const sources = parseSources(
    { ecb: { type: 'ecb', currencies: ['NOK'], baseUrl: 'http://127.0.0.1:9/' } },
    {},
  );
  const h = await createHarness({ https: true, config: { sources } });
  const server = await listenHttps(h);
  const origin = new URL(server.base).origin;
  const admin = await h.createKey({ name: 'operator', tier: 'enterprise', scopes: ['admin'] });
  const hook = await webhookWithFailedDelivery(h, admin.key);
  try {
    const { page, watch } = await openWatchedPage(browser);
    await signIn(page, server.base, admin.key);

    // Invitations: one made here, its link shown once; claimed by a customer, it is used up.
    await page.getByRole('link', { name: 'Invitations' }).click();
    await page.getByRole('heading', { name: 'Invitations' }).waitFor();
    for (const note of ['Acme trial', 'Globex pilot']) {
      await page.getByRole('button', { name: 'New invitation' }).click();
      const form = page.getByRole('dialog', { name: 'New invitation' });
      await form.getByLabel('Tier').selectOption('pro');
      await form.getByLabel('Note').fill(note);
      if (note === 'Acme trial') {
        await assertAccessible(page, 'the new invitation dialog');
        await screenshot(page, 'console-new-invitation');
      }
      await form.getByRole('button', { name: 'Create invitation' }).click();
      await page.locator('.notice.success', { hasText: 'Created an invitation' }).waitFor();
      await page.locator('tbody tr', { hasText: note }).waitFor();
    }
    const link = (await page.getByLabel('Claim link').first().innerText()).trim();
    assert.match(link, new RegExp(`^${origin}/portal/claim#.+`), `a claim link to this server: ${link}`);
    await screenshot(page, 'console-invitations', true);
    const token = decodeURIComponent(new URL(link).hash.slice(1));
    const claimed = await server.request('POST', '/api/v1/invitations/claim', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, name: 'Globex dashboard' }),
    });
    assert.equal(claimed.status, 201, claimed.text);
    // The newest link is the Globex one: the list, drawn again, shows it used up.
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('heading', { name: 'Keys' }).waitFor();
    await page.getByRole('link', { name: 'Invitations' }).click();
    const globex = page.locator('tbody tr', { hasText: 'Globex pilot' });
    await globex.filter({ hasText: 'used up' }).waitFor();
    assert.match(await globex.innerText(), /1 of 1/);
    await page.getByRole('button', { name: 'Revoke the invitation Acme trial' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await page.locator('tbody tr', { hasText: 'Acme trial' }).filter({ hasText: 'revoked' }).waitFor();

    // Sources: the failed run is told in words, and the table shows it.
    await page.getByRole('link', { name: 'Sources' }).click();
    await page.getByRole('heading', { name: 'Sources' }).waitFor();
    await page.getByRole('button', { name: 'Run now: ecb' }).click();
    await page.locator('.notice.error', { hasText: 'ecb: failed' }).waitFor();
    await page.locator('tbody tr', { hasText: 'ecb' }).filter({ hasText: 'failed' }).waitFor();
    await assertAccessible(page, 'the sources');
    await screenshot(page, 'console-sources');

    // Webhooks: the failed delivery, sent again, is pending.
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('link', { name: 'Deliveries of https://hooks.example.com/prices' }).click();
    const delivery = page.locator('tbody tr', { hasText: hook.eventId });
    await delivery.filter({ hasText: 'failed' }).waitFor();
    await page.getByRole('button', { name: `Redeliver ${hook.eventId}` }).click();
    await page.locator('.notice.success', { hasText: `Queued ${hook.eventId}` }).waitFor();
    await delivery.filter({ hasText: 'pending' }).waitFor();
    await assertAccessible(page, "a webhook's deliveries");
    await screenshot(page, 'console-deliveries');

    // Every one of those actions is in the audit log, by the operator's key (the claim by no key).
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.locator('tbody tr').first().waitFor();
    const log = await page.locator('tbody').innerText();
    for (const action of [
      'invitations.create',
      'invitations.claim',
      'invitations.revoke',
      'sources.run',
      'webhooks.redeliver',
    ]) {
      assert.match(log, new RegExp(action.replace('.', '\\.')), `${action} is listed: ${log}`);
    }
    assert.doesNotMatch(log, new RegExp(token.slice(0, 12)), 'the log holds no claim token');

    // By keyboard: a section opened with Enter takes the focus to its heading; Escape closes a dialog.
    await page.getByRole('link', { name: 'Keys' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Keys' }).waitFor();
    await page.waitForFunction(`document.activeElement?.tagName === 'H1'`);
    await page.getByRole('button', { name: 'New key' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog', { name: 'New key' }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });

    // Signing out forgets the session: the sections are gone and the key is asked for again.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin key').waitFor();
    assert.equal(
      await page.locator('#content').innerText(),
      '',
      'nothing of the session is left on the page',
    );

    assertCleanPage(watch, origin);
  } finally {
    await browser.close();
    await server.close();
    await h.close();
  }
});
