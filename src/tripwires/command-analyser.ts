import type { CommandAnalysis } from "./command-analysis.ts";
import type { PathContext } from "./path-resolution.ts";
import { analyseShellCommand, type ShellAnalysisOptions } from "./shell-analysis.ts";
import { analyseSql, sqlChangesState } from "./sql-analysis.ts";

/**
 * Memoised command analysis. Parsing is the expensive part of the monitor and agents repeat the
 * same commands a lot, so results are cached by (command, cwd, workspace_root, home) in a bounded
 * LRU. The cache is a pure memo: the analysis depends on nothing else, so it is not run state and
 * is never serialised.
 */
export interface CommandAnalyser {
  analyseShell(command: string, context: PathContext): CommandAnalysis;
  analyseSqlStatement(sql: string): CommandAnalysis;
}

export function createCommandAnalyser(options: ShellAnalysisOptions & { readonly cacheSize: number }): CommandAnalyser {
  const cache = new Map<string, CommandAnalysis>();
  const remember = (key: string, compute: () => CommandAnalysis): CommandAnalysis => {
    const hit = cache.get(key);
    if (hit !== undefined) {
      cache.delete(key);
      cache.set(key, hit);
      return hit;
    }
    const value = compute();
    cache.set(key, value);
    if (cache.size > options.cacheSize) {
      const oldest = cache.keys().next();
      if (oldest.done !== true) cache.delete(oldest.value);
    }
    return value;
  };
  return {
    analyseShell: (command, context) => remember(`sh\u0000${context.cwd ?? ""}\u0000${context.workspaceRoot ?? ""}\u0000${context.home ?? ""}\u0000${command}`, () => analyseShellCommand(command, context, options)),
    analyseSqlStatement: (sql) => remember(`sql\u0000${sql}`, () => ({ findings: analyseSql(sql), credentialReads: [], egressTargets: [], changesState: sqlChangesState(sql), unparsed: false })),
  };
}
