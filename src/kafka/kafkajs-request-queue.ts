import { kafkajsLoaded, kafkajsModule } from "./kafkajs-module-cache.ts";

/*
 * kafkajs 2.2.4 keeps a request queue per broker connection. After every check of its pending
 * requests it arms a timer for the next check, whether or not a request is pending, and with no
 * throttle in effect that timer is due at once (a negative delay: Node's TimeoutNegativeWarning).
 * So every open connection woke the event loop about once a millisecond, idle or not
 * (tulios/kafkajs#1556, #1704). Here the timer is armed only while requests wait: at the end of a
 * broker's throttle, or after kafkajs' own check interval when they wait for an in-flight slot
 * (a response also checks the queue). A request only ever waits by being pushed, and a push arms it.
 */

/** kafkajs' interval for re-checking requests that wait for an in-flight slot (CHECK_PENDING_REQUESTS_INTERVAL). */
export const PENDING_CHECK_INTERVAL_MS = 10;

/** The fields of kafkajs' RequestQueue this reads and writes. */
export interface RequestQueueTimer {
  pending: readonly unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  checkPendingRequests(): void;
}

/** The delay until the queue must look at its pending requests again, or undefined when none wait. */
export function pendingCheckDelay(
  queue: Pick<RequestQueueTimer, "pending" | "throttledUntil">,
  now: number,
): number | undefined {
  if (queue.pending.length === 0) return undefined;
  const untilUnthrottled = queue.throttledUntil - now;
  return untilUnthrottled > 0 ? untilUnthrottled : PENDING_CHECK_INTERVAL_MS;
}

/** RequestQueue.scheduleCheckPendingRequests, arming the timer only while requests wait. */
function scheduleCheckPendingRequests(this: RequestQueueTimer): void {
  if (this.throttleCheckTimeoutId !== null) return;
  const delay = pendingCheckDelay(this, Date.now());
  if (delay === undefined) return;
  this.throttleCheckTimeoutId = setTimeout(() => {
    this.throttleCheckTimeoutId = null;
    this.checkPendingRequests();
  }, delay);
}

const REQUEST_QUEUE = "src/network/requestQueue/index.js";

/** True when kafkajs' request queues in this process use the scheduling above. */
export const requestQueuePatched: boolean = (() => {
  if (kafkajsModule(REQUEST_QUEUE) === undefined) return false;
  const RequestQueue = kafkajsLoaded<{ prototype: { scheduleCheckPendingRequests: unknown } }>(REQUEST_QUEUE);
  RequestQueue.prototype.scheduleCheckPendingRequests = scheduleCheckPendingRequests;
  return true;
})();
