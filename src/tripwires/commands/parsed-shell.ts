/** A command line as the parser hands it to the analysers: the simple commands it would run. */

export interface ShellWord {
  /** The word after quote removal and the expansions we can resolve. */
  readonly text: string;
  /** True when part of the word is an expansion whose value cannot be known statically. */
  readonly dynamic: boolean;
}

export interface ShellRedirect {
  readonly operator: string;
  readonly target: ShellWord;
}

export interface SimpleCommand {
  /** argv as the shell would build it: field splitting of `$IFS` already applied. */
  readonly words: readonly ShellWord[];
  readonly redirects: readonly ShellRedirect[];
  /** Body of a here-document or here-string fed to this command, when static. */
  readonly stdinText: string | undefined;
  /** The command writing into this one's stdin when it sits in a pipeline. */
  readonly pipedFrom: SimpleCommand | undefined;
}

export interface ParsedShell {
  readonly commands: readonly SimpleCommand[];
  /**
   * Why the commands may be incomplete: the grammar reported an error somewhere (commands are
   * still extracted best-effort), or the line exceeds a bound of SHELL_BOUNDS (none extracted).
   */
  readonly unparsed: string | undefined;
}
