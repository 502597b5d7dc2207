import { request as httpRequest } from "node:http";
import { request as httpsRequest, type Agent as HttpsAgent } from "node:https";
import { classifyRegistryError } from "./connection-errors.ts";
import type { ConnectionFailure } from "./connection-failure.ts";
import { registryHttpsAgent, type RegistryConnection } from "./connection-settings.ts";

/**
 * Asks the registry for its subject list before a command relies on it, so that an unreachable
 * registry, refused credentials, an untrusted certificate or a URL that is not a Confluent-
 * compatible root (Apicurio's root given where /apis/ccompat/v7 is needed) end the command at
 * once with a clear message, instead of surfacing later from deep inside an encode or decode
 * (where the Confluent client keeps only a message, not the socket error's code).
 */

/** A registry URL that answered, but not as a Confluent-compatible API root. */
class RegistryPathError extends Error {
  constructor(url: string, status: number, body: string) {
    const answer = status === 200 ? "200 with something other than a JSON list of subjects" : `HTTP ${status}`;
    super(`GET ${url}/subjects answered ${answer}${body === "" ? "" : `: ${body.slice(0, 160)}`}`);
    this.name = "RegistryPathError";
  }
}

class RegistryHttpError extends Error {
  readonly status: number;
  constructor(url: string, status: number, body: string) {
    super(`GET ${url}/subjects answered HTTP ${status}${body === "" ? "" : `: ${body.slice(0, 160)}`}`);
    this.name = "RegistryHttpError";
    this.status = status;
  }
}

interface Answer {
  readonly status: number;
  readonly body: string;
}

function get(
  url: string,
  connection: RegistryConnection,
  agent: HttpsAgent | undefined,
  timeoutMs: number,
): Promise<Answer> {
  const headers: Record<string, string> = { accept: "application/vnd.schemaregistry.v1+json, application/json" };
  if (connection.auth !== undefined)
    headers["authorization"] =
      `Basic ${Buffer.from(`${connection.auth.username}:${connection.auth.password}`).toString("base64")}`;
  const https = url.startsWith("https:");
  return new Promise((resolve, reject) => {
    const options = { headers, timeout: timeoutMs, ...(https && agent !== undefined ? { agent } : {}) };
    const req = (https ? httpsRequest : httpRequest)(url, options, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
      );
      response.on("error", reject);
    });
    req.on("timeout", () =>
      req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: "ETIMEDOUT" })),
    );
    req.on("error", reject);
    req.end();
  });
}

function isSubjectList(answer: Answer): boolean {
  if (answer.status !== 200) return false;
  try {
    return Array.isArray(JSON.parse(answer.body));
  } catch {
    return false;
  }
}

/** Resolves when the registry answers as a Confluent-compatible root; otherwise throws a ConnectionFailure. */
export async function checkRegistry(connection: RegistryConnection, timeoutMs = 10_000): Promise<void> {
  const url = connection.url.value;
  const agent = registryHttpsAgent(connection);
  const fail = (error: unknown, suggestion?: string): ConnectionFailure =>
    classifyRegistryError(error, connection, suggestion) ?? (error as ConnectionFailure);
  let answer: Answer;
  try {
    answer = await get(`${url}/subjects`, connection, agent, timeoutMs);
  } catch (error) {
    agent?.destroy();
    throw fail(error);
  }
  try {
    if (isSubjectList(answer)) return;
    if (answer.status === 401 || answer.status === 403)
      throw fail(new RegistryHttpError(url, answer.status, answer.body));
    if (answer.status === 200 || answer.status === 404) {
      // Apicurio's root (or any prefix of it) given: say exactly which URL does answer.
      const candidate = `${new URL(url).origin}/apis/ccompat/v7`;
      const suggestion =
        candidate !== url &&
        isSubjectList(
          await get(`${candidate}/subjects`, connection, agent, timeoutMs).catch(() => ({ status: 0, body: "" })),
        )
          ? candidate
          : undefined;
      throw fail(new RegistryPathError(url, answer.status, answer.body), suggestion);
    }
    const error = new RegistryHttpError(url, answer.status, answer.body);
    throw classifyRegistryError(error, connection) ?? error;
  } finally {
    agent?.destroy();
  }
}
