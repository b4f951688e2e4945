import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startTestService } from '../../test/harness.js';
import { CursorCodec, loadCursorSecret } from './cursor.js';
import { ApiError } from './errors.js';

const codec = new CursorCodec(randomBytes(32));
const scope = 'studies:ACTIVE:';
const path = ['startCursor'];
const base64urlAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function expectInvalid(cursor: string, decodeScope = scope) {
  let thrown: unknown;
  try {
    codec.decode(decodeScope, cursor, path);
  } catch (error) {
    thrown = error;
  }
  expect(thrown, `cursor ${JSON.stringify(cursor)} was accepted`).toBeInstanceOf(ApiError);
  const error = thrown as ApiError;
  expect(error.code).toBe('VALIDATION');
  expect(error.status).toBe(400);
  expect(error.items).toEqual([{ message: 'startCursor is not a valid cursor for this query', path }]);
}

describe('CursorCodec', () => {
  it('round-trips the key it encodes', () => {
    const key = ['stu_01JD0000000000000000000000', 42, null, 'ünïcødé'];
    expect(codec.decode(scope, codec.encode(scope, key), path)).toEqual(key);
  });

  it('refuses a cursor with any one character changed', () => {
    const cursor = codec.encode(scope, ['stu_01JD0000000000000000000000']);
    for (let index = 0; index < cursor.length; index++) {
      for (const replacement of [...base64urlAlphabet, '.', '=', '!']) {
        if (replacement === cursor[index]) continue;
        expectInvalid(cursor.slice(0, index) + replacement + cursor.slice(index + 1));
      }
    }
  });

  it('refuses a truncated or extended cursor', () => {
    const cursor = codec.encode(scope, ['stu_01JD0000000000000000000000']);
    for (let length = 0; length < cursor.length; length++) expectInvalid(cursor.slice(0, length));
    expectInvalid(`${cursor}=`);
    expectInvalid(`${cursor}A`);
    expectInvalid(`${cursor}.x`);
  });

  it("refuses another query's cursor and another secret's cursor", () => {
    const cursor = codec.encode(scope, ['stu_01JD0000000000000000000000']);
    expectInvalid(cursor, 'studies:PAUSED:');
    expectInvalid(cursor, '');
    expectInvalid(new CursorCodec(randomBytes(32)).encode(scope, ['stu_01JD0000000000000000000000']));
  });

  it('refuses garbage and the empty string', () => {
    for (const garbage of ['', '.', '..', 'garbage', 'a.b', 'a.b.c', '!!!.???', ' ', '\u0000', 'eyJ9.', `.${'A'.repeat(43)}`]) {
      expectInvalid(garbage);
    }
  });

  it('names whatever path it is given', () => {
    expect(() => codec.decode(scope, 'garbage', ['query', 'after'])).toThrow(
      expect.objectContaining({ items: [{ message: 'startCursor is not a valid cursor for this query', path: ['query', 'after'] }] }),
    );
  });
});

describe('CursorCodec: the position is hidden, and every instance reads every other\'s cursors (issue 32, item 7)', () => {
  it('shows nothing of the key it carries, in any decoding', () => {
    const email = 'ada.lovelace@example.org';
    const cursor = codec.encode(scope, [email, 'per_01JD0000000000000000000000', 1700000000000]);
    for (const text of [cursor, Buffer.from(cursor, 'base64url').toString('latin1'), Buffer.from(cursor, 'base64url').toString('utf8'), Buffer.from(cursor, 'base64').toString('latin1')]) {
      for (const piece of [email, 'ada.lovelace', 'example.org', 'per_01JD', '1700000000000']) expect(text).not.toContain(piece);
    }
  });

  it('reads the same cursor for the same position (a synthetic nonce), and a different one for another position or query', () => {
    expect(codec.encode(scope, ['a'])).toBe(codec.encode(scope, ['a']));
    expect(codec.encode(scope, ['a'])).not.toBe(codec.encode(scope, ['b']));
    expect(codec.encode(scope, ['a'])).not.toBe(codec.encode('studies:PAUSED:', ['a']));
  });

  it('refuses a cursor in the former, signed-but-readable form', () => {
    const payload = Buffer.from(JSON.stringify(['stu_01JD0000000000000000000000'])).toString('base64url');
    expectInvalid(`${payload}.${'A'.repeat(43)}`);
    expectInvalid(payload);
  });

  it('agrees across instances: two codecs of the same SECRETS_KEY, or of the secret kept in the store, read each other\'s cursors', async () => {
    const configured = randomBytes(32).toString('base64');
    const [one, two] = await Promise.all([loadCursorSecret(undefined as never, configured), loadCursorSecret(undefined as never, configured)]);
    const cursor = new CursorCodec(one).encode(scope, ['x']);
    expect(new CursorCodec(two).decode(scope, cursor, path)).toEqual(['x']);
    // Not the SECRETS_KEY itself: cursors get a key of their own from it.
    expect(one.equals(Buffer.from(configured, 'base64'))).toBe(false);
    const otherKey = await loadCursorSecret(undefined as never, randomBytes(32).toString('base64'));
    expect(() => new CursorCodec(otherKey).decode(scope, cursor, path)).toThrow(ApiError);

    const service = await startTestService();
    try {
      const first = await loadCursorSecret(service.deps.db);
      const second = await loadCursorSecret(service.deps.db);
      expect(first.equals(second)).toBe(true);
      const stored = new CursorCodec(first).encode(scope, ['y']);
      expect(service.deps.cursors.decode(scope, stored, path)).toEqual(['y']);
    } finally {
      await service.stop();
    }
  });
});
