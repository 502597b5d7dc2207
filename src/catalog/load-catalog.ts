import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { problem, type Problem } from "./catalog-types.ts";

/** The shipped companion's files, resolved relative to this module (not to the working directory). */
export const SHIPPED_CATALOG_URL = new URL("../../system-contracts/evaluation/metric-catalog.json", import.meta.url);
export const SHIPPED_PUBLICATION_URL = new URL("../../system-contracts/evaluation/publication.json", import.meta.url);
export const SHIPPED_CATALOG_PATH = fileURLToPath(SHIPPED_CATALOG_URL);
export const SHIPPED_PUBLICATION_PATH = fileURLToPath(SHIPPED_PUBLICATION_URL);

export type LoadResult =
  { readonly ok: true; readonly document: unknown } | { readonly ok: false; readonly problems: readonly Problem[] };

/** Parses JSON text; a syntax error becomes a problem with the given code, never an exception. */
export function parseJson(text: string, unreadableCode: "CATALOG_NOT_JSON" | "PUBLICATION_UNREADABLE"): LoadResult {
  try {
    return { ok: true, document: JSON.parse(text) as unknown };
  } catch (error) {
    return {
      ok: false,
      problems: [problem("/", unreadableCode, error instanceof Error ? error.message : String(error))],
    };
  }
}

/** Reads and parses a JSON file; an unreadable file or bad JSON is reported, not thrown. */
export function loadJsonFile(path: string | URL, kind: "catalog" | "publication"): LoadResult {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = kind === "catalog" ? "CATALOG_UNREADABLE" : "PUBLICATION_UNREADABLE";
    return {
      ok: false,
      problems: [
        problem("/", code, `cannot read ${String(path)}: ${error instanceof Error ? error.message : String(error)}`),
      ],
    };
  }
  return parseJson(text, kind === "catalog" ? "CATALOG_NOT_JSON" : "PUBLICATION_UNREADABLE");
}
