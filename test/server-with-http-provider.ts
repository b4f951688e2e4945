/**
 * src/server.ts with its incentive provider reached over HTTP (test/http-provider.ts) at
 * TEST_PROVIDER_URL, so a test can kill the server and still see what the provider received.
 * The adapter takes the place of the sandbox's factory before the server starts: every other
 * line the server runs is its own.
 */
import { providerFactories } from '../src/providers/index.js';
import { HttpTestProvider } from './http-provider.js';

const url = process.env.TEST_PROVIDER_URL;
if (!url) throw new Error('TEST_PROVIDER_URL names the fake provider this server orders from');
providerFactories.sandbox = () => new HttpTestProvider(url);
await import('../src/server.js');
