import { createHook } from "node:async_hooks";
import { afterAll, describe, expect, it } from "vitest";
import {
  closeAll,
  connectedAdmin,
  connectedConsumer,
  connectedProducer,
  createTestTopic,
  testKafka,
} from "../support/kafka.ts";

afterAll(closeAll);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Timers created in this process while `during` runs. */
async function timersCreated(during: () => Promise<void>): Promise<number> {
  let created = 0;
  const hook = createHook({
    init: (_id, type) => {
      if (type === "Timeout") created += 1;
    },
  });
  hook.enable();
  try {
    await during();
  } finally {
    hook.disable();
  }
  return created;
}

/**
 * kafkajs 2.2.4's request queues re-armed a timer due at once after every check, so each open
 * connection woke the event loop about once a millisecond for as long as it was open
 * (src/kafka/kafkajs-request-queue.ts): an idle member spent 0.044 of a core. Here a consumer
 * and a producer sit idle on the real broker for two seconds: without the fix this counted 7,005
 * timers; with it, next to none. A record sent after the idle spell still arrives at once.
 */
describe("an idle kafkajs client", () => {
  it("does not wake the event loop every millisecond, and still delivers at once", async () => {
    const kafka = testKafka();
    const topic = await createTestTopic(await connectedAdmin(kafka), "idle");
    const producer = await connectedProducer(kafka);
    const consumer = await connectedConsumer(kafka);
    const arrived: number[] = [];
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async () => {
        arrived.push(Date.now());
      },
    });
    // Joined and fetching: wait for the first fetch of an assignment.
    await new Promise<void>((resolve) => consumer.on(consumer.events.FETCH, () => resolve()));

    const timers = await timersCreated(() => sleep(2_000));
    expect(timers, "timers created in 2 s of idling").toBeLessThan(200);

    const sent = Date.now();
    await producer.send({ topic, messages: [{ key: "k", value: "v" }] });
    const deadline = Date.now() + 10_000;
    while (arrived.length === 0 && Date.now() < deadline) await sleep(10);
    expect(arrived).toHaveLength(1);
    expect((arrived[0] as number) - sent, "ms from send to consume").toBeLessThan(1_000);
  });
});
