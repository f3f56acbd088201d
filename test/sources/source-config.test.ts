/**
 * `sources:` in the config file: each entry checked by its connector at start, with messages that
 * name the bad field; secrets only from environment variables, and never shown again.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { parseSources } from '../../src/sources/source-config.js';

const TOKEN = 'secret-token-5f1c9a';
const ENV = { ENTSOE_TOKEN: TOKEN };
/** `${NAME}`, as the config file names an environment variable. */
const ref = (name: string) => `\${${name}}`;

function configWith(text: string, name = 'pricepoint.yaml', env: Record<string, string> = ENV) {
  const dir = mkdtempSync(join(tmpdir(), 'pp-sources-'));
  writeFileSync(join(dir, name), text);
  return loadConfig({ PRICEPOINT_CONFIG: join(dir, name), ...env });
}

describe('sources in the config file', () => {
  test('YAML as in the design: an ENTSO-E zone with its token from the environment, and the ECB', () => {
    const config = configWith(`
sources:
  entsoe-no1:
    type: entsoe
    zone: NO1
    symbol: NO1
    token: \${ENTSOE_TOKEN}
    schedule: "*/10 12-15 * * *"
    scheduleZone: Europe/Brussels
  ecb:
    type: ecb
    currencies: [NOK, SEK]
`);
    assert.deepEqual(
      config.sources.map((s) => [s.name, s.type, s.schedule]),
      [
        ['entsoe-no1', 'entsoe', [{ cron: '*/10 12-15 * * *', zone: 'Europe/Brussels' }]],
        ['ecb', 'ecb', [{ cron: '30 16 * * 1-5', zone: 'Europe/Berlin' }]],
      ],
    );
    assert.equal(config.sources[0]?.settings['token'], ref('ENTSOE_TOKEN'));
    assert.equal(config.sources[0]?.connect().type, 'entsoe');
    assert.doesNotMatch(JSON.stringify(config), new RegExp(TOKEN));
  });

  test('JSON works too, and day-ahead sources default to every 10 minutes at noon, then hourly', () => {
    const config = configWith(
      JSON.stringify({ sources: { dk1: { type: 'energidataservice', area: 'DK1', currency: 'EUR' } } }),
      'pricepoint.json',
    );
    assert.deepEqual(config.sources[0]?.schedule, [
      { cron: '*/10 12-15 * * *', zone: 'Europe/Brussels', untilTomorrowComplete: true },
      { cron: '0 * * * *', zone: 'Europe/Brussels' },
    ]);
  });

  test('without sources, there are none', () => {
    assert.deepEqual(loadConfig({}).sources, []);
  });

  const refusals: [string, Record<string, unknown>, RegExp][] = [
    [
      'an unknown type',
      { x: { type: 'no-such-upstream' } },
      /setting "sources\.x\.type" must be one of entsoe, ecb, energidataservice/,
    ],
    [
      'a bad zone',
      { x: { type: 'entsoe', zone: 'XX9', token: ref('ENTSOE_TOKEN') } },
      /setting "sources\.x\.zone" "XX9" is not a known bidding zone/,
    ],
    ['no currencies', { x: { type: 'ecb' } }, /setting "sources\.x\.currencies" name at least one currency/],
    [
      'a bad cron',
      { x: { type: 'ecb', currencies: ['NOK'], schedule: 'every day' } },
      /setting "sources\.x\.schedule" "every day" is not a cron expression/,
    ],
    [
      'a bad zone for the schedule',
      { x: { type: 'ecb', currencies: ['NOK'], scheduleZone: 'Mars/Olympus' } },
      /setting "sources\.x\.scheduleZone" must be an IANA time zone/,
    ],
    [
      'a token written in clear',
      { x: { type: 'entsoe', zone: 'NO1', token: TOKEN } },
      /setting "sources\.x\.token" must name an environment variable/,
    ],
    [
      'a variable that is not set',
      { x: { type: 'entsoe', zone: 'NO1', token: ref('NOT_SET_ANYWHERE') } },
      /setting "sources\.x\.token" names the environment variable NOT_SET_ANYWHERE, which is not set/,
    ],
    [
      'a misspelt setting',
      { x: { type: 'ecb', currencies: ['NOK'], curencies: ['SEK'] } },
      /setting "sources\.x\.curencies" is not a setting of ecb sources; they take currencies, feed, baseUrl, schedule, scheduleZone/,
    ],
    ['a bad source name', { 'No Good': { type: 'ecb', currencies: ['NOK'] } }, /setting "sources\.No Good"/],
  ];
  for (const [what, sources, message] of refusals) {
    test(`refuses ${what}, naming the field, never the token`, () => {
      assert.throws(
        () => configWith(JSON.stringify({ sources }), 'pricepoint.json'),
        (error: Error) => {
          assert.match(error.message, /^PRICEPOINT_CONFIG: /);
          assert.match(error.message, message);
          assert.doesNotMatch(error.message, new RegExp(TOKEN));
          return true;
        },
      );
    });
  }

  test("a connector's message that would quote the secret shows it replaced", () => {
    assert.throws(
      () =>
        parseSources({ x: { type: 'entsoe', zone: ref('ENTSOE_TOKEN'), token: ref('ENTSOE_TOKEN') } }, ENV),
      (error: Error) => error.message.includes('sources.x.zone') && !error.message.includes(TOKEN),
    );
  });
});
