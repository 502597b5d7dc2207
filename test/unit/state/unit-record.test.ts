import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { shippedCatalog } from "../../../src/catalog/metric-definitions.ts";
import { isAgentEvent, type MetricFact } from "../../../src/contract/facts.ts";
import { parseFactJson } from "../../../src/contract/parse-fact.ts";
import { BinaryReader, InternalRecordError } from "../../../src/codec/binary-form.ts";
import { DEFAULT_ENGINE_CONFIG } from "../../../src/metrics/engine-config.ts";
import { MetricEngine } from "../../../src/metrics/metric-engine.ts";
import type { Scope } from "../../../src/contract/result-record.ts";
import { NO_COHORT, resultKey } from "../../../src/metrics/scope.ts";
import { decodeUnitRecord, encodeUnitRecord } from "../../../src/state/codecs/contributions.ts";
import { engineTables } from "../../../src/state/engine-tables.ts";
import { stateIdentity } from "../../../src/state/local-state.ts";
import { openLmdbBackend } from "../../../src/state/state-backend.ts";
import { StateStore } from "../../../src/state/state-store.ts";
import { generateWorkloadLines } from "../../../src/workload/workload.ts";

const root = mkdtempSync(join(tmpdir(), "agentops-unit-record-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the contributions changelog record", () => {
  const identity = stateIdentity(DEFAULT_ENGINE_CONFIG, shippedCatalog());

  it("gives back every unit's contributions of the generated workload, result keys included, in a fraction of their keys' bytes", async () => {
    const facts: MetricFact[] = [];
    for (const line of generateWorkloadLines({ seed: 11, tasks: 200 }).lines) {
      const parsed = parseFactJson(line);
      if (parsed.ok && !isAgentEvent(parsed.fact)) facts.push(parsed.fact);
    }
    const backend = openLmdbBackend(join(root, "workload"));
    const engine = new MetricEngine(
      DEFAULT_ENGINE_CONFIG,
      shippedCatalog(),
      engineTables(new StateStore(backend, 1 << 20)),
    );
    for (const fact of facts) engine.ingest(fact);
    engine.flush();
    const changes = engine.unitChanges().filter(([, contributions]) => contributions.length > 0);
    expect(changes.length).toBeGreaterThan(1_000);
    const kinds = new Set(
      changes.flatMap(([, contributions]) =>
        contributions.map(
          (contribution) => `${contribution.scope.kind}:${String(Object.keys(contribution.cohort).length)}`,
        ),
      ),
    );
    // Both scope kinds, cohort-less and cohort records.
    expect([...kinds].some((kind) => kind.startsWith("window:"))).toBe(true);
    expect([...kinds].some((kind) => kind.startsWith("snapshot:"))).toBe(true);
    expect([...kinds].some((kind) => kind.endsWith(":0"))).toBe(true);
    expect([...kinds].some((kind) => !kind.endsWith(":0"))).toBe(true);
    let recordBytes = 0;
    let keyBytes = 0;
    for (const [, contributions] of changes) {
      const bytes = encodeUnitRecord(identity, contributions);
      recordBytes += bytes.length;
      keyBytes += contributions.reduce((sum, contribution) => sum + contribution.groupKey.length, 0);
      const decoded = decodeUnitRecord(bytes, identity);
      expect(decoded).toEqual(contributions);
      expect(decoded?.map((contribution) => JSON.stringify([contribution.scope, contribution.cohort]))).toEqual(
        contributions.map((contribution) => JSON.stringify([contribution.scope, contribution.cohort])),
      );
      // The engine's own scope and cohort objects, not copies: a member loading the log holds
      // tens of thousands of units, and copies (with their result keys) took its heap past 1 GiB.
      decoded?.forEach((contribution, index) => {
        expect(contribution.scope).toBe(contributions[index]?.scope);
        expect(contribution.cohort).toBe(contributions[index]?.cohort);
      });
    }
    expect(recordBytes).toBeLessThan(keyBytes / 2);
    await backend.close();
  });

  it("restored into a store, reads back equal from the cache and from disk, and with its facts gives the results it was written with", async () => {
    const facts: MetricFact[] = [];
    for (const line of generateWorkloadLines({ seed: 12, tasks: 60 }).lines) {
      const parsed = parseFactJson(line);
      if (parsed.ok && !isAgentEvent(parsed.fact)) facts.push(parsed.fact);
    }
    const written = new MetricEngine(
      DEFAULT_ENGINE_CONFIG,
      shippedCatalog(),
      engineTables(new StateStore(openLmdbBackend(join(root, "written")), 1 << 20)),
    );
    for (const fact of facts) written.ingest(fact);
    written.flush();
    const records = written
      .unitChanges()
      .map(([unit, contributions]) => [unit, encodeUnitRecord(identity, contributions)] as const);
    const store = new StateStore(openLmdbBackend(join(root, "restored")), 64 * 1024);
    const restored = new MetricEngine(DEFAULT_ENGINE_CONFIG, shippedCatalog(), engineTables(store));
    for (const [unit, bytes] of records) restored.restoreUnit(unit, decodeUnitRecord(bytes, identity) ?? []);
    const units = (engine: MetricEngine) =>
      (["call", "delivery", "packet", "task", "snapshot"] as const).flatMap((kind) =>
        [...engine.lineage().units(kind)].map(([id, contributions]) => [kind, id, contributions] as const).sort(),
      );
    const expected = units(written);
    expect(expected.length).toBeGreaterThan(100);
    // Before any commit (documents in the cache), then written and mostly evicted (a 64 KiB cache).
    expect(units(restored)).toEqual(expected);
    restored.flush();
    await store.commit();
    await store.landed();
    expect(store.stats().evictions).toBeGreaterThan(0);
    expect(units(restored)).toEqual(expected);
    // The facts loaded after the log, as a restore does: the results are the engine's that wrote it.
    for (const fact of facts) restored.load(fact);
    expect(restored.resultKeys().map((key) => restored.result(key))).toEqual(
      written.resultKeys().map((key) => written.result(key)),
    );
  });

  it("keeps a scope that is not in the engine's form as written (a window off the epoch grid, a cutoff without milliseconds)", () => {
    const body = {
      candidate: true,
      covered: true,
      eligible: true,
      hit: false,
      category: undefined,
      amount: 3,
      money: [],
      exclusions: {},
      asOf: 1_000,
    };
    const scopes: Scope[] = [
      { kind: "window", start: "2026-01-01T00:30:00.000Z", end: "2026-01-02T00:30:00.000Z" },
      { kind: "window", start: "not a time", end: "2026-01-02T00:00:00.000Z" },
      { kind: "snapshot", snapshot_id: "s1", cutoff: "2026-01-01T00:00:00Z" },
    ];
    const contributions = scopes.map((scope) => ({
      metricId: "operational-token-usage" as const,
      scope,
      cohort: NO_COHORT,
      groupKey: resultKey("operational-token-usage", scope, NO_COHORT),
      ...body,
    }));
    expect(decodeUnitRecord(encodeUnitRecord(identity, contributions), identity)).toEqual(contributions);
  });

  it("decodes money and exclusion counts exactly, a reason named __proto__ included, and a damaged scope section each time it is read", () => {
    const scope: Scope = { kind: "window", start: "2026-01-01T00:00:00.000Z", end: "2026-01-02T00:00:00.000Z" };
    const money = [{ currency: "EUR", source: "provider_invoice", costBasis: "list", amountMinor: 2n ** 60n }];
    const exclusions = JSON.parse('{"__proto__": 2, "NO_TERMINAL_SUMMARY": 1}') as Record<string, number>;
    const contribution = {
      metricId: "operational-token-usage" as const,
      scope,
      cohort: NO_COHORT,
      groupKey: resultKey("operational-token-usage", scope, NO_COHORT),
      candidate: true,
      covered: false,
      eligible: true,
      hit: true,
      category: "x",
      amount: 1.5,
      money,
      exclusions,
      asOf: 7,
    };
    const decoded = decodeUnitRecord(encodeUnitRecord(identity, [contribution, contribution]), identity);
    expect(decoded).toEqual([contribution, contribution]);
    expect(Object.keys(decoded?.[0]?.exclusions ?? {})).toEqual(["__proto__", "NO_TERMINAL_SUMMARY"]);
    expect(Object.getPrototypeOf(decoded?.[0]?.exclusions)).toBe(Object.prototype);
    // A record whose scope kind is unknown: refused, also when its bytes were read before (the
    // decoded scope sections are kept by their bytes, and a failure must not be kept as a success).
    const good = encodeUnitRecord(identity, [contribution]);
    const reader = new BinaryReader(good);
    reader.skipString();
    expect(reader.unsigned()).toBe(1);
    const damaged = Buffer.from(good);
    expect(damaged[reader.offset]).toBe(0);
    damaged[reader.offset] = 2;
    expect(() => decodeUnitRecord(damaged, identity)).toThrow(InternalRecordError);
    expect(() => decodeUnitRecord(damaged, identity)).toThrow(InternalRecordError);
  });

  it("of another identity is skipped without reading its body (another layout wrote it); a damaged one is refused", () => {
    const written = encodeUnitRecord("another identity", []);
    const garbage = Buffer.concat([written.subarray(0, written.length - 1), Buffer.from([0xff, 0xff, 0xff])]);
    expect(decodeUnitRecord(garbage, identity)).toBeUndefined();
    const ours = encodeUnitRecord(identity, []);
    expect(decodeUnitRecord(ours, identity)).toEqual([]);
    expect(() =>
      decodeUnitRecord(Buffer.concat([ours.subarray(0, ours.length - 1), Buffer.from([1, 0, 5])]), identity),
    ).toThrow(InternalRecordError);
  });
});
