import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { catalogDigest } from "../../../src/catalog/catalog-digest.ts";
import { applyPatch, REPO_ROOT, shippedCatalogJson } from "./fixture-support.ts";

function agentops(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(join(REPO_ROOT, "node_modules/.bin/node"), [join(REPO_ROOT, "bin/agentops"), ...args], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function writeTemp(name: string, content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "agentops-catalog-")), name);
  writeFileSync(path, content);
  return path;
}

describe("agentops catalog", () => {
  it("validate with no path checks the shipped catalog and publication record, exit 0", () => {
    const result = agentops("catalog", "validate");
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("valid: agentops.evaluation.metric-catalog@1.0.0");
    expect(result.stdout).toContain("14 metrics");
    expect(result.stdout).toContain("publication record");
  });

  it("validate a bad file: exit 1, every problem as `path: CODE: message`", () => {
    const bad = applyPatch(shippedCatalogJson(), [
      { op: "replace", path: "/metrics/3/minimum_sample", value: 0 },
      { op: "replace", path: "/dependencies/0/version", value: "^1.0.0" },
      { op: "replace", path: "/metrics/10/value_semantics/missing", value: "N/A when no tokens; reported as 0" },
    ]);
    const result = agentops("catalog", "validate", writeTemp("bad.json", JSON.stringify(bad)));
    expect(result.status).toBe(1);
    const lines = result.stdout.trim().split("\n");
    for (const line of lines) expect(line).toMatch(/^\/\S*: [A-Z_]+: .+/);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\/metrics\/3\/minimum_sample: MINIMUM_SAMPLE_INVALID: /),
        expect.stringMatching(/^\/dependencies\/0\/version: DEPENDENCY_VERSION_RANGE: /),
        expect.stringMatching(/^\/metrics\/10\/value_semantics\/missing: MISSING_STATES_ZERO: /),
      ]),
    );
  });

  it("validate a file that is not JSON: exit 1, CATALOG_NOT_JSON", () => {
    const result = agentops("catalog", "validate", writeTemp("broken.json", "{ not json"));
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/^\/: CATALOG_NOT_JSON: /);
  });

  it("validate --publication reports a stale digest", () => {
    const catalog = applyPatch(shippedCatalogJson(), [
      { op: "replace", path: "/metrics/0/name", value: "Role-template rework rate (edited)" },
    ]);
    const result = agentops(
      "catalog",
      "validate",
      writeTemp("c.json", JSON.stringify(catalog)),
      "--publication",
      join(REPO_ROOT, "system-contracts/evaluation/publication.json"),
    );
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/publication\.json#\/semantic_digest: PUBLICATION_DIGEST_MISMATCH: /);
  });

  it("digest prints the semantic digest", () => {
    const result = agentops("catalog", "digest");
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(catalogDigest(shippedCatalogJson()));
  });

  it("an unknown action is a usage error naming the fix, exit 2", () => {
    const result = agentops("catalog", "check");
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("Fix:");
  });
});
