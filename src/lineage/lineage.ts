import type { MetricId } from "../catalog/metric-definitions.ts";
import { byUtf8 } from "../contract/code-point-order.ts";
import type { Cost, DeliverySummary, MetricFact } from "../contract/facts.ts";
import type { Contribution, MoneyShare } from "../metrics/contribution.ts";
import { terminalSummary } from "../metrics/delivery-reading.ts";
import type { FactOrigin } from "../metrics/fact-ledger.ts";
import { FORMULA_SHAPES } from "../metrics/metric-formula.ts";
import type { EngineLineage } from "../metrics/metric-engine.ts";
import type { Cohort, MetricResult, Scope } from "../contract/result-record.ts";
import { deliveryCosts } from "../metrics/units/delivery-unit.ts";
import { evidenceContributions } from "../metrics/units/evidence-unit.ts";
import { finalizeContribution } from "../metrics/units/finalize.ts";
import type { UnitKind } from "../metrics/unit-key.ts";
import { missingInputs } from "./missing-inputs.ts";
import {
  type UnitStatus,
  type ExplainedOrigin,
  type ExplainedFact,
  type ExplainedUnit,
  type UnitTotals,
  type ExplainedDeadLetter,
  type Explanation,
  type DeadLetterInput,
} from "./explanation.ts";

const MONEY_COORDINATES = ["currency", "source", "cost_basis"] as const;

/** The unit kinds whose stored contributions may reach a metric's groups (the others are not scanned). */
const KINDS_OF: Readonly<Record<MetricId, readonly UnitKind[]>> = {
  "role-template-rework-rate": ["task"],
  "role-template-trajectory-partial-cost": ["task"],
  "role-model-task-outcome-rate": ["task"],
  "task-cohort-comparison-eligibility": ["task", "snapshot"],
  "packet-rework-rate": ["packet"],
  "operational-latency-ms": ["call"],
  "operational-token-usage": ["call"],
  "operational-attributable-cost": ["call"],
  "operational-usage-availability": ["call"],
  "trajectory-partial-cost": ["delivery"],
  "delivery-stage-reach": ["delivery"],
  "delivery-terminal-outcome-rate": ["delivery"],
  "delivery-cycle-time-ms": ["delivery"],
  "direct-evidence-basis-rate": ["call", "delivery"],
};

/** The fact types a metric's units read: a refused fact of another type cannot have changed its figure. */
const INPUT_TYPES: Readonly<Record<MetricId, readonly MetricFact["type"][]>> = {
  "role-template-rework-rate": ["task_snapshot", "delivery_summary", "repair", "model_call"],
  "role-template-trajectory-partial-cost": ["task_snapshot", "delivery_summary", "cost", "model_call"],
  "role-model-task-outcome-rate": ["task_snapshot", "delivery_summary", "model_call"],
  "task-cohort-comparison-eligibility": ["task_snapshot", "delivery_summary"],
  "packet-rework-rate": ["packet", "repair"],
  "operational-latency-ms": ["model_call"],
  "operational-token-usage": ["model_call"],
  "operational-attributable-cost": ["model_call", "cost"],
  "operational-usage-availability": ["model_call"],
  "trajectory-partial-cost": ["delivery_summary", "cost", "model_call"],
  "delivery-stage-reach": ["delivery_summary"],
  "delivery-terminal-outcome-rate": ["delivery_summary"],
  "delivery-cycle-time-ms": ["delivery_summary"],
  "direct-evidence-basis-rate": ["model_call", "cost", "delivery_summary"],
};

/** The result key of a group: a money slice's key without its slice coordinates. */
export function groupKeyOfResult(key: string): string {
  const parsed = JSON.parse(key) as { cohort: Record<string, string>; metric_id: MetricId; scope: unknown };
  if (FORMULA_SHAPES[parsed.metric_id] !== "money") return key;
  const cohort: Record<string, string> = {};
  for (const name of Object.keys(parsed.cohort).sort(byUtf8))
    if (!(MONEY_COORDINATES as readonly string[]).includes(name)) cohort[name] = parsed.cohort[name] as string;
  return JSON.stringify({ cohort, metric_id: parsed.metric_id, scope: parsed.scope });
}

/**
 * Explains one group from the engine's state: the published records under it, and every stored
 * contribution to it with its unit's facts. Contributions are read as stored, never recomputed;
 * only a Delivery's OPEN summaries and costs, which the engine applies straight from the fact,
 * are found by applying the same function to each such admitted fact. The state must be settled
 * (flushed), or the contributions would not be what the published records sum.
 */
