// Where a process's CPU went, from V8 .cpuprofile files (runtime/cpuProfiler.ts): self time grouped
// by where the code lives (a package in node_modules, a project folder, V8's own buckets), and the
// hottest functions. Self time, not inclusive: the groups add up to the whole profile.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** Wall time the profile covers, ms. */
  wallMs: number;
  /** CPU the samples show (idle excluded), ms. */
  busyMs: number;
  byPlace: { place: string; ms: number; share: number }[];
  hottest: { fn: string; place: string; ms: number }[];
}

/** `@temporalio/worker`, `viem`, `workflows/`, `(garbage collector)`: where a frame's code lives. */
export function placeOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const parts = url.slice(modules + 'node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (url.startsWith('node:')) return 'node (core)';
  // Workflow code runs from the webpack bundle: name it by the bundle's own source paths when present.
  const project = url.match(/\/(activities|bench|client|devstack|domain|runtime|worker|workflows)\//);
  if (project) return `${project[1]}/`;
  if (url.includes('workflow-bundle') || url.startsWith('evalmachine')) return 'workflow bundle (sandbox)';
  return url
    .replace(/^file:\/\//, '')
    .split('/')
    .slice(-2)
    .join('/');
}

export type CallFrame = ProfileNode['callFrame'];

/** One profile's self time by frame, idle left out: each sampled frame once, with its milliseconds. */
export function selfTimes(file: string): { wallMs: number; frames: { callFrame: CallFrame; ms: number }[] } {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfMs.set(id, (selfMs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  const frames = [...selfMs].map(([id, ms]) => ({ callFrame: nodes.get(id)!.callFrame, ms })).filter((f) => f.callFrame.functionName !== '(idle)');
  return { wallMs: (profile.endTime - profile.startTime) / 1000, frames };
}

export function summarizeProfiles(files: string[], top = 15): ProfileSummary {
  let wallMs = 0;
  const byPlace = new Map<string, number>();
  const byFn = new Map<string, { fn: string; place: string; ms: number }>();
  for (const file of files) {
    const profile = selfTimes(file);
    wallMs += profile.wallMs;
    for (const {
      callFrame: { functionName, url, lineNumber },
      ms,
    } of profile.frames) {
      const place = placeOf(url, functionName);
      byPlace.set(place, (byPlace.get(place) ?? 0) + ms);
      const key = `${functionName || '(anonymous)'} ${url}:${lineNumber + 1}`;
      const entry = byFn.get(key) ?? { fn: `${functionName || '(anonymous)'} ${url.split('/').slice(-1)[0]}:${lineNumber + 1}`, place, ms: 0 };
      entry.ms += ms;
      byFn.set(key, entry);
    }
  }
  const busyMs = [...byPlace.values()].reduce((a, b) => a + b, 0);
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    wallMs: round(wallMs),
    busyMs: round(busyMs),
    byPlace: [...byPlace]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([place, ms]) => ({ place, ms: round(ms), share: round((100 * ms) / busyMs) })),
    hottest: [...byFn.values()]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, top)
      .map((e) => ({ ...e, ms: round(e.ms) })),
  };
}

// `npx tsx test/bench/cpuProfile.ts <file.cpuprofile>...`: the summary of profiles taken by hand.
if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(summarizeProfiles(process.argv.slice(2), 30), null, 2));
}
