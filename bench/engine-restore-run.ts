/**
 * Child process of bench/engine-restore.bench.ts: the restore of an engine partition without local
 * state (issue #13), in process, through the engine task a Kafka member runs
 * (src/stream/processors/engine.ts), without the broker: so its two phases can be timed and
 * profiled on their own, and its memory is the engine's. Prints one JSON line on stdout.
 *
 *   node bench/engine-restore-run.ts log     --workload <ndjson> --dir <lmdb dir> --log <file> [--cache-mb 16]
 *   node bench/engine-restore-run.ts restore --dir <lmdb dir> --log <file> --facts <file> [--cache-mb 16] [--log-only]
 *
 * log: runs the engine task over the workload's metric facts as a member at the head of its
 * stream does (batches of 500, each flushed, `committed` after each: what a deployment writes
 * live; catching up on a backlog flushes every 5,000 facts and rewrites a unit less often), and
 * writes every contributions changelog
 * record it sends, marker included, to <file> in order (length-prefixed), and to <file>.compacted
 * the last record of each key in the order Kafka's compaction keeps them (the log a fully compacted
 * topic holds), and to <file>.facts the metric facts as engine-facts records (the binary layout
 * ingest writes), so the restore decodes what a member reads, not the workload's JSON.
 * restore: an empty store; `resumeFrom`, then every record of <file> through `loadChangelog`, then
 * the --facts file decoded as the member's batch handler does and given to `restore` (the facts before
 * the log's marker loaded, later ones evaluated, as the member's replay), then `goLive`. Reports each
 * phase's records, wall and CPU seconds, and the peak anonymous RSS sampled every 5,000 records (the
 * loops are synchronous: a timer would not fire).
 */
import { createHash } from "node:crypto";
import { closeSync, openSync, readSync, writeSync } from "node:fs";
import { shippedCatalog } from "../src/catalog/metric-definitions.ts";
import { isAgentEvent } from "../src/contract/facts.ts";
import { parseFactJson } from "../src/contract/parse-fact.ts";
import { encodeEngineFact, readEngineFact } from "../src/kafka/serde/engine-facts-record.ts";
import { DEFAULT_ENGINE_CONFIG } from "../src/metrics/engine-config.ts";
import { boundEngineHeapGrowth } from "../src/state/heap-growth.ts";
import { engineProcessor } from "../src/stream/processors/engine.ts";
import type {
  EngineFact,
  Metrics,
  SinkRecord,
  SourceRecord,
  StoreSet,
  Task,
  TaskContext,
  UnreadableRecord,
} from "../src/stream/processor.ts";
import { readProcStatus } from "../src/stream/runtime/proc-status.ts";
import { DEFAULT_STATE_CACHE_MB } from "../src/stream/runtime/stream-config.ts";
import { linesFrom } from "./workload-lines.ts";

/** Records per batch, as a fetch of a few hundred KiB gives the member. */
const BATCH = 500;
const SAMPLE_EVERY = 5_000;

export interface RestoreReport {
  readonly mode: "restore";
  readonly logRecords: number;
  readonly logSeconds: number;
  /** CPU seconds (user + system) of the phase: steadier than wall seconds on a shared machine. */
  readonly logCpuSeconds: number;
  readonly units: number;
  readonly facts: number;
  readonly factsSeconds: number;
  readonly factsCpuSeconds: number;
  /** Results compared going live (the whole table). */
  readonly results: number;
  /** SHA-256 of the results going live writes (keys and values in order), to compare restores. */
  readonly resultsDigest: string;
  readonly goLiveSeconds: number;
  readonly peakRssAnonBytes: number;
}

export interface LogReport {
  readonly mode: "log";
  readonly facts: number;
  readonly records: number;
  readonly compactedRecords: number;
  readonly seconds: number;
}

let peakRssAnon = 0;
let sinceSample = 0;
function sampleMemory(records = 1): void {
  sinceSample += records;
  if (sinceSample < SAMPLE_EVERY) return;
  sinceSample = 0;
  peakRssAnon = Math.max(peakRssAnon, readProcStatus("self")?.("RssAnon") ?? 0);
}

function option(args: readonly string[], name: string, fallback?: string): string {
  const at = args.indexOf(name);
  const value = at >= 0 ? args[at + 1] : fallback;
  if (value === undefined) throw new Error(`${name} is required (see bench/engine-restore-run.ts)`);
  return value;
}

