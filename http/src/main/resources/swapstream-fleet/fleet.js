// The fleet page: the rollup stage's roll-ups, per process name and per host, of each one's latest
// closed window (hosts minutes apart all show), of the fleet's latest, or of a window picked; sorted here; a clicked process or host shows its kept windows over time.
// Names come from traces and are untrusted: they go into the page as text only, never as HTML.
"use strict";
const REFRESH_MS = 5000;
const TOP = 100;
let selected = null; // {kind: "processes" | "hosts", name}
/** A click brings the chart into view once; a refresh leaves the page where the reader scrolled it. */
let reveal = false;
let aggregatePage = "http://127.0.0.1:8080/";
/** Per table, the column sorted and its direction (1 up, -1 down). */
const sorts = { processes: { column: 5, dir: -1 }, hosts: { column: 5, dir: -1 } };
const data = { processes: [], hosts: [] };
/** The newest window /api/windows lists: in "each one's latest", a row of an older window is marked stale. */
let fleetLatest = null;
const isStale = r => fleetLatest != null && document.getElementById("window").value === "each" && r.windowStartNanos < fleetLatest;

const ms = ns => ns == null ? "" : (ns / 1e6).toFixed(ns < 1e7 ? 2 : 1);
const utc = ns => new Date(ns / 1e6).toISOString().substring(0, 19).replace("T", " ");
const unknown = name => name == null || name === "" ? "(unknown)" : name;

async function json(url) {
  const r = await fetch(url, { cache: "no-store" });
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.status);
  return body;
}

function topNames(map) {
  return Object.entries(map || {}).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([name]) => unknown(name)).join(", ");
}

/** The times both tables show, in the same columns. */
// headers without their unit: the note under the tables says times are in milliseconds
const TIMES = [
  { head: "ready p50", hide: "opt1", num: r => r.readyP50Nanos, show: r => ms(r.readyP50Nanos) },
  { head: "ready p99", num: r => r.readyP99Nanos, show: r => ms(r.readyP99Nanos) },
  { head: "wake\u2011up p99", hide: "opt2", num: r => r.readyIdleWakeP99Nanos, show: r => ms(r.readyIdleWakeP99Nanos),
      title: r => "ready time of switch-ins from idle (" + (r.readyIdleWakeCount || 0) + "): " + cStates(r) },
  { head: "contended p99", hide: "opt2", num: r => r.readyContendedP99Nanos, show: r => ms(r.readyContendedP99Nanos),
      title: r => "ready time of switch-ins over a busy processor (" + (r.readyContendedCount || 0) + ")" },
  { head: "wait p99", num: r => r.waitP99Nanos, show: r => ms(r.waitP99Nanos) },
  { head: "total ready", num: r => r.readySumNanos, show: r => ms(r.readySumNanos) },
];

/** A row's window, HH:MM (UTC); in "each one's latest", one older than the fleet's latest is marked stale. */
const WINDOW = { head: "window (UTC)", cls: "text window", num: r => r.windowStartNanos, show: r => utc(r.windowStartNanos).substring(11, 16),
  badge: r => isStale(r) ? "stale" : null,
  title: r => isStale(r) ? "stale: its latest window, " + utc(r.windowStartNanos).substring(11, 16) + " UTC, is older than the fleet's latest, "
    + utc(fleetLatest).substring(11, 16) + " UTC (nothing newer has come from it)" : utc(r.windowStartNanos) + " UTC" };

const COLUMNS = {
  processes: [
    { head: "process", cls: "text name clip", show: r => unknown(r.processName) },
    WINDOW,
    { head: "hosts", num: r => r.hosts },
    { head: "threads", hide: "opt2", num: r => r.threads },
    ...TIMES,
    { head: "hosts with most ready time", cls: "text clip", hide: "opt2", show: r => topNames(r.topHosts) },
  ],
  hosts: [
    { head: "host", cls: "text name clip", show: r => r.host },
    WINDOW,
    { head: "processes", num: r => r.processes },
    { head: "threads", hide: "opt2", num: r => r.threads },
    ...TIMES,
    { head: "its threads", cls: "text", link: true },
  ],
};

