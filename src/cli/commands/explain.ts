import {
  DEFAULT_ENGINE_CONFIG,
  DEFAULT_WINDOW,
  engineConfigSchema,
  parseWindowSize,
} from "../../metrics/engine-config.ts";
import { REPLAY_STATE_CACHE_MB } from "../../stream/transports/embedded/replay-state.ts";
import { explainReplay } from "../../explain/replay-explain.ts";
import { cohortOf, isMetricId, type ExplainAnswer, type ExplainQuery } from "../../lineage/query.ts";
import { queryMember } from "../../explain/member-client.ts";
import { explainAudit } from "../../explain/audit-explain.ts";
import { CLUSTER_FLAGS, withCluster } from "../cluster-flags.ts";
import { formatExplanation } from "../explain-text.ts";
import { UsageError, type CliCommand } from "../command.ts";
import { booleanFlag, integerFlag, parseFlags, stringFlag, type ParsedFlags } from "../flags.ts";

const USAGE = `Usage: agentops explain <metric | result key> --input <facts.ndjson|facts.avro>
                        [--scope S] [--cohort k=v ...] [--all] [--json] [--first 10]
                        [--window 1d] [--coverage-threshold 10] [--state memory|disk] [--state-dir DIR]
       agentops explain <metric | result key> --member http://host:port [--scope S] [--cohort k=v ...] [--all] [--json]
       agentops explain <metric | result key> --from-topic [--engine single|stages]
                        [--brokers host:port] [--schema-registry URL] [--topic-prefix P] ...

Explains one figure down to its units and facts, from the state the engine keeps (nothing is
computed twice): the figure as published; every unit of its group with its status (eligible with
its contribution, excluded with its reason, uncovered with the required input it lacks, or not a
candidate); the facts behind each unit (fact_id, type, provenance basis, and the file line or
topic/partition/offset it came from); and the refused or quarantined records that may have changed it.

  <metric>              a metric id (agentops catalog); --scope and --cohort narrow it to one group
  <result key>          a result key as printed in a results file (its canonical JSON, quoted)
  --scope               a window by its start or a prefix of it (2026-10-01, window:2026-10-01T06),
                        or a snapshot by its id (snapshot:snap-1)
  --cohort              a cohort coordinate, name=value; repeat for more (role=reviewer --cohort model=m1)
  --input               replays the file as \`agentops replay\` does, then explains from its state
  --member              asks a running engine member through its HTTP port (--metrics-port of
                        \`agentops run\`); a member that does not own the engine's partition answers
                        with the owner's address, which is followed
  --from-topic          rebuilds the engine from the engine-facts topic as the audit does (replay
                        --from-topic: the whole history, each record validated again), then explains
  --engine stages       with --from-topic, for a cluster running the partitioned engine: the single
                        engine is rebuilt from its stage facts topic (the same facts, so the same
                        figures); its members answer --member with 501
  --first               units shown per status (default 10); --all shows every one
  --json                the whole explanation, every unit, as one JSON object
  --window, --coverage-threshold   as for replay: use the values the figures were made with
  --state               where a replay or rebuild keeps its state: "memory" (the default) or "disk"

Exit code 0 when the figure was explained, 2 when the query matched no figure or several (they are listed).`;

export const explainCommand: CliCommand = {
  name: "explain",
  summary: "explain a figure down to its units and facts (over a replay or a running member)",
  usage: USAGE,
  async run(argv) {
    const flags = parseFlags(
      argv,
      {
        input: { type: "string" },
        member: { type: "string" },
        scope: { type: "string" },
        cohort: { type: "string", multiple: true },
        all: { type: "boolean" },
        json: { type: "boolean" },
        first: { type: "string" },
        window: { type: "string" },
        "coverage-threshold": { type: "string" },
        state: { type: "string" },
        "state-dir": { type: "string" },
        "state-cache-mb": { type: "string" },
        "from-topic": { type: "boolean" },
        engine: { type: "string" },
        ...CLUSTER_FLAGS,
      },
      "explain",
    );
    const query = queryFrom(flags);
    const input = stringFlag(flags, "input");
    const member = stringFlag(flags, "member");
    const fromTopic = booleanFlag(flags, "from-topic");
    if ([input !== undefined, member !== undefined, fromTopic].filter(Boolean).length !== 1) {
      throw new UsageError(
        "--input",
        "give exactly one place to explain from",
        "add --input facts.ndjson (a replay), --member http://host:port (a running member) or --from-topic (the audit rebuild)",
      );
    }
    const history = engineHistory(stringFlag(flags, "engine"), fromTopic);
    const perStatus = booleanFlag(flags, "all")
      ? Number.POSITIVE_INFINITY
      : integerFlag(flags, "first", 10, 1, 1_000_000);
    let result: ExplainAnswer;
    if (member !== undefined) result = await queryMember(member, query);
    else if (input !== undefined) result = await explainReplay({ input, ...replayOptions(flags) }, query);
    else
      result = await withCluster(flags, "agentops-explain", ({ kafka, topics }) =>
        explainAudit(kafka, topics[history], replayOptions(flags), query),
      );
    return print(result, perStatus, booleanFlag(flags, "json"), input);
  },
};

