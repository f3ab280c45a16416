// The live page: whole-session rows of every session from /api/threads, ranked on the server;
// one thread's kept windows from /api/threads/SESSION/TID as a small chart. Refreshes itself.
"use strict";
const REFRESH_MS = 2000;
let selected = null;
let refreshes = 0;
/** ?host=NAME (from the fleet page): that host's sessions and threads only. */
const onlyHost = new URLSearchParams(location.search).get("host");
/** A click or a new sort asks for the table and chart again, whatever the ETag says. */
let chartStale = true;

const ms = ns => ns == null ? "" : (ns / 1e6).toFixed(ns < 1e7 ? 2 : 1);
const text = s => s == null ? "" : String(s);

// answers kept with their ETags: the API says 304 when nothing changed, and the page keeps what it shows
const kept = new Map();

async function json(url) {
  const before = kept.get(url);
  const r = await fetch(url, { cache: "no-store", headers: before ? { "If-None-Match": before.etag } : {} });
  if (r.status === 304 && before) return { body: before.body, changed: false };
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.status);
  const etag = r.headers.get("ETag");
  if (etag) kept.set(url, { etag, body });
  return { body, changed: true };
}

/** The table's rows by thread: updated in place, so a selection (and a click landing mid-refresh) survives a refresh. */
const rowsByKey = new Map();

function values(t) {
  // a map has no order on the wire (and JavaScript orders numeric keys): most readied first, then by thread id
  const readiers = Object.entries(t.topReadiers || {}).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return [
    [t.host, "text"], [text(t.processName) + (t.processId != null ? " (" + t.processId + ")" : ""), "text"], [t.threadId],
    [t.switchInCount], [t.waitCount], [ms(t.waitP50Nanos)], [ms(t.waitP99Nanos)], [ms(t.waitMaxNanos)], [ms(t.waitSumNanos)],
    [ms(t.readyP50Nanos)], [ms(t.readyP99Nanos)], [ms(t.readySumNanos)],
    [readiers.map(([tid, n]) => tid + " (" + n + ")").join(" "), "text"],
    [t.priorityMean == null ? "" : t.priorityMean.toFixed(1)], [t.final ? "final" : "running", "text"], [t.session, "text"]];
}

function showThreads(rows) {
  const tbody = document.querySelector("#threads tbody");
  const shown = new Set();
  for (const t of rows) {
    const key = t.session + "/" + t.threadId;
    shown.add(key);
    let tr = rowsByKey.get(key);
    const v = values(t);
    if (!tr) {
      tr = document.createElement("tr");
      tr.dataset.key = key;
      tr.dataset.session = t.session;
      tr.dataset.tid = t.threadId;
      for (const [, cls] of v) {
        const td = document.createElement("td");
        if (cls) td.className = cls;
        tr.appendChild(td);
      }
      tr.addEventListener("click", () => { selected = key; chartStale = true; refresh(); });
      rowsByKey.set(key, tr);
    }
    v.forEach(([value], i) => { const s = value == null ? "" : String(value); if (tr.children[i].textContent !== s) tr.children[i].textContent = s; });
    tr.className = "row" + (key === selected ? " selected" : "");
    tbody.appendChild(tr); // moves an existing row into the server's order
  }
  for (const [key, tr] of rowsByKey) {
    if (!shown.has(key)) { tr.remove(); rowsByKey.delete(key); }
  }
}

/** A click on a numeric column's header ranks by it (on the server, over every thread). */
function sortBy(field) {
  const by = document.getElementById("by");
  if (![...by.options].some(o => o.value === field)) {
    const o = document.createElement("option");
    o.value = field;
    o.textContent = field;
    by.appendChild(o);
  }
  by.value = field;
  chartStale = true;
  refresh();
}