function header(kind) {
  const tr = document.querySelector("#" + kind + " thead tr");
  tr.replaceChildren();
  COLUMNS[kind].forEach((c, i) => {
    const th = document.createElement("th");
    th.className = columnClass(c, true);
    th.appendChild(document.createTextNode(c.head));
    const arrow = document.createElement("span");
    arrow.className = "arrow";
    const dir = sorts[kind].column === i ? sorts[kind].dir : 0;
    arrow.textContent = dir > 0 ? "▲" : dir < 0 ? "▼" : "";
    th.setAttribute("aria-sort", dir > 0 ? "ascending" : dir < 0 ? "descending" : "none");
    th.appendChild(arrow);
    if (!c.link) th.addEventListener("click", () => {
      const s = sorts[kind];
      sorts[kind] = s.column === i ? { column: i, dir: -s.dir } : { column: i, dir: c.num ? -1 : 1 };
      header(kind);
      show(kind);
    });
    tr.appendChild(th);
  });
}

function ordered(kind) {
  const s = sorts[kind];
  const c = COLUMNS[kind][s.column];
  return sortedBy(data[kind], c.num || c.show, s.dir);
}

function show(kind) {
  const tbody = document.querySelector("#" + kind + " tbody");
  tbody.replaceChildren();
  for (const r of ordered(kind)) {
    const name = kind === "processes" ? r.processName : r.host;
    const tr = document.createElement("tr");
    tr.className = "row" + (selected && selected.kind === kind && selected.name === (name == null ? "" : name) ? " selected" : "")
      + (isStale(r) ? " stale" : "");
    tr.dataset.name = name == null ? "" : name;
    tr.dataset.window = String(r.windowStartNanos);
    for (const c of COLUMNS[kind]) {
      const td = document.createElement("td");
      td.className = columnClass(c, false);
      if (c.link) {
        // click-through: the host's sessions and threads on the aggregate's page
        const a = document.createElement("a");
        a.className = "threads";
        a.href = aggregatePage + "?host=" + encodeURIComponent(name);
        a.textContent = "threads";
        td.appendChild(a);
      } else {
        const v = c.show ? c.show(r) : c.num(r);
        td.textContent = v == null ? "" : String(v);
        td.title = c.title ? c.title(r) : td.textContent;
        const badge = c.badge && c.badge(r);
        if (badge) {
          const b = document.createElement("span");
          b.className = "badge";
          b.textContent = badge;
          td.appendChild(b);
        }
      }
      tr.appendChild(td);
    }
    tr.addEventListener("click", e => {
      if (e.target.tagName === "A") return;
      selected = { kind, name: name == null ? "" : name };
      reveal = true;
      refresh();
    });
    tbody.appendChild(tr);
  }
}

/** A group's kept windows, in a row right under its own: ready and wait p99 on a log axis, over UTC time. */
function showChart(group) {
  const old = document.getElementById("chart-row");
  if (old) old.remove();
  if (!group || !selected) return;
  const row = [...document.querySelectorAll("#" + selected.kind + " tbody tr.row")].find(tr => tr.dataset.name === selected.name);
  if (!row) return;
  const chartRow = document.createElement("tr");
  chartRow.id = "chart-row";
  chartRow.className = "chart-row";
  const td = document.createElement("td");
  td.colSpan = COLUMNS[selected.kind].length;
  chartRow.appendChild(td);
  row.after(chartRow);
  const name = group.processName !== undefined ? group.processName : group.host;
  const w = group.windows || [];
  const point = (x, key, what) => ({ t: x.windowStartNanos, v: x[key],
    tip: new Date(x.windowStartNanos / 1e6).toISOString().substring(11, 19) + " UTC: " + what + " p99 " + duration(x[key]) });
  td.replaceChildren(timeChart([
    { name: "ready p99", color: "#e07b1f", cls: "ready", points: w.map(x => point(x, "readyP99Nanos", "ready")) },
    { name: "wait p99", color: "#3b6fc9", cls: "wait", points: w.map(x => point(x, "waitP99Nanos", "wait")) },
  ], { id: "group-chart", width: Math.max(420, Math.min(720, document.body.clientWidth - 60)), height: 210,
    title: unknown(name) + ": each kept window" }));
  // who woke whom in the window of the row the chart is under, not in some newer one
  if (selected.kind === "processes") td.appendChild(wakesPanel(name, row.dataset.window));
  if (reveal) { revealRow(chartRow); reveal = false; }
}

