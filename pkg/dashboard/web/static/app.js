// Caldera's dashboard: reads the dashboard's JSON API, renders one view at
// a time, and refetches the view shown when the server says its model
// changed (server-sent events on /api/watch).
"use strict";

const colors = ["#4a78c2", "#d08c2f", "#3c9d6b", "#b04a8c", "#6a5acd", "#8a6d3b", "#2a9bb3"];
let shown = 0;          // version of the model the view shows
let latest = 0;         // latest version the server announced
let rendering = false;
let again = false;      // a render was asked for while one ran

// h makes an element: h("td", {class: "num"}, "text", child, ...).
function h(tag, attrs, ...kids) {
  const el = document.createElementNS(tag === "svg" || attrs && attrs.svg ? "http://www.w3.org/2000/svg" : "http://www.w3.org/1999/xhtml", tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "svg" || v === undefined || v === null || v === false) continue;
    if (k === "onclick") el.addEventListener("click", v);
    else if (k === "onchange") el.addEventListener("change", v);
    else el.setAttribute(k, v);
  }
  for (const kid of kids.flat()) {
    if (kid === undefined || kid === null) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

async function get(path) {
  const r = await fetch(path, {headers: {Accept: "application/json"}});
  if (!r.ok) throw new Error(`${path}: ${r.status} ${(await r.text()).trim()}`);
  return r.json();
}

function route() {
  const hash = location.hash.slice(1) || "queues";
  const [path, query] = hash.split("?");
  return {parts: path.split("/").map(decodeURIComponent), params: new URLSearchParams(query || "")};
}

function link(hash, text) { return h("a", {href: "#" + hash}, text); }

function plural(n, noun) { return `${n} ${noun}${n === 1 ? "" : "s"}`; }

function percent(f) { return Math.round(f * 100) + "%"; }

function bar(fraction, title) {
  const inner = h("span");
  inner.style.width = Math.min(100, Math.max(0, fraction * 100)) + "%";
  return h("span", {class: fraction > 1 ? "bar over" : "bar", title: title || percent(fraction)}, inner);
}

function age(iso, now) {
  if (!iso || iso.startsWith("0001-")) return "-";
  const s = Math.max(0, (new Date(now) - new Date(iso)) / 1000);
  if (s < 120) return Math.round(s) + "s";
  if (s < 7200) return Math.round(s / 60) + "m";
  if (s < 172800) return Math.round(s / 3600) + "h";
  return Math.round(s / 86400) + "d";
}

let summary = null;

async function renderSummary() {
  summary = await get("/api/summary");
  const s = summary;
  const phases = Object.entries(s.jobPhases || {}).sort().map(([p, n]) => `${n} ${p}`).join(", ");
  const parts = [
    h("span", {}, `${s.scope} · ${s.queues} queues · ${s.jobs} jobs${phases ? " (" + phases + ")" : ""} · ${s.readyNodes}/${s.nodes} nodes ready · ${s.boundPods} pods placed of ${s.pods}`),
  ];
  if (s.federation) {
    parts[0].append(` · ${s.readyMembers || 0}/${s.members || 0} members ready · ${plural(s.heldBindings || 0, "binding")} held`);
  }
  document.querySelector('nav a[data-view="federation"]').hidden = !s.federation;
  for (const [kind, why] of Object.entries(s.denied || {})) {
    parts.push(h("div", {class: "denied", "data-denied": kind}, `${kind} not shown: ${why}`));
  }
  document.getElementById("summary").replaceChildren(...parts);
}

// ---- Queues -------------------------------------------------------------

async function renderQueues(params) {
  const data = await get("/api/queues");
  const rows = [];
  for (const q of data.items) {
    const res = q.resources.length ? q.resources : [{resource: "", allocated: "", deserved: "", guarantee: "", capability: "", share: 0}];
    res.forEach((r, i) => {
      const first = i === 0;
      rows.push(h("tr", {class: first ? "first" : null, "data-queue": q.name, "data-resource": r.resource},
        h("td", {}, first ? h("span", {class: "tree"}, "\u2003".repeat(q.depth), link("queues?queue=" + encodeURIComponent(q.name), q.name)) : ""),
        h("td", {class: "state"}, first ? (q.state || "-") : ""),
        h("td", {class: "num weight"}, first ? q.weight : ""),
        h("td", {class: "resource"}, r.resource || "-"),
        h("td", {class: "num allocated"}, r.allocated || "-"),
        h("td", {class: "num deserved"}, r.deserved || "-"),
        h("td", {class: "num guarantee"}, r.guarantee || "-"),
        h("td", {class: "num capability"}, r.capability || "-"),
        h("td", {class: "share"}, r.shareOf ? [bar(r.share, `${percent(r.share)} of ${r.shareOf}`), percent(r.share) + " of " + r.shareOf] : "-"),
        h("td", {class: "num jobs"}, first ? link("jobs?queue=" + encodeURIComponent(q.name), q.jobs) : ""),
      ));
    });
  }
  const parts = [h("h2", {}, "Queues"),
    h("table", {id: "queues"},
      h("thead", {}, h("tr", {}, ["Queue", "State", "Weight", "Resource", "Allocated", "Deserved", "Guarantee", "Capability", "Use", "Jobs"].map(t => h("th", {}, t)))),
      h("tbody", {}, rows))];
  const name = params.get("queue");
  if (name) parts.push(...await queueHistory(name));
  return parts;
}

// queueHistory plots a queue's share of each resource over time.
async function queueHistory(name) {
  const s = await get("/api/queues/" + encodeURIComponent(name) + "/history");
  const W = 720, H = 200, L = 40, B = 20;
  const times = s.times.map(t => new Date(t).getTime());
  const resources = Object.keys(s.shares).sort();
  const top = Math.max(1, ...resources.flatMap(r => s.shares[r]));
  const svg = h("svg", {class: "plot", width: W, height: H, viewBox: `0 0 ${W} ${H}`, id: "share-plot"});
  const y = v => H - B - (v / top) * (H - B - 10);
  const t0 = times[0] || 0, t1 = times[times.length - 1] || 1;
  const x = t => L + (t1 === t0 ? 0 : (t - t0) / (t1 - t0)) * (W - L - 10);
  for (const v of [0, 0.5, 1, top].filter((v, i, a) => a.indexOf(v) === i)) {
    svg.append(h("line", {svg: 1, x1: L, x2: W - 10, y1: y(v), y2: y(v), stroke: v === 1 ? "#9aa3ad" : "#e3e6ea"}));
    svg.append(h("text", {svg: 1, x: 4, y: y(v) + 4}, percent(v)));
  }
  const legend = h("div", {class: "legend"});
  resources.forEach((r, i) => {
    const color = colors[i % colors.length];
    let d = "", pen = false;
    s.shares[r].forEach((v, j) => {
      if (v < 0) { pen = false; return; }
      d += (pen ? "L" : "M") + x(times[j]).toFixed(1) + "," + y(v).toFixed(1);
      pen = true;
    });
    svg.append(h("path", {svg: 1, d: d, fill: "none", stroke: color, "stroke-width": 2, "data-resource": r}));
    const swatch = h("i");
    swatch.style.background = color;
    legend.append(h("span", {}, swatch, r));
  });
  const span = times.length > 1 ? `${Math.round((t1 - t0) / 60000)} min` : "one sample";
  return [h("h3", {}, `Share of ${name} over time (${span}; 100% is what it deserves, or its capability)`), svg, legend,
    times.length < 2 ? h("p", {class: "muted"}, "The dashboard samples every 10 seconds: the plot grows while it runs.") : null];
}

// ---- Jobs ---------------------------------------------------------------

async function renderJobs(params) {
  const q = new URLSearchParams();
  for (const k of ["queue", "namespace", "phase", "kind", "search", "sort", "page"]) if (params.get(k)) q.set(k, params.get(k));
  const data = await get("/api/jobs?" + q);
  const now = summary ? summary.now : new Date().toISOString();
  const setParam = (k, v) => {
    const p = new URLSearchParams(params);
    if (v) p.set(k, v); else p.delete(k);
    if (k !== "page") p.delete("page");
    location.hash = "jobs?" + p;
  };
  const input = (k, placeholder) => h("input", {type: "search", value: params.get(k) || "", placeholder, "data-filter": k,
    onchange: e => setParam(k, e.target.value.trim())});
  const select = (k, options) => {
    const s = h("select", {"data-filter": k, onchange: e => setParam(k, e.target.value)},
      options.map(([v, t]) => h("option", {value: v, selected: (params.get(k) || "") === v ? "selected" : null}, t)));
    return s;
  };
  const phases = ["", "NotStarted", "Pending", "Inqueue", "Running", "Restarting", "Completing", "Completed", "Terminating", "Terminated", "Aborting", "Aborted", "Failed", "Unknown"];
  const filters = h("div", {class: "filters"},
    h("label", {}, "queue ", input("queue", "any")),
    h("label", {}, "namespace ", input("namespace", "any")),
    h("label", {}, "phase ", select("phase", phases.map(p => [p, p || "any"]))),
    h("label", {}, "kind ", select("kind", [["", "any"], ["Job", "Job"], ["PodGroup", "PodGroup"]])),
    h("label", {}, "name ", input("search", "contains")),
    h("label", {}, "sort ", select("sort", [["", "by name"], ["newest", "newest first"]])));
  const rows = data.items.map(j => h("tr", {"data-job": `${j.kind}/${j.namespace}/${j.name}`},
    h("td", {}, j.kind),
    h("td", {}, j.namespace),
    h("td", {}, link(`job/${j.kind}/${encodeURIComponent(j.namespace)}/${encodeURIComponent(j.name)}`, j.name)),
    h("td", {}, link("jobs?queue=" + encodeURIComponent(j.queue), j.queue)),
    h("td", {class: "phase phase-" + j.phase}, j.phase),
    h("td", {class: "num"}, j.minMember),
    h("td", {class: "num", title: "running / pending / succeeded / failed"}, `${j.pods.running}/${j.pods.pending}/${j.pods.succeeded}/${j.pods.failed}`),
    h("td", {class: "num"}, age(j.created, now)),
    h("td", {class: "wrap waiting"}, j.waiting || "")));
  const pages = Math.max(1, Math.ceil(data.total / 100));
  const pager = h("div", {class: "pager"},
    data.page > 1 ? h("a", {href: "#", onclick: e => { e.preventDefault(); setParam("page", String(data.page - 1)); }}, "‹ previous") : null,
    h("span", {class: "muted"}, `page ${data.page} of ${pages} · ${data.total} rows`),
    data.page < pages ? h("a", {href: "#", onclick: e => { e.preventDefault(); setParam("page", String(data.page + 1)); }}, "next ›") : null);
  return [h("h2", {}, "Jobs"), filters,
    h("table", {id: "jobs"},
      h("thead", {}, h("tr", {}, ["Kind", "Namespace", "Name", "Queue", "Phase", "Min", "Pods R/P/S/F", "Age", "Waiting because"].map(t => h("th", {}, t)))),
      h("tbody", {}, rows)), pager];
}

async function renderJob(kind, ns, name) {
  const d = await get(`/api/jobs/${encodeURIComponent(kind)}/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`);
  const j = d.job;
  return [h("h2", {}, `${j.kind} ${j.namespace}/${j.name}`),
    h("p", {}, "Queue ", link("jobs?queue=" + encodeURIComponent(j.queue), j.queue), ` · phase `, h("span", {class: "phase-" + j.phase}, j.phase),
      j.podGroup ? ` · PodGroup ${j.podGroup} (${j.podGroupPhase || "no phase yet"}), at least ${j.minMember} pods together` : ""),
    h("h3", {}, "Why"),
    h("div", {class: "explanation", id: "explanation"}, d.explanation.map(l => h("p", {}, l))),
    d.eventsError ? h("p", {class: "error"}, "Without events: " + d.eventsError) : null,
    h("h3", {}, `Pods (${d.pods.length})`),
    h("table", {id: "pods"},
      h("thead", {}, h("tr", {}, ["Pod", "Phase", "Node", "GPU cards"].map(t => h("th", {}, t)))),
      h("tbody", {}, d.pods.map(p => h("tr", {},
        h("td", {}, p.name), h("td", {class: "phase-" + p.phase}, p.phase),
        h("td", {}, p.node ? link("nodes?search=" + encodeURIComponent(p.node), p.node) : "-"),
        h("td", {}, (p.cards || []).join(", ") || "-")))))];
}

// ---- Topology and nodes -------------------------------------------------

function usageCells(resources, names) {
  return names.map(n => {
    const u = resources.find(r => r.resource === n);
    return h("td", {class: "usage", "data-resource": n}, u ? [bar(u.use), `${u.requested} / ${u.allocatable}`] : "-");
  });
}

function resourceNames(rows) {
  const seen = new Set();
  for (const r of rows) for (const u of r.resources) seen.add(u.resource);
  const rank = n => n === "cpu" ? 0 : n === "memory" ? 1 : 2;
  return [...seen].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

async function renderHyperNodes() {
  const data = await get("/api/hypernodes");
  if (data.items.length === 0) {
    return [h("h2", {}, "Topology"), h("p", {class: "muted"}, "No HyperNodes: the cluster has no network topology described (see docs/topology.md).")];
  }
  const names = resourceNames(data.items);
  return [h("h2", {}, "Topology"),
    h("table", {id: "hypernodes"},
      h("thead", {}, h("tr", {}, ["HyperNode", "Tier", "Nodes ready", ...names.map(n => n + " requested / allocatable"), "Problems"].map(t => h("th", {}, t)))),
      h("tbody", {}, data.items.map(x => h("tr", {"data-hypernode": x.name},
        h("td", {}, "\u2003".repeat(x.depth), link("nodes?hyperNode=" + encodeURIComponent(x.name), x.name)),
        h("td", {}, x.tierName ? `${x.tier} (${x.tierName})` : x.tier),
        h("td", {class: "num"}, `${x.readyNodes}/${x.nodes}`),
        usageCells(x.resources, names),
        h("td", {class: "wrap error"}, (x.problems || []).join("; "))))))];
}

function cards(list) {
  if (!list || list.length === 0) return "-";
  return h("span", {class: "cards"}, list.map(c => {
    const fill = h("span");
    fill.style.height = (c.memoryMiB ? Math.min(100, 100 * c.usedMiB / c.memoryMiB) : 0) + "%";
    return h("span", {class: c.healthy ? "card" : "card unhealthy", "data-card": c.index,
      title: `card ${c.index}${c.healthy ? "" : " (unhealthy)"}: ${c.usedMiB}/${c.memoryMiB} MiB${c.pods.length ? " · " + c.pods.join(", ") : ""}`}, fill);
  }));
}

async function renderNodes(params) {
  const q = new URLSearchParams();
  for (const k of ["search", "hyperNode", "page"]) if (params.get(k)) q.set(k, params.get(k));
  const data = await get("/api/nodes?" + q);
  const names = resourceNames(data.items);
  const setParam = (k, v) => {
    const p = new URLSearchParams(params);
    if (v) p.set(k, v); else p.delete(k);
    if (k !== "page") p.delete("page");
    location.hash = "nodes?" + p;
  };
  const pages = Math.max(1, Math.ceil(data.total / 100));
  return [h("h2", {}, params.get("hyperNode") ? `Nodes under ${params.get("hyperNode")}` : "Nodes"),
    h("div", {class: "filters"}, h("label", {}, "name ", h("input", {type: "search", value: params.get("search") || "", placeholder: "contains",
      onchange: e => setParam("search", e.target.value.trim())}))),
    h("table", {id: "nodes"},
      h("thead", {}, h("tr", {}, ["Node", "Ready", "HyperNode", ...names.map(n => n + " requested / allocatable"), "Pods", "GPU cards"].map(t => h("th", {}, t)))),
      h("tbody", {}, data.items.map(n => h("tr", {"data-node": n.name},
        h("td", {}, n.name),
        h("td", {class: n.ready ? "phase-Running" : "phase-Failed"}, (n.ready ? "Ready" : "NotReady") + (n.unschedulable ? ", cordoned" : "")),
        h("td", {}, n.hyperNode || "-"),
        usageCells(n.resources, names),
        h("td", {class: "num", title: n.pods.map(p => `${p.namespace}/${p.name}${p.queue ? " (" + p.queue + ")" : ""}`).join("\n")}, n.pods.length),
        h("td", {}, cards(n.cards)))))),
    h("div", {class: "pager"},
      data.page > 1 ? h("a", {href: "#", onclick: e => { e.preventDefault(); setParam("page", String(data.page - 1)); }}, "‹ previous") : null,
      h("span", {class: "muted"}, `page ${data.page} of ${pages} · ${data.total} nodes`),
      data.page < pages ? h("a", {href: "#", onclick: e => { e.preventDefault(); setParam("page", String(data.page + 1)); }}, "next ›") : null)];
}

// ---- Federation ---------------------------------------------------------

async function renderFederation() {
  const d = await get("/api/federation");
  if (!d.enabled) {
    return [h("h2", {}, "Federation"), h("p", {class: "muted"},
      "Not shown: start the dashboard with --karmada-kubeconfig to see the member clusters and the work caldera-global holds.")];
  }
  const denied = Object.entries(d.denied || {}).map(([kind, why]) => h("div", {class: "denied", "data-denied": "karmada-" + kind}, `${kind} not shown: ${why}`));
  const names = resourceNames(d.members);
  const members = d.members.length === 0 ? h("p", {class: "muted"}, "Karmada has no member clusters.") :
    h("table", {id: "members"},
      h("thead", {}, h("tr", {}, ["Member", "Ready", "Region", "Nodes ready", ...names.map(n => n + " allocated / allocatable"), "Bindings", "Taints"].map(t => h("th", {}, t)))),
      h("tbody", {}, d.members.map(m => h("tr", {"data-member": m.name},
        h("td", {}, m.name),
        h("td", {class: m.ready ? "phase-Running" : "phase-Failed", title: m.condition || "no Ready condition reported"}, m.ready ? "Ready" : "NotReady"),
        h("td", {}, m.region || "-"),
        h("td", {class: "num"}, `${m.readyNodes}/${m.nodes}`),
        usageCells(m.resources, names),
        h("td", {class: "num"}, m.bindings),
        h("td", {class: "wrap"}, (m.taints || []).join(", ") || "-")))));
  const byRule = Object.entries(d.heldByRule || {}).sort().map(([r, n]) => `${n} ${r || "not decided yet"}`).join(", ");
  const held = d.held.length === 0 ? h("p", {class: "muted"}, "caldera-global holds nothing: all its work is placed.") :
    h("table", {id: "held"},
      h("thead", {}, h("tr", {}, ["Namespace", "Workload", "Queue", "Held for", "Rule", "Why"].map(t => h("th", {}, t)))),
      h("tbody", {}, d.held.map(b => h("tr", {"data-held": `${b.namespace}/${b.name}`},
        h("td", {}, b.namespace),
        h("td", {title: "ResourceBinding " + b.name}, `${b.kind} ${b.workload}`),
        h("td", {}, b.queue || "-"),
        h("td", {class: "num"}, b.waiting || "-"),
        h("td", {class: "rule"}, b.rule || "not decided yet"),
        h("td", {class: "wrap why"}, b.reason || "")))));
  return [h("h2", {}, `Federation (Karmada at ${d.host})`), denied,
    h("h3", {}, `Members (${d.members.length})`), members,
    h("h3", {}, `Held work (${d.held.length})${byRule ? " · " + byRule : ""}`), held,
    h("p", {class: "muted"}, `${plural(d.placed, "binding")} placed on members.`)];
}

// ---- Rendering and live updates -----------------------------------------

async function render() {
  if (rendering) { again = true; return; }
  rendering = true;
  const version = latest;
  const {parts, params} = route();
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.view === parts[0] || (parts[0] === "job" && a.dataset.view === "jobs"));
  try {
    await renderSummary();
    let content;
    switch (parts[0]) {
      case "jobs": content = await renderJobs(params); break;
      case "job": content = await renderJob(parts[1], parts[2], parts[3]); break;
      case "hypernodes": content = await renderHyperNodes(); break;
      case "nodes": content = await renderNodes(params); break;
      case "federation": content = await renderFederation(); break;
      default: content = await renderQueues(params);
    }
    const view = document.getElementById("view");
    view.replaceChildren(...[content].flat(Infinity).filter(x => x));
    shown = Math.max(version, summary.version);
    view.dataset.version = String(shown);
  } catch (err) {
    document.getElementById("view").replaceChildren(h("p", {class: "error"}, String(err.message || err)));
  } finally {
    rendering = false;
  }
  if (again || latest > shown) { again = false; render(); }
}

function connect() {
  const live = document.getElementById("live");
  const es = new EventSource("/api/watch");
  es.addEventListener("version", e => {
    live.textContent = "live";
    latest = Number(e.data);
    if (latest > shown) render();
  });
  es.onerror = () => { live.textContent = "reconnecting…"; };
}

window.addEventListener("hashchange", () => { shown = 0; render(); });
render();
connect();
