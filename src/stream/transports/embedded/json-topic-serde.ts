import type { Fact } from "../../../contract/facts.ts";
import { jsonLine } from "../../../contract/json-form.ts";
import type { DeadLetterRecord } from "../../../contract/dead-letter.ts";
import type { MetricResult } from "../../../contract/result-record.ts";
import type { TopicSerde } from "../../../kafka/serde/topic-serde.ts";

/** JSON encodings of the public topics, for files: what the Kafka transport's Avro carries. */
export const jsonTopicSerde: TopicSerde = {
  encodeFact: (fact: Fact) => Promise.resolve(Buffer.from(JSON.stringify(fact))),
  encodeResult: (result: MetricResult) => Promise.resolve(Buffer.from(JSON.stringify(result))),
  resultEncoding: () => Promise.resolve("json"),
  decodeResult: (bytes) => Promise.resolve(JSON.parse(bytes.toString("utf8")) as MetricResult),
  encodeAlert: (alert) => Promise.resolve(Buffer.from(jsonLine(alert))),
  decodeAlert: (bytes) => Promise.resolve(JSON.parse(bytes.toString("utf8")) as unknown),
  encodeDeadLetter: (letter: DeadLetterRecord) => Promise.resolve(Buffer.from(JSON.stringify(letter))),
  decodeDeadLetter: (bytes) => Promise.resolve(JSON.parse(bytes.toString("utf8")) as DeadLetterRecord),
};