/** The workload's metric facts as the engine-facts records a member reads, at offsets 0, 1, … */
function* engineRecords(workload: string): Generator<SourceRecord<EngineFact>> {
  let offset = 0;
  for (const { text } of linesFrom(workload, 0)) {
    const parsed = parseFactJson(text);
    if (!parsed.ok || isAgentEvent(parsed.fact)) continue;
    const position = { topic: "engine-facts", partition: 0, offset: String(offset) };
    yield { position, value: { fact: parsed.fact, source: position }, original: { key: null, value: null } };
    offset += 1;
  }
}

/** The engine-facts records written by `log`, read back as the member's batch handler decodes them. */
function* factRecords(path: string): Generator<SourceRecord<EngineFact | UnreadableRecord>> {
  let offset = 0;
  for (const [, value] of readLog(path)) {
    const position = { topic: "engine-facts", partition: 0, offset: String(offset) };
    const reading = value === null ? { ok: false as const, detail: "tombstone" } : readEngineFact(value);
    const decoded = reading.ok ? { fact: reading.fact, source: reading.source } : { unreadable: reading.detail };
    yield { position, value: decoded, original: { key: null, value: null } };
    offset += 1;
  }
}

const cpuSeconds = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
};

function* batches<T>(items: Iterable<T>, size: number): Generator<T[]> {
  let batch: T[] = [];
  for (const item of items) {
    batch.push(item);
    if (batch.length < size) continue;
    yield batch;
    batch = [];
  }
  if (batch.length > 0) yield batch;
}

const NO_METRICS: Metrics = { count: () => undefined, gauge: () => undefined };

function openTask(dir: string, cacheMb: number): Task<EngineFact | UnreadableRecord> {
  const processor = engineProcessor(DEFAULT_ENGINE_CONFIG, shippedCatalog(), {
    directory: () => dir,
    cacheBytes: cacheMb * 1024 * 1024,
  });
  // No published-results store: that is the runtime's, restored from the results topic.
  return processor.open(0, new Map() as StoreSet, NO_METRICS, {} as TaskContext) as Task<EngineFact | UnreadableRecord>;
}

function writeRecord(out: number, key: string, value: Buffer | null): void {
  const keyBytes = Buffer.from(key, "utf8");
  const header = Buffer.alloc(8);
  header.writeUInt32BE(keyBytes.length, 0);
  header.writeInt32BE(value === null ? -1 : value.length, 4);
  writeSync(out, header);
  writeSync(out, keyBytes);
  if (value !== null) writeSync(out, value);
}

/** The log's records in order, read in chunks (a 1M-fact log is about 200 MB). */
function* readLog(path: string): Generator<[string, Buffer | null]> {
  const fd = openSync(path, "r");
  let buffer = Buffer.allocUnsafe(4 << 20);
  let filled = 0;
  let position = 0;
  try {
    for (;;) {
      const read = readSync(fd, buffer, filled, buffer.length - filled, position);
      position += read;
      filled += read;
      let at = 0;
      while (filled - at >= 8) {
        const keyLength = buffer.readUInt32BE(at);
        const valueLength = buffer.readInt32BE(at + 4);
        const end = at + 8 + keyLength + Math.max(0, valueLength);
        if (end > filled) break;
        const key = buffer.toString("utf8", at + 8, at + 8 + keyLength);
        // Copied: the member's records are Buffers of their own too, and the chunk is reused.
        yield [key, valueLength < 0 ? null : Buffer.from(buffer.subarray(at + 8 + keyLength, end))];
        at = end;
      }
      buffer.copy(buffer, 0, at, filled);
      filled -= at;
      if (read === 0) {
        if (filled > 0) throw new Error(`${path}: ${String(filled)} bytes of a record cut short at its end`);
        return;
      }
      if (filled === buffer.length) {
        const larger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(larger, 0, 0, filled);
        buffer = larger;
      }
    }
  } finally {
    closeSync(fd);
  }
}

