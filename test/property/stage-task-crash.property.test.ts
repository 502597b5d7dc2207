import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { shippedCatalog } from "../../src/catalog/metric-definitions.ts";
import type { MetricFact } from "../../src/contract/facts.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../src/metrics/engine-config.ts";
import { MetricEngine } from "../../src/metrics/metric-engine.ts";
import { samePartitions, type StagePartitions } from "../../src/partitioned/ledger-stages.ts";
import { partitionOf } from "../../src/kafka/key-partitioner.ts";
import { READER_OF, STAGE_NAMES, StageTask, type StageName, type StageRole } from "../../src/partitioned/stage-task.ts";
import type { MetricResult } from "../../src/contract/result-record.ts";
import { openLmdbBackend, type StateBackend } from "../../src/state/state-backend.ts";
import { StateStore } from "../../src/state/state-store.ts";
import { factsArb, RUNS } from "../support/fact-arbitraries.ts";

/**
 * The crash protocol of the partitioned engine's stages (src/stream/processors/engine-stages.ts),
 * over logs that behave as Kafka partitions do: every stage partition's `StageTask` keeps its state
 * in LMDB, checkpointed at random points with its input offset and its output logs' ends, and is
 * killed at random points (its uncommitted state is lost, what it sent stays in the logs). The
 * restarted task resumes from its checkpoint (from an empty state without one), reads back what it
 * wrote since, and sends its corrections (`StageTask.correction`). Once every log is consumed, the
 * results log read as a compacted topic equals the single engine's results, whatever was killed when.
 */

