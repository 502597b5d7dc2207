// Time on the page: the one place a time field is read and written out. Result, alert and
// run-state records carry instants either as RFC 3339 text or as epoch milliseconds (the NDJSON
// files move from the second form to the first); both are accepted here and nowhere else.

/** Epoch milliseconds of an instant given in either form, or null when it is neither. */
export function instantMillis(value) {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string" && value !== "") {
    const millis = Date.parse(value);
    return Number.isNaN(millis) ? null : millis;
  }
  return null;
}

/** An instant as `2026-10-01 21:43:02Z` (UTC, milliseconds only when there are any). */
export function formatInstant(value) {
  const millis = instantMillis(value);
  if (millis === null) return "—";
  return new Date(millis).toISOString().replace("T", " ").replace(".000Z", "Z");
}
