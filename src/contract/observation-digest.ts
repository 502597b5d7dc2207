import { createHash } from "node:crypto";

/**
 * How an `observation_digest` is computed (docs/importers.md, "Observation digests"): the
 * observation text is masked, then hashed. Masking replaces what changes between two runs of the
 * same action that failed or answered the same way — timings, temp paths, pids, addresses, clock
 * times — with a fixed token, so real repeats get the same digest. The rules are data: a producer
 * in another language can apply the same table, and a new kind of noise is one more row.
 *
 * Order matters: earlier rules see the text first (an ISO timestamp is masked before its seconds
 * could be read as a duration).
 */
export interface MaskingRule {
  readonly name: string;
  /** A global regular expression source; flags are always "g" plus `flags`. */
  readonly pattern: string;
  readonly flags?: string;
  readonly replacement: string;
  /** A string the rule must mask and one it must leave alone: executed by the unit tests. */
  readonly example: { readonly masks: string; readonly keeps: string };
}

export const OBSERVATION_MASKING_RULES: readonly MaskingRule[] = [
  {
    name: "iso-timestamp",
    pattern: String.raw`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?`,
    replacement: "<time>",
    example: { masks: "started 2025-01-27T22:45:13.764487Z done", keeps: "version 2025.01" },
  },
  {
    name: "clock-time",
    pattern: String.raw`\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b`,
    replacement: "<time>",
    example: { masks: "[12:01:33,123] INFO", keeps: "ratio 3:2" },
  },
  {
    name: "uuid",
    pattern: String.raw`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`,
    flags: "i",
    replacement: "<uuid>",
    example: { masks: "request 0f8fad5b-d9cb-469f-a165-70867728950e failed", keeps: "request 42 failed" },
  },
  {
    name: "hex-address",
    pattern: String.raw`\b0x[0-9a-f]{6,16}\b`,
    flags: "i",
    replacement: "<addr>",
    example: { masks: "<object Foo at 0x7f3a2c1e9d60>", keeps: "mask 0xff" },
  },
  {
    name: "temp-path",
    pattern: String.raw`(?:/private)?(?:/tmp|/var/tmp|/var/folders/[\w.-]+/[\w.-]+/T|/dev/shm)/[\w.+@-]+`,
    replacement: "<tmp>",
    example: { masks: "wrote /tmp/tmpk3j9x_2a/out.txt", keeps: "wrote /work/out.txt" },
  },
  {
    name: "pid",
    pattern: String.raw`\b(pid|PID|process|Process)([ =:#]+)\d+`,
    replacement: "$1$2<pid>",
    example: { masks: "Killed process 48213 (python)", keeps: "line 48213" },
  },
  {
    name: "duration",
    pattern: String.raw`\b\d+(?:\.\d+)?\s?(?:ms|msec|milliseconds?|s|sec|secs|seconds?|us|µs|ns|min|mins|minutes?)\b`,
    replacement: "<duration>",
    example: { masks: "5 passed in 0.53s", keeps: "5 passed" },
  },
];

interface CompiledRule {
  readonly regex: RegExp;
  readonly replacement: string;
}

const compiled = new WeakMap<readonly MaskingRule[], readonly CompiledRule[]>();

function compile(rules: readonly MaskingRule[]): readonly CompiledRule[] {
  let result = compiled.get(rules);
  if (result === undefined) {
    result = rules.map((rule) => ({
      regex: new RegExp(rule.pattern, `g${rule.flags ?? ""}`),
      replacement: rule.replacement,
    }));
    compiled.set(rules, result);
  }
  return result;
}

/** The observation with every noise span replaced by its rule's token. */
export function maskObservation(text: string, rules: readonly MaskingRule[] = OBSERVATION_MASKING_RULES): string {
  let masked = text;
  for (const rule of compile(rules)) masked = masked.replace(rule.regex, rule.replacement);
  return masked;
}

/** `sha256:` + hex of the masked observation (UTF-8): the documented observation_digest. */
export function observationDigest(text: string, rules: readonly MaskingRule[] = OBSERVATION_MASKING_RULES): string {
  return `sha256:${createHash("sha256").update(maskObservation(text, rules), "utf8").digest("hex")}`;
}
