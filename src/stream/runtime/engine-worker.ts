/**
 * Entry point of the engine thread (see engine-thread.ts): runs the engine role of the instance's
 * configuration, without a telemetry endpoint of its own, and reports to the parent thread.
 */
import { parentPort, workerData } from "node:worker_threads";
import { Cause, Deferred, Effect, Exit, Fiber } from "effect";
import { TELEMETRY_INTERVAL_MS, type EngineThreadCommand, type EngineThreadReport } from "./engine-thread-messages.ts";
import { runInstance } from "./processor-runtime.ts";
import { streamConfigSchema } from "./stream-config.ts";

const port = parentPort;
if (port === null) throw new Error("engine-worker.ts runs only as a worker thread");
const report = (message: EngineThreadReport): void => port.postMessage(message);
// The parent validated this configuration; parsing again keeps the types honest across the boundary.
const config = streamConfigSchema.parse(workerData);

const fiber = Effect.runFork(
  Effect.scoped(
    Effect.gen(function* () {
      const instance = yield* runInstance({ ...config, instanceId: `${config.instanceId}/engine-thread`, roles: ["engine"], engineThread: "off" }, { serveTelemetry: false });
      const timer = setInterval(() => report({ type: "telemetry", samples: instance.telemetry.snapshot() }), TELEMETRY_INTERVAL_MS);
      yield* Effect.addFinalizer(() => Effect.sync(() => clearInterval(timer)));
      report({ type: "started" });
      return yield* Deferred.await(instance.failure);
    }),
  ),
);

port.on("message", (command: EngineThreadCommand) => {
  if (command.type === "stop") void Effect.runPromise(Fiber.interrupt(fiber));
});

void Effect.runPromise(Fiber.await(fiber)).then((exit) => {
  if (Exit.isFailure(exit) && !Exit.isInterrupted(exit)) report({ type: "failed", reason: Cause.pretty(exit.cause) });
  port.close();
});
