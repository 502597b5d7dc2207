// The run-monitor processor's work per record without Kafka (`node --expose-gc bench/run-monitor-pipeline.ts`):
// the Kafka tripwires bench's load (bench/tripwires-kafka-load.ts: 200 concurrent runs of 250
// events, a destructive probe every 200 events) encoded once as the producer does, then fed
// through what src/stream/processors/run-monitor-processor.ts does per batch — decode and
// validate (decodeFact), detect (RunMonitor.process), serialise the changelog value and the
// run-state summary of every touched run, encode the alerts — each stage timed on its own.
// Prints µs per record for each stage (median of passes) and the bytes written per record, so a
// CPU regression of the processor can be located on a machine too noisy for the Kafka bench.
//
//   node --expose-gc bench/run-monitor-pipeline.ts [--events 60000] [--batch 8] [--passes 5]
import type { AgentEvent } from "../src/contract/facts.ts";
import { AvroTopicSerde } from "../src/kafka/serde/avro-serde.ts";
import { decodeFact } from "../src/kafka/serde/decode-fact.ts";
import { resolveSchemaRegistryUrl } from "../src/kafka/connection-addresses.ts";
import { createSchemaRegistry } from "../src/kafka/registry.ts";
import { createCommandAnalyser } from "../src/tripwires/commands/command-analyser.ts";
import { createRunMonitor, inMemoryRunStates, type RunMonitor } from "../src/tripwires/monitor.ts";
import type { RunStateSummary } from "../src/tripwires/run-state.ts";
import { serializeRunState } from "../src/tripwires/run-state-changelog.ts";
import { AgentEventLoad } from "./tripwires-kafka-load.ts";

const argv = process.argv.slice(2);
function option(name: string, fallback: number): number {
  const at = argv.indexOf(`--${name}`);
  const value = at === -1 ? fallback : Number(argv[at + 1]);
  if (!(Number.isInteger(value) && value > 0)) throw new Error(`--${name} needs a positive integer`);
  return value;
}
const EVENTS = option("events", 60_000);
/** Records per fetched batch: at 2,000 events/s over 3 partitions a fetch holds a handful. */
const BATCH = option("batch", 8);
const PASSES = option("passes", 5);
const PROBE_EVERY = 200; // 2,000 events/s with a probe every 100 ms

const registry = createSchemaRegistry(resolveSchemaRegistryUrl(undefined).value);
const serde = new AvroTopicSerde(registry);

const load = new AgentEventLoad({ concurrentRuns: 200, eventsPerRun: 250, seed: 42, runPrefix: "pipeline" });
const baseTime = 1_767_225_600_000;
const records: Buffer[] = [];
for (let index = 0; index < EVENTS; index++) {
  const eventTime = baseTime + Math.floor(index / 2); // 2,000 events/s of event time
  const event: AgentEvent =
    index % PROBE_EVERY === PROBE_EVERY - 1 ? load.destructive(eventTime, index / PROBE_EVERY) : load.next(eventTime);
  records.push(await serde.encodeFact(event));
}

interface Pass {
  decode: number;
  detect: number;
  changelog: number;
  summary: number;
  alerts: number;
  changelogBytes: number;
  summaryBytes: number;
  alertCount: number;
  changelogRecords: number;
}

async function pass(): Promise<Pass> {
  const analyser = createCommandAnalyser({ protectedBranches: ["main", "master"], cacheSize: 8192 });
  const runs = inMemoryRunStates();
  const monitor: RunMonitor = createRunMonitor({}, runs, analyser);
  const result: Pass = {
    decode: 0,
    detect: 0,
    changelog: 0,
    summary: 0,
    alerts: 0,
    changelogBytes: 0,
    summaryBytes: 0,
    alertCount: 0,
    changelogRecords: 0,
  };
  for (let start = 0; start < records.length; start += BATCH) {
    let at = performance.now();
    const events: AgentEvent[] = [];
    for (const bytes of records.slice(start, start + BATCH)) {
      const decoded = await decodeFact(registry, bytes);
      if (!decoded.ok) throw new Error(`record did not decode: ${JSON.stringify(decoded.rejection)}`);
      events.push(decoded.fact as AgentEvent);
    }
    let now = performance.now();
    result.decode += now - at;
    at = now;
    const alerts = [];
    const summaries = new Map<string, RunStateSummary>();
    for (const event of events) {
      const output = monitor.process(event);
      alerts.push(...output.alerts);
      summaries.set(output.runState.run_id, output.runState);
    }
    now = performance.now();
    result.detect += now - at;
    at = now;
    for (const runId of summaries.keys()) {
      const state = runs.get(runId);
      if (state === undefined) continue;
      const value = serializeRunState(state);
      result.changelogBytes += Buffer.byteLength(value);
      result.changelogRecords++;
    }
    now = performance.now();
    result.changelog += now - at;
    at = now;
    for (const summary of summaries.values()) result.summaryBytes += Buffer.byteLength(JSON.stringify(summary));
    now = performance.now();
    result.summary += now - at;
    at = now;
    for (const alert of alerts) await serde.encodeAlert(alert);
    result.alerts += performance.now() - at;
    result.alertCount += alerts.length;
  }
  return result;
}

await pass(); // JIT, registry caches and the command cache warm
const passes: Pass[] = [];
const collect = (globalThis as { gc?: () => void }).gc;
for (let index = 0; index < PASSES; index++) {
  collect?.();
  passes.push(await pass());
}
const median = (values: number[]): number =>
  [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)] ?? Number.NaN;
const perRecordUs = (stage: keyof Pass): string =>
  ((median(passes.map((entry) => entry[stage])) * 1000) / EVENTS).toFixed(2);
const first = passes[0];
if (first === undefined) throw new Error("no pass");
const total = median(
  passes.map((entry) => entry.decode + entry.detect + entry.changelog + entry.summary + entry.alerts),
);
console.log(
  `records ${EVENTS}, batch ${BATCH}, passes ${PASSES} (median µs per record): decode+validate ${perRecordUs("decode")}, detect ${perRecordUs("detect")}, changelog serialise ${perRecordUs("changelog")}, summary serialise ${perRecordUs("summary")}, alert encode ${perRecordUs("alerts")}; total ${((total * 1000) / EVENTS).toFixed(2)}`,
);
console.log(
  `bytes per record: changelog ${(first.changelogBytes / EVENTS).toFixed(0)} (${first.changelogRecords} changelog records, ${(first.changelogBytes / first.changelogRecords).toFixed(0)} B each), run-state summary ${(first.summaryBytes / EVENTS).toFixed(0)}; alerts per pass ${first.alertCount}`,
);
