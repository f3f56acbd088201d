/**
 * `tariffs:` in the config file (docs/tariffs.md, "Configuring tariffs"): the docs' YAML is read as
 * written, and a bad entry stops the start with a message naming its field.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { configFiles, refuses } from '../../src/config/config-fixtures.js';

const files = configFiles();

const HOUSEHOLD = `
fx:
  EUR: { NOK: EURNOK }
tariffs:
  no1-household:
    description: Oslo household, grid fee higher 06:00-22:00
    currency: NOK
    unit: kWh
    timezone: Europe/Oslo
    vat:
      - { from: 2026-01-01, percent: 25 }
    fixed:
      - { from: 2026-01-01, amount: "0.0713" }
    fees:
      - from: 2026-01-01
        rules:
          - { hours: "06:00-22:00", amount: "0.3640" }
          - { amount: "0.2640" }
`;

describe('tariffs: in the config file', () => {
  test("the docs' household example is read as written; none without the section", () => {
    const config = loadConfig({ PRICEPOINT_CONFIG: files.write(HOUSEHOLD) });
    assert.deepEqual(config.tariffs, {
      'no1-household': {
        name: 'no1-household',
        description: 'Oslo household, grid fee higher 06:00-22:00',
        currency: 'NOK',
        unit: 'kWh',
        timezone: 'Europe/Oslo',
        vat: [{ from: '2026-01-01', percent: '25' }],
        fixed: [{ from: '2026-01-01', amount: '0.0713' }],
        fees: [
          {
            from: '2026-01-01',
            rules: [{ amount: '0.3640', minutes: [360, 1320] }, { amount: '0.2640' }],
          },
        ],
      },
    });
    assert.deepEqual(loadConfig({ PRICEPOINT_CONFIG: files.write('port: 8444\n') }).tariffs, {});
    assert.deepEqual(loadConfig({}).tariffs, {});
  });

  test('a bad entry is named by its path in the file', () => {
    const bad = (tariff: string) =>
      files.write(`tariffs:\n  home:\n    currency: NOK\n    unit: kWh\n${tariff}`);
    refuses(
      { PRICEPOINT_CONFIG: files.write('tariffs:\n  Home: { currency: NOK, unit: kWh }\n') },
      /setting "tariffs/,
    );
    refuses(
      { PRICEPOINT_CONFIG: files.write('tariffs:\n  home: { currency: NOK, unit: kW }\n') },
      /setting "tariffs\.home\.unit" must be one of Wh, kWh, MWh, not "kW"/,
    );
    refuses(
      { PRICEPOINT_CONFIG: bad('    vat: [{ from: 2026-01-01, percent: 25, extra: 1 }]\n') },
      /setting "tariffs\.home\.vat\.0/,
    );
    refuses(
      { PRICEPOINT_CONFIG: bad('    vat: [{ from: 2026-13-01, percent: 25 }]\n') },
      /setting "tariffs\.home\.vat\.0\.from" must be a real date/,
    );
    refuses(
      { PRICEPOINT_CONFIG: bad('    fees: [{ from: 2026-01-01, rules: [{ amount: 1, hours: "6-22" }] }]\n') },
      /setting "tariffs\.home\.fees\.0\.rules\.0\.hours"/,
    );
    refuses(
      { PRICEPOINT_CONFIG: bad('    fees: [{ from: 2026-01-01, rules: [{ amount: "1,5" }] }]\n') },
      /setting "tariffs\.home\.fees\.0\.rules\.0\.amount" must be a plain decimal/,
    );
    refuses(
      { PRICEPOINT_CONFIG: bad('    timezone: Europe/Nowhere\n') },
      /setting "tariffs\.home\.timezone"/,
    );
  });
});
