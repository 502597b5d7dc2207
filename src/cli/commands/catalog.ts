import { basename, resolve } from "node:path";
import { UsageError, type CliCommand } from "../command.ts";
import { parseFlags } from "../flags.ts";
import { formatProblem, type Problem } from "../../catalog/catalog-types.ts";
import { catalogDigest } from "../../catalog/catalog-digest.ts";
import { loadJsonFile, SHIPPED_CATALOG_PATH, SHIPPED_PUBLICATION_PATH } from "../../catalog/load-catalog.ts";
import { publicationProblems } from "../../catalog/publication-checks.ts";
import { validateCatalog } from "../../catalog/validate-catalog.ts";
import { asArray, asRecord } from "../../catalog/json-access.ts";

const USAGE = `Usage: agentops catalog <validate|digest> [path] [--publication <file>]

Checks the Metric Catalog machine companion (system-contracts/evaluation/).

  validate [path]   Validate a catalog file (default: the shipped metric-catalog.json) against the
                    JSON Schema and the seed's bounded semantic rules. For the shipped catalog the
                    shipped publication.json is checked too (its semantic_digest must match).
                    Exit 0 with a summary when valid; exit 1 listing every problem as
                    "path: CODE: message".
  digest [path]     Print the catalog's semantic digest: sha256 over its RFC 8785 canonical JSON.

Flags:
  --publication <file>   also check this publication record against the catalog
  -h, --help             show this text`;

function write(stream: NodeJS.WriteStream, lines: readonly string[]): void {
  if (lines.length > 0) stream.write(`${lines.join("\n")}\n`);
}

function validate(path: string, publicationPath: string | undefined): number {
  const loaded = loadJsonFile(path, "catalog");
  const problems: Problem[] = loaded.ok ? validateCatalog(loaded.document) : [...loaded.problems];
  const publicationProblemsFound: Problem[] = [];
  if (loaded.ok && publicationPath !== undefined) {
    const publication = loadJsonFile(publicationPath, "publication");
    publicationProblemsFound.push(
      ...(publication.ok ? publicationProblems(publication.document, loaded.document) : publication.problems),
    );
  }
  if (problems.length > 0 || publicationProblemsFound.length > 0) {
    write(process.stdout, [
      ...problems.map(formatProblem),
      ...publicationProblemsFound.map((p) => `${basename(publicationPath ?? "publication.json")}#${formatProblem(p)}`),
    ]);
    process.stderr.write(
      `agentops catalog: ${path} is invalid: ${problems.length + publicationProblemsFound.length} problem(s)\n`,
    );
    return 1;
  }
  const document = asRecord(loaded.ok ? loaded.document : undefined);
  const metricCount = asArray(document?.["metrics"])?.length ?? 0;
  const summary = [
    `valid: ${String(document?.["catalog_id"])}@${String(document?.["version"])} (${path})`,
    `  ${metricCount} metrics, ${asArray(document?.["input_definitions"])?.length ?? 0} input definitions`,
    `  semantic digest ${catalogDigest(loaded.ok ? loaded.document : null)}`,
  ];
  if (publicationPath !== undefined)
    summary.push(`  publication record ${publicationPath} matches (VALIDATOR_ONLY claim)`);
  write(process.stdout, summary);
  return 0;
}

function digest(path: string): number {
  const loaded = loadJsonFile(path, "catalog");
  if (!loaded.ok) {
    write(process.stdout, loaded.problems.map(formatProblem));
    return 1;
  }
  write(process.stdout, [catalogDigest(loaded.document)]);
  return 0;
}

export const catalogCommand: CliCommand = {
  name: "catalog",
  summary: "validate the Metric Catalog machine companion or print its semantic digest",
  usage: USAGE,
  async run(argv) {
    const flags = parseFlags(argv, { publication: { type: "string" } }, "catalog");
    const [action, pathArgument, ...extra] = flags.positionals;
    if (action !== "validate" && action !== "digest") {
      throw new UsageError(
        "action",
        action === undefined ? "is missing" : `"${action}" is not an action`,
        "run `agentops catalog validate [path]` or `agentops catalog digest [path]`",
      );
    }
    if (extra.length > 0)
      throw new UsageError(
        "path",
        `only one catalog path is accepted, got ${extra.length + 1}`,
        "give a single catalog file path, or none for the shipped catalog",
      );
    const path = pathArgument === undefined ? SHIPPED_CATALOG_PATH : resolve(pathArgument);
    const publicationFlag = flags.values["publication"];
    if (typeof publicationFlag === "string" && action === "digest")
      throw new UsageError(
        "--publication",
        "applies only to validate",
        "drop --publication or run `agentops catalog validate`",
      );
    const publicationPath =
      typeof publicationFlag === "string"
        ? resolve(publicationFlag)
        : path === SHIPPED_CATALOG_PATH
          ? SHIPPED_PUBLICATION_PATH
          : undefined;
    return action === "validate" ? validate(path, publicationPath) : digest(path);
  },
};
