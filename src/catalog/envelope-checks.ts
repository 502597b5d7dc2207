import { problem, type Problem } from "./catalog-types.ts";
import { asArray, asRecord, asString, EXACT_VERSION, VERSION_RANGE, type JsonRecord } from "./json-access.ts";

/**
 * Bounded semantic checks of the catalog envelope (seed §3, §6.4): identity, version, lifecycle,
 * semantic authority, the one exact Observation dependency and the two fixed policies.
 */

export const CATALOG_ID = "agentops.evaluation.metric-catalog";
export const SEMANTIC_AUTHORITY = "evaluation.identity.001";
export const OBSERVATION_CONTRACT_ID = "agentops.observation";
export const OBSERVATION_CONTRACT_VERSION = "1.0.0";
export const OBSERVATION_PROFILE_ID = "otel-observation-profile";
export const OBSERVATION_PROFILE_VERSION = "1.0.0";
const DIGEST = /^sha256:[0-9a-f]{64}$/;

export function envelopeProblems(document: JsonRecord): Problem[] {
  const problems: Problem[] = [];
  if (document["catalog_id"] !== CATALOG_ID)
    problems.push(
      problem(
        "/catalog_id",
        "CATALOG_ID_MISMATCH",
        `must be "${CATALOG_ID}", found ${JSON.stringify(document["catalog_id"])}`,
      ),
    );
  const version = asString(document["version"]);
  if (version === undefined || !EXACT_VERSION.test(version))
    problems.push(
      problem(
        "/version",
        "VERSION_FORMAT",
        `must be an exact x.y.z version, found ${JSON.stringify(document["version"])}`,
      ),
    );
  if (document["status"] !== "PUBLISHED")
    problems.push(
      problem("/status", "CATALOG_STATUS_INVALID", `must be "PUBLISHED", found ${JSON.stringify(document["status"])}`),
    );
  if (document["semantic_authority"] !== SEMANTIC_AUTHORITY)
    problems.push(
      problem(
        "/semantic_authority",
        "SEMANTIC_AUTHORITY_MISMATCH",
        `must reference "${SEMANTIC_AUTHORITY}", found ${JSON.stringify(document["semantic_authority"])}`,
      ),
    );
  problems.push(...dependencyProblems(document["dependencies"]));
  problems.push(...minimumSamplePolicyProblems(document["minimum_sample_policy"]));
  problems.push(...coveragePolicyProblems(document["coverage_policy"]));
  return problems;
}

function exactVersionProblems(value: unknown, path: string, expected: string): Problem[] {
  const version = asString(value);
  if (version !== undefined && VERSION_RANGE.test(version))
    return [
      problem(
        path,
        "DEPENDENCY_VERSION_RANGE",
        `"${version}" is a version range; bind the exact version ${expected}, no SemVer inference`,
      ),
    ];
  if (version === undefined || !EXACT_VERSION.test(version))
    return [
      problem(
        path,
        "DEPENDENCY_VERSION_RANGE",
        `must be the exact version ${expected}, found ${JSON.stringify(value)}`,
      ),
    ];
  if (version !== expected)
    return [problem(path, "DEPENDENCY_MISMATCH", `must bind version ${expected}, found "${version}"`)];
  return [];
}

function digestProblems(value: unknown, path: string): Problem[] {
  const digest = asString(value);
  return digest !== undefined && DIGEST.test(digest)
    ? []
    : [problem(path, "DEPENDENCY_DIGEST_FORMAT", `must be sha256:<64 lower-case hex>, found ${JSON.stringify(value)}`)];
}

function dependencyProblems(value: unknown): Problem[] {
  const dependencies = asArray(value);
  if (dependencies === undefined) return [];
  const problems: Problem[] = [];
  if (dependencies.length !== 1)
    problems.push(
      problem(
        "/dependencies",
        "DEPENDENCY_COUNT",
        `must hold exactly one Observation binding (${OBSERVATION_CONTRACT_ID}@${OBSERVATION_CONTRACT_VERSION}), found ${dependencies.length}`,
      ),
    );
  dependencies.forEach((entry, index) => {
    const dependency = asRecord(entry);
    if (dependency === undefined) return;
    const path = `/dependencies/${index}`;
    if (dependency["contract_id"] !== OBSERVATION_CONTRACT_ID)
      problems.push(
        problem(
          `${path}/contract_id`,
          "DEPENDENCY_MISMATCH",
          `must be "${OBSERVATION_CONTRACT_ID}", found ${JSON.stringify(dependency["contract_id"])}`,
        ),
      );
    problems.push(...exactVersionProblems(dependency["version"], `${path}/version`, OBSERVATION_CONTRACT_VERSION));
    problems.push(...digestProblems(dependency["semantic_revision"], `${path}/semantic_revision`));
    const profile = asRecord(dependency["observation_profile"]);
    if (profile === undefined) return;
    if (profile["profile_id"] !== OBSERVATION_PROFILE_ID)
      problems.push(
        problem(
          `${path}/observation_profile/profile_id`,
          "DEPENDENCY_MISMATCH",
          `must be "${OBSERVATION_PROFILE_ID}", found ${JSON.stringify(profile["profile_id"])}`,
        ),
      );
    problems.push(
      ...exactVersionProblems(profile["version"], `${path}/observation_profile/version`, OBSERVATION_PROFILE_VERSION),
    );
    problems.push(...digestProblems(profile["semantic_revision"], `${path}/observation_profile/semantic_revision`));
    problems.push(...digestProblems(profile["machine_revision"], `${path}/observation_profile/machine_revision`));
  });
  return problems;
}

