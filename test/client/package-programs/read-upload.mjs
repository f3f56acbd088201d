// Runs in a folder where the packed @pricepoint/client is installed: loaded with `import`, it reads
// today's prices, uploads a day of prices with an admin key and reads them back. Prints one JSON line.
import { PricepointClient, PricepointError } from '@pricepoint/client';

const { PRICEPOINT_URL: baseUrl, READ_KEY, ADMIN_KEY, SYMBOL } = process.env;
const reader = new PricepointClient({ baseUrl, apiKey: READ_KEY });
const admin = new PricepointClient({ baseUrl, apiKey: ADMIN_KEY });

const today = await reader.today({ symbols: ['NO1'] });
await admin.upsertSeries(SYMBOL, {
  name: 'Packed client, import',
  kind: 'fx',
  currency: 'EUR',
  unit: 'USD',
  timezone: 'UTC',
  resolution: 'PT1H',
});
const points = Array.from({ length: 24 }, (_, hour) => {
  const hh = String(hour).padStart(2, '0');
  return { start: `2026-01-15T${hh}:00:00Z`, price: `1.${hh}0` };
});
const uploaded = await admin.uploadPrices(SYMBOL, points);
const csv = await admin.day('2026-01-15', { symbols: [SYMBOL], format: 'csv' });
let refused;
try {
  await reader.uploadPrices(SYMBOL, points);
} catch (error) {
  refused = error instanceof PricepointError ? error.code : String(error);
}
console.log(
  JSON.stringify({
    resolved: import.meta.resolve('@pricepoint/client'),
    todayPrices: today.series[0]?.prices.length,
    uploaded,
    prices: csv
      .trim()
      .split(/\r?\n/)
      .slice(1)
      .map((row) => row.split(',')[4]),
    refused,
  }),
);
