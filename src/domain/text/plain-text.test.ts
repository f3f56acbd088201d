import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { isPlainText, printable, printableJson } from './plain-text.js';

/** One of each kind the rule refuses. */
export const NOT_PLAIN_SAMPLES: Readonly<Record<string, string>> = {
  NUL: '\u0000',
  tab: '\t',
  'line feed': '\n',
  'carriage return': '\r',
  ESC: '\u001b',
  DEL: '\u007f',
  'C1 CSI': '\u009b',
  'C1 NEL': '\u0085',
  'line separator': '\u2028',
  'paragraph separator': '\u2029',
  'right-to-left override': '\u202e',
  'left-to-right isolate': '\u2066',
  'right-to-left mark': '\u200f',
  'arabic letter mark': '\u061c',
  'lone surrogate': '\ud800',
};

describe('isPlainText', () => {
  test('accepts names in any script, with punctuation, spaces and emoji', () => {
    for (const name of [
      'Oslo day-ahead',
      'Zürich Strom',
      '東京 電力',
      'Ελλάδα €/MWh',
      'Team 📈 (prod) #2',
      'שלום',
    ]) {
      assert.equal(isPlainText(name), true, name);
    }
  });

  test('refuses control characters, separators and bidirectional overrides anywhere in a name', () => {
    for (const [what, char] of Object.entries(NOT_PLAIN_SAMPLES)) {
      for (const name of [char, `a${char}`, `${char}b`, `a${char}b`]) {
        assert.equal(isPlainText(name), false, `${what} in ${JSON.stringify(name)}`);
      }
    }
  });
});

describe('printable', () => {
  test('writes each refused character as a \\u escape and leaves the rest', () => {
    assert.equal(printable('evil\u001b[2J\nkey_fake\tpro'), 'evil\\u001b[2J\\u000akey_fake\\u0009pro');
    assert.equal(printable('invoice\u202Efdp.exe'), 'invoice\\u202efdp.exe');
    assert.equal(printable('Zürich 📈'), 'Zürich 📈');
  });

  test('no string printed holds a character the rule refuses', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        assert.equal(isPlainText(printable(text)), true);
        if (isPlainText(text)) assert.equal(printable(text), text);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('printableJson', () => {
  test('holds no refused character and parses back to the same value', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ name: fc.string({ unit: 'binary' }) })), (value) => {
        const text = printableJson(value);
        assert.equal(isPlainText(text), true, text);
        assert.equal(JSON.stringify(JSON.parse(text)), JSON.stringify(value), 'the same value');
      }),
      { numRuns: 2000 },
    );
    assert.equal(printableJson({ name: 'a\u009bb\u2028' }), '{"name":"a\\u009bb\\u2028"}');
  });
});
