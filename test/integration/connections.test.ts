import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentopsWithEnv, hasStackTrace, type TimedCliRun } from "../support/cli-env.ts";
import { closeAll, connectedAdmin, serviceEndpoints, uniqueName } from "../support/kafka.ts";
import { REPO_ROOT, testDir } from "../support/processes.ts";
import { secureServices, startRegistryProxy, type RegistryProxy } from "../support/secure-services.ts";

/**
 * Issue #14 (clear failures) and #15 (TLS, SCRAM, auth failures) against the real broker and
 * registry: every case spawns the real CLI and asserts the exit code and the exact message lines.
 */

const { brokers, registryUrl } = serviceEndpoints();
const BROKERS = brokers.join(",");
const CLOSED = "127.0.0.1:1"; // nothing listens on port 1: connect() is refused at once
const dir = testDir("agentops-connections-");
const small = join(dir, "small.ndjson");
writeFileSync(
  small,
  `${readFileSync(join(REPO_ROOT, "samples/facts.ndjson"), "utf8").split("\n").slice(0, 40).join("\n")}\n`,
);

/**
 * "At once" on a shared, loaded machine: within 30 s of the time the CLI needs to start and print
 * its help (measured first), where a retried failure used to take over two minutes.
 */
let startSeconds = 0;
beforeAll(async () => {
  startSeconds = (await agentopsWithEnv(["--help"], {})).seconds;
});
function expectPrompt(run: TimedCliRun): void {
  expect(run.seconds, `the CLI starts in ${startSeconds} s here`).toBeLessThan(startSeconds + 30);
}

function lines(run: TimedCliRun): string[] {
  return run.stderr.split("\n").filter((line) => line !== "");
}

function expectCleanFailure(run: TimedCliRun, code: number, expected: readonly string[]): void {
  expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(code);
  const actual = lines(run);
  for (const line of expected) expect(actual, run.stderr).toContain(line);
  expect(hasStackTrace(run.stderr), run.stderr).toBe(false);
}

afterAll(closeAll);

describe("no broker, no registry, wrong registry path: a clear message, exit 1, no stack trace (#14)", () => {
  const kafkaDown = [
    ["results", ["results"]],
    ["alerts", ["alerts"]],
    ["produce", ["produce", "--input", small]],
    ["replay", ["replay", "--from-topic", "--verify"]],
  ] as const;
  it.each(kafkaDown)(
    "%s without a broker names the address, its origin (KAFKA_BROKERS) and the fix",
    async (name, args) => {
      const run = await agentopsWithEnv([...args, "--topic-prefix", uniqueName("down")], {
        KAFKA_BROKERS: CLOSED,
        SCHEMA_REGISTRY_URL: registryUrl,
      });
      expectCleanFailure(run, 1, [
        `agentops ${name}: cannot reach Kafka at ${CLOSED} [KAFKA_UNREACHABLE]`,
        `  address: ${CLOSED}, from KAFKA_BROKERS`,
        `  cause:   Connection error: connect ECONNREFUSED ${CLOSED}`,
        "  fix:     start the local services (npm run services:up), or set KAFKA_BROKERS (or pass --brokers) to a reachable broker",
      ]);
    },
  );

  it("topics without a broker names the --brokers flag as the origin; --log-level debug adds the stack trace", async () => {
    const plain = await agentopsWithEnv(["topics", "list", "--brokers", CLOSED], {});
    expectCleanFailure(plain, 1, [
      `agentops topics: cannot reach Kafka at ${CLOSED} [KAFKA_UNREACHABLE]`,
      `  address: ${CLOSED}, from --brokers`,
    ]);
    const debug = await agentopsWithEnv(["topics", "list", "--brokers", CLOSED, "--log-level", "debug"], {});
    expect(debug.code).toBe(1);
    expect(lines(debug)).toContain("  stack:");
    expect(hasStackTrace(debug.stderr)).toBe(true);
  });

  it("an unreachable registry names its address, origin and the fix", async () => {
    const url = "http://127.0.0.1:1/apis/ccompat/v7";
    const run = await agentopsWithEnv(["results"], { KAFKA_BROKERS: BROKERS, SCHEMA_REGISTRY_URL: url });
    expectCleanFailure(run, 1, [
      `agentops results: cannot reach the schema registry at ${url} [REGISTRY_UNREACHABLE]`,
      `  address: ${url}, from SCHEMA_REGISTRY_URL`,
      "  fix:     start the local services (npm run services:up), or set SCHEMA_REGISTRY_URL (or pass --schema-registry) to a reachable registry",
    ]);
  });

  it("the registry's root given where its Confluent-compatible path is needed: the command says which URL answers", async () => {
    const root = new URL(registryUrl).origin;
    const run = await agentopsWithEnv(["produce", "--input", small, "--schema-registry", root], {
      KAFKA_BROKERS: BROKERS,
    });
    expectCleanFailure(run, 1, [
      `agentops produce: ${root} is not a Confluent-compatible schema registry API root [REGISTRY_WRONG_PATH]`,
      `  address: ${root}, from --schema-registry`,
    ]);
    // Apicurio answers under /apis/ccompat/v7; a Confluent registry (no such path) gets the general fix.
    const fix = lines(run).find((line) => line.startsWith("  fix:"));
    expect([
      `  fix:     set SCHEMA_REGISTRY_URL=${root}/apis/ccompat/v7 (Apicurio serves the Confluent-compatible API there)`,
      "  fix:     set SCHEMA_REGISTRY_URL (or --schema-registry) to the Confluent-compatible API root: a Confluent registry's root URL, or Apicurio's .../apis/ccompat/v7",
    ]).toContain(fix);
  });

  it("run with a wrong registry path stops at once (not retried) with the same message", async () => {
    const root = new URL(registryUrl).origin;
    const run = await agentopsWithEnv(
      ["run", "--topic-prefix", uniqueName("wrongpath"), "--metrics-port", "0", "--schema-registry", root],
      { KAFKA_BROKERS: BROKERS },
    );
    expectCleanFailure(run, 1, [
      `agentops run: ${root} is not a Confluent-compatible schema registry API root [REGISTRY_WRONG_PATH]`,
    ]);
    expectPrompt(run);
  });

  it("credentials without a mechanism: a configuration error naming KAFKA_SASL_MECHANISM, before anything connects (exit 2)", async () => {
    for (const command of [["topics", "list"], ["results"], ["run", "--metrics-port", "0"]]) {
      const run = await agentopsWithEnv(command, {
        KAFKA_BROKERS: BROKERS,
        SCHEMA_REGISTRY_URL: registryUrl,
        KAFKA_SASL_USERNAME: "agentops",
        KAFKA_SASL_PASSWORD: "never-printed",
      });
      expectCleanFailure(run, 2, [
        `agentops ${command[0]}: KAFKA_SASL_MECHANISM: is not set, but KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD are (credentials without a mechanism would be dropped). Fix: set KAFKA_SASL_MECHANISM to the broker's mechanism: scram-sha-512, scram-sha-256 or plain`,
      ]);
      expect(run.stderr).not.toContain("never-printed");
      expectPrompt(run);
    }
  });
});

