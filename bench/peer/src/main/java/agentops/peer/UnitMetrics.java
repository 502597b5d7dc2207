package agentops.peer;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * What a unit's admitted facts contribute to the two metrics, as src/metrics/units/call-unit.ts,
 * evidence-unit.ts and delivery-unit.ts say for them. Contract revision 3 change 1: of a Delivery's
 * TERMINAL summaries only the earliest by (event_time, fact_id) is an evidence unit.
 */
final class UnitMetrics {
  private static final String DIRECT_HOST = "DIRECT_HOST";
  private static final String DIRECT_PROVIDER = "DIRECT_PROVIDER";
  private static final Set<String> READABLE_BASES = Set.of(DIRECT_HOST, DIRECT_PROVIDER, "DERIVED", "ESTIMATED", "MANUAL");
  private static final String[] NO_COHORT = new String[0];

  private final long windowMillis;

  UnitMetrics(PeerConfig config) {
    this.windowMillis = config.windowMillis;
  }

  List<Contribution> of(Unit unit) {
    List<EngineFact> admitted = unit.admitted();
    List<Contribution> drafts = new ArrayList<>(4);
    EngineFact call = null;
    EngineFact terminal = null;
    for (EngineFact fact : admitted) {
      switch (fact.type) {
        case EngineFact.MODEL_CALL -> call = fact;
        // A cost linked to a Delivery is a unit of its own; one naming a call is read with that call.
        case EngineFact.COST -> {
          if (fact.namesDelivery) drafts.add(evidence(fact));
        }
        default -> {
          if (!fact.terminal) drafts.add(evidence(fact));
          else if (terminal == null || earlier(fact, terminal)) terminal = fact;
        }
      }
    }
    if (terminal != null) drafts.add(evidence(terminal));
    if (call != null && call.operational) {
      drafts.add(evidence(call));
      for (EngineFact fact : admitted) if (fact.type == EngineFact.COST) drafts.add(evidence(fact));
      tokenUsage(call, drafts);
    }
    return drafts;
  }

  /** The contract's tie-break: (event_time, fact_id), fact_ids by code point (revision 3 change 10). */
  private static boolean earlier(EngineFact a, EngineFact b) {
    if (a.eventTime != b.eventTime) return a.eventTime < b.eventTime;
    return Json.compareCodePoints(a.factId, b.factId) < 0;
  }

  private long windowStart(long eventTime) {
    return Math.floorDiv(eventTime, windowMillis) * windowMillis;
  }

  private static boolean readable(EngineFact fact) {
    return fact.basis != null && READABLE_BASES.contains(fact.basis);
  }

  private static boolean direct(EngineFact fact) {
    return DIRECT_HOST.equals(fact.basis) || DIRECT_PROVIDER.equals(fact.basis);
  }

  /** direct-evidence-basis-rate: readable provenance is covered and eligible, direct is a hit. */
  private Contribution evidence(EngineFact fact) {
    boolean readable = readable(fact);
    return Contribution.of(Contribution.EVIDENCE_BASIS, windowStart(fact.eventTime), windowMillis, NO_COHORT, readable, readable, direct(fact), 0, null, fact.eventTime);
  }

  /** operational-token-usage: one unit per direction in the attribution tuple's slice, or one cohort-less INCOMPLETE_ATTRIBUTION. */
  private void tokenUsage(EngineFact call, List<Contribution> drafts) {
    long start = windowStart(call.eventTime);
    if (!complete(call.provider) || !complete(call.model) || !complete(call.role) || !complete(call.runtime)) {
      drafts.add(Contribution.of(Contribution.TOKEN_USAGE, start, windowMillis, NO_COHORT, false, false, false, 0, "INCOMPLETE_ATTRIBUTION", call.eventTime));
      return;
    }
    boolean readable = readable(call);
    boolean direct = direct(call);
    String exclusion = readable && !direct ? "NONDIRECT_EVIDENCE" : null;
    for (int output = 0; output <= 1; output++) {
      Long tokens = output == 0 ? call.inputTokens : call.outputTokens;
      String[] cohort = {"direction", output == 0 ? "input" : "output", "model", call.model, "provider", call.provider, "role", call.role, "runtime", call.runtime};
      boolean counted = tokens != null;
      drafts.add(Contribution.of(Contribution.TOKEN_USAGE, start, windowMillis, cohort, readable && counted, direct && counted, false, direct && counted ? tokens : 0, exclusion, call.eventTime));
    }
  }

  private static boolean complete(String text) {
    return text != null && !text.isEmpty();
  }
}
