package agentops.peer;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * One record of the engine-facts topic, decoded from the binary layout of
 * src/kafka/serde/engine-facts-record.ts and fact-layout.ts (version 1), for the fields this
 * subset reads: model_call, cost and delivery_summary in full enough for the two metrics; the
 * other fact types only for their fact_id (a fact_id conflict with any type quarantines).
 */
final class EngineFact {
  static final int ENGINE_FACT_MARKER = 0xef;
  static final int FACT_LAYOUT_VERSION = 1;

  /** Type bytes of fact-layout.ts LAYOUT_TYPES. */
  static final int MODEL_CALL = 0;
  static final int COST = 1;
  static final int DELIVERY_SUMMARY = 2;

  final int type;
  final String factId;
  final long eventTime;
  /** Provenance basis, or null for null provenance. */
  final String basis;
  /**
   * Contract §1 report content: the fact without fact_id and provenance.source (the JSON
   * fact-ledger.ts compares), as a digest of its layout bytes.
   */
  final byte[] reportDigest;

  // model_call
  String callId;
  boolean operational;
  String provider;
  String model;
  String role;
  String runtime;
  Long inputTokens;
  Long outputTokens;
  // cost
  String costId;
  String costCallId;
  String costDeliveryId;

  private EngineFact(int type, String factId, long eventTime, String basis, byte[] reportDigest) {
    this.type = type;
    this.factId = factId;
    this.eventTime = eventTime;
    this.basis = basis;
    this.reportDigest = reportDigest;
  }

  /** A unit's stored fields, read back from its store (src/main/java/agentops/peer/LedgerProcessor.java). */
  static EngineFact restored(int type, String factId, long eventTime, String basis, byte[] reportDigest) {
    return new EngineFact(type, factId, eventTime, basis, reportDigest);
  }

  /** Decodes a record's value; throws IllegalArgumentException for bytes that are not this layout. */
  static EngineFact decode(byte[] value) {
    if (value.length < 2 || (value[0] & 0xff) != ENGINE_FACT_MARKER) throw new IllegalArgumentException("not an engine-facts record (first byte " + (value.length == 0 ? "none" : value[0] & 0xff) + ")");
    if (value[1] != FACT_LAYOUT_VERSION) throw new IllegalArgumentException("engine-facts layout version " + value[1]);
    Reader reader = new Reader(value, 2);
    reader.string(); // source topic
    reader.unsigned(); // source partition
    reader.string(); // source offset
    int typeStart = reader.position;
    int type = reader.readByte();
    String factId = reader.string();
    int timeStart = reader.position;
    long eventTime = reader.integer();
    int timeEnd = reader.position;
    int form = reader.readByte();
    String basis = null;
    if (form > 2) throw new IllegalArgumentException("provenance form " + form);
    if (form >= 1) basis = reader.string();
    if (form == 2) reader.string(); // provenance.source: not part of the report content
    int fieldsStart = reader.position;

    MessageDigest digest = sha256();
    digest.update(value, typeStart, 1);
    digest.update(value, timeStart, timeEnd - timeStart);
    digest.update((byte) (basis == null ? 0 : 1));
    if (basis != null) digest.update(basis.getBytes(StandardCharsets.UTF_8));
    digest.update((byte) 0);
    digest.update(value, fieldsStart, value.length - fieldsStart);
    EngineFact fact = new EngineFact(type, factId, eventTime, basis, Arrays.copyOf(digest.digest(), 16));

    if (type == MODEL_CALL) {
      long presence = reader.unsigned();
      fact.callId = reader.string();
      reader.string(); // run_id
      if ((presence & 1) != 0) reader.string(); // delivery_id
      if ((presence & 2) != 0) reader.string(); // task_id
      fact.operational = reader.bool();
      if ((presence & 4) != 0) fact.provider = reader.string();
      if ((presence & 8) != 0) fact.model = reader.string();
      if ((presence & 16) != 0) fact.role = reader.string();
      if ((presence & 32) != 0) fact.runtime = reader.string();
      if ((presence & 64) != 0) reader.position += 8; // span_duration_ms
      if ((presence & 128) != 0) fact.inputTokens = reader.integer();
      if ((presence & 256) != 0) fact.outputTokens = reader.integer();
    } else if (type == COST) {
      long presence = reader.unsigned();
      fact.costId = reader.string();
      if ((presence & 1) != 0) fact.costCallId = reader.string();
      if ((presence & 2) != 0) fact.costDeliveryId = reader.string();
    }
    return fact;
  }

  /** operational-token-usage's attribution tuple is complete: all four present and non-empty. */
  boolean hasCompleteTuple() {
    return nonEmpty(provider) && nonEmpty(model) && nonEmpty(role) && nonEmpty(runtime);
  }

  private static boolean nonEmpty(String text) {
    return text != null && !text.isEmpty();
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException impossible) {
      throw new IllegalStateException(impossible);
    }
  }

  /** The primitives of src/codec/binary-form.ts. */
  private static final class Reader {
    private final byte[] buffer;
    int position;

    Reader(byte[] buffer, int position) {
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
}
