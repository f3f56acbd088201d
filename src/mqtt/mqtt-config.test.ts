/** The `mqtt:` block of the config file (docs/mqtt.md "Configuring"): what it sets, and what it refuses by name. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../config/config.js';
import { configFiles, refuses } from '../config/config-fixtures.js';

const files = configFiles();

describe('the mqtt: block', () => {
  test('a full block: the broker, the series with their tariffs, the prefixes and the cheapest hours', () => {
    const path = files.write(
      [
        'mqtt:',
        '  url: mqtts://broker.example:8883',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own syntax
        '  username: ${MQTT_USER}',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own syntax
        '  password: ${MQTT_PASSWORD}',
        '  topicPrefix: home/prices',
        '  tariff: no1-household',
        '  series: [NO1, { symbol: de-lu }]',
        '  cheapestHours: [6, 1, 3]',
      ].join('\n'),
    );
    const config = loadConfig(
      { PRICEPOINT_CONFIG: path, MQTT_USER: 'ha', MQTT_PASSWORD: 'not-in-any-listing' },
      { devData: true, databasePath: ':memory:' },
    );
    const mqtt = config.mqtt;
    assert.ok(mqtt);
    assert.equal(mqtt.url, 'mqtts://broker.example:8883');
    assert.equal(mqtt.topicPrefix, 'home/prices');
    assert.equal(mqtt.discoveryPrefix, 'homeassistant');
    assert.equal(mqtt.discovery, true);
    assert.deepEqual(
      mqtt.series.map((s) => [s.symbol, s.tariff]),
      [
        ['NO1', 'no1-household'],
        ['DE-LU', 'no1-household'],
      ],
    );
    assert.deepEqual(mqtt.cheapestHours, [1, 3, 6]);
    assert.deepEqual(mqtt.credentials(), { username: 'ha', password: 'not-in-any-listing' });
    // The password exists only behind credentials(): a dump of the config shows the variable's name.
    assert.doesNotMatch(JSON.stringify(config), /not-in-any-listing/);
    assert.match(JSON.stringify(config.mqtt?.settings), /\$\{MQTT_PASSWORD\}/);
  });

  test('the defaults: prefix pricepoint, discovery under homeassistant, no cheapest-hours flags', () => {
    const path = files.write('mqtt: { url: "mqtt://127.0.0.1:1883", series: [NO1] }');
    const mqtt = loadConfig({ PRICEPOINT_CONFIG: path }).mqtt;
    assert.equal(mqtt?.topicPrefix, 'pricepoint');
    assert.equal(mqtt?.discoveryPrefix, 'homeassistant');
    assert.deepEqual(mqtt?.cheapestHours, []);
    assert.deepEqual(mqtt?.credentials(), {});
  });

  test('without the block nothing is published', () => {
    assert.equal(loadConfig({}).mqtt, undefined);
  });

  const refused: [string, string, RegExp][] = [
    [
      'a URL of another scheme',
      'url: http://broker:1883',
      /"mqtt\.url" must start with mqtt:\/\/ or mqtts:\/\//,
    ],
    ['credentials in the URL', 'url: mqtt://ha:secret@broker:1883', /"mqtt\.url" must not hold a username/],
    [
      'a password written in the file',
      'url: mqtt://b:1883\n  password: hunter2',
      /"mqtt\.password" must name an environment variable/,
    ],
    [
      'a password variable that is not set',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own syntax
      'url: mqtt://b:1883\n  password: ${NOT_SET_ANYWHERE}',
      /"mqtt\.password" names the environment variable NOT_SET_ANYWHERE/,
    ],
    [
      'a wildcard in the topic prefix',
      'url: mqtt://b:1883\n  topicPrefix: "prices/#"',
      /"mqtt\.topicPrefix"/,
    ],
    ['an unknown field', 'url: mqtt://b:1883\n  port: 1883', /"mqtt\.port" unexpected property/],
    ['an unknown tariff', 'url: mqtt://b:1883\n  tariff: nope', /"mqtt\.tariff" names no tariff/],
    [
      'a cheapest-hours count past a day',
      'url: mqtt://b:1883\n  cheapestHours: [25]',
      /"mqtt\.cheapestHours" must be a whole number of hours from 1 to 24/,
    ],
  ];
  for (const [what, entry, names] of refused) {
    test(`refuses ${what}, naming the setting`, () => {
      const path = files.write(`mqtt:\n  ${entry}\n  series: [NO1]`);
      refuses({ PRICEPOINT_CONFIG: path }, names);
    });
  }

  test('refuses a series named twice and a tariff a series names that there is not', () => {
    refuses(
      { PRICEPOINT_CONFIG: files.write('mqtt: { url: "mqtt://b", series: [NO1, no1] }') },
      /"mqtt\.series\.1" names NO1 twice/,
    );
    refuses(
      {
        PRICEPOINT_CONFIG: files.write('mqtt: { url: "mqtt://b", series: [{ symbol: NO1, tariff: gone }] }'),
      },
      /"mqtt\.series\.0\.tariff" names no tariff/,
    );
  });
});
