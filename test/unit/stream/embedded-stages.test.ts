import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Effect } from "effect";
import { afterAll, describe, expect, it } from "vitest";
import { shippedCatalog } from "../../../src/catalog/metric-definitions.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../../src/metrics/engine-config.ts";
import { replayFile, type ReplayOutcome } from "../../../src/stream/transports/embedded/embedded-replay.ts";
import { generateWorkloadLines } from "../../../src/workload/workload.ts";

/**
 * Issue #13, "same topology in replay": `agentops replay --engine stages --engine-partitions N`
 * runs the partitioned engine's four stage processors (the ones `agentops run --engine stages`
 * runs on Kafka) over in-process logs. On the generated workload (conflicts, redeliveries,
 * re-reports, late facts, invalid lines) its results, dead-letter file and alerts equal the
 * single engine's byte for byte, for any N.
 */
const dir = mkdtempSync(join(tmpdir(), "agentops-embedded-stages-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const input = join(dir, "facts.ndjson");
writeFileSync(input, `${generateWorkloadLines({ seed: 5, tasks: 300 }).lines.join("\n")}\n`);

function replay(engineTopology?: { kind: "stages"; partitions: number }): Promise<ReplayOutcome> {
  return Effect.runPromise(
    replayFile(
      { input },
      { engine: DEFAULT_ENGINE_CONFIG, tripwires: {}, ...(engineTopology === undefined ? {} : { engineTopology }) },
      shippedCatalog(),
    ),
  );
}

describe("the embedded replay on the partitioned engine's topology", { timeout: 120_000 }, () => {
  it.each([1, 3, 4])(
    "gives the single engine's results, dead letters and alerts on %i partitions",
    async (partitions) => {
      const single = await replay();
      const stages = await replay({ kind: "stages", partitions });
      expect([...single.sinks.results()].length).toBeGreaterThan(100);
      expect(single.sinks.conflicts()).toBeGreaterThan(0);
      expect([...stages.sinks.results()]).toEqual([...single.sinks.results()]);
      expect([...stages.sinks.deadLetterLines()]).toEqual([...single.sinks.deadLetterLines()]);
      expect([...stages.sinks.alerts()]).toEqual([...single.sinks.alerts()]);
      expect(stages.sinks.conflicts()).toBe(single.sinks.conflicts());
      // The per-record ledger counts are the fact ledger's (docs/semantics.md, decision 5): a
      // re-report (one identity under another fact_id) is a new fact there, and only a version that
      // makes its fact_id a conflict is counted quarantined (identity conflicts are decided later, by
      // the domain ledger, and are in the dead letters above).
      const { accepted, redeliveries, quarantined, ...rest } = stages.counts;
      const {
        accepted: singleAccepted,
        redeliveries: singleRedeliveries,
        quarantined: singleQuarantined,
        ...singleRest
      } = single.counts;
      expect(rest).toEqual(singleRest);
      expect(accepted + redeliveries + quarantined).toBe(singleAccepted + singleRedeliveries + singleQuarantined);
      expect(quarantined).toBeLessThanOrEqual(singleQuarantined);
    },
  );
});