async function writeLog(workload: string, dir: string, logPath: string, cacheMb: number): Promise<LogReport> {
  const started = performance.now();
  const task = openTask(dir, cacheMb);
  task.localState?.resumeFrom("0");
  const out = openSync(logPath, "w");
  const factsOut = openSync(`${logPath}.facts`, "w");
  let facts = 0;
  let records = 0;
  const send = (outputs: readonly SinkRecord[]): void => {
    for (const output of outputs) {
      if (output.topic !== "engineContributions") continue;
      writeRecord(out, output.key, output.value);
      records += 1;
    }
  };
  for (const batch of batches(engineRecords(workload), BATCH)) {
    facts += batch.length;
    for (const { value } of batch) {
      const record = encodeEngineFact(value.fact, value.source as { topic: string; partition: number; offset: string });
      writeRecord(factsOut, record.key, record.value);
    }
    send(task.process({ partition: 0, records: batch, backlog: 0 }).outputs);
    await task.localState?.committed(String(facts));
  }
  send(task.process({ partition: 0, records: [], backlog: 0 }).outputs);
  await task.localState?.committed(String(facts));
  await task.localState?.close();
  closeSync(out);
  closeSync(factsOut);
  // Compaction keeps each key's last record, at its own offset.
  const last = new Map<string, number>();
  let index = 0;
  for (const [key] of readLog(logPath)) last.set(key, index++);
  const compacted = openSync(`${logPath}.compacted`, "w");
  index = 0;
  let compactedRecords = 0;
  for (const [key, value] of readLog(logPath)) {
    if (last.get(key) === index++) {
      writeRecord(compacted, key, value);
      compactedRecords += 1;
    }
  }
  closeSync(compacted);
  return { mode: "log", facts, records, compactedRecords, seconds: (performance.now() - started) / 1000 };
}

async function restore(
  dir: string,
  logPath: string,
  factsPath: string,
  cacheMb: number,
  logOnly: boolean,
): Promise<RestoreReport> {
  const task = openTask(dir, cacheMb);
  task.localState?.resumeFrom("0");
  const logStarted = performance.now();
  const logCpu = process.cpuUsage();
  let logRecords = 0;
  for (const [key, value] of readLog(logPath)) {
    await task.changelogLoad?.load(key, value);
    logRecords += 1;
    sampleMemory();
  }
  const logSeconds = (performance.now() - logStarted) / 1000;
  const logCpuSeconds = cpuSeconds(logCpu);
  const loaded = task.changelogLoad?.loaded() ?? {};
  const factsStarted = performance.now();
  const factsCpu = process.cpuUsage();
  let facts = 0;
  for (const batch of logOnly ? [] : batches(factRecords(factsPath), BATCH)) {
    facts += batch.length;
    task.sourceRestore?.restore(batch);
    await task.localState?.committed(String(facts));
    sampleMemory(batch.length);
  }
  const factsSeconds = (performance.now() - factsStarted) / 1000;
  const factsCpuSeconds = cpuSeconds(factsCpu);
  const liveStarted = performance.now();
  let results = 0;
  const digest = createHash("sha256");
  // Every page taken: going live renders each page when it is asked for.
  if (!logOnly)
    for (const page of task.sourceRestore?.goLive() ?? [])
      for (const output of page.outputs) {
        if (output.topic !== "results") continue;
        results += 1;
        digest.update(`${output.key}\n${JSON.stringify(output.value)}\n`);
      }
  const goLiveSeconds = (performance.now() - liveStarted) / 1000;
  sinceSample = SAMPLE_EVERY;
  sampleMemory(0);
  await task.localState?.close();
  return {
    mode: "restore",
    logRecords,
    logSeconds,
    logCpuSeconds,
    units: Number(loaded.units ?? 0),
    facts,
    factsSeconds,
    factsCpuSeconds,
    results,
    resultsDigest: digest.digest("hex").slice(0, 16),
    goLiveSeconds,
    peakRssAnonBytes: peakRssAnon,
  };
}

async function main(): Promise<void> {
  const [mode, ...args] = process.argv.slice(2);
  // As `agentops run` sets it for a process running the engine over its on-disk state.
  boundEngineHeapGrowth();
  const dir = option(args, "--dir");
  const logPath = option(args, "--log");
  const cacheMb = Number(option(args, "--cache-mb", String(DEFAULT_STATE_CACHE_MB)));
  if (mode !== "log" && mode !== "restore")
    throw new Error(
      "usage: engine-restore-run.ts log|restore --dir <dir> --log <file> [--workload <ndjson> | --facts <file>] (see the header comment)",
    );
  const report =
    mode === "log"
      ? await writeLog(option(args, "--workload"), dir, logPath, cacheMb)
      : await restore(dir, logPath, option(args, "--facts"), cacheMb, args.includes("--log-only"));
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

await main();
