// What both pages' tables share.
"use strict";

/** The rows sorted by key(row), up (dir 1) or down (-1); empty values last, ties in the order given. */
function sortedBy(rows, key, dir) {
  return rows.map((r, i) => [r, i]).sort(([a, i], [b, j]) => {
    const x = key(a), y = key(b);
    if (x == null && y == null) return i - j;
    if (x == null) return 1;
    if (y == null) return -1;
    const d = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return d !== 0 ? dir * d : i - j;
  }).map(([r]) => r);
}

/** A row's idle wake-ups by the C-state the processor left, each with its mean ready time: "C1: 84, 1.2 µs mean; C3: ...". */
function cStates(r) {
  const counts = r.readyIdleWakeByCState || {}, sums = r.readyIdleWakeSumNanosByCState || {};
  const keys = Object.keys(counts).sort((a, b) => Number(a.substring(1)) - Number(b.substring(1)));
  if (!keys.length) return "no C-state logged";
  return keys.map(k => k + ": " + counts[k] + ", " + (sums[k] / counts[k] / 1e3).toFixed(1) + " µs mean").join("; ");
}

/** Now, as the tables show times: UTC, 24-hour, "14:03:27 UTC". */
function utcNow() {
  return new Date().toISOString().substring(11, 19) + " UTC";
}

/** A column's classes: its own, and "opt1" / "opt2" for one a narrower window leaves out (page.css, fleet.css). */
function columnClass(c, header) {
  const own = c.cls ? (header ? c.cls.split(" ")[0] : c.cls) : "";
  return [own, c.hide].filter(Boolean).join(" ");
}
