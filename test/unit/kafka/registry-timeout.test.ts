import { createServer, type Server, type Socket } from "node:net";
import { SchemaType } from "@kafkajs/confluent-schema-registry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { classifyRegistryError } from "../../../src/kafka/connection-errors.ts";
import { isRetriableError } from "../../../src/kafka/connection-symptoms.ts";
import { resolveRegistryConnection } from "../../../src/kafka/connection-settings.ts";
import { createSchemaRegistry } from "../../../src/kafka/registry.ts";

/** Accepts connections and never answers: a registry whose JVM or worker pool has stalled. */
let silent: Server;
const sockets = new Set<Socket>();
let url = "";

beforeAll(async () => {
  silent = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
});

describe("registry requests are bounded", () => {
  it("a registry that never answers fails the request after the bound, as unreachable (retried, never a hang)", async () => {
    const registry = createSchemaRegistry(url, {}, 300);
    const started = Date.now();
    const error: unknown = await registry
      .register({ type: SchemaType.AVRO, schema: '{"type":"record","name":"Probe","fields":[]}' }, { subject: "probe" })
      .then(
        () => undefined,
        (failure: unknown) => failure,
      );
    expect(error).toBeInstanceOf(Error);
    expect(String(error)).toContain("Timeout (300ms)");
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(isRetriableError(error)).toBe(true);
    expect(classifyRegistryError(error, resolveRegistryConnection(url, {}))?.reason).toBe("REGISTRY_UNREACHABLE");
  });
});
