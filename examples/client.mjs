// Today's prices, hourly, with the TypeScript client. Run: PRICEPOINT_URL=https://localhost:8443 \
// PRICEPOINT_API_KEY=pp_demo_TryPricepointDemo2026x1pqsyk \
// NODE_EXTRA_CA_CERTS=.pricepoint/tls/localhost-cert.pem node examples/client.mjs
import { PricepointClient, PricepointError } from '@pricepoint/client';

const client = new PricepointClient({
  baseUrl: process.env.PRICEPOINT_URL ?? 'https://localhost:8443',
  apiKey: process.env.PRICEPOINT_API_KEY, // sent as x-api-key, never in a URL
});

const { series } = await client.today({ symbols: ['NO1'], resolution: 'PT1H' });
for (const { start, price } of series[0].prices) console.log(start, price);

try {
  await client.day('yesterday', { symbols: ['NOPE'] });
} catch (error) {
  if (!(error instanceof PricepointError)) throw error;
  console.log(error.status, error.code, error.problem.detail); // 404 unknown_series Unknown series: NOPE.
}
console.log('requests left this minute:', client.lastRateLimit?.remaining);
