import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseFact } from "../../contract/parse-fact.ts";
import { claudeCodeImporter } from "./claude-code.ts";
import { codexImporter } from "./codex.ts";
import { Unmapped, type FormatImporter } from "./importer.ts";
import { miniSweAgentImporter } from "./mini-swe-agent.ts";
import { openHandsImporter } from "./openhands.ts";
import type { Fact, ImportFormat, ImportOptions } from "./run-builder.ts";
import { sweAgentImporter } from "./swe-agent.ts";

export const IMPORTERS: Readonly<Record<ImportFormat, FormatImporter>> = {
  "claude-code": claudeCodeImporter,
  codex: codexImporter,
  "swe-agent": sweAgentImporter,
  "mini-swe-agent": miniSweAgentImporter,
  openhands: openHandsImporter,
};

export function isImportFormat(name: string): name is ImportFormat {
  return Object.hasOwn(IMPORTERS, name);
}

export interface ImportSummary {
  files: number;
  runs: number;
  steps: number;
  facts: number;
  factsByType: Record<string, number>;
  /** reason → count of log items that became no fact. */
  unmapped: Record<string, number>;
}

/**
 * The files a list of paths names: a file as given; a directory walked (sorted, so the output
 * order never depends on the file system) for the format's file names.
 */
export function logFiles(paths: readonly string[], importer: FormatImporter): string[] {
  const files: string[] = [];
  const walk = (path: string): void => {
    const stat = statSync(path);
    if (!stat.isDirectory()) {
      files.push(path);
      return;
    }
    for (const entry of readdirSync(path, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    )) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (importer.filePattern.test(entry.name)) files.push(child);
    }
  };
  for (const path of paths) walk(path);
  return files;
}

/**
 * Imports log files of one format, file by file, handing every fact to `emit` in log order.
 * Every fact is checked against the observation contract before it is emitted: one that fails
 * is an importer bug, counted under its reason and never written.
 */
export function importLogs(
  format: ImportFormat,
  files: readonly string[],
  options: ImportOptions,
  emit: (fact: Fact) => void,
  onFile?: (done: number, bytes: number) => void,
): ImportSummary {
  const importer = IMPORTERS[format];
  const unmapped = new Unmapped();
  const summary: ImportSummary = { files: 0, runs: 0, steps: 0, facts: 0, factsByType: {}, unmapped: {} };
  let bytes = 0;
  for (const path of files) {
    const text = readFileSync(path, "utf8");
    const mtimeMs = Math.trunc(options.baseTimeMs ?? statSync(path).mtimeMs);
    for (const run of importer.importFile({ path, text, mtimeMs }, options, unmapped)) {
      summary.runs++;
      summary.steps += run.steps;
      for (const fact of run.facts) {
        const checked = parseFact(fact);
        if (!checked.ok) {
          unmapped.add(`fact rejected by the contract (${checked.rejection.reason}: ${checked.rejection.detail})`);
          continue;
        }
        summary.facts++;
        const type = String(fact["type"]);
        summary.factsByType[type] = (summary.factsByType[type] ?? 0) + 1;
        emit(fact);
      }
    }
    summary.files++;
    bytes += Buffer.byteLength(text);
    onFile?.(summary.files, bytes);
  }
  summary.unmapped = Object.fromEntries(
    [...unmapped.counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  return summary;
}
