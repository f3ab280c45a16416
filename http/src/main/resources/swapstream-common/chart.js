// A time chart both pages draw: windows on a UTC time axis, durations on a log axis (a ready time a
// thousandth of the waits still shows). Everything from the data goes in as text nodes, never as markup.
"use strict";
const SVG_NS = "http://www.w3.org/2000/svg";

function svgEl(name, attrs, text) {
  const e = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text != null) e.textContent = text;
  return e;
}

/** A duration in ns as people read it: 850 µs, 12.5 ms, 2.1 s. */
function duration(ns) {
  if (ns == null) return "";
  if (ns < 1e3) return ns + " ns";
  if (ns < 1e6) return +(ns / 1e3).toPrecision(3) + " µs";
  if (ns < 1e9) return +(ns / 1e6).toPrecision(3) + " ms";
  return +(ns / 1e9).toPrecision(3) + " s";
}

/**
 * series: [{name, color, cls, points: [{t (ns), v (ns or null), tip}]}]; draws into an SVG of the given width.
 * A log axis has no 0: the axis ends at its lowest decade. Zero values, when there are any, sit on a strip of their
 * own under it, set apart by a break in the axis and labelled "none", as hollow marks.
 */
function timeChart(series, options) {
  const W = options.width || 760, H = options.height || 200;
  const left = 64, right = 40, top = 38, bottom = 46;
  const plotW = W - left - right, plotH = H - top - bottom;
  const all = series.flatMap(s => s.points);
  const zeros = all.some(p => p.v != null && p.v <= 0);
  const zeroGap = zeros ? 18 : 0;
  const logH = plotH - zeroGap;
  const values = all.map(p => p.v).filter(v => v != null && v > 0);
  let lo = values.length ? Math.pow(10, Math.floor(Math.log10(Math.min(...values)))) : 1e3;
  let hi = values.length ? Math.pow(10, Math.ceil(Math.log10(Math.max(...values)))) : 1e6;
  if (hi <= lo) hi = lo * 10;
  const times = all.map(p => p.t);
  const t0 = times.length ? Math.min(...times) : 0;
  const t1 = times.length ? Math.max(...times) : 1;
  const span = Math.max(1, t1 - t0);
  const x = t => left + (times.length > 1 ? (t - t0) / span * plotW : plotW / 2);
  const y = v => v == null || v <= 0 ? top + plotH : top + logH - (Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) * logH;
  const svg = svgEl("svg", { id: options.id, width: W, height: H, role: "img" });
  if (options.title) svg.appendChild(svgEl("text", { x: 4, y: 13, class: "title" }, options.title));
  // the log axis: a line and a label per decade
  for (let d = lo; d <= hi * 1.0001; d *= 10) {
    svg.appendChild(svgEl("line", { x1: left, x2: left + plotW, y1: y(d), y2: y(d), class: "grid" }));
    svg.appendChild(svgEl("text", { x: left - 6, y: y(d) + 4, "text-anchor": "end", class: "ytick" }, duration(d)));
  }
  // the log axis, down to its lowest decade
  svg.appendChild(svgEl("line", { x1: left, y1: top, x2: left, y2: top + logH, stroke: "#999" }));
  if (zeros) {
    // zeros apart: the axis broken (two slashes), their strip labelled as no time at all, not as a decade
    const b = top + logH + zeroGap / 2;
    for (const d of [-3, 3]) svg.appendChild(svgEl("line", { x1: left - 5, y1: b + d + 2, x2: left + 5, y2: b + d - 2, stroke: "#999", class: "axis-break" }));
    svg.appendChild(svgEl("line", { x1: left, y1: top + plotH - 4, x2: left, y2: top + plotH, stroke: "#999" }));
    svg.appendChild(svgEl("text", { x: left - 6, y: top + plotH + 4, "text-anchor": "end", class: "zero-label" }, "none"));
  }
  svg.appendChild(svgEl("line", { x1: left, y1: top + plotH, x2: left + plotW, y2: top + plotH, stroke: "#999" }));
  // the time axis: about six labels, HH:MM:SS (UTC), none overlapping
  const seconds = span / 1e9;
  const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400];
  const step = (steps.find(s => seconds / s <= 6) || 86400) * 1e9;
  const first = Math.ceil(t0 / step) * step;
  for (let t = first; t <= t1 + 1; t += step) {
    const label = new Date(t / 1e6).toISOString().substring(11, seconds >= 600 ? 16 : 19);
    svg.appendChild(svgEl("line", { x1: x(t), x2: x(t), y1: top + plotH, y2: top + plotH + 4, stroke: "#999" }));
    svg.appendChild(svgEl("text", { x: x(t), y: top + plotH + 16, "text-anchor": "middle", class: "tick" }, label));
  }
  if (times.length && first > t1 + 1) {
    svg.appendChild(svgEl("text", { x: x(t0), y: top + plotH + 16, "text-anchor": "middle", class: "tick" },
      new Date(t0 / 1e6).toISOString().substring(11, 19)));
  }
  svg.appendChild(svgEl("text", { x: left + plotW, y: H - 6, "text-anchor": "end" }, "window start (UTC)"));
  // the series, with a legend
  let lx = left + 4;
  for (const s of series) {
    const pts = s.points.filter(p => p.v != null);
    // a line joins neighbours on the log axis only: none runs across the break to a zero
    let d = "", joined = false;
    for (const p of pts) {
      if (p.v > 0) d += (joined ? " L" : " M") + x(p.t).toFixed(1) + " " + y(p.v).toFixed(1);
      joined = p.v > 0;
    }
    if (d.includes("L")) svg.appendChild(svgEl("path", { d: d.trim(), stroke: s.color, fill: "none", "stroke-width": 1.5 }));
    for (const p of pts) {
      const c = svgEl("circle", { class: s.cls, cx: x(p.t), cy: y(p.v), r: 3,
        fill: p.v > 0 ? s.color : "white", stroke: s.color });
      c.appendChild(svgEl("title", {}, p.tip || ""));
      svg.appendChild(c);
    }
    svg.appendChild(svgEl("rect", { x: lx, y: top - 20, width: 10, height: 10, fill: s.color }));
    const label = svgEl("text", { x: lx + 14, y: top - 11 }, s.name);
    svg.appendChild(label);
    lx += 18 + 7 * s.name.length;
  }
  return svg;
}

/** Scrolls the page just enough for the row to show, up or down, never sideways. */
function revealRow(row) {
  const r = row.getBoundingClientRect();
  if (r.bottom > innerHeight) window.scrollBy(0, Math.min(r.bottom - innerHeight + 8, r.top - 8));
  else if (r.top < 0) window.scrollBy(0, r.top - 8);
}
