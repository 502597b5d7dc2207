import { DELIVERY_KEY_HEADER, webhookBody, type Notification } from "./notification.ts";
import type { DeliveryPolicy, Webhook } from "./webhook-config.ts";

/**
 * One notification to one webhook, at least once: up to `attempts` POSTs, each bounded by
 * `timeoutMs`, with exponential backoff between them. A 2xx ends it; a timeout, a connection
 * failure, 408, 425, 429 or a 5xx is retried; any other answer (a 4xx, a redirect) is final, since
 * sending the same body again cannot change it. Redirects are not followed: the token must not
 * travel to an address nobody configured.
 */

export type FailureReason = "TIMEOUT" | "CONNECTION" | "HTTP_RETRYABLE" | "HTTP_REJECTED" | "ABORTED";

export type DeliveryOutcome =
  | { readonly delivered: true; readonly attempts: number; readonly status: number }
  | { readonly delivered: false; readonly attempts: number; readonly reason: FailureReason; readonly detail: string };

export interface AttemptFailure {
  readonly attempt: number;
  readonly reason: FailureReason;
  readonly detail: string;
  /** How long before the next attempt; null when this was the last one. */
  readonly retryInMs: number | null;
}

export interface DeliverOptions {
  /** Ends the delivery early (shutdown): it then fails with ABORTED and is not dead-lettered. */
  readonly signal?: AbortSignal;
  /** Called after every failed attempt (logging; a consumer's heartbeat). */
  readonly onAttemptFailed?: (failure: AttemptFailure) => void | Promise<void>;
}

const RETRYABLE_STATUS = new Set([408, 425, 429]);

function backoffMs(policy: DeliveryPolicy, attempt: number, retryAfter: string | null): number {
  const exponential = Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** (attempt - 1));
  const seconds = retryAfter === null ? Number.NaN : Number(retryAfter);
  // A receiver's Retry-After (in seconds) is honoured up to the policy's longest backoff.
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(policy.maxBackoffMs, seconds * 1000) : exponential;
}

function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

type AttemptResult =
  { ok: true; status: number } | { ok: false; reason: FailureReason; detail: string; retryAfter: string | null };

function failed(reason: FailureReason, detail: string, retryAfter: string | null = null): AttemptResult {
  return { ok: false, reason, detail, retryAfter };
}

function causeText(error: unknown): string {
  if (error instanceof Error && error.cause instanceof Error) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}

async function attempt(
  webhook: Webhook,
  notification: Notification,
  body: string,
  policy: DeliveryPolicy,
  outer: AbortSignal | undefined,
): Promise<AttemptResult> {
  const timeout = AbortSignal.timeout(policy.timeoutMs);
  const signal = outer === undefined ? timeout : AbortSignal.any([outer, timeout]);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    [DELIVERY_KEY_HEADER]: notification.deliveryKey,
    "user-agent": "agentops-notify",
  };
  if (webhook.token !== undefined) headers["authorization"] = `Bearer ${webhook.token}`;
  try {
    const response = await fetch(webhook.url, { method: "POST", headers, body, redirect: "manual", signal });
    // The answer's body is never needed: release the connection without reading it.
    await response.body?.cancel().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status };
    const retryable = response.status >= 500 || RETRYABLE_STATUS.has(response.status);
    const reason = retryable ? "HTTP_RETRYABLE" : "HTTP_REJECTED";
    return failed(reason, `HTTP ${response.status}`, response.headers.get("retry-after"));
  } catch (error) {
    if (outer?.aborted === true) return failed("ABORTED", "stopped before delivery");
    if (timeout.aborted) return failed("TIMEOUT", `no answer within ${policy.timeoutMs} ms`);
    return failed("CONNECTION", causeText(error));
  }
}

export async function deliver(
  webhook: Webhook,
  notification: Notification,
  policy: DeliveryPolicy,
  options: DeliverOptions = {},
): Promise<DeliveryOutcome> {
  const body = webhookBody(notification, webhook.format);
  for (let number = 1; ; number += 1) {
    const result = await attempt(webhook, notification, body, policy, options.signal);
    if (result.ok) return { delivered: true, attempts: number, status: result.status };
    const final = result.reason === "HTTP_REJECTED" || result.reason === "ABORTED" || number >= policy.attempts;
    const retryInMs = final ? null : backoffMs(policy, number, result.retryAfter);
    await options.onAttemptFailed?.({ attempt: number, reason: result.reason, detail: result.detail, retryInMs });
    if (retryInMs === null) return { delivered: false, attempts: number, reason: result.reason, detail: result.detail };
    await wait(retryInMs, options.signal);
  }
}
