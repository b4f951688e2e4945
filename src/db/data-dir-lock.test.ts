import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataDirLockedError, lockDataDir } from './data-dir-lock.js';

const freshDir = () => mkdtempSync(path.join(tmpdir(), 'lock-test-'));

/** The pid of a process that has exited (so is certainly not alive). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

describe('lockDataDir', () => {
  it('refuses a second holder while the first lives, naming the owner', async () => {
    const dir = freshDir();
    const release = await lockDataDir(dir);
    await expect(lockDataDir(dir)).rejects.toThrow(DataDirLockedError);
    await expect(lockDataDir(dir)).rejects.toThrow(`pid ${process.pid}`);
    await release();
    const again = await lockDataDir(dir);
    await again();
  });

  it('takes over at once a lock left by a process that died on this host', async () => {
    const dir = freshDir();
    const release = await lockDataDir(dir);
    // Simulate a crash: the lock directory stays, its owner is a pid that no longer runs.
    writeFileSync(path.join(dir, 'service.lock.owner'), JSON.stringify({ pid: await deadPid(), hostname: hostname() }));
    const taken = await lockDataDir(dir);
    expect(JSON.parse(readFileSync(path.join(dir, 'service.lock.owner'), 'utf8'))).toEqual({ pid: process.pid, hostname: hostname() });
    await taken();
    await release().catch(() => undefined);
  });

  it('does not take over a lock whose owner is on another host', async () => {
    const dir = freshDir();
    const release = await lockDataDir(dir);
    writeFileSync(path.join(dir, 'service.lock.owner'), JSON.stringify({ pid: await deadPid(), hostname: `not-${hostname()}` }));
    await expect(lockDataDir(dir)).rejects.toThrow(DataDirLockedError);
    await release();
  });

  it('removes its owner note on release', async () => {
    const dir = freshDir();
    const release = await lockDataDir(dir);
    expect(existsSync(path.join(dir, 'service.lock.owner'))).toBe(true);
    await release();
    expect(existsSync(path.join(dir, 'service.lock.owner'))).toBe(false);
  });
});