/** Who woke a process and whom it woke in the window given (its row's): filled in when /api/wakes answers. */
function wakesPanel(name, window) {
  const div = document.createElement("div");
  div.id = "wakes";
  div.className = "wakes";
  json("/api/wakes?process=" + encodeURIComponent(unknown(name)) + "&window=" + encodeURIComponent(window) + "&top=10").then(w => {
    div.replaceChildren(
      wakesTable(unknown(name) + " is woken by", w.wakers, e => e.wakerProcess),
      wakesTable(unknown(name) + " wakes", w.wakes, e => e.wokenProcess));
    if (w.windowStartNanos != null) {
      const p = document.createElement("p");
      p.className = "muted";
      p.textContent = "who woke whom in the window of " + utc(w.windowStartNanos) + " UTC, all hosts";
      div.prepend(p);
    }
  }).catch(e => { div.textContent = "(wake edges: " + e.message + ")"; });
  return div;
}

function wakesTable(title, edges, other) {
  const t = document.createElement("table");
  t.className = "wake-table";
  const cap = document.createElement("caption");
  cap.textContent = title;
  t.appendChild(cap);
  const head = document.createElement("tr");
  for (const h of ["process", "wakes", "hosts", "wait ended p99 ms", "ready after p99 ms"]) {
    const th = document.createElement("th");
    th.textContent = h;
    if (h === "process") th.className = "text";
    head.appendChild(th);
  }
  t.appendChild(head);
  for (const e of edges || []) {
    const tr = document.createElement("tr");
    for (const [v, cls] of [[other(e), "text name clip"], [e.wakeCount], [e.hosts], [ms(e.waitP99Nanos)], [ms(e.readyP99Nanos)]]) {
      const td = document.createElement("td");
      if (cls) td.className = cls;
      td.textContent = v == null ? "" : String(v);
      td.title = td.textContent;
      tr.appendChild(td);
    }
    t.appendChild(tr);
  }
  if (!edges || !edges.length) {
    const tr = document.createElement("tr");
    const td = document.createElement("td");
    td.colSpan = 5;
    td.className = "text muted";
    td.textContent = "none in the kept windows";
    tr.appendChild(td);
    t.appendChild(tr);
  }
  return t;
}

async function windows() {
  const list = await json("/api/windows");
  fleetLatest = list.length ? Math.max(...list.map(w => w.windowStartNanos)) : null;
  const select = document.getElementById("window");
  const chosen = select.value;
  const options = [["each", "each one's latest closed"], ["latest", "the latest closed"]].concat(list.map(w => [String(w.windowStartNanos),
    utc(w.windowStartNanos) + " UTC (" + w.hosts + " hosts)"]));
  if (select.options.length !== options.length || [...select.options].some((o, i) => o.value !== options[i][0])) {
    select.replaceChildren(...options.map(([v, label]) => { const o = document.createElement("option"); o.value = v; o.textContent = label; return o; }));
    select.value = options.some(([v]) => v === chosen) ? chosen : "each";
  }
}

async function refresh() {
  try {
    await windows();
    const w = document.getElementById("window").value;
    const [processes, hosts] = await Promise.all([
      json("/api/processes?window=" + w + "&by=readyP99Nanos&top=" + TOP), json("/api/hosts?window=" + w + "&by=readyP99Nanos&top=" + TOP)]);
    data.processes = processes;
    data.hosts = hosts;
    const starts = processes.concat(hosts).map(r => r.windowStartNanos);
    const first = Math.min(...starts), last = Math.max(...starts);
    document.getElementById("window-shown").textContent = !starts.length ? "none yet"
      : first === last ? "showing " + utc(first) + " UTC" : "showing " + utc(first) + " to " + utc(last) + " UTC";
    const stale = processes.concat(hosts).filter(isStale);
    document.getElementById("stale").textContent = !stale.length ? "" : stale.length + " row(s) of a window older than the fleet's latest, "
      + utc(fleetLatest).substring(11, 16) + " UTC: marked stale";
    show("processes");
    show("hosts");
    showChart(selected ? await json("/api/" + selected.kind + "/" + encodeURIComponent(selected.name)) : null);
    document.getElementById("error").textContent = "";
    document.getElementById("updated").textContent = utcNow();
  } catch (e) {
    document.getElementById("error").textContent = "(" + e.message + ")";
  }
}

header("processes");
header("hosts");
document.getElementById("window").addEventListener("change", refresh);
json("/api/fleet-config").then(c => { aggregatePage = c.aggregatePage; }).catch(() => {}).finally(() => {
  refresh();
  setInterval(refresh, REFRESH_MS);
});
