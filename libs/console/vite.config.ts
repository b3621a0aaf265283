// The console's front-end build: web/ (Preact, TSX) into dist/public, which the server serves.
// No CDN and no inline script: every asset is a file of the build, as the server's CSP requires.
import { defineConfig } from 'vite';

export default defineConfig({
  root: 'web',
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: '../dist/public',
    emptyOutDir: true,
    // Scripts as files only (the CSP has no 'unsafe-inline'), and no modulepreload polyfill inlined.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
  },
});
