/**
 * The primitives of the internal topics' binary form (src/codec/fact-layout.ts): integers
 * as variable-length sign-magnitude, doubles as IEEE 754, strings with their length and text
 * encoding. Exact for every JavaScript value the contract accepts: integers up to 2^53 in either
 * sign (zig-zag would need 2^54, which a double cannot hold), −0 kept apart from 0, strings with
 * unpaired surrogates (which UTF-8 cannot carry) kept as UTF-16.
 */

/**
 * A copy of `bytes` with memory of its own. A small Buffer from `Buffer.allocUnsafe` is a slice of
 * an 8 KiB pool, and one kafkajs hands over is a slice of a whole fetch response: kept in a cache
 * or a store, either would pin the whole backing memory, which a budget counting the value's own
 * length never sees.
 */
export function detachedBytes(bytes: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}

/** Why bytes of an internal topic could not be read: not this format, another version, or cut short. */
export class InternalRecordError extends Error {
  override readonly name = "InternalRecordError";
}

/** Text encodings of a string, in the low two bits of its header. */
const ASCII = 0;
const UTF8 = 1;
const UTF16 = 2;

/** Below this length a string's header is one byte (length × 4 < 128). */
const SHORT_STRING = 32;

/** A lone surrogate (in unicode mode a well-formed pair is one code point, not two `Cs`). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Writes into one buffer reused across records (grown on demand) and copies each finished record
 * out once: a record costs one allocation of exactly its size.
 */
export class BinaryWriter {
  private buffer = Buffer.allocUnsafe(4096);
  private position = 0;

  start(): void {
    this.position = 0;
  }

  finish(): Buffer {
    const out = Buffer.allocUnsafe(this.position);
    this.buffer.copy(out, 0, 0, this.position);
    return out;
  }

  /** Bytes written as they are (a part already encoded in this form). */
  raw(bytes: Buffer): void {
    this.reserve(bytes.length);
    bytes.copy(this.buffer, this.position);
    this.position += bytes.length;
  }

  byte(value: number): void {
    this.reserve(1);
    this.buffer[this.position++] = value;
  }

  boolean(value: boolean): void {
    this.byte(value ? 1 : 0);
  }

  /** A non-negative integer below 2^53, 7 bits a byte, least significant first. */
  unsigned(value: number): void {
    this.reserve(8);
    let rest = value;
    while (rest >= 0x80) {
      this.buffer[this.position++] = (rest % 0x80) | 0x80;
      rest = Math.floor(rest / 0x80);
    }
    this.buffer[this.position++] = rest;
  }

  /**
   * A safe integer of either sign (or −0): the first byte carries the sign in bit 6 and the six
   * low bits of the magnitude, later bytes seven bits each.
   */
  integer(value: number): void {
    this.reserve(9);
    const negative = value < 0 || Object.is(value, -0);
    let rest = negative ? -value : value;
    const first = (rest % 0x40) | (negative ? 0x40 : 0);
    rest = Math.floor(rest / 0x40);
    if (rest === 0) {
      this.buffer[this.position++] = first;
      return;
    }
    this.buffer[this.position++] = first | 0x80;
    this.unsigned(rest);
  }

  double(value: number): void {
    this.reserve(8);
    this.buffer.writeDoubleLE(value, this.position);
    this.position += 8;
  }

  /** Length and encoding first (length × 4 + encoding), then the text: ASCII, UTF-8 or UTF-16LE. */
  string(value: string): void {
    // Most strings are short ASCII identifiers: copied here byte by byte, cheaper than a native call.
    const length = value.length;
    if (length < SHORT_STRING) {
      this.reserve(length + 1);
      const start = this.position;
      this.buffer[start] = length * 4 + ASCII;
      let index = 0;
      for (; index < length; index++) {
        const code = value.charCodeAt(index);
        if (code >= 0x80) break;
        this.buffer[start + 1 + index] = code;
      }
      if (index === length) {
        this.position = start + 1 + length;
        return;
      }
    }
    const utf8Length = Buffer.byteLength(value, "utf8");
    if (utf8Length === value.length) {
      this.unsigned(value.length * 4 + ASCII);
      this.reserve(value.length);
      this.position += this.buffer.write(value, this.position, value.length, "latin1");
    } else if (!LONE_SURROGATE.test(value)) {
      this.unsigned(utf8Length * 4 + UTF8);
      this.reserve(utf8Length);
      this.position += this.buffer.write(value, this.position, utf8Length, "utf8");
    } else {
      this.unsigned(value.length * 4 + UTF16);
      this.reserve(value.length * 2);
      this.position += this.buffer.write(value, this.position, value.length * 2, "utf16le");
    }
  }

  private reserve(bytes: number): void {
    if (this.position + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.position + bytes));
    this.buffer.copy(grown, 0, 0, this.position);
    this.buffer = grown;
  }
}

/** Reads what BinaryWriter wrote; any read past the end, or an impossible value, throws InternalRecordError. */
export class BinaryReader {
  private readonly buffer: Buffer;
  private position: number;

  constructor(buffer: Buffer, position = 0) {
    this.buffer = buffer;
    this.position = position;
  }

  /** How many bytes are read so far (where a record that follows a header starts). */
  get offset(): number {
    return this.position;
  }

  /** Every byte read: trailing bytes mean the record is not what its header says. */
  end(): void {
    if (this.position !== this.buffer.length)
      throw new InternalRecordError(`${this.buffer.length - this.position} unread bytes after the record`);
  }

  /** The bytes from `start` to the record's end, as a view of it; the record is then read to its end. */
  tail(start: number): Buffer {
    this.position = this.buffer.length;
    return this.buffer.subarray(start);
  }

  byte(): number {
    const value = this.buffer[this.position++];
    if (value === undefined) throw new InternalRecordError("record cut short");
    return value;
  }

  boolean(): boolean {
    const value = this.byte();
    if (value > 1) throw new InternalRecordError(`boolean byte ${value}`);
    return value === 1;
  }

  unsigned(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      const next = this.byte();
      value += (next & 0x7f) * scale;
      if (next < 0x80) break;
      scale *= 0x80;
      if (scale > 2 ** 56) throw new InternalRecordError("integer longer than 2^53");
    }
    return value;
  }

  integer(): number {
    const first = this.byte();
    let magnitude = first & 0x3f;
    if (first & 0x80) magnitude += this.unsigned() * 0x40;
    return first & 0x40 ? -magnitude : magnitude;
  }

  double(): number {
    if (this.position + 8 > this.buffer.length) throw new InternalRecordError("record cut short");
    const value = this.buffer.readDoubleLE(this.position);
    this.position += 8;
    return value;
  }

  /** Moves past a string without decoding it (its bytes are checked to be there). */
  skipString(): void {
    const header = this.unsigned();
    const encoding = header % 4;
    const end = this.position + (encoding === UTF16 ? ((header - encoding) / 4) * 2 : (header - encoding) / 4);
    if (end > this.buffer.length) throw new InternalRecordError("string runs past the end of the record");
    this.position = end;
  }

  string(): string {
    const header = this.unsigned();
    const encoding = header % 4;
    const length = (header - encoding) / 4;
    const start = this.position;
    const end = start + (encoding === UTF16 ? length * 2 : length);
    if (end > this.buffer.length) throw new InternalRecordError("string runs past the end of the record");
    this.position = end;
    if (encoding === ASCII) return this.buffer.toString("latin1", start, end);
    if (encoding === UTF8) return this.buffer.toString("utf8", start, end);
    if (encoding === UTF16) return this.buffer.toString("utf16le", start, end);
    throw new InternalRecordError(`string encoding ${encoding}`);
  }
}
