import { Effect, Either } from "effect";
import { describe, expect, it } from "vitest";
import { resolveStreamConfig } from "../../../src/stream/runtime/stream-config.ts";

const resolve = (flags: Record<string, string | undefined>, env: NodeJS.ProcessEnv = {}) =>
  Effect.runSync(Effect.either(resolveStreamConfig(flags, env)));

describe("processor configuration (flags, then environment, then defaults; validated)", () => {
  it("defaults to the local services and every role", () => {
    const config = resolve({});
    expect(Either.isRight(config)).toBe(true);
    if (Either.isLeft(config)) return;
    expect(config.right.brokers).toEqual(["127.0.0.1:19092"]);
    expect(config.right.roles).toEqual(["ingest", "engine", "run-monitor"]);
    expect(config.right.windowMillis).toBe(86_400_000);
    expect(config.right.coverageThresholdHundredths).toBe(10);
    expect(config.right.groupPrefix).toBe("agentops");
    expect(config.right.shutdownTimeoutMs).toBe(30_000);
    expect(config.right.sessionTimeoutMs).toBe(30_000);
  });

  it.each([
    {
      what: "--shutdown-timeout bounds SIGTERM",
      field: "shutdownTimeoutMs",
      env: "AGENTOPS_SHUTDOWN_TIMEOUT",
      names: "--shutdown-timeout / AGENTOPS_SHUTDOWN_TIMEOUT",
      fromEnv: ["2m", 120_000],
      fromFlag: ["5s", 5_000],
      bad: ["soon", "10ms", "1h"],
      fix: "1s to 10m",
    },
    // Within what the broker accepts by default (group.min/max.session.timeout.ms).
    {
      what: "--session-timeout sets the consumer groups' session timeout",
      field: "sessionTimeoutMs",
      env: "AGENTOPS_SESSION_TIMEOUT",
      names: "--session-timeout / AGENTOPS_SESSION_TIMEOUT",
      fromEnv: ["45s", 45_000],
      fromFlag: ["6s", 6_000],
      bad: ["soon", "5s", "1h"],
      fix: "6s to 30m",
    },
  ] as const)(
    "$what, from the flag or its variable; a duration out of range names both and the range",
    ({ field, env, names, fromEnv, fromFlag, bad, fix }) => {
      const byEnv = resolve({}, { [env]: fromEnv[0] });
      const byFlag = resolve({ [field]: fromFlag[0] }, { [env]: fromEnv[0] });
      if (Either.isLeft(byEnv) || Either.isLeft(byFlag)) throw new Error("valid configuration refused");
      expect(byEnv.right[field]).toBe(fromEnv[1]);
      expect(byFlag.right[field]).toBe(fromFlag[1]);
      for (const value of bad) {
        const refused = resolve({ [field]: value });
        expect(Either.isLeft(refused) && refused.left.field, value).toBe(names);
        expect(Either.isLeft(refused) && refused.left.fix, value).toContain(fix);
      }
    },
  );

  it("flags win over the environment", () => {
    const config = resolve(
      { brokers: "b1:9092,b2:9092", windowMillis: "6h" },
      { KAFKA_BROKERS: "env:9092", AGENTOPS_WINDOW: "1h", AGENTOPS_COVERAGE_THRESHOLD: "25" },
    );
    if (Either.isLeft(config)) throw new Error(config.left.message);
    expect(config.right.brokers).toEqual(["b1:9092", "b2:9092"]);
    expect(config.right.windowMillis).toBe(6 * 3_600_000);
    expect(config.right.coverageThresholdHundredths).toBe(25);
  });

  it("a topic prefix also separates the consumer groups", () => {
    const config = resolve({ topicPrefix: "staging" });
    if (Either.isLeft(config)) throw new Error(config.left.message);
    expect(config.right.groupPrefix).toBe("staging.agentops");
  });

  it.each([
    [{ coverageThresholdHundredths: "100" }, "--coverage-threshold / AGENTOPS_COVERAGE_THRESHOLD"],
    [{ coverageThresholdHundredths: "ten" }, "--coverage-threshold / AGENTOPS_COVERAGE_THRESHOLD"],
    [{ windowMillis: "7h" }, "--window / AGENTOPS_WINDOW"],
    [{ roles: "ingest,reporting" }, "--roles / AGENTOPS_ROLES"],
    [{ brokers: "no-port" }, "--brokers / KAFKA_BROKERS"],
    [{ metricsPort: "70000" }, "--metrics-port / AGENTOPS_METRICS_PORT"],
    [{ logLevel: "loud" }, "--log-level / AGENTOPS_LOG_LEVEL"],
  ])("a bad value (%j) names its flag, its environment variable and the fix", (flags, field) => {
    const config = resolve(flags);
    expect(Either.isLeft(config)).toBe(true);
    if (Either.isRight(config)) return;
    expect(config.left.field).toBe(field);
    expect(config.left.fix.length).toBeGreaterThan(10);
  });
});
