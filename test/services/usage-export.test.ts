/**
 * The billing export (docs/usage-history.md "Billing export") on SQLite and PostgreSQL: a known set
 * of requests on a fake clock gives exactly these CSV rows, CloudEvents and Stripe meter events;
 * exporting again gives the same ids; today's day is partial; a month that has not begun, or is not
 * a month, is refused.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ExportKey, exportRows, formatExport, monthSpan } from '../../src/services/usage-export.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { postgresSchemaUrl } from '../helpers/postgres.js';
import { describeOrSkip } from '../helpers/skip.js';

const probe = await postgresSchemaUrl();

for (const [engine, skip] of [
  ['sqlite', false],
  ['postgres', 'skip' in probe ? probe.skip : false],
] as const) {
  describeOrSkip(`the billing export on ${engine}`, { skip }, () => {
    let h: Harness;
    let acme: { key: string; id: string };
    let formula: { key: string; id: string };

    /** The export of `month` as `pricepoint usage export` makes it, at the fake clock's now. */
    async function exported(month: string, format: 'csv' | 'cloudevents' | 'stripe') {
      const span = monthSpan(month, h.clock.now);
      if (typeof span === 'string') throw new Error(span);
      const keys = new Map<string, ExportKey>(
        (await h.stores.keys.list()).map((k) => [
          k.id,
          { id: k.id, name: k.name, tier: k.tier, customerRef: null },
        ]),
      );
      const usage = h.services.usage;
      if (usage === undefined) throw new Error('no usage history');
      return formatExport(exportRows(await usage.keyDays(span.from, span.to), keys, h.clock.now), format);
    }

    async function requests(at: string, key: string, ok: number, notFound = 0) {
      h.clock.set(at);
      for (let n = 0; n < ok; n++) {
        assert.equal(
          (await h.app.inject({ url: '/api/v1/series', headers: { 'x-api-key': key } })).statusCode,
          200,
        );
      }
      for (let n = 0; n < notFound; n++) {
        const url = '/api/v1/prices/today?symbols=NOPE';
        assert.equal((await h.app.inject({ url, headers: { 'x-api-key': key } })).statusCode, 404);
      }
    }

    before(async () => {
      h = await createHarness({ engine, now: '2026-11-22T09:00:00Z' });
      acme = await h.createKey({ tier: 'pro', name: 'Acme, Inc.' });
      formula = await h.createKey({ tier: 'free', name: '=SUM(1+1)' });
      await requests('2026-10-31T23:59:59Z', acme.key, 1);
      await requests('2026-11-01T00:00:00Z', acme.key, 3, 1);
      await requests('2026-11-01T23:10:00Z', acme.key, 1);
      await requests('2026-11-02T12:00:00Z', formula.key, 2);
      await requests('2026-11-22T08:30:00Z', acme.key, 4);
    });
    after(() => h.close());

    test('CSV: one row per key and UTC day of the month, quoted and inert for a spreadsheet, today partial', async () => {
      const [first, second] = [acme.id, formula.id].sort();
      const rows: Record<string, string> = {
        [acme.id]: [
          `2026-11-01,${acme.id},"Acme, Inc.",pro,,5,5,4,0,0,1,false`,
          `2026-11-22,${acme.id},"Acme, Inc.",pro,,4,4,4,0,0,0,true`,
        ].join('\r\n'),
        [formula.id]: `2026-11-02,${formula.id},'=SUM(1+1),free,,2,2,2,0,0,0,false`,
      };
      assert.equal(
        await exported('2026-11', 'csv'),
        [
          'date,keyId,keyName,tier,customerRef,units,requests,served,notModified,rateLimited,clientErrors,partial',
          rows[first as string],
          rows[second as string],
          '',
        ].join('\r\n'),
      );
      assert.equal(
        await exported('2026-10', 'csv'),
        `date,keyId,keyName,tier,customerRef,units,requests,served,notModified,rateLimited,clientErrors,partial\r\n2026-10-31,${acme.id},"Acme, Inc.",pro,,1,1,1,0,0,0,false\r\n`,
      );
    });

    test('CloudEvents and Stripe meter events: exact lines, the same ids when exported again', async () => {
      const events = (await exported('2026-11', 'cloudevents')).trimEnd().split('\n');
      const mine = events.map((line) => JSON.parse(line)).filter((event) => event.subject === acme.id);
      assert.deepEqual(mine[0], {
        specversion: '1.0',
        type: 'pricepoint.usage.daily',
        source: 'pricepoint',
        id: `usage-${acme.id}-2026-11-01`,
        subject: acme.id,
        time: '2026-11-01T00:00:00Z',
        datacontenttype: 'application/json',
        data: {
          date: '2026-11-01',
          keyName: 'Acme, Inc.',
          tier: 'pro',
          customerRef: null,
          requests: 5,
          served: 4,
          notModified: 0,
          rateLimited: 0,
          clientErrors: 1,
          units: 5,
          partial: false,
        },
      });
      const stripe = (await exported('2026-11', 'stripe')).trimEnd().split('\n');
      const line = stripe.find((l) => l.includes(`${acme.id}-2026-11-22`));
      assert.equal(
        line,
        `{"event_name":"pricepoint_units","identifier":"pricepoint-${acme.id}-2026-11-22","timestamp":1795305600,"payload":{"stripe_customer_id":"${acme.id}","value":"4"},"partial":true}`,
      );
      // More of today, then the same export again: the same ids, today's value grown.
      await requests('2026-11-22T09:45:00Z', acme.key, 2);
      const again = (await exported('2026-11', 'stripe')).trimEnd().split('\n');
      const ids = (lines: string[]) => lines.map((l) => JSON.parse(l).identifier);
      assert.deepEqual(ids(again), ids(stripe));
      assert.match(
        again.find((l) => l.includes(`${acme.id}-2026-11-22`)) ?? '',
        /"value":"6"\},"partial":true/,
      );
      const cloudAgain = (await exported('2026-11', 'cloudevents')).trimEnd().split('\n');
      assert.deepEqual(
        cloudAgain.map((l) => JSON.parse(l).id),
        events.map((l) => JSON.parse(l).id),
      );
    });

    test('a month that has not begun, or is not a month, is refused with why', () => {
      const now = h.clock.now;
      assert.match(
        String(monthSpan('2026-12', now)),
        /2026-12 has not begun yet \(today is 2026-11-22 UTC\)/,
      );
      for (const bad of ['2026-13', '2026-1', '26-11', 'november', '1969-12', '2026-11-01']) {
        assert.match(String(monthSpan(bad, now)), /is not a month written YYYY-MM/, bad);
      }
      assert.deepEqual(monthSpan('2026-11', now), { from: Date.UTC(2026, 10, 1), to: Date.UTC(2026, 11, 1) });
    });
  });
}
