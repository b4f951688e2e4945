import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fastifyHelmet } from '@fastify/helmet';
import { fastifyStatic } from '@fastify/static';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';

/** Where the console is served: its pages below it, the API beside it at /v1. */
export const consolePrefix = '/console';

/** The console's build (`npm run build` → vite build), from dist/http/ or src/http/ alike. */
export const consoleDistDirectory = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'console', 'dist');

/**
 * The console's Content-Security-Policy: its own script, style, images and API only; no inline
 * script or style (the build emits none, see console/vite.config.ts), no plugin, no framing, no
 * other origin. The console holds an API token: an injected script must have nowhere to run or
 * to send it.
 */
export const consoleContentSecurityPolicy = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'font-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'none'"],
  'frame-ancestors': ["'none'"],
  'form-action': ["'self'"],
};

export interface ConsoleOptions {
  /** The built console (index.html and assets/); consoleDistDirectory unless a test gives another. */
  root?: string;
}

/**
 * Serves the console's build at /console and /console/ with its security headers (helmet, scoped
 * to these routes: the API and /docs keep their own). A path below /console that is no file is a
 * page of the single-page app and gets index.html; a missing file below /console/assets/ is a 404
 * (a stale page asking for an old bundle must not get HTML for JavaScript). Without a build, every
 * console path answers 503 in words and the rest of the server runs. Register with
 * `{ prefix: consolePrefix }`: the not-found handler below is the prefix's own.
 */
export const consoleRoutes: FastifyPluginAsync<ConsoleOptions> = async (app: FastifyInstance, options) => {
  const root = options.root ?? consoleDistDirectory;
  // The console is public like /docs: its pages hold no data; the API they call checks the token.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, public: true };
    route.schema = { ...route.schema, hide: true };
  });

  if (!existsSync(path.join(root, 'index.html'))) {
    const notBuilt = `The console is not built: ${path.join(root, 'index.html')} is missing. Run \`npm run build\` and restart the server.\n`;
    app.get('/', async (_request, reply) => reply.code(503).type('text/plain; charset=utf-8').send(notBuilt));
    app.get('/*', async (_request, reply) => reply.code(503).type('text/plain; charset=utf-8').send(notBuilt));
    app.log.warn({ root }, 'the console is not built; /console answers 503');
    return;
  }

  await app.register(fastifyHelmet, {
    global: true,
    contentSecurityPolicy: { useDefaults: false, directives: consoleContentSecurityPolicy },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
  });

  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    index: false,
    wildcard: true,
    // Vite names assets by their content: a name never changes meaning, so browsers keep them.
    setHeaders: (reply, file) => {
      if (file.startsWith(path.join(root, 'assets') + path.sep)) reply.header('Cache-Control', 'public, max-age=31536000, immutable');
    },
  });

  // The page itself is never cached: a new build's index.html names the new assets.
  const sendPage = async (_request: unknown, reply: FastifyReply) => reply.header('Cache-Control', 'no-cache').sendFile('index.html', root, { cacheControl: false });
  app.get('/', sendPage);
  app.setNotFoundHandler(async (request, reply) => {
    const pathname = request.url.split('?')[0] ?? '';
    if ((request.method !== 'GET' && request.method !== 'HEAD') || pathname.startsWith(`${consolePrefix}/assets/`)) {
      return reply.code(404).type('text/plain; charset=utf-8').send('Not Found');
    }
    return sendPage(request, reply);
  });
};
