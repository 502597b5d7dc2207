import fc from "fast-check";
import { describe, expect, it } from "vitest";
import "../../../src/kafka/kafkajs.ts";
import { kafkajsLoaded, kafkajsOriginal } from "../../../src/kafka/kafkajs-module-cache.ts";
import {
  PENDING_CHECK_INTERVAL_MS,
  pendingCheckDelay,
  requestQueuePatched,
} from "../../../src/kafka/kafkajs-request-queue.ts";

const MODULE = "src/network/requestQueue/index.js";
const quiet = { debug: () => undefined, warn: () => undefined, info: () => undefined, error: () => undefined };

interface PushedRequest {
  readonly entry: { correlationId: number; resolve: () => void; reject: () => void };
  readonly expectResponse: boolean;
  readonly sendRequest: () => void;
}
interface Queue {
  pending: unknown[];
  inflight: Map<number, unknown>;
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  push(request: PushedRequest): void;
  fulfillRequest(response: { correlationId: number; payload: Buffer; size: number }): void;
  checkPendingRequests(): void;
  maybeThrottle(milliseconds: number): void;
  destroy(): void;
}
type QueueClass = new (options: Record<string, unknown>) => Queue;

const queueOf = (RequestQueue: QueueClass, maxInFlightRequests: number | null = null): Queue =>
  new RequestQueue({
    maxInFlightRequests,
    requestTimeout: 30_000,
    enforceRequestTimeout: false,
    clientId: "test",
    broker: "127.0.0.1:1",
    logger: quiet,
  });

/** A request whose send is recorded in `sent`. */
const request = (correlationId: number, sent: number[]): PushedRequest => ({
  entry: { correlationId, resolve: () => undefined, reject: () => undefined },
  expectResponse: true,
  sendRequest: () => void sent.push(correlationId),
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe("kafkajs' request queue timer", () => {
  const Patched = kafkajsLoaded<QueueClass>(MODULE);

  it("is patched for the pinned kafkajs", () => {
    expect(requestQueuePatched).toBe(true);
  });

  it("arms no timer while no request waits; kafkajs' own re-arms one due at once", () => {
    const patched = queueOf(Patched);
    patched.checkPendingRequests();
    expect(patched.throttleCheckTimeoutId).toBeNull();

    const original = queueOf(kafkajsOriginal<QueueClass>(MODULE));
    original.checkPendingRequests();
    // The defect: an empty, unthrottled queue schedules another check, and that one the next, for ever.
    expect(original.throttleCheckTimeoutId).not.toBeNull();
    original.destroy();
  });

  it("sends a request pushed while throttled once the throttle ends", async () => {
    const queue = queueOf(Patched);
    const sent: number[] = [];
    queue.maybeThrottle(40);
    queue.push(request(1, sent));
    expect(sent).toEqual([]);
    expect(queue.throttleCheckTimeoutId).not.toBeNull();
    await sleep(120);
    expect(sent).toEqual([1]);
    expect(queue.throttleCheckTimeoutId).toBeNull();
  });

  it("sends a request waiting for an in-flight slot when a response frees one", () => {
    const queue = queueOf(Patched, 1);
    const sent: number[] = [];
    queue.push(request(1, sent));
    queue.push(request(2, sent));
    expect(sent).toEqual([1]);
    queue.fulfillRequest({ correlationId: 1, payload: Buffer.alloc(0), size: 0 });
    expect(sent).toEqual([1, 2]);
    queue.fulfillRequest({ correlationId: 2, payload: Buffer.alloc(0), size: 0 });
    expect(queue.pending).toHaveLength(0);
    queue.destroy();
  });

  it("schedules a check only for waiting requests, never with a negative or zero delay", () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 4 }),
        fc.integer({ min: -1, max: 2_000_000_000_000 }),
        fc.integer({ min: 1_000_000_000_000, max: 2_000_000_000_000 }),
        (waiting, throttledUntil, now) => {
          const delay = pendingCheckDelay({ pending: Array.from({ length: waiting }), throttledUntil }, now);
          if (waiting === 0) return delay === undefined;
          if (delay === undefined || delay <= 0) return false;
          return throttledUntil > now ? delay === throttledUntil - now : delay === PENDING_CHECK_INTERVAL_MS;
        },
      ),
    );
  });
});
