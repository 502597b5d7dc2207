import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Test support: the shipped companion files and the mutation fixtures (RFC 6902 JSON Patch subset). */

export const EVALUATION_DIR = fileURLToPath(new URL("../../../system-contracts/evaluation/", import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

export function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, "utf8")) as unknown;
}

export function shippedCatalogJson(): unknown {
  return readJson(`${EVALUATION_DIR}metric-catalog.json`);
}

export function shippedPublicationJson(): unknown {
  return readJson(`${EVALUATION_DIR}publication.json`);
}

export interface PatchOperation {
  readonly op: "add" | "remove" | "replace" | "copy" | "move";
  readonly path: string;
  readonly from?: string;
  readonly value?: unknown;
}

export interface MutationFixture {
  readonly name: string;
  readonly description: string;
  readonly expected_code: string | null;
  readonly mutation: readonly PatchOperation[];
  readonly publication_mutation?: readonly PatchOperation[];
}

export function loadFixtures(kind: "valid" | "invalid"): MutationFixture[] {
  const dir = `${EVALUATION_DIR}fixtures/${kind}/`;
  return readdirSync(dir)
    .filter((file) => file.endsWith(".json"))
    .sort()
    .map((file) => ({
      name: file.replace(/\.json$/, ""),
      ...(readJson(`${dir}${file}`) as Omit<MutationFixture, "name">),
    }));
}

type Container = Record<string, unknown> | unknown[];

function tokens(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((token) => token.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function resolveParent(document: unknown, pointer: string): { parent: Container; key: string } {
  const path = tokens(pointer);
  const key = path.pop();
  if (key === undefined) throw new Error("cannot patch the document root");
  let node: unknown = document;
  for (const token of path) {
    node = Array.isArray(node) ? node[Number(token)] : (node as Record<string, unknown>)[token];
    if (typeof node !== "object" || node === null) throw new Error(`patch path ${pointer} does not exist`);
  }
  return { parent: node as Container, key };
}

function get(document: unknown, pointer: string): unknown {
  const { parent, key } = resolveParent(document, pointer);
  const value = Array.isArray(parent) ? parent[Number(key)] : parent[key];
  if (value === undefined) throw new Error(`patch path ${pointer} does not exist`);
  return value;
}

function remove(document: unknown, pointer: string): unknown {
  const { parent, key } = resolveParent(document, pointer);
  const value = get(document, pointer);
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else delete parent[key];
  return value;
}

function add(document: unknown, pointer: string, value: unknown): void {
  const { parent, key } = resolveParent(document, pointer);
  if (Array.isArray(parent)) parent.splice(key === "-" ? parent.length : Number(key), 0, value);
  else parent[key] = value;
}

/** Applies JSON Patch operations to a deep copy of the document; a path that does not exist throws. */
export function applyPatch(document: unknown, operations: readonly PatchOperation[]): unknown {
  const result = structuredClone(document);
  for (const operation of operations) {
    switch (operation.op) {
      case "add":
        add(result, operation.path, structuredClone(operation.value));
        break;
      case "remove":
        remove(result, operation.path);
        break;
      case "replace":
        get(result, operation.path);
        remove(result, operation.path);
        add(result, operation.path, structuredClone(operation.value));
        break;
      case "copy":
        add(result, operation.path, structuredClone(get(result, operation.from ?? "")));
        break;
      case "move":
        add(result, operation.path, remove(result, operation.from ?? ""));
        break;
    }
  }
  return result;
}
