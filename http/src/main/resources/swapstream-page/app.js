// The live page: the threads of every session from /api/threads, ranked on the server, sorted and
// filtered here; a clicked thread's kept windows (/api/threads/SESSION/TID) as a chart under its row.
// Names come from traces and are untrusted: they go into the page as text only, never as HTML.
"use strict";
const REFRESH_MS = 2000;
const TOP = 100;
let selected = null;
let refreshes = 0;
/** ?host=NAME (from the fleet page): that host's sessions and threads only. */
const onlyHost = new URLSearchParams(location.search).get("host");
/** A click, a new ranking or filter redraws the table and chart whatever the ETag says. */
let stale = true;
/** The column sorted here and its direction (1 up, -1 down); null: the server's order. */
let sort = null;
let lastRows = [];
/** A click brings the chart into view once; a refresh leaves the page where the reader scrolled it. */
let reveal = false;

const ms = ns => ns == null ? "" : (ns / 1e6).toFixed(ns < 1e7 ? 2 : 1);
const text = s => s == null ? "" : String(s);

/** A session id ends with its StartTime (a FILETIME): shown as that time, the whole id in the tooltip. */
function sessionStart(id) {
  const ft = Number(String(id).slice(String(id).lastIndexOf(":") + 1));
  return Number.isFinite(ft) && ft > 116444736000000000 ? new Date((ft - 116444736000000000) / 1e4).toISOString().substring(0, 19).replace("T", " ") : String(id);
}

/** Who readied the thread, by process name, most first: "svchost.exe 12, app.exe 5". */
function readiedBy(t) {
  const byProcess = new Map();
  for (const r of t.readiedBy || []) {
    const name = r.processName == null ? "thread " + r.threadId : r.processName;
    byProcess.set(name, (byProcess.get(name) || 0) + r.count);
  }
  return [...byProcess].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([n, c]) => n + " " + c).join(", ");
}

// the columns: header, value shown, value sorted by, the server field a first click ranks by
const COLUMNS = [
  { head: "host", cls: "text clip host", show: t => text(t.host) },
  { head: "process", cls: "text clip process", show: t => text(t.processName) + (t.processId != null ? " (" + t.processId + ")" : "") },
  { head: "thread", show: t => t.threadId, title: t => t.threadName || "" },
  { head: "switches in", hide: "opt1", by: "switchInCount", show: t => t.switchInCount, num: t => t.switchInCount },
  { head: "waits", hide: "opt1", by: "waitCount", show: t => t.waitCount, num: t => t.waitCount },
  { head: "wait p50", hide: "opt1", by: "waitP50Nanos", show: t => ms(t.waitP50Nanos), num: t => t.waitP50Nanos },
  { head: "wait p99", by: "waitP99Nanos", show: t => ms(t.waitP99Nanos), num: t => t.waitP99Nanos },
  { head: "longest wait", hide: "opt2", by: "waitMaxNanos", show: t => ms(t.waitMaxNanos), num: t => t.waitMaxNanos },
  { head: "total wait", hide: "opt2", by: "waitSumNanos", show: t => ms(t.waitSumNanos), num: t => t.waitSumNanos },
  { head: "ready p50", hide: "opt1", by: "readyP50Nanos", show: t => ms(t.readyP50Nanos), num: t => t.readyP50Nanos },
  { head: "ready p99", by: "readyP99Nanos", show: t => ms(t.readyP99Nanos), num: t => t.readyP99Nanos },
  { head: "wake‑up p99", hide: "opt2", by: "readyIdleWakeP99Nanos", show: t => ms(t.readyIdleWakeP99Nanos), num: t => t.readyIdleWakeP99Nanos,
    title: t => "ready time of switch-ins from idle (" + (t.readyIdleWakeCount || 0) + "): " + cStates(t) },
  { head: "contended p99", hide: "opt2", by: "readyContendedP99Nanos", show: t => ms(t.readyContendedP99Nanos), num: t => t.readyContendedP99Nanos,
    title: t => "ready time of switch-ins over a busy processor (" + (t.readyContendedCount || 0) + ")" },
  { head: "total ready", hide: "opt3", by: "readySumNanos", show: t => ms(t.readySumNanos), num: t => t.readySumNanos },
  { head: "readied by", cls: "text readiers", show: readiedBy },
  { head: "priority", hide: "opt2", by: "priorityMean", show: t => t.priorityMean == null ? "" : t.priorityMean.toFixed(1), num: t => t.priorityMean },
  // a row computed from a time its session does not know (docs/architecture.md "Incomplete sessions")
  { head: "state", cls: "text", show: t => t.complete === false ? "incomplete" : t.final ? "final" : "running",
    title: t => t.complete === false ? "its session ended incomplete: switches of this row's time may be missing" : "" },
  // the year left out (the tooltip has the whole id, the filter the whole start)
  { head: "session start", cls: "text", show: t => sessionStart(t.session).replace(/^\d{4}-/, ""), title: t => t.session },
];

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

