/**
 * CRC-32C throughput (`npm run bench:crc32c`): kafkajs 2.2.4's own function (a byte at a time,
 * compiled from its files) against src/kafka/kafkajs-crc32c.ts (eight bytes at a time), which
 * kafkajs' record batches use once src/kafka/kafkajs.ts is loaded. Every record batch a processor
 * produces is summed over its bytes. 7 alternating rounds of 256 MiB each over buffers of 1 MiB and
 * of 1 KiB (a small batch); prints MB/s per round and the medians, with the load average.
 *
 *   node bench/crc32c.bench.ts
 */
import { loadavg } from "node:os";
import { CRC32C_MODULE, crc32c } from "../src/kafka/kafkajs-crc32c.ts";
import { kafkajsOriginal } from "../src/kafka/kafkajs-module-cache.ts";

const ROUNDS = 7;
const BYTES_PER_ROUND = 256 * 1024 * 1024;

const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

function round(sum: (bytes: Uint8Array) => number, buffers: readonly Buffer[]): { mbPerSecond: number; check: number } {
  let check = 0;
  let summed = 0;
  const started = performance.now();
  while (summed < BYTES_PER_ROUND) {
    for (const buffer of buffers) {
      check ^= sum(buffer);
      summed += buffer.length;
    }
  }
  return { mbPerSecond: summed / 1e6 / ((performance.now() - started) / 1000), check };
}

const original = kafkajsOriginal<typeof crc32c>(CRC32C_MODULE);
const loadBefore = loadavg();
for (const size of [1 << 20, 1 << 10]) {
  // Varied bytes, 64 MiB of buffers in all: not one buffer hot in the cache.
  const buffers = Array.from({ length: Math.max(1, (64 << 20) / size) }, (_, index) => {
    const buffer = Buffer.allocUnsafe(size);
    for (let position = 0; position < size; position++) buffer[position] = (position * 31 + index * 7) & 0xff;
    return buffer;
  });
  const rates: Record<"kafkajs" | "ours", number[]> = { kafkajs: [], ours: [] };
  for (let index = 0; index < ROUNDS; index++) {
    const theirs = round(original, buffers);
    const ours = round(crc32c, buffers);
    if (theirs.check !== ours.check) throw new Error(`the two functions disagree on ${size}-byte buffers`);
    rates.kafkajs.push(theirs.mbPerSecond);
    rates.ours.push(ours.mbPerSecond);
  }
  console.log(
    `${size}-byte buffers: kafkajs ${rates.kafkajs.map((rate) => rate.toFixed(0)).join(", ")} MB/s; ours ${rates.ours.map((rate) => rate.toFixed(0)).join(", ")} MB/s`,
  );
  console.log(
    `  medians: kafkajs ${median(rates.kafkajs).toFixed(0)} MB/s, ours ${median(rates.ours).toFixed(0)} MB/s, ratio ${(median(rates.ours) / median(rates.kafkajs)).toFixed(2)}`,
  );
}
console.log(
  `load average before ${loadBefore.map((value) => value.toFixed(2)).join(" / ")}, after ${loadavg()
    .map((value) => value.toFixed(2))
    .join(" / ")}`,
);
