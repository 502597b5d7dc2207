import { describe, expect, it } from "vitest";
import { InvariantError } from "../../../src/errors.ts";
import { partitionOf } from "../../../src/kafka/key-partitioner.ts";
import type { EngineFact, SinkRecord } from "../../../src/stream/processor.ts";
import type { StageInput } from "../../../src/stream/processors/engine-stages.ts";
import { Telemetry } from "../../../src/stream/runtime/telemetry.ts";
import { jsonTopicSerde } from "../../../src/stream/transports/embedded/json-topic-serde.ts";
import { WRITER_HEADER } from "../../../src/stream/transports/kafka/sink-encoding.ts";
import {
  deliverOutput,
  encodeOutput,
  type EmbeddedTargets,
  type StageLogRole,
} from "../../../src/stream/transports/sink-roles.ts";
import { modelCall } from "../metrics/fact-builders.ts";

const PARTITIONS = 4;

/** Embedded targets that record what each role delivered, and where. */
function recordingTargets(): { targets: EmbeddedTargets; seen: string[] } {
  const seen: string[] = [];
  const targets: EmbeddedTargets = {
    deadLetter: (letter) => seen.push(`deadLetter ${letter.kind}`),
    engineFact: (fact) => seen.push(`engineFact ${fact.fact.fact_id}`),
    agentEvent: (record) => seen.push(`agentEvent ${record.event.fact_id}`),
    stageLog: (role: StageLogRole, partition: number, value: EngineFact | StageInput) =>
      seen.push(`${role}/${String(partition)} ${"fact" in value ? value.fact.fact_id : value.key}`),
    result: (key, result) => seen.push(`result ${key} ${result === null ? "tombstone" : "upsert"}`),
    alert: (alert) => seen.push(`alert ${alert.alert_id}`),
    runState: (key) => seen.push(`runState ${key}`),
  };
  return { targets, seen };
}

describe("the sink table (one entry per topic role, both transports)", () => {
  const fact = modelCall();
  const source = { topic: "unit.engine-facts", partition: 0, offset: "7" };
  const stageFact: SinkRecord = { topic: "stageFacts", key: fact.fact_id, value: { fact, source } };

  it("places a stage fact on the same partition on Kafka and in process", async () => {
    const telemetry = new Telemetry();
    const message = await encodeOutput({ telemetry, enginePartitions: PARTITIONS, serde: jsonTopicSerde }, stageFact);
    const { targets, seen } = recordingTargets();
    deliverOutput({ telemetry, enginePartitions: PARTITIONS }, targets, stageFact);
    const expected = partitionOf(fact.fact_id, PARTITIONS);
    expect(message.partition).toBe(expected);
    expect(seen).toEqual([`stageFacts/${String(expected)} ${fact.fact_id}`]);
  });

  it("carries a stage record's own partition and its writer header", async () => {
    const record: SinkRecord = {
      topic: "stagePartials",
      key: "g",
      value: { value: Buffer.from("x"), partition: 3 },
      writer: "entities/1",
    };
    const message = await encodeOutput(
      { telemetry: new Telemetry(), enginePartitions: PARTITIONS, serde: jsonTopicSerde },
      record,
    );
    expect(message).toMatchObject({ key: "g", partition: 3, headers: { [WRITER_HEADER]: "entities/1" } });
    const { targets, seen } = recordingTargets();
    deliverOutput({ telemetry: new Telemetry(), enginePartitions: PARTITIONS }, targets, record);
    expect(seen).toEqual(["stagePartials/3 g"]);
  });

  it("counts a dead letter once on either transport", async () => {
    const letter: SinkRecord = {
      topic: "deadLetters",
      key: "k",
      value: {
        kind: "record",
        rejection: { reason: "MISSING_FIELD", field: "type", detail: "d" },
        recordRejected: true,
        position: source,
        factId: null,
        original: { key: null, value: null },
      },
    };
    const kafka = new Telemetry();
    await encodeOutput({ telemetry: kafka, enginePartitions: 1, serde: jsonTopicSerde }, letter);
    const embedded = new Telemetry();
    deliverOutput({ telemetry: embedded, enginePartitions: 1 }, recordingTargets().targets, letter);
    expect(kafka.total("agentops_dead_letters_total")).toBe(1);
    expect(embedded.total("agentops_dead_letters_total")).toBe(1);
  });

  it("refuses a role written only as a store's changelog, and a result that names no writer", async () => {
    const changelog: SinkRecord = { topic: "runMonitorChangelog", key: "run", value: null };
    expect(() =>
      deliverOutput({ telemetry: new Telemetry(), enginePartitions: 1 }, recordingTargets().targets, changelog),
    ).toThrow(InvariantError);
    await expect(
      encodeOutput({ telemetry: new Telemetry(), enginePartitions: 1, serde: jsonTopicSerde }, changelog),
    ).rejects.toThrow(InvariantError);
    const unnamed: SinkRecord = { topic: "results", key: "r", value: null };
    await expect(
      encodeOutput({ telemetry: new Telemetry(), enginePartitions: 1, serde: jsonTopicSerde }, unnamed),
    ).rejects.toThrow(/name its writer/);
  });
});
