// Compiled with `tsc --strict` where the packed @pricepoint/client is installed: the `import` types.
import { type DayAnswer, PricepointClient, type UploadResult } from '@pricepoint/client';

const client = new PricepointClient({ baseUrl: 'https://localhost:8443', apiKey: 'pp_test_x' });
export const today: Promise<DayAnswer> = client.today({ symbols: ['NO1'] });
export const price: Promise<number | undefined> = today.then((a) => a.series[0]?.prices[0]?.price);
export const upload: Promise<UploadResult> = client.uploadPrices('NO1', [
  { start: '2026-11-22T00:00:00Z', price: '41.270' },
]);
