// kafkajs is CommonJS, and Node's ESM loader cannot see every named export of it (e.g.
// `ConfigResourceTypes`), so the runtime values are taken from the default export in this one
// place. Types still come from "kafkajs" directly with `import type`.
// First, before kafkajs is loaded: its producer's grouping of messages by partition, in one pass.
import "./kafkajs-grouping.ts";
import kafkajs from "kafkajs";

export const { Kafka, logLevel, ConfigResourceTypes, CompressionTypes } = kafkajs;
