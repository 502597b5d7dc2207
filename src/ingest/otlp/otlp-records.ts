/**
 * The OTLP records the receiver reads, after decoding, in one shape whatever the wire form
 * (protobuf or JSON). Only what the mappings need is kept; every value keeps its OTLP type.
 */
export type AttributeValue =
  string | number | boolean | readonly AttributeValue[] | { readonly [key: string]: AttributeValue };

/** Attributes by key. An OTLP int64 is a number when it is a safe integer, else its decimal string. */
export type Attributes = ReadonlyMap<string, AttributeValue>;

export type OtlpSignal = "traces" | "logs" | "metrics";

interface RecordOrigin {
  /** Position of the record in its request (0-based, over all resources and scopes). */
  readonly index: number;
  readonly resource: Attributes;
  readonly scopeName: string;
}

export interface OtlpSpan extends RecordOrigin {
  readonly signal: "traces";
  /** Lower-case hex, as OTLP/JSON spells it; empty when the span has none. */
  readonly traceId: string;
  readonly spanId: string;
  readonly name: string;
  readonly startTimeUnixNano: bigint | undefined;
  readonly endTimeUnixNano: bigint | undefined;
  readonly attributes: Attributes;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
}

export interface OtlpLogRecord extends RecordOrigin {
  readonly signal: "logs";
  readonly timeUnixNano: bigint | undefined;
  readonly observedTimeUnixNano: bigint | undefined;
  /** The LogRecord's `event_name` field (OTLP 1.5+), when set. */
  readonly eventName: string | undefined;
  readonly body: AttributeValue | undefined;
  readonly attributes: Attributes;
}

/** One metric data point; the mappings read no metric yet, but count each one. */
export interface OtlpDataPoint extends RecordOrigin {
  readonly signal: "metrics";
  readonly metricName: string;
  readonly attributes: Attributes;
}

export type OtlpRecord = OtlpSpan | OtlpLogRecord | OtlpDataPoint;