function header() {
  const tr = document.querySelector("#threads thead tr");
  tr.replaceChildren();
  const by = document.getElementById("by").value;
  COLUMNS.forEach((c, i) => {
    const th = document.createElement("th");
    th.className = columnClass(c, true);
    if (c.by) th.dataset.by = c.by;
    th.appendChild(document.createTextNode(c.head));
    const arrow = document.createElement("span");
    arrow.className = "arrow";
    // the server ranks highest first: that column shows ▼ until sorted here
    const dir = sort && sort.column === i ? sort.dir : (!sort && c.by === by ? -1 : 0);
    arrow.textContent = dir > 0 ? "▲" : dir < 0 ? "▼" : "";
    th.setAttribute("aria-sort", dir > 0 ? "ascending" : dir < 0 ? "descending" : "none");
    th.appendChild(arrow);
    th.addEventListener("click", () => sortBy(i));
    tr.appendChild(th);
  });
}

/** A click on a column: a numeric one not ranked by yet ranks every thread by it on the server; else the shown rows turn around. */
function sortBy(i) {
  const c = COLUMNS[i];
  const by = document.getElementById("by");
  if (c.by && by.value !== c.by) {
    if (![...by.options].some(o => o.value === c.by)) {
      const o = document.createElement("option");
      o.value = c.by;
      o.textContent = c.head;
      by.appendChild(o);
    }
    by.value = c.by;
    sort = null;
  } else if (sort && sort.column === i) {
    sort = { column: i, dir: -sort.dir };
  } else {
    sort = { column: i, dir: c.by && !sort ? 1 : (c.num ? -1 : 1) };
  }
  stale = true;
  header();
  refresh();
}

function matches(t, f) {
  if (!f) return true;
  return [t.host, t.processName, t.threadName, t.threadId, t.session, sessionStart(t.session)].some(v => v != null && String(v).toLowerCase().includes(f));
}

function ordered(rows) {
  const f = document.getElementById("filter").value.trim().toLowerCase();
  const shown = rows.filter(t => matches(t, f));
  if (!sort) return shown;
  const c = COLUMNS[sort.column];
  return sortedBy(shown, c.num || c.show, sort.dir);
}

/** The table's rows by thread: updated in place, so a selection (and a click landing mid-refresh) survives a refresh. */
const rowsByKey = new Map();

function showThreads(rows) {
  const tbody = document.querySelector("#threads tbody");
  const shown = new Set();
  for (const t of ordered(rows)) {
    const key = t.session + "/" + t.threadId;
    shown.add(key);
    let tr = rowsByKey.get(key);
    if (!tr) {
      tr = document.createElement("tr");
      tr.dataset.key = key;
      for (const c of COLUMNS) {
        const td = document.createElement("td");
        td.className = columnClass(c, false);
        tr.appendChild(td);
      }
      tr.addEventListener("click", () => { selected = selected === key ? null : key; reveal = selected != null; stale = true; refresh(); });
      rowsByKey.set(key, tr);
    }
    COLUMNS.forEach((c, i) => {
      const s = text(c.show(t));
      const td = tr.children[i];
      if (td.textContent !== s) td.textContent = s;
      const title = c.title ? text(c.title(t)) : s;
      if (td.title !== title) td.title = title;
    });
    tr.className = "row" + (key === selected ? " selected" : "");
    tbody.appendChild(tr); // moves an existing row into the order shown
  }
  for (const [key, tr] of rowsByKey) {
    if (!shown.has(key)) { tr.remove(); rowsByKey.delete(key); }
  }
  const chartRow = document.getElementById("chart-row");
  if (chartRow && (!selected || !shown.has(selected))) chartRow.remove();
}

