package agentops.peer;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The whole subset in one processor over the one-partition engine-facts topic (as our engine reads
 * it), all state in RocksDB stores with a record cache in front and a changelog topic behind:
 *
 *   fact-versions  fact_id → its versions (digest, unit)               the ledger's fact identity
 *   units          unit → its versions (fact_id, digest, report digest, link) + the first one's fields
 *   costs-by-call  call_id → cost units naming it                        the cost → call join
 *   contributions  unit → the contributions it adds to groups now
 *   groups         result key → GroupSums
 *   group-as-of    result key · event time → count                       as_of under retraction
 *
 * A unit is a call (domain identity call_id), a cost (cost_id) or one delivery-summary version
 * (summaries have no domain identity). It counts when its versions agree in report content and
 * one of them is alone under its fact_id (src/metrics/fact-ledger.ts); then it contributes as
 * src/metrics/units/call-unit.ts and evidence-unit.ts say for these two metrics. Changed groups are
 * rendered and forwarded once a second (wall-clock punctuation), as our engine flushes per batch.
 */
final class LedgerProcessor implements Processor<String, byte[], String, String> {
  static final String FACT_VERSIONS = "fact-versions";
  static final String UNITS = "units";
  static final String COSTS_BY_CALL = "costs-by-call";
  static final String CONTRIBUTIONS = "contributions";
  static final String GROUPS = "groups";
  static final String GROUP_AS_OF = "group-as-of";

  private static final String DIRECT_HOST = "DIRECT_HOST";
  private static final String DIRECT_PROVIDER = "DIRECT_PROVIDER";
  private static final Set<String> READABLE_BASES = Set.of(DIRECT_HOST, DIRECT_PROVIDER, "DERIVED", "ESTIMATED", "MANUAL");

  private final PeerConfig config;
  private final Progress progress;
  private ProcessorContext<String, String> context;
  private KeyValueStore<String, byte[]> factVersions;
  private KeyValueStore<String, byte[]> units;
  private KeyValueStore<String, byte[]> costsByCall;
  private KeyValueStore<String, byte[]> contributions;
  private KeyValueStore<String, byte[]> groups;
  private KeyValueStore<Bytes, Long> groupAsOf;
  private final TreeSet<String> dirtyGroups = new TreeSet<>();

  LedgerProcessor(PeerConfig config, Progress progress) {
    this.config = config;
    this.progress = progress;
  }

  @Override
  public void init(ProcessorContext<String, String> context) {
    this.context = context;
    factVersions = context.getStateStore(FACT_VERSIONS);
    units = context.getStateStore(UNITS);
    costsByCall = context.getStateStore(COSTS_BY_CALL);
    contributions = context.getStateStore(CONTRIBUTIONS);
    groups = context.getStateStore(GROUPS);
    groupAsOf = context.getStateStore(GROUP_AS_OF);
    context.schedule(Duration.ofSeconds(1), PunctuationType.WALL_CLOCK_TIME, now -> emitChangedGroups());
  }

  @Override
  public void process(Record<String, byte[]> record) {
    long offset = context.recordMetadata().map(metadata -> metadata.offset()).orElse(-1L);
    if (record.value() == null) {
      progress.recorded(offset, Progress.Outcome.UNREADABLE);
      return;
    }
    EngineFact fact;
    try {
      fact = EngineFact.decode(record.value());
    } catch (IllegalArgumentException | IndexOutOfBoundsException unreadable) {
      // Our engine dead-letters such a record; the peer counts it (the bench reports the count).
      progress.recorded(offset, Progress.Outcome.UNREADABLE);
      return;
    }
    String key = record.key();
    int separator = key.indexOf('\u0000');
    String digest = separator < 0 ? HexFormat.of().formatHex(fact.reportDigest) : key.substring(separator + 1);

    List<String[]> versions = readPairs(factVersions.get(fact.factId));
    for (String[] version : versions) {
      if (version[0].equals(digest)) {
        progress.recorded(offset, Progress.Outcome.REDELIVERY);
        return;
      }
    }
    String unit = unitOf(fact, digest);
    LinkedHashSet<String> dirty = new LinkedHashSet<>();
    for (String[] version : versions) if (!version[1].isEmpty()) dirty.add(version[1]);
    versions.add(new String[] {digest, unit});
    factVersions.put(fact.factId, writePairs(versions));

    if (!unit.isEmpty()) {
      UnitState state = UnitState.read(units.get(unit));
      if (state == null) state = new UnitState(fact);
      String link = fact.type == EngineFact.COST && fact.costCallId != null ? fact.costCallId : "";
      state.versions.add(new UnitVersion(fact.factId, digest, fact.reportDigest, link));
      units.put(unit, state.toBytes());
      dirty.add(unit);
      if (!link.isEmpty()) {
        List<String> costs = readStrings(costsByCall.get(link));
        if (!costs.contains(unit)) {
          costs.add(unit);
          costsByCall.put(link, writeStrings(costs));
        }
      }
    }
    // A cost's change reaches the calls it names (their units read its evidence).
    List<String> callsToo = new ArrayList<>();
    for (String marked : dirty) {
      if (!marked.startsWith("k\u0000")) continue;
      UnitState cost = UnitState.read(units.get(marked));
      if (cost != null) for (UnitVersion version : cost.versions) if (!version.link().isEmpty()) callsToo.add("c\u0000" + version.link());
    }
    dirty.addAll(callsToo);
    for (String marked : dirty) recompute(marked);
    progress.recorded(offset, Progress.Outcome.NEW_VERSION);
  }

