import type { Fact } from "../../contract/facts.ts";
import type { MetricResult } from "../../contract/result-record.ts";
import type { DeadLetterRecord } from "../../contract/dead-letter.ts";

/**
 * The encodings of the public topics. Production uses Avro through the schema registry
 * (src/kafka/serde/avro-serde.ts); the interface keeps processors independent of it.
 */
export interface TopicSerde {
  encodeFact(fact: Fact): Promise<Buffer>;
  encodeResult(result: MetricResult): Promise<Buffer>;
  /** Names the form encodeResult writes (its schema version): a store of encoded results written in another form is compared in full. */
  resultEncoding(): Promise<string>;
  decodeResult(bytes: Buffer): Promise<MetricResult>;
  encodeAlert(alert: unknown): Promise<Buffer>;
  decodeAlert(bytes: Buffer): Promise<unknown>;
  encodeDeadLetter(letter: DeadLetterRecord): Promise<Buffer>;
  decodeDeadLetter(bytes: Buffer): Promise<DeadLetterRecord>;
}
