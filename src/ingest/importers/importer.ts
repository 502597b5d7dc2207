import type { ImportFormat, ImportOptions, RunBuilder } from "./run-builder.ts";

/** One log file as an importer sees it. */
export interface LogFile {
  readonly path: string;
  readonly text: string;
  /** The file's modification time: the base of derived event times (docs/importers.md). */
  readonly mtimeMs: number;
}

/** What could not be mapped, by reason (for the import summary). */
export class Unmapped {
  readonly counts = new Map<string, number>();
  add(reason: string, count = 1): void {
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + count);
  }
}

export interface FormatImporter {
  readonly format: ImportFormat;
  /** What the format's files look like, for `--help` and directory walks. */
  readonly filePattern: RegExp;
  readonly description: string;
  importFile(file: LogFile, options: ImportOptions, unmapped: Unmapped): RunBuilder[];
}

/** A step's parsed JSON, or undefined with the reason counted. */
export function parseJsonLine(line: string, unmapped: Unmapped): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    unmapped.add("malformed JSON line");
    return undefined;
  }
}

/** A whole-file JSON log (SWE-agent, mini-swe-agent, OpenHands), or undefined with the reason counted. */
export function parseJsonFile(text: string, unmapped: Unmapped): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    unmapped.add("file is not JSON");
    return undefined;
  }
}
