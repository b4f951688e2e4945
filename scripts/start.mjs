// `npm start`: builds first when the sources changed since the last build (build-stamp.mjs), then
// runs the server (dist/server.js) in this same process, with the start script's Node flags.
//
// The check was a `prestart` script of its own: npm ran it in a shell and a Node process before
// the server's, 60-150 ms of each start (issue 31: ready in < 2 s on the embedded store). Here it
// costs the stat of each input, and dist/server.js is imported only after it, so no part of an
// older build is ever loaded: a build made now replaces dist/ before anything of it runs.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureBuilt, root } from './build-stamp.mjs';

ensureBuilt();
await import(pathToFileURL(path.join(root, 'dist', 'server.js')).href);
