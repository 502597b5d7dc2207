import type { FanOut } from "./command-wrappers.ts";
import { commandBaseName, parseOptions } from "./command-words.ts";
import type { ShellWord, SimpleCommand } from "./parsed-shell.ts";

/**
 * What a fan-out runner (`xargs`, GNU `parallel`) runs: its command template with each input item
 * put in place. Items are known when they are written in the line (`parallel … ::: a b`,
 * `echo a b | xargs …`, `ls DIR | xargs …` lists DIR's entries); otherwise they come from a file or
 * a program's output and are unknown.
 */
export interface FanOutExpansion {
  /** Concrete argv lists the runner would execute (items substituted or appended). */
  readonly invocations: readonly (readonly ShellWord[])[];
  /**
   * Items are unknown and the template takes them as whole arguments (appended, or a placeholder
   * that is a whole word): the caller judges the template by what feeds it (`find … | xargs rm`).
   */
  readonly unknownAppended: readonly ShellWord[] | undefined;
  /** `parallel ::: 'rm -rf /'`: with no command, each item is a command line. */
  readonly scripts: readonly string[];
}

/**
 * Stands for an unknown input item inside a word. It reads as an unknown variable, so a script
 * that receives it (`xargs -I{} sh -c 'rm -rf {}'`) sees a dynamic word, and the word itself is dynamic.
 */
export const UNKNOWN_ITEM = "${FAN_OUT_ITEM}";
/** More combinations than this are not expanded: the first ones show what the template does. */
const MAX_INVOCATIONS = 16;
/** GNU parallel's replacement strings besides the configurable `{}`. */
const PARALLEL_PLACEHOLDERS = /\{(\.|\/|\/\/|\/\.|#|%|\d+(\.|\/|\/\/|\/\.)?)?\}/g;
const ARGUMENT_SEPARATORS = new Set([":::", "::::", ":::+", "::::+"]);

export function expandFanOut(
  template: readonly ShellWord[],
  fanOut: FanOut,
  producer: SimpleCommand | undefined,
): FanOutExpansion {
  let command = template;
  let items: string[][] | undefined;
  const separator =
    fanOut.runner === "parallel" ? template.findIndex((word) => ARGUMENT_SEPARATORS.has(word.text)) : -1;
  if (separator !== -1) {
    command = template.slice(0, separator);
    items = parallelArgumentLists(template.slice(separator));
  } else {
    // `xargs -I` and parallel take one input line per item; plain xargs (and BSD `-J`) splits at blanks;
    // a delimiter (`-0`, `-d`) ends items only where it stands.
    const byLine = fanOut.runner === "parallel" || (fanOut.replaceString !== undefined && !fanOut.replaceWholeArgument);
    const split = fanOut.delimiter ?? (byLine ? "\n" : undefined);
    items = fanOut.itemsFromFile ? undefined : producerItems(producer, split)?.map((item) => [item]);
  }
  if (command.length === 0 && fanOut.runner === "parallel")
    return { invocations: [], unknownAppended: undefined, scripts: (items ?? []).map((item) => item.join(" ")) };
  const placeholder = placeholderPattern(fanOut);
  const contains = (word: ShellWord): boolean =>
    placeholder !== undefined && new RegExp(placeholder.source).test(word.text);
  const usesPlaceholder = placeholder !== undefined && command.some(contains);
  if (items === undefined) {
    const wholeWordsOnly =
      placeholder === undefined ||
      command.every((word) => !contains(word) || word.text.replace(placeholder, "") === "");
    if (wholeWordsOnly)
      return { invocations: [], unknownAppended: command.filter((word) => !contains(word)), scripts: [] };
    return {
      invocations: [command.map((word) => substitute(word, placeholder, UNKNOWN_ITEM, true))],
      unknownAppended: undefined,
      scripts: [],
    };
  }
  const invocations = items.slice(0, MAX_INVOCATIONS).map((item) => {
    if (usesPlaceholder)
      return command.map((word) => (contains(word) ? substitute(word, placeholder, item.join(" "), false) : word));
    return [...command, ...item.map((text) => ({ text, dynamic: false }))];
  });
  return { invocations, unknownAppended: undefined, scripts: [] };
}

function placeholderPattern(fanOut: FanOut): RegExp | undefined {
  if (fanOut.runner === "parallel") {
    const custom =
      fanOut.replaceString === undefined || fanOut.replaceString === "{}"
        ? ""
        : `|${escapeRegExp(fanOut.replaceString)}`;
    return new RegExp(`${PARALLEL_PLACEHOLDERS.source}${custom}`, "g");
  }
  if (fanOut.replaceString === undefined || fanOut.replaceString === "") return undefined;
  const pattern = escapeRegExp(fanOut.replaceString);
  return new RegExp(fanOut.replaceWholeArgument ? `^${pattern}$` : pattern, "g");
}

/** `placeholder` is global: every occurrence in the word is replaced. */
function substitute(word: ShellWord, placeholder: RegExp, value: string, unknown: boolean): ShellWord {
  const text = word.text.replace(placeholder, () => value);
  return text === word.text ? word : { text, dynamic: word.dynamic || unknown };
}

/** `::: a b ::: c d` is every combination (a c, a d, b c, b d); `:::+` links to the previous list; `::::` reads a file. */
function parallelArgumentLists(words: readonly ShellWord[]): string[][] | undefined {
  const groups: { linked: boolean; values: string[] }[] = [];
  for (const word of words) {
    if (ARGUMENT_SEPARATORS.has(word.text)) {
      if (word.text.startsWith("::::")) return undefined;
      groups.push({ linked: word.text.endsWith("+"), values: [] });
    } else if (word.dynamic) {
      return undefined;
    } else {
      groups.at(-1)?.values.push(word.text);
    }
  }
  let combinations: string[][] = [[]];
  for (const group of groups) {
    if (group.linked) {
      combinations = combinations.map((combination, index) => [...combination, group.values[index] ?? ""]);
    } else {
      combinations = combinations.flatMap((combination) => group.values.map((value) => [...combination, value]));
    }
    if (combinations.length > MAX_INVOCATIONS) combinations = combinations.slice(0, MAX_INVOCATIONS);
  }
  return combinations;
}

/**
 * Items written in the line by the command feeding the runner, split at `delimiter` (at blanks and
 * newlines when undefined); undefined when they are not known.
 */
function producerItems(producer: SimpleCommand | undefined, delimiter: string | undefined): string[] | undefined {
  const name = commandBaseName(producer?.words[0]);
  const args = producer?.words.slice(1) ?? [];
  if (args.some((arg) => arg.dynamic)) return undefined;
  if (name === "echo" || name === "printf") {
    const written = args.filter((arg) => !/^-[neE]+$/.test(arg.text)).map((arg) => arg.text);
    if (delimiter !== undefined)
      return written
        .join(" ")
        .replace(/\\n/g, "\n")
        .split(delimiter)
        .map((item) => item.trim())
        .filter((item) => item !== "");
    return written.flatMap((text) => text.split(/\\n|\s+/)).filter((text) => text !== "");
  }
  if (name === "ls") {
    const listed = parseOptions(args).positionals;
    return (listed.length === 0 ? ["."] : listed.map((directory) => directory.text)).map(
      (directory) => `${directory.replace(/\/$/, "")}/*`,
    );
  }
  return undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
