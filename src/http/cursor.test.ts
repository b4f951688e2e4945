import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CursorCodec } from './cursor.js';
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
