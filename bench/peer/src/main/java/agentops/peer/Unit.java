package agentops.peer;

import java.util.ArrayList;
import java.util.List;

/**
 * The versions of one unit's facts (a call with the costs naming it, a cost naming no call, or a
 * Delivery with its summaries) and the fact ledger's rule over them (src/metrics/fact-ledger.ts):
 * a version is admitted when it is alone under its fact_id, its domain identity's versions agree
 * in report content, and it is the first such version of that identity (a re-report counts once).
 * Identities are read within the unit: the store is keyed so that every version a rule compares
 * shares the unit's key in the subset's workload (a fact_id or cost_id reused across units would
 * need a second keyed step; bench:peer's comparison fails on such a case).
 */
final class Unit {
  final List<EngineFact> versions;

  private Unit(List<EngineFact> versions) {
    this.versions = versions;
  }

  static Unit empty() {
    return new Unit(new ArrayList<>(0));
  }

  /** Contract revision 3 change 11: the same fact_id with the same report content is a redelivery. */
  boolean isRedelivery(EngineFact fact) {
    for (EngineFact known : versions) if (known.factId.equals(fact.factId) && known.sameReport(fact)) return true;
    return false;
  }

  Unit with(EngineFact fact) {
    List<EngineFact> next = new ArrayList<>(versions.size() + 1);
    next.addAll(versions);
    next.add(fact);
    return new Unit(next);
  }

  /** The versions that count, in arrival order. */
  List<EngineFact> admitted() {
    List<EngineFact> admitted = new ArrayList<>(versions.size());
    for (EngineFact version : versions) if (isAdmitted(version)) admitted.add(version);
    return admitted;
  }

  private boolean isAdmitted(EngineFact version) {
    if (!alone(version)) return false;
    String domain = version.domainIdentity();
    if (domain == null) return true;
    EngineFact first = null;
    EngineFact firstAlone = null;
    for (EngineFact claim : versions) {
      if (!domain.equals(claim.domainIdentity())) continue;
      if (first == null) first = claim;
      else if (!claim.sameReport(first)) return false; // conflicting content: every version quarantined
      if (firstAlone == null && alone(claim)) firstAlone = claim;
    }
    return firstAlone == version;
  }

  private boolean alone(EngineFact version) {
    for (EngineFact other : versions) if (other != version && other.factId.equals(version.factId)) return false;
    return true;
  }

  byte[] toBytes() {
    Codec.Writer out = new Codec.Writer(96 * versions.size() + 4).i32(versions.size());
    for (EngineFact version : versions) version.write(out);
    return out.finish();
  }

  static Unit fromBytes(byte[] value) {
    if (value == null) return empty();
    Codec.Reader in = new Codec.Reader(value);
    int count = in.i32();
    List<EngineFact> versions = new ArrayList<>(count + 1);
    for (int index = 0; index < count; index++) versions.add(EngineFact.read(in));
    return new Unit(versions);
  }
}