const secure = secureServices();

describe.skipIf(secure.services === undefined)(
  `TLS, SCRAM and mutual TLS against the real broker (#15)${secure.services === undefined ? `: skipped, ${secure.missing}` : ""}`,
  () => {
    const s = secure.services as NonNullable<typeof secure.services>;
    const scram = (password: string, user = s.scramUser): Record<string, string> => ({
      KAFKA_BROKERS: s.saslSslBrokers,
      SCHEMA_REGISTRY_URL: registryUrl,
      KAFKA_SSL: "true",
      KAFKA_SSL_CA_FILE: s.caFile,
      KAFKA_SASL_MECHANISM: "scram-sha-512",
      KAFKA_SASL_USERNAME: user,
      KAFKA_SASL_PASSWORD: password,
    });
    const mutual = (): Record<string, string> => ({
      KAFKA_BROKERS: s.mutualTlsBrokers,
      SCHEMA_REGISTRY_URL: registryUrl,
      KAFKA_SSL: "true",
      KAFKA_SSL_CA_FILE: s.caFile,
      KAFKA_SSL_CERT_FILE: s.clientCertFile,
      KAFKA_SSL_KEY_FILE: s.clientKeyFile,
    });

    it("SASL_SSL with SCRAM-SHA-512 and a private CA: produce publishes every valid record (read back over plaintext)", async () => {
      const prefix = uniqueName("sasl");
      const run = await agentopsWithEnv(
        ["produce", "--input", join(REPO_ROOT, "samples/facts.ndjson"), "--topic-prefix", prefix],
        scram(s.scramPassword),
      );
      expect(run.code, run.stderr).toBe(0);
      const sent = Number(/sent (\d+) records/.exec(run.stdout)?.[1]);
      expect(sent).toBeGreaterThan(1000);
      const admin = await connectedAdmin();
      let onTopics = 0;
      for (const topic of [`${prefix}.agentops.facts.v1`, `${prefix}.agentops.agent-events.v1`])
        for (const partition of await admin.fetchTopicOffsets(topic)) onTopics += Number(partition.high);
      expect(onTopics).toBe(sent);
      expect(`${run.stdout}${run.stderr}`).not.toContain(s.scramPassword);
    });

    it("mutual TLS (client certificate and key files) and an explicit server name", async () => {
      const run = await agentopsWithEnv(["topics", "list"], { ...mutual(), KAFKA_SSL_SERVERNAME: "localhost" });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain("agentops.facts.v1");
    });

    it("a wrong password ends the command at once: address, mechanism, variables and fix, no stack trace", async () => {
      for (const command of ["results", "produce"]) {
        const run = await agentopsWithEnv(
          command === "produce" ? ["produce", "--input", small] : [command],
          scram("wrong-password-xyz"),
        );
        expectCleanFailure(run, 1, [
          `agentops ${command}: Kafka at ${s.saslSslBrokers} refused the SCRAM-SHA-512 login of user "${s.scramUser}" credentials [KAFKA_AUTHENTICATION_FAILED]`,
          `  address:  ${s.saslSslBrokers}, from KAFKA_BROKERS`,
          `  security: TLS (KAFKA_SSL=true, KAFKA_SSL_CA_FILE=${s.caFile}); SASL SCRAM-SHA-512 as "${s.scramUser}" (KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD)`,
          "  fix:      check KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD, and that KAFKA_SASL_MECHANISM=scram-sha-512 is a mechanism this listener enables",
        ]);
        expect(run.stderr).not.toContain("wrong-password-xyz");
        expectPrompt(run);
      }
    });

    it("run with a wrong password is not retried: it stops at once with the same message", async () => {
      const run = await agentopsWithEnv(
        ["run", "--topic-prefix", uniqueName("authrun"), "--metrics-port", "0"],
        scram("wrong-password-xyz"),
      );
      expectCleanFailure(run, 1, [
        `agentops run: Kafka at ${s.saslSslBrokers} refused the SCRAM-SHA-512 login of user "${s.scramUser}" credentials [KAFKA_AUTHENTICATION_FAILED]`,
      ]);
      expectPrompt(run);
    });

    it("a user without ACLs: an authorisation failure naming the principal and the denied operation", async () => {
      const run = await agentopsWithEnv(
        ["results", "--topic-prefix", uniqueName("acl")],
        scram(s.limitedPassword, s.limitedUser),
      );
      expect(run.code, run.stderr).toBe(1);
      expect(lines(run)[0]).toMatch(
        new RegExp(
          `^agentops results: Kafka at ${s.saslSslBrokers.replace(/\./g, "\\.")} denied user "${s.limitedUser}" an operation \\((TOPIC|CLUSTER|GROUP)_AUTHORIZATION_FAILED\\) \\[KAFKA_AUTHORISATION_FAILED\\]$`,
        ),
      );
      expect(lines(run).find((line) => line.startsWith("  fix:"))).toContain(
        `grant the principal User:${s.limitedUser} the ACLs this command needs`,
      );
      expect(hasStackTrace(run.stderr)).toBe(false);
    });

    it("a private CA without KAFKA_SSL_CA_FILE: the certificate is not trusted, and the fix names the variable", async () => {
      const env = scram(s.scramPassword);
      delete env["KAFKA_SSL_CA_FILE"];
      const run = await agentopsWithEnv(["topics", "list"], env);
      expectCleanFailure(run, 1, [
        `agentops topics: the TLS certificate of Kafka at ${s.saslSslBrokers} is not trusted [KAFKA_TLS_UNTRUSTED]`,
        "  fix:      set KAFKA_SSL_CA_FILE to the PEM file of the CA that signed Kafka's certificate",
      ]);
    });

    it("a server name the certificate does not carry: the fix names KAFKA_SSL_SERVERNAME", async () => {
      const run = await agentopsWithEnv(["topics", "list"], { ...mutual(), KAFKA_SSL_SERVERNAME: "wrong.example" });
      expectCleanFailure(run, 1, [
        `agentops topics: the TLS certificate of Kafka at ${s.mutualTlsBrokers} does not match the name connected to [KAFKA_TLS_NAME_MISMATCH]`,
        "  fix:      connect by a name the certificate carries, or set KAFKA_SSL_SERVERNAME to one of them",
      ]);
    });

    it("a listener that requires a client certificate, without one: the fix names the certificate and key variables", async () => {
      const env = mutual();
      delete env["KAFKA_SSL_CERT_FILE"];
      delete env["KAFKA_SSL_KEY_FILE"];
      const run = await agentopsWithEnv(["topics", "list"], env);
      expectCleanFailure(run, 1, [
        `agentops topics: Kafka at ${s.mutualTlsBrokers} refused the TLS handshake [KAFKA_TLS_REFUSED]`,
        "  fix:      Kafka refused the TLS handshake: if it requires a client certificate (mutual TLS), set KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE to the PEM files of one its CA trusts",
      ]);
    });
  },
);

