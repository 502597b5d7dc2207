package agentops.peer;

import java.nio.charset.StandardCharsets;

/** The primitives of src/codec/binary-form.ts, read from a record's bytes. */
final class LayoutReader {
  private final byte[] buffer;
  int position;

  LayoutReader(byte[] buffer, int position) {
    this.buffer = buffer;
    this.position = position;
  }

  int readByte() {
    if (position >= buffer.length) throw new IllegalArgumentException("record cut short");
    return buffer[position++] & 0xff;
  }

  boolean bool() {
    int value = readByte();
    if (value > 1) throw new IllegalArgumentException("boolean byte " + value);
    return value == 1;
  }

  long unsigned() {
    long value = 0;
    int shift = 0;
    for (;;) {
      int next = readByte();
      value |= (long) (next & 0x7f) << shift;
      if (next < 0x80) return value;
      shift += 7;
      if (shift > 56) throw new IllegalArgumentException("integer longer than 2^53");
    }
  }

  /** Sign in bit 6 of the first byte, six low bits of the magnitude, then unsigned() × 64. */
  long integer() {
    int first = readByte();
    long magnitude = first & 0x3f;
    if ((first & 0x80) != 0) magnitude += unsigned() * 0x40;
    return (first & 0x40) != 0 ? -magnitude : magnitude;
  }

  String string() {
    long header = unsigned();
    int encoding = (int) (header % 4);
    int length = (int) (header / 4);
    int end = position + (encoding == 2 ? length * 2 : length);
    if (end > buffer.length) throw new IllegalArgumentException("string runs past the end of the record");
    String text = switch (encoding) {
      case 0 -> new String(buffer, position, length, StandardCharsets.ISO_8859_1);
      case 1 -> new String(buffer, position, length, StandardCharsets.UTF_8);
      case 2 -> new String(buffer, position, length * 2, StandardCharsets.UTF_16LE);
      default -> throw new IllegalArgumentException("string encoding " + encoding);
    };
    position = end;
    return text;
  }
}
