/**
 * `pricepoint mcp`: an MCP server over stdio for desktop agents (docs/mcp.md). It holds no stores:
 * each tool call is a request to a running Pricepoint at `PRICEPOINT_URL` with the key in
 * `PRICEPOINT_API_KEY` (the clients' own variables, docs/settings.md), so the server counts and
 * limits it like any call with that key. Stdout carries the protocol and nothing else.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { type Command, Option } from 'commander';
import type { ClientEnvironment } from '../config/environment.js';
import { createMcpServer } from '../mcp/tools.js';
import { CliError } from './cli-error.js';

/** The API a desktop client reaches when `PRICEPOINT_URL` is not set: `npm start`'s. */
const DEFAULT_URL = 'https://localhost:8443';

export function registerMcpCommand(program: Command, deps: { client: () => ClientEnvironment }): void {
  program
    .command('mcp')
    .description(
      'an MCP server over stdio whose tools call the API at PRICEPOINT_URL with the key in PRICEPOINT_API_KEY',
    )
    // Stdout is the protocol's: with --json only a refusal to start is printed, as JSON, on stderr.
    .addOption(new Option('--json', 'print a refusal to start as JSON on stderr'))
    .action(async () => {
      const { url, apiKey: key } = deps.client();
      if (key === undefined) {
        throw new CliError(
          'missing_api_key',
          'PRICEPOINT_API_KEY must hold the key the tools call the API with',
          2,
        );
      }
      const base = url ?? DEFAULT_URL;
      let origin: URL;
      try {
        origin = new URL(base);
      } catch {
        throw new CliError(
          'invalid_setting',
          `PRICEPOINT_URL: "${base}" is not a URL such as ${DEFAULT_URL}`,
          2,
        );
      }
      const server = createMcpServer(async (pathAndQuery) => {
        try {
          // The key in a header, never in the URL (docs/keys-and-tiers.md).
          const response = await fetch(new URL(pathAndQuery, origin), {
            headers: { 'x-api-key': key, accept: 'application/json' },
          });
          return { status: response.status, body: await response.text() };
        } catch (error) {
          // The tool's error says what went wrong in the problem shape the API uses for 503.
          const cause = (error as { cause?: Error }).cause?.message ?? (error as Error).message;
          const detail = `Pricepoint at ${origin.origin} could not be reached: ${cause}`;
          return {
            status: 503,
            body: JSON.stringify({
              title: 'Service unavailable',
              status: 503,
              code: 'service_unavailable',
              detail,
            }),
          };
        }
      });
      await server.connect(new StdioServerTransport());
    });
}
