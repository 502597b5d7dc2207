/**
 * Micro-benchmark of contract validation (src/contract): JSON.parse of every line of an NDJSON
 * facts file, then, over the decoded objects, 3 timed rounds each of
 *   - zod only: the schema path parseFact used before the fast path (type dispatch + safeParse),
 *   - fastParseFact alone (undefined = falls back to zod),
 *   - parseFact as shipped (fast path, zod for the rest).
 * Reports µs/record and how many valid records the fast path took.
 *
 *   node_modules/.bin/node bench/contract-parse.bench.ts [file]   (default bench/out/facts-100000-seed42.ndjson)
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { FACT_TYPES, OBSERVATION_CONTRACT, factSchemas, type FactType } from "../src/contract/fact-schema.ts";
import { fastParseFact } from "../src/contract/fast-parse.ts";
import { parseFact } from "../src/contract/parse-fact.ts";

const file = process.argv[2] ?? "bench/out/facts-100000-seed42.ndjson";
const ROUNDS = 3;

/** parseFact as it was before the fast path (its accepting path; rejections add only the reason mapping). */
function zodOnly(input: unknown): boolean {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return false;
  const record = input as Record<string, unknown>;
  if (record["contract"] !== OBSERVATION_CONTRACT) return false;
  const type = record["type"];
  if (typeof type !== "string" || !(FACT_TYPES as readonly string[]).includes(type)) return false;
  return factSchemas[type as FactType].safeParse(record).success;
}

function time(label: string, records: readonly unknown[], run: (record: unknown) => boolean): number[] {
  const results: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    let accepted = 0;
    const start = performance.now();
    for (const record of records) if (run(record)) accepted++;
    const micros = ((performance.now() - start) * 1000) / records.length;
    results.push(micros);
    console.log(`${label.padEnd(22)} round ${round}: ${micros.toFixed(3)} µs/record (${accepted} accepted)`);
  }
  return results;
}

const lines = readFileSync(file, "utf8")
  .split("\n")
  .filter((line) => line.length > 0);
const records: unknown[] = [];
const parseStart = performance.now();
for (const line of lines) {
  try {
    records.push(JSON.parse(line));
  } catch {
    // a malformed line: not part of the validation measurement
  }
}
const jsonMicros = ((performance.now() - parseStart) * 1000) / lines.length;
console.log(
  `${file}: ${lines.length} lines, ${records.length} JSON objects; load average ${loadavg()
    .map((load) => load.toFixed(1))
    .join(" ")}`,
);
console.log(`${"JSON.parse".padEnd(22)}          ${jsonMicros.toFixed(3)} µs/line`);

const zod = time("zod only (before)", records, zodOnly);
const fast = time("fastParseFact", records, (record) => fastParseFact(record) !== undefined);
const shipped = time("parseFact (after)", records, (record) => parseFact(record).ok);

const valid = records.filter(zodOnly).length;
const fastHits = records.filter((record) => fastParseFact(record) !== undefined).length;
const best = (values: readonly number[]) => Math.min(...values).toFixed(3);
console.log(`fast path coverage: ${fastHits} of ${valid} valid records (${((100 * fastHits) / valid).toFixed(2)}%)`);
console.log(
  `best of ${ROUNDS}: zod only ${best(zod)} µs, fastParseFact ${best(fast)} µs, parseFact ${best(shipped)} µs per record; JSON.parse ${jsonMicros.toFixed(3)} µs per line`,
);
console.log(
  `load average after: ${loadavg()
    .map((load) => load.toFixed(1))
    .join(" ")}`,
);
