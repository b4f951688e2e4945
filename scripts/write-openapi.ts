import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildService } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { writeSdkSources } from './write-sdk-types.js';

/**
 * Writes the OpenAPI document the service generates to openapi.json at the repository root, and
 * the SDK's sources generated from it (scripts/write-sdk-types.ts), so one command keeps both
 * current. They are committed so that clients and reviewers see API changes in diffs; the test in
 * src/http/openapi.test.ts fails when either drifts.
 */

export const openApiPath = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'openapi.json');

/** The document as the service serves it, from a throwaway in-memory store and a fixed config. */
export async function generateOpenApi(): Promise<string> {
  // Only what shapes the document is taken from the environment's defaults: no DATABASE_URL,
  // no PUBLIC_URL, no test helpers, so the output is the same on every machine.
  const config = loadConfig({ LOG_LEVEL: 'silent' }, { testHelpers: false });
  const database = await openDatabase({ inMemory: true });
  try {
    const service = await buildService({ config, database, logger: false });
    try {
      return `${JSON.stringify(service.app.swagger(), null, 2)}\n`;
    } finally {
      await service.close();
    }
  } finally {
    await database.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const document = await generateOpenApi();
  writeFileSync(openApiPath, document);
  process.stdout.write(`wrote ${path.relative(process.cwd(), openApiPath) || openApiPath}\n`);
  for (const file of await writeSdkSources(document)) process.stdout.write(`wrote ${file}\n`);
}