const CATALOG = shippedCatalog();
const CHECKPOINT = "\u0000checkpoint";
const root = mkdtempSync(join(tmpdir(), "agentops-stage-crash-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let runs = 0;

interface Entry {
  readonly key: string;
  readonly value: Buffer | null;
  readonly writer: string;
}

interface ResultEntry {
  readonly key: string;
  readonly result: MetricResult | null;
  readonly writer: string;
}

interface Checkpoint {
  readonly offset: number;
  /** Log name → its length when the checkpoint was taken. */
  readonly ends: Readonly<Record<string, number>>;
}

/** One stage partition as a Kafka member runs it: its task over its LMDB state, where it reads, and what it still has to read back. */
interface Member {
  readonly stage: StageName;
  readonly partition: number;
  readonly writer: string;
  backend: StateBackend;
  store: StateStore;
  task: StageTask;
  position: number;
  rebuilt: boolean;
  /** After a restart: the logs' offsets from which to read back what it wrote (undefined: nothing to read back). */
  readBackFrom: Readonly<Record<string, number>> | undefined;
}

class Cluster {
  readonly stages: StagePartitions;
  /** "role/partition" → entries; the facts logs hold facts. */
  readonly logs = new Map<string, Entry[]>();
  readonly facts: { fact: MetricFact; origin: number }[][];
  readonly results: ResultEntry[] = [];
  readonly members: Member[] = [];
  crashes = 0;
  /** Corrections that changed what a reader held (the scenario the protocol exists for). */
  effectiveCorrections = 0;

  readonly directory: string;
  readonly partitions: number;

  constructor(directory: string, partitions: number) {
    this.directory = directory;
    this.partitions = partitions;
    this.stages = samePartitions(partitions);
    this.facts = Array.from({ length: partitions }, () => []);
  }

  async start(): Promise<void> {
    for (const stage of STAGE_NAMES)
      for (let partition = 0; partition < this.partitions; partition++)
        this.members.push(await this.open(stage, partition));
  }

  ingest(fact: MetricFact, origin: number): void {
    this.facts[partitionOf(fact.fact_id, this.partitions)]?.push({ fact, origin });
  }

  private log(name: string): Entry[] {
    let log = this.logs.get(name);
    if (log === undefined) this.logs.set(name, (log = []));
    return log;
  }

  private inputLength(member: Member): number {
    return member.stage === "factLedger"
      ? (this.facts[member.partition]?.length ?? 0)
      : this.log(`${inputRole(member.stage)}/${String(member.partition)}`).length;
  }

  private async open(stage: StageName, partition: number, readBack = false): Promise<Member> {
    const writer = `${stage}/${String(partition)}`;
    const backend = openLmdbBackend(join(this.directory, writer.replace("/", "-")));
    const store = new StateStore(backend, 4_096);
    const stored = backend.get(CHECKPOINT);
    const checkpoint = stored === undefined ? undefined : (JSON.parse(stored.toString("utf8")) as Checkpoint);
    if (checkpoint === undefined) store.clear();
    const task = new StageTask(stage, partition, this.stages, DEFAULT_ENGINE_CONFIG, CATALOG, store);
    return {
      stage,
      partition,
      writer,
      backend,
      store,
      task,
      position: checkpoint?.offset ?? 0,
      rebuilt: checkpoint === undefined,
      readBackFrom: readBack ? (checkpoint?.ends ?? {}) : undefined,
    };
  }

  /** Applies up to `count` input records and sends what the flush emits. */
  process(member: Member, count: number): void {
    const end = Math.min(this.inputLength(member), member.position + count);
    if (member.stage === "factLedger") {
      for (const { fact, origin } of (this.facts[member.partition] ?? []).slice(member.position, end))
        member.task.ingest(fact, origin);
    } else {
      for (const entry of this.log(`${inputRole(member.stage)}/${String(member.partition)}`).slice(
        member.position,
        end,
      ))
        member.task.receive(entry.key, entry.value);
    }
    member.position = end;
    const flushed = member.task.flush();
    for (const record of flushed.records)
      this.log(`${record.role}/${String(record.partition)}`).push({
        key: record.key,
        value: record.value,
        writer: member.writer,
      });
    for (const change of flushed.results)
      this.results.push({ key: change.key, result: change.result, writer: member.writer });
  }

  /** Commits the state with the offset it reflects and the ends of every log (what it writes next lies beyond). */
  async checkpoint(member: Member): Promise<void> {
    if (!member.task.settled) return;
    const ends: Record<string, number> = { results: this.results.length };
    for (const [name, log] of this.logs) ends[name] = log.length;
    const store = member.store;
    await store.commit([
      [CHECKPOINT, Buffer.from(JSON.stringify({ offset: member.position, ends } satisfies Checkpoint))],
    ]);
    await store.landed();
  }

  /** kill -9: the state not committed is lost; the restarted member reads back what it wrote later. */
  async crash(member: Member): Promise<Member> {
    await member.backend.close();
    const restarted = await this.open(member.stage, member.partition, true);
    this.members[this.members.indexOf(member)] = restarted;
    this.crashes++;
    return restarted;
  }

  /** What the Kafka member does before the task goes live: every key it wrote since its checkpoint set to what it holds now. */
  readBack(member: Member): void {
    const from = member.readBackFrom;
    if (from === undefined) return;
    member.readBackFrom = undefined;
    for (const [name, log] of [...this.logs]) {
      const role = name.slice(0, name.indexOf("/")) as StageRole;
      for (const entry of log.slice(from[name] ?? 0)) {
        if (entry.writer !== member.writer) continue;
        const correction = member.task.correction(role, entry.key, member.rebuilt);
        if (correction === undefined) continue;
        if (!sameBytes(latest(log, entry.key)?.value ?? null, correction.value)) this.effectiveCorrections++;
        log.push({ key: entry.key, value: correction.value, writer: member.writer });
      }
    }
    for (const entry of this.results.slice(from["results"] ?? 0)) {
      if (entry.writer !== member.writer) continue;
      const correction = member.task.resultCorrection(entry.key, member.rebuilt);
      if (correction === undefined) continue;
      this.results.push({ key: entry.key, result: correction.result, writer: member.writer });
    }
  }

  /** Every member reads back and consumes its input until nothing moves. */
  drain(): void {
    for (;;) {
      let moved = false;
      for (const member of this.members) {
        this.readBack(member);
        if (member.position < this.inputLength(member) || !member.task.settled) {
          this.process(member, Number.POSITIVE_INFINITY);
          moved = true;
        }
      }
      if (!moved) return;
    }
  }

  /** The results log as a compacted topic holds it: the latest value per key, tombstones removed. */
  publishedResults(): string[] {
    const latestByKey = new Map<string, MetricResult | null>();
    for (const entry of this.results) latestByKey.set(entry.key, entry.result);
    return [...latestByKey]
      .filter((entry): entry is [string, MetricResult] => entry[1] !== null)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, result]) => JSON.stringify(result));
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((member) => member.backend.close()));
  }
}

