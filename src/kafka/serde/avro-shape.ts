import type avro from "avsc";

/**
 * Shapes a plain value for an Avro type: absent fields take their default, other absent optional
 * fields become null (Avro has no "absent"), nested records and arrays follow their schema. The contract's JSON form omits
 * absent optionals; this is the one place that fills them in.
 */
export function shapeForAvro(value: unknown, type: avro.Type): unknown {
  const typeName = type.typeName;
  if (typeName === "record" || typeName === "error") {
    const source = (value ?? {}) as Record<string, unknown>;
    const shaped: Record<string, unknown> = {};
    for (const field of (type as avro.types.RecordType).fields) {
      const value = source[field.name];
      // An absent field takes the schema's default (null for the optionals, {} for raw_values).
      const fallback: unknown = value === undefined ? field.defaultValue() : undefined;
      shaped[field.name] = fallback === undefined ? shapeForAvro(value, field.type) : fallback;
    }
    return shaped;
  }
  if (typeName === "union:unwrapped") {
    if (value === undefined || value === null) return null;
    const branches = (type as avro.types.UnwrappedUnionType).types.filter((branch) => branch.typeName !== "null");
    const match = branches.find((branch) => branch.isValid(shapeForAvro(value, branch))) ?? branches[0];
    return match === undefined ? value : shapeForAvro(value, match);
  }
  if (typeName === "array") {
    const items = (type as avro.types.ArrayType).itemsType;
    return Array.isArray(value) ? value.map((item) => shapeForAvro(item, items)) : value;
  }
  return value ?? null;
}
