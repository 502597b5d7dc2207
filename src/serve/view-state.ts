import type { MetricResult } from "../metrics/result-record.ts";

/**
 * What the page shows, exactly as the processors or the replay wrote it: result records by result
 * key, tripwire alerts in arrival order, and the last run-state summary of every run. Records are
 * kept as parsed JSON and passed on untouched; nothing here computes a metric.
 */
export type ResultRecord = MetricResult;
/** An alert as written to alerts.ndjson or decoded from the alerts topic (time fields in either form). */
export type AlertRecord = { readonly alert_id: string; readonly run_id: string } & Readonly<Record<string, unknown>>;
/** A run-state summary record (agentops.run-state.v1), keyed by run_id. */
export type RunRecord = { readonly run_id: string } & Readonly<Record<string, unknown>>;

export type ViewEvent =
  | { readonly type: "result"; readonly key: string; readonly result: ResultRecord | null }
  | { readonly type: "alert"; readonly alert: AlertRecord }
  | { readonly type: "run"; readonly run: RunRecord }
  | { readonly type: "status"; readonly status: SourceStatus };

/** Where the records come from and whether the source is healthy, said on the page. */
export interface SourceStatus {
  readonly mode: "files" | "kafka";
  readonly description: string;
  readonly error: string | null;
}

export interface ViewSnapshot {
  readonly status: SourceStatus;
  readonly results: readonly { readonly key: string; readonly result: ResultRecord }[];
  readonly alerts: readonly AlertRecord[];
  readonly runs: readonly RunRecord[];
}

export class ViewState {
  private readonly results = new Map<string, ResultRecord>();
  private readonly alerts = new Map<string, AlertRecord>();
  private readonly runs = new Map<string, RunRecord>();
  private readonly listeners = new Set<(event: ViewEvent) => void>();
  private status: SourceStatus;

  constructor(status: SourceStatus) {
    this.status = status;
  }

  /** Upsert (or, with null, remove) one result key; unchanged records are not re-announced. */
  setResult(key: string, result: ResultRecord | null): void {
    const previous = this.results.get(key);
    if (result === null) {
      if (previous === undefined) return;
      this.results.delete(key);
    } else {
      if (previous !== undefined && JSON.stringify(previous) === JSON.stringify(result)) return;
      this.results.set(key, result);
    }
    this.emit({ type: "result", key, result });
  }

  /** Replaces the whole result set (a rewritten results file): removed keys become removals. */
  replaceResults(next: ReadonlyMap<string, ResultRecord>): void {
    for (const key of [...this.results.keys()]) if (!next.has(key)) this.setResult(key, null);
    for (const [key, result] of next) this.setResult(key, result);
  }

  /** An alert id is deterministic (run, rule, seq range): a redelivered alert is shown once. */
  addAlert(alert: AlertRecord): void {
    if (this.alerts.has(alert.alert_id)) return;
    this.alerts.set(alert.alert_id, alert);
    this.emit({ type: "alert", alert });
  }

  setRun(run: RunRecord): void {
    this.runs.set(run.run_id, run);
    this.emit({ type: "run", run });
  }

  setStatus(status: SourceStatus): void {
    this.status = status;
    this.emit({ type: "status", status });
  }

  snapshot(): ViewSnapshot {
    return {
      status: this.status,
      results: [...this.results].map(([key, result]) => ({ key, result })),
      alerts: [...this.alerts.values()],
      runs: [...this.runs.values()],
    };
  }

  subscribe(listener: (event: ViewEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: ViewEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
