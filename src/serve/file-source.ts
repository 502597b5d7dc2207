import { closeSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { resultKey } from "../metrics/scope.ts";
import type { AlertRecord, ResultRecord, RunRecord, ViewState } from "./view-state.ts";

export interface FileSourcePaths {
  readonly results: string;
  readonly alerts?: string | undefined;
  readonly runs?: string | undefined;
}

/** How often the files are checked for changes: polling their size and mtime also sees a replaced file. */
const POLL_MS = 200;

/** What a check compares: a file's size and mtime, or "absent". */
function fileStamp(path: string): string {
  try {
    const stats = statSync(path);
    return `${String(stats.size)}:${String(stats.mtimeMs)}`;
  } catch {
    return "absent";
  }
}

type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

function parseLine<T>(line: string, where: string, check: (value: unknown) => value is T): Parsed<T> {
  try {
    const value: unknown = JSON.parse(line);
    return check(value) ? { ok: true, value } : { ok: false, error: `${where}: not a record of this file's kind` };
  } catch {
    return { ok: false, error: `${where}: not JSON` };
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isResult = (value: unknown): value is ResultRecord =>
  isObject(value) &&
  typeof value["metric_id"] === "string" &&
  isObject(value["scope"]) &&
  isObject(value["cohort"]) &&
  isObject(value["coverage"]);
const isAlert = (value: unknown): value is AlertRecord =>
  isObject(value) && typeof value["alert_id"] === "string" && typeof value["run_id"] === "string";
const isRun = (value: unknown): value is RunRecord => isObject(value) && typeof value["run_id"] === "string";

/**
 * The replay's output files as a live source: results.ndjson is re-read whenever it changes (a
 * replay rewrites it whole), alerts.ndjson is followed from where it was last read (new alerts are
 * appended), runs.ndjson is re-read. A malformed line is skipped and named on the page.
 */
export function startFileSource(paths: FileSourcePaths, state: ViewState): { stop(): void } {
  const problems = new Map<string, string>();
  const report = (file: string, error: string | null): void => {
    if (error === null) problems.delete(file);
    else problems.set(file, error);
    state.setStatus({
      ...state.snapshot().status,
      error: problems.size === 0 ? null : [...problems.values()].join("; "),
    });
  };
  const lines = (text: string): string[] => text.split("\n").filter((line) => line.trim() !== "");

  const loadResults = (): void => {
    let text: string;
    try {
      text = readFileSync(paths.results, "utf8");
    } catch {
      return report(paths.results, `${paths.results}: cannot be read`);
    }
    const next = new Map<string, ResultRecord>();
    let error: string | null = null;
    lines(text).forEach((line, index) => {
      const parsed = parseLine(line, `${paths.results} line ${index + 1}`, isResult);
      if (parsed.ok) next.set(resultKey(parsed.value.metric_id, parsed.value.scope, parsed.value.cohort), parsed.value);
      else error ??= parsed.error;
    });
    state.replaceResults(next);
    report(paths.results, error);
  };

  // Alerts are appended: read only the bytes after what was already read, whole lines only.
  let alertOffset = 0;
  let alertLine = 0;
  let pending = "";
  const readAlerts = (path: string): void => {
    let size: number;
    try {
      size = statSync(path).size;
    } catch {
      return; // not written yet: the replay or the test creates it later
    }
    if (size < alertOffset) {
      // Rewritten from the start (a new replay): read it again; known alert ids are not repeated.
      alertOffset = 0;
      alertLine = 0;
      pending = "";
    }
    if (size === alertOffset) return;
    const buffer = Buffer.alloc(size - alertOffset);
    const fd = openSync(path, "r");
    try {
      readSync(fd, buffer, 0, buffer.length, alertOffset);
    } finally {
      closeSync(fd);
    }
    alertOffset = size;
    const text = pending + buffer.toString("utf8");
    const parts = text.split("\n");
    pending = parts.pop() ?? "";
    let error: string | null = null;
    for (const line of parts) {
      alertLine += 1;
      if (line.trim() === "") continue;
      const parsed = parseLine(line, `${path} line ${alertLine}`, isAlert);
      if (parsed.ok) state.addAlert(parsed.value);
      else error ??= parsed.error;
    }
    report(path, error);
  };

  const loadRuns = (path: string): void => {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch {
      return;
    }
    let error: string | null = null;
    lines(text).forEach((line, index) => {
      const parsed = parseLine(line, `${path} line ${index + 1}`, isRun);
      if (parsed.ok) state.setRun(parsed.value);
      else error ??= parsed.error;
    });
    report(path, error);
  };

  // Each file is stamped before it is read and compared with that stamp, not with the previous
  // poll (as fs.watchFile does): a change between the first read and the first poll is not lost.
  const watched: { path: string; stamp: string; onChange: () => void }[] = [];
  const watch = (path: string, onChange: () => void): void => {
    watched.push({ path, stamp: fileStamp(path), onChange });
    onChange();
  };
  watch(paths.results, loadResults);
  const { alerts, runs } = paths;
  if (alerts !== undefined) watch(alerts, () => readAlerts(alerts));
  if (runs !== undefined) watch(runs, () => loadRuns(runs));
  const poll = setInterval(() => {
    for (const file of watched) {
      const stamp = fileStamp(file.path);
      if (stamp === file.stamp) continue;
      file.stamp = stamp;
      file.onChange();
    }
  }, POLL_MS);
  return {
    stop(): void {
      clearInterval(poll);
    },
  };
}
