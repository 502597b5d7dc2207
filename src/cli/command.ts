/**
 * One `agentops` sub-command. Every command answers `--help` with its usage text, and reports a
 * bad argument as a UsageError naming the flag and the fix, never as a stack trace.
 */
export interface CliCommand {
  readonly name: string;
  /** One line for the top-level help. */
  readonly summary: string;
  /** The full usage text printed by `agentops <name> --help`. */
  readonly usage: string;
  /** Runs the command; the resolved number is the process exit code. */
  run(argv: readonly string[]): Promise<number>;
}

/** A user's mistake on the command line: which flag, what is wrong, how to fix it. */
export class UsageError extends Error {
  readonly field: string;
  readonly fix: string;
  constructor(field: string, problem: string, fix: string) {
    super(`${field}: ${problem}. Fix: ${fix}`);
    this.name = "UsageError";
    this.field = field;
    this.fix = fix;
  }
}
