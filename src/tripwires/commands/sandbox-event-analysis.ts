import type { SandboxEvent } from "../../contract/facts.ts";
import type { CommandAnalyser } from "./command-analyser.ts";
import { EMPTY_ANALYSIS, type CommandAnalysis, type DestructiveFinding } from "./command-analysis.ts";
import { isCredentialPath } from "./credential-paths.ts";
import { isLocalTarget } from "./data-flow-commands.ts";
import { judgeDeletedPath } from "./delete-targets.ts";
import { resolvePath, type PathContext } from "./path-resolution.ts";
import { judgeWrite } from "./system-writes.ts";

/**
 * What one sandbox event means for the detectors, per its kind: commands are parsed, file events
 * are judged by path, network events are egress unless local.
 */
export function analyseSandboxEvent(
  event: SandboxEvent,
  analyser: CommandAnalyser,
  configuredHome: string | undefined,
): CommandAnalysis {
  const context: PathContext = {
    cwd: event.cwd ?? event.workspace_root,
    workspaceRoot: event.workspace_root,
    home: configuredHome ?? inferHome(event.workspace_root),
  };
  const command = event.command ?? (event.argv === undefined ? undefined : event.argv.map(quoteArgument).join(" "));
  switch (event.kind) {
    case "exec":
      return command === undefined
        ? { ...EMPTY_ANALYSIS, changesState: true }
        : analyser.analyseShell(command, context);
    case "git": {
      if (command === undefined) return { ...EMPTY_ANALYSIS, changesState: true };
      // A git event may carry "push --force" or "git push --force": make it a git command line.
      const line = /^\s*(\S*\/)?git(\s|$)/.test(command) ? command : `git ${command}`;
      const analysis = analyser.analyseShell(line, context);
      return event.target !== undefined &&
        !isLocalTarget(event.target) &&
        /\bpush\b/.test(line) &&
        analysis.egressTargets.length === 0 &&
        /^[a-z][a-z0-9+.-]*:\/\//i.test(event.target)
        ? { ...analysis, egressTargets: [event.target] }
        : analysis;
    }
    case "sql":
      return command === undefined ? { ...EMPTY_ANALYSIS, changesState: true } : analyser.analyseSqlStatement(command);
    case "file_read": {
      const path = event.path === undefined ? undefined : (resolvePath(event.path, context) ?? event.path);
      return { ...EMPTY_ANALYSIS, credentialReads: path !== undefined && isCredentialPath(path) ? [path] : [] };
    }
    case "file_write":
      return { ...EMPTY_ANALYSIS, changesState: true, findings: fileWriteFindings(event.path, context) };
    case "file_delete":
      return { ...EMPTY_ANALYSIS, changesState: true, findings: fileDeleteFindings(event, context) };
    case "network":
      return {
        ...EMPTY_ANALYSIS,
        egressTargets: event.target === undefined || isLocalTarget(event.target) ? [] : [event.target],
      };
  }
}

/**
 * argv holds words that were never shell syntax: `2>/dev/null`, `;` or `|` in argv are plain
 * arguments, so anything beyond plainly safe characters is single-quoted before parsing.
 */
function quoteArgument(arg: string): string {
  return arg !== "" && /^[A-Za-z0-9_@%+=:,./~*?[\]{}-]+$/.test(arg) && !arg.startsWith("~")
    ? arg
    : `'${arg.replaceAll("'", "'\\''")}'`;
}

/** A file_write event, or an agent tool about to write a file (Write, Edit): judged by its path. */
export function fileWriteFindings(path: string | undefined, context: PathContext): DestructiveFinding[] {
  // A written file's new contents replace the old ones, as a truncating redirect does.
  const verdict = path === undefined ? undefined : judgeWrite(path, true, context);
  return verdict === undefined
    ? []
    : [
        {
          ruleId: verdict.ruleId,
          command: undefined,
          path: verdict.path,
          detail: `write of ${verdict.what} ${verdict.path}`,
        },
      ];
}

function fileDeleteFindings(event: SandboxEvent, context: PathContext): DestructiveFinding[] {
  if (event.path === undefined) return [];
  // A file_delete event is one observed deletion; deleting the workspace root or `.git` itself
  // is as bad as `rm -rf` of it, so directories at those places are judged as recursive.
  const resolved = resolvePath(event.path, context) ?? event.path;
  const recursive =
    (/(^|\/)\.git(\/|$)/.test(resolved) && !resolved.endsWith(".lock")) ||
    resolved === "/" ||
    resolved === context.workspaceRoot;
  const verdict = judgeDeletedPath(event.path, recursive, context);
  return verdict === undefined
    ? []
    : [{ ruleId: verdict.ruleId, command: undefined, path: verdict.path, detail: `file_delete of ${verdict.path}` }];
}

/** /home/<user>/…, /Users/<user>/… and /root/… workspaces tell us whose home it is. */
export function inferHome(workspaceRoot: string | undefined): string | undefined {
  if (workspaceRoot === undefined) return undefined;
  const match = /^(\/home\/[^/]+|\/Users\/[^/]+|\/root)(\/|$)/.exec(workspaceRoot);
  return match?.[1];
}
