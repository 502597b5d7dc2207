package agentops.peer;

import java.lang.management.ManagementFactory;

/**
 * What the bench reads from the peer's stdout, one JSON line per event: progress every 5 s, the
 * moment the last offset of the input (known from the bench) is processed, and the moment the
 * group aggregation forwards the end marker that followed it, when every group changed before it
 * has been forwarded to the results topic's producer.
 */
final class Progress {
  enum Outcome { NEW_VERSION, REDELIVERY, UNREADABLE, OUTSIDE_SUBSET }

  private final long lastOffset;
  private final long jvmStart = ManagementFactory.getRuntimeMXBean().getStartTime();
  private long firstRecordAt;
  private long records;
  private long redeliveries;
  private long unreadable;
  private long outsideSubset;
  private long groupsEmitted;
  private long lastReport = System.currentTimeMillis();
  private long caughtUpAt;
  private boolean flushedReported;

  Progress(long lastOffset) {
    this.lastOffset = lastOffset;
  }

  void recorded(long offset, Outcome outcome) {
    long now = System.currentTimeMillis();
    if (records == 0) {
      firstRecordAt = now;
      event("first-record", "");
    }
    records += 1;
    if (outcome == Outcome.REDELIVERY) redeliveries += 1;
    if (outcome == Outcome.UNREADABLE) unreadable += 1;
    if (outcome == Outcome.OUTSIDE_SUBSET) outsideSubset += 1;
    if (now - lastReport >= 5_000) {
      lastReport = now;
      event("progress", ",\"offset\":" + offset);
    }
    if (caughtUpAt == 0 && offset >= lastOffset) {
      caughtUpAt = now;
      event("caught-up", ",\"offset\":" + offset);
    }
  }

  boolean caughtUp() {
    return caughtUpAt != 0;
  }

  void emitted() {
    groupsEmitted += 1;
  }

  void endForwarded() {
    if (flushedReported) return;
    flushedReported = true;
    event("results-emitted", "");
  }

  private void event(String name, String extra) {
    long now = System.currentTimeMillis();
    System.out.println("{\"event\":\"" + name + "\",\"sinceJvmStartMs\":" + (now - jvmStart) + ",\"sinceFirstRecordMs\":" + (firstRecordAt == 0 ? 0 : now - firstRecordAt) + ",\"records\":" + records + ",\"redeliveries\":" + redeliveries + ",\"unreadable\":" + unreadable + ",\"outsideSubset\":" + outsideSubset + ",\"groupsEmitted\":" + groupsEmitted + extra + "}");
    System.out.flush();
  }
}
