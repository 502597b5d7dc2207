import { problem, type Problem } from "./catalog-types.ts";
import { catalogDigest } from "./catalog-digest.ts";
import { asArray, asRecord, asString } from "./json-access.ts";

/**
 * Checks a publication record (publication.json) against the catalog it publishes: a closed
 * record naming the catalog's exact revision and its semantic digest, with a VALIDATOR_ONLY claim.
 */

const PUBLICATION_FIELDS = [
  "catalog_revision",
  "catalog_file",
  "semantic_digest",
  "digest_method",
  "conformance_claim",
  "claim_scope",
  "dependency_digests",
];
const DEPENDENCY_DIGEST_FIELDS = ["name", "digest", "obtained"];

function closedRecordProblems(
  record: Readonly<Record<string, unknown>>,
  fields: readonly string[],
  path: string,
): Problem[] {
  const problems: Problem[] = [];
  for (const key of Object.keys(record))
    if (!fields.includes(key))
      problems.push(
        problem(`${path}/${key}`, "PUBLICATION_INVALID", `unknown field "${key}"; the publication record is closed`),
      );
  for (const field of fields)
    if (record[field] === undefined)
      problems.push(problem(`${path}/${field}`, "PUBLICATION_INVALID", `required field "${field}" is absent`));
  return problems;
}

export function publicationProblems(publication: unknown, catalog: unknown): Problem[] {
  const record = asRecord(publication);
  if (record === undefined)
    return [problem("/", "PUBLICATION_INVALID", "the publication record must be a JSON object")];
  const problems = closedRecordProblems(record, PUBLICATION_FIELDS, "");
  if (record["conformance_claim"] !== undefined && record["conformance_claim"] !== "VALIDATOR_ONLY")
    problems.push(
      problem("/conformance_claim", "PUBLICATION_INVALID", 'the only claim publication makes is "VALIDATOR_ONLY"'),
    );
  (asArray(record["dependency_digests"]) ?? []).forEach((entry, index) => {
    const dependency = asRecord(entry);
    if (dependency === undefined)
      problems.push(
        problem(`/dependency_digests/${index}`, "PUBLICATION_INVALID", "must be an object {name, digest, obtained}"),
      );
    else problems.push(...closedRecordProblems(dependency, DEPENDENCY_DIGEST_FIELDS, `/dependency_digests/${index}`));
  });
  const catalogRecord = asRecord(catalog);
  const revision = `${String(catalogRecord?.["catalog_id"])}@${String(catalogRecord?.["version"])}`;
  if (record["catalog_revision"] !== revision)
    problems.push(
      problem(
        "/catalog_revision",
        "PUBLICATION_REVISION_MISMATCH",
        `publishes ${JSON.stringify(record["catalog_revision"])} but the catalog is ${revision}`,
      ),
    );
  problems.push(...dependencyDigestProblems(record, catalogRecord));
  const digest = catalogDigest(catalog);
  const recorded = asString(record["semantic_digest"]);
  if (recorded !== digest)
    problems.push(
      problem(
        "/semantic_digest",
        "PUBLICATION_DIGEST_MISMATCH",
        `records ${JSON.stringify(record["semantic_digest"])} but the catalog's digest is ${digest}; ` +
          `run \`agentops catalog digest\` and update publication.json`,
      ),
    );
  return problems;
}

/** The dependency revisions the catalog binds, which the publication record must account for. */
function boundRevisions(catalog: Readonly<Record<string, unknown>> | undefined): string[] {
  return (asArray(catalog?.["dependencies"]) ?? []).flatMap((entry) => {
    const dependency = asRecord(entry);
    const profile = asRecord(dependency?.["observation_profile"]);
    return [dependency?.["semantic_revision"], profile?.["semantic_revision"], profile?.["machine_revision"]].filter(
      (value): value is string => typeof value === "string",
    );
  });
}

function dependencyDigestProblems(
  record: Readonly<Record<string, unknown>>,
  catalog: Readonly<Record<string, unknown>> | undefined,
): Problem[] {
  const recorded = (asArray(record["dependency_digests"]) ?? [])
    .map((entry) => asRecord(entry)?.["digest"])
    .filter((value): value is string => typeof value === "string");
  const bound = boundRevisions(catalog);
  const unrecorded = bound.filter((digest) => !recorded.includes(digest));
  const unbound = recorded.filter((digest) => !bound.includes(digest));
  if (unrecorded.length === 0 && unbound.length === 0) return [];
  return [
    problem(
      "/dependency_digests",
      "PUBLICATION_DEPENDENCY_MISMATCH",
      `must record how each bound dependency revision was obtained, and only those; unrecorded: ` +
        `${JSON.stringify(unrecorded)}, not bound by the catalog: ${JSON.stringify(unbound)}`,
    ),
  ];
}
