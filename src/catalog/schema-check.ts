import { Ajv2020 } from "ajv/dist/2020.js";
import type { ErrorObject, ValidateFunction } from "ajv";
import catalogSchema from "../../system-contracts/evaluation/metric-catalog.schema.json" with { type: "json" };
import { problem, type Problem, type ProblemCode } from "./catalog-types.ts";
import { escapePointer } from "./removed-metrics.ts";

let compiled: ValidateFunction | undefined;

function validator(): ValidateFunction {
  compiled ??= new Ajv2020({ allErrors: true, strict: true }).compile(catalogSchema);
  return compiled;
}

const CODE_BY_KEYWORD: Readonly<Record<string, ProblemCode>> = {
  additionalProperties: "SCHEMA_UNKNOWN_FIELD",
  required: "SCHEMA_REQUIRED",
  type: "SCHEMA_TYPE",
  const: "SCHEMA_VALUE",
  enum: "SCHEMA_VALUE",
  pattern: "SCHEMA_PATTERN",
  minLength: "SCHEMA_RANGE",
  maxLength: "SCHEMA_RANGE",
  minItems: "SCHEMA_RANGE",
  maxItems: "SCHEMA_RANGE",
  minimum: "SCHEMA_RANGE",
  maximum: "SCHEMA_RANGE",
  uniqueItems: "SCHEMA_DUPLICATE",
};

function toProblem(error: ErrorObject): Problem {
  const code = CODE_BY_KEYWORD[error.keyword] ?? "SCHEMA_INVALID";
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "additionalProperties") {
    const field = String(params["additionalProperty"]);
    return problem(
      `${error.instancePath}/${escapePointer(field)}`,
      code,
      `unknown field "${field}"; the record is closed`,
    );
  }
  if (error.keyword === "required") {
    const field = String(params["missingProperty"]);
    return problem(`${error.instancePath}/${escapePointer(field)}`, code, `required field "${field}" is absent`);
  }
  const detail =
    error.keyword === "const"
      ? ` (${JSON.stringify(params["allowedValue"])})`
      : error.keyword === "enum"
        ? ` (${JSON.stringify(params["allowedValues"])})`
        : "";
  return problem(error.instancePath, code, `${error.message ?? "is invalid"}${detail}`);
}

/** Structural check against metric-catalog.schema.json (JSON Schema 2020-12), as problems. */
export function schemaProblems(document: unknown): Problem[] {
  const validate = validator();
  if (validate(document)) return [];
  return (validate.errors ?? []).map(toProblem);
}
