import type { Logger } from "pino";
import { deliver, type DeliveryOutcome, type FailureReason } from "./deliver.ts";
import { webhookBody, type Notification } from "./notification.ts";
import { redactSecrets, type NotifyConfig, type Webhook } from "./webhook-config.ts";

/** Where the record behind a notification came from: a topic record or a line of a file. */
export type SourcePosition =
  | { readonly topic: string; readonly partition: number; readonly offset: string; readonly key: Buffer | null }
  | { readonly file: string; readonly line: number };

/** A delivery that kept failing: what, to which webhook, why, and the body that was not accepted. */
export interface FailedDelivery {
  readonly webhook: string;
  readonly deliveryKey: string;
  readonly kind: Notification["kind"];
  readonly reason: Exclude<FailureReason, "ABORTED">;
  readonly detail: string;
  readonly attempts: number;
  readonly source: SourcePosition;
  /** The request body (it holds no secret: URLs and tokens travel only in the request line and headers). */
  readonly body: string;
}

export interface DeadLetterSink {
  write(failure: FailedDelivery): Promise<void>;
}

export interface NotifySummary {
  delivered: number;
  deadLettered: number;
  /** Deliveries cut short by a stop: neither delivered nor dead-lettered, so the record must be read again. */
  aborted: number;
}

function wants(webhook: Webhook, notification: Notification): boolean {
  const event = notification.kind === "tripwire_alert" ? "alert" : "coverage";
  if (!webhook.events.includes(event)) return false;
  return webhook.minSeverity === "warning" || notification.severity === "critical";
}

/**
 * Sends each notification to every webhook that wants it, in parallel, and hands a delivery that
 * kept failing to the dead-letter sink. Logs name the webhook, never its URL or token, and every
 * error text is redacted of the configured secrets.
 */
export class Notifier {
  readonly summary: NotifySummary = { delivered: 0, deadLettered: 0, aborted: 0 };

  private readonly config: NotifyConfig;
  private readonly deadLetters: DeadLetterSink;
  private readonly logger: Logger;
  private readonly signal: AbortSignal | undefined;

  constructor(config: NotifyConfig, deadLetters: DeadLetterSink, logger: Logger, signal?: AbortSignal) {
    this.config = config;
    this.deadLetters = deadLetters;
    this.logger = logger;
    this.signal = signal;
  }

  /**
   * Resolves true when every webhook has accepted the notification or it was dead-lettered, false
   * when a stop cut it short. `onWait` runs between attempts (a consumer's heartbeat).
   */
  async notify(notification: Notification, source: SourcePosition, onWait?: () => Promise<void>): Promise<boolean> {
    const targets = this.config.webhooks.filter((webhook) => wants(webhook, notification));
    const outcomes = await Promise.all(
      targets.map(async (webhook) => this.deliverOne(webhook, notification, source, onWait)),
    );
    return outcomes.every((complete) => complete);
  }

  private async deliverOne(
    webhook: Webhook,
    notification: Notification,
    source: SourcePosition,
    onWait: (() => Promise<void>) | undefined,
  ): Promise<boolean> {
    const context = { webhook: webhook.name, delivery_key: notification.deliveryKey, kind: notification.kind };
    const outcome: DeliveryOutcome = await deliver(webhook, notification, this.config.delivery, {
      ...(this.signal === undefined ? {} : { signal: this.signal }),
      onAttemptFailed: async (failure) => {
        const detail = redactSecrets(failure.detail, this.config.secrets);
        const { attempt, reason, retryInMs } = failure;
        const fields = { ...context, attempt, reason, detail, retry_in_ms: retryInMs };
        this.logger.warn(fields, "webhook delivery attempt failed");
        await onWait?.();
      },
    });
    if (outcome.delivered) {
      this.summary.delivered += 1;
      this.logger.info({ ...context, attempts: outcome.attempts, status: outcome.status }, "webhook delivered");
      return true;
    }
    if (outcome.reason === "ABORTED") {
      this.summary.aborted += 1;
      return false;
    }
    const detail = redactSecrets(outcome.detail, this.config.secrets);
    const { attempts, reason } = outcome;
    await this.deadLetters.write({
      webhook: webhook.name,
      deliveryKey: notification.deliveryKey,
      kind: notification.kind,
      reason,
      detail,
      attempts,
      source,
      body: webhookBody(notification, webhook.format),
    });
    this.summary.deadLettered += 1;
    this.logger.error({ ...context, attempts, reason, detail }, "webhook delivery failed; dead-lettered");
    return true;
  }
}
