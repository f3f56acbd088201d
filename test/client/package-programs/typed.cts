// Compiled with `tsc --strict` where the packed @pricepoint/client is installed: the `require` types.
import pricepoint = require('@pricepoint/client');

const client = new pricepoint.PricepointClient({ baseUrl: 'https://localhost:8443', apiKey: 'pp_test_x' });
const keys: Promise<pricepoint.KeyInfo[]> = client.listKeys();
const isNotFound = (error: unknown): boolean =>
  error instanceof pricepoint.PricepointError && error.status === 404;
export = { keys, isNotFound };
