import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Schedule from "effect/Schedule";
import * as ScheduleDecision from "effect/ScheduleDecision";
import type { Logger } from "pino";
import { isRetriableError } from "../../kafka/connection-symptoms.ts";
import type { TransportError } from "../../errors.ts";

/**
 * Start-up calls that may meet a broker or registry still starting: retried with exponential backoff
 * (0.5 s doubling, 8 retries: about two minutes in all), unless the failure cannot heal by waiting (refused credentials, an untrusted certificate, a wrong
 * registry path): those end the instance at once.
 */
export const STARTUP_RETRY = { base: "500 millis", recurs: 8 } as const;

/** While a stage is still pending, a line this often: a start-up never goes quiet for longer. */
export const STILL_WAITING_INTERVAL_MS = 15_000;

export interface StageOptions {
  /** Retry retriable failures with STARTUP_RETRY's backoff (default false: one attempt). */
  readonly retry?: boolean;
  /** Failures that heal by waiting in this stage only (a topic another instance has just created). */
  readonly retryAlso?: (cause: unknown) => boolean;
  readonly stillWaitingIntervalMs?: number;
}

/**
 * One stage of an instance's start-up (create topics, register schemas, connect a producer, join
 * a consumer group): logs when it begins, each retry with the error and the wait
 * before it, a "still waiting" line while it is pending, and when it is done or has failed, with
 * its attempts and duration. A start-up that stalls (a registry that does not answer, a group join
 * that waits) then says where it stands instead of going
 * silent. The line texts are what test/support/processes.ts and docs/operations.md refer to.
 */
export function startupStage<A, E extends TransportError, R>(
  logger: Logger,
  stage: string,
  effect: Effect.Effect<A, E, R>,
  options: StageOptions = {},
): Effect.Effect<A, E, R> {
  return Effect.suspend(() => {
    const startedAt = Date.now();
    let attempts = 0;
    logger.info({ stage }, "start-up stage begun");
    const stillWaiting = setInterval(
      () => logger.warn({ stage, attempts, elapsedMs: Date.now() - startedAt }, "start-up stage still waiting"),
      options.stillWaitingIntervalMs ?? STILL_WAITING_INTERVAL_MS,
    );
    stillWaiting.unref();
    let lastError = "";
    const attempt = Effect.suspend(() => {
      attempts += 1;
      return effect.pipe(Effect.tapError((error) => Effect.sync(() => (lastError = error.message))));
    });
    const schedule = Schedule.exponential(STARTUP_RETRY.base).pipe(
      Schedule.intersect(Schedule.recurs(STARTUP_RETRY.recurs)),
      Schedule.whileInput((error: E) => isRetriableError(error.cause) || options.retryAlso?.(error.cause) === true),
      // Logged only when another attempt follows, so the line can name the wait before it.
      Schedule.onDecision(([delay], decision) =>
        Effect.sync(
          () =>
            ScheduleDecision.isContinue(decision) &&
            logger.warn(
              { stage, attempt: attempts, error: lastError, retryInMs: Duration.toMillis(delay) },
              "start-up stage retrying",
            ),
        ),
      ),
    );
    return (options.retry === true ? Effect.retry(attempt, schedule) : attempt).pipe(
      Effect.tapError((error) =>
        Effect.sync(() =>
          logger.error(
            { stage, attempts, durationMs: Date.now() - startedAt, error: error.message },
            "start-up stage failed",
          ),
        ),
      ),
      Effect.tap(() =>
        Effect.sync(() => logger.info({ stage, attempts, durationMs: Date.now() - startedAt }, "start-up stage done")),
      ),
      Effect.ensuring(Effect.sync(() => clearInterval(stillWaiting))),
    );
  });
}
