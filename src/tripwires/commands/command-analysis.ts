import type { DestructiveRuleId } from "../rules/rule-definition.ts";

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
  /** The parser flagged a syntax error or a bound was exceeded; findings are best-effort. */
  readonly unparsed: boolean;
  /** Why `unparsed` is set, for whoever must say why a command was not judged. */
  readonly unparsedReason?: string;
}

export const EMPTY_ANALYSIS: CommandAnalysis = {
  findings: [],
  credentialReads: [],
  egressTargets: [],
  changesState: false,
  unparsed: false,
};

export function mergeAnalyses(parts: readonly CommandAnalysis[]): CommandAnalysis {
  const reason = parts.find((part) => part.unparsedReason !== undefined)?.unparsedReason;
  return {
    findings: parts.flatMap((part) => part.findings),
    credentialReads: parts.flatMap((part) => part.credentialReads),
    egressTargets: parts.flatMap((part) => part.egressTargets),
    changesState: parts.some((part) => part.changesState),
    ...(reason === undefined ? { unparsed: parts.some((part) => part.unparsed) } : unparsedBecause(reason)),
  };
}

/** The fields of an analysis that was not complete, for spreading into one. */
export function unparsedBecause(reason: string): Pick<CommandAnalysis, "unparsed" | "unparsedReason"> {
  return { unparsed: true, unparsedReason: reason };
}
