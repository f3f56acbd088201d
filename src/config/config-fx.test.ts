/** The config file's `fx:` section: which FX series converts each pair (docs/data-model.md). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from './config.js';
import { configFiles, refuses } from './config-fixtures.js';

const files = configFiles();

describe('fx: in the config file', () => {
  test('pairs are read as written; none without the section', () => {
    const path = files.write('fx:\n  EUR: { NOK: EURNOK, USD: EURUSD }\n  USD: { JPY: USDJPY }\n');
    assert.deepEqual(loadConfig({ PRICEPOINT_CONFIG: path }).fx, {
      EUR: { NOK: 'EURNOK', USD: 'EURUSD' },
      USD: { JPY: 'USDJPY' },
    });
    assert.deepEqual(loadConfig({ PRICEPOINT_CONFIG: files.write('port: 8444\n') }).fx, {});
    assert.deepEqual(loadConfig({}).fx, {});
  });

  test('a currency that is not upper-case letters and digits, or a symbol that is no symbol, is named', () => {
    refuses({ PRICEPOINT_CONFIG: files.write('fx:\n  eur: { NOK: EURNOK }\n') }, /setting "fx/);
    refuses({ PRICEPOINT_CONFIG: files.write('fx:\n  EUR: { NOK: "EUR NOK" }\n') }, /setting "fx\.EUR\.NOK"/);
    refuses({ PRICEPOINT_CONFIG: files.write('fx:\n  EUR: EURNOK\n') }, /setting "fx\.EUR"/);
  });
});
