import { once } from "node:events";
import { createWriteStream, mkdirSync } from "node:fs";
import { dirname } from "node:path";

/** Each item as its line, lazily. */
export function* mapLines<T>(items: Iterable<T>, line: (item: T) => string): Generator<string> {
  for (const item of items) yield line(item);
}

/** Writes `lines` to `path` (its directory made if missing), one a line, waiting for the stream to drain. */
export async function writeLines(path: string, lines: Iterable<string>): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  const out = createWriteStream(path);
  for (const line of lines) {
    if (!out.write(`${line}\n`)) await once(out, "drain");
  }
  out.end();
  await once(out, "finish");
}
