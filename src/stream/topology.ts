import type { StageName } from "../partitioned/stage-task.ts";
import type { TopicNames, TopicRole } from "./topic-names.ts";

/**
 * The pipeline in one place, as Kafka Streams' Topology names it: the runtime starts a member per
 * processor from it, and docs/architecture.md's picture is `describeTopology()`'s output (a test holds them together).
 */
export type RoleName = "ingest" | "engine" | "run-monitor";
/**
 * The partitioned engine's stage processors (--engine stages), by the stage each runs, in the order
 * records flow: the engine role runs these instead of `engine`.
 */
export const STAGE_PROCESSORS = {
  factLedger: "fact-ledger",
  domainLedger: "domain-ledger",
  entities: "entities",
  aggregation: "aggregation",
} as const satisfies Readonly<Record<StageName, string>>;
export type StageProcessorName = (typeof STAGE_PROCESSORS)[StageName];
export type ProcessorName = RoleName | StageProcessorName;

export interface StateStore {
  readonly name: string;
  /** The compacted topic the store is restored from on every assignment. */
  readonly changelog: TopicRole;
  /**
   * How the store is restored: `source` (its changelog is the processor's own source: the runtime
   * replays the source partition from offset 0 through the task's `restore`, publishing nothing),
   * `partition` (the changelog partition numbered like the source partition), or `topic` (every
   * partition of the changelog: a table the task writes whole).
   */
  readonly restore: "source" | "partition" | "topic";
  /**
   * For a `source`-restored store: the compacted log the task writes its derived state to, loaded
   * (Task.changelogLoad) before the source is read when the task has no local state, so that the
   * source is read without evaluating again what the log holds.
   */
  readonly log?: TopicRole;
  readonly holds: string;
}

export interface ProcessorNode {
  readonly name: ProcessorName;
  /** The topic the processor's consumer group reads. */
  readonly source: TopicRole;
  /** What it does with each record, in a few words. */
  readonly does: string;
  readonly stores: readonly StateStore[];
  /** Every topic it writes, and what goes there. */
  readonly sinks: readonly Sink[];
}

export interface Sink {
  readonly topic: TopicRole;
  readonly carries: string;
  /**
   * Sent ahead of the batch's other writes, in a request of its own: what someone waits on (an
   * alert) is acknowledged without waiting for the bulk (run states, changelogs) behind it.
   */
  readonly first?: true;
}

export const TOPOLOGY: Readonly<Record<ProcessorName, ProcessorNode>> = {
  ingest: {
    name: "ingest",
    source: "facts",
    does: "decode (registry) · validate (contract) · route",
    stores: [],
    sinks: [
      { topic: "deadLetters", carries: "rejected records: reason, source coordinates, original bytes" },
      { topic: "agentEvents", carries: "agent_step and sandbox_event, keyed by run_id (internal binary layout)" },
      {
        topic: "engineFacts",
        carries: "accepted metric facts, normalised, keyed by fact version (internal binary layout)",
      },
      { topic: "stageFacts", carries: "with --engine stages instead: the same, placed by fact_id" },
    ],
  },
  engine: {
    name: "engine",
    source: "engineFacts",
    does: "ledger (redelivery/conflict) → units → contributions (add/retract) → group sums",
    // The engine's state is a function of the set of accepted facts, so its input is its changelog.
    stores: [
      {
        name: "engine-state",
        changelog: "engineFacts",
        restore: "source",
        log: "engineContributions",
        holds:
          "the metric engine on disk (LMDB per partition, checkpointed); " +
          "without local state: units from the contributions log, facts loaded, no unit evaluated",
      },
      {
        name: "published-results",
        changelog: "results",
        restore: "topic",
        holds:
          "the encoded result per key the results topic holds (on disk beside the engine state, behind a quarter of its cache, " +
          "checkpointed with the topic's offsets); a write equal to it is dropped",
      },
    ],
    sinks: [
      {
        topic: "results",
        carries: "the published-results store's changelog: latest result per key (upserts and tombstones)",
      },
      {
        topic: "engineContributions",
        carries: "each unit's contributions after a flush, and the engine-facts offset they reflect",
      },
      { topic: "deadLetters", carries: "CONFLICT: every version of a conflicting identity" },
    ],
  },
  "fact-ledger": {
    name: "fact-ledger",
    source: "stageFacts",
    does: "fact ledger by fact_id: redelivery · fact_id conflict → each version's claim on its identity",
    stores: [
      {
        name: "stage-state",
        changelog: "stageFacts",
        restore: "source",
        holds:
          "the fact versions by fact_id, and the outbox (the value last sent per output key), on disk and checkpointed",
      },
    ],
    sinks: [
      { topic: "stageClaims", carries: "one record per version claiming a domain identity, with whether it is live" },
      { topic: "stageEntities", carries: "summaries (no domain identity) admitted to their bundles" },
      { topic: "deadLetters", carries: "CONFLICT: every version of a fact_id with two" },
    ],
  },
  "domain-ledger": {
    name: "domain-ledger",
    source: "stageClaims",
    does: "domain ledger by identity: content conflicts · the live version with the smallest fact_id is admitted",
    stores: [
      {
        name: "stage-state",
        changelog: "stageClaims",
        restore: "source",
        holds: "the claims and admitted version per identity, and the outbox",
      },
    ],
    sinks: [
      {
        topic: "stageEntities",
        carries: "the admitted fact, to the owner of every bundle it belongs to (tombstones where it left)",
      },
      { topic: "deadLetters", carries: "CONFLICT: every version of an identity with two contents" },
    ],
  },
  entities: {
    name: "entities",
    source: "stageEntities",
    does:
      "entity stage by bundle: facts indexed · call bundles pushed to their Delivery · " +
      "foreign-key joins (subscription, response) · units → partial group sums",
    stores: [
      {
        name: "stage-state",
        changelog: "stageEntities",
        restore: "source",
        holds: "the bundles' facts, subscriptions, join responses, units, partial groups, and the outbox",
      },
    ],
    sinks: [
      { topic: "stageEntities", carries: "pushes, subscriptions and responses to other entity partitions" },
      { topic: "stagePartials", carries: "this partition's partial sums of each changed result group" },
      { topic: "deadLetters", carries: "LATER_TERMINAL_SUMMARY: a Delivery's TERMINAL summaries" },
    ],
  },
  aggregation: {
    name: "aggregation",
    source: "stagePartials",
    does: "aggregation by result group: partial sums added exactly · rendered · published on change",
    stores: [
      {
        name: "stage-state",
        changelog: "stagePartials",
        restore: "source",
        holds: "each entity partition's partial sums per group, and the results as published",
      },
    ],
    sinks: [
      {
        topic: "results",
        carries: "latest result per key (upserts and tombstones), each naming its writer (header agentops-writer)",
      },
    ],
  },
  "run-monitor": {
    name: "run-monitor",
    source: "agentEvents",
    does: "per-run loop · redundancy · destructive-action rules",
    stores: [
      {
        name: "run-states",
        changelog: "runMonitorChangelog",
        restore: "partition",
        holds: "one state per active run, on its events' partition",
      },
    ],
    sinks: [
      { topic: "alerts", carries: "tripwire alerts (sent first)", first: true },
      { topic: "runState", carries: "per-run summary, compacted" },
      { topic: "runMonitorChangelog", carries: "the run-states store's changelog" },
      { topic: "deadLetters", carries: "records that are not agent events" },
    ],
  },
};

