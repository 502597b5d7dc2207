/**
 * The shape the page reads of each record, checked in the server before a record reaches a
 * browser: a record that fails is shown as an error row with the reason, never handed to code
 * that would throw on it. Each check answers null when the record is usable, else why not.
 */
type Check = (value: unknown) => string | null;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isNumber = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);

const text: Check = (value) => (typeof value === "string" ? null : "expected a string");
const number: Check = (value) => (isNumber(value) ? null : "expected a finite number");
const boolean: Check = (value) => (typeof value === "boolean" ? null : "expected true or false");
/** Records carry instants as RFC 3339 text or as epoch milliseconds (see static/format.js). */
const instant: Check = (value) =>
  isNumber(value) || (typeof value === "string" && !Number.isNaN(Date.parse(value))) ? null : "expected an instant";
const orNull =
  (check: Check): Check =>
  (value) =>
    value === null ? null : check(value);
const optional =
  (check: Check): Check =>
  (value) =>
    value === undefined || value === null ? null : check(value);
const oneOf =
  (...allowed: string[]): Check =>
  (value) =>
    typeof value === "string" && allowed.includes(value) ? null : `expected one of ${allowed.join(", ")}`;
const mapOf =
  (check: Check): Check =>
  (value) => {
    if (!isObject(value)) return "expected an object";
    for (const [key, field] of Object.entries(value)) {
      const problem = check(field);
      if (problem !== null) return `${key}: ${problem}`;
    }
    return null;
  };
const fields =
  (shape: Readonly<Record<string, Check>>): Check =>
  (value) => {
    if (!isObject(value)) return "expected an object";
    for (const [name, check] of Object.entries(shape)) {
      const problem = check(value[name]);
      if (problem !== null) return `${name}: ${problem}`;
    }
    return null;
  };

const scope: Check = (value) => {
  if (isObject(value) && value["kind"] === "window") return fields({ start: instant, end: instant })(value);
  if (isObject(value) && value["kind"] === "snapshot") return fields({ snapshot_id: text, cutoff: instant })(value);
  return "expected a window or snapshot scope";
};

/** A value is absent (null), a number, or shares by category. */
const resultValue: Check = (value) => {
  if (value === null || isNumber(value)) return null;
  return isObject(value) ? mapOf(number)(value) : "expected null, a number or numbers by category";
};

export const checkResult: Check = fields({
  metric_id: text,
  scope,
  cohort: mapOf(text),
  status: oneOf("PUBLISHED", "NOT_AVAILABLE", "BELOW_MINIMUM_SAMPLE"),
  value: resultValue,
  na_reason: optional(text),
  measures: optional(fields({ currency: optional(text) })),
  eligible_units: optional(number),
  minimum_sample: optional(number),
  coverage: fields({
    numerator: number,
    denominator: number,
    raw_ratio: orNull(number),
    state: text,
    alert: boolean,
    threshold_hundredths: optional(number),
  }),
});

export const checkAlert: Check = fields({
  alert_id: text,
  run_id: text,
  severity: text,
  kind: text,
  rule_id: text,
  rule_version: optional((value) => (typeof value === "string" || isNumber(value) ? null : "expected a version")),
  event_time: instant,
  message: text,
  evidence: optional(mapOf(() => null)),
});

export const checkRun: Check = fields({
  run_id: text,
  steps_seen: optional(number),
  tool_calls_seen: optional(number),
  sandbox_events_seen: optional(number),
  open_alerts: optional(number),
  alerts_emitted: optional(number),
  redundant_share: optional(number),
  last_event_time: optional(instant),
});
