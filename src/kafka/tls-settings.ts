import { readFileSync } from "node:fs";
import { ConfigError } from "../errors.ts";
import { ENV, envValue } from "./connection-sources.ts";

/** TLS settings read from files: the CA that signs the server, and a client certificate and key for mutual TLS. */
export interface TlsSettings {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly servername?: string;
  /** The variables that were set, for messages ("KAFKA_SSL_CA_FILE=/etc/ca.pem"). File paths are not secret. */
  readonly given: Readonly<Record<string, string>>;
}

/** Reads a PEM file named by a variable; a missing, unreadable or non-PEM file names the variable. */
function pemFile(env: NodeJS.ProcessEnv, variable: string, expect: "certificate" | "private key"): Buffer | undefined {
  const path = envValue(env, variable);
  if (path === undefined) return undefined;
  let contents: Buffer;
  try {
    contents = readFileSync(path);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw new ConfigError({
      field: variable,
      problem: `cannot read "${path}" (${reason})`,
      fix: `give the path of a readable PEM ${expect} file`,
    });
  }
  const text = contents.toString("latin1");
  if (expect === "private key" && text.includes("-----BEGIN ENCRYPTED PRIVATE KEY-----")) {
    throw new ConfigError({
      field: variable,
      problem: `"${path}" is an encrypted private key`,
      fix:
        "give an unencrypted PEM key kept readable only by this user (openssl pkey -in key.pem -out plain-key.pem); " +
        "no passphrase setting is offered, so none ends up in the environment",
    });
  }
  const marker = expect === "certificate" ? /-----BEGIN CERTIFICATE-----/ : /-----BEGIN (?:RSA |EC )?PRIVATE KEY-----/;
  if (!marker.test(text))
    throw new ConfigError({
      field: variable,
      problem: `"${path}" holds no PEM ${expect}`,
      fix:
        `give a PEM file (-----BEGIN ${expect === "certificate" ? "CERTIFICATE" : "PRIVATE KEY"}-----); ` +
        `convert a PKCS#12/JKS store with openssl or keytool first`,
    });
  return contents;
}

interface TlsVariables {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
  readonly servername: string;
}

/** The TLS variables that are set, by name (file paths and a server name: nothing secret). */
export function givenTls(env: NodeJS.ProcessEnv, names: TlsVariables): Record<string, string> {
  const given: Record<string, string> = {};
  for (const name of [names.ca, names.cert, names.key, names.servername]) {
    const value = envValue(env, name);
    if (value !== undefined) given[name] = value;
  }
  return given;
}

export function readTls(env: NodeJS.ProcessEnv, names: TlsVariables): TlsSettings {
  const given = givenTls(env, names);
  const hasCert = given[names.cert] !== undefined;
  const hasKey = given[names.key] !== undefined;
  if (hasCert && !hasKey)
    throw new ConfigError({
      field: names.key,
      problem: `is not set, but ${names.cert} is (mutual TLS needs both)`,
      fix: `set ${names.key} to the PEM file of the client certificate's private key, or unset ${names.cert}`,
    });
  if (hasKey && !hasCert)
    throw new ConfigError({
      field: names.cert,
      problem: `is not set, but ${names.key} is (mutual TLS needs both)`,
      fix: `set ${names.cert} to the PEM file of the client certificate, or unset ${names.key}`,
    });
  const ca = pemFile(env, names.ca, "certificate");
  const cert = pemFile(env, names.cert, "certificate");
  const key = pemFile(env, names.key, "private key");
  const servername = given[names.servername];
  return {
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
    ...(servername === undefined ? {} : { servername }),
    given,
  };
}

export const KAFKA_TLS: TlsVariables = {
  ca: ENV.sslCaFile,
  cert: ENV.sslCertFile,
  key: ENV.sslKeyFile,
  servername: ENV.sslServername,
};
export const REGISTRY_TLS: TlsVariables = {
  ca: ENV.registryCaFile,
  cert: ENV.registryCertFile,
  key: ENV.registryKeyFile,
  servername: ENV.registryServername,
};

export function tlsOptions(tls: TlsSettings): { ca?: Buffer[]; cert?: Buffer; key?: Buffer; servername?: string } {
  return {
    ...(tls.ca === undefined ? {} : { ca: [tls.ca] }),
    ...(tls.cert === undefined ? {} : { cert: tls.cert }),
    ...(tls.key === undefined ? {} : { key: tls.key }),
    ...(tls.servername === undefined ? {} : { servername: tls.servername }),
  };
}
