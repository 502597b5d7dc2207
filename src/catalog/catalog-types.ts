/**
 * Shapes of the Metric Catalog machine companion (system-contracts/evaluation/) and of the
 * problems its validator reports. The semantic authority is the human Metric Catalog
 * (evaluation.identity.001); these types only mirror metric-catalog.schema.json.
 */

export interface ObservationProfileBinding {
  readonly profile_id: string;
  readonly version: string;
  readonly semantic_revision: string;
  readonly machine_revision: string;
}

export interface ObservationDependency {
  readonly contract_id: string;
  readonly version: string;
  readonly semantic_revision: string;
  readonly observation_profile: ObservationProfileBinding;
}

export interface MinimumSamplePolicy {
  readonly rule: string;
  readonly compared_with: string;
  readonly value_published_below_minimum: boolean;
  readonly coverage_published_below_minimum: boolean;
}

export interface CoveragePolicy {
  readonly result_fields: readonly string[];
  readonly states: readonly string[];
  readonly alert_name: string;
  readonly threshold_unit: string;
  readonly threshold_min_hundredths: number;
  readonly threshold_max_hundredths: number;
  readonly default_threshold_hundredths: number;
  readonly disabled_at_hundredths: number;
  readonly alert_comparison: string;
  readonly alert_requires_positive_denominator: boolean;
  readonly equality_alerts: boolean;
  readonly gates_publication: boolean;
}

export interface InputDefinition {
  readonly input_id: string;
  readonly source_layer: "observation" | "evaluation" | "projection";
  readonly semantic_ref: string;
  readonly binding: string;
}

export interface MetricRecord {
  readonly metric_id: string;
  readonly version: string;
  readonly name: string;
  readonly status: "implemented" | "planned";
  readonly evaluation_unit: string;
  readonly value_semantics: { readonly kind: string; readonly unit: string; readonly missing: string };
  readonly dimensions: readonly string[];
  readonly filters: readonly string[];
  readonly time_window: string;
  readonly calculation: string;
  readonly input_refs: readonly string[];
  readonly eligibility: readonly string[];
  readonly exclusions: readonly string[];
  readonly minimum_sample: number;
  readonly coverage: { readonly denominator: string; readonly numerator: string };
  readonly uncertainty: readonly string[];
  readonly forbidden_inference: readonly string[];
  readonly owner: string;
}

export interface MetricCatalogDocument {
  readonly catalog_id: string;
  readonly version: string;
  readonly status: string;
  readonly semantic_authority: string;
  readonly dependencies: readonly ObservationDependency[];
  readonly minimum_sample_policy: MinimumSamplePolicy;
  readonly coverage_policy: CoveragePolicy;
  readonly input_definitions: readonly InputDefinition[];
  readonly metrics: readonly MetricRecord[];
}

/**
 * Every problem code the validator can report, with what it means. The codes are stable: tests,
 * fixtures and docs/catalog.md name them.
 */
