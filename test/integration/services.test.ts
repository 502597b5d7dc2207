import { afterAll, describe, expect, inject, it } from "vitest";
import {
  closeAll,
  connectedAdmin,
  connectedProducer,
  consumeMessages,
  createTestTopic,
  serviceEndpoints,
  uniqueName,
} from "../support/kafka.ts";
import "../support/provided-context.ts";

afterAll(closeAll);

describe("the services the integration globalSetup provides", () => {
  it("a broker answers a metadata request and a produced record can be read back", async () => {
    const admin = await connectedAdmin();
    const cluster = await admin.describeCluster();
    expect(cluster.brokers.length).toBeGreaterThanOrEqual(1);
    const topic = await createTestTopic(admin, "services-smoke", { numPartitions: 2 });
    const producer = await connectedProducer();
    await producer.send({ topic, messages: [{ key: "k", value: "hello" }] });
    const [message] = await consumeMessages(topic, 1);
    expect(message?.key?.toString()).toBe("k");
    expect(message?.value?.toString()).toBe("hello");
  });

  it("the schema registry answers the Confluent-compatible API", async () => {
    const response = await fetch(`${serviceEndpoints().registryUrl}/subjects`);
    expect(response.status).toBe(200);
    expect(Array.isArray(await response.json())).toBe(true);
  });

  it("a registry started by the project refuses incompatible changes by default (BACKWARD)", async (context) => {
    if (inject("servicesSource") === "env") context.skip(); // a user's own registry keeps its own policy
    const response = await fetch(`${serviceEndpoints().registryUrl}/config`);
    const body = (await response.json()) as { compatibilityLevel?: string };
    expect(body.compatibilityLevel).toBe("BACKWARD");
  });

  it("unique names differ between calls", () => {
    expect(uniqueName("a")).not.toBe(uniqueName("a"));
  });
});
