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
<script>
"use strict";
function seconds(ms) { return ms < 0 ? "–" : (ms / 1000).toFixed(1) + " s"; }
function cell(row, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  row.appendChild(td);
}
function render(table) {
  const rows = document.getElementById("rows");
  const culprits = document.getElementById("culprits");
  rows.replaceChildren();
  culprits.replaceChildren();
  const live = table.processes.filter(p => p.state === "running" || p.state === "blocked");
  for (const p of table.processes) {
    const tr = document.createElement("tr");
    tr.id = "process-" + p.process;
    tr.className = p.state.replace(" ", "-");
    const waitedFor = p.waited_for_by > 0 && p.state !== "blocked";
    if (waitedFor) tr.classList.add("waited-for");
    cell(tr, p.process, "num");
    cell(tr, p.state + (p.detail ? " (" + p.detail + ")" : ""));
    cell(tr, p.host);
    cell(tr, p.pid, "num");
    cell(tr, p.call);
    cell(tr, seconds(p.since_ms), "num");
    cell(tr, seconds(p.heartbeat_age_ms), "num");
    cell(tr, p.waiting_for.join(", "));
    cell(tr, p.waited_for_by > 0 ? p.waited_for_by : "", "num");
    rows.appendChild(tr);
    if (waitedFor) {
      const li = document.createElement("li");
      const all = p.waited_for_by >= live.length - 1;
      li.textContent = (all ? "Every other process waits for this one: " :
                        p.waited_for_by + " processes wait for this one: ") + p.summary;
      culprits.appendChild(li);
    }
  }
  document.getElementById("meta").textContent = table.num_processes + " processes · updated " +
      new Date().toLocaleTimeString();
}
async function refresh() {
  const error = document.getElementById("error");
  try {
    const answer = await fetch("status.json" + location.search, {cache: "no-store"});
    if (!answer.ok) throw new Error(await answer.text());
    render(await answer.json());
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
