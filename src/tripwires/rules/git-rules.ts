import type { DestructiveRule } from "./rule-definition.ts";

/** Losing a repository's history or uncommitted work. (rule-definition.ts holds the ids; destructive-rules.ts the lookup.) */
export const GIT_RULES: readonly DestructiveRule[] = [
  {
    id: "git-history-rewrite",
    version: 1,
    severity: "critical",
    description:
      "Rewriting repository history: `git filter-branch`, `git filter-repo`. (`git rebase` is not matched: it is local and recoverable from the reflog; publishing it needs a force push, which is.)",
    alerting: ["git filter-branch --tree-filter 'rm -f x' HEAD", "git filter-repo --path secrets --invert-paths"],
    benign: ["git rebase main", "git log --oneline"],
  },
  {
    id: "git-force-push",
    version: 1,
    severity: "critical",
    description:
      "Forced push (`--force`, `-f`, `+refspec`, `--mirror`), or `--force-with-lease`/`--delete` aimed at a protected branch (main, master, trunk, develop, production, release/*; configurable).",
    alerting: [
      "git push --force origin main",
      "git push -f",
      "git push origin +feature",
      "git push --force-with-lease origin main",
      "git push origin --delete master",
      "git push --mirror backup",
    ],
    benign: [
      "git push --force-with-lease",
      "git push --force-with-lease origin feature/x",
      "git push --force --force-with-lease",
      "git push -f --force-with-lease origin feature/x",
      "git push origin feature/x",
      "git push --dry-run --force origin main",
    ],
  },
  {
    id: "git-reset-hard",
    version: 1,
    severity: "warning",
    description: "`git reset --hard` discards uncommitted work.",
    alerting: ["git reset --hard", "git reset --hard HEAD~3", "git -C /work/repo reset --hard origin/main"],
    benign: ["git reset --soft HEAD~1", "git reset HEAD file.txt"],
  },
  {
    id: "git-discard-changes",
    version: 2,
    severity: "warning",
    description:
      "Discarding all uncommitted changes in the tree, the same loss as `git reset --hard`: `git " +
      "checkout -- .` / `git checkout .` (any tree-ish, `:/`, `*`), `git checkout -f`, `git restore .` " +
      "(working tree), `git switch --discard-changes` / `-f`, `git reset --merge` (drops staged " +
      "changes), `git worktree remove --force` (deletes a worktree with its changes). Restoring named " +
      "files (`git checkout -- file.py`) is routine and stays quiet.",
    alerting: [
      "git checkout -- .",
      "git checkout .",
      "git checkout HEAD -- .",
      "git restore .",
      "git restore --worktree :/",
      "git switch --discard-changes main",
      "git switch -f main",
      "git switch -qf main",
      "git -C repo switch -f main",
      "git checkout -f main",
      "git reset --merge HEAD~1",
    ],
    benign: [
      "git checkout -- file.py",
      "git checkout main",
      "git checkout -b feature",
      "git restore src/app.py",
      "git restore --staged .",
      "git switch -c feature",
      "git switch -C feature",
      "git checkout -p .",
      "git reset --keep HEAD~1",
    ],
  },
  {
    id: "git-clean-force",
    version: 1,
    severity: "warning",
    description: "`git clean -f` with `-d` or `-x` deletes untracked directories or ignored files (not a dry run).",
    alerting: ["git clean -fdx", "git clean -f -d", "git clean --force -x"],
    benign: ["git clean -n -d", "git clean --dry-run -fdx"],
  },
  {
    id: "git-branch-force-delete",
    version: 1,
    severity: "warning",
    description: "`git branch -D` (or `--delete --force`) deletes a branch even if unmerged.",
    alerting: ["git branch -D feature", "git branch --delete --force old"],
    benign: ["git branch -d merged-feature", "git branch -a"],
  },
  {
    id: "git-stash-drop",
    version: 1,
    severity: "warning",
    description:
      "`git stash drop` / `git stash clear` throw away stashed work (recoverable only by hunting " +
      "dangling commits).",
    alerting: ["git stash drop", "git stash drop stash@{2}", "git stash clear"],
    benign: ["git stash", "git stash pop", "git stash list"],
  },
];
