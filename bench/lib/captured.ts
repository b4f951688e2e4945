/**
 * Statements the search bench records in its server process travel to the bench as JSON, which
 * would turn bytes (a page's bitmap of matches) into an object of numbers: they travel as base64.
 */

/** A recorded parameter as JSON carries it. */
export const portable = (value: unknown) => (value instanceof Uint8Array ? { base64: Buffer.from(value).toString('base64') } : value);

/** A recorded parameter as it was sent: `{ base64 }` back to bytes. */
export const revived = (value: unknown) =>
  value !== null && typeof value === 'object' && 'base64' in value && typeof value.base64 === 'string' && Object.keys(value).length === 1 ? Buffer.from(value.base64, 'base64') : value;
