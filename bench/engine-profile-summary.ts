/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): the functions with the most self time,
 * with file:line, so hot spots can be reported without a GUI.
 *
 *   node_modules/.bin/node bench/engine-profile-summary.ts <profile.cpuprofile> [top=25]
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  readonly id: number;
  readonly children?: readonly number[];
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const [path, topText] = process.argv.slice(2);
if (path === undefined) throw new Error("usage: engine-profile-summary.ts <profile.cpuprofile> [top]");
const profile = JSON.parse(readFileSync(path, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const self = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, index) => {
  const node = byId.get(id);
  const delta = profile.timeDeltas[index] ?? 0;
  total += delta;
  if (node === undefined) return;
  const key = keyOf(node);
  self.set(key, (self.get(key) ?? 0) + delta);
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    const frame = byId.get(at);
    if (frame === undefined) break;
    const frameKey = keyOf(frame);
    if (seen.has(frameKey)) continue;
    seen.add(frameKey);
    inclusive.set(frameKey, (inclusive.get(frameKey) ?? 0) + delta);
  }
});

function keyOf(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const where =
    url === "" ? "" : `${url.replace(/^file:\/\/.*?\/(src|bench|node_modules)\//, "$1/")}:${lineNumber + 1}`;
  return `${functionName || "(anonymous)"} ${where}`.trim();
}

const top = Number(topText ?? 25);
const print = (title: string, table: Map<string, number>, filter: (key: string) => boolean): void => {
  process.stdout.write(`${title}\n`);
  const rows = [...table.entries()]
    .filter(([key]) => filter(key))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top);
  for (const [key, micros] of rows)
    process.stdout.write(
      `${((100 * micros) / total).toFixed(1).padStart(5)}%  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${key}\n`,
    );
};
print("self time", self, () => true);
print("inclusive time (src/ functions)", inclusive, (key) => key.includes(" src/"));
