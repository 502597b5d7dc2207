package agentops.peer;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * One record of the engine-facts topic, decoded from the binary layout of
 * src/kafka/serde/engine-facts-record.ts and src/codec/fact-layout.ts (version 1), keeping only the fields
 * the subset reads: model_call, cost and delivery_summary. The other fact types are outside it.
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
   * Contract §1 report content (the fact without fact_id and provenance.source, which is what
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
  // cost (callId above when it names a call)
  String costId;
  boolean namesDelivery;
  // delivery_summary
  String deliveryId;
  boolean terminal;

  private EngineFact(int type, String factId, long eventTime, String basis, byte[] reportDigest) {
    this.type = type;
    this.factId = factId;
    this.eventTime = eventTime;
    this.basis = basis;
    this.reportDigest = reportDigest;
  }

  /**
   * The unit whose state this fact is part of: a call with the costs naming it, a cost naming no
   * call, a Delivery with its summaries. Null for the fact types outside the subset.
   */
  String unitKey() {
    return switch (type) {
      case MODEL_CALL -> "c\u0000" + callId;
      case COST -> callId != null ? "c\u0000" + callId : "k\u0000" + costId;
      case DELIVERY_SUMMARY -> "d\u0000" + deliveryId;
      default -> null;
    };
  }

  /** The domain identity it claims besides its fact_id (fact-ledger.ts domainIdentity); summaries have none. */
  String domainIdentity() {
    return type == MODEL_CALL ? "call\u0000" + callId : type == COST ? "cost\u0000" + costId : null;
  }

  boolean sameReport(EngineFact other) {
    return Arrays.equals(reportDigest, other.reportDigest);
  }

  /** Decodes a record's value; throws IllegalArgumentException for bytes that are not this layout. */
  static EngineFact decode(byte[] value) {
    if (value.length < 2 || (value[0] & 0xff) != ENGINE_FACT_MARKER) throw new IllegalArgumentException("not an engine-facts record");
    if (value[1] != FACT_LAYOUT_VERSION) throw new IllegalArgumentException("engine-facts layout version " + value[1]);
    LayoutReader reader = new LayoutReader(value, 2);
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
    if (form > 2) throw new IllegalArgumentException("provenance form " + form);
    String basis = form >= 1 ? reader.string() : null;
    if (form == 2) reader.string(); // provenance.source: not part of the report content
    int fieldsStart = reader.position;

    MessageDigest digest = DIGEST.get();
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
      if ((presence & 1) != 0) fact.callId = reader.string();
      fact.namesDelivery = (presence & 2) != 0;
    } else if (type == DELIVERY_SUMMARY) {
      long presence = reader.unsigned();
      fact.deliveryId = reader.string();
      if ((presence & 1) != 0) reader.string(); // task_id
      if ((presence & 2) != 0) reader.string(); // run_id
      fact.terminal = reader.unsigned() == 1; // status: OPEN, TERMINAL
    }
    return fact;
  }

  /** One MessageDigest per thread: getInstance per record costs more than the digest of a short record. */
  private static final ThreadLocal<MessageDigest> DIGEST = ThreadLocal.withInitial(() -> {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException impossible) {
      throw new IllegalStateException(impossible);
    }
  });

  // ---- the fields a unit keeps, in its store value ----

  void write(Codec.Writer out) {
    out.i8(type).text(factId).i64(eventTime).text(basis).raw(reportDigest);
    switch (type) {
      case MODEL_CALL -> {
        out.text(callId).bool(operational).text(provider).text(model).text(role).text(runtime);
        for (Long count : new Long[] {inputTokens, outputTokens}) {
          out.bool(count != null);
          if (count != null) out.i64(count);
        }
      }
      case COST -> out.text(costId).text(callId).bool(namesDelivery);
      default -> out.text(deliveryId).bool(terminal);
    }
  }

  static EngineFact read(Codec.Reader in) {
    int type = in.i8();
    EngineFact fact = new EngineFact(type, in.text(), in.i64(), in.text(), in.raw(16));
    switch (type) {
      case MODEL_CALL -> {
        fact.callId = in.text();
        fact.operational = in.bool();
        fact.provider = in.text();
        fact.model = in.text();
        fact.role = in.text();
        fact.runtime = in.text();
        fact.inputTokens = in.bool() ? in.i64() : null;
        fact.outputTokens = in.bool() ? in.i64() : null;
      }
      case COST -> {
        fact.costId = in.text();
        fact.callId = in.text();
        fact.namesDelivery = in.bool();
      }
      default -> {
        fact.deliveryId = in.text();
        fact.terminal = in.bool();
      }
    }
    return fact;
  }
}
