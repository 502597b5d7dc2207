import type { MetricId } from "../catalog/metric-definitions.ts";
import { byUtf8 } from "../contract/code-point-order.ts";
import type { MetricFact } from "../contract/facts.ts";
import type { Contribution, MoneyShare } from "../metrics/contribution.ts";
import { FORMULA_SHAPES } from "../metrics/metric-formula.ts";
import type { EngineLineage } from "../metrics/metric-engine.ts";
import type { Cohort, MetricResult, Scope } from "../contract/result-record.ts";
import { evidenceContributions } from "../metrics/units/evidence-unit.ts";
import { finalizeContribution } from "../metrics/units/finalize.ts";
import type { UnitKind } from "../metrics/unit-key.ts";
import { quarantinedVersions } from "./dead-letters.ts";
import type { UnitStatus, ExplainedFact, ExplainedUnit, Explanation } from "./explanation.ts";
import { groupKeyOfResult } from "./group-keys.ts";
import { missingInputs } from "./missing-inputs.ts";
import { anchorOf, evidenceFacts, evidenceLabels, explainFact, unitFacts } from "./unit-facts.ts";
import { totalsOf } from "./unit-totals.ts";
import { InvariantError } from "../errors.ts";

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

/**
 * Explains one group from the engine's state: the published records under it, and every stored
 * contribution to it with its unit's facts. Contributions are read as stored, never recomputed;
 * only a Delivery's OPEN summaries and costs, which the engine applies straight from the fact,
 * are found by applying the same function to each such admitted fact. The state must be settled
 * (flushed), or the contributions would not be what the published records sum.
 */
export function explainGroup(lineage: EngineLineage, groupKey: string): Explanation {
  if (!lineage.settled)
    throw new InvariantError({
      problem: "the engine has facts not yet flushed: its figures and units differ until the next flush",
    });
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
