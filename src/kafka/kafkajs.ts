// kafkajs is CommonJS, and Node's ESM loader cannot see every named export of it (e.g.
// `ConfigResourceTypes`), so the runtime values are taken from the default export in this one
// place. Types still come from "kafkajs" directly with `import type`.
import kafkajs from "kafkajs";

export const { Kafka, logLevel, ConfigResourceTypes, CompressionTypes } = kafkajs;
