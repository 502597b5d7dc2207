import type { DestructiveFinding } from "./command-analysis.ts";
import { joinWords, parseOptions } from "./command-words.ts";
import type { ShellWord } from "./parsed-shell.ts";

/** git subcommands that rewrite or discard history or work, and pushes that leave the machine. */

export interface GitAnalysis {
  readonly findings: DestructiveFinding[];
  /** A push to an explicit URL or host: data leaves for a remote the run did not configure. */
  readonly egressTarget: string | undefined;
  /** The subcommand, for the read-only/state-changing decision. */
  readonly subcommand: string | undefined;
  /** `git -C dir`: the directory git works in. */
  readonly workingDirectory: string | undefined;
}

const GLOBAL_OPTIONS_WITH_VALUE = new Set([
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--exec-path",
  "--config-env",
]);
export const READ_ONLY_GIT = new Set([
  "status",
  "log",
  "diff",
  "show",
  "rev-parse",
  "ls-files",
  "ls-tree",
  "blame",
  "describe",
  "shortlog",
  "cat-file",
  "grep",
  "remote",
  "config",
  "help",
  "version",
  "reflog",
  "whatchanged",
  "show-ref",
  "for-each-ref",
  "rev-list",
  "merge-base",
]);

export function splitGitArgs(args: readonly ShellWord[]): {
  subcommand: string | undefined;
  rest: readonly ShellWord[];
  workingDirectory: string | undefined;
} {
  let workingDirectory: string | undefined;
  for (let index = 0; index < args.length; index++) {
    const text = args[index]?.text ?? "";
    if (GLOBAL_OPTIONS_WITH_VALUE.has(text)) {
      if (text === "-C") workingDirectory = args[index + 1]?.text;
      index++;
    } else if (text.startsWith("-")) {
      continue; // --no-pager, -P, --bare, --git-dir=x ...
    } else {
      return { subcommand: text, rest: args.slice(index + 1), workingDirectory };
    }
  }
  return { subcommand: undefined, rest: [], workingDirectory };
}

export function analyseGit(
  args: readonly ShellWord[],
  words: readonly ShellWord[],
  protectedBranches: readonly string[],
): GitAnalysis {
  const command = joinWords(words);
  const { subcommand, rest, workingDirectory } = splitGitArgs(args);
  const findings: DestructiveFinding[] = [];
  let egressTarget: string | undefined;
  const options = parseOptions(rest);
  const finding = (ruleId: DestructiveFinding["ruleId"], detail: string): void => {
    findings.push({ ruleId, command, path: workingDirectory, detail });
  };
  const helpOnly = rest.some((arg) => arg.text === "--help" || arg.text === "-h");
  switch (helpOnly ? "help" : subcommand) {
    case "filter-branch":
    case "filter-repo":
      finding("git-history-rewrite", `git ${subcommand} rewrites history`);
      break;
    case "reset":
      if (options.longFlags.has("hard")) finding("git-reset-hard", "git reset --hard discards uncommitted changes");
      // --merge drops staged changes; --keep refuses to touch a file with local changes, so it loses none.
      else if (options.longFlags.has("merge")) {
        finding("git-discard-changes", "git reset --merge discards staged changes");
      }
      break;
    case "worktree": {
      const [action, ...more] = rest.filter((arg) => !arg.text.startsWith("-"));
      const forced = rest.some((arg) => arg.text === "--force" || /^-[a-zA-Z]*f[a-zA-Z]*$/.test(arg.text));
      if ((action?.text === "remove" || action?.text === "rm") && forced && more.length > 0) {
        finding("git-discard-changes", "git worktree remove --force deletes a worktree with its uncommitted changes");
      }
      break;
    }
    case "stash": {
      const action = rest.find((arg) => !arg.text.startsWith("-"))?.text;
      if (action === "drop" || action === "clear") {
        finding("git-stash-drop", `git stash ${action} throws away stashed work`);
      }
      break;
    }
    case "checkout":
    case "restore":
    case "switch": {
      const discarded = discardsWorkingTree(
        subcommand === "checkout" || subcommand === "restore" ? subcommand : "switch",
        rest,
      );
      if (discarded !== undefined) finding("git-discard-changes", discarded);
      break;
    }
    case "clean":
      if (
        !options.shortFlags.has("n") &&
        !options.longFlags.has("dry-run") &&
        (options.shortFlags.has("f") || options.longFlags.has("force")) &&
        (options.shortFlags.has("d") || options.shortFlags.has("x") || options.shortFlags.has("X"))
      ) {
        finding("git-clean-force", "git clean -f with -d/-x deletes untracked directories or ignored files");
      }
      break;
    case "branch":
      if (
        options.shortFlags.has("D") ||
        ((options.shortFlags.has("d") || options.longFlags.has("delete")) &&
          (options.shortFlags.has("f") || options.longFlags.has("force")))
      ) {
        finding("git-branch-force-delete", "branch deleted even if unmerged");
      }
      break;
    case "push": {
      const push = analysePush(rest, protectedBranches);
      if (push.violation !== undefined) finding("git-force-push", push.violation);
      egressTarget = push.foreignRemote;
      break;
    }
    default:
      break;
  }
  return { findings, egressTarget, subcommand, workingDirectory };
}

/**
 * Pathspecs that name the whole tree (of the directory git runs in): `.`, `:/`, `*`, `:(top)`…
 * Named files are what agents restore routinely (`git checkout -- file.py` reverts their own edit).
 */
