import type { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import { parseDecodedFact, type ParseResult } from "../../contract/parse-fact.ts";
import { decodeWireRecord } from "./wire-decoder.ts";

/** A decoded and validated record, with the fact_id when one could be read (for dead letters). */
export type DecodedFact = ParseResult & { readonly factId: string | null };

/**
 * Bytes from a topic → a contract 1.0.0 fact, or the reason it is not one: the same path for the
 * ingest, the run monitor and the audit rebuild, so all three reject exactly the same records.
 */
export async function decodeFact(registry: SchemaRegistry, bytes: Buffer | null): Promise<DecodedFact> {
  const decoded = await decodeWireRecord(registry, bytes);
  if (!decoded.ok)
    return { ok: false, rejection: { reason: decoded.reason, field: "", detail: decoded.detail }, factId: null };
  const parsed = parseDecodedFact(decoded.value);
  return { ...parsed, factId: parsed.ok ? parsed.fact.fact_id : factIdOf(decoded.value) };
}

function factIdOf(value: unknown): string | null {
  if (typeof value !== "object" || value === null) return null;
  const factId = (value as { fact_id?: unknown }).fact_id;
  return typeof factId === "string" ? factId : null;
}
