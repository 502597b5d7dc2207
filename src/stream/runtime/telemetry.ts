import type { Metrics } from "../processor.ts";
import { readProcStatus } from "./proc-status.ts";

/**
 * Operational telemetry in Prometheus' text format. Wall-clock time appears here only (lag,
 * throughput), never in a result. Counters are process-local; Prometheus sums across instances.
 */
type Labels = Readonly<Record<string, string>>;

interface Series {
  readonly help: string;
  readonly type: "counter" | "gauge";
  readonly values: Map<string, { labels: Labels; value: number }>;
}

export class Telemetry implements Metrics {
  private readonly series = new Map<string, Series>();

  count(name: string, help: string, labels: Labels = {}, delta = 1): void {
    this.entry(name, help, "counter", labels).value += delta;
  }

  gauge(name: string, help: string, labels: Labels, value: number): void {
    this.entry(name, help, "gauge", labels).value = value;
  }

  value(name: string, labels: Labels = {}): number {
    return this.series.get(name)?.values.get(labelKey(labels))?.value ?? 0;
  }

  /** A series summed over all its labels. */
  total(name: string): number {
    return [...(this.series.get(name)?.values.values() ?? [])].reduce((sum, entry) => sum + entry.value, 0);
  }

  /** A series' values by one of its labels. */
  byLabel(name: string, label: string): Map<string, number> {
    const values = new Map<string, number>();
    for (const entry of this.series.get(name)?.values.values() ?? []) {
      const key = entry.labels[label] ?? "";
      values.set(key, (values.get(key) ?? 0) + entry.value);
    }
    return values;
  }

  render(): string {
    // The process's memory at the scrape, so an operator sees where resident memory is (the V8
    // heap, Buffers and other memory outside it, or neither: native libraries, mapped files).
    const memory = process.memoryUsage();
    this.gauge("agentops_process_resident_memory_bytes", "Resident set size of the process", {}, memory.rss);
    this.gauge("agentops_process_heap_used_bytes", "V8 heap in use", {}, memory.heapUsed);
    this.gauge("agentops_process_heap_total_bytes", "V8 heap reserved", {}, memory.heapTotal);
    this.gauge(
      "agentops_process_external_bytes",
      "Memory of Buffers and other objects outside the V8 heap (array buffers included)",
      {},
      memory.external,
    );
    // Linux splits resident memory in two, and only the first is what a container must hold: the
    // engine's mapped store pages are page cache the kernel reclaims under a memory limit.
    const status = readProcStatus("self");
    const anonymous = status?.("RssAnon");
    const mappedFiles = status?.("RssFile");
    if (anonymous !== undefined && mappedFiles !== undefined) {
      this.gauge(
        "agentops_process_anonymous_memory_bytes",
        "Resident anonymous memory (heap and native allocations): what a container's memory limit must hold",
        {},
        anonymous,
      );
      this.gauge(
        "agentops_process_mapped_file_bytes",
        "Resident file-backed pages (the engine's mapped state store, the binary): page cache, reclaimable",
        {},
        mappedFiles,
      );
    }
    const lines: string[] = [];
    for (const [name, series] of [...this.series.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      lines.push(`# HELP ${name} ${series.help}`, `# TYPE ${name} ${series.type}`);
      for (const { labels, value } of series.values.values()) lines.push(`${name}${formatLabels(labels)} ${value}`);
    }
    return `${lines.join("\n")}\n`;
  }

  private entry(name: string, help: string, type: Series["type"], labels: Labels): { labels: Labels; value: number } {
    let series = this.series.get(name);
    if (series === undefined) {
      series = { help, type, values: new Map() };
      this.series.set(name, series);
    }
    const key = labelKey(labels);
    let entry = series.values.get(key);
    if (entry === undefined) {
      entry = { labels, value: 0 };
      series.values.set(key, entry);
    }
    return entry;
  }
}

/**
 * A series' identity within its metric: names and values in name order, each after its length (so
 * no name or value can run into the next). Built for every count, so it avoids arrays and JSON.
 */
function labelKey(labels: Labels): string {
  const names = Object.keys(labels);
  if (names.length > 1) names.sort();
  let key = "";
  for (let index = 0; index < names.length; index++) {
    const name = names[index] as string;
    const value = labels[name] as string;
    key += `${name.length}:${name}${value.length}:${value}`;
  }
  return key;
}

function formatLabels(labels: Labels): string {
  const entries = Object.entries(labels).sort();
  if (entries.length === 0) return "";
  return `{${entries.map(([key, value]) => `${key}="${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`).join(",")}}`;
}
