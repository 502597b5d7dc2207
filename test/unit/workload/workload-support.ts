import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseFactJson } from "../../../src/contract/parse-fact.ts";
import type { Fact } from "../../../src/contract/facts.ts";
import type { Rejection } from "../../../src/contract/rejection.ts";
import { DEFAULT_SEED, DEFAULT_TASKS, generateWorkloadLines } from "../../../src/workload/workload.ts";

export const SAMPLE_PATH = fileURLToPath(new URL("../../../samples/facts.ndjson", import.meta.url));

export function readSampleText(): string {
  return readFileSync(SAMPLE_PATH, "utf8");
}

/** The default sample, generated in memory (the committed file must equal it byte for byte). */
export const defaultSample = (() => {
  let cached: ReturnType<typeof generateWorkloadLines> | undefined;
  return () => (cached ??= generateWorkloadLines({ seed: DEFAULT_SEED, tasks: DEFAULT_TASKS }));
})();

export interface ParsedSample {
  readonly facts: Fact[];
  readonly rejections: Rejection[];
}

export function parseAll(lines: readonly string[]): ParsedSample {
  const facts: Fact[] = [];
  const rejections: Rejection[] = [];
  for (const line of lines) {
    const parsed = parseFactJson(line);
    if (parsed.ok) facts.push(parsed.fact);
    else rejections.push(parsed.rejection);
  }
  return { facts, rejections };
}

export function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}
