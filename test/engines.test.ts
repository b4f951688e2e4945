import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { projectRoot } from './processes.js';

/**
 * package.json's `engines` says which Node versions the service runs on, and it says only what
 * is tested: every installed package must accept every version it names (`npm ci` warned that
 * cookie@2 and content-disposition@3 wanted Node >= 22 while engines said >= 20.19), and CI runs
 * on a version of each major it names.
 */
interface Manifest {
  name?: string;
  version?: string;
  engines?: { node?: string };
}

const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Manifest;
const ours = read(path.join(projectRoot, 'package.json')).engines?.node ?? '';

/** Every package.json below node_modules folders (scoped and nested ones too), the workspaces' included. */
function installedManifests(): { file: string; manifest: Manifest }[] {
  const found: { file: string; manifest: Manifest }[] = [];
  const visit = (modules: string) => {
    if (!existsSync(modules)) return;
    for (const entry of readdirSync(modules, { withFileTypes: true })) {
      if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
      if (entry.name.startsWith('.')) continue;
      const packages = entry.name.startsWith('@') ? readdirSync(path.join(modules, entry.name)).map((name) => path.join(modules, entry.name, name)) : [path.join(modules, entry.name)];
      for (const folder of packages) {
        const file = path.join(folder, 'package.json');
        if (!existsSync(file) || folder.includes(`${path.sep}@recruit-ops${path.sep}`)) continue;
        found.push({ file, manifest: read(file) });
        visit(path.join(folder, 'node_modules'));
      }
    }
  };
  for (const root of ['.', 'sdk', 'console']) visit(path.join(projectRoot, root, 'node_modules'));
  return found;
}

describe('engines: the Node versions the service states are the ones it runs and is tested on', () => {
  it('states a valid range, and every workspace states the same', () => {
    expect(semver.validRange(ours)).not.toBeNull();
    for (const workspace of ['sdk', 'console']) expect(read(path.join(projectRoot, workspace, 'package.json')).engines?.node, workspace).toBe(ours);
  });

  it('is accepted by every installed package that states an engine', () => {
    const manifests = installedManifests();
    expect(manifests.length).toBeGreaterThan(300);
    const refusing = manifests
      .filter(({ manifest }) => manifest.engines?.node !== undefined && semver.validRange(manifest.engines.node) !== null)
      .filter(({ manifest }) => !semver.subset(ours, manifest.engines!.node!, { includePrerelease: false }))
      .map(({ file, manifest }) => `${manifest.name}@${manifest.version} wants ${manifest.engines!.node} (${path.relative(projectRoot, file)})`);
    expect(refusing).toEqual([]);
  });

  it('holds the Node running these tests, and each Node version CI installs', () => {
    expect(semver.satisfies(process.versions.node, ours), `Node ${process.versions.node} against ${ours}`).toBe(true);
    const ci = readFileSync(path.join(projectRoot, '.ci', 'run'), 'utf8');
    const versions = [...ci.matchAll(/^NODE\d+_VERSION=(\S+)$/gm)].map((match) => match[1]!);
    expect(versions.length).toBeGreaterThan(0);
    for (const version of versions) expect(semver.satisfies(version, ours), `CI's Node ${version} against ${ours}`).toBe(true);
  });
});
