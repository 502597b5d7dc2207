import type { DestructiveRuleId } from "../rules/destructive-rules.ts";

/** One destructive match inside a command or statement. */
export interface DestructiveFinding {
  readonly ruleId: DestructiveRuleId;
  /** The simple command (argv joined) or SQL statement that matched; none for file events. */
  readonly command: string | undefined;
  readonly path: string | undefined;
  readonly detail: string;
}

/**
 * What a command line does, as far as the detectors care. Computed once per distinct
 * (command, cwd, workspace_root, home) and cached, so it must not depend on run state.
 */
export interface CommandAnalysis {
  readonly findings: readonly DestructiveFinding[];
  /** Credential files the command reads (resolved paths). */
  readonly credentialReads: readonly string[];
  /** Hosts or URLs the command sends data to. */
  readonly egressTargets: readonly string[];
  /** False only when every command in the line is known to be read-only (for redundancy). */
  readonly changesState: boolean;
  /** The parser flagged a syntax error; findings are best-effort. */
  readonly unparsed: boolean;
}

export const EMPTY_ANALYSIS: CommandAnalysis = { findings: [], credentialReads: [], egressTargets: [], changesState: false, unparsed: false };

export function mergeAnalyses(parts: readonly CommandAnalysis[]): CommandAnalysis {
  return {
    findings: parts.flatMap((part) => part.findings),
    credentialReads: parts.flatMap((part) => part.credentialReads),
    egressTargets: parts.flatMap((part) => part.egressTargets),
    changesState: parts.some((part) => part.changesState),
    unparsed: parts.some((part) => part.unparsed),
  };
}
