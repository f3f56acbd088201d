/**
 * docs/integrations.md's configs, read from the page and run against a server: each tool's request
 * as its config makes it, and our answer parsed the way that tool's own source parses it (evcc's
 * `api.Rates` and `Rates.At`, Home Assistant's REST sensor, EMHASS's runtime lists, a Shelly script
 * in a sandbox that plays Shelly's `HTTP.Request`, `Switch.Set` and `Timer.set`). A quarter-hour NOK
 * series in Oslo, cheap from 02:00 to 06:00 on 2026-11-24, and the page's household tariff per kWh.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createContext, runInContext } from 'node:vm';
import { parse } from 'yaml';
import { parseTariffs } from '../../src/domain/money/tariff-config.js';
import { dayBounds, formatInstant } from '../../src/domain/time/days.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const ZONE = 'Europe/Oslo';
const PAGE = readFileSync(new URL('../../docs/integrations.md', import.meta.url), 'utf8');
const ORIGIN = 'https://pricepoint.example';

/** The one fenced block of `language` in the page's section `heading`. */
function block(heading: string, language: string): string {
  const section = PAGE.split(/^## /m).find((s) => s.startsWith(`${heading}\n`));
  assert.ok(section, `docs/integrations.md has a section "${heading}"`);
  const blocks = [...section.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))];
  assert.equal(blocks.length, 1, `one ${language} block under "${heading}"`);
  return (blocks[0] as RegExpMatchArray)[1] as string;
}

/** Go's time.Time.UnmarshalJSON takes RFC 3339 only: a date, `T`, a time and an offset or Z. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

interface Rate {
  start: number;
  end: number;
  value: number;
}

/**
 * What evcc's custom tariff does with the forecast's text (tariff/tariff.go, api/rates.go):
 * `json.Unmarshal` into `api.Rates` (a list of {start, end: time.Time; value: float64}), which
 * fails on anything else, then the rate whose [start, end) holds the time asked.
 */
function evccRates(text: string): Rate[] {
  const data: unknown = JSON.parse(text);
  assert.ok(Array.isArray(data), 'api.Rates is a JSON array');
  return data.map((r: Record<string, unknown>) => {
    assert.equal(typeof r.start, 'string');
    assert.equal(typeof r.end, 'string');
    assert.match(r.start as string, RFC3339);
    assert.match(r.end as string, RFC3339);
    assert.equal(typeof r.value, 'number', 'value is a float64: a JSON number, not a string');
    return {
      start: Date.parse(r.start as string),
      end: Date.parse(r.end as string),
      value: r.value as number,
    };
  });
}
function evccAt(rates: readonly Rate[], ts: number): Rate | undefined {
  const sorted = [...rates].sort((a, b) => a.start - b.start);
  return sorted.find((r) => !(ts < r.start) && ts < r.end);
}

/** Home Assistant's entity id of a sensor's name: lower case, runs of other characters as `_`. */
const entityId = (name: string) => `sensor.${name.toLowerCase().replace(/[^a-z0-9]+/g, '_')}`;

