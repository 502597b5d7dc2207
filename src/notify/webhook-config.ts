import { readFileSync, statSync } from "node:fs";
import { z } from "zod";
import { ConfigError } from "../errors.ts";

/**
 * The webhooks `agentops notify` delivers to. The configuration file names where each secret is
 * (an environment variable or a file), never the secret itself, so it can be committed and shown;
 * the URLs and tokens are read once at start and only ever appear in an HTTP request.
 */

const MAX_CONFIG_BYTES = 64 * 1024;
const MAX_SECRET_BYTES = 8 * 1024;
const MAX_WEBHOOKS = 16;

const secretSource = z.union([
  z.strictObject({ env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name") }),
  z.strictObject({ file: z.string().min(1) }),
]);

const webhookSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, "lower-case letters, digits, '_', '.', '-' (1-64)"),
  format: z.enum(["json", "slack"]),
  url: secretSource,
  /** Sent as `Authorization: Bearer <token>`. */
  token: secretSource.optional(),
  events: z
    .array(z.enum(["alert", "coverage"]))
    .min(1)
    .default(["alert", "coverage"]),
  /** Alerts below this severity are not sent to this webhook. */
  minSeverity: z.enum(["warning", "critical"]).default("warning"),
});

/** Bounds every delivery: attempts × timeout plus the backoffs is the longest one delivery takes. */
export const deliveryPolicySchema = z.strictObject({
  attempts: z.number().int().min(1).max(10).default(5),
  timeoutMs: z.number().int().min(100).max(60_000).default(5_000),
  backoffMs: z.number().int().min(0).max(60_000).default(500),
  maxBackoffMs: z.number().int().min(0).max(300_000).default(8_000),
});

const configSchema = z.strictObject({
  webhooks: z.array(webhookSchema).min(1).max(MAX_WEBHOOKS),
  delivery: deliveryPolicySchema.prefault({}),
});

export type DeliveryPolicy = z.infer<typeof deliveryPolicySchema>;
export type WebhookFormat = z.infer<typeof webhookSchema>["format"];
export type NotificationEvent = z.infer<typeof webhookSchema>["events"][number];

export interface Webhook {
  readonly name: string;
  readonly format: WebhookFormat;
  readonly url: URL;
  readonly token: string | undefined;
  readonly events: readonly NotificationEvent[];
  readonly minSeverity: "warning" | "critical";
}

export interface NotifyConfig {
  readonly webhooks: readonly Webhook[];
  readonly delivery: DeliveryPolicy;
  /** Every secret value, for redacting error texts before they reach a log or a dead letter. */
  readonly secrets: readonly string[];
}

type SecretSource = z.infer<typeof secretSource>;

function refuse(field: string, problem: string, fix: string): ConfigError {
  return new ConfigError({ field, problem, fix });
}

function readSecret(source: SecretSource, field: string, env: NodeJS.ProcessEnv): string {
  if ("env" in source) {
    const value = env[source.env]?.trim();
    if (value === undefined || value === "") {
      throw refuse(field, `environment variable ${source.env} is not set`, `export ${source.env}=… before starting`);
    }
    return value;
  }
  let size: number;
  try {
    size = statSync(source.file).size;
  } catch {
    throw refuse(field, `cannot read ${source.file}`, "name a readable file holding only the secret");
  }
  if (size > MAX_SECRET_BYTES) {
    const fix = `a secret file holds one value of at most ${MAX_SECRET_BYTES} bytes`;
    throw refuse(field, `${source.file} is ${size} bytes`, fix);
  }
  const value = readFileSync(source.file, "utf8").trim();
  if (value === "") throw refuse(field, `${source.file} is empty`, "write the secret into it");
  return value;
}

/** The URL of a webhook; its text is never put into the error, which names only where it came from. */
function webhookUrl(text: string, field: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse(field, "the secret is not a URL", "give an http:// or https:// address");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw refuse(field, `the URL's scheme is ${url.protocol}`, "give an http:// or https:// address");
  }
  return url;
}

/** Parses and checks a configuration document, reading its secrets from `env` and files. */
export function parseNotifyConfig(
  document: unknown,
  where: string,
  env: NodeJS.ProcessEnv = process.env,
): NotifyConfig {
  const parsed = configSchema.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.join(".") ?? "";
    const field = path === "" ? where : `${where} ${path}`;
    throw refuse(field, issue?.message ?? "invalid", "see `agentops notify --help` for the file's shape");
  }
  const names = new Set<string>();
  const secrets: string[] = [];
  const webhooks = parsed.data.webhooks.map((hook, index): Webhook => {
    const field = `${where} webhooks.${index}`;
    if (names.has(hook.name)) {
      throw refuse(`${field}.name`, `"${hook.name}" is used twice`, "give every webhook its own name");
    }
    names.add(hook.name);
    const urlText = readSecret(hook.url, `${field}.url`, env);
    const url = webhookUrl(urlText, `${field}.url`);
    const token = hook.token === undefined ? undefined : readSecret(hook.token, `${field}.token`, env);
    secrets.push(urlText, url.href, `${url.pathname}${url.search}`, ...(token === undefined ? [] : [token]));
    return { name: hook.name, format: hook.format, url, token, events: hook.events, minSeverity: hook.minSeverity };
  });
  // A path of "/" is no secret and would redact every slash.
  return { webhooks, delivery: parsed.data.delivery, secrets: secrets.filter((secret) => secret.length > 1) };
}

/** Reads the configuration file (at most 64 KiB of JSON). */
export function loadNotifyConfig(path: string, env: NodeJS.ProcessEnv = process.env): NotifyConfig {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    const fix = "name the webhook configuration file (see `agentops notify --help`)";
    throw refuse("--webhooks", `cannot read ${path}`, fix);
  }
  if (size > MAX_CONFIG_BYTES) {
    throw refuse("--webhooks", `${path} is ${size} bytes`, `keep it under ${MAX_CONFIG_BYTES} bytes`);
  }
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw refuse("--webhooks", `${path} is not JSON (${reason})`, "write the configuration as JSON");
  }
  return parseNotifyConfig(document, path, env);
}

/** Replaces every configured secret in a text (an error message, a cause) before it is logged or stored. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let redacted = text;
  // Longest first: a URL is replaced whole before its path, which is also a secret.
  for (const secret of [...secrets].sort((left, right) => right.length - left.length)) {
    redacted = redacted.split(secret).join("[redacted]");
  }
  return redacted;
}