/** Every role an instance can take, in the order records flow (the default roles of an instance). */
export const PROCESSOR_NAMES = ["ingest", "engine", "run-monitor"] as const satisfies readonly RoleName[];

/** The partitioned engine's stage processors, in the order records flow. */
export const ENGINE_STAGES: readonly StageProcessorName[] = Object.values(STAGE_PROCESSORS);

/** Which stage each stage processor runs. */
export const STAGE_OF = Object.fromEntries(
  Object.entries(STAGE_PROCESSORS).map(([stage, name]) => [name, stage]),
) as Readonly<Record<StageProcessorName, StageName>>;

/** Every processor of the topology, in the order records flow. */
export const ALL_PROCESSORS: readonly ProcessorName[] = ["ingest", "engine", ...ENGINE_STAGES, "run-monitor"];

const RESTORED_FROM: Readonly<Record<StateStore["restore"], string>> = {
  source: "its local checkpoint, else its log and its source",
  partition: "the source's partition",
  topic: "every partition, from its checkpoint if it keeps one",
};

/**
 * The order a processor's batch writes are sent in: the sinks marked `first`, then the others
 * (each group one bounded send; an empty group is skipped).
 */
export function sendOrder(name: ProcessorName): readonly (readonly TopicRole[])[] {
  const sinks = TOPOLOGY[name].sinks;
  return [sinks.filter((sink) => sink.first === true), sinks.filter((sink) => sink.first !== true)]
    .map((group) => group.map((sink) => sink.topic))
    .filter((group) => group.length > 0);
}

/** The topic roles a processor writes: its declared sinks (a write anywhere else is refused). */
export function sinkRoles(name: ProcessorName): ReadonlySet<TopicRole> {
  return new Set(TOPOLOGY[name].sinks.map((sink) => sink.topic));
}

/** The topology as text, in the order records flow; `topics` gives the (prefixed) topic names. */
export function describeTopology(topics: TopicNames): string {
  const lines: string[] = [];
  for (const name of ALL_PROCESSORS) {
    const node = TOPOLOGY[name];
    lines.push(`Sub-topology: ${node.name}`);
    lines.push(`  Source:    ${topics[node.source]}`);
    lines.push(`  Processor: [${node.name}] ${node.does}`);
    for (const store of node.stores) {
      const log = store.log === undefined ? "" : `, log ${topics[store.log]}`;
      const from =
        store.restore === "source" && store.log === undefined
          ? "its local checkpoint, else its source from offset 0"
          : RESTORED_FROM[store.restore];
      lines.push(
        `  Store:     ${store.name} = ${store.holds}; changelog ${topics[store.changelog]}${log} (restored from ${from})`,
      );
    }
    for (const sink of node.sinks) lines.push(`  Sink:      ${topics[sink.topic]}: ${sink.carries}`);
    lines.push("");
  }
  return lines.join("\n").trimEnd();
}
