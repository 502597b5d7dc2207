// `npm run tripwires:external [DIR…]`: precision and recall of the destructive rules on independent,
// public test sets of dangerous and safe shell commands written by other guard projects:
// - fetched/dcg: the regression corpus and e2e command lists of destructive_command_guard
//   (github.com/Dicklesworthstone/destructive_command_guard: tests/corpus, tests/e2e/fixtures/commands);
// - fetched/safety-net: the `assertBlocked`/`assertAllowed` commands of claude-code-safety-net's
//   tests (github.com/kenryu42/claude-code-safety-net: tests/core), the default mode only.
// The data is fetched into the git-ignored fetched/ folder and never committed; with no DIR, every
// one of these that is present is scored.
//
// Their labels are their policy. Where our documented policy differs on purpose, the row is counted
// in the raw figures and also reported under the decision that explains it; every other
// disagreement is listed as a miss or a false alarm.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { evaluateCorpus, type CorpusResult, type CorpusRow } from "./corpus-evaluation.ts";

const KNOWN_SETS = ["fetched/dcg", "fetched/safety-net"];
const directories =
  process.argv.length > 2 ? process.argv.slice(2) : KNOWN_SETS.filter((directory) => existsSync(directory));
if (directories.length === 0 || directories.some((directory) => !existsSync(directory))) {
  console.error(
    "tripwires:external: no test set found. Fetch the repositories named at the top of this script and copy " +
      `the folders it names into ${KNOWN_SETS.join(" and ")} (see docs/tripwires.md).`,
  );
  process.exit(2);
}

interface ExternalCase {
  readonly command: string;
  readonly label: CorpusRow["label"];
  readonly source: string;
}

/** Reads `command = …` and `expected = …` / `expected_decision = …` of each `[[case]]` (basic and literal TOML strings). */
function readToml(path: string): ExternalCase[] {
  const cases: ExternalCase[] = [];
  let command: string | undefined;
  let expected: string | undefined;
  const flush = (): void => {
    if (command !== undefined && (expected === "deny" || expected === "allow"))
      cases.push({ command, label: expected === "deny" ? "destructive" : "benign", source: path });
    command = undefined;
    expected = undefined;
  };
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line.trim() === "[[case]]") flush();
    const match = /^(command|expected|expected_decision)\s*=\s*("(?:[^"\\]|\\.)*"|'[^']*')/.exec(line);
    if (match === null) continue;
    const raw = match[2] ?? "";
    const value = raw.startsWith("'")
      ? raw.slice(1, -1)
      : (JSON.parse(
          raw.replace(/\\U([0-9a-fA-F]{8})/g, (_all, hex: string) => String.fromCodePoint(parseInt(hex, 16))),
        ) as string);
    if (match[1] === "command") command = value;
    else expected = value;
  }
  flush();
  return cases;
}

/** One command per line; `#` comments; the file name says the label. */
function readLines(path: string, label: CorpusRow["label"]): ExternalCase[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((command) => ({ command, label, source: path }));
}

/**
 * `assertBlocked('cmd', reason)` / `assertAllowed('cmd')` calls whose command is one string literal
 * and which pass no cwd; tests that switch a stricter mode on (`withEnv(…)`) are skipped.
 */