  private static String unitOf(EngineFact fact, String digest) {
    return switch (fact.type) {
      case EngineFact.MODEL_CALL -> "c\u0000" + fact.callId;
      case EngineFact.COST -> "k\u0000" + fact.costId;
      case EngineFact.DELIVERY_SUMMARY -> "s\u0000" + fact.factId + "\u0000" + digest;
      default -> "";
    };
  }

  /** The unit's fields when it counts: its versions agree in report content and one is alone under its fact_id. */
  private EngineFact counting(UnitState state) {
    if (state == null) return null;
    byte[] content = state.versions.get(0).reportDigest();
    boolean live = false;
    for (UnitVersion version : state.versions) {
      if (!Arrays.equals(version.reportDigest(), content)) return null;
      if (!live && readPairs(factVersions.get(version.factId())).size() == 1) live = true;
    }
    return live ? state.fields : null;
  }

  private void recompute(String unit) {
    List<Contribution> next = evaluate(unit);
    byte[] nextBytes = next.isEmpty() ? null : writeContributions(next);
    byte[] previousBytes = contributions.get(unit);
    if (Arrays.equals(previousBytes, nextBytes)) return;
    for (Contribution contribution : readContributions(previousBytes)) applyToGroup(contribution, -1);
    for (Contribution contribution : next) applyToGroup(contribution, 1);
    if (nextBytes == null) contributions.delete(unit);
    else contributions.put(unit, nextBytes);
  }

  private List<Contribution> evaluate(String unit) {
    EngineFact fact = counting(UnitState.read(units.get(unit)));
    List<Contribution> drafts = new ArrayList<>();
    if (fact == null) return drafts;
    switch (fact.type) {
      case EngineFact.DELIVERY_SUMMARY -> drafts.add(evidence(fact));
      case EngineFact.COST -> {
        if (fact.costDeliveryId != null) drafts.add(evidence(fact));
      }
      case EngineFact.MODEL_CALL -> {
        if (!fact.operational) return drafts;
        drafts.add(evidence(fact));
        for (String costUnit : readStrings(costsByCall.get(fact.callId))) {
          EngineFact cost = counting(UnitState.read(units.get(costUnit)));
          if (cost != null && fact.callId.equals(cost.costCallId)) drafts.add(evidence(cost));
        }
        tokenUsage(fact, drafts);
      }
      default -> {}
    }
    return drafts;
  }

  private long windowStart(long eventTime) {
    return Math.floorDiv(eventTime, config.windowMillis) * config.windowMillis;
  }

  /** direct-evidence-basis-rate: readable provenance is covered and eligible, direct is a hit. */
  private Contribution evidence(EngineFact fact) {
    boolean readable = fact.basis != null && READABLE_BASES.contains(fact.basis);
    boolean direct = DIRECT_HOST.equals(fact.basis) || DIRECT_PROVIDER.equals(fact.basis);
    return Contribution.of(Contribution.EVIDENCE_BASIS, windowStart(fact.eventTime), config.windowMillis, new String[0], readable, readable, direct, 0, null, fact.eventTime);
  }

