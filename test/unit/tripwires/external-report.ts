// `npm run tripwires:external [DIR]`: precision and recall of the destructive rules on an independent,
// public test set of dangerous and safe shell commands: the regression corpus and e2e command lists
// of destructive_command_guard (github.com/Dicklesworthstone/destructive_command_guard), a Claude
// Code PreToolUse safety hook. The data is fetched into the git-ignored fetched/ folder and never
// committed; DIR defaults to fetched/dcg (the repository's tests/corpus and tests/e2e/fixtures/commands).
//
// Their labels are their policy. Where our documented policy differs on purpose, the row is counted
// in the raw figures and also reported under the decision that explains it; every other
// disagreement is listed as a miss or a false alarm.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { evaluateCorpus, type CorpusResult, type CorpusRow } from "./corpus-evaluation.ts";

const directory = process.argv[2] ?? "fetched/dcg";
if (!existsSync(directory)) {
  console.error(`tripwires:external: ${directory} not found. Fetch github:Dicklesworthstone/destructive_command_guard and copy its tests/corpus and tests/e2e/fixtures/commands into ${directory}/tests/ (see docs/tripwires.md).`);
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
    if (command !== undefined && (expected === "deny" || expected === "allow")) cases.push({ command, label: expected === "deny" ? "destructive" : "benign", source: path });
    command = undefined;
    expected = undefined;
  };
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line.trim() === "[[case]]") flush();
    const match = /^(command|expected|expected_decision)\s*=\s*("(?:[^"\\]|\\.)*"|'[^']*')/.exec(line);
    if (match === null) continue;
    const raw = match[2] ?? "";
    const value = raw.startsWith("'") ? raw.slice(1, -1) : (JSON.parse(raw.replace(/\\U([0-9a-fA-F]{8})/g, (_all, hex: string) => String.fromCodePoint(parseInt(hex, 16)))) as string);
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

function filesUnder(root: string): string[] {
  return readdirSync(root).flatMap((name) => {
    const path = join(root, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

const cases: ExternalCase[] = [];
for (const path of filesUnder(directory).sort()) {
  if (path.endsWith(".toml") && path.includes("corpus")) cases.push(...readToml(path));
  else if (path.endsWith("dangerous.txt")) cases.push(...readLines(path, "destructive"));
  else if (path.endsWith("safe.txt")) cases.push(...readLines(path, "benign"));
}
// The same command in several files counts once; a command labelled both ways is reported and skipped.
const byCommand = new Map<string, ExternalCase[]>();
for (const entry of cases) byCommand.set(entry.command, [...(byCommand.get(entry.command) ?? []), entry]);
const conflicting = [...byCommand.entries()].filter(([, entries]) => new Set(entries.map((entry) => entry.label)).size > 1).map(([command]) => command);
const unique = [...byCommand.values()].filter((entries) => new Set(entries.map((entry) => entry.label)).size === 1).map((entries) => entries[0] as ExternalCase);

const rows: CorpusRow[] = unique.map((entry) => ({ command: entry.command, cwd: "/work/repo", workspace_root: "/work/repo", kind: "shell", label: entry.label, note: relative(directory, entry.source) }));
const score = evaluateCorpus(rows);

/**
 * Where their labels differ from our documented decisions (docs/tripwires.md, "Decisions"). A
 * disagreement is put here only when the decision is written down; everything else is a miss.
 */
const POLICY: readonly { readonly decision: string; readonly matches: (command: string) => boolean }[] = [
  { decision: "recursive delete of a named path inside the workspace is routine (rm -rf ./build, node_modules, src)", matches: (command) => /^rm\s+(-[a-zA-Z]+\s+|--[a-z-]+\s+)*(\.\/)?(?!\.git\b)[\w@][\w./@-]*\/?$/.test(command) && !command.includes("..") },
  { decision: "restoring named files stays quiet (git checkout -- file, git restore file)", matches: (command) => /\bgit\s+(checkout|restore)\b.*\s(?!-)[\w-]+\.\w+$/.test(command) && !/\s(\.|:\/|\*)(\s|$)/.test(command) },
  { decision: "git clean -f without -d/-x/-X only removes untracked files, not directories or ignored files", matches: (command) => /\bgit\s+clean\s+(-f|--force)$/.test(command) },
  { decision: "scratch dirs (/tmp, /var/tmp) are throw-away: deleting there never alerts", matches: (command) => /(^|[\s'"(])\/(var\/)?tmp\//.test(command) && !/\.\./.test(command) },
  { decision: "rm with no operand deletes nothing", matches: (command) => /(^|[|;&]\s*)rm\s+-[a-zA-Z]+\s*(&&|;|\||$)/.test(command) },
];

function policyOf(result: CorpusResult): string | undefined {
  return POLICY.find((entry) => entry.matches(result.row.command))?.decision;
}

const policyMisses = score.misses.filter((miss) => policyOf(miss) !== undefined);
const realMisses = score.misses.filter((miss) => policyOf(miss) === undefined);
const adjustedRecall = score.truePositives / (score.truePositives + realMisses.length);
const format = (value: number): string => value.toFixed(3);

console.log(`external set: ${directory} (${cases.length} cases, ${unique.length} distinct commands, ${conflicting.length} labelled both ways and skipped)`);
console.log(`  destructive ${rows.filter((row) => row.label === "destructive").length}, safe ${rows.filter((row) => row.label === "benign").length}`);
console.log(`raw (their labels):      TP ${score.truePositives}  FP ${score.falsePositives}  FN ${score.falseNegatives}  precision ${format(score.precision)}  recall ${format(score.recall)}`);
console.log(`after documented policy: FN ${realMisses.length} (${policyMisses.length} rows differ by a written decision)  recall ${format(adjustedRecall)}`);
for (const entry of POLICY) {
  const rowsForDecision = policyMisses.filter((miss) => policyOf(miss) === entry.decision);
  if (rowsForDecision.length > 0) console.log(`  POLICY ${rowsForDecision.length} × ${entry.decision}: ${rowsForDecision.map((miss) => JSON.stringify(miss.row.command)).join(", ")}`);
}
for (const miss of realMisses) console.log(`  MISS   ${JSON.stringify(miss.row.command)} (${miss.row.note})`);
for (const alarm of score.falseAlarms) console.log(`  FALSE  ${JSON.stringify(alarm.row.command)} -> ${alarm.alertedRules.join(",")} (${alarm.row.note})`);
