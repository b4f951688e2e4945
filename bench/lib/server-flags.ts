import { readFileSync } from 'node:fs';

/**
 * The Node flags the server runs with, read from package.json's `start` script (`node <flags>
 * dist/server.js`), so that every bench starts the service exactly as `npm start` does.
 */
export function serverNodeFlags(): string[] {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
  const words = manifest.scripts.start.trim().split(/\s+/);
  if (words[0] !== 'node' || words.at(-1) !== 'dist/server.js') throw new Error(`package.json's start script is not "node <flags> dist/server.js": ${manifest.scripts.start}`);
  return words.slice(1, -1);
}