  /** operational-token-usage: one unit per direction in the attribution tuple's slice, or one cohort-less INCOMPLETE_ATTRIBUTION. */
  private void tokenUsage(EngineFact call, List<Contribution> drafts) {
    long start = windowStart(call.eventTime);
    if (!call.hasCompleteTuple()) {
      drafts.add(Contribution.of(Contribution.TOKEN_USAGE, start, config.windowMillis, new String[0], false, false, false, 0, "INCOMPLETE_ATTRIBUTION", call.eventTime));
      return;
    }
    boolean readable = call.basis != null && READABLE_BASES.contains(call.basis);
    boolean direct = DIRECT_HOST.equals(call.basis) || DIRECT_PROVIDER.equals(call.basis);
    String exclusion = readable && !direct ? "NONDIRECT_EVIDENCE" : null;
    for (String direction : new String[] {"input", "output"}) {
      Long tokens = direction.equals("input") ? call.inputTokens : call.outputTokens;
      String[] cohort = {"direction", direction, "model", call.model, "provider", call.provider, "role", call.role, "runtime", call.runtime};
      drafts.add(Contribution.of(Contribution.TOKEN_USAGE, start, config.windowMillis, cohort, readable && tokens != null, direct && tokens != null, false, direct && tokens != null ? tokens : 0, exclusion, call.eventTime));
    }
  }

  private void applyToGroup(Contribution contribution, int sign) {
    String key = contribution.groupKey();
    byte[] stored = groups.get(key);
    GroupSums sums = stored == null ? GroupSums.startedBy(contribution) : GroupSums.fromBytes(stored);
    sums.apply(contribution, sign);
    Bytes asOfKey = asOfKey(key, contribution.asOf());
    Long count = groupAsOf.get(asOfKey);
    long next = (count == null ? 0 : count) + sign;
    if (next == 0) groupAsOf.delete(asOfKey);
    else groupAsOf.put(asOfKey, next);
    if (sign > 0 && contribution.asOf() > sums.asOf) sums.asOf = contribution.asOf();
    if (sign < 0 && next == 0 && contribution.asOf() == sums.asOf) sums.asOf = latestAsOf(key);
    if (sums.units == 0) groups.delete(key);
    else groups.put(key, sums.toBytes());
    dirtyGroups.add(key);
  }

  private long latestAsOf(String groupKey) {
    try (KeyValueIterator<Bytes, Long> entries = groupAsOf.reverseRange(asOfKey(groupKey, Long.MIN_VALUE), asOfKey(groupKey, Long.MAX_VALUE))) {
      if (!entries.hasNext()) return GroupSums.NO_AS_OF;
      KeyValue<Bytes, Long> latest = entries.next();
      byte[] bytes = latest.key.get();
      return ByteBuffer.wrap(bytes, bytes.length - 8, 8).getLong() ^ Long.MIN_VALUE;
    }
  }

  /** Group key, NUL (result keys are JSON, so hold none), the time with its sign flipped so bytes sort as numbers. */
  private static Bytes asOfKey(String groupKey, long time) {
    byte[] prefix = groupKey.getBytes(StandardCharsets.UTF_8);
    ByteBuffer buffer = ByteBuffer.allocate(prefix.length + 9);
    buffer.put(prefix).put((byte) 0).putLong(time ^ Long.MIN_VALUE);
    return Bytes.wrap(buffer.array());
  }

  private void emitChangedGroups() {
    for (String key : dirtyGroups) {
      byte[] stored = groups.get(key);
      context.forward(new Record<>(key, stored == null ? null : GroupSums.fromBytes(stored).render(config), System.currentTimeMillis()));
    }
    int emitted = dirtyGroups.size();
    dirtyGroups.clear();
    progress.emitted(emitted);
  }

  // ---- store values ----

  record UnitVersion(String factId, String digest, byte[] reportDigest, String link) {}

  /** A unit's versions and the fields of its first (all versions of a counting unit share them). */
  static final class UnitState {
    final EngineFact fields;
    final List<UnitVersion> versions = new ArrayList<>();

    UnitState(EngineFact fields) {
      this.fields = fields;
    }