export function explainGroup(lineage: EngineLineage, groupKey: string): Explanation {
  if (!lineage.settled)
    throw new Error("the engine has facts not yet flushed: its figures and units differ until the next flush");
  const parsed = JSON.parse(groupKey) as { cohort: Cohort; metric_id: MetricId; scope: Scope };
  const metricId = parsed.metric_id;
  const units: ExplainedUnit[] = [];
  for (const kind of KINDS_OF[metricId]) {
    for (const [id, contributions] of lineage.units(kind)) {
      const labels = kind === "call" || kind === "delivery" ? evidenceLabels(lineage, kind, id) : undefined;
      contributions.forEach((contribution, position) => {
        if (contribution.groupKey !== groupKey) return;
        const evidenceFact = contribution.metricId === "direct-evidence-basis-rate" ? labels?.[position] : undefined;
        units.push(explainUnit(lineage, kind, id, contribution, evidenceFact));
      });
    }
  }
  if (metricId === "direct-evidence-basis-rate") {
    for (const fact of evidenceFacts(lineage)) {
      for (const draft of evidenceContributions(fact, lineage.config)) {
        const contribution = finalizeContribution(draft);
        if (contribution.groupKey !== groupKey) continue;
        const missing = statusOf(contribution) === "uncovered" ? missingInputs(contribution, "evidence", fact) : [];
        units.push(explainedUnit("evidence", fact.fact_id, contribution, [explainFact(lineage, fact)], missing));
      }
    }
  }
  units.sort((a, b) => byUtf8(a.kind, b.kind) || byUtf8(a.id, b.id));
  const results = lineage
    .resultKeys()
    .filter((key) => key === groupKey || (FORMULA_SHAPES[metricId] === "money" && groupKeyOfResult(key) === groupKey))
    .map((key) => ({ key, result: lineage.result(key) as MetricResult }));
  return {
    key: groupKey,
    metric_id: metricId,
    scope: parsed.scope,
    cohort: parsed.cohort,
    results,
    totals: totalsOf(units),
    units,
    dead_letters: quarantinedVersions(lineage, parsed),
  };
}

/**
 * Adds the refused records (a replay's dead letters, which the engine's state does not hold) that
 * may have changed the figure: see `relevant`.
 */
export function withRefusedRecords(explanation: Explanation, letters: readonly DeadLetterInput[]): Explanation {
  const refused: ExplainedDeadLetter[] = [];
  for (const letter of letters) {
    if (letter.record === null || !relevant(explanation, letter.record)) continue;
    refused.push({
      reason: letter.reason,
      detail: letter.detail,
      fact_id: letter.fact_id,
      type: typeof letter.record.type === "string" ? letter.record.type : null,
      origin: letter.origin,
    });
  }
  return { ...explanation, dead_letters: [...explanation.dead_letters, ...refused] };
}

/** The group keys of the published results matching a metric, a scope filter and cohort coordinates. */
export function matchingGroups(
  lineage: EngineLineage,
  metricId: string,
  scope: string | undefined,
  cohort: Readonly<Record<string, string>>,
): string[] {
  const found = new Set<string>();
  for (const key of lineage.resultKeys()) {
    const result = lineage.result(key);
    if (result === null || result.metric_id !== metricId) continue;
    if (scope !== undefined && !scopeMatches(result.scope, scope)) continue;
    if (Object.entries(cohort).some(([name, value]) => result.cohort[name] !== value)) continue;
    found.add(groupKeyOfResult(key));
  }
  return [...found].sort(byUtf8);
}

/**
 * `--scope`: a window by its start (a prefix of it, e.g. `2026-01-05`), or a snapshot by its id;
 * `window:` or `snapshot:` in front says which.
 */
export function scopeMatches(scope: Scope, filter: string): boolean {
  const [kind, value] = filter.startsWith("window:")
    ? ["window", filter.slice(7)]
    : filter.startsWith("snapshot:")
      ? ["snapshot", filter.slice(9)]
      : [undefined, filter];
  if (scope.kind === "window") return (kind === undefined || kind === "window") && scope.start.startsWith(value);
  return (kind === undefined || kind === "snapshot") && scope.snapshot_id === value;
}

function explainUnit(
  lineage: EngineLineage,
  kind: UnitKind,
  id: string,
  contribution: Contribution,
  evidenceFact: MetricFact | undefined,
): ExplainedUnit {
  const facts = evidenceFact === undefined ? unitFacts(lineage, kind, id) : [evidenceFact];
  const status = statusOf(contribution);
  const missing =
    status === "uncovered" ? missingInputs(contribution, kind, evidenceFact ?? anchorOf(lineage, kind, id)) : [];
  return explainedUnit(
    kind,
    kind === "task" ? id.replace("\u0000", "#") : id,
    contribution,
    facts.map((fact) => explainFact(lineage, fact)),
    missing,
  );
}

