/**
 * The MCP tools (docs/mcp.md): each one is one read of the HTTP API, made with the caller's key, so
 * a tool call is authenticated, weighed, counted and limited exactly like that API call. Their input
 * schemas are the routes' own query schemas (without `format`: a tool answers JSON), so they cannot
 * drift from what the API accepts, and the API alone judges the arguments: a bad one comes back as
 * its problem+json, as the tool's error result.
 */
import { readFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { type TObject, type TProperties, Type } from '@sinclair/typebox';
import { ReadQueryFields } from '../http/contract/read-query.js';
import { CheapestQuerySchema } from '../http/routes/cheapest.js';
import { DateParams, DayQuerySchema, RangeQuerySchema } from '../http/routes/prices.js';

/** package.json sits two folders up from src/mcp and from dist/mcp. */
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** What the API answered one call: its status and body, as sent. */
export interface ApiAnswer {
  readonly status: number;
  readonly body: string;
}

/** Makes one GET of the API (path and query string) with the caller's key. */
export type CallApi = (pathAndQuery: string) => Promise<ApiAnswer>;

interface ToolSpec {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: TObject;
  /** The path of the API call; what it does not take goes into the query string. */
  readonly path: (args: Record<string, unknown>) => { path: string; taken: readonly string[] };
}

/** A query schema without `format`: a tool always answers JSON. */
function withoutFormat(properties: TProperties, extra: TProperties = {}): TObject {
  const { format: _format, ...rest } = properties;
  return Type.Object({ ...extra, ...rest }, { additionalProperties: false });
}

/** The tools, in the order a client lists them. */
export const TOOLS: readonly ToolSpec[] = [
  {
    name: 'list_series',
    title: 'The catalogue',
    description:
      'The series this key may read (GET /api/v1/series): symbol, name, kind, currency, unit, time zone, resolution and the first and last date with prices.',
    inputSchema: withoutFormat(ReadQueryFields),
    path: () => ({ path: '/api/v1/series', taken: [] }),
  },
  {
    name: 'get_prices_for_day',
    title: 'Prices of one day',
    description:
      'Every interval of one day (GET /api/v1/prices/{date}): date is YYYY-MM-DD, today, tomorrow or yesterday. Optional currency and unit conversion, a tariff (total with spot, fees and vat), include=rank (rank and level of each interval in its day), a coarser resolution, a time zone.',
    inputSchema: withoutFormat(DayQuerySchema.properties, { date: DateParams.properties.date }),
    path: (args) => ({ path: `/api/v1/prices/${encodeURIComponent(text(args.date))}`, taken: ['date'] }),
  },
  {
    name: 'get_price_range',
    title: 'Prices of a range of days',
    description:
      'Days from `from` to `to`, inclusive, at most 366 (GET /api/v1/prices): one entry per series and day. Takes the same conversion, tariff, include and resolution as one day; a long range weighs more against the rate limit.',
    inputSchema: withoutFormat(RangeQuerySchema.properties),
    path: () => ({ path: '/api/v1/prices', taken: [] }),
  },
  {
    name: 'get_latest_prices',
    title: 'The current price',
    description:
      'Per series, the interval that contains now, or else the last one before now (GET /api/v1/prices/latest).',
    inputSchema: withoutFormat(DayQuerySchema.properties),
    path: () => ({ path: '/api/v1/prices/latest', taken: [] }),
  },
  {
    name: 'find_cheapest_window',
    title: 'The cheapest window',
    description:
      'The cheapest contiguous window of `duration` between `from` and `to` (start, end, mean, prices), or with contiguous=false the `count` cheapest intervals (GET /api/v1/prices/cheapest); a window not yet fully published says so.',
    inputSchema: withoutFormat(CheapestQuerySchema.properties),
    path: () => ({ path: '/api/v1/prices/cheapest', taken: [] }),
  },
];

/** An argument as a query value: lists joined by commas (`symbols: ["NO1", "DE-LU"]`), the rest as text. */
function text(value: unknown): string {
  if (Array.isArray(value)) return value.map(text).join(',');
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * The path and query string of a tool's API call.
 * @example apiPath('get_prices_for_day', { date: 'today', symbols: 'NO1' }) // '/api/v1/prices/today?symbols=NO1'
 */
export function apiPath(tool: ToolSpec, args: Record<string, unknown>): string {
  const { path, taken } = tool.path(args);
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(args)) {
    if (!taken.includes(name) && value !== undefined) query.append(name, text(value));
  }
  const search = query.toString();
  return search === '' ? path : `${path}?${search}`;
}

/**
 * An MCP server whose tools call the API through `callApi`: the stdio command with `fetch` against
 * a running Pricepoint, the `/mcp` route with the app itself.
 */
export function createMcpServer(callApi: CallApi): Server {
  const server = new Server({ name: 'pricepoint', version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map(({ name, title, description, inputSchema }) => ({
      name,
      title,
      description,
      // TypeBox schemas are JSON Schema; the round trip drops TypeBox's own symbol keys.
      inputSchema: JSON.parse(JSON.stringify(inputSchema)),
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = TOOLS.find((t) => t.name === request.params.name);
    if (tool === undefined) {
      return {
        content: [{ type: 'text', text: `Unknown tool ${request.params.name}; tools/list names them.` }],
        isError: true,
      };
    }
    const answer = await callApi(apiPath(tool, request.params.arguments ?? {}));
    // An error is the API's problem+json as it was sent: code, detail and the parameter it names.
    return { content: [{ type: 'text', text: answer.body }], isError: answer.status >= 400 };
  });
  return server;
}
