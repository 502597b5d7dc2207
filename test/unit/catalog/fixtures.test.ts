import { describe, expect, it } from "vitest";
import { PROBLEM_CODES } from "../../../src/catalog/catalog-types.ts";
import { publicationProblems } from "../../../src/catalog/publication-checks.ts";
import { validateCatalog } from "../../../src/catalog/validate-catalog.ts";
import {
  applyPatch,
  loadFixtures,
  shippedCatalogJson,
  shippedPublicationJson,
  type MutationFixture,
} from "./fixture-support.ts";

const invalid = loadFixtures("invalid");
const valid = loadFixtures("valid");

function problemsOf(fixture: MutationFixture): { code: string; path: string }[] {
  const catalog = applyPatch(shippedCatalogJson(), fixture.mutation);
  const problems = validateCatalog(catalog);
  if (fixture.publication_mutation !== undefined) {
    problems.push(...publicationProblems(applyPatch(shippedPublicationJson(), fixture.publication_mutation), catalog));
  }
  return problems;
}

describe("invalid catalog fixtures", () => {
  it("are at least 25 and each names a known code", () => {
    expect(invalid.length).toBeGreaterThanOrEqual(25);
    for (const fixture of invalid) expect(Object.keys(PROBLEM_CODES), fixture.name).toContain(fixture.expected_code);
  });

  it.each(invalid.map((fixture) => [fixture.name, fixture] as const))("%s yields its named code", (_name, fixture) => {
    const codes = problemsOf(fixture).map((p) => p.code);
    expect(codes).toContain(fixture.expected_code);
  });

  it("cover every semantic code the validator defines (schema codes beyond the closed-record ones need no fixture)", () => {
    const covered = new Set(invalid.map((fixture) => fixture.expected_code));
    const untested = Object.keys(PROBLEM_CODES).filter(
      (code) =>
        !covered.has(code) &&
        ![
          "CATALOG_UNREADABLE",
          "CATALOG_NOT_JSON",
          "PUBLICATION_UNREADABLE",
          "SCHEMA_VALUE",
          "SCHEMA_PATTERN",
          "SCHEMA_RANGE",
          "SCHEMA_DUPLICATE",
          "SCHEMA_INVALID",
        ].includes(code),
    );
    expect(untested).toEqual([]);
  });
});

describe("valid catalog fixtures", () => {
  it.each(valid.map((fixture) => [fixture.name, fixture] as const))("%s validates", (_name, fixture) => {
    expect(problemsOf(fixture)).toEqual([]);
  });
});
