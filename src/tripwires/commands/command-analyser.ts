import { EMPTY_ANALYSIS, unparsedBecause, type CommandAnalysis } from "./command-analysis.ts";
import type { PathContext } from "./path-resolution.ts";
import { analyseShellCommand, type ShellAnalysisOptions } from "./shell-analysis.ts";
import { AnalysisDeadlineError } from "./analysis-deadline.ts";
import { analyseSql, sqlChangesState } from "./sql/sql-analysis.ts";

/**
 * Memoised command analysis. Parsing is the expensive part of the monitor and agents repeat the
 * same commands a lot, so results are cached by (command, cwd, workspace_root, home) in a bounded
 * FIFO cache. The cache is a pure memo: the analysis depends on nothing else, so it is not run state and
 * is never serialised.
 */
export interface CommandAnalyser {
  analyseShell(command: string, context: PathContext): CommandAnalysis;
  analyseSqlStatement(sql: string): CommandAnalysis;
}

export interface CommandAnalyserOptions extends ShellAnalysisOptions {
  readonly cacheSize: number;
  /** Told of each error the analysers threw (the result is then unparsed), e.g. to retire a WASM instance. */
  readonly onFailure?: (error: unknown) => void;
}

export function createCommandAnalyser(options: CommandAnalyserOptions): CommandAnalyser {
  // Two levels (context, then command) so a lookup never builds a long concatenated key.
  const byContext = new Map<string, Map<string, CommandAnalysis>>();
  let size = 0;
  // Insertion order across both levels, oldest first, for eviction.
  const order: [Map<string, CommandAnalysis>, string][] = [];
  let orderStart = 0;
  const remember = (contextKey: string, command: string, compute: () => CommandAnalysis): CommandAnalysis => {
    let commands = byContext.get(contextKey);
    const hit = commands?.get(command);
    if (hit !== undefined) return hit;
    const value = compute();
    if (options.cacheSize === 0) return value;
    if (commands === undefined) {
      commands = new Map();
      byContext.set(contextKey, commands);
    }
    commands.set(command, value);
    order.push([commands, command]);
    size++;
    // Evict the oldest insertion (FIFO): cheaper than LRU on the hot path and as bounded.
    while (size > options.cacheSize) {
      const oldest = order[orderStart++];
      if (oldest === undefined) break;
      oldest[0].delete(oldest[1]);
      size--;
    }
    if (orderStart > 4096 && orderStart * 2 > order.length) {
      order.splice(0, orderStart);
      orderStart = 0;
    }
    return value;
  };
  return {
    analyseShell: (command, context) =>
      remember(`${context.cwd ?? ""}\u0000${context.workspaceRoot ?? ""}\u0000${context.home ?? ""}`, command, () =>
        guarded(() => analyseShellCommand(command, context, options), options.onFailure),
      ),
    analyseSqlStatement: (sql) =>
      remember("\u0000sql", sql, () =>
        guarded(
          () => ({
            findings: analyseSql(sql),
            credentialReads: [],
            egressTargets: [],
            changesState: sqlChangesState(sql),
            unparsed: false,
          }),
          options.onFailure,
        ),
      ),
  };
}

/**
 * A record the analysers cannot handle (e.g. nesting deep enough to exhaust the stack) must not
 * stop the monitor: it is reported as unparsed and assumed to change state. Running out of time
 * (withinDeadline) is not a property of the record: it propagates, uncached.
 */
function guarded(analyse: () => CommandAnalysis, onFailure: ((error: unknown) => void) | undefined): CommandAnalysis {
  try {
    return analyse();
  } catch (error) {
    if (error instanceof AnalysisDeadlineError) throw error;
    onFailure?.(error);
    const why = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return {
      ...EMPTY_ANALYSIS,
      changesState: true,
      ...unparsedBecause(`the analyser failed on it (${why.slice(0, 200)})`),
    };
  }
}
