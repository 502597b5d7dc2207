import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { boundEngineHeapGrowth } from "../../../state/heap-growth.ts";
import type { EngineStateOptions } from "../../processors/engine.ts";
import { DEFAULT_STATE_CACHE_MB } from "../../runtime/stream-config.ts";
import { diskSinkLog, memorySinkLog, type SinkLog } from "./sink-log.ts";

/**
 * Where a replay (a facts file, or the audit's rebuild) keeps the engine's state: on disk, in
 * the LMDB stores and bounded record cache of a Kafka member, so that memory does not grow with the
 * input; or, asked for, in memory (`--state memory`), every fact held in the heap.
 */
export type ReplayStateKind = "disk" | "memory";

/**
 * The record cache's budget for a replay's engine state: a Kafka member's default. At 1M facts a
 * 64 MiB cache took more memory and no less CPU time than 16 MiB.
 */
export const REPLAY_STATE_CACHE_MB = DEFAULT_STATE_CACHE_MB;

/** A replay's temporary state: what the engine is given, and the directory the audit keeps its key set in. */
export interface ReplayState {
  /** The engine's state options; undefined in memory. */
  readonly engineState: EngineStateOptions | undefined;
  /** The temporary directory (removed after the replay); undefined in memory. */
  readonly directory: string | undefined;
  readonly cacheBytes: number;
  /** Where the replay's sinks collect their records until the output files are written (on disk with the state). */
  readonly sinkLog: SinkLog;
}

/** The signals that stop a replay: its directory is removed first. */
const EXIT_SIGNALS = ["SIGINT", "SIGTERM"] as const;

/**
 * Runs `replay` over a fresh state directory under `parent` (os.tmpdir() when not given), removed
 * afterwards whether the replay succeeds, fails or is interrupted (SIGINT, SIGTERM), so a replay
 * never leaves gigabytes of state behind; with "memory" there is no directory. On disk the heap's
 * growth is bounded as a Kafka engine's is: its live heap is as small, so V8's default headroom of
 * up to 4x live is what would set the peak. What the replay reads from its state (the sink log)
 * must be read inside `replay`.
 */
export async function withReplayState<T>(
  kind: ReplayStateKind,
  parent: string | undefined,
  cacheMb: number,
  replay: (state: ReplayState) => Promise<T>,
): Promise<T> {
  const cacheBytes = cacheMb * 1024 * 1024;
  if (kind === "memory")
    return replay({ engineState: undefined, directory: undefined, cacheBytes, sinkLog: memorySinkLog() });
  boundEngineHeapGrowth();
  const base = parent ?? tmpdir();
  mkdirSync(base, { recursive: true });
  const directory = mkdtempSync(join(base, "agentops-replay-state-"));
  const remove = (): void => rmSync(directory, { recursive: true, force: true });
  const handlers = EXIT_SIGNALS.map((signal) => {
    // Once the directory is gone the signal is raised again and ends the process as it would have:
    // process.exit from here hung (its exit hooks wait on the open LMDB stores' threads).
    const handler = (): void => {
      remove();
      for (const [other, registered] of handlers) process.removeListener(other, registered);
      process.kill(process.pid, signal);
    };
    process.once(signal, handler);
    return [signal, handler] as const;
  });
  const sinkLog = diskSinkLog(join(directory, "sinks"));
  try {
    const engineDirectory = (partition: number): string => join(directory, `engine-${String(partition)}`);
    return await replay({ engineState: { directory: engineDirectory, cacheBytes }, directory, cacheBytes, sinkLog });
  } finally {
    for (const [signal, handler] of handlers) process.removeListener(signal, handler);
    await sinkLog.close();
    remove();
  }
}