function secondVersion(fact: MetricFact): MetricFact {
  const provenance =
    fact.provenance === null
      ? { basis: "DIRECT_HOST", source: "again" }
      : { ...fact.provenance, source: `${fact.provenance.source}-again` };
  return { ...fact, provenance } as MetricFact;
}

function inputRole(stage: StageName): StageRole {
  const role = (Object.keys(READER_OF) as StageRole[]).find((candidate) => READER_OF[candidate] === stage);
  if (role === undefined) throw new Error(`${stage} reads facts`);
  return role;
}

function latest(log: readonly Entry[], key: string): Entry | undefined {
  for (let index = log.length - 1; index >= 0; index--) if (log[index]?.key === key) return log[index];
  return undefined;
}

function sameBytes(a: Buffer | null, b: Buffer | null): boolean {
  return a === null || b === null ? a === b : a.equals(b);
}

const stepArb = fc.record({
  kind: fc.constantFrom("process", "process", "process", "checkpoint", "crash", "readBack"),
  member: fc.nat(),
  count: fc.integer({ min: 1, max: 12 }),
  ingest: fc.integer({ min: 0, max: 6 }),
});

describe("partitioned engine stages killed and restarted", { timeout: 600_000 }, () => {
  it("end with the single engine's results, whatever stage partition was killed when", async () => {
    const seen = { crashes: 0, effectiveCorrections: 0 };
    await fc.assert(
      fc.asyncProperty(
        factsArb,
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.constantFrom(1, 2, 3),
        fc.array(stepArb, { minLength: 1, maxLength: 60 }),
        async (generated, redone, partitions, steps) => {
          // A second version of some facts, later in the stream: their fact_id becomes a conflict and
          // what they contributed is withdrawn, so an output can change and change back between two
          // flushes, the case a restarted writer cannot re-derive from its input alone.
          const facts = [
            ...generated,
            ...redone.flatMap((index) =>
              generated.length === 0 ? [] : [secondVersion(generated[index % generated.length] as MetricFact)],
            ),
          ];
          const single = new MetricEngine(DEFAULT_ENGINE_CONFIG, CATALOG);
          facts.forEach((fact, index) => single.ingest(fact, index + 1));
          const cluster = new Cluster(join(root, `run-${String((runs += 1))}`), partitions);
          await cluster.start();
          try {
            let ingested = 0;
            for (const step of steps) {
              for (const fact of facts.slice(ingested, ingested + step.ingest)) cluster.ingest(fact, (ingested += 1));
              const member = cluster.members[step.member % cluster.members.length] as Member;
              if (step.kind === "process") cluster.process(member, step.count);
              else if (step.kind === "checkpoint") await cluster.checkpoint(member);
              else if (step.kind === "crash") await cluster.crash(member);
              else cluster.readBack(member);
            }
            for (const fact of facts.slice(ingested)) cluster.ingest(fact, (ingested += 1));
            cluster.drain();
            expect(cluster.publishedResults()).toEqual(single.results().map((entry) => entry.json));
            seen.crashes += cluster.crashes;
            seen.effectiveCorrections += cluster.effectiveCorrections;
          } finally {
            await cluster.close();
          }
        },
      ),
      { numRuns: Math.max(20, Math.round(RUNS / 2)) },
    );
    // The property is about crashes whose readers held values the restarted writer had to correct.
    expect(seen.crashes).toBeGreaterThan(0);
    expect(seen.effectiveCorrections).toBeGreaterThan(0);
  });
});
