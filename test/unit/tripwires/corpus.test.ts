import { describe, expect, it } from "vitest";
import { DESTRUCTIVE_RULE_IDS } from "../../../src/tripwires/rules/rule-definition.ts";
import { evaluateCorpus, formatScore, loadCorpus } from "./corpus-evaluation.ts";

describe("labelled destructive-command corpus", () => {
  const rows = loadCorpus();
  const score = evaluateCorpus(rows);

  it("has at least 800 rows, benign look-alikes, obfuscations and SQL", () => {
    expect(rows.length).toBeGreaterThanOrEqual(800);
    expect(rows.filter((row) => row.label === "benign").length).toBeGreaterThanOrEqual(300);
    expect(rows.filter((row) => row.kind === "sql").length).toBeGreaterThanOrEqual(20);
    for (const row of rows) if (row.rule !== undefined) expect(DESTRUCTIVE_RULE_IDS).toContain(row.rule);
  });

  it("reaches precision and recall of 1.000, with the expected rule on every hit", () => {
    console.log(formatScore(score));
    expect(score.precision).toBe(1);
    expect(score.recall).toBe(1);
    expect(score.wrongRule.map((result) => result.row.command)).toEqual([]);
  });

  it("covers every destructive rule with at least one labelled row", () => {
    const labelled = new Set(rows.map((row) => row.rule));
    for (const id of DESTRUCTIVE_RULE_IDS) expect(labelled.has(id), id).toBe(true);
  });

  // The families of issue #10: each must be present with both labels (dangerous members and look-alikes).
  const families: Readonly<Record<string, (command: string) => boolean>> = {
    "redirect among the words": (command) =>
      /^\S+(\s+\S+)*\s+[0-9&]?[<>]{1,2}[&|]?\S*\s+-/.test(command) || /^[0-9&]?[<>]/.test(command),
    "command substitution in a redirect or here-document": (command) =>
      /[<>]\s*[$`]|<<</.test(command) || command.includes("<<"),
    "find -delete / -exec": (command) => /(^|\s)find\s/.test(command) && /-delete|-exec/.test(command),
    "fan-out runners and busybox": (command) => /\b(xargs|parallel|busybox|toybox)\b/.test(command),
    "builtin cd / env -P": (command) => /\bbuiltin cd\b|\benv -P\b/.test(command),
    "git discard-all (checkout/restore/switch)": (command) => /\bgit\b.*\b(checkout|restore|switch)\b/.test(command),
    "force push with a lease": (command) => /--force-with-lease/.test(command) && /--force(\s|$)|-f\b/.test(command),
    "unknown variables in paths": (command) => /^rm\s.*\$\{?[A-Za-z_]/.test(command),
    "rm -rf mentioned as data": (command) =>
      /rm -rf/.test(command) && /^(git commit|echo|printf|grep|cat|python3? -c)/.test(command),
    // The families of issue #34.
    "remote scripts (curl | sh and relatives)": (command) =>
      /\b(curl|wget)\b/.test(command) && /\b(sh|bash|zsh|python3|perl|source)\b|\|\s*\.|<\(/.test(command),
    "commands over ssh": (command) => /^ssh\s/.test(command),
    "variables and decoded code in command position": (command) =>
      /(^|[;&|]\s*|-c\s+"?)\$|\beval\b|base64\s+(-d|--decode)/.test(command),
    "writes into system and start-up files": (command) =>
      /(>|\btee\b|\bcp\b|\bmv\b|\binstall\b|\bdd\b|sed -i|truncate|-fprint|-fls)/.test(command) &&
      /(\/etc|\/usr|\/bin|\/var\/log|\/boot|\/lib|authorized_keys|\.bashrc|\.profile|\.zshrc)/.test(command),
    "interpreter one-liners": (command) => /\b(python3?|perl|node|ruby)\s+(-[a-zA-Z]*[ce]\b|-\s)/.test(command),
    "fork bombs": (command) => /\(\)\s*\{|\bfork\b/.test(command),
    "cloud deletes": (command) => /^(aws|gcloud|gsutil|az|bq)\s/.test(command),
    "cluster deletes (kubectl, terraform, helm)": (command) =>
      /^(kubectl|oc|terraform|tofu|terragrunt|helm)\s/.test(command),
    "git clean": (command) => /\bgit\b.*\bclean\b/.test(command),
    "git stash and reset --merge/--keep": (command) => /\bgit\b.*\b(stash|reset --(merge|keep))\b/.test(command),
    "filesystems in a file or on a device": (command) => /\b(mkfs(\.\w+)?|mkswap|wipefs|mke2fs)\b/.test(command),
    "files under a home directory": (command) => /\/(home|Users)\/\w+|~\//.test(command) && /\brm\b/.test(command),
  };
  for (const [family, matches] of Object.entries(families)) {
    it(`covers "${family}" with both labels`, () => {
      const members = rows.filter((row) => matches(row.command));
      expect(
        members.filter((row) => row.label === "destructive").length,
        `${family}: destructive rows`,
      ).toBeGreaterThan(0);
      expect(members.filter((row) => row.label === "benign").length, `${family}: benign rows`).toBeGreaterThan(0);
    });
  }
});
