/**
 * One long agent run on the engine with its state on disk (`npm run bench:long-delivery`): a single
 * Delivery and task_id gathering N model calls, each with one cost, a call a second of event time,
 * ingested in batches with a flush and a commit after each (what a live engine does every second:
 * src/stream/processors/checkpoints.ts), then a terminal summary. The engine's state keeps a
 * Delivery's calls in one document (src/metrics/entity-docs.ts) rewritten at every commit that
 * changes it, and its unit reads all of them when recomputed: this measures what that costs as the
 * run grows, per segment of calls (facts/s, bytes each commit wrote, the Delivery document's size).
 *
 *   node bench/long-delivery.bench.ts [--calls 100000] [--batch 200] [--cache-mb 32]
 *
 * Prints a JSON report; bench/RESULTS.md quotes it by hand.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shippedCatalog } from "../src/catalog/metric-definitions.ts";
import { isAgentEvent, type MetricFact } from "../src/contract/facts.ts";
import { parseFactJson } from "../src/contract/parse-fact.ts";
import { DEFAULT_ENGINE_CONFIG } from "../src/metrics/engine-config.ts";
import { MetricEngine } from "../src/metrics/metric-engine.ts";
import { engineTables } from "../src/state/engine-tables.ts";
import { openLmdbBackend, type StateBackend } from "../src/state/state-backend.ts";
import { StateStore } from "../src/state/state-store.ts";

const argv = process.argv.slice(2);
const option = (name: string, fallback: number): number =>
  argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : fallback;
const CALLS = option("--calls", 100_000);
const BATCH = option("--batch", 200);
const CACHE_MB = option("--cache-mb", 32);
const SEGMENTS = 10;

const START = Date.UTC(2026, 9, 1);
const envelope = (type: string, factId: string, time: number): Record<string, unknown> => ({
  contract: "agentops.observation@1.0.0",
  type,
  fact_id: factId,
  event_time: new Date(time).toISOString(),
  provenance: { basis: "DIRECT_PROVIDER", source: "otel" },
});

function fact(record: Record<string, unknown>): MetricFact {
  const parsed = parseFactJson(JSON.stringify(record));
  if (!parsed.ok || isAgentEvent(parsed.fact)) throw new Error(`bench fact rejected: ${JSON.stringify(record)}`);
  return parsed.fact;
}

/** The i-th call of the run and its cost. */
function callAndCost(index: number): MetricFact[] {
  const time = START + index * 1000;
  const callId = `long-call-${String(index)}`;
  return [
    fact({
      ...envelope("model_call", `mc-${callId}`, time),
      call_id: callId,
      run_id: "long-run",
      delivery_id: "long-delivery",
      task_id: "long-task",
      operational: true,
      provider: "anthropic",
      model: "claude-sonnet-4",
      role: "writer",
      runtime: "claude-code@2",
      span_duration_ms: 1500,
      input_tokens: 1200,
      output_tokens: 300,
      usage_source: "PROVIDER",
    }),
    fact({
      ...envelope("cost", `cost-${callId}`, time + 10),
      cost_id: `cost-${callId}`,
      call_id: callId,
      amount_minor: 3,
      currency: "USD",
      source: "PROVIDER",
      cost_basis: "list-price",
      attribution: "PROJECT",
      estimated: false,
    }),
  ];
}

/** Counts what each commit writes. */
function counting(backend: StateBackend, written: { bytes: number; writes: number }): StateBackend {
  return {
    get: (key) => backend.get(key),
    scan: (prefix) => backend.scan(prefix),
    commit: (writes) => {
      const all = [...writes];
      for (const [key, value] of all) {
        written.writes += 1;
        written.bytes += key.length + (value?.length ?? 0);
      }
      return backend.commit(all);
    },
    clear: () => backend.clear(),
    close: () => backend.close(),
  };
}

const directory = mkdtempSync(join(tmpdir(), "agentops-long-delivery-"));
const written = { bytes: 0, writes: 0 };
const backend = counting(openLmdbBackend(directory), written);
const state = new StateStore(backend, CACHE_MB << 20);
const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog(), engineTables(state));
const segments: { calls: number; factsPerSecond: number; bytesPerCommit: number; writesPerCommit: number }[] = [];
const started = performance.now();
try {
  const perSegment = Math.ceil(CALLS / SEGMENTS);
  for (let segment = 0; segment < SEGMENTS; segment++) {
    const first = segment * perSegment;
    const last = Math.min(CALLS, first + perSegment);
    const segmentStarted = performance.now();
    const before = { ...written };
    let commits = 0;
    let facts = 0;
    for (let batchStart = first; batchStart < last; batchStart += BATCH) {
      for (let index = batchStart; index < Math.min(last, batchStart + BATCH); index++) {
        for (const each of callAndCost(index)) {
          engine.ingest(each);
          facts += 1;
        }
      }
      engine.flush();
      engine.unitChanges();
      await state.commit();
      commits += 1;
    }
    await state.landed();
    const seconds = (performance.now() - segmentStarted) / 1000;
    segments.push({
      calls: last,
      factsPerSecond: Math.round(facts / seconds),
      bytesPerCommit: Math.round((written.bytes - before.bytes) / commits),
      writesPerCommit: Math.round((written.writes - before.writes) / commits),
    });
    process.stderr.write(`${JSON.stringify(segments.at(-1))}\n`);
  }
  engine.ingest(
    fact({
      ...envelope("delivery_summary", "long-terminal", START + CALLS * 1000),
      delivery_id: "long-delivery",
      task_id: "long-task",
      run_id: "long-run",
      status: "TERMINAL",
      outcome: "SUCCEEDED",
      requirement_changed: false,
      elapsed_ms: CALLS * 1000,
    }),
  );
  const flushStarted = performance.now();
  engine.flush();
  const terminalFlushMillis = performance.now() - flushStarted;
  await state.commit();
  await state.landed();
  const document = backend.get("ed\u0000long-delivery");
  process.stdout.write(
    `${JSON.stringify({ calls: CALLS, batch: BATCH, cacheMb: CACHE_MB, seconds: Number(((performance.now() - started) / 1000).toFixed(1)), segments, terminalFlushMillis: Math.round(terminalFlushMillis), deliveryDocumentBytes: document?.length ?? null, node: process.version }, null, 1)}\n`,
  );
} finally {
  await backend.close();
  rmSync(directory, { recursive: true, force: true });
}
