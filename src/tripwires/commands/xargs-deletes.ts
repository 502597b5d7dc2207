import type { DestructiveFinding } from "./command-analysis.ts";
import { commandBaseName, joinWords, parseOptions } from "./command-words.ts";
import { judgeDelete } from "./delete-targets.ts";
import { isRecursiveRm, rmTargetsFindings } from "./filesystem-commands.ts";
import { findFilters, findRoots } from "./find-commands.ts";
import type { ShellWord, SimpleCommand } from "./parsed-shell.ts";
import type { PathContext } from "./path-resolution.ts";

/** `… | xargs rm -rf`: what feeds xargs decides what gets deleted. */
export function xargsRmFindings(
  args: readonly ShellWord[],
  words: readonly ShellWord[],
  producer: SimpleCommand | undefined,
  context: PathContext,
): DestructiveFinding[] {
  const recursive = isRecursiveRm(args);
  const label = joinWords(words);
  const findings = rmTargetsFindings(parseOptions(args).positionals, recursive, label, context);
  const producerName = commandBaseName(producer?.words[0]);
  const producerArgs = producer?.words.slice(1) ?? [];
  let judged: { target: ShellWord; filtered: boolean }[] | undefined;
  if (producerName === "find") {
    // Same judgement as `find … -delete`: find walks its roots recursively.
    return [
      ...findings,
      ...findRoots(producerArgs).flatMap((root) => {
        const filters = findFilters(producerArgs, root.text);
        const targets = [judgeDelete(root, true, filters.restricted, context)];
        if (filters.selectsGitDir && !root.dynamic)
          targets.push(
            judgeDelete({ text: `${root.text.replace(/\/+$/, "")}/.git`, dynamic: false }, true, false, context),
          );
        return targets.flatMap((verdict) =>
          verdict === undefined
            ? []
            : [
                {
                  ruleId: verdict.ruleId,
                  command: label,
                  path: verdict.path,
                  detail: `xargs deletes what find lists under ${verdict.path}`,
                },
              ],
        );
      }),
    ];
  } else if (producerName === "echo" || producerName === "printf") {
    judged = producerArgs
      .filter((arg) => !arg.text.startsWith("-"))
      .flatMap((arg) =>
        arg.text
          .split(/\\n|\s+/)
          .filter((text) => text !== "")
          .map((text) => ({ target: { text, dynamic: arg.dynamic }, filtered: false })),
      );
  } else if (producerName === "ls") {
    const listed = parseOptions(producerArgs).positionals;
    judged = (listed.length === 0 ? [{ text: ".", dynamic: false }] : listed).map((directory) => ({
      target: { text: `${directory.text}/*`, dynamic: directory.dynamic },
      filtered: false,
    }));
  }
  if (judged === undefined) {
    return recursive
      ? [
          ...findings,
          {
            ruleId: "fs-delete-dynamic-target",
            command: label,
            path: undefined,
            detail: "recursive delete of targets read from stdin",
          },
        ]
      : findings;
  }
  for (const { target, filtered } of judged) {
    const verdict = judgeDelete(target, recursive, filtered, context);
    if (verdict !== undefined)
      findings.push({
        ruleId: verdict.ruleId,
        command: label,
        path: verdict.path,
        detail: `xargs ${recursive ? "recursive " : ""}delete of ${verdict.path}`,
      });
  }
  return findings;
}
