/**
 * Keys fit for customers (docs/keys-and-tiers.md "What else a key carries"), on SQLite and PostgreSQL:
 * a key's own limits replace its tier's in the headers and the refusals, an allow-list refuses other
 * addresses with 403 address_not_allowed, expiry is shown and warned of in /usage, owner fields are
 * for admin views only, and every bad value of PATCH /api/v1/keys/{id} is a problem+json 400.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { DEFAULT_TIERS, type Tier } from '../../src/domain/limits/tiers.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { postgresSchemaUrl } from '../helpers/postgres.js';
import { describeOrSkip } from '../helpers/skip.js';

const TODAY = '/api/v1/prices/today?symbols=NO1';
const DAY_MS = 86_400_000;
/** A tier of two requests a minute, so limits are met in a few requests. */
const SMALL: Tier = {
  name: 'small',
  limits: [{ name: 'minute', limit: 2, windowSeconds: 60 }],
  countPer: 'key',
  kinds: null,
  historyDays: null,
  streams: 3,
};
const OPS: Tier = { ...SMALL, name: 'ops', limits: [{ name: 'minute', limit: 100_000, windowSeconds: 60 }] };

const probe = await postgresSchemaUrl();
const postgresSkip = 'skip' in probe ? probe.skip : false;
if (!('skip' in probe)) await probe.drop();

function problem(response: LightMyRequestResponse, status: number, code: string) {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
  const body = response.json() as { code: string; parameter?: string; errors?: { field: string }[] };
  assert.equal(body.code, code, response.body);
  return body;
}

