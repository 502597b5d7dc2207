// Kafka readiness probe for ops/services.sh: a real metadata round trip (describeCluster) through
// kafkajs, the client the project uses, so "ready" means "kafkajs can talk to it", not merely
// "a port is open". Exit 0 when healthy, 1 otherwise. Usage: kafka-health.ts host:port [--quiet]
import { Kafka, logLevel } from "kafkajs";

const [broker = "127.0.0.1:19092", ...rest] = process.argv.slice(2);
const quiet = rest.includes("--quiet");
const overallTimeoutMs = 15_000;

async function probe(): Promise<string> {
  const kafka = new Kafka({
    clientId: "agentops-health",
    brokers: [broker],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    requestTimeout: 5_000,
    retry: { retries: 0 },
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const cluster = await admin.describeCluster();
    return `cluster ${cluster.clusterId}, controller ${cluster.controller ?? "none"}, brokers ${cluster.brokers.map((b) => `${b.host}:${b.port}`).join(",")}`;
  } finally {
    await admin.disconnect();
  }
}

const timeout = new Promise<never>((_, reject) =>
  setTimeout(() => reject(new Error(`no answer within ${overallTimeoutMs} ms`)), overallTimeoutMs).unref(),
);

try {
  const summary = await Promise.race([probe(), timeout]);
  if (!quiet) process.stdout.write(`kafka health: ${summary}\n`);
  process.exit(0);
} catch (error) {
  if (!quiet)
    process.stderr.write(
      `kafka health: ${broker} not healthy: ${error instanceof Error ? error.message : String(error)}\n`,
    );
  process.exit(1);
}
