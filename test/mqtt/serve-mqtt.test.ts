/**
 * `pricepoint serve` with an `mqtt:` block (docs/mqtt.md): the server publishes to a real Mosquitto
 * broker from its start, logs in with the password from the environment without ever writing it,
 * and says `offline` when SIGTERM stops it.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { cleanUp, startServer, tempDir } from '../helpers/process.js';
import { describeOrSkip } from '../helpers/skip.js';
import { type Broker, mosquittoSkipReason, startBroker, subscribe } from './broker.js';

const PASSWORD = 'mqtt-password-never-logged';

describeOrSkip('pricepoint serve publishes to MQTT', { skip: mosquittoSkipReason() }, () => {
  let broker: Broker;
  before(async () => {
    broker = await startBroker();
  });
  after(async () => {
    await cleanUp();
    await broker?.stop();
  });

  test('from its start, with discovery, and offline after SIGTERM', async () => {
    const dir = await tempDir('pricepoint-mqtt-');
    const config = join(dir, 'pricepoint.yaml');
    await writeFile(
      config,
      [
        'mqtt:',
        `  url: ${broker.url}`,
        '  username: pricepoint',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own syntax
        '  password: ${MQTT_TEST_PASSWORD}',
        '  topicPrefix: serve-test',
        '  discoveryPrefix: serve-test-ha',
        '  series: [{ symbol: NO1, tariff: no1-household }]',
        '  cheapestHours: 3',
      ].join('\n'),
    );
    const sub = await subscribe(broker.url, ['serve-test', 'serve-test-ha']);
    try {
      const server = await startServer(['serve', '--dev-data'], {
        PRICEPOINT_CONFIG: config,
        PRICEPOINT_DATA_DIR: join(dir, 'data'),
        MQTT_TEST_PASSWORD: PASSWORD,
      });
      assert.equal(await sub.until('serve-test/status', (p) => p === 'online'), 'online');
      assert.match(await sub.until('serve-test/NO1/total'), /^\d+(\.\d+)?$/);
      assert.match(await sub.until('serve-test/NO1/cheapest/3'), /^(ON|OFF)$/);
      const discovered = JSON.parse(await sub.until('serve-test-ha/sensor/serve-test_no1/total/config'));
      assert.equal(discovered.unit_of_measurement, 'NOK/kWh');
      const output = await server.stop();
      assert.equal(output.code, 0);
      assert.equal(await sub.until('serve-test/status', (p) => p === 'offline'), 'offline');
      assert.doesNotMatch(output.stdout + output.stderr, new RegExp(PASSWORD));
    } finally {
      await sub.close();
    }
  });
});
