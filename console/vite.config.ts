import { preact } from '@preact/preset-vite';
import { defineConfig } from 'vite';

/**
 * The console is built to console/dist and served by the server at /console/ (src/http/console.ts)
 * under a Content-Security-Policy that allows no inline script or style: the build must emit none.
 */
export default defineConfig({
  base: '/console/',
  plugins: [preact()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Vite's module-preload polyfill is an inline script, which the policy would block.
    modulePreload: { polyfill: false },
    // Every asset is a file of its own: nothing inlined as a data: URL the policy would have to allow.
    assetsInlineLimit: 0,
    sourcemap: true,
    reportCompressedSize: true,
  },
  server: {
    // `npm run dev -w console` next to `npm run dev`: the API answers through the dev server's origin.
    proxy: { '/v1': 'http://127.0.0.1:8080' },
  },
});
