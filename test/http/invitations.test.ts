/**
 * Invitations over real HTTPS (docs/invitations.md), on SQLite and PostgreSQL: an operator makes one,
 * a customer claims a key with its token and reads prices with it; used-up, expired and revoked
 * invitations are refused with problems of their own; the last use is claimed once under a race;
 * wrong tokens use up the address' failed-login budget; bad input to every route is problem+json;
 * the audit log records who did what, and neither it nor the log lines ever hold a token or a key.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DEFAULT_TIERS, type Tier } from '../../src/domain/limits/tiers.js';
import { createHarness, type Harness, listenHttps } from '../helpers/harness.js';
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
const DAY_MS = 86_400_000;
/** Failed logins an address may have a minute in these tests (the default is 20). */
const BUDGET = 6;

interface Invitation {
  id: string;
  tier: string;
  scopes: string[];
  expiresAt: string;
  uses: number;
  claimed: number;
  keyExpiresAt: string | null;
  note: string | null;
  createdAt: string;
  revokedAt: string | null;
  state: string;
}
type Created = Invitation & { token: string; claimUrl: string };
interface Claimed {
  key: string;
  id: string;
  name: string;
  tier: string;
  scopes: string[];
  expiresAt: string | null;
  createdAt: string;
}

const probe = await postgresSchemaUrl();
const postgresSkip = 'skip' in probe ? probe.skip : false;
if (!('skip' in probe)) await probe.drop();