describe.skipIf(secure.services === undefined)(
  `an HTTPS registry with a private CA, mutual TLS and basic auth (#15)${secure.services === undefined ? `: skipped, ${secure.missing}` : ""}`,
  () => {
    const s = secure.services as NonNullable<typeof secure.services>;
    let tls: RegistryProxy;
    let mutual: RegistryProxy;
    let basic: RegistryProxy;
    beforeAll(async () => {
      tls = await startRegistryProxy(s, registryUrl);
      mutual = await startRegistryProxy(s, registryUrl, { requireClientCertificate: true });
      basic = await startRegistryProxy(s, registryUrl, {
        users: {
          writer: { password: "writer-secret", access: "allow" },
          reader: { password: "reader-secret", access: "deny" },
        },
      });
    });
    afterAll(async () => {
      await Promise.all([tls, mutual, basic].filter((proxy) => proxy !== undefined).map((proxy) => proxy.close()));
    });
    const produce = (env: Record<string, string>): Promise<TimedCliRun> =>
      agentopsWithEnv(["produce", "--input", small, "--topic-prefix", uniqueName("https")], {
        KAFKA_BROKERS: BROKERS,
        ...env,
      });

    it("the CA file makes the registry's certificate trusted; without it the fix names SCHEMA_REGISTRY_SSL_CA_FILE", async () => {
      const ok = await produce({ SCHEMA_REGISTRY_URL: tls.url, SCHEMA_REGISTRY_SSL_CA_FILE: s.caFile });
      expect(ok.code, ok.stderr).toBe(0);
      const untrusted = await produce({ SCHEMA_REGISTRY_URL: tls.url });
      expectCleanFailure(untrusted, 1, [
        `agentops produce: the TLS certificate of the schema registry at ${tls.url} is not trusted [REGISTRY_TLS_UNTRUSTED]`,
        "  fix:     set SCHEMA_REGISTRY_SSL_CA_FILE to the PEM file of the CA that signed the schema registry's certificate",
      ]);
    });

    it("mutual TLS: the client certificate and key files are presented; without them the handshake is refused", async () => {
      const ok = await produce({
        SCHEMA_REGISTRY_URL: mutual.url,
        SCHEMA_REGISTRY_SSL_CA_FILE: s.caFile,
        SCHEMA_REGISTRY_SSL_CERT_FILE: s.clientCertFile,
        SCHEMA_REGISTRY_SSL_KEY_FILE: s.clientKeyFile,
      });
      expect(ok.code, ok.stderr).toBe(0);
      const refused = await produce({ SCHEMA_REGISTRY_URL: mutual.url, SCHEMA_REGISTRY_SSL_CA_FILE: s.caFile });
      expect(refused.code, refused.stderr).toBe(1);
      expect(lines(refused)[0]).toMatch(/^agentops produce: .*\[REGISTRY_(TLS_REFUSED|UNREACHABLE)\]$/);
      expect(refused.stderr).toContain("SCHEMA_REGISTRY_SSL_CERT_FILE");
      expect(hasStackTrace(refused.stderr)).toBe(false);
    });

    it("basic auth: good credentials work; a wrong password is a 401 and a user without rights a 403, each named with the fix", async () => {
      const base = { SCHEMA_REGISTRY_URL: basic.url, SCHEMA_REGISTRY_SSL_CA_FILE: s.caFile };
      const ok = await produce({
        ...base,
        SCHEMA_REGISTRY_USERNAME: "writer",
        SCHEMA_REGISTRY_PASSWORD: "writer-secret",
      });
      expect(ok.code, ok.stderr).toBe(0);
      const wrong = await produce({
        ...base,
        SCHEMA_REGISTRY_USERNAME: "writer",
        SCHEMA_REGISTRY_PASSWORD: "not-the-password",
      });
      expectCleanFailure(wrong, 1, [
        `agentops produce: the schema registry at ${basic.url} refused the credentials (HTTP 401) [REGISTRY_AUTHENTICATION_FAILED]`,
        `  address:  ${basic.url}, from SCHEMA_REGISTRY_URL`,
        '  security: basic auth as "writer" (SCHEMA_REGISTRY_USERNAME, SCHEMA_REGISTRY_PASSWORD)',
        "  fix:      check SCHEMA_REGISTRY_USERNAME and SCHEMA_REGISTRY_PASSWORD",
      ]);
      expect(wrong.stderr).not.toContain("not-the-password");
      const denied = await produce({
        ...base,
        SCHEMA_REGISTRY_USERNAME: "reader",
        SCHEMA_REGISTRY_PASSWORD: "reader-secret",
      });
      expectCleanFailure(denied, 1, [
        `agentops produce: the schema registry at ${basic.url} denied access (HTTP 403) [REGISTRY_AUTHORISATION_FAILED]`,
        '  fix:      give user "reader" read and write rights on the registry\'s subjects, or set SCHEMA_REGISTRY_USERNAME / SCHEMA_REGISTRY_PASSWORD to a user that has them',
      ]);
    });
  },
);
