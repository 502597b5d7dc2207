import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeOrigin } from "../../../src/kafka/connection-sources.ts";
import {
  kafkaSecurityOptions,
  resolveConnectionSettings,
  resolveKafkaConnection,
  resolveRegistryConnection,
} from "../../../src/kafka/connection-settings.ts";
import { ConfigError } from "../../../src/errors.ts";

const dir = mkdtempSync(join(tmpdir(), "agentops-settings-"));
// Not real key material: the settings only check the PEM markers; TLS itself is tested against the real broker.
const CERT = join(dir, "cert.pem");
const KEY = join(dir, "key.pem");
const ENCRYPTED = join(dir, "encrypted-key.pem");
const NOT_PEM = join(dir, "store.p12");
writeFileSync(CERT, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
writeFileSync(KEY, "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n");
writeFileSync(ENCRYPTED, "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIE\n-----END ENCRYPTED PRIVATE KEY-----\n");
writeFileSync(NOT_PEM, Buffer.from([0x30, 0x82, 0x01, 0x00]));

/** The ConfigError a resolution throws, so a test can assert its field, problem and fix exactly. */
function configError(resolve: () => unknown): ConfigError {
  try {
    resolve();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected a ConfigError, but the settings were accepted");
}

describe("connection settings: where each value came from", () => {
  it("flag over environment over default, each with its origin", () => {
    const fromDefault = resolveConnectionSettings({}, {});
    expect(fromDefault.kafka.brokers.value).toEqual(["127.0.0.1:19092"]);
    expect(describeOrigin(fromDefault.kafka.brokers.origin)).toBe(
      "the default (neither --brokers nor KAFKA_BROKERS is set)",
    );
    expect(fromDefault.registry.url.value).toBe("http://127.0.0.1:18081/apis/ccompat/v7");
    const fromEnv = resolveConnectionSettings(
      {},
      { KAFKA_BROKERS: "b1:9092, b2:9092", SCHEMA_REGISTRY_URL: "https://r.example/" },
    );
    expect(fromEnv.kafka.brokers.value).toEqual(["b1:9092", "b2:9092"]);
    expect(describeOrigin(fromEnv.kafka.brokers.origin)).toBe("from KAFKA_BROKERS");
    expect(fromEnv.registry.url.value).toBe("https://r.example");
    const fromFlag = resolveConnectionSettings(
      { brokers: "f:1", schemaRegistry: "http://f:2" },
      { KAFKA_BROKERS: "b1:9092", SCHEMA_REGISTRY_URL: "https://r.example" },
    );
    expect(describeOrigin(fromFlag.kafka.brokers.origin)).toBe("from --brokers");
    expect(describeOrigin(fromFlag.registry.url.origin)).toBe("from --schema-registry");
  });

  it("a bad address names where it came from", () => {
    expect(configError(() => resolveKafkaConnection(undefined, { KAFKA_BROKERS: "SASL_SSL://b1:9093" })).message).toBe(
      'KAFKA_BROKERS: "SASL_SSL://b1:9093" is not a host:port broker address. Fix: give host:port[,host:port], e.g. 127.0.0.1:19092 (no scheme such as SASL_SSL:// or https://)',
    );
    expect(configError(() => resolveRegistryConnection("registry:8081", {})).field).toBe("--schema-registry");
    expect(
      configError(() => resolveRegistryConnection(undefined, { SCHEMA_REGISTRY_URL: "https://user:secret@r.example" }))
        .message,
    ).toBe(
      "SCHEMA_REGISTRY_URL: the URL carries credentials. Fix: remove them from the URL and set SCHEMA_REGISTRY_USERNAME and SCHEMA_REGISTRY_PASSWORD instead",
    );
  });
});

describe("Kafka security from the environment", () => {
  it("nothing set: plaintext, no SASL", () => {
    expect(kafkaSecurityOptions(resolveKafkaConnection(undefined, {}))).toEqual({});
  });

  it("TLS with the system's trust, and SCRAM", () => {
    const connection = resolveKafkaConnection(undefined, {
      KAFKA_SSL: "true",
      KAFKA_SASL_MECHANISM: "SCRAM-SHA-512",
      KAFKA_SASL_USERNAME: "u",
      KAFKA_SASL_PASSWORD: "p",
    });
    expect(kafkaSecurityOptions(connection)).toEqual({
      ssl: true,
      sasl: { mechanism: "scram-sha-512", username: "u", password: "p" },
    });
  });

  it("CA file, client certificate and key, and server name become the TLS options", () => {
    const connection = resolveKafkaConnection(undefined, {
      KAFKA_SSL: "1",
      KAFKA_SSL_CA_FILE: CERT,
      KAFKA_SSL_CERT_FILE: CERT,
      KAFKA_SSL_KEY_FILE: KEY,
      KAFKA_SSL_SERVERNAME: "broker.example",
    });
    const options = kafkaSecurityOptions(connection);
    expect(options.ssl).toMatchObject({ servername: "broker.example" });
    const ssl = options.ssl as { ca: Buffer[]; cert: Buffer; key: Buffer };
    expect(ssl.ca[0]?.toString()).toContain("BEGIN CERTIFICATE");
    expect(ssl.key.toString()).toContain("BEGIN PRIVATE KEY");
    expect(connection.tls?.given).toEqual({
      KAFKA_SSL_CA_FILE: CERT,
      KAFKA_SSL_CERT_FILE: CERT,
      KAFKA_SSL_KEY_FILE: KEY,
      KAFKA_SSL_SERVERNAME: "broker.example",
    });
  });

  it.each([
    [
      { KAFKA_SASL_USERNAME: "u", KAFKA_SASL_PASSWORD: "p" },
      "KAFKA_SASL_MECHANISM: is not set, but KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD are (credentials without a mechanism would be dropped). Fix: set KAFKA_SASL_MECHANISM to the broker's mechanism: scram-sha-512, scram-sha-256 or plain",
    ],
    [
      { KAFKA_SASL_PASSWORD: "p" },
      "KAFKA_SASL_MECHANISM: is not set, but KAFKA_SASL_PASSWORD is (credentials without a mechanism would be dropped). Fix: set KAFKA_SASL_MECHANISM to the broker's mechanism: scram-sha-512, scram-sha-256 or plain",
    ],
    [
      { KAFKA_SASL_MECHANISM: "scram-sha-512", KAFKA_SASL_PASSWORD: "p" },
      "KAFKA_SASL_USERNAME: is not set, but KAFKA_SASL_MECHANISM is. Fix: set KAFKA_SASL_USERNAME (and KAFKA_SASL_PASSWORD) to the SASL user's name",
    ],
    [
      { KAFKA_SASL_MECHANISM: "plain", KAFKA_SASL_USERNAME: "u" },
      "KAFKA_SASL_PASSWORD: is not set, but KAFKA_SASL_MECHANISM is. Fix: set KAFKA_SASL_PASSWORD to the password of KAFKA_SASL_USERNAME",
    ],
    [
      { KAFKA_SASL_MECHANISM: "kerberos", KAFKA_SASL_USERNAME: "u", KAFKA_SASL_PASSWORD: "p" },
      'KAFKA_SASL_MECHANISM: "kerberos" is not supported. Fix: use scram-sha-512, scram-sha-256 or plain',
    ],
    [
      { KAFKA_SSL: "yes" },
      'KAFKA_SSL: "yes" is neither true nor false. Fix: set KAFKA_SSL=true for a TLS (SSL or SASL_SSL) listener, or unset it for plaintext',
    ],
    [
      { KAFKA_SSL_CA_FILE: CERT },
      "KAFKA_SSL: is not true, but KAFKA_SSL_CA_FILE is set. Fix: set KAFKA_SSL=true to connect with TLS, or unset KAFKA_SSL_CA_FILE",
    ],
    [
      { KAFKA_SSL: "true", KAFKA_SSL_CERT_FILE: CERT },
      "KAFKA_SSL_KEY_FILE: is not set, but KAFKA_SSL_CERT_FILE is (mutual TLS needs both). Fix: set KAFKA_SSL_KEY_FILE to the PEM file of the client certificate's private key, or unset KAFKA_SSL_CERT_FILE",
    ],
    [
      { KAFKA_SSL: "true", KAFKA_SSL_KEY_FILE: KEY },
      "KAFKA_SSL_CERT_FILE: is not set, but KAFKA_SSL_KEY_FILE is (mutual TLS needs both). Fix: set KAFKA_SSL_CERT_FILE to the PEM file of the client certificate, or unset KAFKA_SSL_KEY_FILE",
    ],
    [
      { KAFKA_SSL: "true", KAFKA_SSL_CA_FILE: join(dir, "absent.pem") },
      `KAFKA_SSL_CA_FILE: cannot read "${join(dir, "absent.pem")}" (ENOENT). Fix: give the path of a readable PEM certificate file`,
    ],
    [
      { KAFKA_SSL: "true", KAFKA_SSL_CA_FILE: NOT_PEM },
      `KAFKA_SSL_CA_FILE: "${NOT_PEM}" holds no PEM certificate. Fix: give a PEM file (-----BEGIN CERTIFICATE-----); convert a PKCS#12/JKS store with openssl or keytool first`,
    ],
    [
      { KAFKA_SSL: "true", KAFKA_SSL_CERT_FILE: CERT, KAFKA_SSL_KEY_FILE: ENCRYPTED },
      `KAFKA_SSL_KEY_FILE: "${ENCRYPTED}" is an encrypted private key. Fix: give an unencrypted PEM key kept readable only by this user (openssl pkey -in key.pem -out plain-key.pem); no passphrase setting is offered, so none ends up in the environment`,
    ],
  ])("a partial or wrong setting (%j) is a configuration error naming the variable", (env, message) => {
    expect(configError(() => resolveKafkaConnection(undefined, env)).message).toBe(message);
  });

  it("no secret appears in any configuration error", () => {
    const error = configError(() =>
      resolveKafkaConnection(undefined, { KAFKA_SASL_USERNAME: "u", KAFKA_SASL_PASSWORD: "hunter2-secret" }),
    );
    expect(error.message).not.toContain("hunter2-secret");
  });
});

describe("registry security from the environment", () => {
  it("basic auth and TLS files for an https registry", () => {
    const connection = resolveRegistryConnection(undefined, {
      SCHEMA_REGISTRY_URL: "https://r.example",
      SCHEMA_REGISTRY_USERNAME: "u",
      SCHEMA_REGISTRY_PASSWORD: "p",
      SCHEMA_REGISTRY_SSL_CA_FILE: CERT,
    });
    expect(connection.auth).toEqual({ username: "u", password: "p" });
    expect(connection.tls?.ca?.toString()).toContain("BEGIN CERTIFICATE");
  });

  it.each([
    [
      { SCHEMA_REGISTRY_USERNAME: "u" },
      "SCHEMA_REGISTRY_PASSWORD: is not set, but SCHEMA_REGISTRY_USERNAME is. Fix: set SCHEMA_REGISTRY_PASSWORD to the registry user's password (basic auth)",
    ],
    [
      { SCHEMA_REGISTRY_PASSWORD: "p" },
      "SCHEMA_REGISTRY_USERNAME: is not set, but SCHEMA_REGISTRY_PASSWORD is. Fix: set SCHEMA_REGISTRY_USERNAME to the registry user's name (basic auth)",
    ],
    [
      { SCHEMA_REGISTRY_URL: "http://r.example", SCHEMA_REGISTRY_SSL_CA_FILE: CERT },
      'SCHEMA_REGISTRY_URL: "http://r.example" is plain http, but SCHEMA_REGISTRY_SSL_CA_FILE is set. Fix: give the registry\'s https:// URL, or unset SCHEMA_REGISTRY_SSL_CA_FILE',
    ],
    [
      { SCHEMA_REGISTRY_SSL_CA_FILE: CERT },
      '--schema-registry / SCHEMA_REGISTRY_URL: "http://127.0.0.1:18081/apis/ccompat/v7" is plain http, but SCHEMA_REGISTRY_SSL_CA_FILE is set. Fix: give the registry\'s https:// URL, or unset SCHEMA_REGISTRY_SSL_CA_FILE',
    ],
    [
      { SCHEMA_REGISTRY_URL: "https://r.example", SCHEMA_REGISTRY_SSL_KEY_FILE: KEY },
      "SCHEMA_REGISTRY_SSL_CERT_FILE: is not set, but SCHEMA_REGISTRY_SSL_KEY_FILE is (mutual TLS needs both). Fix: set SCHEMA_REGISTRY_SSL_CERT_FILE to the PEM file of the client certificate, or unset SCHEMA_REGISTRY_SSL_KEY_FILE",
    ],
  ])("a partial or wrong setting (%j) is a configuration error naming the variable", (env, message) => {
    expect(configError(() => resolveRegistryConnection(undefined, env)).message).toBe(message);
  });
});