const WHOLE_TREE_PATHSPECS =
  /^(\.\/?|\.\/\*|\*|\*\*|:\/?|:\/\.|:\/\*|:\(top\)\.?|:\(top\)\*|:\(glob\)\*\*|:\(glob\)\*\*\/\*|:\(top,glob\)\*\*)$/;

/** checkout / restore / switch that throw away uncommitted work in the whole tree: what they discard, or undefined. */
function discardsWorkingTree(
  subcommand: "checkout" | "restore" | "switch",
  args: readonly ShellWord[],
): string | undefined {
  if (subcommand === "switch") {
    const options = parseOptions(args, "cC", ["create", "force-create", "orphan", "conflict"]);
    const discards =
      options.longFlags.has("discard-changes") || options.longFlags.has("force") || options.shortFlags.has("f");
    return discards ? "git switch --discard-changes/-f discards uncommitted changes in the whole tree" : undefined;
  }
  if (subcommand === "checkout") {
    const options = parseOptions(args, "bB", ["orphan", "conflict", "pathspec-from-file"]);
    if (options.shortFlags.has("p") || options.longFlags.has("patch")) return undefined; // interactive: the user picks hunks
    const wholeTree = options.positionals.some((word) => !word.dynamic && WHOLE_TREE_PATHSPECS.test(word.text));
    if (wholeTree) return "git checkout of the whole tree discards uncommitted changes";
    const forced = options.shortFlags.has("f") || options.longFlags.has("force");
    // `checkout -f [branch]` switches (or stays) and throws local changes away; with `--` it only restores named paths.
    const pathsGiven = args.some((word) => word.text === "--");
    return forced && !pathsGiven ? "git checkout -f discards uncommitted changes" : undefined;
  }
  const options = parseOptions(args, "s", ["source", "pathspec-from-file"]);
  if (options.shortFlags.has("p") || options.longFlags.has("patch")) return undefined;
  // --staged alone only unstages; the working tree is restored by default or with --worktree.
  const worktree =
    options.shortFlags.has("W") ||
    options.longFlags.has("worktree") ||
    !(options.shortFlags.has("S") || options.longFlags.has("staged"));
  const wholeTree = options.positionals.some((word) => !word.dynamic && WHOLE_TREE_PATHSPECS.test(word.text));
  return worktree && wholeTree ? "git restore of the whole tree discards uncommitted changes" : undefined;
}

function analysePush(
  args: readonly ShellWord[],
  protectedBranches: readonly string[],
): { violation: string | undefined; foreignRemote: string | undefined } {
  const options = parseOptions(args, "o", ["repo", "push-option", "receive-pack", "exec"]);
  const [remote, ...refspecs] = options.positionals.map((word) => word.text);
  const foreignRemote = remote !== undefined && isUrlRemote(remote) ? remote : undefined;
  if (options.shortFlags.has("n") || options.longFlags.has("dry-run")) return { violation: undefined, foreignRemote };
  const destinations = refspecs.map(refspecDestination);
  // The last of --force-with-lease / --no-force-with-lease wins. A lease protects every ref the push
  // updates, also when --force, -f or a +refspec is given with it (git checks the lease first).
  let lease = false;
  for (const word of args) {
    if (word.text === "--force-with-lease" || word.text.startsWith("--force-with-lease=")) lease = true;
    else if (word.text === "--no-force-with-lease") lease = false;
  }
  const forced =
    options.longFlags.has("mirror") ||
    (!lease &&
      (options.shortFlags.has("f") ||
        options.longFlags.has("force") ||
        refspecs.some((refspec) => refspec.startsWith("+"))));
  if (forced)
    return {
      violation: `forced push${destinations.length > 0 ? ` to ${destinations.join(", ")}` : ""}`,
      foreignRemote,
    };
  const protectedTargets = destinations.filter((branch) => isProtected(branch, protectedBranches));
  const deleting =
    options.shortFlags.has("d") ||
    options.longFlags.has("delete") ||
    refspecs.some((refspec) => refspec.startsWith(":"));
  // With a lease, overwriting only this run's own branch is the safe way to publish a rebase; a
  // lease on a protected branch still rewrites shared history.
  if ((lease || deleting) && protectedTargets.length > 0) {
    return {
      violation: `${lease ? "force-with-lease push" : "remote branch deletion"} targeting protected ${protectedTargets.join(", ")}`,
      foreignRemote,
    };
  }
  return { violation: undefined, foreignRemote };
}

function refspecDestination(refspec: string): string {
  const withoutForce = refspec.replace(/^\+/, "");
  const destination = withoutForce.includes(":") ? withoutForce.slice(withoutForce.indexOf(":") + 1) : withoutForce;
  return destination.replace(/^refs\/heads\//, "");
}

function isProtected(branch: string, protectedBranches: readonly string[]): boolean {
  return protectedBranches.some((pattern) =>
    pattern.endsWith("/*") ? branch.startsWith(pattern.slice(0, -1)) : branch === pattern,
  );
}

/** `https://…`, `ssh://…`, `git@host:path`, `host:path`: a remote given inline, not a configured name. */
export function isUrlRemote(remote: string): boolean {
  return (
    /^[a-z][a-z0-9+.-]*:\/\//i.test(remote) || /^[^/\s:]+@[^/\s:]+:/.test(remote) || /^[^/\s:]+\.[^/\s:]+:/.test(remote)
  );
}