/** The selected thread's windows, in a row of their own right under its row: wait and ready p99 on a log axis. */
function showChart(thread) {
  let chartRow = document.getElementById("chart-row");
  const tr = rowsByKey.get(selected);
  if (!thread || !tr) { if (chartRow) chartRow.remove(); return; }
  if (!chartRow) {
    chartRow = document.createElement("tr");
    chartRow.id = "chart-row";
    chartRow.className = "chart-row";
    const td = document.createElement("td");
    td.colSpan = COLUMNS.length;
    chartRow.appendChild(td);
  }
  tr.after(chartRow);
  const w = thread.windows || [];
  const whole = thread.whole || {};
  const point = (x, key, count, what) => ({ t: x.windowStartNanos, v: x[key],
    tip: new Date(x.windowStartNanos / 1e6).toISOString().substring(11, 19) + " UTC: " + what + " p99 " + duration(x[key]) + ", " + (x[count] || 0) + " " + what + "s" });
  const width = Math.max(420, Math.min(900, document.querySelector(".scroll").clientWidth - 40));
  const svg = timeChart([
    { name: "wait p99", color: "#3b6fc9", cls: "wait", points: w.map(x => point(x, "waitP99Nanos", "waitCount", "wait")) },
    { name: "ready p99", color: "#e07b1f", cls: "ready", points: w.map(x => point(x, "readyP99Nanos", "readyCount", "ready")) },
  ], { id: "windows", width, height: 210,
    title: "thread " + text(whole.threadId) + " (" + text(whole.processName) + ") on " + text(whole.host) + ": each kept window"
      + (thread.earlierWindowsDropped ? " (earlier ones left the store)" : "") });
  // the trace itself, out of etw.raw-buffers (GET /api/sessions/{id}/etl): a kept window's minute, or the whole session
  const session = selected.slice(0, selected.lastIndexOf("/"));
  const etl = "/api/sessions/" + encodeURIComponent(session) + "/etl";
  const link = (href, label) => { const e = document.createElement("a"); e.href = href; e.textContent = label; e.download = ""; return e; };
  const links = document.createElement("div");
  links.className = "etl-links";
  links.append("Trace as .etl: ", link(etl, "the whole session"));
  for (const x of w.slice(-5)) {
    const from = new Date(x.windowStartNanos / 1e6).toISOString(), to = new Date(x.windowEndNanos / 1e6).toISOString();
    links.append(" · ", link(etl + "?from=" + encodeURIComponent(from) + "&to=" + encodeURIComponent(to),
      "open " + from.substring(11, 16) + " UTC in WPA"));
  }
  chartRow.firstChild.replaceChildren(svg, links);
  if (reveal) { revealRow(chartRow); reveal = false; }
}

/** Each session's trace as an .etl file (GET /api/sessions/{id}/etl), by host and start; names from traces set as text. */
function showSessionList(list) {
  const items = list.slice().sort((a, b) => text(a.host).localeCompare(text(b.host)) || text(a.session).localeCompare(text(b.session)))
    .map(s => {
      const li = document.createElement("li");
      const a = document.createElement("a");
      a.href = "/api/sessions/" + encodeURIComponent(s.session) + "/etl";
      a.download = "";
      a.textContent = text(s.host) + " from " + sessionStart(s.session);
      a.title = text(s.session);
      li.append(a);
      return li;
    });
  document.querySelector("#session-list ul").replaceChildren(...items);
}

/** The host's sessions, and the top of their threads: each session's top, merged. */
async function hostThreads(by) {
  const all = await json("/api/sessions");
  const mine = all.body.filter(s => s.host === onlyHost);
  const each = await Promise.all(mine.map(s => json("/api/threads?top=" + TOP + "&by=" + by + "&session=" + encodeURIComponent(s.session))));
  const rows = each.flatMap(r => r.body).sort((a, b) => (b[by] == null ? -Infinity : b[by]) - (a[by] == null ? -Infinity : a[by])).slice(0, TOP);
  return [{ body: mine, changed: true }, { body: rows, changed: each.some(r => r.changed) || each.length === 0 }];
}

async function refresh() {
  try {
    const by = document.getElementById("by").value;
    const [sessions, rows] = onlyHost == null ? await Promise.all([json("/api/sessions"), json("/api/threads?top=" + TOP + "&by=" + by)])
      : await hostThreads(by);
    const hosts = new Set(sessions.body.map(s => s.host));
    document.getElementById("sessions").textContent = `${sessions.body.length} session(s) on ${hosts.size} host(s)`
      + (onlyHost == null ? "" : " (host " + onlyHost + " only)");
    if (sessions.changed || stale) showSessionList(sessions.body);
    lastRows = rows.body;
    if (rows.changed || stale) showThreads(rows.body);
    if (selected && (rows.changed || stale)) {
      const [session, tid] = [selected.slice(0, selected.lastIndexOf("/")), selected.slice(selected.lastIndexOf("/") + 1)];
      showChart((await json("/api/threads/" + encodeURIComponent(session) + "/" + tid)).body);
    } else if (!selected) {
      showChart(null);
    }
    stale = false;
    document.getElementById("error").textContent = "";
    document.getElementById("updated").textContent = utcNow();
    document.getElementById("refreshes").textContent = String(++refreshes);
  } catch (e) {
    document.getElementById("error").textContent = "(" + e.message + ")";
  }
}

document.getElementById("by").addEventListener("change", () => { sort = null; stale = true; header(); refresh(); });
document.getElementById("filter").addEventListener("input", () => { showThreads(lastRows); if (selected) { stale = true; refresh(); } });
header();
refresh();
setInterval(refresh, REFRESH_MS);