function readAssertions(path: string): ExternalCase[] {
  const quoted = String.raw`'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"`;
  const argument = String.raw`(${quoted}|\x60[^\x60$\\]*\x60)`;
  const reasonPart = String.raw`(,\s*(${quoted}|\x60[^\x60]*\x60)\s*)?`;
  const calls = new RegExp(String.raw`assert(Blocked|Allowed)\(\s*${argument}\s*${reasonPart}([,)])`, "g");
  const cases: ExternalCase[] = [];
  for (const block of readFileSync(path, "utf8").split(/\n\s*(?:test|it)\(/)) {
    if (block.includes("withEnv(")) continue;
    for (const [, kind, literal = "", , reason, end] of block.matchAll(calls)) {
      if (end === "," || (kind === "Allowed" && reason !== undefined)) continue; // a cwd or another argument follows
      const body = literal.slice(1, -1);
      const command = literal.startsWith('"')
        ? (JSON.parse(literal) as string)
        : body.replace(/\\(.)/g, (_all, char: string) => ({ n: "\n", t: "\t" })[char] ?? char);
      cases.push({ command, label: kind === "Blocked" ? "destructive" : "benign", source: path });
    }
  }
  return cases;
}

function filesUnder(root: string): string[] {
  return readdirSync(root).flatMap((name) => {
    const path = join(root, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/**
 * Where their labels differ from our documented decisions (docs/tripwires.md, "Decisions"). A
 * disagreement is put here only when the decision is written down; everything else is a miss.
 */
const POLICY: readonly { readonly decision: string; readonly matches: (command: string) => boolean }[] = [
  {
    decision: "recursive delete of a named path inside the workspace is routine (rm -rf ./build, node_modules, src)",
    matches: (command) =>
      /^rm\s+(-[a-zA-Z]+\s+|--[a-z-]+\s+)*(\.\/)?(?!\.git\b)[\w@][\w./@-]*\/?(\s+[0-9]?>\s*\S+)?$/.test(command) &&
      !command.includes(".."),
  },
  {
    decision: "restoring named files stays quiet (git checkout -- file, git restore file)",
    matches: (command) =>
      (/\bgit\s+(checkout|restore)\b.*\s(?!-)[\w-]+\.\w+$/i.test(command) ||
        /\bgit\s+checkout\b.*\s--\s+[\w.-]+$/i.test(command)) &&
      !/\s(\.|:\/|\*)(\s|$)/.test(command),
  },
  {
    decision: "git clean -f without -d/-x/-X only removes untracked files, not directories or ignored files",
    matches: (command) => /\bgit\s+clean\s+(-f|--force)$/.test(command),
  },
  {
    decision: "a dry run deletes nothing (git clean -n)",
    matches: (command) => /\bgit\s+clean\s+-[a-z]*n[a-z]*$/.test(command),
  },
  {
    decision: "scratch dirs (/tmp, /var/tmp) are throw-away: deleting there never alerts",
    matches: (command) => /(^|[\s'"(])\/(var\/)?tmp(\/|\s|$)/.test(command) && !/\.\.|xargs\s+-a\s/.test(command),
  },
  {
    decision: "find -delete / -exec rm with a narrowing filter inside the workspace is routine (*.pyc, __pycache__)",
    matches: (command) => /^(busybox\s+)?find\s+\.\s+.*-i?name\s+\S+.*(-delete|-exec)/.test(command),
  },
  {
    decision:
      "interpreter code is judged by its delete and run calls " +
      "(`rm -rf /` written as JavaScript, Ruby or Perl code is not one)",
    matches: (command) => /^(node|ruby|perl)\s+-e\s+"rm -rf/.test(command),
  },
  {
    decision: "command -v/-V describes a command and runs nothing",
    matches: (command) => /^command\s+-[vV]\s/.test(command),
  },
  {
    decision: "a word that is not a valid assignment is the command name (bash runs `A-B=2`, not git)",
    matches: (command) => /^[^\s=]*[^\w\s=][^\s=]*=\S*\s|^=/.test(command),
  },
  {
    decision: "a line bash rejects (unterminated quote) runs nothing",
    matches: (command) => (command.match(/'/g)?.length ?? 0) % 2 === 1 && !command.includes('"'),
  },
  {
    decision: "bash expands `$TMPDIR` before a prefix assignment `TMPDIR=… cmd` takes effect",
    matches: (command) => /^TMPDIR=\S+\s+rm\b.*\$TMPDIR\//.test(command),
  },
  {
    decision:
      "a runner's items written in the line are judged as the shell script they become " +
      "(`echo ok | xargs bash -c` runs the command ok; appended items after the first are $0, $1…)",
    matches: (command) =>
      /^echo\s+('[^']*'|\w+)\s*\|\s*(xargs|parallel)\s+(-I\{\}\s+)?bash\s+-c(\s+\{\})?$/.test(command),
  },
  {
    decision: "GNU xargs with an empty --replace= stops with `command too long` and runs nothing",
    matches: (command) => /\bxargs\s+--replace=\s/.test(command),
  },
  {
    decision: "git stops at an option it does not know (`--force-with-lease-if-includes`, exit 129): nothing is pushed",
    matches: (command) => /\bgit\s+push\b.*\s--force-with-lease-if-includes\b/.test(command),
  },
  // Where we alert and they allow:
  {
    decision: "any rm of a path outside the workspace alerts, recursive or not",
    matches: (command) => /^rm\s+-[a-zA-Z]+\s+\/some\/path$/.test(command),
  },
  {
    decision: "an unfiltered find . -exec rm deletes the whole workspace",
    matches: (command) => /^find\s+\.\s+-exec(dir)?\s+rm\b/.test(command),
  },
  {
    decision: "--force-with-lease aimed at a protected branch alerts",
    matches: (command) => /--force-with-lease(=\S*)?\s.*\s(main|master)$/.test(command),
  },
  {
    decision: "kubectl delete is critical whatever the resource (dcg has no kubernetes pack yet)",
    matches: (command) => /^kubectl\s+delete\b/.test(command),
  },
  {
    decision: "rm with no operand deletes nothing",
    matches: (command) => /(^|[|;&]\s*)rm\s+-[a-zA-Z]+\s*(&&|;|\||$)/.test(command),
  },
];

function policyOf(result: CorpusResult): string | undefined {
  return POLICY.find((entry) => entry.matches(result.row.command))?.decision;
}

function report(directory: string): void {
  const cases: ExternalCase[] = [];
  for (const path of filesUnder(directory).sort()) {
    if (path.endsWith(".toml") && path.includes("corpus")) cases.push(...readToml(path));
    else if (path.endsWith("dangerous.txt")) cases.push(...readLines(path, "destructive"));
    else if (path.endsWith("safe.txt")) cases.push(...readLines(path, "benign"));
    else if (path.endsWith(".test.ts")) cases.push(...readAssertions(path));
  }
  // The same command in several files counts once; a command labelled both ways is reported and skipped.
  const byCommand = new Map<string, ExternalCase[]>();
  for (const entry of cases) byCommand.set(entry.command, [...(byCommand.get(entry.command) ?? []), entry]);
  const conflicting = [...byCommand.entries()]
    .filter(([, entries]) => new Set(entries.map((entry) => entry.label)).size > 1)
    .map(([command]) => command);
  const unique = [...byCommand.values()]
    .filter((entries) => new Set(entries.map((entry) => entry.label)).size === 1)
    .map((entries) => entries[0] as ExternalCase);

  const rows: CorpusRow[] = unique.map((entry) => ({
    command: entry.command,
    cwd: "/work/repo",
    workspace_root: "/work/repo",
    kind: "shell",
    label: entry.label,
    note: relative(directory, entry.source),
  }));
  const score = evaluateCorpus(rows);
  const policyMisses = score.misses.filter((miss) => policyOf(miss) !== undefined);
  const realMisses = score.misses.filter((miss) => policyOf(miss) === undefined);
  const adjustedRecall = score.truePositives / (score.truePositives + realMisses.length);
  const policyAlarms = score.falseAlarms.filter((alarm) => policyOf(alarm) !== undefined);
  const realAlarms = score.falseAlarms.filter((alarm) => policyOf(alarm) === undefined);
  const adjustedPrecision = score.truePositives / (score.truePositives + realAlarms.length);
  const format = (value: number): string => value.toFixed(3);

  console.log(
    `external set: ${directory} (${cases.length} cases, ${unique.length} distinct commands, ` +
      `${conflicting.length} labelled both ways and skipped)`,
  );
  console.log(
    `  destructive ${rows.filter((row) => row.label === "destructive").length}, ` +
      `safe ${rows.filter((row) => row.label === "benign").length}`,
  );
  console.log(
    `raw (their labels):      TP ${score.truePositives}  FP ${score.falsePositives}  FN ${score.falseNegatives}  ` +
      `precision ${format(score.precision)}  recall ${format(score.recall)}`,
  );
  console.log(
    `after documented policy: FN ${realMisses.length}  FP ${realAlarms.length} ` +
      `(${policyMisses.length + policyAlarms.length} rows differ by a written decision)  ` +
      `precision ${format(adjustedPrecision)}  recall ${format(adjustedRecall)}`,
  );
  for (const entry of POLICY) {
    const rowsForDecision = [...policyMisses, ...policyAlarms].filter((result) => policyOf(result) === entry.decision);
    if (rowsForDecision.length > 0)
      console.log(
        `  POLICY ${rowsForDecision.length} × ${entry.decision}: ` +
          rowsForDecision.map((miss) => JSON.stringify(miss.row.command)).join(", "),
      );
  }
  for (const miss of realMisses) console.log(`  MISS   ${JSON.stringify(miss.row.command)} (${miss.row.note})`);
  for (const alarm of realAlarms)
    console.log(`  FALSE  ${JSON.stringify(alarm.row.command)} -> ${alarm.alertedRules.join(",")} (${alarm.row.note})`);
}

for (const directory of directories) report(directory);
