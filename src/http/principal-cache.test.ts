import { describe, expect, it } from 'vitest';
import { type Principal, PrincipalCache } from './auth.js';
import { rightSetByRole } from './rights.js';

const principal: Principal = {
  workspaceId: 'wsp_01JD0000000000000000000000',
  userId: 'usr_01JD0000000000000000000000',
  tokenId: 'tok_01JD0000000000000000000000',
  role: 'RESEARCHER',
  rights: rightSetByRole.RESEARCHER,
  via: 'API_KEY',
  canReadPersonalData: true,
  canReadScreeners: true,
};

/** A lookup the test finishes by hand, counting how often it was started. */
function controlledLookup() {
  let finish!: (value: Principal | undefined) => void;
  const lookup = {
    calls: 0,
    run: () => {
      lookup.calls++;
      return new Promise<Principal | undefined>((resolve) => {
        finish = resolve;
      });
    },
    finish: (value: Principal | undefined) => finish(value),
  };
  return lookup;
}

describe('PrincipalCache.load', () => {
  it('runs one lookup for every concurrent request of a token, and caches its answer', async () => {
    const cache = new PrincipalCache(60);
    const lookup = controlledLookup();
    const waiting = Array.from({ length: 50 }, () => cache.load('digest', lookup.run));
    expect(lookup.calls).toBe(1);
    lookup.finish(principal);
    expect(await Promise.all(waiting)).toEqual(Array.from({ length: 50 }, () => principal));
    expect(cache.get('digest')).toEqual(principal);
  });

  it('looks up again after a failed lookup', async () => {
    const cache = new PrincipalCache(60);
    await expect(cache.load('digest', () => Promise.reject(new Error('database unreachable')))).rejects.toThrow('database unreachable');
    const lookup = controlledLookup();
    const loading = cache.load('digest', lookup.run);
    lookup.finish(principal);
    expect(await loading).toEqual(principal);
    expect(lookup.calls).toBe(1);
  });

  it('does not cache what a lookup begun before an invalidation found', async () => {
    const cache = new PrincipalCache(60);
    const before = controlledLookup();
    const stale = cache.load('digest', before.run);
    cache.invalidateUser(principal.workspaceId, principal.userId);
    // A request after the invalidation does not join the stale lookup.
    const after = controlledLookup();
    const fresh = cache.load('digest', after.run);
    expect(after.calls).toBe(1);
    before.finish(principal);
    await stale;
    expect(cache.get('digest')).toBeUndefined();
    after.finish(undefined);
    expect(await fresh).toBeUndefined();
    expect(cache.get('digest')).toBeUndefined();
  });
});
