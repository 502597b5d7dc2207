import type { IncomingMessage } from "node:http";
import type { Readable } from "node:stream";
import { createGunzip } from "node:zlib";

/**
 * Reads one request body under the receiver's bounds: at most `maxBytes` after decompression
 * (gzip is inflated as a stream and stopped at the bound, so a small bomb never inflates far) and
 * at most `timeoutMs` from the first byte of the request to the last. A body that breaks a bound
 * is not read further.
 */
export type BodyOutcome =
  | { readonly kind: "body"; readonly body: Buffer }
  | { readonly kind: "too-large" }
  | { readonly kind: "timed-out" }
  | { readonly kind: "bad-gzip"; readonly detail: string }
  /** The client went away: there is no one left to answer. */
  | { readonly kind: "aborted" };

export interface BodyBounds {
  readonly maxBytes: number;
  readonly timeoutMs: number;
}

export function readBoundedBody(request: IncomingMessage, gzip: boolean, bounds: BodyBounds): Promise<BodyOutcome> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let rawSize = 0;
    const gunzip = gzip ? createGunzip() : undefined;
    const source: Readable = gunzip ?? request;
    // The request is left unread, never destroyed here: the server still answers 413 or 408 on it.
    let settled = false;
    const finish = (outcome: BodyOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.off("data", countRaw);
      request.off("close", onClose);
      source.off("data", collect);
      source.off("end", onEnd);
      if (gunzip !== undefined) {
        request.unpipe(gunzip);
        gunzip.destroy();
      }
      request.pause();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish({ kind: "timed-out" }), bounds.timeoutMs);
    // The wire bytes are bounded too: a gzip stream with junk after its end inflates to little.
    const countRaw = (chunk: Buffer): void => {
      rawSize += chunk.length;
      if (rawSize > bounds.maxBytes) finish({ kind: "too-large" });
    };
    const collect = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > bounds.maxBytes) finish({ kind: "too-large" });
      else chunks.push(chunk);
    };
    const onEnd = (): void => finish({ kind: "body", body: Buffer.concat(chunks) });
    // A request destroyed mid-body never ends: its close is the only event left to settle on.
    const onClose = (): void => {
      if (!request.complete) finish({ kind: "aborted" });
    };
    request.on("data", countRaw);
    request.on("close", onClose);
    request.on("error", () => finish({ kind: "aborted" }));
    source.on("data", collect);
    source.on("end", onEnd);
    if (gunzip !== undefined) {
      gunzip.on("error", (error) => finish({ kind: "bad-gzip", detail: error.message }));
      request.pipe(gunzip);
    }
  });
}
