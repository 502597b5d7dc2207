package agentops.peer;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Store and repartition values as plain bytes: fixed-width numbers and length-prefixed UTF-8.
 * DataInput/OutputStream over byte-array streams copied and locked per field, and the group
 * aggregation reads and writes a value for every contribution it applies.
 */
final class Codec {
  private Codec() {}

  static final class Writer {
    private byte[] bytes;
    private int length;

    Writer(int capacity) {
      bytes = new byte[capacity];
    }

    Writer i8(int value) {
      room(1);
      bytes[length++] = (byte) value;
      return this;
    }

    Writer bool(boolean value) {
      return i8(value ? 1 : 0);
    }

    Writer i64(long value) {
      room(8);
      for (int shift = 56; shift >= 0; shift -= 8) bytes[length++] = (byte) (value >>> shift);
      return this;
    }

    Writer raw(byte[] value) {
      room(value.length);
      System.arraycopy(value, 0, bytes, length, value.length);
      length += value.length;
      return this;
    }

    /** A string, or null: its UTF-8 length + 1 (0 for null) in 4 bytes, then the bytes. */
    Writer text(String value) {
      if (value == null) return i32(0);
      byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
      return i32(utf8.length + 1).raw(utf8);
    }

    Writer i32(int value) {
      room(4);
      for (int shift = 24; shift >= 0; shift -= 8) bytes[length++] = (byte) (value >>> shift);
      return this;
    }

    byte[] finish() {
      return Arrays.copyOf(bytes, length);
    }

    private void room(int more) {
      if (length + more > bytes.length) bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, length + more));
    }
  }

  static final class Reader {
    private final byte[] bytes;
    private int position;

    Reader(byte[] bytes) {
      this.bytes = bytes;
    }

    boolean atEnd() {
      return position >= bytes.length;
    }

    int i8() {
      return bytes[position++];
    }

    boolean bool() {
      return i8() != 0;
    }

    int i32() {
      int value = 0;
      for (int index = 0; index < 4; index++) value = (value << 8) | (bytes[position++] & 0xff);
      return value;
    }

    long i64() {
      long value = 0;
      for (int index = 0; index < 8; index++) value = (value << 8) | (bytes[position++] & 0xff);
      return value;
    }

    byte[] raw(int count) {
      byte[] value = Arrays.copyOfRange(bytes, position, position + count);
      position += count;
      return value;
    }

    String text() {
      int header = i32();
      if (header == 0) return null;
      String value = new String(bytes, position, header - 1, StandardCharsets.UTF_8);
      position += header - 1;
      return value;
    }
  }
}
