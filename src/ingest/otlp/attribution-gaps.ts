import type { Fact } from "../../contract/facts.ts";
import type { OtlpMappingConfig } from "./mapping-config.ts";

/**
 * The operational metrics slice model calls by the exact provider + model + role + runtime tuple
 * (Metric Catalog); a call missing any coordinate is left out of them. These are the coordinates a
 * produced model_call lacks, and what a user sets so the next calls carry them.
 */
export const TUPLE_COORDINATES = ["provider", "model", "role", "runtime"] as const;
export type TupleCoordinate = (typeof TUPLE_COORDINATES)[number];

export function missingCoordinates(fact: Fact): TupleCoordinate[] {
  if (fact.type !== "model_call") return [];
  return TUPLE_COORDINATES.filter((coordinate) => fact[coordinate] === undefined || fact[coordinate] === null);
}

/** The attributes the mapping reads for a coordinate, first the one to set (a resource attribute serves every call). */
export function attributesFor(coordinate: TupleCoordinate, config: OtlpMappingConfig): string {
  const keys = config[coordinate].join(" or ");
  if (coordinate !== "runtime" || config.runtimeFromService.length === 0) return keys;
  return `${keys} (or service.name@service.version for ${config.runtimeFromService.join(", ")})`;
}
