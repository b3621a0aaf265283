/**
 * The built front-end (Vite's output in dist/public), served as files. Any path that is not a
 * file is a page of the single-page app and gets index.html, so a shared URL such as
 * /runs/<id> opens that page. Paths are resolved inside the root and nothing outside it is read.
 */
import { readFile, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the build puts the front-end; the same from src/ (tsx) and dist/ (built). */
export const DEFAULT_PUBLIC_DIR = fileURLToPath(new URL('../../dist/public', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
};

export interface StaticFile {
  body: Buffer;
  type: string;
  /** Vite names assets by content hash: they never change, so they may be cached for long. */
  immutable: boolean;
}

/**
 * The file for a URL path, index.html for an app page, `missing` for an asset that does not
 * exist, or undefined when the front-end is not built.
 */
export async function staticFile(root: string, urlPath: string): Promise<StaticFile | 'missing' | undefined> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    decoded = '/';
  }
  const base = resolve(root);
  const target = resolve(base, `.${decoded}`);
  if ((target === base || target.startsWith(base + sep)) && extname(target) !== '') {
    const info = await stat(target).catch(() => undefined);
    if (info?.isFile()) {
      return {
        body: await readFile(target),
        type: TYPES[extname(target)] ?? 'application/octet-stream',
        immutable: decoded.startsWith('/assets/'),
      };
    }
  }
  // A missing asset is a 404, not the app: a stale page asking for an old bundle must not get HTML.
  if (decoded.startsWith('/assets/')) return 'missing';
  const index = await readFile(resolve(base, 'index.html')).catch(() => undefined);
  return index && { body: index, type: TYPES['.html']!, immutable: false };
}
