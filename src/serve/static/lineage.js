import { el } from "./dom.js";

// Clicking a figure opens its lineage: agentops explain's answer, asked of a running member's
// engine state by the server (/api/explain); nothing is computed here either.
const UNITS_SHOWN = 20;

function originText(origin) {
  if (origin === null) return "origin unknown";
  return "line" in origin ? `line ${origin.line}` : `${origin.topic}/${origin.partition}@${origin.offset}`;
}

function unitNode(unit) {
  const c = unit.contribution;
  const parts = [
    c.hit ? "hit" : null,
    c.category,
    c.amount !== 0 ? `amount ${c.amount}` : null,
    ...c.money.map((m) => `${m.amount_minor} ${m.currency} ${m.source} ${m.cost_basis}`),
    ...Object.keys(unit.reasons),
    ...unit.missing.map((input) => `missing ${input}`),
  ];
  return el(
    "li",
    { "data-unit": `${unit.kind} ${unit.id}` },
    el("b", {}, `${unit.kind} ${unit.id}`),
    " ",
    el("span", { class: "muted" }, parts.filter((part) => part !== null && part !== undefined).join(" · ")),
    el(
      "ul",
      {},
      unit.facts.map((fact) =>
        el(
          "li",
          { class: "muted", "data-fact": fact.fact_id },
          `${fact.fact_id} ${fact.type} ${fact.basis ?? "no provenance"} ${originText(fact.origin)}`,
        ),
      ),
    ),
  );
}

function lineageNode(explanation) {
  const t = explanation.totals;
  const byStatus = new Map();
  for (const unit of explanation.units) byStatus.set(unit.status, [...(byStatus.get(unit.status) ?? []), unit]);
  return [
    el(
      "p",
      { "data-totals": "" },
      `units add up to: covered ${t.covered} of ${t.candidates} candidates, eligible ${t.eligible}, hits ${t.hits}, sum ${t.amount}`,
    ),
    ...[...byStatus].map(([status, units]) =>
      el(
        "details",
        { open: status === "uncovered" || status === "excluded" ? "" : undefined, "data-status": status },
        el("summary", {}, `${status} (${units.length})`),
        el("ul", {}, units.slice(0, UNITS_SHOWN).map(unitNode)),
        units.length > UNITS_SHOWN
          ? el("p", { class: "muted" }, `first ${UNITS_SHOWN}; agentops explain --all lists every one`)
          : null,
      ),
    ),
    explanation.dead_letters.length === 0
      ? null
      : el(
          "details",
          {},
          el("summary", {}, `dead letters that may have changed it (${explanation.dead_letters.length})`),
          el(
            "ul",
            {},
            explanation.dead_letters.map((letter) =>
              el("li", {}, `${letter.reason} ${letter.fact_id ?? ""} ${originText(letter.origin)}`),
            ),
          ),
        ),
  ];
}

export async function openLineage(key) {
  const dialog = document.getElementById("lineage");
  const body = document.getElementById("lineage-body");
  body.replaceChildren(el("p", { class: "muted" }, "asking the engine…"));
  if (!dialog.open) dialog.showModal();
  try {
    const response = await fetch(`/api/explain?key=${encodeURIComponent(key)}`);
    const answer = await response.json();
    if (answer.kind === "explained")
      body.replaceChildren(
        el("p", { class: "muted", "data-lineage-key": key }, key),
        ...lineageNode(answer.explanation),
      );
    else
      body.replaceChildren(
        el("p", { class: "error" }, answer.error ?? "the engine holds no figure under this key now"),
      );
  } catch (error) {
    body.replaceChildren(el("p", { class: "error" }, `lineage not available: ${error.message}`));
  }
}