    byte[] toBytes() {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream(160);
      try (DataOutputStream out = new DataOutputStream(bytes)) {
        out.writeByte(fields.type);
        out.writeUTF(fields.factId);
        out.writeLong(fields.eventTime);
        writeOptional(out, fields.basis);
        out.write(fields.reportDigest);
        out.writeBoolean(fields.operational);
        for (String text : new String[] {fields.callId, fields.provider, fields.model, fields.role, fields.runtime, fields.costId, fields.costCallId, fields.costDeliveryId}) writeOptional(out, text);
        for (Long count : new Long[] {fields.inputTokens, fields.outputTokens}) {
          out.writeBoolean(count != null);
          if (count != null) out.writeLong(count);
        }
        out.writeInt(versions.size());
        for (UnitVersion version : versions) {
          out.writeUTF(version.factId());
          out.writeUTF(version.digest());
          out.write(version.reportDigest());
          out.writeUTF(version.link());
        }
      } catch (IOException impossible) {
        throw new UncheckedIOException(impossible);
      }
      return bytes.toByteArray();
    }

    static UnitState read(byte[] value) {
      if (value == null) return null;
      try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(value))) {
        int type = in.readByte();
        String factId = in.readUTF();
        long eventTime = in.readLong();
        String basis = readOptional(in);
        byte[] reportDigest = in.readNBytes(16);
        EngineFact fields = EngineFact.restored(type, factId, eventTime, basis, reportDigest);
        fields.operational = in.readBoolean();
        fields.callId = readOptional(in);
        fields.provider = readOptional(in);
        fields.model = readOptional(in);
        fields.role = readOptional(in);
        fields.runtime = readOptional(in);
        fields.costId = readOptional(in);
        fields.costCallId = readOptional(in);
        fields.costDeliveryId = readOptional(in);
        fields.inputTokens = in.readBoolean() ? in.readLong() : null;
        fields.outputTokens = in.readBoolean() ? in.readLong() : null;
        UnitState state = new UnitState(fields);
        for (int count = in.readInt(); count > 0; count--) state.versions.add(new UnitVersion(in.readUTF(), in.readUTF(), in.readNBytes(16), in.readUTF()));
        return state;
      } catch (IOException corrupt) {
        throw new UncheckedIOException(corrupt);
      }
    }
  }

  private static void writeOptional(DataOutputStream out, String text) throws IOException {
    out.writeBoolean(text != null);
    if (text != null) out.writeUTF(text);
  }

  private static String readOptional(DataInputStream in) throws IOException {
    return in.readBoolean() ? in.readUTF() : null;
  }

  private static List<String[]> readPairs(byte[] value) {
    List<String[]> pairs = new ArrayList<>(2);
    if (value == null) return pairs;
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(value))) {
      for (int count = in.readInt(); count > 0; count--) pairs.add(new String[] {in.readUTF(), in.readUTF()});
    } catch (IOException corrupt) {
      throw new UncheckedIOException(corrupt);
    }
    return pairs;
  }

  private static byte[] writePairs(List<String[]> pairs) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(pairs.size());
      for (String[] pair : pairs) {
        out.writeUTF(pair[0]);
        out.writeUTF(pair[1]);
      }
    } catch (IOException impossible) {
      throw new UncheckedIOException(impossible);
    }
    return bytes.toByteArray();
  }

  private static List<String> readStrings(byte[] value) {
    List<String> strings = new ArrayList<>(2);
    if (value == null) return strings;
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(value))) {
      for (int count = in.readInt(); count > 0; count--) strings.add(in.readUTF());
    } catch (IOException corrupt) {
      throw new UncheckedIOException(corrupt);
    }
    return strings;
  }

  private static byte[] writeStrings(List<String> strings) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(strings.size());
      for (String text : strings) out.writeUTF(text);
    } catch (IOException impossible) {
      throw new UncheckedIOException(impossible);
    }
    return bytes.toByteArray();
  }

  private static byte[] writeContributions(List<Contribution> list) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(list.size());
      for (Contribution contribution : list) contribution.write(out);
    } catch (IOException impossible) {
      throw new UncheckedIOException(impossible);
    }
    return bytes.toByteArray();
  }

  private static List<Contribution> readContributions(byte[] value) {
    List<Contribution> list = new ArrayList<>();
    if (value == null) return list;
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(value))) {
      for (int count = in.readInt(); count > 0; count--) list.add(Contribution.read(in));
    } catch (IOException corrupt) {
      throw new UncheckedIOException(corrupt);
    }
    return list;
  }
}
