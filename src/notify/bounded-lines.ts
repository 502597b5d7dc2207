import { createReadStream } from "node:fs";

/** One line of a file, or the number of a line that was longer than the bound (its text is not kept). */
export type BoundedLine =
  { readonly line: number; readonly text: string } | { readonly line: number; readonly tooLong: true };

/**
 * The lines of a UTF-8 file, each held in memory only up to `maxBytes`: a longer line is reported
 * by number and skipped while it streams past, so one hostile line cannot exhaust the heap.
 */
export async function* boundedLines(path: string, maxBytes: number): AsyncGenerator<BoundedLine> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let overflow = false;
  let line = 0;
  const finish = (): BoundedLine => {
    line += 1;
    const done: BoundedLine = overflow
      ? { line, tooLong: true }
      : { line, text: Buffer.concat(pending).toString("utf8") };
    pending = [];
    pendingBytes = 0;
    overflow = false;
    return done;
  };
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let end = chunk.indexOf(0x0a, start); end !== -1; end = chunk.indexOf(0x0a, start)) {
      take(chunk.subarray(start, end));
      yield finish();
      start = end + 1;
    }
    take(chunk.subarray(start));
  }
  if (pendingBytes > 0 || overflow) yield finish();

  function take(part: Buffer): void {
    if (overflow || part.length === 0) return;
    if (pendingBytes + part.length > maxBytes) {
      overflow = true;
      pending = [];
      return;
    }
    pending.push(part);
    pendingBytes += part.length;
  }
}
