import type { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import type { RejectionReason } from "../../contract/rejection.ts";

export type WireDecoding =
  | { readonly ok: true; readonly value: unknown }
  | {
      readonly ok: false;
      readonly reason: Extract<RejectionReason, "UNDECODABLE_BYTES" | "UNKNOWN_SCHEMA_ID">;
      readonly detail: string;
    };

/**
 * Decodes a Confluent wire-format record (magic byte 0, 4-byte schema id, Avro body) and says
 * precisely why it could not: bytes that are not in the wire format at all, a schema id the
 * registry does not know, or an Avro body that does not match its schema.
 */
export async function decodeWireRecord(registry: SchemaRegistry, bytes: Buffer | null): Promise<WireDecoding> {
  if (bytes === null || bytes.length < 5 || bytes[0] !== 0) {
    return {
      ok: false,
      reason: "UNDECODABLE_BYTES",
      detail: "not in the Confluent wire format (magic byte 0 + 4-byte schema id + Avro body)",
    };
  }
  const schemaId = bytes.readInt32BE(1);
  try {
    await registry.getSchema(schemaId);
  } catch (error) {
    // Only the registry's own "not found" means the id is unknown; an unreachable registry is an
    // outage, thrown so the batch is retried rather than dead-lettering valid records.
    if (!isNotFound(error)) throw error;
    return {
      ok: false,
      reason: "UNKNOWN_SCHEMA_ID",
      detail: `schema id ${schemaId} is unknown to the registry: ${messageOf(error)}`,
    };
  }
  try {
    return { ok: true, value: plainData(await registry.decode(bytes)) };
  } catch (error) {
    return {
      ok: false,
      reason: "UNDECODABLE_BYTES",
      detail: `Avro body does not match schema ${schemaId}: ${messageOf(error)}`,
    };
  }
}

/**
 * avsc decodes records into instances of generated classes whose prototypes carry enumerable
 * helpers (clone, toBuffer, ...); validation must see only the record's own fields.
 */
export function plainData(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plainData);
  if (value === null || typeof value !== "object" || Buffer.isBuffer(value) || value instanceof Date) return value;
  const plain: Record<string, unknown> = {};
  for (const key of Object.keys(value)) plain[key] = plainData((value as Record<string, unknown>)[key]);
  return plain;
}

function isNotFound(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { status?: unknown }).status === 404;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
