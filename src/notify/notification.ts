import { createHash } from "node:crypto";
import { canonicalJson } from "../contract/canonical-json.ts";
import type { MetricResult } from "../contract/result-record.ts";
import type { WebhookFormat } from "./webhook-config.ts";

/**
 * What `agentops notify` sends: a tripwire alert, or a result key entering or leaving
 * LOW_COVERAGE. The delivery key is derived from the event only, so a redelivery after a retry,
 * a crash or a restart carries the same key and a receiver can drop the copy.
 */

export type NotificationKind = "tripwire_alert" | "low_coverage" | "coverage_recovered";

export interface Notification {
  readonly deliveryKey: string;
  readonly kind: NotificationKind;
  readonly severity: "warning" | "critical";
  /** One line for a human. */
  readonly title: string;
  /** The record behind it, as published. */
  readonly subject: Readonly<Record<string, unknown>>;
}

/** The alert fields notify reads; the rest of the record is passed on untouched. */
export type AlertLike = { readonly alert_id: string; readonly run_id: string } & Readonly<Record<string, unknown>>;

/** Header that carries the delivery key (the body carries it as `delivery_key`). */
export const DELIVERY_KEY_HEADER = "idempotency-key";

function deliveryKey(kind: NotificationKind, identity: unknown): string {
  return createHash("sha256")
    .update(canonicalJson(["agentops.notify/1", kind, identity]))
    .digest("hex")
    .slice(0, 32);
}

const text = (value: unknown, fallback: string): string => (typeof value === "string" ? value : fallback);

/** The largest epoch ms a Date can hold (±100,000,000 days). */
const MAX_DATE_MS = 8.64e15;

/** A title is one line for a chat message: bounded, whatever a record's message or cohort holds. */
const MAX_TITLE_CHARS = 1_000;

function oneLine(title: string): string {
  const flat = title.replace(/[\r\n]+/g, " ");
  const chars = [...flat];
  return chars.length <= MAX_TITLE_CHARS ? flat : `${chars.slice(0, MAX_TITLE_CHARS - 1).join("")}…`;
}

export function alertNotification(alert: AlertLike): Notification {
  const severity = alert["severity"] === "critical" ? "critical" : "warning";
  const what = text(alert["message"], text(alert["rule_id"], "tripwire"));
  const title = `${severity.toUpperCase()} ${text(alert["kind"], "ALERT")} in run ${alert.run_id}: ${what}`;
  // Files carry event_time as ISO text, the topic as epoch ms: one form for every receiver.
  const eventTime = alert["event_time"];
  const readable = typeof eventTime === "number" && Math.abs(eventTime) <= MAX_DATE_MS;
  const subject = readable ? { ...alert, event_time: new Date(eventTime).toISOString() } : alert;
  const kind = "tripwire_alert";
  return { deliveryKey: deliveryKey(kind, alert.alert_id), kind, severity, title: oneLine(title), subject };
}

function describeCohort(result: MetricResult): string {
  const entries = Object.entries(result.cohort);
  return entries.length === 0 ? "all units" : entries.map(([name, value]) => `${name}=${value}`).join(", ");
}

function describeScope(result: MetricResult): string {
  const { scope } = result;
  if (scope.kind === "window") return `window ${scope.start} .. ${scope.end}`;
  return `snapshot ${scope.snapshot_id} at ${scope.cutoff}`;
}

/**
 * A coverage change of one result key. The key includes the coverage counts, so a key that drops
 * below its threshold again later with other counts is a new notification, and one re-read
 * unchanged after a restart is the same one.
 */
export function coverageNotification(key: string, result: MetricResult, entered: boolean): Notification {
  const { numerator, denominator, threshold_hundredths: threshold } = result.coverage;
  const kind: NotificationKind = entered ? "low_coverage" : "coverage_recovered";
  const ratio = `${numerator}/${denominator}`;
  const where = `${result.metric_id} (${describeCohort(result)}, ${describeScope(result)})`;
  const title = entered
    ? `LOW_COVERAGE ${where}: ${ratio} covered, below ${threshold}%`
    : `coverage recovered ${where}: ${ratio} covered`;
  return {
    deliveryKey: deliveryKey(kind, [key, numerator, denominator]),
    kind,
    severity: "warning",
    title: oneLine(title),
    subject: { result_key: key, ...result },
  };
}

/**
 * LOW_COVERAGE transitions per result key. Only keys currently low are remembered, so memory grows
 * with the low keys, not with the table; a tombstone forgets a key without a notification.
 */
export class CoverageTransitions {
  private readonly low = new Set<string>();

  /** The notification this record causes, or null when the key's LOW_COVERAGE state is unchanged. */
  observe(key: string, result: MetricResult | null): Notification | null {
    const wasLow = this.low.has(key);
    if (result === null) {
      this.low.delete(key);
      return null;
    }
    const isLow = result.coverage.alert;
    if (isLow === wasLow) return null;
    if (isLow) this.low.add(key);
    else this.low.delete(key);
    return coverageNotification(key, result, isLow);
  }

  get lowKeys(): number {
    return this.low.size;
  }
}

const SLACK_EMOJI: Record<NotificationKind, string> = {
  tripwire_alert: ":rotating_light:",
  low_coverage: ":warning:",
  coverage_recovered: ":white_check_mark:",
};

/** The request body for a webhook of `format`: the generic JSON envelope or a Slack incoming-webhook message. */
export function webhookBody(notification: Notification, format: WebhookFormat): string {
  if (format === "json") {
    const { deliveryKey: key, kind, severity, title, subject } = notification;
    return JSON.stringify({ delivery_key: key, kind, severity, title, subject });
  }
  // Slack reads `text` (and uses it for notifications); the context block shows the delivery key.
  const text = `${SLACK_EMOJI[notification.kind]} ${escapeSlack(notification.title)}`;
  const footer = `agentops ${notification.kind} · delivery_key ${notification.deliveryKey}`;
  return JSON.stringify({
    text,
    blocks: [
      { type: "section", text: { type: "mrkdwn", text } },
      { type: "context", elements: [{ type: "mrkdwn", text: footer }] },
    ],
  });
}

/** Slack's mrkdwn control characters; a run id or command must not become a link or a mention. */
function escapeSlack(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
