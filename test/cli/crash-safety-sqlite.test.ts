/**
 * Crash safety on SQLite: a server and `pricepoint import` killed with SIGKILL in ten imports, and
 * after each restart the import whole or absent, and everything else intact. The plan is in
 * crash-safety-plan.ts.
 */
import { before, describe, test } from 'node:test';
import { cleanUpAfterwards, type Deployment, deploy } from './crash-safety-deployment.js';
import { CLI_KILLS, HTTP_KILLS } from './crash-safety-plan.js';
import { sqliteEngine } from './crash-safety-sqlite-site.js';
import { cliKill, httpControl, httpKill, httpRefused } from './crash-safety-steps.js';

cleanUpAfterwards();

describe(`crash safety on ${sqliteEngine.name}: one deployment killed in ten imports`, () => {
  let d: Deployment;
  before(async () => {
    d = await deploy(sqliteEngine);
  });

  test('the server, right after it answered a whole HTTP import: the import stays whole', (t) =>
    httpControl(t, d));
  test('the server, right after it refused an HTTP import for its last row: nothing of it is stored', (t) =>
    httpRefused(t, d));
  for (const kill of HTTP_KILLS) {
    test(`the server, in an HTTP import ${kill.name}: whole or nothing, the rest intact`, (t) =>
      httpKill(t, d, kill));
  }
  for (const kill of CLI_KILLS) {
    test(`pricepoint import and the server, ${kill.name}: whole or nothing, the rest intact`, (t) =>
      cliKill(t, d, kill));
  }
});
