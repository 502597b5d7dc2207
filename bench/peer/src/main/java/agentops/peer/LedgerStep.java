package agentops.peer;

import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The ledger and the units, one store read and one write per record: the record's unit is read,
 * the version added, the unit's contributions before and after compared, and only the changed
 * ones forwarded, signed and keyed by result key, to the group aggregation. A unit's previous
 * contributions are computed again from its previous versions rather than stored.
 */
final class LedgerStep implements Processor<String, byte[], String, Contribution.Delta> {
  static final String UNITS = "units";
  /** The key of the record that follows the input's last offset through the aggregation. */
  static final String END_KEY = "\u0000end";

  private final UnitMetrics metrics;
  private final Progress progress;
  private ProcessorContext<String, Contribution.Delta> context;
  private KeyValueStore<String, byte[]> units;
  private boolean endSent;

  LedgerStep(PeerConfig config, Progress progress) {
    this.metrics = new UnitMetrics(config);
    this.progress = progress;
  }

  @Override
  public void init(ProcessorContext<String, Contribution.Delta> context) {
    this.context = context;
    units = context.getStateStore(UNITS);
  }

  @Override
  public void process(Record<String, byte[]> record) {
    long offset = context.recordMetadata().map(metadata -> metadata.offset()).orElse(-1L);
    progress.recorded(offset, step(record));
    if (!endSent && progress.caughtUp()) {
      endSent = true;
      context.forward(new Record<>(END_KEY, new Contribution.Delta(0, null), record.timestamp()));
    }
  }

  private Progress.Outcome step(Record<String, byte[]> record) {
    if (record.value() == null) return Progress.Outcome.UNREADABLE;
    EngineFact fact;
    try {
      fact = EngineFact.decode(record.value());
    } catch (IllegalArgumentException | IndexOutOfBoundsException unreadable) {
      // Our engine dead-letters such a record; the peer counts it (the bench reports the count).
      return Progress.Outcome.UNREADABLE;
    }
    String key = fact.unitKey();
    if (key == null) return Progress.Outcome.OUTSIDE_SUBSET;
    Unit before = Unit.fromBytes(units.get(key));
    if (before.isRedelivery(fact)) return Progress.Outcome.REDELIVERY;
    Unit after = before.with(fact);
    units.put(key, after.toBytes());
    forwardChanges(before.versions.isEmpty() ? List.of() : metrics.of(before), metrics.of(after), record.timestamp());
    return Progress.Outcome.NEW_VERSION;
  }

  /** The multiset difference: what stopped counting is retracted, what started is added. */
  private void forwardChanges(List<Contribution> previous, List<Contribution> next, long timestamp) {
    List<Contribution> added = new ArrayList<>(next);
    for (Contribution old : previous) {
      int match = -1;
      for (int index = 0; index < added.size() && match < 0; index++) if (added.get(index).sameAs(old)) match = index;
      if (match >= 0) added.remove(match);
      else context.forward(new Record<>(old.groupKey(), new Contribution.Delta(-1, old), timestamp));
    }
    for (Contribution contribution : added) context.forward(new Record<>(contribution.groupKey(), new Contribution.Delta(1, contribution), timestamp));
  }
}