export const PROBLEM_CODES = {
  CATALOG_UNREADABLE: "the catalog file cannot be read",
  CATALOG_NOT_JSON: "the catalog file is not valid JSON",
  SCHEMA_UNKNOWN_FIELD: "a field that the closed record does not declare",
  SCHEMA_REQUIRED: "a required field is absent",
  SCHEMA_TYPE: "a value has the wrong JSON type",
  SCHEMA_VALUE: "a value is not the fixed or enumerated value the schema allows",
  SCHEMA_PATTERN: "a string does not match the schema's pattern",
  SCHEMA_RANGE: "a length, item count or number is outside the schema's bounds",
  SCHEMA_DUPLICATE: "an array that must hold unique items repeats one",
  SCHEMA_INVALID: "any other JSON Schema violation",
  CATALOG_ID_MISMATCH: "catalog_id is not agentops.evaluation.metric-catalog",
  CATALOG_STATUS_INVALID: "status is not PUBLISHED",
  VERSION_FORMAT: "a catalog or metric version is not an exact x.y.z string",
  SEMANTIC_AUTHORITY_MISMATCH: "semantic_authority does not reference evaluation.identity.001",
  DEPENDENCY_COUNT: "dependencies does not hold exactly one Observation binding",
  DEPENDENCY_VERSION_RANGE: "a dependency version is a range or otherwise not an exact x.y.z",
  DEPENDENCY_MISMATCH: "the dependency is not the exact agentops.observation@1.0.0 / Observation Profile 1.0.0 binding",
  DEPENDENCY_DIGEST_FORMAT: "a dependency revision is not a sha256:<64 hex> digest",
  MINIMUM_SAMPLE_POLICY_INVALID:
    "minimum_sample_policy is not the fixed rule (value withheld, coverage still published)",
  COVERAGE_RESULT_FIELDS: "coverage_policy.result_fields is not [numerator, denominator, raw_ratio, state, alert]",
  COVERAGE_STATES: "coverage_policy.states is not [NO_POPULATION, NO_COVERAGE, PARTIAL, FULL]",
  COVERAGE_THRESHOLD_DOMAIN: "the threshold domain is not hundredths 0..99 with 0 disabling the alert",
  COVERAGE_DEFAULT_THRESHOLD: "the default threshold is not 10 hundredths (0.10)",
  COVERAGE_COMPARISON:
    "the alert comparison is not exactly 100 * numerator < threshold_hundredths * denominator (denominator > 0, equality does not alert)",
  COVERAGE_GATES_PUBLICATION: "coverage_policy claims that coverage gates publication",
  INPUT_ID_DUPLICATE: "two input_definitions share an input_id",
  INPUT_BINDING_INVALID: "an input binding is not human-semantic-reference",
  INPUT_REF_UNRESOLVED: "a metric input_ref names no input_definitions entry",
  INPUT_REF_DUPLICATE: "a metric repeats an input_ref",
  METRIC_COUNT: "the catalog does not hold exactly 14 metric records",
  METRIC_ID_DUPLICATE: "two metric records share a metric_id",
  METRIC_ID_UNKNOWN: "a metric_id is not one of the seed's 14",
  METRIC_ID_MISSING: "one of the seed's 14 metric_ids has no record",
  REMOVED_METRIC: "a removed metric appears as an id, name or alias",
  VALUE_KIND_INVALID: "value_semantics.kind is not rate, count, duration, quantity or money",
  VALUE_UNIT_EMPTY: "value_semantics.unit is empty",
  MISSING_NOT_NA: 'value_semantics.missing does not start with "N/A when"',
  MISSING_STATES_ZERO: "value_semantics.missing states a zero",
  DIMENSION_DUPLICATE: "a dimension is listed twice",
  FILTER_DUPLICATE: "a filter is listed twice",
  MINIMUM_SAMPLE_INVALID: "minimum_sample is not an integer >= 1",
  MINIMUM_SAMPLE_MISMATCH: "minimum_sample differs from the seed's value for that metric",
  VALUE_SEMANTICS_MISMATCH: "value_semantics kind or unit differs from the seed's §5 table for that metric",
  PUBLICATION_UNREADABLE: "the publication record cannot be read or parsed",
  PUBLICATION_INVALID: "the publication record is not a closed, complete record",
  PUBLICATION_REVISION_MISMATCH: "the publication record names another catalog revision",
  PUBLICATION_DEPENDENCY_MISMATCH:
    "the publication record's dependency digests are not exactly the revisions the catalog binds",
  PUBLICATION_DIGEST_MISMATCH: "the publication record's semantic_digest differs from the catalog's digest",
} as const;

export type ProblemCode = keyof typeof PROBLEM_CODES;

/** One validation problem: where (a JSON pointer into the document), which rule, and why. */
export interface Problem {
  readonly path: string;
  readonly code: ProblemCode;
  readonly message: string;
}

export function problem(path: string, code: ProblemCode, message: string): Problem {
  return { path: path === "" ? "/" : path, code, message };
}

/** Formats a problem as the CLI prints it: `path: CODE: message`. */
export function formatProblem(p: Problem): string {
  return `${p.path}: ${p.code}: ${p.message}`;
}
