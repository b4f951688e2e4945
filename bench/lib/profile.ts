import { readFileSync } from 'node:fs';

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: CpuProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileLine {
  where: string;
  selfMs: number;
  selfShare: number;
}

/** Where a bucket of self time belongs: our code by file, a dependency by package, Node by name. */
function bucketOf(frame: CpuProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (!url) return `(${functionName || 'anonymous'})`;
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency) return dependency[1]!;
  if (url.startsWith('node:')) return url;
  const ours = /\/(src\/.+|bench\/.+)$/.exec(url);
  return `${ours ? ours[1] : url}:${functionName || 'anonymous'}`;
}

/** Self time by package or source function, largest first. */
export function summarizeProfile(file: string, top = 25): ProfileLine[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    const node = byId.get(id);
    if (!node) return;
    total += delta;
    const bucket = bucketOf(node.callFrame);
    selfUs.set(bucket, (selfUs.get(bucket) ?? 0) + delta);
  });
  return [...selfUs.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([where, us]) => ({ where, selfMs: Math.round(us / 1000), selfShare: total > 0 ? us / total : 0 }));
}
