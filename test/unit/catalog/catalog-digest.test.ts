import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { catalogDigest } from "../../../src/catalog/catalog-digest.ts";
import { applyPatch, shippedCatalogJson, shippedPublicationJson } from "./fixture-support.ts";

function reorderKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reorderKeys);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([key, child]) => [key, reorderKeys(child)]),
    );
  }
  return value;
}

describe("catalogDigest", () => {
  const catalog = shippedCatalogJson();

  it("is sha256: + 64 hex and stable across calls", () => {
    const digest = catalogDigest(catalog);
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(catalogDigest(shippedCatalogJson())).toBe(digest);
  });

  it("ignores key order and whitespace (RFC 8785 canonical form)", () => {
    expect(catalogDigest(reorderKeys(catalog))).toBe(catalogDigest(catalog));
    expect(catalogDigest(JSON.parse(JSON.stringify(catalog, null, 7)))).toBe(catalogDigest(catalog));
  });

  it("matches the shipped publication record", () => {
    expect((shippedPublicationJson() as { semantic_digest: string }).semantic_digest).toBe(catalogDigest(catalog));
  });

  it("changes when any field changes", () => {
    const base = catalogDigest(catalog);
    expect(
      catalogDigest(applyPatch(catalog, [{ op: "replace", path: "/metrics/9/minimum_sample", value: 2 }])),
    ).not.toBe(base);
    expect(catalogDigest(applyPatch(catalog, [{ op: "replace", path: "/version", value: "1.0.1" }]))).not.toBe(base);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 13 }), fc.string({ minLength: 1 }), (index, suffix) => {
        const edited = applyPatch(catalog, [
          {
            op: "replace",
            path: `/metrics/${index}/name`,
            value: `${(catalog as { metrics: { name: string }[] }).metrics[index]?.name ?? ""}${suffix}`,
          },
        ]);
        return catalogDigest(edited) !== base;
      }),
      { numRuns: 50 },
    );
  });
});
