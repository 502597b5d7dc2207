import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { writeWorkload } from "../src/workload/writer.ts";
import { DEFAULT_SEED } from "../src/workload/workload.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
/** Where generated workloads live (ignored by git), shared by every benchmark that reads one. */
export const BENCH_OUT = `${ROOT}bench/out/`;

function generatorDigest(): string {
  const dir = `${ROOT}src/workload/`;
  const hash = createHash("sha256");
  for (const name of readdirSync(dir).sort()) hash.update(name).update(readFileSync(`${dir}${name}`));
  return hash.digest("hex").slice(0, 16);
}

/**
 * The NDJSON workload of `lines` lines (seed DEFAULT_SEED) under bench/out/, generated once and
 * reused while seed, size and the generator's sources are unchanged (a params sidecar records them).
 */
export async function ensureWorkload(lines: number, log: (message: string) => void): Promise<string> {
  mkdirSync(BENCH_OUT, { recursive: true });
  const path = `${BENCH_OUT}facts-${lines}-seed${DEFAULT_SEED}.ndjson`;
  const sidecar = `${path}.params.json`;
  const params = JSON.stringify({ seed: DEFAULT_SEED, facts: lines, generator: generatorDigest() });
  if (existsSync(path) && existsSync(sidecar) && readFileSync(sidecar, "utf8") === params) {
    log(`reusing ${path} (${(statSync(path).size / 1_048_576).toFixed(0)} MiB)`);
    return path;
  }
  log(`generating ${lines.toLocaleString("en-US")} lines → ${path}`);
  const started = performance.now();
  const stats = await writeWorkload(path, { seed: DEFAULT_SEED, facts: lines });
  writeFileSync(sidecar, params);
  log(
    `  ${stats.lines.toLocaleString("en-US")} lines, ${(stats.bytes / 1_048_576).toFixed(0)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return path;
}
