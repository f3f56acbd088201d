/** A bad tier in the config file is refused, named by its path in the file (docs/settings.md). */
import { describe, test } from 'node:test';
import { configFiles, refuses } from './config-fixtures.js';

const configFile = configFiles().write;

describe('a bad tier in the file', () => {
  const tierFile = (tiers: unknown) => configFile(JSON.stringify({ tiers }), 'json');
  const minute = { name: 'minute', limit: 30, windowSeconds: 60 };

  test('a limit of 0', () => {
    const path = tierFile({ partner: { limits: [{ ...minute, limit: 0 }] } });
    refuses({ PRICEPOINT_CONFIG: path }, /^PRICEPOINT_CONFIG: .*setting "tiers\.partner\.limits\.0\.limit"/);
  });

  test('a limit that is not a whole number, or a window of 0 seconds', () => {
    refuses(
      { PRICEPOINT_CONFIG: tierFile({ demo: { limits: [{ ...minute, limit: 2.5 }] } }) },
      /setting "tiers\.demo\.limits\.0\.limit"/,
    );
    refuses(
      {
        PRICEPOINT_CONFIG: tierFile({
          demo: { limits: [minute, { ...minute, name: 'x', windowSeconds: 0 }] },
        }),
      },
      /setting "tiers\.demo\.limits\.1\.windowSeconds"/,
    );
  });

  test('an unknown field such as limitz', () => {
    const path = tierFile({ partner: { limitz: [minute] } });
    refuses({ PRICEPOINT_CONFIG: path }, /^PRICEPOINT_CONFIG: .*setting "tiers\.partner\.limitz"/);
    const inRule = tierFile({ partner: { limits: [{ ...minute, windowSecs: 60 }] } });
    refuses({ PRICEPOINT_CONFIG: inRule }, /setting "tiers\.partner\.limits\.0\.windowSecs"/);
  });

  test('countPer other than key or key+ip', () => {
    const path = tierFile({ partner: { limits: [minute], countPer: 'ip' } });
    refuses({ PRICEPOINT_CONFIG: path }, /^PRICEPOINT_CONFIG: .*setting "tiers\.partner\.countPer"/);
  });

  test('a new tier without limits', () => {
    const path = tierFile({ partner: { countPer: 'key', historyDays: 365 } });
    refuses({ PRICEPOINT_CONFIG: path }, /^PRICEPOINT_CONFIG: .*tiers\.partner\.limits is required/);
  });

  test('an empty list of limits, also for a default tier', () => {
    refuses({ PRICEPOINT_CONFIG: tierFile({ demo: { limits: [] } }) }, /setting "tiers\.demo\.limits"/);
  });

  test('a negative historyDays or an empty kind', () => {
    refuses(
      { PRICEPOINT_CONFIG: tierFile({ free: { historyDays: -1 } }) },
      /setting "tiers\.free\.historyDays"/,
    );
    refuses({ PRICEPOINT_CONFIG: tierFile({ free: { kinds: [''] } }) }, /setting "tiers\.free\.kinds/);
  });

  test('streams that are not a whole number of at least 1', () => {
    for (const streams of [0, -3, 2.5, '10', null]) {
      refuses(
        { PRICEPOINT_CONFIG: tierFile({ demo: { streams } }) },
        /^PRICEPOINT_CONFIG: .*setting "tiers\.demo\.streams"/,
      );
    }
  });

  test('a tier or limit name outside lower-case letters, digits, _ and -', () => {
    // Names end up in headers, logs and problem details: a quote or space there would break them.
    refuses(
      { PRICEPOINT_CONFIG: tierFile({ 'Partner Tier': { limits: [minute] } }) },
      /setting "tiers\.Partner Tier"/,
    );
    refuses(
      { PRICEPOINT_CONFIG: tierFile({ partner: { limits: [{ ...minute, name: 'per "minute"' }] } }) },
      /setting "tiers\.partner\.limits\.0\.name"/,
    );
  });

  test('two limits of one tier with the same name', () => {
    // RateLimit-Policy and violated-policies identify a limit by its name alone.
    const path = tierFile({
      partner: { limits: [minute, { ...minute, limit: 500, windowSeconds: 3600 }] },
    });
    refuses({ PRICEPOINT_CONFIG: path }, /^PRICEPOINT_CONFIG: .*setting "tiers\.partner\.limits".*"minute"/);
  });
});