function minimumSamplePolicyProblems(value: unknown): Problem[] {
  const policy = asRecord(value);
  if (policy === undefined) return [];
  const fixed =
    policy["rule"] === "VALUE_WITHHELD_BELOW_MINIMUM_SAMPLE" &&
    policy["compared_with"] === "eligible_units" &&
    policy["value_published_below_minimum"] === false &&
    policy["coverage_published_below_minimum"] === true;
  return fixed
    ? []
    : [
        problem(
          "/minimum_sample_policy",
          "MINIMUM_SAMPLE_POLICY_INVALID",
          "must be the fixed rule: below minimum_sample (compared with eligible_units) the value is not published, " +
            "while the complete coverage result remains published",
        ),
      ];
}

const RESULT_FIELDS = ["numerator", "denominator", "raw_ratio", "state", "alert"];
const STATES = ["NO_POPULATION", "NO_COVERAGE", "PARTIAL", "FULL"];
export const ALERT_COMPARISON = "100 * numerator < threshold_hundredths * denominator";
export const DEFAULT_THRESHOLD_HUNDREDTHS = 10;

function sameList(value: unknown, expected: readonly string[]): boolean {
  const list = asArray(value);
  return list !== undefined && list.length === expected.length && list.every((item, index) => item === expected[index]);
}

/** The coverage policy of seed §6.4, field by field. */
function coveragePolicyProblems(value: unknown): Problem[] {
  const policy = asRecord(value);
  if (policy === undefined) return [];
  const problems: Problem[] = [];
  const at = (field: string): string => `/coverage_policy/${field}`;
  if (!sameList(policy["result_fields"], RESULT_FIELDS))
    problems.push(
      problem(
        at("result_fields"),
        "COVERAGE_RESULT_FIELDS",
        `must be exactly ${JSON.stringify(RESULT_FIELDS)}: every result publishes all five`,
      ),
    );
  if (!sameList(policy["states"], STATES))
    problems.push(problem(at("states"), "COVERAGE_STATES", `must be exactly ${JSON.stringify(STATES)}`));
  if (policy["threshold_min_hundredths"] !== 0)
    problems.push(
      problem(
        at("threshold_min_hundredths"),
        "COVERAGE_THRESHOLD_DOMAIN",
        "the threshold domain is hundredths 0..99 (legal thresholds 0.00..0.99); the minimum must be 0",
      ),
    );
  if (policy["threshold_max_hundredths"] !== 99)
    problems.push(
      problem(
        at("threshold_max_hundredths"),
        "COVERAGE_THRESHOLD_DOMAIN",
        "the threshold domain is hundredths 0..99 (legal thresholds 0.00..0.99); the maximum must be 99",
      ),
    );
  if (policy["disabled_at_hundredths"] !== 0)
    problems.push(
      problem(at("disabled_at_hundredths"), "COVERAGE_THRESHOLD_DOMAIN", "threshold 0 (and only 0) disables the alert"),
    );
  if (policy["default_threshold_hundredths"] !== DEFAULT_THRESHOLD_HUNDREDTHS)
    problems.push(
      problem(
        at("default_threshold_hundredths"),
        "COVERAGE_DEFAULT_THRESHOLD",
        `the default LOW_COVERAGE threshold is 0.10, i.e. ${DEFAULT_THRESHOLD_HUNDREDTHS} hundredths, ` +
          `found ${JSON.stringify(policy["default_threshold_hundredths"])}`,
      ),
    );
  if (policy["alert_comparison"] !== ALERT_COMPARISON)
    problems.push(
      problem(
        at("alert_comparison"),
        "COVERAGE_COMPARISON",
        `must be exactly "${ALERT_COMPARISON}" (no rounded value participates)`,
      ),
    );
  if (policy["alert_requires_positive_denominator"] !== true)
    problems.push(
      problem(
        at("alert_requires_positive_denominator"),
        "COVERAGE_COMPARISON",
        "the alert is evaluated only for denominator > 0",
      ),
    );
  if (policy["equality_alerts"] !== false)
    problems.push(problem(at("equality_alerts"), "COVERAGE_COMPARISON", "equality does not alert; must be false"));
  if (policy["gates_publication"] !== false)
    problems.push(
      problem(at("gates_publication"), "COVERAGE_GATES_PUBLICATION", "coverage never gates publication; must be false"),
    );
  return problems;
}
