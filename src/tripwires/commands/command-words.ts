import type { ShellWord } from "./parsed-shell.ts";

/** Helpers to read argv the way each tool's option parser would. */

export function commandBaseName(word: ShellWord | undefined): string | undefined {
  if (word === undefined || word.dynamic) return undefined;
  const slash = word.text.lastIndexOf("/");
  return slash === -1 ? word.text : word.text.slice(slash + 1);
}

/** Short and long options of a command, `--` honoured, clustered short flags split (`-rf`). */
export interface ParsedOptions {
  readonly shortFlags: ReadonlySet<string>;
  readonly longFlags: ReadonlySet<string>;
  readonly positionals: readonly ShellWord[];
}

/**
 * Parses options for tools whose options take no value (or whose valued options are listed in
 * `shortWithValue` / `longWithValue`, whose values are skipped). Options after positionals still
 * count (GNU style permutation).
 */
export function parseOptions(
  args: readonly ShellWord[],
  shortWithValue = "",
  longWithValue: readonly string[] = [],
): ParsedOptions {
  const shortFlags = new Set<string>();
  const longFlags = new Set<string>();
  const positionals: ShellWord[] = [];
  let endOfOptions = false;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === undefined) continue;
    const text = arg.text;
    if (endOfOptions || arg.dynamic || !text.startsWith("-") || text === "-") {
      positionals.push(arg);
    } else if (text === "--") {
      endOfOptions = true;
    } else if (text.startsWith("--")) {
      const [name = ""] = text.slice(2).split("=", 1);
      longFlags.add(name);
      if (!text.includes("=") && longWithValue.includes(name)) index++;
    } else {
      for (let position = 1; position < text.length; position++) {
        const flag = text.charAt(position);
        shortFlags.add(flag);
        if (shortWithValue.includes(flag)) {
          if (position === text.length - 1) index++;
          break;
        }
      }
    }
  }
  return { shortFlags, longFlags, positionals };
}

export function joinWords(words: readonly ShellWord[]): string {
  return words.map((word) => (/[\s'"]/.test(word.text) ? JSON.stringify(word.text) : word.text)).join(" ");
}

/** Value of `--name=value`, `--name value`, `-x value` or `-xvalue`, the last one given. */
export function optionValue(
  args: readonly ShellWord[],
  short: string | undefined,
  long: string | undefined,
): string | undefined {
  let value: string | undefined;
  for (let index = 0; index < args.length; index++) {
    const text = args[index]?.text ?? "";
    if (long !== undefined && text === `--${long}`) value = args[index + 1]?.text;
    else if (long !== undefined && text.startsWith(`--${long}=`)) value = text.slice(long.length + 3);
    else if (short !== undefined && text === `-${short}`) value = args[index + 1]?.text;
    else if (short !== undefined && text.startsWith(`-${short}`) && !text.startsWith("--") && text.length > 2)
      value = text.slice(2);
  }
  return value;
}
