import { problem, type Problem } from "./catalog-types.ts";
import { asArray, asRecord, asString, EXACT_VERSION, type JsonRecord } from "./json-access.ts";
import { METRIC_IDS, isMetricId } from "./metric-ids.ts";
import { statesZero, startsWithNaWhen } from "./missing-text.ts";
import { REMOVED_METRIC_IDS } from "./removed-metrics.ts";
import { SEED_MINIMUM_SAMPLES, SEED_VALUE_SEMANTICS } from "./seed-minimum-samples.ts";

/**
 * Bounded semantic checks of input_definitions and the 14 metric records (seed §3-§5): the exact
 * metric set, value kinds, never-zero missing texts, resolvable input references, unique
 * dimensions/filters and the seed's minimum samples.
 */

export const VALUE_KINDS = ["rate", "count", "duration", "quantity", "money"] as const;
export const INPUT_BINDING = "human-semantic-reference";

export function inputDefinitionProblems(document: JsonRecord): { problems: Problem[]; inputIds: ReadonlySet<string> } {
  const problems: Problem[] = [];
  const inputIds = new Set<string>();
  (asArray(document["input_definitions"]) ?? []).forEach((entry, index) => {
    const definition = asRecord(entry);
    if (definition === undefined) return;
    const path = `/input_definitions/${index}`;
    const id = asString(definition["input_id"]);
    if (id !== undefined) {
      if (inputIds.has(id))
        problems.push(problem(`${path}/input_id`, "INPUT_ID_DUPLICATE", `input_id "${id}" is declared twice`));
      inputIds.add(id);
    }
    if (definition["binding"] !== INPUT_BINDING)
      problems.push(
        problem(
          `${path}/binding`,
          "INPUT_BINDING_INVALID",
          `must be "${INPUT_BINDING}" (never a wire binding or authority grant), found ${JSON.stringify(definition["binding"])}`,
        ),
      );
  });
  return { problems, inputIds };
}

export function metricSetProblems(document: JsonRecord): Problem[] {
  const metrics = asArray(document["metrics"]);
  if (metrics === undefined) return [];
  const problems: Problem[] = [];
  if (metrics.length !== METRIC_IDS.length)
    problems.push(
      problem(
        "/metrics",
        "METRIC_COUNT",
        `must hold exactly ${METRIC_IDS.length} metric records (seed §5), found ${metrics.length}`,
      ),
    );
  const seen = new Set<string>();
  metrics.forEach((entry, index) => {
    const id = asString(asRecord(entry)?.["metric_id"]);
    if (id === undefined) return;
    const path = `/metrics/${index}/metric_id`;
    if (seen.has(id))
      problems.push(
        problem(
          path,
          "METRIC_ID_DUPLICATE",
          `metric_id "${id}" is declared twice; metric_id is unique within the catalog`,
        ),
      );
    seen.add(id);
    if (!isMetricId(id) && !(REMOVED_METRIC_IDS as readonly string[]).includes(id))
      problems.push(problem(path, "METRIC_ID_UNKNOWN", `"${id}" is not one of the seed's 14 metric_ids`));
  });
  for (const id of METRIC_IDS) {
    if (!seen.has(id))
      problems.push(problem("/metrics", "METRIC_ID_MISSING", `no record declares the seed metric "${id}"`));
  }
  return problems;
}

function duplicates(list: readonly unknown[]): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const item of list) {
    const key = JSON.stringify(item);
    if (seen.has(key)) repeated.add(key);
    seen.add(key);
  }
  return [...repeated];
}

