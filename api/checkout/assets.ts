// The checkout pages' script and style, bundled in memory with esbuild once per API server: no build
// step, no CDN, nothing written to disk. File names carry a content hash, so they can be cached for
// ever and a new deployment can never serve a stale script to a new page.
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export interface Asset {
  body: string;
  contentType: string;
  etag: string;
}

export interface CheckoutAssets {
  /** Served file name (e.g. page-3F2A….js) → content. */
  files: Map<string, Asset>;
  /** Entry → served file name: the HTML template links these. */
  names: { page: string; cancel: string; style: string; icon: string };
}

const browserDir = fileURLToPath(new URL('./browser/', import.meta.url));

/** The pages' icon: without one, browsers ask for /favicon.ico, which is not a public route. */
const ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1f5eff"/>' +
  '<path d="M9 16.5l4.5 4.5L23 11.5" fill="none" stroke="#fff" stroke-width="3.2" stroke-linecap="round" stroke-linejoin="round"/></svg>';

function asset(body: string, contentType: string): Asset {
  return { body, contentType, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

export async function buildCheckoutAssets(): Promise<CheckoutAssets> {
  const result = await build({
    entryPoints: { page: `${browserDir}page.ts`, cancel: `${browserDir}cancel.ts`, style: `${browserDir}styles.css` },
    bundle: true,
    write: false,
    outdir: '/checkout-assets',
    entryNames: '[name]-[hash]',
    format: 'esm',
    // Browsers of the last few years; nothing the pages use needs more.
    target: 'es2020',
    platform: 'browser',
    minify: true,
    legalComments: 'none',
    metafile: true,
    logLevel: 'silent',
  });
  const files = new Map<string, Asset>();
  const names: Partial<CheckoutAssets['names']> = {};
  for (const file of result.outputFiles) {
    const name = file.path.split('/').pop()!;
    files.set(name, asset(file.text, name.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8'));
    const entry = Object.entries(result.metafile.outputs).find(([path]) => path.endsWith(`/${name}`))?.[1].entryPoint ?? '';
    if (entry.endsWith('page.ts')) names.page = name;
    else if (entry.endsWith('cancel.ts')) names.cancel = name;
    else if (entry.endsWith('styles.css')) names.style = name;
  }
  const icon = asset(ICON, 'image/svg+xml');
  names.icon = `icon-${icon.etag.slice(1, 9)}.svg`;
  files.set(names.icon, icon);
  if (!names.page || !names.cancel || !names.style) throw new Error('the checkout bundle is missing an entry');
  return { files, names: names as CheckoutAssets['names'] };
}
