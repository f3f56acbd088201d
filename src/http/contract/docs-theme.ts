/**
 * What makes `/docs` Pricepoint's page rather than a stock swagger-ui: the page title, the top bar's
 * logo (named for screen readers), a favicon and a few colours (@fastify/swagger-ui's `logo` and `theme` options). Every part
 * is served by this server as a file or a `data:` image, so the page's Content-Security-Policy needs
 * no new source and no hash.
 */

/** The rising price line used as the logo's mark and as the favicon. */
const MARK = `<rect width="40" height="40" rx="8" fill="#0f766e"/>
<polyline points="7,29 15,21 21,25 33,11" fill="none" stroke="#fff" stroke-width="4" stroke-linecap="round" stroke-linejoin="round"/>`;

/**
 * The top bar's logo, drawn with its name: swagger-ui shows it as an `<img>` of 40 pixels height
 * (a `data:` URL, which `img-src` allows), in place of swagger-ui's own.
 */
export const DOCS_LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40" viewBox="0 0 200 40" role="img" aria-label="Pricepoint">
<title>Pricepoint</title>
${MARK}
<text x="50" y="28" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="22" font-weight="bold" fill="#fff">Pricepoint</text>
</svg>`;

export const DOCS_FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40" viewBox="0 0 40 40">
${MARK}
</svg>`;

/** Loaded as a stylesheet of this server (`style-src 'self'`), after swagger-ui's own. */
export const DOCS_CSS = `
.swagger-ui .topbar { background-color: #134e4a; }
.swagger-ui .topbar .download-url-wrapper .select-label { color: #f0fdfa; }
.swagger-ui .topbar .download-url-wrapper .select-label select { border-color: #0f766e; }
.swagger-ui .info .title { color: #134e4a; }
`.trim();

export const DOCS_TITLE = 'Pricepoint API reference';

/**
 * The page's own script, a file of this server (`script-src 'self'`) loaded after the plugin's:
 * names the logo for screen readers (@fastify/swagger-ui puts it in as an `<img>` without `alt`),
 * and, with `demoKey`, adds to the description the demo key and how to paste it, right after
 * "Trying it here". Both wait until swagger-ui has drawn the page. The key is written as text.
 */
export function docsScript(demoKey?: string): string {
  const note =
    demoKey === undefined
      ? ''
      : `
const demoKey = ${JSON.stringify(demoKey)};
function addDemoKey(description) {
  const note = document.createElement('p');
  note.className = 'pricepoint-demo-key';
  const lead = document.createElement('strong');
  lead.textContent = 'The demo key.';
  const key = document.createElement('code');
  key.textContent = demoKey;
  const button = document.createElement('strong');
  button.textContent = 'Authorize';
  note.append(lead, ' This server has the development data set loaded, so you can try every read here at once with the demo key ', key, ' (tier demo; GET /api/v1/usage shows its limits). Press ', button, ', paste it into apiKey, press Authorize, then Close.');
  const trying = [...description.querySelectorAll('p')].find((p) => p.textContent.startsWith('Trying it here.'));
  if (trying) trying.after(note);
  else description.append(note);
}`;
  return `${note}
let named = false;
let noted = ${demoKey === undefined};
new MutationObserver((_changes, observer) => {
  const logo = document.querySelector('#swagger-ui .topbar a.link img');
  if (!named && logo !== null) {
    logo.alt = 'Pricepoint';
    named = true;
  }
  const description = document.querySelector('#swagger-ui .info .description');
  if (!noted && description !== null && description.querySelector('p') !== null) {
    addDemoKey(description);
    noted = true;
  }
  if (named && noted) observer.disconnect();
}).observe(document.body, { childList: true, subtree: true });
`.trim();
}
