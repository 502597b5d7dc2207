import { Effect } from "effect";
import { KafkaJSConnectionError } from "kafkajs";
import { describe, expect, it } from "vitest";
import { ProcessorError } from "../../../src/errors.ts";
import { classifyConnectionError } from "../../../src/kafka/connection-errors.ts";
import { resolveConnectionSettings } from "../../../src/kafka/connection-settings.ts";

const settings = resolveConnectionSettings({ brokers: "127.0.0.1:1", schemaRegistry: "http://127.0.0.1:18081" }, {});

describe("connection failures reached through an Effect program", () => {
  it("a broker failure inside a failed fiber is still named as Kafka's, not the registry's", async () => {
    const kafkaError = new KafkaJSConnectionError("Connection error: connect ECONNREFUSED 127.0.0.1:1");
    // What `agentops replay --from-topic` meets: runPromise rejects with a FiberFailure around a typed error.
    const rejection = await Effect.runPromise(
      Effect.fail(new ProcessorError({ processor: "embedded", cause: kafkaError })),
    ).catch((error: unknown) => error);
    const failure = classifyConnectionError(rejection, settings);
    expect(failure?.service).toBe("kafka");
    expect(failure?.kind).toBe("unreachable");
    expect(failure?.message).toContain("cannot reach Kafka at 127.0.0.1:1");
  });
});
