import type { MetricResult } from "../contract/result-record.ts";
import { checkAlert, checkResult, checkRun } from "./record-checks.ts";

/**
 * What the page shows, exactly as the processors or the replay wrote it: result records by result
 * key, tripwire alerts in arrival order, and the last run-state summary of every run. Records are
 * kept as parsed JSON and passed on untouched; nothing here computes a metric. A record the page
 * could not read (record-checks.ts) is kept aside as rejected, with why, and shown as an error row.
 */
export type ResultRecord = MetricResult;
/** An alert as written to alerts.ndjson or decoded from the alerts topic (time fields in either form). */
export type AlertRecord = { readonly alert_id: string; readonly run_id: string } & Readonly<Record<string, unknown>>;
/** A run-state summary record (agentops.run-state.v1), keyed by run_id. */
export type RunRecord = { readonly run_id: string } & Readonly<Record<string, unknown>>;

/** A record that failed its check, by kind and key (result key, alert id or run id). */
export interface RejectedRecord {
  readonly kind: "result" | "alert" | "run";
  readonly key: string;
  /** For a result, its metric id when it has one: the error row is shown among that metric's rows. */
  readonly metric_id: string | null;
  readonly reason: string;
}

export type ViewEvent =
  | { readonly type: "result"; readonly key: string; readonly result: ResultRecord | null }
  | { readonly type: "rejected"; readonly record: RejectedRecord }
  | { readonly type: "alert"; readonly alert: AlertRecord }
  | { readonly type: "run"; readonly run: RunRecord }
  | { readonly type: "status"; readonly status: SourceStatus };

/** Where the records come from and whether the source is healthy, said on the page. */
export interface SourceStatus {
  readonly mode: "files" | "kafka";
  readonly description: string;
  readonly error: string | null;
}

/**
 * A view follows its sources for months: it keeps the newest alerts and the most recently updated
 * runs up to these counts, and counts what it let go, so that memory stays flat. Results are
 * bounded by the compacted results topic itself (one record per result key).
 */
export interface ViewLimits {
  readonly maxAlerts: number;
  readonly maxRuns: number;
}
export const VIEW_LIMITS: ViewLimits = { maxAlerts: 5_000, maxRuns: 5_000 };

/** How many alerts and runs the view let go (oldest first) to stay within VIEW_LIMITS. */
export interface FoldedCounts {
  readonly alerts: number;
  readonly runs: number;
}

export interface ViewSnapshot {
  readonly status: SourceStatus;
  readonly limits: ViewLimits;
  readonly folded: FoldedCounts;
  readonly results: readonly { readonly key: string; readonly result: ResultRecord }[];
  readonly alerts: readonly AlertRecord[];
  readonly runs: readonly RunRecord[];
  readonly rejected: readonly RejectedRecord[];
}

/** A text field of a record, whatever the record turned out to be (a decoded topic record may be any JSON). */
function textField(record: unknown, field: string): string | null {
  const value = typeof record === "object" && record !== null ? (record as Record<string, unknown>)[field] : undefined;
  return typeof value === "string" ? value : null;
}

const rejectedId = (kind: RejectedRecord["kind"], key: string): string => `${kind}\u0000${key}`;

export class ViewState {
  private readonly results = new Map<string, ResultRecord>();
  private readonly alerts = new Map<string, AlertRecord>();
  private readonly runs = new Map<string, RunRecord>();
  private readonly rejected = new Map<string, RejectedRecord>();
  private readonly listeners = new Set<(event: ViewEvent) => void>();
  private status: SourceStatus;
  private folded: FoldedCounts = { alerts: 0, runs: 0 };
  private readonly limits: ViewLimits;

  constructor(status: SourceStatus, limits: ViewLimits = VIEW_LIMITS) {
    this.status = status;
    this.limits = limits;
  }

  /** Upsert (or, with null, remove) one result key; unchanged records are not re-announced. */
  setResult(key: string, result: unknown): void {
    const problem = result === null ? null : checkResult(result);
    if (problem !== null) {
      if (this.results.delete(key)) this.emit({ type: "result", key, result: null });
      this.reject({ kind: "result", key, metric_id: textField(result, "metric_id"), reason: problem });
      return;
    }
    const wasRejected = this.rejected.delete(rejectedId("result", key));
    const previous = this.results.get(key);
    if (result === null) {
      if (previous === undefined && !wasRejected) return;
      this.results.delete(key);
    } else {
      const record = result as ResultRecord;
      if (!wasRejected && previous !== undefined && JSON.stringify(previous) === JSON.stringify(record)) return;
      this.results.set(key, record);
    }
    this.emit({ type: "result", key, result: result as ResultRecord | null });
  }

  /** Replaces the whole result set (a rewritten results file): removed keys become removals. */
  replaceResults(next: ReadonlyMap<string, unknown>): void {
    const rejected = [...this.rejected.values()].filter((record) => record.kind === "result");
    const known = [...this.results.keys(), ...rejected.map((record) => record.key)];
    for (const key of known) if (!next.has(key)) this.setResult(key, null);
    for (const [key, result] of next) this.setResult(key, result);
  }

  /** An alert id is deterministic (run, rule, seq range): a redelivered alert is shown once. */
  addAlert(alert: AlertRecord): void {
    const problem = checkAlert(alert);
    if (problem !== null) {
      const key = textField(alert, "alert_id") ?? "(no alert_id)";
      return this.reject({ kind: "alert", key, metric_id: null, reason: problem });
    }
    if (this.alerts.has(alert.alert_id)) return;
    this.rejected.delete(rejectedId("alert", alert.alert_id));
    this.alerts.set(alert.alert_id, alert);
    const oldest = this.alerts.size > this.limits.maxAlerts ? this.alerts.keys().next().value : undefined;
    if (oldest !== undefined) {
      this.alerts.delete(oldest);
      this.folded = { ...this.folded, alerts: this.folded.alerts + 1 };
    }
    this.emit({ type: "alert", alert });
  }

  setRun(run: RunRecord): void {
    const problem = checkRun(run);
    if (problem !== null) {
      const key = textField(run, "run_id") ?? "(no run_id)";
      return this.reject({ kind: "run", key, metric_id: null, reason: problem });
    }
    this.rejected.delete(rejectedId("run", run.run_id));
    // Re-inserted, so that the map's order is the order of last update and the first is the stalest.
    this.runs.delete(run.run_id);
    this.runs.set(run.run_id, run);
    const stalest = this.runs.size > this.limits.maxRuns ? this.runs.keys().next().value : undefined;
    if (stalest !== undefined) {
      this.runs.delete(stalest);
      this.folded = { ...this.folded, runs: this.folded.runs + 1 };
    }
    this.emit({ type: "run", run });
  }

  setStatus(status: SourceStatus): void {
    this.status = status;
    this.emit({ type: "status", status });
  }

  snapshot(): ViewSnapshot {
    return {
      status: this.status,
      limits: this.limits,
      folded: this.folded,
      results: [...this.results].map(([key, result]) => ({ key, result })),
      alerts: [...this.alerts.values()],
      runs: [...this.runs.values()],
      rejected: [...this.rejected.values()],
    };
  }

  subscribe(listener: (event: ViewEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private reject(record: RejectedRecord): void {
    const id = rejectedId(record.kind, record.key);
    if (this.rejected.get(id)?.reason === record.reason) return;
    this.rejected.set(id, record);
    this.emit({ type: "rejected", record });
  }

  private emit(event: ViewEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
