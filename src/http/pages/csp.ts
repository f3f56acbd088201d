/**
 * The security headers of the pages Pricepoint serves itself (`/console`, `/portal`; docs/console.md).
 * An admin key is typed into these pages, so they may run only this server's scripts and styles, send
 * requests only to this server, and be framed by no one: a key can go nowhere else.
 */

/**
 * The pages' Content-Security-Policy. Nothing inline: no script or style in the HTML, no `style`
 * attributes (styles set from script through the CSSOM, as uPlot sizes its canvas, are not inline
 * and need no allowance). `data:` images: uPlot draws into canvases and needs none, but a page may
 * show a small icon without another request.
 */
export const PAGE_CSP: Readonly<Record<string, string>> = {
  'default-src': "'none'",
  'script-src': "'self'",
  'style-src': "'self'",
  'img-src': "'self' data:",
  'connect-src': "'self'",
  'font-src': "'self'",
  'base-uri': "'none'",
  'form-action': "'self'",
  'frame-ancestors': "'none'",
};

/** `PAGE_CSP` as one header value. */
export function cspValue(policy: Readonly<Record<string, string>> = PAGE_CSP): string {
  return Object.entries(policy)
    .map(([directive, sources]) => `${directive} ${sources}`)
    .join('; ');
}

/** The headers of every page and every file a page loads (nosniff comes with every answer already). */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': cspValue(),
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};
