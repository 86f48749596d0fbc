// The pages' HTML: a shell that loads the bundled script and style (no inline script or style, so
// the Content-Security-Policy can forbid both). Asset links start at the public URL's path, so the
// pages keep working when the API is served under a prefix (AUTHCAP_PUBLIC_URL=https://shop/pay).

/** Sent with every checkout HTML page: only our own script, no framing, no Referer (the token is in the URL). */
export const htmlSecurityHeaders: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
};

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export interface PageAssets {
  script: string;
  style: string;
  icon: string;
}

/** The document head both pages share; only the checkout pages load the script. */
function head(title: string, assets: Omit<PageAssets, 'script'> & { script?: string }, base: string): string {
  const up = `${escapeHtml(base)}/`;
  const script = assets.script ? `\n<script type="module" src="${up}checkout-assets/${escapeHtml(assets.script)}"></script>` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="${up}checkout-assets/${escapeHtml(assets.icon)}">
<link rel="stylesheet" href="${up}checkout-assets/${escapeHtml(assets.style)}">${script}
</head>`;
}

/** @param base the public URL's path without a trailing slash ('' at the root). */
export function pageHtml(title: string, assets: PageAssets, base: string): string {
  return `${head(title, assets, base)}
<body>
<main id="app" aria-live="polite"><p>Loading…</p></main>
<noscript><p class="noscript">This page needs JavaScript to talk to your wallet.</p></noscript>
</body>
</html>
`;
}

/** A plain page for a link that is not valid: the same answer whether or not the authorization exists. */
export function notFoundHtml(assets: Omit<PageAssets, 'script'>, base: string): string {
  return `${head('Link not valid', assets, base)}
<body>
<main><header class="top"><span class="logo">authcap</span><h1>Payment link</h1></header>
<section class="status tone-error" data-view="invalid-link"><h2>This link is not valid</h2>
<p>Open the link exactly as the merchant sent it: it may have been mistyped or cut short.</p></section></main>
</body>
</html>
`;
}