function explainedUnit(
  kind: ExplainedUnit["kind"],
  id: string,
  contribution: Contribution,
  facts: ExplainedFact[],
  missing: readonly string[],
): ExplainedUnit {
  return {
    kind,
    id,
    status: statusOf(contribution),
    reasons: contribution.exclusions,
    missing,
    contribution: {
      candidate: contribution.candidate,
      covered: contribution.covered,
      eligible: contribution.eligible,
      hit: contribution.hit,
      category: contribution.category ?? null,
      amount: contribution.amount,
      money: contribution.money.map((share: MoneyShare) => ({
        currency: share.currency,
        source: share.source,
        cost_basis: share.costBasis,
        amount_minor: typeof share.amountMinor === "bigint" ? share.amountMinor.toString() : share.amountMinor,
      })),
    },
    facts: facts.sort((a, b) => a.event_time - b.event_time || byUtf8(a.fact_id, b.fact_id)),
  };
}

function statusOf(contribution: Contribution): UnitStatus {
  if (!contribution.candidate) return "not-candidate";
  if (!contribution.covered) return "uncovered";
  return contribution.eligible ? "eligible" : "excluded";
}

/**
 * Which fact each direct-evidence contribution of a call or Delivery unit stands for: a call's
 * unit contributes its call first, then each linked cost in the index's order
 * (callEvidenceContributions); a Delivery's contributes its earliest TERMINAL summary first.
 */
function evidenceLabels(lineage: EngineLineage, kind: "call" | "delivery", id: string): (MetricFact | undefined)[] {
  if (kind === "delivery") return [terminalSummary(lineage.index.summariesByDelivery.get(id))];
  const call = lineage.index.calls.get(id);
  return call === undefined ? [] : [call, ...lineage.index.costsByCall.get(id)];
}

/** The fact a unit is anchored at (its call, earliest TERMINAL summary, packet or snapshot). */
function anchorOf(lineage: EngineLineage, kind: UnitKind, id: string): MetricFact | undefined {
  const { index } = lineage;
  switch (kind) {
    case "call":
      return index.calls.get(id);
    case "delivery":
      return terminalSummary(index.summariesByDelivery.get(id));
    case "packet":
      return index.packets.get(id);
    case "snapshot":
      return index.snapshots.get(id);
    case "task":
      return index.snapshots.get(id.slice(0, id.lastIndexOf("\u0000")));
  }
}

/** The admitted facts a unit reads through the index (a task: its links up to the cutoff). */
function unitFacts(lineage: EngineLineage, kind: UnitKind, id: string): MetricFact[] {
  const { index } = lineage;
  const facts = new Map<string, MetricFact>();
  const add = (fact: MetricFact | undefined): void => {
    if (fact !== undefined) facts.set(fact.fact_id, fact);
  };
  switch (kind) {
    case "call":
      add(index.calls.get(id));
      index.costsByCall.get(id).forEach(add);
      break;
    case "delivery":
      index.summariesByDelivery.get(id).forEach(add);
      deliveryCosts(id, index).costs.forEach(add);
      break;
    case "packet":
      add(index.packets.get(id));
      index.repairsByPacket.get(id).forEach(add);
      break;
    case "snapshot":
      add(index.snapshots.get(id));
      break;
    case "task": {
      const separator = id.lastIndexOf("\u0000");
      const snapshot = index.snapshots.get(id.slice(0, separator));
      const task = snapshot?.tasks[Number(id.slice(separator + 1))];
      if (snapshot === undefined || task === undefined) break;
      add(snapshot);
      const linked: MetricFact[] = [];
      if (task.task_id !== undefined)
        linked.push(...index.callsByTask.get(task.task_id), ...index.repairsByTask.get(task.task_id));
      for (const member of task.members ?? []) {
        linked.push(
          ...index.summariesByDelivery.get(member),
          ...index.callsByDelivery.get(member),
          ...index.repairsByDelivery.get(member),
          ...deliveryCosts(member, index).costs,
        );
      }
      for (const fact of linked) if (fact.event_time <= snapshot.cutoff) add(fact);
      break;
    }
  }
  return [...facts.values()];
}

/** Admitted OPEN summaries and costs linked to a Delivery: the facts the engine applies as units of their own. */
function* evidenceFacts(lineage: EngineLineage): Iterable<Cost | DeliverySummary> {
  const { index } = lineage;
  for (const [id] of index.deliveryDocs.scan()) {
    for (const summary of index.summariesByDelivery.get(id)) if (summary.status !== "TERMINAL") yield summary;
    yield* index.costsByDelivery.get(id);
  }
}

function explainFact(lineage: EngineLineage, fact: MetricFact): ExplainedFact {
  return {
    fact_id: fact.fact_id,
    type: fact.type,
    basis: fact.provenance?.basis ?? null,
    event_time: fact.event_time,
    origin: originOf(lineage.origin(fact)),
  };
}

