import {
  UNIT_STATUSES,
  type ExplainedFact,
  type ExplainedOrigin,
  type ExplainedUnit,
  type Explanation,
  type UnitStatus,
} from "../lineage/explanation.ts";
import { describeCohort, describeCoverage, describeScope, describeValue } from "./result-rows.ts";

/** Counts by status, reason and missing input: what a large population is summarised by. */
export interface ExplanationSummary {
  readonly byStatus: Readonly<Record<UnitStatus, number>>;
  readonly byReason: ReadonlyMap<string, number>;
  readonly byMissing: ReadonlyMap<string, number>;
}

export function summarise(explanation: Explanation): ExplanationSummary {
  const byStatus: Record<UnitStatus, number> = { eligible: 0, excluded: 0, uncovered: 0, "not-candidate": 0 };
  const byReason = new Map<string, number>();
  const byMissing = new Map<string, number>();
  for (const unit of explanation.units) {
    byStatus[unit.status] += 1;
    for (const [reason, count] of Object.entries(unit.reasons))
      byReason.set(reason, (byReason.get(reason) ?? 0) + count);
    for (const input of unit.missing) byMissing.set(input, (byMissing.get(input) ?? 0) + 1);
  }
  return { byStatus, byReason, byMissing };
}

/**
 * The explanation as text: the figures as published, what the units add up to, counts by status,
 * reason and missing input, then the first `perStatus` units of each status with their facts
 * (every unit when `perStatus` is infinite), then the dead letters. `file` names a replay's input.
 */
export function formatExplanation(explanation: Explanation, perStatus: number, file?: string): string {
  const lines: string[] = [];
  lines.push(`${explanation.metric_id}  ${describeScope(explanation.scope)}  ${describeCohort(explanation.cohort)}`);
  for (const { result } of explanation.results) {
    const slice =
      result.measures?.currency === undefined || result.measures.currency === null
        ? ""
        : `  [${result.cohort.currency} ${result.cohort.source} ${result.cohort.cost_basis}]`;
    lines.push(
      `  figure: ${result.status}  ${describeValue(result)}  coverage ${describeCoverage(result)}  eligible ${result.eligible_units}${slice}`,
    );
  }
  const { totals } = explanation;
  const money = totals.money
    .map((slice) => `${slice.currency} ${slice.source} ${slice.cost_basis}: ${slice.amount_minor} over ${slice.units}`)
    .join("; ");
  const categories = Object.entries(totals.categories)
    .map(([category, count]) => `${category}=${count}`)
    .join(" ");
  lines.push(
    `  units add up to: covered ${totals.covered}/${totals.candidates} candidates, eligible ${totals.eligible}, hits ${totals.hits}, sum ${totals.amount}${categories === "" ? "" : `, categories ${categories}`}${money === "" ? "" : `, money ${money}`}`,
  );
  const summary = summarise(explanation);
  lines.push(
    `  units: ${explanation.units.length} (${UNIT_STATUSES.map((status) => `${status} ${summary.byStatus[status]}`).join(", ")})`,
  );
  if (summary.byReason.size > 0)
    lines.push(`  reasons: ${[...summary.byReason].map(([reason, count]) => `${reason} ${count}`).join(", ")}`);
  if (summary.byMissing.size > 0)
    lines.push(`  missing: ${[...summary.byMissing].map(([input, count]) => `${input} ${count}`).join(", ")}`);
  for (const status of UNIT_STATUSES) {
    const units = explanation.units.filter((unit) => unit.status === status);
    if (units.length === 0) continue;
    const shown = units.slice(0, perStatus);
    lines.push(
      "",
      `${status} (${units.length}${shown.length < units.length ? `, first ${shown.length}; --all for every one` : ""})`,
    );
    for (const unit of shown) lines.push(...formatUnit(unit, file));
  }
  if (explanation.dead_letters.length > 0) {
    lines.push("", `dead letters that may have changed it (${explanation.dead_letters.length})`);
    for (const letter of explanation.dead_letters)
      lines.push(
        `  ${letter.reason}  ${letter.fact_id ?? "(no fact_id)"}  ${letter.type ?? ""}  ${describeOrigin(letter.origin, file)}  ${letter.detail}`,
      );
  }
  return lines.join("\n");
}

function formatUnit(unit: ExplainedUnit, file: string | undefined): string[] {
  const { contribution } = unit;
  const parts = [`${unit.kind} ${unit.id}`];
  if (contribution.hit) parts.push("hit");
  if (contribution.category !== null) parts.push(`category ${contribution.category}`);
  if (contribution.amount !== 0) parts.push(`amount ${contribution.amount}`);
  for (const share of contribution.money)
    parts.push(`${share.amount_minor} ${share.currency} ${share.source} ${share.cost_basis}`);
  const reasons = Object.entries(unit.reasons).map(([reason, count]) => (count === 1 ? reason : `${reason}×${count}`));
  if (reasons.length > 0) parts.push(`reasons ${reasons.join(" ")}`);
  if (unit.missing.length > 0) parts.push(`missing ${unit.missing.join("; ")}`);
  return [`  ${parts.join("  ")}`, ...unit.facts.map((fact) => `      ${formatFact(fact, file)}`)];
}

function formatFact(fact: ExplainedFact, file: string | undefined): string {
  return `${fact.fact_id}  ${fact.type}  ${fact.basis ?? "(no provenance)"}  ${describeOrigin(fact.origin, file)}`;
}

function describeOrigin(origin: ExplainedOrigin | null, file: string | undefined): string {
  if (origin === null) return "(origin unknown)";
  if ("line" in origin) return `${file ?? "line"}:${origin.line}`;
  return `${origin.topic}/${origin.partition}@${origin.offset}`;
}
