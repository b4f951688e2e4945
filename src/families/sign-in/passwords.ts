import { randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';

/**
 * Passwords: argon2id (@node-rs/argon2, prebuilt binaries for every platform Node supports, no
 * compiler at install), with OWASP's parameters: 19 MiB of memory, 2 passes, 1 lane. The PHC
 * string kept holds the salt and the parameters, so stronger ones can come later and old hashes
 * still verify.
 */
const options = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, options);
}

let dummy: Promise<string> | undefined;

/**
 * Whether the password is the one of this hash. Without a hash (an unknown address, a user with
 * no password) a dummy hash is verified all the same, so that the answer takes as long and says
 * nothing of whether the address is a user's.
 */
export async function verifyPassword(stored: string | undefined, password: string): Promise<boolean> {
  dummy ??= hashPassword(randomBytes(16).toString('base64url'));
  const against = stored ?? (await dummy);
  try {
    const matches = await verify(against, password);
    return matches && stored !== undefined;
  } catch {
    return false;
  }
}
