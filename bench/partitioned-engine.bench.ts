/**
 * The partitioned engine's cost in process (issue #13 Part 2): for 1, 2 and 4 partitions, the
 * records each hop carries per fact (the repartition traffic a Kafka deployment would produce and
 * fetch), the balance of the entity stage, and the in-process throughput, against the single
 * engine on the same facts. In-process throughput is the stages' own work with no broker: it
 * bounds what the Kafka deployment can do per core, it does not predict it.
 *
 *   npm run bench:partitioned -- [--lines 200000] [--partitions 1,2,4] [--commit-every 5000]
 */
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { shippedCatalog } from "../src/catalog/metric-definitions.ts";
import { isAgentEvent, type MetricFact } from "../src/contract/facts.ts";
import { parseFactJson } from "../src/contract/parse-fact.ts";
import { DEFAULT_ENGINE_CONFIG } from "../src/metrics/engine-config.ts";
import { MetricEngine } from "../src/metrics/metric-engine.ts";
import { PartitionedEngine } from "../src/partitioned/partitioned-engine.ts";
import { ensureWorkload } from "./workload-file.ts";

const { values } = parseArgs({
  options: {
    lines: { type: "string", default: "200000" },
    partitions: { type: "string", default: "1,2,4" },
    "commit-every": { type: "string", default: "5000" },
  },
});
const lines = Number(values.lines);
const partitionCounts = values.partitions.split(",").map(Number);
const commitEvery = Number(values["commit-every"]);
for (const [name, value] of [
  ["--lines", lines],
  ["--commit-every", commitEvery],
  ...partitionCounts.map((count) => ["--partitions", count] as const),
] as const) {
  if (!Number.isInteger(value) || value < 1)
    throw new Error(
      `${name} must be a positive integer (got ${String(value)}); for example --lines 200000 --partitions 1,2,4`,
    );
}

const log = (message: string): void => void process.stderr.write(`${message}\n`);
const file = await ensureWorkload(lines, log);
const facts: MetricFact[] = [];
for await (const line of createInterface({
  input: createReadStream(file, { encoding: "utf8" }),
  crlfDelay: Infinity,
})) {
  const parsed = parseFactJson(line);
  if (parsed.ok && !isAgentEvent(parsed.fact)) facts.push(parsed.fact);
}
log(`${facts.length.toLocaleString("en-US")} metric facts from ${lines.toLocaleString("en-US")} lines`);

const catalog = shippedCatalog();
const singleStarted = performance.now();
// In a function, so the single engine's state is garbage before the partitioned runs start.
const expected = ((): string[] => {
  const single = new MetricEngine(DEFAULT_ENGINE_CONFIG, catalog);
  facts.forEach((fact, index) => {
    single.ingest(fact, index + 1);
    if ((index + 1) % commitEvery === 0) single.flush();
  });
  return single.results().map((entry) => entry.json);
})();
const singleSeconds = (performance.now() - singleStarted) / 1000;
log(
  `single engine: ${Math.round(facts.length / singleSeconds).toLocaleString("en-US")} facts/s, ${expected.length} results`,
);

const rows: string[] = [];
for (const partitions of partitionCounts) {
  const engine = new PartitionedEngine(DEFAULT_ENGINE_CONFIG, catalog, { partitions });
  const started = performance.now();
  facts.forEach((fact, index) => {
    engine.ingest(fact, index + 1);
    if ((index + 1) % commitEvery === 0) engine.run();
  });
  const results = engine.results().map((entry) => entry.json);
  const seconds = (performance.now() - started) / 1000;
  const same = results.length === expected.length && results.every((json, index) => json === expected[index]);
  const perFact = (count: number): string => (count / facts.length).toFixed(2);
  const { traffic } = engine;
  const balance = engine.entityStats();
  const held = balance.reduce((sum, partition) => sum + partition.facts, 0);
  const row = {
    partitions,
    factsPerSecond: Math.round(facts.length / seconds),
    sameResults: same,
    recordsPerFact: {
      claims: perFact(traffic.claims),
      admissions: perFact(traffic.admissions),
      pushes: perFact(traffic.pushes),
      subscriptions: perFact(traffic.subscriptions),
      responses: perFact(traffic.responses),
      partials: perFact(traffic.partials),
    },
    factsHeldPerPartition: balance.map((partition) => partition.facts),
    copiesPerFact: (held / facts.length).toFixed(2),
  };
  log(JSON.stringify(row));
  rows.push(
    `| ${partitions} | ${row.factsPerSecond.toLocaleString("en-US")} | ${same ? "yes" : "**no**"} | ${Object.values(row.recordsPerFact).join(" / ")} | ${row.copiesPerFact} | ${row.factsHeldPerPartition.map((count) => count.toLocaleString("en-US")).join(", ")} |`,
  );
}

process.stdout.write(
  [
    `${facts.length.toLocaleString("en-US")} metric facts (${lines.toLocaleString("en-US")} lines, seed 42), run() every ${commitEvery.toLocaleString("en-US")} facts; single engine ${Math.round(facts.length / singleSeconds).toLocaleString("en-US")} facts/s`,
    "",
    "| partitions | facts/s (in process) | results equal the single engine | records per fact: claims / admissions / pushes / subscriptions / responses / partials | facts held per fact (all partitions) | facts held by each entity partition |",
    "|---:|---:|---|---|---:|---|",
    ...rows,
    "",
  ].join("\n"),
);
