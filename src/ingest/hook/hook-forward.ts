import type { ServerEntry } from "./hook-settings.ts";

// An ES import of node:http builds its module facade, which evaluates the lazy WebSocket getter and
// so loads undici (about a fifth of this client's start); the built-in module itself does not.
const { request } = process.getBuiltinModule("node:http");

/**
 * The command form's thin client: one hook call forwarded to a running warm server, whose answer
 * becomes the command form's exit code and streams. The server judges and records the call, so
 * this process loads no analyser. A server that cannot be used is "unavailable" (the caller then
 * judges the call itself); one that does not answer in time is "late" (the call is undecided).
 */
export type Forwarded =
  | { readonly kind: "answer"; readonly code: 0 | 1 | 2; readonly stdout: string; readonly stderr: string }
  | { readonly kind: "unavailable"; readonly why: string }
  | { readonly kind: "late"; readonly why: string };

/** A server answers an unjudged call at its deadline; this covers the round trip on a loaded machine. */
export const FORWARD_GRACE_MS = 1_000;
/** More than any answer the server gives; a longer reply is not one. */
const MAX_REPLY_BYTES = 64 * 1024;

export function forwardCall(body: string, server: ServerEntry): Promise<Forwarded> {
  const timeoutMs = server.deadlineMs + FORWARD_GRACE_MS;
  return new Promise((resolve) => {
    const settle = (result: Forwarded) => {
      clearTimeout(timer);
      resolve(result);
      call.destroy();
    };
    const late: Forwarded = { kind: "late", why: `the hook server did not answer within ${timeoutMs} ms` };
    const timer = setTimeout(() => settle(late), timeoutMs);
    const headers = { "content-type": "application/json", "content-length": Buffer.byteLength(body) };
    const call = request(server.url, { method: "POST", headers }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_REPLY_BYTES) settle({ kind: "unavailable", why: "the hook server's reply is too long" });
        else chunks.push(chunk);
      });
      response.on("end", () => settle(answerOf(response.statusCode ?? 0, Buffer.concat(chunks).toString("utf8"))));
      response.on("error", (error) => settle({ kind: "unavailable", why: error.message }));
    });
    call.on("error", (error) => settle({ kind: "unavailable", why: error.message }));
    call.end(body);
  });
}

/** The command form's answer for the server's reply, as the in-process path gives it. */
function answerOf(status: number, text: string): Forwarded {
  if (status === 400) return { kind: "answer", code: 1, stdout: "", stderr: `agentops hook: ${errorOf(text)}\n` };
  if (status !== 200) return { kind: "unavailable", why: `the hook server answered HTTP ${status}` };
  if (text === "") return { kind: "answer", code: 0, stdout: "", stderr: "" };
  const decision = decisionOf(text);
  if (decision?.permission === "deny") return { kind: "answer", code: 2, stdout: "", stderr: `${decision.reason}\n` };
  if (decision?.permission === "ask") return { kind: "answer", code: 0, stdout: `${text}\n`, stderr: "" };
  return { kind: "unavailable", why: "the hook server's reply is not a deny or ask decision" };
}

function decisionOf(text: string): { permission: string; reason: string } | undefined {
  try {
    const output = (JSON.parse(text) as { hookSpecificOutput?: Record<string, unknown> } | null)?.hookSpecificOutput;
    const permission = output?.["permissionDecision"];
    const reason = output?.["permissionDecisionReason"];
    return typeof permission === "string" && typeof reason === "string" ? { permission, reason } : undefined;
  } catch {
    return undefined;
  }
}

function errorOf(text: string): string {
  try {
    const error = (JSON.parse(text) as { error?: unknown } | null)?.error;
    return typeof error === "string" ? error : "the hook input is malformed";
  } catch {
    return "the hook input is malformed";
  }
}
