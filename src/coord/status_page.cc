// The status page (status_http.h): one self-contained HTML document, no external resources.
#include <string>

#include "coord/status_http.h"

namespace spmd {

const std::string& status_page_html() {
  static const std::string page = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>spmd job status</title>
<style>
  body { font-family: sans-serif; margin: 1.5em; color: #111; }
  h1 { font-size: 1.3em; margin: 0 0 0.3em 0; }
  #meta { color: #555; margin-bottom: 0.8em; }
  #error { display: none; background: #fff3cd; border: 1px solid #e0b000; padding: 0.5em; }
  table { border-collapse: collapse; }
  th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
  th { background: #eee; }
  td.num { text-align: right; font-variant-numeric: tabular-nums; }
  tr.blocked { background: #fff8dc; }
  tr.dead { background: #ddd; color: #666; }
  tr.left, tr.leaving { color: #666; }
  tr.waited-for { background: #ff4136; color: #fff; font-weight: bold; }
  #culprits li { margin: 0.2em 0; }
  h2 { font-size: 1.1em; margin: 1em 0 0.3em 0; }
  #groups-more { color: #555; margin-top: 0.4em; }
</style>
</head>
<body>
<h1>spmd job status</h1>
<div id="meta">loading…</div>
<div id="error"></div>
<ul id="culprits"></ul>
<table>
  <thead><tr><th>process</th><th>state</th><th>host</th><th>pid</th><th>call</th>
  <th>since</th><th>last heard</th><th>waiting for</th><th>waited for by</th></tr></thead>
  <tbody id="rows"></tbody>
</table>
<div id="grouped" style="display: none">
<h2>Every process, grouped by state and call</h2>
<table>
  <thead><tr><th>state</th><th>call</th><th>processes</th><th>which</th><th>longest</th>
  <th>hosts</th></tr></thead>
  <tbody id="groups"></tbody>
</table>
<div id="groups-more"></div>
</div>
<script>
"use strict";
function seconds(ms) { return ms < 0 ? "–" : (ms / 1000).toFixed(1) + " s"; }
function cell(row, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  row.appendChild(td);
}
function processRow(p) {
  const tr = document.createElement("tr");
  tr.id = "process-" + p.process;
  tr.className = p.state.replace(" ", "-");
  if (p.waited_for_by > 0 && p.state !== "blocked") tr.classList.add("waited-for");
  cell(tr, p.process, "num");
  cell(tr, p.state + (p.detail ? " (" + p.detail + ")" : ""));
  cell(tr, p.host);
  cell(tr, p.pid, "num");
  cell(tr, p.call);
  cell(tr, seconds(p.since_ms), "num");
  cell(tr, seconds(p.heartbeat_age_ms), "num");
  cell(tr, p.waiting_for.join(", "));
  cell(tr, p.waited_for_by > 0 ? p.waited_for_by : "", "num");
  return tr;
}
function groupRow(g) {
  const tr = document.createElement("tr");
  tr.className = "group " + g.state.replace(" ", "-");
  cell(tr, g.state);
  cell(tr, g.call);
  cell(tr, g.count, "num");
  cell(tr, g.processes);
  cell(tr, seconds(g.longest_ms), "num");
  cell(tr, g.hosts, "num");
  return tr;
}
// A job of up to 64 processes comes with every row; a larger one with the processes that hold
// the others up, in full, and every process counted in a group of those alike (summary.json).
function render(s) {
  const started = performance.now();
  const rows = document.getElementById("rows");
  const culprits = document.getElementById("culprits");
  const groups = document.getElementById("groups");
  rows.replaceChildren();
  culprits.replaceChildren();
  groups.replaceChildren();
  let live = 0;
  for (const g of s.groups) {
    if (g.state === "running" || g.state === "blocked") live += g.count;
  }
  for (const p of s.rows || s.culprits) rows.appendChild(processRow(p));
  for (const p of s.culprits) {
    const li = document.createElement("li");
    const all = p.waited_for_by >= live - 1;
    li.textContent = (all ? "Every other process waits for this one: " :
                      p.waited_for_by + " processes wait for this one: ") + p.summary;
    culprits.appendChild(li);
  }
  if (s.culprits_more > 0) {
    const li = document.createElement("li");
    li.textContent = "and " + s.culprits_more + " more processes that others wait for";
    culprits.appendChild(li);
  }
  const grouped = !s.rows;
  document.getElementById("grouped").style.display = grouped ? "block" : "none";
  if (grouped) {
    for (const g of s.groups) groups.appendChild(groupRow(g));
    document.getElementById("groups-more").textContent = s.groups_more > 0 ?
        s.groups_more + " more groups, of " + s.processes_more + " processes" : "";
  }
  document.getElementById("meta").textContent = s.num_processes + " processes · updated " +
      new Date().toLocaleTimeString();
  document.body.dataset.renderMs = (performance.now() - started).toFixed(1);
}
async function refresh() {
  const error = document.getElementById("error");
  try {
    const answer = await fetch("summary.json" + location.search, {cache: "no-store"});
    if (!answer.ok) throw new Error(await answer.text());
    const summary = await answer.json();
    if (summary.error) throw new Error(summary.error);
    render(summary);
    error.style.display = "none";
  } catch (e) {
    error.textContent = "The coordination service does not answer (the job may have ended): " + e;
    error.style.display = "block";
  }
}
// The next question a second after the last answer, never before it: a slow answer (a large
// job) is not asked again while it is being built.
async function poll() {
  await refresh();
  setTimeout(poll, 1000);
}
poll();
</script>
</body>
</html>
)HTML";
  return page;
}

}  // namespace spmd
