import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clientEnvironment, namesOneVariable, substituteVariables } from './environment.js';

const unset = (variable: string) => new Error(`${variable} is not set`);
/** `${NAME}`, as a config file writes a variable. */
const ref = (name: string) => `\${${name}}`;

test('every variable a text names is replaced by its value, and each value is shown to the caller', () => {
  const seen: string[] = [];
  const text = substituteVariables(
    `https://${ref('USER_NAME')}:${ref('TOKEN')}@example.test/${ref('TOKEN')}`,
    { USER_NAME: 'ops', TOKEN: 's3cret' },
    unset,
    (value) => seen.push(value),
  );
  assert.equal(text, 'https://ops:s3cret@example.test/s3cret');
  assert.deepEqual(seen, ['ops', 's3cret', 's3cret']);
  assert.equal(substituteVariables('no variables, $HOME or {X}', {}, unset), 'no variables, $HOME or {X}');
});

test('an unset or empty variable stops with the caller error naming it, never with a value', () => {
  assert.throws(
    () => substituteVariables(ref('MISSING'), { OTHER: 'x' }, unset),
    /^Error: MISSING is not set$/,
  );
  assert.throws(
    () => substituteVariables(`a${ref('EMPTY')}b`, { EMPTY: '' }, unset),
    /^Error: EMPTY is not set$/,
  );
});

test('a secret must be written as one variable and nothing else', () => {
  assert.equal(namesOneVariable(ref('ENTSOE_TOKEN')), true);
  for (const text of ['hunter2', ref('A') + ref('B'), `x${ref('A')}`, ref('1A'), '$A', ref('A-B'), '']) {
    assert.equal(namesOneVariable(text), false, text);
  }
});

test('the clients read PRICEPOINT_URL and PRICEPOINT_API_KEY; empty counts as unset', () => {
  assert.deepEqual(
    clientEnvironment({ PRICEPOINT_URL: 'https://api.example.test', PRICEPOINT_API_KEY: 'pp_live_x' }),
    { url: 'https://api.example.test', apiKey: 'pp_live_x' },
  );
  assert.deepEqual(clientEnvironment({ PRICEPOINT_URL: '', PRICEPOINT_API_KEY: '' }), {
    url: undefined,
    apiKey: undefined,
  });
  assert.deepEqual(clientEnvironment({}), { url: undefined, apiKey: undefined });
});
