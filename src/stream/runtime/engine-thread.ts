import { once } from "node:events";
import { getHeapStatistics } from "node:v8";
import { Worker } from "node:worker_threads";
import { Effect, type Scope } from "effect";
import type { Logger } from "pino";
import type { EngineThreadCommand, EngineThreadReport } from "./engine-thread-messages.ts";
import { ProcessorError } from "../../errors.ts";
import type { StreamConfig } from "./stream-config.ts";
import type { Telemetry } from "./telemetry.ts";

/**
 * The engine role on a worker thread of this process (`--engine-thread`, on by default with more than one core). One Node.js event loop
 * runs everything on one core; the engine is the heaviest role, so a thread of its own lets a
 * second core work on it while ingest and the run monitor keep this one. The thread is a complete
 * engine member (its own Kafka clients, consumer and producer); it reports its telemetry to this
 * instance's /metrics, and its failure fails the instance. Closing the scope stops it cleanly
 * (consumer first, offsets committed), as for the in-thread roles.
 */
export function engineThread(config: StreamConfig, telemetry: Telemetry, fail: (reason: string) => void, logger: Logger): Effect.Effect<void, ProcessorError, Scope.Scope> {
  let stopping = false;
  const start = Effect.async<Worker, ProcessorError>((resume) => {
    // A worker's heap limit is not inherited from --max-old-space-size: give it the process's own.
    const maxOldGenerationSizeMb = Math.floor(getHeapStatistics().heap_size_limit / 1024 / 1024);
    const worker = new Worker(new URL("./engine-worker.ts", import.meta.url), { workerData: config, resourceLimits: { maxOldGenerationSizeMb } });
    let started = false;
    const failed = (reason: string): void => {
      if (!started) resume(Effect.fail(new ProcessorError({ processor: "engine thread", cause: new Error(reason) })));
      else if (!stopping) fail(`engine thread: ${reason}`);
    };
    // Its own start-up stages follow under instance "<id>/engine-thread"; without this line a
    // thread that never got to run its module would look the same as one stuck in a stage.
    worker.once("online", () => logger.info({ processor: "engine", threadId: worker.threadId }, "engine thread online, starting its instance"));
    worker.on("message", (report: EngineThreadReport) => {
      if (report.type === "telemetry") telemetry.absorb(report.samples);
      else if (report.type === "failed") failed(report.reason);
      else if (!started) {
        started = true;
        logger.info({ processor: "engine", threadId: worker.threadId }, "engine role running on its own thread");
        resume(Effect.succeed(worker));
      }
    });
    worker.on("error", (error) => failed(error.stack ?? error.message));
    worker.on("exit", (code) => {
      if (!stopping) failed(`exited with code ${code}`);
    });
  });
  const stop = (worker: Worker): Effect.Effect<void> =>
    Effect.promise(async () => {
      stopping = true;
      const exited = once(worker, "exit");
      worker.postMessage({ type: "stop" } satisfies EngineThreadCommand);
      const timeout = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), config.shutdownTimeoutMs).unref());
      if ((await Promise.race([exited, timeout])) === "timeout") {
        logger.warn({ processor: "engine", timeoutMs: config.shutdownTimeoutMs }, "engine thread did not stop in time; terminating it");
        await worker.terminate();
      }
    });
  return Effect.asVoid(Effect.acquireRelease(start, stop));
}
