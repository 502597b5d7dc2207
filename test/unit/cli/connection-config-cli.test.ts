import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../../../", import.meta.url).pathname;
const NODE = join(ROOT, "node_modules/.bin/node");

/** The CLI with only the given connection variables (the test process's own are dropped). */
function agentops(args: readonly string[], env: Record<string, string>) {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(KAFKA_|SCHEMA_REGISTRY_|AGENTOPS_)/.test(name)),
  );
  const run = spawnSync(NODE, [join(ROOT, "bin/agentops"), ...args], {
    encoding: "utf8",
    cwd: ROOT,
    env: { ...base, ...env },
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

// A partial security setting is refused before any connection is tried, so these need no services.
describe("partial connection security: a configuration error naming the variable, exit 2, before connecting", () => {
  it.each([
    [
      ["topics", "list"],
      { KAFKA_SSL_CA_FILE: "/etc/ssl/certs/ca-certificates.crt" },
      "agentops topics: KAFKA_SSL: is not true, but KAFKA_SSL_CA_FILE is set. Fix: set KAFKA_SSL=true to connect with TLS, or unset KAFKA_SSL_CA_FILE",
    ],
    [
      ["results"],
      { KAFKA_SASL_MECHANISM: "scram-sha-512", KAFKA_SASL_USERNAME: "agentops" },
      "agentops results: KAFKA_SASL_PASSWORD: is not set, but KAFKA_SASL_MECHANISM is. Fix: set KAFKA_SASL_PASSWORD to the password of KAFKA_SASL_USERNAME",
    ],
    [
      ["alerts"],
      { SCHEMA_REGISTRY_USERNAME: "writer" },
      "agentops alerts: SCHEMA_REGISTRY_PASSWORD: is not set, but SCHEMA_REGISTRY_USERNAME is. Fix: set SCHEMA_REGISTRY_PASSWORD to the registry user's password (basic auth)",
    ],
    [
      ["run", "--metrics-port", "0"],
      { KAFKA_SSL: "true", KAFKA_SSL_KEY_FILE: "/nonexistent/key.pem" },
      "agentops run: KAFKA_SSL_CERT_FILE: is not set, but KAFKA_SSL_KEY_FILE is (mutual TLS needs both). Fix: set KAFKA_SSL_CERT_FILE to the PEM file of the client certificate, or unset KAFKA_SSL_KEY_FILE",
    ],
    [
      ["replay", "--from-topic"],
      { KAFKA_BROKERS: "SASL_SSL://broker:9093" },
      'agentops replay: KAFKA_BROKERS: "SASL_SSL://broker:9093" is not a host:port broker address. Fix: give host:port[,host:port], e.g. 127.0.0.1:19092 (no scheme such as SASL_SSL:// or https://)',
    ],
  ])(
    "%j with %j",
    (args, env, message) => {
      const run = agentops(args, env);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr.trim()).toBe(message);
    },
    120_000,
  );
});
