/**
 * Skipping a whole suite so that the summary counts it. Node 20 prints a skipped `describe` as
 * `# SKIP` but leaves it out of the summary's `skipped` count, so a run that skipped the nginx or
 * PostgreSQL suites ended with `skipped 0`. Where `skip` holds a reason, one test named after the
 * suite is registered as skipped instead: the summary counts it and prints the reason.
 *
 * @example describeOrSkip('on PostgreSQL', { skip: await postgresSkipReason() }, () => { ... })
 */
import { describe, type SuiteFn, type TestOptions, test } from 'node:test';

export function describeOrSkip(name: string, options: TestOptions, fn: SuiteFn): void {
  if (options.skip !== undefined && options.skip !== false) {
    test(name, { skip: options.skip }, () => {});
    return;
  }
  describe(name, options, fn);
}
