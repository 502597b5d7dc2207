import type { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { factSchemas, taskSnapshotSchema } from "../../../src/contract/fact-schema.ts";
import type { AgentEvent, Cost } from "../../../src/contract/facts.ts";
import {
  AGENT_EVENT_MARKER,
  decodeAgentEvent,
  decodeAgentEventRecord,
  encodeAgentEvent,
} from "../../../src/kafka/serde/agent-events-record.ts";
import { InternalRecordError } from "../../../src/codec/binary-form.ts";
import {
  ENGINE_FACT_MARKER,
  decodeEngineFact,
  encodeEngineFact,
  readEngineFact,
} from "../../../src/kafka/serde/engine-facts-record.ts";
import {
  ENVELOPE_FIELDS,
  FACT_LAYOUT_VERSION,
  LAYOUT_FIELDS,
  LAYOUT_TYPES,
  TASK_FIELDS,
  type LayoutField,
} from "../../../src/codec/fact-layout.ts";
import { validFact } from "../../support/valid-fact.ts";

type AnySchema = z.ZodType & {
  _zod: { def: { type: string; in?: AnySchema; innerType?: AnySchema; entries?: Record<string, string> } };
};

/** The enum symbols of a (possibly optional) zod enum field, or undefined when it is no enum. */
function enumSymbols(schema: AnySchema): string[] | undefined {
  const def = schema._zod.def;
  if (def.type === "enum") return Object.values(def.entries ?? {});
  const inner = def.in ?? def.innerType;
  return inner === undefined ? undefined : enumSymbols(inner);
}

function expectSameAsContract(
  fields: readonly LayoutField[],
  shape: Record<string, AnySchema>,
  envelope: readonly string[],
): void {
  expect([...envelope, ...fields.map((field) => field.name)]).toEqual(Object.keys(shape));
  for (const field of fields) {
    const schema = shape[field.name] as AnySchema;
    expect({ field: field.name, optional: field.optional }).toEqual({
      field: field.name,
      optional: schema.safeParse(undefined).success,
    });
    expect({ field: field.name, symbols: field.type.kind === "enum" ? field.type.symbols : undefined }).toEqual({
      field: field.name,
      symbols: enumSymbols(schema),
    });
  }
}

describe("the internal layout follows contract 1.0.0 (a contract change must bump FACT_LAYOUT_VERSION)", () => {
  it.each(LAYOUT_TYPES)("%s: the same fields in the same order, optionality and enum symbols", (type) => {
    expectSameAsContract(
      LAYOUT_FIELDS[type],
      factSchemas[type].shape as unknown as Record<string, AnySchema>,
      ENVELOPE_FIELDS,
    );
  });

  it("a snapshot's defined tasks", () => {
    expectSameAsContract(
      TASK_FIELDS,
      taskSnapshotSchema.shape.tasks.element.shape as unknown as Record<string, AnySchema>,
      [],
    );
  });

  it("every fact type has a layout, and at most 31 optional fields each (the presence bits)", () => {
    expect([...LAYOUT_TYPES].sort()).toEqual(Object.keys(factSchemas).sort());
    for (const fields of [...Object.values(LAYOUT_FIELDS), TASK_FIELDS])
      expect(fields.filter((field) => field.optional).length).toBeLessThanOrEqual(31);
  });
});

const source = { topic: "facts", partition: 2, offset: "41" };

function cost(overrides: Record<string, unknown> = {}): Cost {
  return validFact({
    contract: "agentops.observation@1.0.0",
    type: "cost",
    fact_id: "c1",
    event_time: "2026-10-01T00:00:00Z",
    provenance: { basis: "DIRECT_PROVIDER", source: "openai" },
    cost_id: "c1",
    call_id: "m1",
    amount_minor: 999_999_999_999_999,
    currency: "JPY",
    source: "PROVIDER",
    cost_basis: "list",
    attribution: "PROJECT",
    estimated: false,
    ...overrides,
  }) as Cost;
}

function step(): AgentEvent {
  return validFact({
    contract: "agentops.observation@1.0.0",
    type: "agent_step",
    fact_id: "s1",
    event_time: "2026-10-01T00:00:01.5+02:00",
    run_id: "run-ü",
    seq: 7,
    kind: "tool_call",
    tool: "bash",
    input: "echo 'héllo 🌍'",
    status: null,
  }) as AgentEvent;
}

describe("engine-facts records", () => {
  it("start with their marker and the layout version, and are smaller than the JSON form", () => {
    const fact = cost();
    const { value } = encodeEngineFact(fact, source);
    expect([value[0], value[1]]).toEqual([ENGINE_FACT_MARKER, FACT_LAYOUT_VERSION]);
    expect(value.length).toBeLessThan(Buffer.byteLength(JSON.stringify({ fact, source })) / 2);
  });

  it("a record of another layout version is refused with a reason, not misread", () => {
    const { value } = encodeEngineFact(cost(), source);
    const future = Buffer.from(value);
    future[1] = FACT_LAYOUT_VERSION + 1;
    expect(readEngineFact(future)).toEqual({ ok: false, detail: expect.stringMatching(/layout version 2/) as unknown });
    expect(decodeEngineFact(future)).toBeUndefined();
  });

  it("an agent event is refused on the engine-facts topic", () => {
    const event = encodeAgentEvent(step());
    const misplaced = Buffer.from(event);
    misplaced[0] = ENGINE_FACT_MARKER;
    const withSource = Buffer.concat([
      misplaced.subarray(0, 2),
      Buffer.from([5 * 4, ...Buffer.from("facts"), 2, 2 * 4, ...Buffer.from("41")]),
      misplaced.subarray(2),
    ]);
    expect(readEngineFact(withSource)).toEqual({
      ok: false,
      detail: "a agent_step record does not belong on the engine-facts topic",
    });
  });

  it("records written as JSON before the binary layout are still read (and validated, as then)", () => {
    const fact = cost({ amount_minor: "5" });
    expect(fact.invalid_measures).toEqual({ amount_minor: '"5"' });
    const legacy = Buffer.from(JSON.stringify({ fact, source }));
    expect(decodeEngineFact(legacy)).toEqual({ fact, source });
    expect(readEngineFact(Buffer.from(JSON.stringify({ fact: { type: "packet" }, source })))).toMatchObject({
      ok: false,
    });
  });
});

describe("agent-event records", () => {
  /** A registry that must not be asked: internal records never go through it. */
  const untouchable = new Proxy(
    {},
    {
      get: () => {
        throw new Error("the registry was used");
      },
    },
  ) as SchemaRegistry;

  it("round-trip without the registry", async () => {
    const event = step();
    const bytes = encodeAgentEvent(event);
    expect(bytes[0]).toBe(AGENT_EVENT_MARKER);
    expect(decodeAgentEvent(bytes)).toEqual(event);
    expect(await decodeAgentEventRecord(untouchable, bytes)).toEqual({
      ok: true,
      fact: event,
      invalidMeasures: [],
      factId: "s1",
    });
  });

  it("an unreadable internal record is UNDECODABLE_BYTES with the reason, for the dead letters", async () => {
    const bytes = encodeAgentEvent(step()).subarray(0, 9);
    expect(() => decodeAgentEvent(bytes)).toThrow(InternalRecordError);
    expect(await decodeAgentEventRecord(untouchable, bytes)).toEqual({
      ok: false,
      rejection: { reason: "UNDECODABLE_BYTES", field: "", detail: "internal agent-event record: record cut short" },
      factId: null,
    });
  });

  it("a metric fact in the internal layout is refused", () => {
    const { value } = encodeEngineFact(cost(), source);
    const asEvent = Buffer.concat([
      Buffer.from([AGENT_EVENT_MARKER, FACT_LAYOUT_VERSION]),
      value.subarray(2 + 1 + 5 + 1 + 1 + 2),
    ]);
    expect(() => decodeAgentEvent(asEvent)).toThrow("a cost record does not belong on the agent-events topic");
  });

  it("a record in the registry's wire format (a producer publishing straight to the topic) is decoded and validated through the registry", async () => {
    const asked: number[] = [];
    const registry = {
      getSchema: async (id: number) => void asked.push(id),
      decode: async () => ({
        contract: "agentops.observation@1.0.0",
        type: "agent_step",
        fact_id: "s2",
        event_time: Date.UTC(2026, 9, 1),
        provenance: null,
        run_id: "r",
        seq: -1,
        kind: "plan",
      }),
    } as unknown as SchemaRegistry;
    const decoded = await decodeAgentEventRecord(registry, Buffer.from([0, 0, 0, 0, 7, 1]));
    expect(asked).toEqual([7]);
    expect(decoded).toMatchObject({ ok: false, rejection: { reason: "OUT_OF_RANGE", field: "seq" }, factId: "s2" });
  });
});
