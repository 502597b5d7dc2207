import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { shippedCatalog } from "../../../src/catalog/metric-definitions.ts";
import type { MetricFact } from "../../../src/contract/facts.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../../src/metrics/engine-config.ts";
import { INLINE_MEMBERS } from "../../../src/metrics/entity-docs.ts";
import { MetricEngine } from "../../../src/metrics/metric-engine.ts";
import { openLmdbBackend } from "../../../src/state/state-backend.ts";
import { engineTables } from "../../../src/state/engine-tables.ts";
import { StateStore } from "../../../src/state/state-store.ts";
import { at, cost, definedTask, HOUR, modelCall, packet, repair, snapshot, summary } from "./fact-builders.ts";

/**
 * Entity documents keep a list's first INLINE_MEMBERS members in themselves and the rest in a
 * link table of their own (src/metrics/entity-docs.ts, DocList): a long agent run's Delivery
 * gathers thousands of calls. This test builds entities past that, on every list, withdraws
 * spilled members too (a conflicting version quarantines the fact), and compares with an engine
 * whose documents hold every member (nothing spilled), so a mistake of the spilling itself shows
 * (engine-state-on-disk.property.test.ts spills random fact sets with an inline limit of 1 or 2).
 */

const root = mkdtempSync(join(tmpdir(), "agentops-entity-docs-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let stores = 0;

const MANY = INLINE_MEMBERS + 40;

/**
 * One Delivery, one task_id, one call and one packet, each with MANY members on every list they
 * have, and conflicting versions of some of the last members (past any inline limit), so that
 * withdrawing a spilled member changes published values: the call's and the Deliveries' money
 * (24 more terminal Deliveries make trajectory-partial-cost reach its minimum sample), and the
 * packet's only attributable repairs.
 */
function longEntities(): MetricFact[] {
  const facts: MetricFact[] = [];
  const time = (index: number) => at(HOUR + index * 1000);
  const last = MANY - 5;
  for (let index = 0; index < MANY; index++) {
    const callId = `call-${String(index)}`;
    facts.push(modelCall({ call_id: callId, delivery_id: "d-long", task_id: "t-long", event_time: time(index) }));
    facts.push(cost({ cost_id: `cost-${String(index)}`, call_id: callId, event_time: time(index) }));
    facts.push(
      cost({
        cost_id: `direct-${String(index)}`,
        call_id: undefined,
        delivery_id: "d-long",
        amount_minor: index,
        event_time: time(index),
      }),
    );
    facts.push(
      cost({
        cost_id: `on-one-call-${String(index)}`,
        call_id: "call-0",
        amount_minor: 7 + index,
        event_time: time(index),
      }),
    );
    facts.push(summary({ delivery_id: "d-long", task_id: "t-long", status: "OPEN", event_time: time(index) }));
    facts.push(
      repair({
        repair_id: `r-${String(index)}`,
        packet_id: "p-long",
        task_id: "t-long",
        delivery_id: "d-long",
        attributable: index >= last,
        event_time: time(index),
      }),
    );
  }
  facts.push(
    summary({
      delivery_id: "d-long",
      task_id: "t-long",
      status: "TERMINAL",
      outcome: "SUCCEEDED",
      event_time: at(10 * HOUR),
    }),
  );
  for (let index = 0; index < 24; index++) {
    facts.push(
      summary({
        delivery_id: `d-${String(index)}`,
        task_id: `t-${String(index)}`,
        status: "TERMINAL",
        outcome: "SUCCEEDED",
        event_time: at(10 * HOUR),
      }),
    );
    facts.push(
      cost({
        cost_id: `other-${String(index)}`,
        call_id: undefined,
        delivery_id: `d-${String(index)}`,
        amount_minor: 100,
        event_time: at(9 * HOUR),
      }),
    );
  }
  facts.push(packet({ packet_id: "p-long", task_id: "t-long" }));
  // Many snapshots list the Delivery and name the task_id: its readers spill too.
  for (let index = 0; index < MANY; index++)
    facts.push(
      snapshot({
        snapshot_id: `snap-${String(index)}`,
        tasks: [definedTask({ task_id: "t-long", members: ["d-long"] })],
      }),
    );
  // Conflicting versions of the last members: every version of each is quarantined (contract §1).
  for (let index = last; index < MANY; index++) {
    facts.push(
      modelCall({
        call_id: `call-${String(index)}`,
        delivery_id: "d-long",
        task_id: "t-long",
        event_time: time(index),
        input_tokens: 9,
      }),
    );
    facts.push(
      cost({
        cost_id: `direct-${String(index)}`,
        call_id: undefined,
        delivery_id: "d-long",
        amount_minor: index + 1,
        event_time: time(index),
      }),
    );
    facts.push(
      cost({ cost_id: `on-one-call-${String(index)}`, call_id: "call-0", amount_minor: 1, event_time: time(index) }),
    );
    facts.push(
      repair({
        repair_id: `r-${String(index)}`,
        packet_id: "p-long",
        task_id: "t-long",
        delivery_id: "d-long",
        attributable: false,
        event_time: time(index),
      }),
    );
  }
  return facts;
}

/** The reference: in memory, every list held in its document. */
function inMemory(facts: readonly MetricFact[]): { lines: string[]; conflicts: unknown } {
  const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog(), undefined, {
    inlineMembers: Number.POSITIVE_INFINITY,
  });
  facts.forEach((fact, index) => engine.ingest(fact, index + 1));
  return { lines: engine.results().map((entry) => entry.json), conflicts: engine.conflicts() };
}

describe("entity documents past their inline members", () => {
  it("give the in-memory engine's results and conflicts on disk, in any order and with nothing cached, across a reopening, and stay small", async () => {
    const facts = longEntities();
    const expected = inMemory(facts);
    expect(expected.lines.length).toBeGreaterThan(10);
    await fc.assert(
      fc.asyncProperty(
        fc.shuffledSubarray(facts, { minLength: facts.length, maxLength: facts.length }),
        fc.integer({ min: 1, max: 400 }),
        fc.constantFrom(3, INLINE_MEMBERS),
        async (order, commitEvery, inlineMembers) => {
          const directory = join(root, `store-${String((stores += 1))}`);
          const half = Math.floor(order.length / 2);
          const first = openLmdbBackend(directory);
          const firstState = new StateStore(first, 0);
          const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog(), engineTables(firstState), {
            inlineMembers,
          });
          const positionOf = new Map(facts.map((fact, index) => [fact, index + 1]));
          for (const [index, fact] of order.slice(0, half).entries()) {
            engine.ingest(fact, positionOf.get(fact));
            if (index % commitEvery === 0) {
              engine.flush();
              await firstState.commit();
            }
          }
          engine.flush();
          await firstState.commit();
          await firstState.landed();
          await first.close();

          const second = openLmdbBackend(directory);
          const secondState = new StateStore(second, 0);
          const reopened = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog(), engineTables(secondState), {
            inlineMembers,
          });
          for (const fact of order.slice(half)) reopened.ingest(fact, positionOf.get(fact));
          expect(reopened.results().map((entry) => entry.json)).toEqual(expected.lines);
          expect(reopened.conflicts()).toEqual(expected.conflicts);
          await secondState.commit();
          await secondState.landed();
          // The Delivery's document holds at most INLINE_MEMBERS of each list: a few kilobytes, not all of them.
          const document = second.get("ed\u0000d-long");
          expect(document).toBeDefined();
          expect((document as Buffer).length).toBeLessThan(64 * 1024);
          expect([...second.scan("xdk\u0000")].length).toBeGreaterThan(0);
          await second.close();
          rmSync(directory, { recursive: true, force: true });
        },
      ),
      { numRuns: 6 },
    );
  });

  it("the same facts in memory, in any order, give the same results with the lists spilled there too", () => {
    const facts = longEntities();
    const expected = inMemory(facts);
    fc.assert(
      fc.property(fc.shuffledSubarray(facts, { minLength: facts.length, maxLength: facts.length }), (order) => {
        const positionOf = new Map(facts.map((fact, index) => [fact, index + 1]));
        const engine = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog(), undefined, { inlineMembers: 2 });
        for (const fact of order) engine.ingest(fact, positionOf.get(fact));
        expect(engine.results().map((entry) => entry.json)).toEqual(expected.lines);
        expect(engine.conflicts()).toEqual(expected.conflicts);
      }),
      { numRuns: 10 },
    );
  });
});
