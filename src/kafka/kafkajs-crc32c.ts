import { replaceKafkajsModule } from "./kafkajs-module-cache.ts";

/**
 * CRC-32C (Castagnoli), which every Kafka record batch carries over its bytes. kafkajs 2.2.4
 * computes it a byte at a time (src/protocol/recordBatch/crc32C); this is the same function eight
 * bytes at a time ("slicing-by-8": eight tables, one lookup per byte, no dependency between the
 * lookups of one step). Every batch a processor produces is summed, so the byte-at-a-time loop
 * showed in the processors' CPU profiles (bench/RESULTS.md, `npm run bench:crc32c`).
 */

/** The reflected Castagnoli polynomial. */
const POLYNOMIAL = 0x82f63b78;

/**
 * TABLES[s * 256 + b]: the CRC of byte b followed by s zero bytes. Table 0 is the byte-at-a-time
 * table; table s advances table s − 1 by one more byte.
 */
const TABLES = new Int32Array(8 * 256);
for (let byte = 0; byte < 256; byte++) {
  let crc = byte;
  for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ POLYNOMIAL : crc >>> 1;
  TABLES[byte] = crc;
}
for (let byte = 0; byte < 256; byte++) {
  let crc = TABLES[byte] as number;
  for (let slice = 1; slice < 8; slice++) {
    crc = (TABLES[crc & 0xff] as number) ^ (crc >>> 8);
    TABLES[slice * 256 + byte] = crc;
  }
}

/** The CRC-32C of `bytes`, as an unsigned 32-bit integer (what kafkajs' module returns). */
export function crc32c(bytes: Uint8Array): number {
  const tables = TABLES;
  const length = bytes.length;
  const whole = length - (length & 7);
  let crc = -1;
  let index = 0;
  for (; index < whole; index += 8) {
    // The first four bytes fold into the running CRC; the last four stand alone.
    const low =
      crc ^
      ((bytes[index] as number) |
        ((bytes[index + 1] as number) << 8) |
        ((bytes[index + 2] as number) << 16) |
        ((bytes[index + 3] as number) << 24));
    crc =
      (tables[1792 + (low & 0xff)] as number) ^
      (tables[1536 + ((low >>> 8) & 0xff)] as number) ^
      (tables[1280 + ((low >>> 16) & 0xff)] as number) ^
      (tables[1024 + (low >>> 24)] as number) ^
      (tables[768 + (bytes[index + 4] as number)] as number) ^
      (tables[512 + (bytes[index + 5] as number)] as number) ^
      (tables[256 + (bytes[index + 6] as number)] as number) ^
      (tables[bytes[index + 7] as number] as number);
  }
  for (; index < length; index++) crc = (tables[(crc ^ (bytes[index] as number)) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

/** kafkajs' CRC-32C module, which this replaces. */
export const CRC32C_MODULE = "src/protocol/recordBatch/crc32C/index.js";

/** True when kafkajs' record batches use this function (the module that requires it was not loaded before). */
export const crc32cPatched: boolean = replaceKafkajsModule(CRC32C_MODULE, crc32c, [
  "src/protocol/recordBatch/v0/index.js",
]);
