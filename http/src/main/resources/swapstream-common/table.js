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
