// kafkajs is CommonJS, and Node's ESM loader cannot see every named export of it (e.g.
// `ConfigResourceTypes`), so the runtime values are taken from the default export in this one
// place. Types still come from "kafkajs" directly with `import type`.
// First, before kafkajs is loaded, the replacements of some of its modules (kafkajs-module-cache.ts):
// its producer's grouping of messages by partition in one pass, a faster CRC-32C, records encoded
// and decoded without per-field garbage, and fetches that move past record batches whose tails
// compaction removed (which loads the record batch decoder, so after the records). Then its request
// queue's timer, patched on the class, which arms only while requests wait.
import "./kafkajs-grouping.ts";
import "./kafkajs-crc32c.ts";
import "./kafkajs-records.ts";
import "./kafkajs-compacted-batches.ts";
import "./kafkajs-request-queue.ts";
import kafkajs from "kafkajs";

export const { Kafka, logLevel, ConfigResourceTypes, CompressionTypes } = kafkajs;
