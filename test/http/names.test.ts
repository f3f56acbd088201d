/**
 * Names are plain text (docs/decisions.md): a key's name and a series' name and unit are shown in
 * listings and terminals, so none may hold a control character (NUL, tab, line feed, ESC, DEL, C1),
 * a line or paragraph separator or a bidirectional override. Through HTTP each is a 400
 * `invalid_parameter` that names the field, and nothing is stored; names in any script still are.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_TIERS, type Tier } from '../../src/domain/limits/tiers.js';
import { createHarness, type Harness } from '../helpers/harness.js';

/** One of each kind the rule refuses, as an attacker would put it in a name. */
const HOSTILE: Readonly<Record<string, string>> = {
  NUL: 'ci\u0000bot',
  'line feed forging a row': 'ci\nkey_FAKE\t…abcd\tenterprise\tadmin\tactive\t-\tops',
  tab: 'ci\tbot',
  'ESC clearing the screen': 'ci\u001b[2J\u001b[Hbot',
  DEL: 'ci\u007fbot',
  'C1 CSI': 'ci\u009b2Jbot',
  'line separator': 'ci\u2028bot',
  'paragraph separator': 'ci\u2029bot',
  'right-to-left override': 'invoice\u202Efdp.exe',
  'first strong isolate': 'ci\u2068bot',
};

const OPS: Tier = {
  name: 'ops',
  limits: [{ name: 'minute', limit: 100_000, windowSeconds: 60 }],
  countPer: 'key',
  kinds: null,
  historyDays: null,
  streams: 3,
};

let h: Harness;
let admin: string;

before(async () => {
  h = await createHarness({ config: { tiers: { ...DEFAULT_TIERS, ops: OPS } } });
  admin = (await h.createKey({ name: 'operator', tier: 'ops', scopes: ['admin'] })).key;
});
after(() => h.close());

function call(method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) {
  return h.app.inject({ method, url, headers: { 'x-api-key': admin }, ...(payload && { payload }) });
}

describe('key names', () => {
  test('POST /api/v1/keys refuses each control character, separator and override with 400 naming "name"', async () => {
    const before = (await call('GET', '/api/v1/keys')).json() as unknown[];
    for (const [what, name] of Object.entries(HOSTILE)) {
      const response = await call('POST', '/api/v1/keys', { name, tier: 'free' });
      assert.equal(response.statusCode, 400, `${what}: ${response.body}`);
      const problem = response.json();
      assert.equal(problem.code, 'invalid_parameter', what);
      assert.equal(problem.parameter, 'name', what);
      assert.match(problem.detail, /^name must be plain text/, what);
    }
    const listed = (await call('GET', '/api/v1/keys')).json() as unknown[];
    assert.equal(listed.length, before.length, 'no key was stored');
  });

  test('names in any script, with spaces, punctuation and emoji, are kept as given', async () => {
    for (const name of ['Zürich Strom', '東京 dashboard', 'שלום team', 'ops 📈 (prod) #2']) {
      const response = await call('POST', '/api/v1/keys', { name, tier: 'free' });
      assert.equal(response.statusCode, 201, `${name}: ${response.body}`);
      assert.equal(response.json().name, name);
    }
  });
});

describe('series names and units', () => {
  const series = {
    name: 'Stockholm day-ahead',
    kind: 'electricity',
    currency: 'EUR',
    unit: 'MWh',
    timezone: 'Europe/Stockholm',
    resolution: 'PT15M',
  };

  test('PUT /api/v1/series/{symbol} refuses them in name and unit with 400 naming each field', async () => {
    for (const [what, text] of Object.entries(HOSTILE)) {
      const response = await call('PUT', '/api/v1/series/SE3', { ...series, name: text, unit: `M${text}` });
      assert.equal(response.statusCode, 400, `${what}: ${response.body}`);
      const problem = response.json();
      assert.equal(problem.code, 'invalid_parameter', what);
      assert.equal(problem.parameter, 'name', what);
      assert.deepEqual(
        problem.errors.map((e: { field: string }) => e.field),
        ['name', 'unit'],
        what,
      );
      assert.match(problem.detail, /The field "name" must be plain text/, what);
    }
    const catalogue = await call('GET', '/api/v1/series');
    assert.equal(catalogue.body.includes('SE3'), false, 'nothing was stored');
  });

  test('a plain name in another script is stored', async () => {
    const response = await call('PUT', '/api/v1/series/SE3', { ...series, name: 'Stockholm – elpris 📈' });
    assert.equal(response.statusCode, 201, response.body);
    assert.equal(response.json().name, 'Stockholm – elpris 📈');
  });
});
