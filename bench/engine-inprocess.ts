/**
 * Child process of bench/engine.bench.ts: in-process metric-engine throughput on one NDJSON file.
 * Parses the file's facts into memory first (parse time reported separately), then times
 * `engine.ingest` of every metric fact plus the final `results()`. Prints one JSON line.
 *
 *   node_modules/.bin/node bench/engine-inprocess.ts <file.ndjson> [maxLines]
 */
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { shippedCatalog } from "../src/catalog/metric-definitions.ts";
import { isAgentEvent, type MetricFact } from "../src/contract/facts.ts";
import { parseFactJson } from "../src/contract/parse-fact.ts";
import { DEFAULT_ENGINE_CONFIG } from "../src/metrics/engine-config.ts";
import { MetricEngine } from "../src/metrics/metric-engine.ts";

const [file, limitText] = process.argv.slice(2);
if (file === undefined) throw new Error("usage: engine-inprocess.ts <file.ndjson> [maxLines]");
const limit = limitText === undefined ? Number.POSITIVE_INFINITY : Number(limitText);

const facts: MetricFact[] = [];
let lines = 0;
let agentEvents = 0;
let rejected = 0;
const parseStarted = performance.now();
const reader = createInterface({
  input: createReadStream(file, { encoding: "utf8", highWaterMark: 1 << 20 }),
  crlfDelay: Infinity,
});
for await (const line of reader) {
  if (lines >= limit) break;
  lines += 1;
  const parsed = parseFactJson(line);
  if (!parsed.ok) rejected += 1;
  else if (isAgentEvent(parsed.fact)) agentEvents += 1;
  else facts.push(parsed.fact);
}
reader.close();
const parseSeconds = (performance.now() - parseStarted) / 1000;
const rssAfterParse = process.memoryUsage().rss;

const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog());
const ingestStarted = performance.now();
for (const fact of facts) engine.ingest(fact);
const ingestSeconds = (performance.now() - ingestStarted) / 1000;
const resultsStarted = performance.now();
const results = engine.results();
const resultsSeconds = (performance.now() - resultsStarted) / 1000;

process.stdout.write(
  `${JSON.stringify({
    lines,
    facts: facts.length,
    agentEvents,
    rejected,
    results: results.length,
    conflicts: engine.conflicts().length,
    parseSeconds,
    ingestSeconds,
    resultsSeconds,
    rssAfterParseBytes: rssAfterParse,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
  })}\n`,
);
