import { createRequire } from "node:module";
import type {
  AttributeValue,
  Attributes,
  OtlpDataPoint,
  OtlpLogRecord,
  OtlpRecord,
  OtlpSignal,
  OtlpSpan,
} from "./otlp-records.ts";
import { ConfigError } from "../../errors.ts";

/**
 * OTLP/HTTP request bodies → records. Protobuf is decoded by the protobufjs code that the
 * OpenTelemetry project generates from the official .proto files and ships in
 * @opentelemetry/otlp-transformer (0.214.0 is the last release that ships all three services:
 * later releases replaced it with a write-only serializer). JSON is the OTLP/JSON mapping of the
 * same messages. Both are turned into the same plain form first (protobufjs' `toObject` with the
 * OTLP/JSON conventions: camelCase names, int64 as decimal strings, ids as hex), and one walker
 * reads that form, so a field means the same whatever the wire said.
 */

interface GeneratedMessage {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): unknown;
  encode(message: unknown): { finish(): Uint8Array };
  fromObject(object: unknown): unknown;
}
interface GeneratedService {
  readonly [name: string]: GeneratedMessage;
}
interface GeneratedRoot {
  readonly opentelemetry: {
    readonly proto: { readonly collector: Record<"trace" | "logs" | "metrics", { readonly v1: GeneratedService }> };
  };
}

const require = createRequire(import.meta.url);
const root = require("@opentelemetry/otlp-transformer/build/src/generated/root.js") as GeneratedRoot;
const collector = root.opentelemetry.proto.collector;

const MESSAGES: Record<OtlpSignal, { request: GeneratedMessage; response: GeneratedMessage }> = {
  traces: {
    request: must(collector.trace.v1["ExportTraceServiceRequest"]),
    response: must(collector.trace.v1["ExportTraceServiceResponse"]),
  },
  logs: {
    request: must(collector.logs.v1["ExportLogsServiceRequest"]),
    response: must(collector.logs.v1["ExportLogsServiceResponse"]),
  },
  metrics: {
    request: must(collector.metrics.v1["ExportMetricsServiceRequest"]),
    response: must(collector.metrics.v1["ExportMetricsServiceResponse"]),
  },
};

function must(message: GeneratedMessage | undefined): GeneratedMessage {
  if (message === undefined)
    throw new ConfigError({
      field: "@opentelemetry/otlp-transformer",
      problem: "the installed version lacks a generated OTLP message",
      fix: "reinstall the version package.json pins (npm ci)",
    });
  return message;
}

export type WireFormat = "protobuf" | "json";

/** A body the receiver cannot read at all: answered with 400 and this message. */
export class MalformedOtlpError extends Error {
  override readonly name = "MalformedOtlpError";
}

/** How deep attribute values (arrays and key-value lists) may nest; deeper is a 400 naming this bound. */
export const MAX_VALUE_DEPTH = 32;
const TOO_DEEP = `attribute values nested deeper than ${MAX_VALUE_DEPTH} levels`;

export function decodeOtlpRequest(signal: OtlpSignal, format: WireFormat, body: Uint8Array): OtlpRecord[] {
  try {
    return decode(signal, format, body);
  } catch (error) {
    // protobufjs decodes nested messages recursively: a far deeper body exhausts the stack first.
    if (isStackOverflow(error)) throw new MalformedOtlpError(`not an OTLP ${signal} request: ${TOO_DEEP}`);
    throw error;
  }
}

function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