function showChart(thread) {
  const chart = document.getElementById("chart");
  if (!thread) { chart.replaceChildren(); return; }
  const w = thread.windows || [];
  const W = 640, H = 160, pad = 30;
  const max = Math.max(1, ...w.map(x => Math.max(x.waitP99Nanos || 0, x.readyP99Nanos || 0)));
  const bar = w.length ? (W - 2 * pad) / w.length : 0;
  let svg = `<svg id="windows" width="${W}" height="${H + 56}" xmlns="http://www.w3.org/2000/svg">`;
  svg += `<text x="${pad}" y="14">thread ${thread.whole ? thread.whole.threadId : ""}: wait p99 (blue) and ready p99 (orange) per window (max ${ms(max)} ms)</text>`;
  const half = Math.max(1, bar / 2 - 1);
  w.forEach((x, i) => {
    const h = Math.round((x.waitP99Nanos || 0) / max * H);
    const r = Math.round((x.readyP99Nanos || 0) / max * H);
    const at = new Date(x.windowStartNanos / 1e6).toISOString();
    svg += `<rect class="window" x="${pad + i * bar + 1}" y="${20 + H - h}" width="${half}" height="${h}" fill="#4a7bd0">`
        + `<title>${at}: wait p99 ${ms(x.waitP99Nanos)} ms, ${x.waitCount} waits</title></rect>`;
    svg += `<rect class="ready" x="${pad + i * bar + 1 + half}" y="${20 + H - r}" width="${half}" height="${r}" fill="#e08a2c">`
        + `<title>${at}: ready p99 ${ms(x.readyP99Nanos)} ms, ${x.readyCount} ready</title></rect>`;
    // the time axis: the windows' starts in wall-clock time (UTC), a label every few bars
    if (i % Math.max(1, Math.ceil(w.length / 8)) === 0) {
      svg += `<text class="tick" x="${pad + i * bar + 1}" y="${H + 36}">${at.substring(11, 19)}</text>`;
    }
  });
  svg += `<line x1="${pad}" y1="${20 + H}" x2="${W - pad}" y2="${20 + H}" stroke="#999"/>`;
  svg += `<text x="${W - pad - 70}" y="${H + 50}">window start, UTC</text>`;
  svg += `</svg>`;
  chart.innerHTML = svg;
}

/** The host's sessions, and the top 25 of their threads: each session's top 25, merged. */
async function hostThreads(by) {
  const all = await json("/api/sessions");
  const mine = all.body.filter(s => s.host === onlyHost);
  const each = await Promise.all(mine.map(s => json("/api/threads?top=25&by=" + by + "&session=" + encodeURIComponent(s.session))));
  const rows = each.flatMap(r => r.body).sort((a, b) => (b[by] == null ? -Infinity : b[by]) - (a[by] == null ? -Infinity : a[by])).slice(0, 25);
  return [{ body: mine, changed: true }, { body: rows, changed: each.some(r => r.changed) || each.length === 0 }];
}

async function refresh() {
  try {
    const by = document.getElementById("by").value;
    // what the table shows, the top 25, and nothing more; unchanged rows are neither sent nor redrawn
    const [sessions, rows] = onlyHost == null ? await Promise.all([json("/api/sessions"), json("/api/threads?top=25&by=" + by)])
      : await hostThreads(by);
    const hosts = new Set(sessions.body.map(s => s.host));
    document.getElementById("sessions").textContent = `${sessions.body.length} session(s) on ${hosts.size} host(s)`
      + (onlyHost == null ? "" : " (host " + onlyHost + " only)");
    if (rows.changed || chartStale) showThreads(rows.body);
    if (selected && (rows.changed || chartStale)) {
      const [session, tid] = [selected.slice(0, selected.lastIndexOf("/")), selected.slice(selected.lastIndexOf("/") + 1)];
      showChart((await json("/api/threads/" + encodeURIComponent(session) + "/" + tid)).body);
    }
    chartStale = false;
    document.getElementById("error").textContent = "";
    document.getElementById("updated").textContent = new Date().toLocaleTimeString();
    document.getElementById("refreshes").textContent = String(++refreshes);
  } catch (e) {
    document.getElementById("error").textContent = "(" + e.message + ")";
  }
}

document.getElementById("by").addEventListener("change", () => { chartStale = true; refresh(); });
for (const th of document.querySelectorAll("#threads th[data-by]")) th.addEventListener("click", () => sortBy(th.dataset.by));
refresh();
setInterval(refresh, REFRESH_MS);
