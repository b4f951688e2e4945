/**
 * A jsonb parameter given as the UTF-8 bytes of its text, which a caller writes as it goes
 * instead of making one string of the whole. A string of a megabyte (an import batch's people)
 * is placed straight in V8's old generation, where it stays until the next full collection: one
 * such parameter per batch grew the import's heap by hundreds of megabytes between collections
 * (issue 12).
 *
 * node-postgres sends a Buffer parameter in the binary format, which for jsonb is a version byte
 * (1) and then the text: `bytes` begins with that byte. The embedded store's dialect gives PGlite
 * the text instead (textFor).
 */
export class JsonbBytes {
  constructor(readonly bytes: Buffer) {}

  /** What node-postgres sends (it calls toPostgres on an object parameter). */
  toPostgres(): Buffer {
    return this.bytes;
  }

  /** The JSON text. */
  text(): string {
    return this.bytes.toString('utf8', 1);
  }
}

/** A parameter as the embedded store takes it: a JsonbBytes as its text, anything else as it is. */
export const textFor = (value: unknown) => (value instanceof JsonbBytes ? value.text() : value);