for (const engine of ['sqlite', 'postgres'] as const) {
  describeOrSkip(
    `keys fit for customers on ${engine}`,
    { skip: engine === 'postgres' ? postgresSkip : false },
    () => {
      let h: Harness;
      let admin: string;

      before(async () => {
        h = await createHarness({ engine, config: { tiers: { ...DEFAULT_TIERS, small: SMALL, ops: OPS } } });
        admin = (await h.createKey({ name: 'operator', tier: 'ops', scopes: ['admin'] })).key;
      });
      after(() => h.close());

      const get = (url: string, key: string, remoteAddress?: string) =>
        h.app.inject({ url, headers: { 'x-api-key': key }, ...(remoteAddress && { remoteAddress }) });
      const patch = (id: string, payload: unknown) =>
        h.app.inject({
          method: 'PATCH',
          url: `/api/v1/keys/${id}`,
          headers: { 'x-api-key': admin, 'content-type': 'application/json' },
          payload: JSON.stringify(payload),
        });
      const view = async (id: string) =>
        (await get(`/api/v1/keys/${id}`, admin)).json() as Record<string, unknown>;

      test("a key's own limits replace its tier's: the headers tell them and refusals follow them, above and below", async () => {
        const { key, id } = await h.createKey({ tier: 'small' });
        const raised = await patch(id, { limits: [{ name: 'minute', limit: 4, windowSeconds: 60 }] });
        assert.equal(raised.statusCode, 200, raised.body);
        assert.deepEqual(raised.json().limits, [{ name: 'minute', limit: 4, windowSeconds: 60 }]);
        const statuses: number[] = [];
        let last: LightMyRequestResponse | undefined;
        for (let i = 0; i < 5; i++) {
          last = await get(TODAY, key);
          statuses.push(last.statusCode);
          if (i === 0) {
            assert.equal(last.headers['ratelimit-policy'], '"minute";q=4;w=60');
            assert.equal(last.headers['x-ratelimit-limit'], '4');
          }
        }
        assert.deepEqual(statuses, [200, 200, 200, 200, 429], 'four a minute, not the tier two');
        const refused = problem(last as LightMyRequestResponse, 429, 'rate_limited') as unknown as {
          detail: string;
        };
        assert.match(refused.detail, /minute limit of this key \(4\)/);

        // Lowered below what the window took: refused until the window ends, counted on the same counter.
        const lowered = await patch(id, { limits: [{ name: 'minute', limit: 3, windowSeconds: 60 }] });
        assert.equal(lowered.statusCode, 200, lowered.body);
        problem(await get(TODAY, key), 429, 'rate_limited');
        h.clock.advance(60_000);
        const fresh = await get(TODAY, key);
        assert.equal(fresh.statusCode, 200, fresh.body);
        assert.equal(fresh.headers['x-ratelimit-limit'], '3');
        assert.equal(fresh.headers['x-ratelimit-remaining'], '2');

        const usage = (await get('/api/v1/usage', key)).json() as {
          ownLimits: boolean;
          limits: { limit: number }[];
        };
        assert.equal(usage.ownLimits, true);
        assert.equal(usage.limits[0]?.limit, 3);

        // null: back to the tier's two a minute, whose counter is the same one (one used so far).
        const cleared = await patch(id, { limits: null });
        assert.equal(cleared.json().limits, null);
        const back = await get(TODAY, key);
        assert.equal(back.headers['ratelimit-policy'], '"minute";q=2;w=60');
        assert.equal(back.headers['x-ratelimit-remaining'], '0');
        problem(await get(TODAY, key), 429, 'rate_limited');
      });

      test('limits can be given at creation, and a rotation carries them, the allow-list and owner fields', async () => {
        const created = await h.app.inject({
          method: 'POST',
          url: '/api/v1/keys',
          headers: { 'x-api-key': admin },
          payload: {
            name: 'partner',
            tier: 'small',
            limits: [{ name: 'burst', limit: 1, windowSeconds: 1 }],
            allowedAddresses: ['127.0.0.1'],
            customerRef: 'CUST-42',
            contact: 'ops@partner.example',
          },
        });
        assert.equal(created.statusCode, 201, created.body);
        const made = created.json() as { id: string; key: string; allowedAddresses: string[] };
        assert.deepEqual(made.allowedAddresses, ['127.0.0.1/32'], 'a bare address is its own /32');
        const rotated = await h.app.inject({
          method: 'POST',
          url: `/api/v1/keys/${made.id}/rotate`,
          headers: { 'x-api-key': admin },
        });
        assert.equal(rotated.statusCode, 201, rotated.body);
        const next = rotated.json() as Record<string, unknown>;
        assert.deepEqual(next.limits, [{ name: 'burst', limit: 1, windowSeconds: 1 }]);
        assert.deepEqual(next.allowedAddresses, ['127.0.0.1/32']);
        assert.equal(next.customerRef, 'CUST-42');
        assert.equal(next.contact, 'ops@partner.example');
      });

      test('an allow-list refuses other addresses with 403 address_not_allowed, counting nothing', async () => {
        const { key, id } = await h.createKey({
          tier: 'small',
          limits: [{ name: 'minute', limit: 3, windowSeconds: 60 }],
        });
        const set = await patch(id, { allowedAddresses: ['192.0.2.0/24', '2001:DB8::/32'] });
        assert.equal(set.statusCode, 200, set.body);
        assert.deepEqual(set.json().allowedAddresses, ['192.0.2.0/24', '2001:db8::/32']);
        const first = await get(TODAY, key, '192.0.2.7');
        assert.equal(first.statusCode, 200, first.body);
        assert.equal((await get(TODAY, key, '::ffff:192.0.2.8')).statusCode, 200, 'IPv4-mapped IPv6 matches');
        const v6 = await get(TODAY, key, '2001:db8:7::1');
        assert.equal(v6.statusCode, 200, v6.body);
        for (const address of ['192.0.3.1', '2001:db9::1', '::ffff:198.51.100.1']) {
          const refused = await get(TODAY, key, address);
          problem(refused, 403, 'address_not_allowed');
          assert.equal(refused.headers['ratelimit-policy'], undefined, 'nothing counted, no limit headers');
          assert.equal(refused.body.includes(key), false);
        }
        // Three requests of the key's three were taken, by the allowed addresses only.
        const usage = (await get('/api/v1/usage', key, '192.0.2.7')).json() as {
          limits: { remaining: number }[];
        };
        assert.equal(usage.limits[0]?.remaining, 0);
        problem(await get('/api/v1/usage', key, '203.0.113.5'), 403, 'address_not_allowed');
        // Cleared: every address again.
        await patch(id, { allowedAddresses: null });
        h.clock.advance(60_000);
        const again = await get(TODAY, key, '203.0.113.5');
        assert.equal(again.statusCode, 200, again.body);
      });

      test('expiry: shown in every admin view, set and cleared by PATCH, warned of in /usage from 14 days before', async () => {
        const { key, id } = await h.createKey({ tier: 'small' });
        const warned = async () =>
          (await get('/api/v1/usage', key)).json() as {
            expiresAt: string | null;
            expiryWarning: string | null;
          };
        assert.deepEqual(await warned(), { ...(await warned()), expiresAt: null, expiryWarning: null });

        const far = new Date(h.clock.now + 20 * DAY_MS).toISOString();
        assert.equal((await patch(id, { expiresAt: far })).statusCode, 200);
        assert.equal((await view(id)).expiresAt, far);
        const listed = (await get('/api/v1/keys', admin)).json() as {
          id: string;
          expiresAt: string | null;
        }[];
        assert.equal(listed.find((k) => k.id === id)?.expiresAt, far);
        assert.deepEqual(await warned(), { ...(await warned()), expiresAt: far, expiryWarning: null });

        h.clock.advance(10 * DAY_MS); // ten days left
        const soon = await warned();
        assert.equal(soon.expiresAt, far);
        assert.match(
          soon.expiryWarning ?? '',
          new RegExp(`expires at ${far.replace(/\./g, '\\.')}, in 10 days`),
        );

        assert.equal((await patch(id, { expiresAt: null })).statusCode, 200);
        assert.equal((await view(id)).expiresAt, null);
        assert.equal((await warned()).expiryWarning, null);

        const soonest = new Date(h.clock.now + 3_600_000).toISOString();
        await patch(id, { expiresAt: soonest });
        assert.match((await warned()).expiryWarning ?? '', /within a day/);
        h.clock.advance(3_600_000);
        problem(await get('/api/v1/usage', key), 401, 'invalid_api_key');
      });

      test('owner fields are in admin views and never in what the key holder sees', async () => {
        const { key, id } = await h.createKey({ tier: 'small' });
        const set = await patch(id, { customerRef: 'ACME-77', contact: 'billing@acme.example' });
        assert.equal(set.statusCode, 200, set.body);
        assert.equal((await view(id)).customerRef, 'ACME-77');
        assert.equal((await view(id)).contact, 'billing@acme.example');
        const usage = await get('/api/v1/usage', key);
        assert.equal(usage.statusCode, 200);
        assert.equal(usage.body.includes('ACME-77'), false);
        assert.equal(usage.body.includes('acme.example'), false);
        // A read key asking for its own view is refused: the admin views are for admin keys.
        problem(await get(`/api/v1/keys/${id}`, key), 403, 'insufficient_scope');
        const cleared = await patch(id, { customerRef: null });
        assert.equal(cleared.json().customerRef, null);
        assert.equal(cleared.json().contact, 'billing@acme.example', 'a field left out stays');
      });

      test('bad input to PATCH is a problem+json 400 naming every bad field, and changes nothing', async () => {
        const { id } = await h.createKey({ tier: 'small', name: 'untouched' });
        const before = await view(id);
        const all = problem(
          await patch(id, {
            name: 'line\nfeed',
            tier: 'gold',
            limits: [{ name: 'Minute', limit: 0, windowSeconds: 60 }],
            allowedAddresses: ['300.1.2.3/8'],
            customerRef: 'x'.repeat(201),
            contact: 'pp_live_AAAAAAAAAAAAAAAAAAAAAA000000',
            expiresAt: '2020-01-01T00:00:00Z',
          }),
          400,
          'invalid_parameter',
        );
        assert.deepEqual(all.errors?.map((e) => e.field).sort(), [
          'allowedAddresses',
          'contact',
          'customerRef',
          'expiresAt',
          'limits',
          'name',
          'tier',
        ]);
        const cases: [unknown, string][] = [
          [{}, 'body'],
          [{ colour: 'red' }, 'colour'],
          [{ limits: [] }, 'limits'],
          [
            {
              limits: [
                { name: 'minute', limit: 1, windowSeconds: 60 },
                { name: 'minute', limit: 2, windowSeconds: 1 },
              ],
            },
            'limits',
          ],
          [{ limits: [{ name: 'minute', limit: 1.5, windowSeconds: 60 }] }, 'limits'],
          [{ limits: [{ name: 'minute', limit: 1, windowSeconds: 0 }] }, 'limits'],
          [{ limits: [{ name: 'minute', limit: 1, windowSeconds: 60, extra: 1 }] }, 'limits'],
          [{ limits: 'minute=1/60' }, 'limits'],
          [{ allowedAddresses: [] }, 'allowedAddresses'],
          [{ allowedAddresses: ['192.0.2.0/33'] }, 'allowedAddresses'],
          [{ allowedAddresses: ['2001:db8::/129'] }, 'allowedAddresses'],
          [{ allowedAddresses: ['example.com'] }, 'allowedAddresses'],
          [{ allowedAddresses: [7] }, 'allowedAddresses'],
          [{ customerRef: '' }, 'customerRef'],
          [{ contact: 'bidi\u202Eoverride' }, 'contact'],
          [{ expiresAt: 'tomorrow' }, 'expiresAt'],
        ];
        for (const [body, field] of cases) {
          const refused = problem(await patch(id, body), 400, 'invalid_parameter');
          if (field !== 'body') assert.equal(refused.parameter, field, JSON.stringify(body));
        }
        problem(
          await h.app.inject({
            method: 'PATCH',
            url: `/api/v1/keys/${id}`,
            headers: { 'x-api-key': admin, 'content-type': 'application/json' },
            payload: '{"limits":',
          }),
          400,
          'invalid_parameter',
        );
        problem(await patch('key_doesNotExist', { customerRef: 'x' }), 404, 'not_found');
        assert.deepEqual(await view(id), before, 'nothing changed');
      });
    },
  );
}