function decode(signal: OtlpSignal, format: WireFormat, body: Uint8Array): OtlpRecord[] {
  let plain: unknown;
  if (format === "protobuf") {
    const { request } = MESSAGES[signal];
    let message: unknown;
    try {
      message = request.decode(body);
    } catch (error) {
      if (isStackOverflow(error)) throw error;
      throw new MalformedOtlpError(
        `not an OTLP ${signal} protobuf request: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    plain = hexIds(
      request.toObject(message, { longs: String, bytes: String, enums: Number, defaults: false, arrays: true }),
    );
  } else {
    try {
      plain = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
    } catch (error) {
      throw new MalformedOtlpError(
        `not an OTLP/JSON ${signal} request: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  return walk(signal, plain);
}

/** The export response: empty when everything was accepted, else the partial-success counts. */
export function encodeOtlpResponse(
  signal: OtlpSignal,
  format: WireFormat,
  rejected: number,
  errorMessage: string,
): Uint8Array {
  const countField =
    signal === "traces" ? "rejectedSpans" : signal === "logs" ? "rejectedLogRecords" : "rejectedDataPoints";
  const response =
    rejected === 0 && errorMessage === "" ? {} : { partialSuccess: { [countField]: String(rejected), errorMessage } };
  if (format === "json") return new TextEncoder().encode(JSON.stringify(response));
  const { response: message } = MESSAGES[signal];
  return message.encode(message.fromObject(response)).finish();
}

// protobufjs renders `bytes` as base64; OTLP/JSON spells trace and span ids in hex.
function hexIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(hexIds);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    out[key] =
      (key === "traceId" || key === "spanId" || key === "parentSpanId") && typeof field === "string"
        ? Buffer.from(field, "base64").toString("hex")
        : hexIds(field);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// One walker over the OTLP/JSON form. Every access is checked: a wrong shape is a 400, never a
// crash and never a silently skipped record.

function walk(signal: OtlpSignal, plain: unknown): OtlpRecord[] {
  const request = object(plain, "request");
  const records: OtlpRecord[] = [];
  const resourceKey = signal === "traces" ? "resourceSpans" : signal === "logs" ? "resourceLogs" : "resourceMetrics";
  const scopeKey = signal === "traces" ? "scopeSpans" : signal === "logs" ? "scopeLogs" : "scopeMetrics";
  list(request[resourceKey], resourceKey).forEach((resourceEntry, r) => {
    const path = `${resourceKey}[${r}]`;
    const entry = object(resourceEntry, path);
    const resource = attributes(
      entry["resource"] === undefined ? undefined : object(entry["resource"], `${path}.resource`)["attributes"],
      `${path}.resource.attributes`,
    );
    list(entry[scopeKey], `${path}.${scopeKey}`).forEach((scopeEntry, s) => {
      const scopePath = `${path}.${scopeKey}[${s}]`;
      const scope = object(scopeEntry, scopePath);
      const scopeName =
        scope["scope"] === undefined
          ? ""
          : (optionalString(object(scope["scope"], `${scopePath}.scope`)["name"], `${scopePath}.scope.name`) ?? "");
      const origin = (index: number) => ({ index, resource, scopeName });
      if (signal === "traces") {
        list(scope["spans"], `${scopePath}.spans`).forEach((item, i) =>
          records.push(
            span(object(item, `${scopePath}.spans[${i}]`), `${scopePath}.spans[${i}]`, origin(records.length)),
          ),
        );
      } else if (signal === "logs") {
        list(scope["logRecords"], `${scopePath}.logRecords`).forEach((item, i) =>
          records.push(
            logRecord(
              object(item, `${scopePath}.logRecords[${i}]`),
              `${scopePath}.logRecords[${i}]`,
              origin(records.length),
            ),
          ),
        );
      } else {
        list(scope["metrics"], `${scopePath}.metrics`).forEach((item, i) => {
          const metricPath = `${scopePath}.metrics[${i}]`;
          const metric = object(item, metricPath);
          const metricName = optionalString(metric["name"], `${metricPath}.name`) ?? "";
          for (const kind of ["sum", "gauge", "histogram", "exponentialHistogram", "summary"]) {
            if (metric[kind] === undefined) continue;
            list(
              object(metric[kind], `${metricPath}.${kind}`)["dataPoints"],
              `${metricPath}.${kind}.dataPoints`,
            ).forEach((point, p) => {
              const pointPath = `${metricPath}.${kind}.dataPoints[${p}]`;
              const dataPoint: OtlpDataPoint = {
                signal: "metrics",
                ...origin(records.length),
                metricName,
                attributes: attributes(object(point, pointPath)["attributes"], `${pointPath}.attributes`),
              };
              records.push(dataPoint);
            });
          }
        });
      }
    });
  });
  return records;
}

function span(
  item: Record<string, unknown>,
  path: string,
  origin: { index: number; resource: Attributes; scopeName: string },
): OtlpSpan {
  const status = item["status"] === undefined ? {} : object(item["status"], `${path}.status`);
  return {
    signal: "traces",
    ...origin,
    traceId: hexId(item["traceId"], `${path}.traceId`),
    spanId: hexId(item["spanId"], `${path}.spanId`),
    name: optionalString(item["name"], `${path}.name`) ?? "",
    startTimeUnixNano: nanos(item["startTimeUnixNano"], `${path}.startTimeUnixNano`),
    endTimeUnixNano: nanos(item["endTimeUnixNano"], `${path}.endTimeUnixNano`),
    attributes: attributes(item["attributes"], `${path}.attributes`),
    statusCode: statusCode(status["code"], `${path}.status.code`),
  };
}

function logRecord(
  item: Record<string, unknown>,
  path: string,
  origin: { index: number; resource: Attributes; scopeName: string },
): OtlpLogRecord {
  return {
    signal: "logs",
    ...origin,
    timeUnixNano: nanos(item["timeUnixNano"], `${path}.timeUnixNano`),
    observedTimeUnixNano: nanos(item["observedTimeUnixNano"], `${path}.observedTimeUnixNano`),
    eventName: optionalString(item["eventName"], `${path}.eventName`),
    body: item["body"] === undefined || item["body"] === null ? undefined : anyValue(item["body"], `${path}.body`),
    attributes: attributes(item["attributes"], `${path}.attributes`),
  };
}

function object(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new MalformedOtlpError(`${path}: expected an object`);
  return value as Record<string, unknown>;
}

function list(value: unknown, path: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new MalformedOtlpError(`${path}: expected an array`);
  return value;
}

function optionalString(value: unknown, path: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new MalformedOtlpError(`${path}: expected a string`);
  return value;
}

function hexId(value: unknown, path: string): string {
  const text = optionalString(value, path) ?? "";
  if (!/^([0-9a-fA-F]{2})*$/.test(text)) throw new MalformedOtlpError(`${path}: expected a hex id`);
  return text.toLowerCase();
}

/** fixed64 nanoseconds: a decimal string (or a JSON number); 0 means unset in OTLP. */
function nanos(value: unknown, path: string): bigint | undefined {
  if (value === undefined || value === null) return undefined;
  let parsed: bigint;
  if (typeof value === "string" && /^\d+$/.test(value)) parsed = BigInt(value);
  else if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) parsed = BigInt(value);
  else throw new MalformedOtlpError(`${path}: expected unsigned nanoseconds`);
  return parsed === 0n ? undefined : parsed;
}

function statusCode(value: unknown, path: string): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (value === "STATUS_CODE_OK") return 1;
  if (value === "STATUS_CODE_ERROR") return 2;
  if (value === "STATUS_CODE_UNSET") return 0;
  throw new MalformedOtlpError(`${path}: expected a status code`);
}

function attributes(value: unknown, path: string, depth = 0): Attributes {
  const map = new Map<string, AttributeValue>();
  list(value, path).forEach((item, i) => {
    const entry = object(item, `${path}[${i}]`);
    const key = optionalString(entry["key"], `${path}[${i}].key`);
    if (key === undefined) throw new MalformedOtlpError(`${path}[${i}].key: missing`);
    if (entry["value"] === undefined || entry["value"] === null) return;
    const read = anyValue(entry["value"], `${path}[${i}].value`, depth);
    if (read !== undefined) map.set(key, read);
  });
  return map;
}

/** An OTLP AnyValue; an empty one (no variant set) reads as absent. */
function anyValue(value: unknown, path: string, depth = 0): AttributeValue | undefined {
  if (depth > MAX_VALUE_DEPTH) throw new MalformedOtlpError(`${path}: ${TOO_DEEP}`);
  const variant = object(value, path);
  if ("stringValue" in variant) return optionalString(variant["stringValue"], `${path}.stringValue`) ?? "";
  if ("boolValue" in variant) {
    if (typeof variant["boolValue"] !== "boolean")
      throw new MalformedOtlpError(`${path}.boolValue: expected a boolean`);
    return variant["boolValue"];
  }
  if ("intValue" in variant) {
    const raw = variant["intValue"];
    if (typeof raw === "number" && Number.isInteger(raw)) return raw;
    if (typeof raw === "string" && /^-?\d+$/.test(raw)) {
      const parsed = Number(raw);
      return Number.isSafeInteger(parsed) ? parsed : raw;
    }
    throw new MalformedOtlpError(`${path}.intValue: expected an int64`);
  }
  if ("doubleValue" in variant) {
    const raw = variant["doubleValue"];
    if (typeof raw === "number") return raw;
    if (raw === "NaN" || raw === "Infinity" || raw === "-Infinity") return Number(raw);
    throw new MalformedOtlpError(`${path}.doubleValue: expected a number`);
  }
  if ("arrayValue" in variant) {
    const values = list(object(variant["arrayValue"], `${path}.arrayValue`)["values"], `${path}.arrayValue.values`);
    return values
      .map((item, i) => anyValue(item, `${path}.arrayValue.values[${i}]`, depth + 1))
      .filter((item): item is AttributeValue => item !== undefined);
  }
  if ("kvlistValue" in variant) {
    const values = object(variant["kvlistValue"], `${path}.kvlistValue`)["values"];
    return Object.fromEntries(attributes(values, `${path}.kvlistValue.values`, depth + 1));
  }
  if ("bytesValue" in variant) return optionalString(variant["bytesValue"], `${path}.bytesValue`) ?? "";
  return undefined;
}
