import v8 from 'node:v8';

/**
 * The server's start-up keeps V8's young generation at its initial size (a megabyte or two):
 * server.ts imports this module alone, and loads the rest of the service after it.
 *
 * Nearly everything start-up allocates lives on (module code, schemas, routes), and V8 reads that
 * survival as a reason to double the young generation after each collection, up to the most it
 * allows (two semi-spaces of 16 MB): the idle server then held ~30 MB of young generation it did
 * not use (issue 12: idle RSS). Growth is allowed again once the server listens
 * (allowYoungGenerationGrowth), so under load it grows as it did.
 *
 * V8 reads --semi-space-growth-factor each time it would grow the young generation, so setting it
 * while the process runs takes effect at the next collection; it is the one flag set this way.
 */
v8.setFlagsFromString('--semi-space-growth-factor=1');

/** V8's default growth of the young generation (doubling), restored. */
export function allowYoungGenerationGrowth(): void {
  v8.setFlagsFromString('--semi-space-growth-factor=2');
}
