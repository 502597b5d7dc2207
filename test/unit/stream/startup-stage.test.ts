import { Writable } from "node:stream";
import { Effect } from "effect";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { KafkaIoError, RegistryError } from "../../../src/errors.ts";
import { startupStage } from "../../../src/stream/runtime/startup-stage.ts";

/** A pino logger whose lines (parsed) land in `lines`, written synchronously. */
function capturingLogger(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString("utf8").split("\n"))
        if (line !== "") lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  return { logger: pino({ level: "info" }, sink), lines };
}

/** A registry that is not there (yet): what waiting may heal. */
const unreachable = (): RegistryError =>
  new RegistryError({
    operation: "register schemas",
    cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:18081"), { code: "ECONNREFUSED" }),
  });

/** Fails with `failure()` the first `failures` times, then succeeds with the attempt number. */
function flaky<E>(failures: number, failure: () => E): { effect: Effect.Effect<number, E>; attempts: () => number } {
  let attempts = 0;
  const effect = Effect.suspend(() => {
    attempts += 1;
    return attempts <= failures ? Effect.fail(failure()) : Effect.succeed(attempts);
  });
  return { effect, attempts: () => attempts };
}

const messages = (lines: ReadonlyArray<Record<string, unknown>>): unknown[] => lines.map((line) => line["msg"]);

describe("startupStage: a log line per start-up stage and per retry", () => {
  it("logs the stage when it begins and when it is done, with its attempts and duration", async () => {
    const { logger, lines } = capturingLogger();
    expect(await Effect.runPromise(startupStage(logger, "register schemas", Effect.succeed(7)))).toBe(7);
    expect(messages(lines)).toEqual(["start-up stage begun", "start-up stage done"]);
    expect(lines[1]).toMatchObject({ stage: "register schemas", attempts: 1 });
    expect(typeof lines[1]?.["durationMs"]).toBe("number");
  });

  it("logs every retry with the error and the wait before the next attempt (exponential from 500 ms)", async () => {
    const { logger, lines } = capturingLogger();
    const { effect, attempts } = flaky(2, unreachable);
    expect(await Effect.runPromise(startupStage(logger, "register schemas", effect, { retry: true }))).toBe(3);
    expect(attempts()).toBe(3);
    const retries = lines.filter((line) => line["msg"] === "start-up stage retrying");
    expect(retries.map((line) => [line["attempt"], line["retryInMs"]])).toEqual([
      [1, 500],
      [2, 1000],
    ]);
    expect(retries[0]?.["error"]).toContain("ECONNREFUSED");
    expect(lines.at(-1)).toMatchObject({ msg: "start-up stage done", attempts: 3 });
  }, 10_000);

  it("does not retry what waiting cannot heal, and says the stage failed", async () => {
    const { logger, lines } = capturingLogger();
    const refused = (): KafkaIoError =>
      new KafkaIoError({
        operation: "connect producer",
        cause: Object.assign(new Error("SASL PLAIN authentication failed"), { name: "KafkaJSSASLAuthenticationError" }),
      });
    const { effect, attempts } = flaky(5, refused);
    const exit = await Effect.runPromiseExit(startupStage(logger, "connect ingest producer", effect, { retry: true }));
    expect(exit._tag).toBe("Failure");
    expect(attempts()).toBe(1);
    expect(messages(lines)).toEqual(["start-up stage begun", "start-up stage failed"]);
    expect(lines[1]).toMatchObject({ stage: "connect ingest producer", attempts: 1 });
  });

  it("without retry, one attempt", async () => {
    const { logger, lines } = capturingLogger();
    const { effect, attempts } = flaky(1, unreachable);
    expect((await Effect.runPromiseExit(startupStage(logger, "join engine consumer group", effect)))._tag).toBe(
      "Failure",
    );
    expect(attempts()).toBe(1);
    expect(messages(lines)).toEqual(["start-up stage begun", "start-up stage failed"]);
  });

  it("says it is still waiting while a stage is pending, and stops saying so once it is done", async () => {
    const { logger, lines } = capturingLogger();
    await Effect.runPromise(
      startupStage(logger, "join engine consumer group", Effect.sleep("120 millis"), { stillWaitingIntervalMs: 25 }),
    );
    const waiting = lines.filter((line) => line["msg"] === "start-up stage still waiting");
    expect(waiting.length).toBeGreaterThanOrEqual(2);
    expect(waiting[0]).toMatchObject({ stage: "join engine consumer group" });
    const count = lines.length;
    await Effect.runPromise(Effect.sleep("80 millis"));
    expect(lines.length).toBe(count);
    expect(lines.at(-1)?.["msg"]).toBe("start-up stage done");
  });
});
