import type { Problem } from "./catalog-types.ts";
import { envelopeProblems } from "./envelope-checks.ts";
import { asArray, asRecord } from "./json-access.ts";
import { inputDefinitionProblems, metricRecordProblems, metricSetProblems } from "./metric-record-checks.ts";
import { findRemovedMetricMentions } from "./removed-metrics.ts";
import { schemaProblems } from "./schema-check.ts";

/** Schema keywords whose violation is structural: always reported, even next to a semantic problem. */
const STRUCTURAL_CODES = new Set(["SCHEMA_UNKNOWN_FIELD", "SCHEMA_REQUIRED"]);

/** Every semantic (non-schema) problem of a parsed catalog document. */
export function semanticProblems(document: unknown): Problem[] {
  const root = asRecord(document);
  if (root === undefined) return [];
  const { problems: inputProblems, inputIds } = inputDefinitionProblems(root);
  const metricProblems = (asArray(root["metrics"]) ?? []).flatMap((metric, index) =>
    metricRecordProblems(metric, index, inputIds),
  );
  return [
    ...envelopeProblems(root),
    ...inputProblems,
    ...metricSetProblems(root),
    ...metricProblems,
    ...findRemovedMetricMentions(document),
  ];
}

/**
 * Validates a parsed catalog document: the structural JSON Schema check plus the bounded semantic
 * checks. When a semantic rule names the very value a schema keyword also rejects (a kind outside
 * the enum, a version range), only the more specific semantic problem is kept.
 */
export function validateCatalog(document: unknown): Problem[] {
  const semantic = semanticProblems(document);
  const semanticPaths = new Set(semantic.map((p) => p.path));
  const structural = schemaProblems(document).filter((p) => STRUCTURAL_CODES.has(p.code) || !semanticPaths.has(p.path));
  return [...structural, ...semantic];
}