export function metricRecordProblems(entry: unknown, index: number, inputIds: ReadonlySet<string>): Problem[] {
  const metric = asRecord(entry);
  if (metric === undefined) return [];
  const problems: Problem[] = [];
  const path = `/metrics/${index}`;
  const version = asString(metric["version"]);
  if (version === undefined || !EXACT_VERSION.test(version))
    problems.push(
      problem(
        `${path}/version`,
        "VERSION_FORMAT",
        `must be an exact x.y.z version, found ${JSON.stringify(metric["version"])}`,
      ),
    );

  const semantics = asRecord(metric["value_semantics"]);
  if (semantics !== undefined) {
    const kind = semantics["kind"];
    if (typeof kind !== "string" || !(VALUE_KINDS as readonly string[]).includes(kind))
      problems.push(
        problem(
          `${path}/value_semantics/kind`,
          "VALUE_KIND_INVALID",
          `must be one of ${VALUE_KINDS.join(", ")} (no profile, composite or state kind), found ${JSON.stringify(kind)}`,
        ),
      );
    const unit = semantics["unit"];
    if (typeof unit !== "string" || unit.trim() === "")
      problems.push(
        problem(`${path}/value_semantics/unit`, "VALUE_UNIT_EMPTY", "the value's unit must be a non-empty string"),
      );
    const id = metric["metric_id"];
    const seed = isMetricId(id) ? SEED_VALUE_SEMANTICS[id] : undefined;
    if (
      seed !== undefined &&
      typeof kind === "string" &&
      (VALUE_KINDS as readonly string[]).includes(kind) &&
      typeof unit === "string" &&
      unit.trim() !== "" &&
      (kind !== seed.kind || unit !== seed.unit)
    ) {
      problems.push(
        problem(
          `${path}/value_semantics`,
          "VALUE_SEMANTICS_MISMATCH",
          `the seed fixes ${id} as ${seed.kind} / ${seed.unit}, found ${kind} / ${unit}`,
        ),
      );
    }
    const missing = asString(semantics["missing"]);
    if (missing === undefined || !startsWithNaWhen(missing))
      problems.push(
        problem(
          `${path}/value_semantics/missing`,
          "MISSING_NOT_NA",
          `must start with "N/A when", found ${JSON.stringify(semantics["missing"])}`,
        ),
      );
    if (missing !== undefined && statesZero(missing))
      problems.push(
        problem(
          `${path}/value_semantics/missing`,
          "MISSING_STATES_ZERO",
          `states a zero ("${missing}"); missing is never zero (seed §7)`,
        ),
      );
  }

  for (const [field, code] of [
    ["dimensions", "DIMENSION_DUPLICATE"],
    ["filters", "FILTER_DUPLICATE"],
  ] as const) {
    const list = asArray(metric[field]);
    if (list === undefined) continue;
    for (const repeated of duplicates(list))
      problems.push(problem(`${path}/${field}`, code, `${repeated} is listed more than once`));
  }

  const refs = asArray(metric["input_refs"]);
  if (refs !== undefined) {
    for (const repeated of duplicates(refs))
      problems.push(problem(`${path}/input_refs`, "INPUT_REF_DUPLICATE", `${repeated} is referenced more than once`));
    refs.forEach((ref, refIndex) => {
      if (typeof ref === "string" && !inputIds.has(ref))
        problems.push(
          problem(
            `${path}/input_refs/${refIndex}`,
            "INPUT_REF_UNRESOLVED",
            `"${ref}" resolves to no input_definitions entry`,
          ),
        );
    });
  }

  const minimum = metric["minimum_sample"];
  if (typeof minimum !== "number" || !Number.isInteger(minimum) || minimum < 1) {
    problems.push(
      problem(
        `${path}/minimum_sample`,
        "MINIMUM_SAMPLE_INVALID",
        `must be an integer >= 1, found ${JSON.stringify(minimum)}`,
      ),
    );
  } else {
    const id = metric["metric_id"];
    if (isMetricId(id) && SEED_MINIMUM_SAMPLES[id] !== minimum)
      problems.push(
        problem(
          `${path}/minimum_sample`,
          "MINIMUM_SAMPLE_MISMATCH",
          `the seed fixes minimum_sample ${SEED_MINIMUM_SAMPLES[id]} for ${id}, found ${minimum}`,
        ),
      );
  }
  return problems;
}
