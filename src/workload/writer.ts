import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { addStats, emptyStats, type BatchStats } from "./batch.ts";
import { workloadBatches, type WorkloadOptions } from "./workload.ts";

/** Lines are joined into chunks of about this many bytes before they are handed to the stream. */
const CHUNK_BYTES = 1 << 20;

export interface WriteProgress {
  readonly lines: number;
  readonly bytes: number;
  readonly batches: number;
}

/**
 * Writes the workload as NDJSON, one batch at a time: only one batch is ever in memory, and a full
 * stream buffer pauses generation until it drains (backpressure). Returns the summed statistics.
 */
export async function writeWorkload(
  path: string,
  options: WorkloadOptions,
  onProgress?: (progress: WriteProgress) => void,
): Promise<BatchStats & { bytes: number }> {
  const out = createWriteStream(path, { encoding: "utf8" });
  const failed = once(out, "error").then(([error]: unknown[]) => {
    throw error;
  });
  failed.catch(() => undefined);
  const write = async (chunk: string): Promise<void> => {
    if (!out.write(chunk)) await Promise.race([once(out, "drain"), failed]);
  };

  const total = emptyStats();
  let bytes = 0;
  let batches = 0;
  for (const batch of workloadBatches(options)) {
    let chunk: string[] = [];
    let chunkBytes = 0;
    for (const line of batch.lines) {
      chunk.push(line);
      chunkBytes += line.length + 1;
      if (chunkBytes >= CHUNK_BYTES) {
        await write(`${chunk.join("\n")}\n`);
        bytes += chunkBytes;
        chunk = [];
        chunkBytes = 0;
      }
    }
    if (chunk.length > 0) {
      await write(`${chunk.join("\n")}\n`);
      bytes += chunkBytes;
    }
    addStats(total, batch.stats);
    batches += 1;
    onProgress?.({ lines: total.lines, bytes, batches });
  }
  out.end();
  await Promise.race([once(out, "finish"), failed]);
  return { ...total, bytes };
}
