/**
 * Open sign-up (docs/invitations.md "Open sign-up"): off unless the config file's `signup:` names one
 * tier; then anyone may make a key of that tier, so many per client address and window.
 */
export interface SignupRules {
  /** The one tier sign-up makes keys in. */
  readonly tier: string;
  readonly scopes: readonly ('read' | 'write' | 'admin')[];
  /** Keys one client address (IPv6 by /64) may make per fixed window. */
  readonly perAddress: { readonly limit: number; readonly windowSeconds: number };
  /** How long each key lives (ms); `null`: until revoked. */
  readonly keyExpiresInMs: number | null;
}

/** What sign-up allows per address when `perAddress` is left out: three keys a day. */
export const DEFAULT_SIGNUP_PER_ADDRESS = { limit: 3, windowSeconds: 86_400 } as const;