for (const engine of ['sqlite', 'postgres'] as const) {
  describeOrSkip(`invitations on ${engine}`, { skip: engine === 'postgres' ? postgresSkip : false }, () => {
    let h: Harness;
    let server: Awaited<ReturnType<typeof listenHttps>>;
    let admin: string;
    let adminId: string;
    /** Every token and key an answer showed: none may be in the audit table or the log. */
    const secrets: string[] = [];
    /** Each test's requests come from an address of their own (the proxy is trusted), so budgets do not mix. */
    let nextAddress = 10;
    const freshAddress = () => `203.0.113.${nextAddress++}`;

    before(async () => {
      h = await createHarness({
        engine,
        https: true,
        env: { PRICEPOINT_TRUST_PROXY: '127.0.0.1', PRICEPOINT_AUTH_FAILURES_PER_MINUTE: String(BUDGET) },
        config: { tiers: { ...DEFAULT_TIERS, ops: OPS } },
      });
      server = await listenHttps(h);
      const made = await h.createKey({ name: 'operator', tier: 'ops', scopes: ['admin'] });
      admin = made.key;
      adminId = made.id;
      secrets.push(admin);
    });
    after(async () => {
      await server.close();
      await h.close();
    });

    async function call(
      method: 'GET' | 'POST' | 'DELETE',
      path: string,
      options: { key?: string; body?: unknown; raw?: string; from?: string; type?: string } = {},
    ) {
      const headers: Record<string, string> = { 'x-forwarded-for': options.from ?? '198.51.100.7' };
      if (options.key !== undefined) headers['x-api-key'] = options.key;
      const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
      if (body !== undefined) headers['content-type'] = options.type ?? 'application/json';
      const response = await server.request(method, path, { headers, ...(body !== undefined && { body }) });
      return { ...response, json: () => JSON.parse(response.text) as Record<string, unknown> };
    }

    async function invite(body: object): Promise<Created> {
      const response = await call('POST', '/api/v1/invitations', { key: admin, body });
      assert.equal(response.status, 201, response.text);
      const created = response.json() as unknown as Created;
      secrets.push(created.token);
      return created;
    }

    async function claim(token: string, name: string, from = freshAddress()) {
      const response = await call('POST', '/api/v1/invitations/claim', { body: { token, name }, from });
      if (response.status === 201) secrets.push((response.json() as unknown as Claimed).key);
      return response;
    }

    function assertProblem(
      response: { status: number; headers: Record<string, unknown>; text: string },
      status: number,
      code: string,
    ) {
      assert.equal(response.status, status, response.text);
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
      const body = JSON.parse(response.text) as { code: string; status: number };
      assert.equal(body.code, code, response.text);
      assert.equal(body.status, status);
      return body as Record<string, unknown>;
    }

    test('an operator makes an invitation; the customer claims a key with its link and reads prices with it', async () => {
      const created = await invite({ tier: 'free', note: 'Acme Corp trial' });
      assert.match(created.id, /^inv_[0-9A-Za-z]{16}$/);
      assert.match(created.token, /^ppi_[0-9A-Za-z]{32}$/);
      // No public URL is set: the link is on the address the request came to, the token in its fragment.
      assert.equal(created.claimUrl, `${server.base}/portal/claim#${created.token}`);
      assert.deepEqual(
        {
          ...created,
          token: undefined,
          claimUrl: undefined,
          id: undefined,
          createdAt: undefined,
          expiresAt: undefined,
        },
        {
          id: undefined,
          token: undefined,
          claimUrl: undefined,
          createdAt: undefined,
          expiresAt: undefined,
          tier: 'free',
          scopes: ['read'],
          uses: 1,
          claimed: 0,
          keyExpiresAt: null,
          note: 'Acme Corp trial',
          revokedAt: null,
          state: 'active',
        },
      );
      assert.equal(
        Date.parse(created.expiresAt) - Date.parse(created.createdAt),
        7 * DAY_MS,
        'a week by default',
      );

      const response = await claim(created.token, 'Acme dashboard');
      assert.equal(response.status, 201, response.text);
      assert.equal(response.headers['cache-control'], 'no-store');
      const key = response.json() as unknown as Claimed;
      assert.match(key.key, /^pp_live_/);
      assert.equal(key.name, 'Acme dashboard');
      assert.equal(key.tier, 'free');
      assert.deepEqual(key.scopes, ['read']);
      assert.equal(key.expiresAt, null);

      const prices = await call('GET', '/api/v1/prices/today?symbols=NO1', { key: key.key });
      assert.equal(prices.status, 200, prices.text);
      const shown = await call('GET', `/api/v1/keys/${key.id}`, { key: admin });
      assert.equal(
        (shown.json() as { name: string }).name,
        'Acme dashboard',
        'the operator sees the new key',
      );

      const after = (await call('GET', `/api/v1/invitations/${created.id}`, { key: admin })).json();
      assert.equal(after.claimed, 1);
      assert.equal(after.state, 'used_up');
      assert.equal(after.token, undefined, 'the token is shown once');
    });

    test('a used-up invitation is refused with 410 invitation_used_up', async () => {
      const created = await invite({ tier: 'free', uses: 2 });
      assert.equal((await claim(created.token, 'first')).status, 201);
      assert.equal((await claim(created.token, 'second')).status, 201);
      assertProblem(await claim(created.token, 'third'), 410, 'invitation_used_up');
    });

    test('an expired invitation is refused with 410 invitation_expired', async () => {
      const created = await invite({
        tier: 'free',
        expiresAt: new Date(h.clock.now + 3_600_000).toISOString(),
      });
      h.clock.advance(3_600_000);
      try {
        assertProblem(await claim(created.token, 'late'), 410, 'invitation_expired');
        const listed = (
          await call('GET', '/api/v1/invitations', { key: admin })
        ).json() as unknown as Invitation[];
        assert.equal(listed.find((i) => i.id === created.id)?.state, 'expired');
      } finally {
        h.clock.advance(-3_600_000);
      }
    });

    test('a revoked invitation is refused with 410 invitation_revoked; revoking answers 204, twice too', async () => {
      const created = await invite({ tier: 'free', uses: 5 });
      const revoked = await call('DELETE', `/api/v1/invitations/${created.id}`, { key: admin });
      assert.equal(revoked.status, 204, revoked.text);
      assert.equal(revoked.text, '');
      assert.equal((await call('DELETE', `/api/v1/invitations/${created.id}`, { key: admin })).status, 204);
      assertProblem(await claim(created.token, 'after revoke'), 410, 'invitation_revoked');
      const shown = (await call('GET', `/api/v1/invitations/${created.id}`, { key: admin })).json();
      assert.equal(shown.state, 'revoked');
      assert.equal(shown.claimed, 0);
    });

    test('keys claimed carry the scopes and key expiry of the invitation', async () => {
      const keyExpiresAt = new Date(h.clock.now + 30 * DAY_MS).toISOString();
      const created = await invite({ tier: 'pro', scopes: ['read', 'write'], keyExpiresAt });
      const key = (await claim(created.token, 'writer')).json() as unknown as Claimed;
      assert.equal(key.tier, 'pro');
      assert.deepEqual(key.scopes, ['read', 'write']);
      assert.equal(key.expiresAt, keyExpiresAt);
    });

    test('of two claims at once of an invitation with one use, one makes a key and one is used up', async () => {
      const created = await invite({ tier: 'free' });
      const [a, b] = await Promise.all([claim(created.token, 'racer a'), claim(created.token, 'racer b')]);
      const statuses = [a.status, b.status].sort();
      assert.deepEqual(statuses, [201, 410], `${a.text} ${b.text}`);
      assertProblem(a.status === 410 ? a : b, 410, 'invitation_used_up');
      const keys = (await call('GET', '/api/v1/keys', { key: admin })).json() as unknown as {
        name: string;
      }[];
      assert.equal(keys.filter((k) => k.name.startsWith('racer')).length, 1);
    });

    test('of ten claims at once of an invitation with three uses, three make keys', async () => {
      const created = await invite({ tier: 'free', uses: 3 });
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, n) => claim(created.token, `crowd ${n}`)),
      );
      assert.equal(answers.filter((a) => a.status === 201).length, 3);
      for (const refused of answers.filter((a) => a.status !== 201))
        assertProblem(refused, 410, 'invitation_used_up');
      const shown = (await call('GET', `/api/v1/invitations/${created.id}`, { key: admin })).json();
      assert.equal(shown.claimed, 3);
    });

    test('wrong tokens are 404 and use up the address budget; then even a good token waits, other addresses do not', async () => {
      const good = await invite({ tier: 'free' });
      const from = freshAddress();
      const wrong = ['ppi_' + 'A'.repeat(32), 'not-a-token', `${good.token.slice(0, -1)}x`];
      for (let n = 0; n < BUDGET; n++) {
        assertProblem(
          await claim(wrong[n % wrong.length] as string, 'guess', from),
          404,
          'invitation_not_found',
        );
      }
      const refused = await claim(good.token, 'honest', from);
      assertProblem(refused, 429, 'too_many_auth_failures');
      assert.ok(Number(refused.headers['retry-after']) >= 1, 'Retry-After says when');
      // The same budget as keys: a key from that address is refused too.
      assertProblem(
        await call('GET', '/api/v1/prices/today', { key: admin, from }),
        429,
        'too_many_auth_failures',
      );
      assert.equal((await claim(good.token, 'honest')).status, 201, 'another address claims it');
    });

    test('a good claim gives its unit of the budget back', async () => {
      const from = freshAddress();
      for (let n = 0; n < BUDGET + 2; n++) {
        const created = await invite({ tier: 'free' });
        assert.equal((await claim(created.token, `keeper ${n}`, from)).status, 201);
      }
    });

    test('the invitation routes need an admin key', async () => {
      const reader = await h.createKey({ name: 'reader', tier: 'ops', scopes: ['write'] });
      for (const [method, path, body] of [
        ['POST', '/api/v1/invitations', { tier: 'free' }],
        ['GET', '/api/v1/invitations', undefined],
        ['GET', '/api/v1/invitations/inv_x', undefined],
        ['DELETE', '/api/v1/invitations/inv_x', undefined],
      ] as const) {
        assertProblem(await call(method, path, { body }), 401, 'missing_api_key');
        assertProblem(await call(method, path, { key: reader.key, body }), 403, 'insufficient_scope');
      }
      assertProblem(await call('GET', '/api/v1/invitations/inv_none', { key: admin }), 404, 'not_found');
      assertProblem(await call('DELETE', '/api/v1/invitations/inv_none', { key: admin }), 404, 'not_found');
    });

    test('bad input to create names every bad field in one 400', async () => {
      const response = await call('POST', '/api/v1/invitations', {
        key: admin,
        body: {
          tier: 'platinum',
          scopes: ['root'],
          expiresAt: new Date(h.clock.now + 400 * DAY_MS).toISOString(),
          uses: 0,
          keyExpiresAt: 'soon',
          note: 'line\nfeed',
        },
      });
      const body = assertProblem(response, 400, 'invalid_parameter');
      assert.deepEqual((body.errors as { field: string }[]).map((e) => e.field).sort(), [
        'expiresAt',
        'keyExpiresAt',
        'note',
        'scopes',
        'tier',
        'uses',
      ]);
      for (const [what, options] of [
        ['no tier', { body: {} }],
        ['an unknown field', { body: { tier: 'free', token: 'x' } }],
        ['uses not a number', { body: { tier: 'free', uses: 'many' } }],
        ['uses a fraction', { body: { tier: 'free', uses: 1.5 } }],
        ['too many uses', { body: { tier: 'free', uses: 1001 } }],
        ['expiry in the past', { body: { tier: 'free', expiresAt: '2020-01-01T00:00:00Z' } }],
        ['a note holding a key', { body: { tier: 'free', note: `for ${admin}` } }],
        ['not JSON', { raw: '{"tier":' }],
        ['an array', { body: [1] }],
        ['a query parameter', { body: { tier: 'free' }, path: '?x=1' }],
      ] as const) {
        const path = `/api/v1/invitations${'path' in options ? options.path : ''}`;
        const answer = await call('POST', path, { key: admin, ...options });
        assertProblem(answer, 400, 'invalid_parameter');
        assert.doesNotMatch(answer.text, /pp_live_/, `${what}: no key echoed`);
      }
      assertProblem(
        await call('POST', '/api/v1/invitations', {
          key: admin,
          raw: 'tier=free',
          type: 'application/x-www-form-urlencoded',
        }),
        415,
        'unsupported_media_type',
      );
    });

    test('bad input to claim is problem+json and makes nothing', async () => {
      const created = await invite({ tier: 'free' });
      for (const body of [
        {},
        { token: created.token },
        { name: 'no token' },
        { token: created.token, name: '' },
        { token: created.token, name: 'x'.repeat(201) },
        { token: 42, name: 'n' },
        { token: created.token, name: 'n', tier: 'enterprise' },
      ]) {
        const answer = await call('POST', '/api/v1/invitations/claim', { body, from: freshAddress() });
        assertProblem(answer, 400, 'invalid_parameter');
      }
      for (const name of ['tab\there', 'bidi \u202e', `key ${admin}`]) {
        assertProblem(await claim(created.token, name), 400, 'invalid_parameter');
      }
      assertProblem(
        await call('POST', '/api/v1/invitations/claim', { raw: '{', from: freshAddress() }),
        400,
        'invalid_parameter',
      );
      const shown = (await call('GET', `/api/v1/invitations/${created.id}`, { key: admin })).json();
      assert.equal(shown.claimed, 0, 'no bad claim took a use');
      assert.equal((await claim(created.token, 'finally right')).status, 201);
    });

    test('the audit log records create, revoke and claims, with the new key; never a token or a key', async () => {
      const created = await invite({ tier: 'free', uses: 2 });
      const key = (await claim(created.token, 'audited', '192.0.2.44')).json() as unknown as Claimed;
      await claim('ppi_' + 'B'.repeat(32), 'guess', '192.0.2.45');
      await call('DELETE', `/api/v1/invitations/${created.id}`, { key: admin });
      await claim(created.token, 'too late', '192.0.2.46');
      const entries = (await h.stores.audit?.list({ limit: 1000 })) ?? [];
      const mine = (action: string) => entries.filter((e) => e.action === action);
      assert.ok(
        mine('invitations.create').some(
          (e) => e.target === created.id && e.actor === adminId && e.status === 201,
        ),
      );
      assert.ok(
        mine('invitations.revoke').some(
          (e) => e.target === created.id && e.actor === adminId && e.status === 204,
        ),
      );
      const claims = mine('invitations.claim');
      const ok = claims.find((e) => e.address === '192.0.2.44');
      assert.deepEqual(
        { actor: ok?.actor, target: ok?.target, keyId: ok?.keyId, status: ok?.status, code: ok?.code },
        { actor: 'anonymous', target: created.id, keyId: key.id, status: 201, code: null },
      );
      const guess = claims.find((e) => e.address === '192.0.2.45');
      assert.deepEqual(
        { target: guess?.target, status: guess?.status, code: guess?.code, keyId: guess?.keyId },
        { target: null, status: 404, code: 'invitation_not_found', keyId: null },
      );
      const late = claims.find((e) => e.address === '192.0.2.46');
      assert.deepEqual(
        { target: late?.target, status: late?.status, code: late?.code },
        { target: created.id, status: 410, code: 'invitation_revoked' },
      );
      const listed = await call('GET', '/api/v1/audit?action=invitations.claim&actor=anonymous', {
        key: admin,
      });
      assert.equal(listed.status, 200, listed.text);
      assert.ok((listed.json().entries as { keyId: string | null }[]).some((e) => e.keyId === key.id));

      const table = JSON.stringify(entries);
      const logs = h.rawLogs.join('\n');
      for (const secret of secrets) {
        assert.equal(table.includes(secret), false, 'no token or key in the audit log');
        assert.equal(logs.includes(secret), false, 'no token or key in the log lines');
      }
      assert.doesNotMatch(table, /ppi_|pp_live_/);
      assert.doesNotMatch(logs, /ppi_[0-9A-Za-z]{32}/);
    });

    test('the stored invitation holds only the hash of its token', async () => {
      const created = await invite({ tier: 'free' });
      const stored = await h.stores.invitations?.get(created.id);
      assert.ok(stored);
      assert.notEqual(stored.hash, created.token);
      assert.equal(JSON.stringify(stored).includes(created.token), false);
      const listed = await call('GET', '/api/v1/invitations', { key: admin });
      assert.doesNotMatch(listed.text, /ppi_|[0-9a-f]{64}/, 'no token and no hash listed');
      const ids = (listed.json() as unknown as Invitation[]).map((i) => i.createdAt);
      assert.deepEqual(ids, [...ids].sort().reverse(), 'newest first');
    });
  });
}

test('the claim link is on PRICEPOINT_PUBLIC_URL when it is set', async () => {
  const h = await createHarness({ env: { PRICEPOINT_PUBLIC_URL: 'https://prices.example.com/' } });
  try {
    const { key } = await h.createKey({ name: 'operator', tier: 'pro', scopes: ['admin'] });
    const response = await h.app.inject({
      method: 'POST',
      url: '/api/v1/invitations',
      headers: { 'x-api-key': key, host: 'evil.example' },
      payload: { tier: 'free' },
    });
    assert.equal(response.statusCode, 201, response.body);
    const { claimUrl, token } = response.json() as Created;
    assert.equal(claimUrl, `https://prices.example.com/portal/claim#${token}`);
  } finally {
    await h.close();
  }
});
