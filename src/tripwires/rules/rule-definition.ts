/**
 * The destructive-action rules as versioned data. Matching code refers to rules by id only; the
 * severity, version, wording and examples live once, in the family files beside this one
 * (filesystem, git, data and cloud, execution). Bump `version` whenever what a rule matches
 * changes, so an alert says which definition produced it. Every example is also part of the
 * labelled corpus test (test/unit/tripwires/rules-examples.test.ts).
 */
export type Severity = "warning" | "critical";

export interface DestructiveRule {
  readonly id: DestructiveRuleId;
  readonly version: number;
  readonly severity: Severity;
  readonly description: string;
  /** Commands (or SQL) that must alert with this rule, run in cwd=/work/repo, workspace_root=/work/repo. */
  readonly alerting: readonly string[];
  /** Look-alikes that must not alert at all. */
  readonly benign: readonly string[];
}

export const DESTRUCTIVE_RULE_IDS = [
  "fs-delete-critical-path",
  "fs-delete-workspace-root",
  "fs-delete-git-dir",
  "fs-delete-outside-workspace",
  "fs-delete-dynamic-target",
  "fs-shred",
  "disk-format",
  "disk-raw-write",
  "perm-recursive-system",
  "git-history-rewrite",
  "git-force-push",
  "git-reset-hard",
  "git-discard-changes",
  "git-clean-force",
  "git-branch-force-delete",
  "sql-drop",
  "sql-truncate",
  "sql-delete-without-where",
  "sql-update-without-where",
  "infra-terraform-destroy",
  "infra-kubectl-delete",
  "infra-helm-uninstall",
  "cloud-destructive-delete",
  "cloud-delete",
  "exec-remote-script",
  "exec-dynamic-command",
  "fs-write-system-file",
  "fs-write-shell-profile",
  "resource-fork-bomb",
  "git-stash-drop",
  "credential-exfiltration",
] as const;

export type DestructiveRuleId = (typeof DESTRUCTIVE_RULE_IDS)[number];
