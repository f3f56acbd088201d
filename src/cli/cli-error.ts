/**
 * What a command tells the operator when it cannot do what was asked: a code for `--json`, a
 * message for the terminal and the exit status. Not the API's problem type: a command line has no
 * HTTP status, and its messages name options (`--scopes`), not query parameters.
 */
export class CliError extends Error {
  override name = 'CliError';
  /**
   * @example throw new CliError('invalid_option', '--grace: "soon" is not a duration such as 30s')
   */
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
