import fc from "fast-check";
import { createCommandAnalyser } from "../../../src/tripwires/commands/command-analyser.ts";
import type { PathContext } from "../../../src/tripwires/commands/path-resolution.ts";

/** Shared parts of the generated tests of the destructive families (issue #34). */
export const analyser = createCommandAnalyser({ protectedBranches: ["main", "master"], cacheSize: 0 });
export const workspace: PathContext = { cwd: "/work/repo", workspaceRoot: "/work/repo", home: "/home/agent" };
/** An agent's own tool call: no cwd, no workspace, no home. */
export const agentStep: PathContext = { cwd: undefined, workspaceRoot: undefined, home: undefined };
export const RUNS = { numRuns: 60 };
export const SLOW = { timeout: 60_000 };

export function rulesOf(command: string, context: PathContext = workspace): string[] {
  return [...new Set(analyser.analyseShell(command, context).findings.map((finding) => finding.ruleId))].sort();
}

export const identifier = fc
  .stringMatching(/^[a-z_][a-z0-9_]{0,7}$/)
  .filter(
    (name) =>
      ![
        "do",
        "done",
        "if",
        "fi",
        "then",
        "in",
        "for",
        "case",
        "esac",
        "while",
        "until",
        "function",
        "time",
        "select",
        "elif",
        "else",
      ].includes(name),
  );
export const host = fc.stringMatching(/^[a-z]{1,8}\.(example|test)$/);
export const url = fc
  .tuple(host, fc.stringMatching(/^[a-z0-9]{1,8}(\.sh)?$/))
  .map(([name, path]) => `https://${name}/${path}`);

/** Ways to write a command as data: it must never alert. */
export const AS_DATA = [
  (line: string) => `echo '${line}'`,
  (line: string) => `git commit -m '${line}'`,
  (line: string) => `cat <<'EOF' > notes.md\n${line}\nEOF`,
  (line: string) => `grep -F '${line}' README.md`,
];
export const quotable = (line: string): boolean => !line.includes("'");