describe('docs/integrations.md, as each tool reads it', () => {
  let h: Harness;
  let key: string;
  /** A GET of `url` (the page's origin) with `headers` (the page's placeholder key replaced). */
  const fetchAs = (url: string, headers: Record<string, string>) => {
    assert.ok(url.startsWith(`${ORIGIN}/`), url);
    const sent = Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [name, value.replace('YOUR_KEY', key)]),
    );
    return h.app.inject({ url: url.slice(ORIGIN.length), headers: sent });
  };

  before(async () => {
    h = await createHarness({
      devData: false,
      now: '2026-11-24T20:14:20Z',
      config: {
        tariffs: parseTariffs({
          household: {
            currency: 'NOK',
            unit: 'kWh',
            vat: [{ from: '2026-01-01', percent: 25 }],
            fixed: [{ from: '2026-01-01', amount: '0.0713' }],
            fees: [
              {
                from: '2026-01-01',
                rules: [{ hours: '06:00-22:00', amount: '0.3640' }, { amount: '0.2640' }],
              },
            ],
          },
        }),
      },
    });
    const admin = (await h.createKey({ tier: 'enterprise', scopes: ['admin'] })).key;
    key = (await h.createKey({ tier: 'free', scopes: ['read'] })).key;
    const created = await h.app.inject({
      method: 'PUT',
      url: '/api/v1/series/NO1',
      headers: { 'x-api-key': admin, 'content-type': 'application/json' },
      payload: {
        name: 'Oslo',
        kind: 'electricity',
        currency: 'NOK',
        unit: 'MWh',
        timezone: ZONE,
        resolution: 'PT15M',
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const points = ['2026-11-24', '2026-11-25'].flatMap((date) => {
      const { start, end } = dayBounds(date, ZONE);
      const out = [];
      for (let t = start, i = 0; t < end; t += 900_000, i++) {
        // 02:00 to 06:00 (quarters 8 to 23) at 1 to 16 NOK/MWh, the rest 500 and up.
        const price = i >= 8 && i < 24 ? String(i - 7) : String(500 + (i % 9) * 25);
        out.push({ symbol: 'NO1', start: formatInstant(t, ZONE), price });
      }
      return out;
    });
    await h.importPoints(points);
  });
  after(() => h.close());

  /** The total per kWh now under the household tariff, from /prices/now (`more`: its other parameters). */
  const totalNow = async (more = '') => {
    const now = await h.app.inject({
      url: `/api/v1/prices/now?symbols=NO1&tariff=household${more}`,
      headers: { 'x-api-key': key },
    });
    assert.equal(now.statusCode, 200, now.body);
    return now.json() as { price: number; start: string };
  };

  test("evcc: the custom tariff's forecast parses as api.Rates and holds now's total", async () => {
    h.clock.set('2026-11-24T20:14:20Z');
    const config = parse(block('evcc', 'yaml')) as {
      tariffs: { currency: string; grid: { type: string; forecast: Record<string, unknown> } };
    };
    assert.equal(config.tariffs.currency, 'NOK');
    assert.equal(config.tariffs.grid.type, 'custom');
    const forecast = config.tariffs.grid.forecast;
    assert.equal(forecast.source, 'http');
    // evcc's http plugin takes headers as a map (a list of one-entry maps decodes to the same).
    const headers = Object.assign({}, ...[forecast.headers].flat()) as Record<string, string>;
    const response = await fetchAs(forecast.uri as string, headers);
    assert.equal(response.statusCode, 200, response.body);
    const rates = evccRates(response.body);
    const now = await totalNow();
    assert.equal(evccAt(rates, h.clock.now)?.value, now.price);
    assert.equal(
      evccAt(rates, Date.parse('2026-11-25T23:59:00+01:00'))?.end,
      Date.parse('2026-11-26T00:00:00+01:00'),
    );
    assert.equal(evccAt(rates, Date.parse('2026-11-24T20:00:00+01:00')), undefined, 'nothing before now');
  });

  test('Home Assistant: the REST sensor is the price now, with the list as attributes', async () => {
    h.clock.set('2026-11-24T20:14:20Z');
    const config = parse(block('Home Assistant', 'yaml')) as {
      rest: { resource: string; headers: Record<string, string>; sensor: Record<string, unknown>[] }[];
    };
    const rest = config.rest[0];
    assert.ok(rest);
    const sensor = rest.sensor[0] as {
      name: string;
      value_template: string;
      json_attributes_path: string;
      json_attributes: string[];
      unit_of_measurement: string;
    };
    const response = await fetchAs(rest.resource, rest.headers);
    assert.equal(response.statusCode, 200, response.body);
    // rest/sensor.py: value_json is the parsed body; json_attributes_path picks the object (JSONPath
    // `$` is the root), and each name in json_attributes that it holds becomes an attribute.
    const valueJson = JSON.parse(response.body) as Record<string, unknown>;
    assert.equal(sensor.json_attributes_path, '$');
    const attributes = Object.fromEntries(
      sensor.json_attributes.filter((name) => name in valueJson).map((name) => [name, valueJson[name]]),
    );
    assert.deepEqual(Object.keys(attributes), ['prices', 'values']);
    const field = /^\{\{ value_json\.(\w+) \}\}$/.exec(sensor.value_template)?.[1];
    assert.ok(field, 'the template reads one member of value_json');
    const state = valueJson[field];
    // A sensor with a unit needs a number; the recorder leaves out attributes over 16 KiB.
    assert.equal(typeof state, 'number');
    // The resource asks half hours (EMHASS's step, below): the state is the half hour's mean total.
    assert.equal(state, (await totalNow('&resolution=PT30M')).price);
    assert.equal(sensor.unit_of_measurement, `${valueJson.currency}/${valueJson.unit}`);
    assert.ok(JSON.stringify(attributes).length < 16_384, 'attributes fit the recorder');
  });

  test("EMHASS: the rest_command hands it the sensor's values, one per 30-minute step from now", async () => {
    h.clock.set('2026-11-24T20:14:20Z');
    const ha = parse(block('Home Assistant', 'yaml')) as {
      rest: { resource: string; headers: Record<string, string>; sensor: { name: string }[] }[];
    };
    const rest = ha.rest[0];
    assert.ok(rest);
    const sensorId = entityId(rest.sensor[0]?.name ?? '');
    const answer = (await fetchAs(rest.resource, rest.headers)).json() as {
      resolution: string;
      prices: { start: string; end: string }[];
      values: number[];
    };
    const config = parse(block('EMHASS', 'yaml')) as {
      rest_command: { emhass_mpc: { url: string; method: string; payload: string } };
    };
    const command = config.rest_command.emhass_mpc;
    assert.match(command.url, /\/action\/naive-mpc-optim$/);
    // Home Assistant renders the template: the attribute (a list) as its text, `| length` as a count.
    const attribute = `state_attr('${sensorId}', 'values')`;
    assert.ok(command.payload.includes(attribute), `the payload reads ${attribute}`);
    const rendered = command.payload
      .replaceAll(`{{ ${attribute} | length }}`, String(answer.values.length))
      .replaceAll(`{{ ${attribute} }}`, `[${answer.values.join(', ')}]`);
    assert.doesNotMatch(rendered, /\{\{/);
    const runtime = JSON.parse(rendered) as { load_cost_forecast: unknown; prediction_horizon: number };
    // EMHASS takes a list of numbers at least prediction_horizon long, one per optimisation step.
    assert.ok(Array.isArray(runtime.load_cost_forecast));
    assert.ok(runtime.load_cost_forecast.every((v) => typeof v === 'number'));
    assert.ok(runtime.load_cost_forecast.length >= runtime.prediction_horizon);
    assert.equal(answer.resolution, 'PT30M');
    for (const p of answer.prices) assert.equal(Date.parse(p.end) - Date.parse(p.start), 1_800_000);
    assert.ok(Date.parse(answer.prices[0]?.start ?? '') <= h.clock.now);
    // 21:00 to midnight in half hours, then tomorrow's 48.
    assert.equal(runtime.prediction_horizon, 6 + 48);
  });

  describe('Shelly: the script switches the relay', () => {
    /** Runs the page's script in a sandbox playing Shelly's API; resolves with the Switch.Set calls. */
    async function runScript(at: string) {
      h.clock.set(at);
      const switched: { id: number; on: boolean }[] = [];
      const timers: { ms: number; repeat: boolean }[] = [];
      const pending: Promise<void>[] = [];
      const Shelly = {
        call(method: string, params: Record<string, unknown>, callback?: (...args: unknown[]) => void) {
          if (method === 'Switch.Set') {
            // Copied out of the sandbox's realm, so that it compares as a plain object here.
            switched.push(JSON.parse(JSON.stringify(params)) as { id: number; on: boolean });
            return;
          }
          // HTTP.Request: { method, url, headers, timeout } -> (result { code, message, headers, body }, error_code, error_message)
          assert.equal(method, 'HTTP.Request');
          assert.equal(params.method, 'GET');
          pending.push(
            fetchAs(params.url as string, params.headers as Record<string, string>).then((r) => {
              callback?.(
                { code: r.statusCode, message: r.statusMessage, headers: r.headers, body: r.body },
                0,
                '',
              );
            }),
          );
        },
      };
      const sandbox = {
        Shelly,
        Timer: { set: (ms: number, repeat: boolean) => timers.push({ ms, repeat }) },
        print: () => {},
      };
      runInContext(block('Shelly', 'js'), createContext(sandbox));
      await Promise.all(pending);
      assert.deepEqual(timers, [{ ms: 300_000, repeat: true }]);
      return switched;
    }

    test("on among today's 4 cheapest hours", async () => {
      assert.deepEqual(await runScript('2026-11-24T02:30:00Z'), [{ id: 0, on: true }]); // 03:30 in Oslo
    });
    test('off outside them', async () => {
      assert.deepEqual(await runScript('2026-11-24T20:14:20Z'), [{ id: 0, on: false }]);
    });
    test('left alone when no price is published for now', async () => {
      assert.deepEqual(await runScript('2026-11-27T10:00:00Z'), []);
    });
  });
});
