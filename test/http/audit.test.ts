/**
 * The audit log (docs/audit.md), on SQLite and PostgreSQL: every kind of admin action is recorded
 * with the acting key, its address, the action, its target and how it ended; unauthenticated
 * requests are not; no key or webhook secret ever lands in the table; `GET /api/v1/audit` filters and
 * pages, and answers bad input with problem+json; entries past the keeping time are pruned.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { DEFAULT_TIERS, type Tier } from '../../src/domain/limits/tiers.js';
import type { AuditEntry } from '../../src/stores/types.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { postgresSchemaUrl } from '../helpers/postgres.js';
import { describeOrSkip } from '../helpers/skip.js';

const OPS: Tier = {
  name: 'ops',
  limits: [{ name: 'minute', limit: 100_000, windowSeconds: 60 }],
  countPer: 'key',
  kinds: null,
  historyDays: null,
  streams: 3,
};
const ADMIN_ADDRESS = '198.51.100.7';
const DAY_MS = 86_400_000;

interface Entry {
  id: number;
  time: string;
  actor: string;
  address: string | null;
  action: string;
  target: string | null;
  outcome: { status: number | null; code: string | null };
}

const probe = await postgresSchemaUrl();
const postgresSkip = 'skip' in probe ? probe.skip : false;
if (!('skip' in probe)) await probe.drop();

for (const engine of ['sqlite', 'postgres'] as const) {
  describeOrSkip(`the audit log on ${engine}`, { skip: engine === 'postgres' ? postgresSkip : false }, () => {
    let h: Harness;
    let admin: string;
    let adminId: string;
    /** Every key and secret any answer showed: none may be in the audit table. */
    const secrets: string[] = [];

    before(async () => {
      h = await createHarness({ engine, config: { tiers: { ...DEFAULT_TIERS, ops: OPS } } });
      const made = await h.createKey({ name: 'operator', tier: 'ops', scopes: ['admin'] });
      admin = made.key;
      adminId = made.id;
      secrets.push(admin);
    });
    after(() => h.close());

    function call(
      method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
      url: string,
      body?: unknown,
      key = admin,
    ) {
      return h.app.inject({
        method,
        url,
        remoteAddress: ADMIN_ADDRESS,
        headers: {
          'x-api-key': key,
          ...(body !== undefined && {
            'content-type': typeof body === 'string' ? 'text/csv' : 'application/json',
          }),
        },
        ...(body !== undefined && { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
    }
    const ok = (response: LightMyRequestResponse, status: number) => {
      assert.equal(response.statusCode, status, response.body);
      return response.json() as Record<string, unknown>;
    };
    /** The newest entry of `action`, as the API shows it. */
    async function latest(action: string): Promise<Entry> {
      const page = ok(await call('GET', `/api/v1/audit?action=${action}&limit=1`), 200) as {
        entries: Entry[];
      };
      const entry = page.entries[0];
      assert.ok(entry, `an entry of ${action}`);
      return entry;
    }
    function expect(
      entry: Entry,
      action: string,
      target: string | null,
      status: number,
      code: string | null,
    ) {
      assert.equal(entry.action, action);
      assert.equal(entry.actor, adminId, 'the acting key');
      assert.equal(entry.address, ADMIN_ADDRESS, 'the client address');
      assert.equal(entry.target, target);
      assert.deepEqual(entry.outcome, { status, code });
      assert.equal(entry.time, new Date(h.clock.now).toISOString());
    }

    test('key actions: create, update, rotate and revoke, with the key each touched and how it ended', async () => {
      const created = ok(await call('POST', '/api/v1/keys', { name: 'customer', tier: 'free' }), 201);
      const id = created.id as string;
      secrets.push(created.key as string);
      expect(await latest('keys.create'), 'keys.create', id, 201, null);

      ok(
        await call('PATCH', `/api/v1/keys/${id}`, { customerRef: 'C-9', allowedAddresses: ['192.0.2.0/24'] }),
        200,
      );
      expect(await latest('keys.update'), 'keys.update', id, 200, null);
      assert.equal((await call('PATCH', `/api/v1/keys/${id}`, { limits: [] })).statusCode, 400);
      expect(await latest('keys.update'), 'keys.update', id, 400, 'invalid_parameter');

      const rotated = ok(await call('POST', `/api/v1/keys/${id}/rotate`), 201);
      secrets.push(rotated.key as string);
      expect(await latest('keys.rotate'), 'keys.rotate', id, 201, null);

      ok(await call('DELETE', `/api/v1/keys/${rotated.id as string}`), 200);
      expect(await latest('keys.revoke'), 'keys.revoke', rotated.id as string, 200, null);
      assert.equal((await call('DELETE', '/api/v1/keys/key_nope')).statusCode, 404);
      expect(await latest('keys.revoke'), 'keys.revoke', 'key_nope', 404, 'not_found');
    });

    test('series, uploads, webhooks and source runs are recorded too', async () => {
      const series = {
        name: 'Audit test',
        kind: 'electricity',
        currency: 'EUR',
        unit: 'MWh',
        timezone: 'Europe/Oslo',
        resolution: 'PT1H',
      };
      ok(await call('PUT', '/api/v1/series/AUDIT1', series), 201);
      expect(await latest('series.upsert'), 'series.upsert', 'AUDIT1', 201, null);

      ok(
        await call(
          'PUT',
          '/api/v1/series/AUDIT1/prices',
          'start,price\r\n2026-11-20T00:00:00+01:00,41.27\r\n',
        ),
        200,
      );
      expect(await latest('prices.write'), 'prices.write', 'AUDIT1', 200, null);
      assert.equal(
        (await call('PUT', '/api/v1/series/AUDIT1/prices', 'start,price\r\nnope,1\r\n')).statusCode,
        422,
      );
      expect(await latest('prices.write'), 'prices.write', 'AUDIT1', 422, 'invalid_prices');

      const hook = ok(
        await call('POST', '/api/v1/webhooks', {
          url: 'https://hooks.example.com/audit',
          events: ['day.published'],
        }),
        201,
      );
      const hookId = hook.id as string;
      secrets.push(hook.secret as string);
      expect(await latest('webhooks.create'), 'webhooks.create', hookId, 201, null);
      ok(await call('POST', `/api/v1/webhooks/${hookId}/disable`), 200);
      expect(await latest('webhooks.disable'), 'webhooks.disable', hookId, 200, null);
      ok(await call('POST', `/api/v1/webhooks/${hookId}/enable`), 200);
      expect(await latest('webhooks.enable'), 'webhooks.enable', hookId, 200, null);
      assert.equal(
        (await call('POST', `/api/v1/webhooks/${hookId}/deliveries/evt_000000000009/redeliver`)).statusCode,
        404,
      );
      expect(
        await latest('webhooks.redeliver'),
        'webhooks.redeliver',
        `${hookId}/evt_000000000009`,
        404,
        'not_found',
      );
      ok(await call('DELETE', `/api/v1/webhooks/${hookId}`), 200);
      expect(await latest('webhooks.delete'), 'webhooks.delete', hookId, 200, null);

      assert.equal((await call('POST', '/api/v1/sources/nordpool-x/run')).statusCode, 404);
      expect(await latest('sources.run'), 'sources.run', 'nordpool-x', 404, 'not_found');
    });

    test('a key without the admin scope is recorded with its refusal; a request without a valid key is not', async () => {
      const reader = await h.createKey({ tier: 'free' });
      assert.equal((await call('DELETE', `/api/v1/keys/${adminId}`, undefined, reader.key)).statusCode, 403);
      const page = ok(await call('GET', `/api/v1/audit?actor=${reader.id}`), 200) as { entries: Entry[] };
      assert.equal(page.entries.length, 1);
      assert.deepEqual(page.entries[0]?.outcome, { status: 403, code: 'insufficient_scope' });
      assert.equal(page.entries[0]?.target, adminId);

      const before = (ok(await call('GET', '/api/v1/audit?limit=1000'), 200) as { entries: Entry[] }).entries
        .length;
      const unknown = 'pp_live_0000000000000000000000000000000000000';
      assert.equal((await call('DELETE', `/api/v1/keys/${adminId}`, undefined, unknown)).statusCode, 401);
      const after = (ok(await call('GET', '/api/v1/audit?limit=1000'), 200) as { entries: Entry[] }).entries
        .length;
      assert.equal(after, before, 'nothing recorded for an unknown key');
    });

    test('a key typed into a path is masked, and no key or secret is anywhere in the table', async () => {
      const victim = await h.createKey({ tier: 'free' });
      secrets.push(victim.key);
      assert.equal((await call('DELETE', `/api/v1/keys/${victim.key}`)).statusCode, 404);
      assert.equal((await latest('keys.revoke')).target, 'pp_***');
      const rows = await h.stores.audit?.list({ limit: 100_000 });
      assert.ok(rows && rows.length > 10, 'the table holds the entries of this file');
      const table = JSON.stringify(rows);
      assert.ok(secrets.length >= 5);
      for (const secret of secrets) {
        assert.equal(table.includes(secret), false, 'no key or secret in clear');
        assert.equal(
          table.includes(secret.replace(/^(pp_[a-z]+_|whsec_)/, '')),
          false,
          'nor its secret part',
        );
      }
      assert.doesNotMatch(table, /pp_(live|test|demo)_[0-9A-Za-z]/);
      assert.doesNotMatch(table, /whsec_[A-Za-z0-9+/]/);
    });

    test('GET /api/v1/audit filters by time, action and key, and pages through Link and next', async () => {
      h.clock.advance(1000);
      const from = new Date(h.clock.now).toISOString();
      for (const name of ['p1', 'p2', 'p3'])
        ok(await call('POST', '/api/v1/keys', { name, tier: 'free' }), 201);
      const first = await call(
        'GET',
        `/api/v1/audit?action=keys.create&from=${encodeURIComponent(from)}&limit=2`,
      );
      const page1 = ok(first, 200) as { entries: Entry[]; next: string | null };
      assert.equal(page1.entries.length, 2);
      assert.ok(page1.next);
      assert.equal(first.headers.link, `<${page1.next}>; rel="next"`);
      assert.equal(first.headers['cache-control'], 'no-store');
      const page2 = ok(await call('GET', page1.next), 200) as { entries: Entry[]; next: string | null };
      assert.equal(page2.entries.length, 1);
      assert.equal(page2.next, null);
      const ids = [...page1.entries, ...page2.entries].map((e) => e.id);
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => b - a),
        'newest first',
      );
      const to = new Date(h.clock.now).toISOString();
      const none = ok(
        await call(
          'GET',
          `/api/v1/audit?action=keys.create&to=${encodeURIComponent(to)}&from=${encodeURIComponent(to)}`,
        ),
        200,
      );
      assert.deepEqual(none.entries, []);
      const mine = ok(await call('GET', `/api/v1/audit?actor=${adminId}&limit=1000`), 200) as {
        entries: Entry[];
      };
      assert.ok(mine.entries.every((e) => e.actor === adminId));
    });

    test('bad input to GET /api/v1/audit is a problem+json 400 naming the parameter; other keys get 403', async () => {
      for (const [query, parameter] of [
        ['from=yesterday', 'from'],
        ['to=2026-13-01', 'to'],
        ['action=keys.delete', 'action'],
        ['actor=someone', 'actor'],
        ['limit=0', 'limit'],
        ['limit=1001', 'limit'],
        ['limit=ten', 'limit'],
        ['cursor=-1', 'cursor'],
        ['colour=red', 'colour'],
      ]) {
        const refused = await call('GET', `/api/v1/audit?${query}`);
        assert.equal(refused.statusCode, 400, `${query}: ${refused.body}`);
        assert.match(String(refused.headers['content-type']), /^application\/problem\+json/);
        assert.equal(refused.json().code, 'invalid_parameter');
        assert.equal(refused.json().parameter, parameter, query);
      }
      const writer = await h.createKey({ tier: 'free', scopes: ['read', 'write'] });
      const refused = await call('GET', '/api/v1/audit', undefined, writer.key);
      assert.equal(refused.statusCode, 403);
      assert.equal(refused.json().code, 'insufficient_scope');
    });

    test('entries older than PRICEPOINT_AUDIT_RETENTION_DAYS (400) are pruned once more entries are written', async () => {
      ok(await call('POST', '/api/v1/keys', { name: 'old', tier: 'free' }), 201);
      const oldest = (await h.stores.audit?.list({ limit: 100_000 })) ?? [];
      const cutoff = h.clock.now;
      h.clock.advance(400 * DAY_MS + 1);
      ok(await call('POST', '/api/v1/keys', { name: 'new', tier: 'free' }), 201);
      const left: AuditEntry[] = (await h.stores.audit?.list({ limit: 100_000 })) ?? [];
      assert.ok(oldest.length > 1);
      assert.deepEqual(
        left.map((e) => e.action),
        ['keys.create'],
        'only the entry written after the keeping time of the others',
      );
      assert.ok(left.every((e) => e.time > cutoff));
    });
  });
}