/** A ledger origin in the explanation's terms (a file line, or `topic/partition/offset`). */
export function originOf(origin: FactOrigin | undefined | null): ExplainedOrigin | null {
  if (origin === undefined || origin === null) return null;
  if (typeof origin === "number") return { line: origin };
  const parts = origin.split("/");
  const offset = parts.pop() ?? "";
  const partition = Number(parts.pop());
  return { topic: parts.join("/"), partition, offset };
}

function totalsOf(units: readonly ExplainedUnit[]): UnitTotals {
  let candidates = 0;
  let covered = 0;
  let eligible = 0;
  let hits = 0;
  let amount = 0n;
  const categories = new Map<string, number>();
  const exclusions = new Map<string, number>();
  const money = new Map<
    string,
    { currency: string; source: string; cost_basis: string; units: number; amount: bigint }
  >();
  for (const { contribution, reasons } of units) {
    if (contribution.candidate) candidates += 1;
    if (contribution.covered) covered += 1;
    if (contribution.eligible) eligible += 1;
    if (contribution.hit) hits += 1;
    amount += BigInt(contribution.amount);
    if (contribution.category !== null)
      categories.set(contribution.category, (categories.get(contribution.category) ?? 0) + 1);
    for (const [reason, count] of Object.entries(reasons))
      exclusions.set(reason, (exclusions.get(reason) ?? 0) + count);
    for (const share of contribution.money) {
      const key = JSON.stringify([share.currency, share.source, share.cost_basis]);
      const slice = money.get(key) ?? {
        currency: share.currency,
        source: share.source,
        cost_basis: share.cost_basis,
        units: 0,
        amount: 0n,
      };
      slice.units += 1;
      slice.amount += BigInt(share.amount_minor);
      money.set(key, slice);
    }
  }
  const sorted = (counts: Map<string, number>): Record<string, number> =>
    Object.fromEntries([...counts.entries()].filter(([, count]) => count !== 0).sort(([a], [b]) => byUtf8(a, b)));
  return {
    candidates,
    covered,
    eligible,
    hits,
    amount: amount.toString(),
    categories: sorted(categories),
    exclusions: sorted(exclusions),
    money: [...money.keys()].sort(byUtf8).map((key) => {
      const slice = money.get(key) as {
        currency: string;
        source: string;
        cost_basis: string;
        units: number;
        amount: bigint;
      };
      return {
        currency: slice.currency,
        source: slice.source,
        cost_basis: slice.cost_basis,
        units: slice.units,
        amount_minor: slice.amount.toString(),
      };
    }),
  };
}

/**
 * The quarantined versions (and later TERMINAL summaries) in the ledger that may have changed this
 * figure: see `relevant`.
 */
function quarantinedVersions(
  lineage: EngineLineage,
  group: { cohort: Cohort; metric_id: MetricId; scope: Scope },
): ExplainedDeadLetter[] {
  const letters = new Map<string, ExplainedDeadLetter>();
  for (const conflict of lineage.conflicts()) {
    for (const factId of new Set(conflict.factIds)) {
      for (const stored of lineage.versions(factId)) {
        if (!relevant(group, stored.fact as unknown as Readonly<Record<string, unknown>>)) continue;
        const letter = {
          reason: conflict.reason,
          detail: `identity ${conflict.identity.replace("\u0000", " ")} carried by ${conflict.factIds.join(", ")}`,
          fact_id: stored.fact.fact_id,
          type: stored.fact.type,
          origin: originOf(stored.origin),
        };
        letters.set(JSON.stringify(letter), letter);
      }
    }
  }
  return [...letters.values()];
}

/**
 * Whether a refused or quarantined record may have changed a figure: of a type the metric reads,
 * with its event time in the window (a snapshot: the snapshot itself, or at most its cutoff), and
 * no attribution coordinate contradicting the cohort. A record refused before its fields were read
 * cannot be placed and is left out.
 */
function relevant(
  group: { cohort: Cohort; metric_id: MetricId; scope: Scope },
  record: Readonly<Record<string, unknown>>,
): boolean {
  if (!(INPUT_TYPES[group.metric_id] as readonly unknown[]).includes(record.type)) return false;
  const time =
    typeof record.event_time === "number"
      ? record.event_time
      : typeof record.event_time === "string"
        ? Date.parse(record.event_time)
        : Number.NaN;
  const { scope } = group;
  if (scope.kind === "window") {
    if (!(time >= Date.parse(scope.start) && time < Date.parse(scope.end))) return false;
  } else if (
    record.type === "task_snapshot" ? record.snapshot_id !== scope.snapshot_id : !(time <= Date.parse(scope.cutoff))
  ) {
    return false;
  }
  for (const [name, value] of Object.entries(group.cohort)) {
    const given = record[name];
    if (typeof given === "string" && given !== value) return false;
  }
  return true;
}