/**
 * The topic the audit rebuild reads: the single engine's input, or the partitioned engine's (its
 * facts placed by fact_id). Results are a function of the set of facts, so the single engine
 * rebuilt from the stage facts gives the partitioned engine's figures, and can explain them.
 */
function engineHistory(engine: string | undefined, fromTopic: boolean): "engineFacts" | "stageFacts" {
  if (engine === undefined || engine === "single") return "engineFacts";
  if (engine !== "stages")
    throw new UsageError("--engine", `"${engine}" is not an engine`, "give --engine single (default) or stages");
  if (!fromTopic)
    throw new UsageError(
      "--engine",
      "only applies with --from-topic",
      "a replay explains with the single engine (same figures); for a stages cluster use --from-topic --engine stages",
    );
  return "stageFacts";
}

function queryFrom(flags: ParsedFlags): ExplainQuery {
  const [target, ...rest] = flags.positionals;
  if (target === undefined || rest.length > 0)
    throw new UsageError(
      "<metric>",
      target === undefined ? "no metric was named" : `one metric or result key, not ${flags.positionals.length}`,
      "name a metric, e.g. agentops explain operational-latency-ms --input samples/facts.ndjson",
    );
  const cohortPairs = (flags.values.cohort as string[] | undefined) ?? [];
  if (target.startsWith("{")) {
    if (stringFlag(flags, "scope") !== undefined || cohortPairs.length > 0)
      throw new UsageError(
        "--scope",
        "a result key names its scope and cohort",
        "give the result key alone, or a metric with --scope and --cohort",
      );
    return { key: target };
  }
  if (!isMetricId(target))
    throw new UsageError("<metric>", `"${target}" is not a metric of the catalog`, "list them with `agentops catalog`");
  const cohort = cohortOf(cohortPairs);
  if (typeof cohort === "string")
    throw new UsageError("--cohort", cohort, "give --cohort name=value, e.g. --cohort role=reviewer");
  const scope = stringFlag(flags, "scope");
  return scope === undefined ? { metric: target, cohort } : { metric: target, scope, cohort };
}

/** The engine's configuration and where a replay or rebuild keeps its state. */
function replayOptions(flags: ParsedFlags): Omit<Parameters<typeof explainReplay>[0], "input"> {
  const windowText = stringFlag(flags, "window") ?? DEFAULT_WINDOW;
  const windowMillis = parseWindowSize(windowText);
  if (windowMillis === undefined)
    throw new UsageError(
      "--window",
      `"${windowText}" is not a duration`,
      "give a number and a unit (ms, s, m, h, d), e.g. --window 1d",
    );
  const threshold = integerFlag(flags, "coverage-threshold", DEFAULT_ENGINE_CONFIG.coverageThresholdHundredths, 0, 99);
  const config = engineConfigSchema.safeParse({ windowMillis, coverageThresholdHundredths: threshold });
  if (!config.success)
    throw new UsageError(
      "--window",
      config.error.issues[0]?.message ?? "invalid",
      "use a size that divides one day (1h, 15m, ...) or whole days (1d, 7d)",
    );
  const state = stringFlag(flags, "state") ?? "memory";
  if (state !== "disk" && state !== "memory")
    throw new UsageError(
      "--state",
      `"${state}" is not a place for state`,
      "give --state memory (the default) or --state disk",
    );
  return {
    engine: config.data,
    state,
    stateDir: stringFlag(flags, "state-dir"),
    cacheMb: integerFlag(flags, "state-cache-mb", REPLAY_STATE_CACHE_MB, 1, 4096),
  };
}

function print(result: ExplainAnswer, perStatus: number, json: boolean, file: string | undefined): number {
  if (result.kind === "unmatched") {
    const said =
      result.matches.length === 0
        ? "no published figure matches"
        : `${result.matches.length} figures match; narrow with --scope and --cohort, or give one of these keys:`;
    process.stdout.write(
      json
        ? `${JSON.stringify({ matches: result.matches })}\n`
        : `${[said, ...result.matches.map((key) => `  ${key}`)].join("\n")}\n`,
    );
    return 2;
  }
  process.stdout.write(
    json ? `${JSON.stringify(result.explanation)}\n` : `${formatExplanation(result.explanation, perStatus, file)}\n`,
  );
  return 0;
}
