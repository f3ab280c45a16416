// The fleet page: the rollup stage's latest closed window, per process name and per host, ranked on the
// server; a clicked process or host shows its kept windows over time. Names come from traces and are
// untrusted: they go into the page as text only (textContent, SVG text nodes), never as HTML.
"use strict";
const REFRESH_MS = 5000;
const SVG = "http://www.w3.org/2000/svg";
let selected = null; // {kind: "processes" | "hosts", name}
let aggregatePage = "http://127.0.0.1:8080/";

const ms = ns => ns == null ? "" : (ns / 1e6).toFixed(ns < 1e7 ? 2 : 1);

async function json(url) {
  const r = await fetch(url, { cache: "no-store" });
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.status);
  return body;
}

function cell(tr, value, cls) {
  const td = document.createElement("td");
  if (cls) td.className = cls;
  td.textContent = value;
  tr.appendChild(td);
  return td;
}

function topNames(map) {
  return Object.entries(map || {}).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([name]) => name === "" ? "(unknown)" : name).join(", ");
}

function show(kind, rows) {
  const tbody = document.querySelector("#" + kind + " tbody");
  tbody.replaceChildren();
  for (const r of rows) {
    const name = kind === "processes" ? r.processName : r.host;
    const tr = document.createElement("tr");
    tr.className = "row" + (selected && selected.kind === kind && selected.name === name ? " selected" : "");
    tr.dataset.name = name == null ? "" : name;
    cell(tr, name == null ? "(unknown)" : name, "text name");
    cell(tr, kind === "processes" ? r.hosts : r.processes);
    cell(tr, r.threads);
    cell(tr, ms(r.readyP50Nanos));
    cell(tr, ms(r.readyP99Nanos));
    cell(tr, ms(r.waitP99Nanos));
    cell(tr, ms(r.readySumNanos));
    if (kind === "processes") {
      cell(tr, topNames(r.topHosts), "text");
    } else {
      // click-through: the host's sessions and threads on the aggregate's page
      const a = document.createElement("a");
      a.className = "threads";
      a.href = aggregatePage + "?host=" + encodeURIComponent(name);
      a.textContent = "threads";
      cell(tr, "", "text").appendChild(a);
    }
    tr.addEventListener("click", e => {
      if (e.target.tagName === "A") return;
      selected = { kind, name: name == null ? "" : name };
      refresh();
    });
    tbody.appendChild(tr);
  }
}

function el(name, attrs, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text != null) e.textContent = text;
  return e;
}

/** ready p99 (orange) and wait p99 (blue) of a group's windows, over a time axis. */
function showChart(group) {
  const chart = document.getElementById("chart");
  const title = document.getElementById("chart-title");
  if (!group) { chart.replaceChildren(); title.textContent = ""; return; }
  const name = group.processName !== undefined ? group.processName : group.host;
  title.textContent = (name == null || name === "" ? "(unknown)" : name) + ": ready p99 (orange) and wait p99 (blue) per window";
  const w = group.windows || [];
  const W = 720, H = 180, left = 60, bottom = 30, top = 10;
  const t0 = Math.min(...w.map(x => x.windowStartNanos)), t1 = Math.max(...w.map(x => x.windowEndNanos));
  const max = Math.max(1, ...w.map(x => Math.max(x.readyP99Nanos || 0, x.waitP99Nanos || 0)));
  const x = t => left + (t - t0) / Math.max(1, t1 - t0) * (W - left - 10);
  const y = v => top + H - (v || 0) / max * H;
  const svg = el("svg", { id: "group-chart", width: W, height: H + top + bottom });
  svg.appendChild(el("line", { x1: left, y1: top + H, x2: W - 10, y2: top + H, stroke: "#999" }));
  svg.appendChild(el("line", { x1: left, y1: top, x2: left, y2: top + H, stroke: "#999" }));
  svg.appendChild(el("text", { x: 2, y: top + 10 }, ms(max) + " ms"));
  svg.appendChild(el("text", { x: 2, y: top + H }, "0"));
  for (const s of w) {
    const mid = (s.windowStartNanos + s.windowEndNanos) / 2;
    const label = new Date(s.windowStartNanos / 1e6).toISOString().substring(11, 16);
    svg.appendChild(el("text", { class: "tick", x: x(s.windowStartNanos), y: top + H + 16 }, label));
    svg.appendChild(el("circle", { class: "ready", cx: x(mid), cy: y(s.readyP99Nanos), r: 3, fill: "#e08a2c" }));
    svg.appendChild(el("circle", { class: "wait", cx: x(mid), cy: y(s.waitP99Nanos), r: 3, fill: "#4a7bd0" }));
  }
  const path = key => w.map((s, i) => (i ? "L" : "M") + x((s.windowStartNanos + s.windowEndNanos) / 2) + " " + y(s[key])).join(" ");
  if (w.length > 1) {
    svg.appendChild(el("path", { d: path("readyP99Nanos"), stroke: "#e08a2c", fill: "none" }));
    svg.appendChild(el("path", { d: path("waitP99Nanos"), stroke: "#4a7bd0", fill: "none" }));
  }
  svg.appendChild(el("text", { x: W - 90, y: top + H + 28 }, "window start, UTC"));
  chart.replaceChildren(svg);
}

async function refresh() {
  try {
    const [processes, hosts] = await Promise.all([
      json("/api/processes?window=latest&by=readyP99Nanos&top=15"), json("/api/hosts?window=latest&by=readyP99Nanos&top=15")]);
    const latest = processes.length ? processes[0].windowStartNanos : null;
    document.getElementById("window").textContent = latest == null ? "none yet" : new Date(latest / 1e6).toISOString();
    show("processes", processes);
    show("hosts", hosts);
    if (selected) showChart(await json("/api/" + selected.kind + "/" + encodeURIComponent(selected.name)));
    document.getElementById("error").textContent = "";
    document.getElementById("updated").textContent = new Date().toLocaleTimeString();
  } catch (e) {
    document.getElementById("error").textContent = "(" + e.message + ")";
  }
}

json("/api/fleet-config").then(c => { aggregatePage = c.aggregatePage; }).catch(() => {}).finally(() => {
  refresh();
  setInterval(refresh, REFRESH_MS);
});
