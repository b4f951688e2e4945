import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import lockfile from 'proper-lockfile';

export class DataDirLockedError extends Error {
  constructor(dataDir: string, owner?: LockOwner) {
    super(
      `The embedded store in ${dataDir} is in use by another process${owner ? ` (pid ${owner.pid} on ${owner.hostname})` : ''}. ` +
        'Stop it, or point DATABASE_URL at PostgreSQL to share one database between processes.',
    );
  }
}

interface LockOwner {
  pid: number;
  hostname: string;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(ownerPath: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(ownerPath, 'utf8')) as Partial<LockOwner>;
    return typeof owner.pid === 'number' && typeof owner.hostname === 'string' ? { pid: owner.pid, hostname: owner.hostname } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * PGlite has no lock of its own, and a second process on the same directory would corrupt it.
 * The lock is an atomic mkdir (proper-lockfile) plus a note of its owner: a lock left by a
 * process that died on this host is taken over at once, while a live owner keeps it however
 * long it is busy (PGlite runs on the event loop, so a long query delays the lock's refresh).
 * Only an owner on another host (a shared file system) is judged by the refresh's age.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const lockPath = path.join(dataDir, 'service.lock');
  const ownerPath = path.join(dataDir, 'service.lock.owner');
  const attempt = () => lockfile.lock(dataDir, { lockfilePath: lockPath, stale: 600_000, update: 60_000 });
  let release: () => Promise<void>;
  try {
    release = await attempt();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
    const owner = readOwner(ownerPath);
    const abandoned = owner !== undefined && owner.hostname === hostname() && owner.pid !== process.pid && !isAlive(owner.pid);
    if (!abandoned) throw new DataDirLockedError(dataDir, owner);
    rmSync(lockPath, { recursive: true, force: true });
    try {
      release = await attempt();
    } catch (retryError) {
      if ((retryError as NodeJS.ErrnoException).code === 'ELOCKED') throw new DataDirLockedError(dataDir, readOwner(ownerPath));
      throw retryError;
    }
  }
  writeFileSync(ownerPath, JSON.stringify({ pid: process.pid, hostname: hostname() }));
  return async () => {
    rmSync(ownerPath, { force: true });
    await release();
  };
}
