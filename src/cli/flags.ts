import { parseArgs } from "node:util";
import { UsageError } from "./command.ts";

/**
 * The flags every cluster-facing command shares (each also has an environment variable).
 * --log-level debug adds the stack trace to a connection failure's message (src/cli/main.ts).
 */
export const CLUSTER_FLAGS = {
  brokers: { type: "string" },
  "schema-registry": { type: "string" },
  "topic-prefix": { type: "string" },
  "log-level": { type: "string" },
} as const;

type FlagSpec = Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }>;

export interface ParsedFlags {
  readonly values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  readonly positionals: string[];
}

/**
 * Parses flags strictly: an unknown flag or a missing value becomes a UsageError that names the
 * flag and points at `--help`, so a typo never silently changes what a command does.
 */
export function parseFlags(argv: readonly string[], spec: FlagSpec, command: string): ParsedFlags {
  try {
    const parsed = parseArgs({
      args: [...argv],
      options: { ...spec, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    });
    return { values: parsed.values, positionals: parsed.positionals };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const flag = /'(-{1,2}[\w-]+)/.exec(message)?.[1] ?? "arguments";
    throw new UsageError(flag, message.replace(/\.$/, ""), `run \`agentops ${command} --help\` for the accepted flags`);
  }
}

export function stringFlag(flags: ParsedFlags, name: string): string | undefined {
  const value = flags.values[name];
  return typeof value === "string" ? value : undefined;
}

export function requiredStringFlag(flags: ParsedFlags, name: string, fix: string): string {
  const value = stringFlag(flags, name);
  if (value === undefined || value === "") throw new UsageError(`--${name}`, "is required", fix);
  return value;
}

export function booleanFlag(flags: ParsedFlags, name: string): boolean {
  return flags.values[name] === true;
}

/** An integer flag within [min, max]; anything else names the flag, the range and an example. */
export function integerFlag(flags: ParsedFlags, name: string, fallback: number, min: number, max: number): number {
  const raw = stringFlag(flags, name);
  if (raw === undefined) return fallback;
  if (!/^-?\d+$/.test(raw))
    throw new UsageError(
      `--${name}`,
      `"${raw}" is not a whole number`,
      `give a whole number from ${min} to ${max}, e.g. --${name} ${fallback}`,
    );
  const value = Number(raw);
  if (value < min || value > max)
    throw new UsageError(
      `--${name}`,
      `${value} is outside ${min}..${max}`,
      `give a whole number from ${min} to ${max}, e.g. --${name} ${fallback}`,
    );
  return value;
}

/** A comma-separated flag's values. */
export function listFlag(flags: ParsedFlags, name: string): string[] {
  return (stringFlag(flags, name) ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}
