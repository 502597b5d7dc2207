import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { shippedCatalog } from "../../src/catalog/metric-definitions.ts";
import type { MetricFact } from "../../src/contract/facts.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../src/metrics/engine-config.ts";
import { MetricEngine } from "../../src/metrics/metric-engine.ts";
import { decodeUnitRecord, encodeUnitRecord } from "../../src/state/codecs/contributions.ts";
import { engineTables } from "../../src/state/engine-tables.ts";
import { stateIdentity } from "../../src/state/local-state.ts";
import { openLmdbBackend } from "../../src/state/state-backend.ts";
import { StateStore } from "../../src/state/state-store.ts";
import { factsArb, RUNS } from "../support/fact-arbitraries.ts";

/**
 * The engine on disk (LMDB behind a record cache) computes what the engine in memory computes,
 * whatever the cache size (0 bytes: every clean entry is evicted at each commit, so every read goes
 * to disk), the commit points, and the crashes: a member that stops without committing reopens
 * its store, reads the checkpoint, reconciles what it published with its result table, and re-reads
 * its input from there; a member that lost its disk loads the contributions changelog and the facts
 * before its marker without evaluating a unit, and goes on from the marker (docs/engine-state.md §3).
 */

const CATALOG = shippedCatalog();
const IDENTITY = stateIdentity(DEFAULT_ENGINE_CONFIG, CATALOG);
const root = mkdtempSync(join(tmpdir(), "agentops-engine-state-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let runs = 0;

const CHECKPOINT = "checkpoint";

/** An engine over a store on disk in `directory`, resuming from its checkpoint (the next input position). */
/** `inlineMembers`: how many members an entity document's list holds before the rest spill (1 or 2 make the random fact sets spill). */
function openEngine(
  directory: string,
  budgetBytes: number,
  inlineMembers: number,
): { engine: MetricEngine; state: StateStore; resumeAt: number; close: () => Promise<void> } {
  const backend = openLmdbBackend(directory);
  const state = new StateStore(backend, budgetBytes);
  const checkpoint = backend.get(CHECKPOINT);
  return {
    engine: new MetricEngine(DEFAULT_ENGINE_CONFIG, CATALOG, engineTables(state), { inlineMembers }),
    state,
    resumeAt: checkpoint === undefined ? 0 : checkpoint.readUInt32BE(0),
    close: () => backend.close(),
  };
}

function checkpointAt(position: number): readonly [string, Buffer] {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(position);
  return [CHECKPOINT, bytes];
}

/** The results topic as a consumer sees it: every change applied in order, tombstones deleting. */
function applyChanges(table: Map<string, string>, engine: MetricEngine): void {
  for (const change of engine.flush()) {
    if (change.result === null) table.delete(change.key);
    else table.set(change.key, JSON.stringify(change.result));
  }
}

describe("engine state on disk", { timeout: 600_000 }, () => {
  it("gives the in-memory engine's results and conflicts for any cache size, commit points and crashes", async () => {
    await fc.assert(
      fc.asyncProperty(
        factsArb,
        fc.constantFrom(0, 2_000, 1 << 30),
        fc.constantFrom(1, 2, 64),
        fc.array(
          fc.record({
            take: fc.integer({ min: 1, max: 6 }),
            commit: fc.boolean(),
            wait: fc.boolean(),
            crash: fc.boolean(),
            loseDisk: fc.boolean(),
            markerLost: fc.boolean(),
          }),
          { minLength: 1, maxLength: 12 },
        ),
        async (facts, budgetBytes, inlineMembers, schedule) => {
          const expected = inMemory(facts);
          const directory = join(root, `run-${String((runs += 1))}`);
          let member = openEngine(directory, budgetBytes, inlineMembers);
          const published = new Map<string, string>();
          // The contributions changelog topic: each unit's latest contributions, and the marker (the
          // position its records reflect), as the engine processor sends them after each flush.
          // Held encoded, as the topic holds them: restoring reads the record format back.
          const changelog = new Map<string, Buffer>();
          let settledAt = 0;
          let position = 0;
          // The input's end when the member took over: a member replaying older input does not write
          // the changelog until it is past that end, so the changelog never goes back behind its marker.
          let writesFrom = 0;
          const step = (take: number, markerLost = false): void => {
            for (const fact of facts.slice(position, position + take)) member.engine.ingest(fact, (position += 1));
            applyChanges(published, member.engine);
            if (position < writesFrom) return;
            for (const [unit, contributions] of member.engine.unitChanges())
              changelog.set(unit, encodeUnitRecord(IDENTITY, contributions));
            // Past the input's end at its takeover: live again (the engine processor's goLive).
            member.engine.replaying = false;
            // A crash between the records and the marker leaves the records ahead of the marker.
            if (!markerLost) settledAt = position;
          };
          for (const { take, commit, wait, crash, loseDisk, markerLost } of schedule) {
            step(take, markerLost);
            // A commit is written while the engine goes on; `wait` lets it land before the next step.
            if (commit) await member.state.commit([checkpointAt(position)]);
            if (wait) await member.state.landed();
            if (loseDisk) {
              // A member without local state: the changelog's contributions, then the facts before
              // its marker loaded (no unit evaluated), then the input from the marker on.
              await member.close();
              rmSync(directory, { recursive: true, force: true });
              member = openEngine(directory, budgetBytes, inlineMembers);
              member.engine.replaying = true;
              for (const [unit, record] of changelog)
                member.engine.restoreUnit(unit, decodeUnitRecord(record, IDENTITY) ?? []);
              facts.slice(0, settledAt).forEach((fact, index) => member.engine.load(fact, index + 1));
              writesFrom = facts.length;
              position = settledAt;
              reconcile(published, member.engine);
            } else if (crash) {
              // Stop without committing: what was processed since the checkpoint is lost and read again.
              await member.close();
              member = openEngine(directory, budgetBytes, inlineMembers);
              // Its replay writes every unit it recomputes to the changelog (the engine processor's restore).
              member.engine.replaying = true;
              writesFrom = facts.length;
              position = member.resumeAt;
              // Outputs sent after the checkpoint are on the topic and not in the reopened state: going
              // live reconciles the topic with the state's result table (the engine processor's goLive).
              reconcile(published, member.engine);
            }
          }
          step(facts.length);
          const results = member.engine.results();
          expect(results.map((entry) => entry.json)).toEqual(expected.lines);
          expect(member.engine.conflicts()).toEqual(expected.conflicts);
          // What was published, change by change across crashes, is the final table.
          expect(new Map(results.map((entry) => [entry.key, entry.json]))).toEqual(published);
          await member.close();
          rmSync(directory, { recursive: true, force: true });
        },
      ),
      { numRuns: Math.max(20, Math.floor(RUNS / 4)) },
    );
  });
});

function reconcile(table: Map<string, string>, engine: MetricEngine): void {
  const current = new Map(engine.results().map((entry) => [entry.key, entry.json]));
  for (const key of [...table.keys()]) if (!current.has(key)) table.delete(key);
  for (const [key, json] of current) table.set(key, json);
}

/** The same facts through the engine in memory, each named by its 1-based position as the runs above name it. */
function inMemory(facts: readonly MetricFact[]): { lines: string[]; conflicts: ReturnType<MetricEngine["conflicts"]> } {
  const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, CATALOG);
  facts.forEach((fact, index) => engine.ingest(fact, index + 1));
  return { lines: engine.results().map((entry) => entry.json), conflicts: engine.conflicts() };
}
