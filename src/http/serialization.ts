import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;

const buildEager = SerializerSelector();

/**
 * Response serializers compiled on a route's first answer with that status, not at start: Fastify
 * would otherwise build one fast-json-stringify function per route and status before listening
 * (about 400 ms of a 600 ms start, and the memory of code for answers never given).
 */
export const lazySerializers: SerializerFactory = (externalSchemas, options) => {
  const build = buildEager(externalSchemas, options);
  return (route) => {
    let serialize: ((data: unknown) => string) | undefined;
    return (data: unknown) => (serialize ??= build(route))(data);
  };
};
