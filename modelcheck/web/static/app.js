// modelcheck explore: the page. Plain JavaScript, no build step, nothing from elsewhere.
//
// The page keeps the path being explored (`S.path`: steps as the server sends them,
// initial state first, each with its state's cells) and a cursor into it; the server
// answers from the cells it is sent. Text from the server (values, labels, messages)
// is always set as text, never parsed as HTML.
"use strict";

const S = {
  info: null,        // GET /api/session
  initial: [],       // the initial states, as first steps
  trace: null,       // the loaded trace's steps, or null
  path: [],          // the current path: steps {action, params, label, state, changes}
  cursor: 0,         // the selected step
  loop: null,        // the lasso's loop start, while the path is the loaded trace
  exprs: [],         // expression columns: {expr, values, error}
  succ: null,        // {key, list} successors of the selected state
  view: "explore",
  graphKey: null,    // what the graph view shows, to redraw only when it changes
  version: 0,        // counts the changes of the path (answers for older paths are dropped)
};

// ------------------------------------------------------------------ helpers
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

const $ = (id) => document.getElementById(id);

async function api(path, body) {
  const opts = body === undefined ? {} : {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body),
  };
  const answer = await fetch(path, opts);
  let data;
  try {
    data = JSON.parse(await answer.text());
  } catch (e) {
    data = {error: `${answer.status} ${answer.statusText}`};
  }
  if (!answer.ok) throw new Error(data.error || `${answer.status} ${answer.statusText}`);
  return data;
}

function status(text, kind) {
  const f = $("status");
  f.textContent = text || "";
  f.className = kind || "";
}

function cellsKey(cells) { return cells.join(","); }

function sameStep(a, b) {
  return a.action === b.action && JSON.stringify(a.params) === JSON.stringify(b.params)
    && cellsKey(a.state.cells) === cellsKey(b.state.cells);
}

function changedPaths(step) { return new Set(step.changes.map((c) => c.path)); }

// ------------------------------------------------------------------ loading
async function load() {
  try {
    S.info = await api("/api/session");
    const init = await api("/api/initial");
    S.initial = init.states;
    const sel = $("initial");
    sel.replaceChildren(...(S.info.trace ? [el("option", {value: ""}, "the trace")] : []),
      ...S.initial.map((st, i) => el("option", {value: String(i)}, `initial state ${i + 1}`)));
    if (init.count > S.initial.length) {
      sel.append(el("option", {disabled: true}, `(${init.count - S.initial.length} more)`));
    }
    document.title = `explore ${S.info.spec}`;
    $("spec-title").textContent = S.info.title;
    if (S.info.trace) {
      S.trace = S.info.trace.steps;
      resetToTrace();
    } else {
      $("reset").disabled = true;
      startFrom(0);
    }
    banner();
    renderViolation();
    renderRun();
  } catch (e) {
    status(`cannot load the explorer: ${e.message}`, "error");
  }
}

function banner() {
  const b = $("banner");
  const items = [];
  const t = S.info.trace;
  for (const n of S.info.notes) items.push(el("div", {class: "note"}, `note: ${n}`));
  if (t) {
    items.push(el("div", {class: "trace-info"},
      `Trace ${t.source ? "from " + t.source + ": " : ""}${t.describe}`));
    if (t.violation) items.push(el("div", {class: "alert", id: "violation-text"}, t.violation));
    else items.push(el("div", {class: "note", id: "violation-text", hidden: true}));
    if (!t.replay.ok) {
      items.push(el("pre", {class: "alert", id: "replay-failure"},
        `This trace is not a behaviour of ${S.info.title}:\n${t.replay.message}`));
    }
  }
  b.replaceChildren(...items);
}

// the step a loaded trace opens at: the first state that violates an invariant (or
// step that violates an action property), else the last state of a counterexample
function violatingStep() {
  const i = S.trace.findIndex((s) => s.state.invariants.length ||
    (s.properties && s.properties.length));
  if (i >= 0) return i;
  return S.info.trace.violation ? S.trace.length - 1 : 0;
}

function resetToTrace() {
  if (!S.trace) return;
  S.path = S.trace.slice();
  S.loop = S.info.trace.loop;
  S.cursor = violatingStep();
  $("initial").value = "";
  pathChanged();
  const row = document.querySelector(`#timeline-body tr[data-step="${S.cursor}"]`);
  if (row) row.scrollIntoView({block: "nearest"});
}

// the banner's line about the counterexample: the trace's own verdict while the path
// is the trace, else where the path left it and what the path's own states violate
function renderViolation() {
  const line = $("violation-text");
  const t = S.info && S.info.trace;
  if (!line || !t) return;
  const onTrace = S.path.length === S.trace.length && branchPoint() === null;
  if (onTrace) {
    line.hidden = !t.violation;
    line.className = "alert";
    line.textContent = t.violation || "";
    return;
  }
  const branch = branchPoint();
  const lead = branch === 0 ? "This path does not start as the counterexample does."
    : branch === null ? `This path stops at state ${S.path.length} of the counterexample ` +
      `(${S.trace.length} states).`
      : `This path branched off the counterexample after state ${branch}.`;
  const bad = S.path.map((s, i) => [i, s.state.invariants]).filter(([, v]) => v.length);
  const verdict = bad.length ? ` State ${bad[0][0] + 1} of this path violates invariant ` +
    `${bad[0][1].join(", ")}.` : " No state of this path violates an invariant.";
  line.hidden = false;
  line.className = bad.length ? "alert" : "note";
  line.textContent = lead + verdict + (t.violation ? " \u201cReset to trace\u201d shows the " +
    "counterexample again." : "");
}

function startFrom(i) {
  S.path = [S.initial[i]];
  S.loop = null;
  S.cursor = 0;
  $("initial").value = String(i);
  pathChanged();
}

// the index of the first step where the path leaves the loaded trace (null: it does not)
function branchPoint() {
  if (!S.trace) return null;
  const n = Math.min(S.trace.length, S.path.length);
  for (let i = 0; i < n; i++) if (!sameStep(S.trace[i], S.path[i])) return i;
  return S.path.length > S.trace.length ? S.trace.length : null;
}

function pathChanged() {
  S.version += 1;
  evaluateAll();
  render();
  renderViolation();
}

// ------------------------------------------------------------------ navigation
function select(k) {
  if (k < 0 || k >= S.path.length || k === S.cursor) return;
  S.cursor = k;
  render();
  const row = document.querySelector(`#timeline-body tr[data-step="${k}"]`);
  if (row) row.scrollIntoView({block: "nearest"});
}

function choose(step) {
  const next = S.path[S.cursor + 1];
  if (next && sameStep(next, step)) {  // the path already goes there: keep its tail
    select(S.cursor + 1);
    return;
  }
  S.path = S.path.slice(0, S.cursor + 1).concat([step]);
  S.loop = null;
  S.cursor += 1;
  pathChanged();
}

document.addEventListener("keydown", (ev) => {
  if (ev.target instanceof HTMLInputElement || ev.target instanceof HTMLSelectElement) return;
  if (ev.altKey || ev.ctrlKey || ev.metaKey || S.view !== "explore") return;
  const moves = {ArrowLeft: -1, ArrowUp: -1, k: -1, ArrowRight: 1, ArrowDown: 1, j: 1};
  if (ev.key in moves) select(S.cursor + moves[ev.key]);
  else if (ev.key === "Home") select(0);
  else if (ev.key === "End") select(S.path.length - 1);
  else return;
  ev.preventDefault();
});

// ------------------------------------------------------------------ rendering
function render() {
  $("back").disabled = S.cursor === 0;
  $("forward").disabled = S.cursor >= S.path.length - 1;
  renderTimeline();
  renderState();
  renderSuccessors();
  if (S.view === "graph") renderGraph();
}

function renderTimeline() {
  const head = $("timeline-head");
  head.replaceChildren(el("th", {}, "#"), el("th", {}, "action"),
    ...S.exprs.map((x, i) => el("th", {class: "expr" + (x.error ? " error" : ""),
      title: x.error || x.expr, dataset: {expr: x.expr}},
    x.expr, " ", el("button", {type: "button", class: "remove", title: "remove this column",
      onclick: () => { S.exprs.splice(i, 1); renderTimeline(); }}, "×"))));
  const branch = branchPoint();
  const rows = S.path.map((step, i) => {
    const marks = [];
    if (S.loop !== null && i === S.loop && S.loop < S.path.length - 1) {
      marks.push(el("span", {class: "mark loop", title: "the loop starts here"}, "↺ loop start"));
    }
    if (S.loop !== null && i === S.path.length - 1) {
      marks.push(el("span", {class: "mark loop", title: S.loop === i ?
        "the behaviour stutters here forever" : `this state is state ${S.loop + 1}`},
      S.loop === i ? "↺ stutters" : `↺ = state ${S.loop + 1}`));
    }
    if (branch !== null && i === branch) {
      marks.push(el("span", {class: "mark branch", title: "the path leaves the trace here"},
        "↳ branch"));
    }
    if (step.state.invariants.length) {
      marks.push(el("span", {class: "mark bad", title: "violates " +
        step.state.invariants.join(", ")}, "✗ " + step.state.invariants.join(", ")));
    }
    const cls = [i === S.cursor ? "current" : "",
      S.loop !== null && i >= S.loop ? "in-loop" : "",
      branch !== null && i >= branch ? "branched" : ""].join(" ");
    return el("tr", {class: cls, dataset: {step: String(i)}, onclick: () => select(i)},
      el("td", {class: "num"}, String(i + 1)),
      el("td", {class: "label"}, el("span", {class: "action"}, step.label), " ",
        step.changes.length ? el("span", {class: "dim count", title: `this step changed ` +
          `${step.changes.length} value${step.changes.length === 1 ? "" : "s"}: ` +
          step.changes.map((c) => c.path).join(", ")}, `(${step.changes.length})`) : "",
        ...marks),
      ...S.exprs.map((x) => el("td", {class: "expr-value" + (x.error ? " error" : "")},
        x.values ? x.values[i] : "…")));
  });
  $("timeline-body").replaceChildren(...rows);
  $("path-info").textContent = `${S.path.length} state${S.path.length === 1 ? "" : "s"}`;
  const lt = $("loop-text");
  lt.textContent = S.loop !== null && S.info.trace ? S.info.trace.loop_text.join("\n") : "";
}

function renderState() {
  const step = S.path[S.cursor];
  $("state-title").textContent = `State ${S.cursor + 1}: ${step.label}`;
  const changed = changedPaths(step);
  const alerts = [];
  if (step.state.invariants.length) {
    alerts.push(el("div", {class: "alert"}, "This state violates invariant " +
      step.state.invariants.join(", ") + "."));
  }
  if (step.state.error) alerts.push(el("pre", {class: "alert"}, step.state.error));
  if (step.properties && step.properties.length) {
    alerts.push(el("div", {class: "alert"}, "This step violates action property " +
      step.properties.join(", ") + "."));
  }
  $("state-alerts").replaceChildren(...alerts);
  $("changes").replaceChildren(...step.changes.map((c) => el("li", {},
    el("span", {class: "path"}, c.path), ": ", el("span", {class: "old"}, c.old), " → ",
    el("span", {class: "new"}, c.new))));
  const rows = step.state.vars.map((v) => {
    const varChanged = [...changed].some((p) => p === v.name || p.startsWith(v.name + "["));
    const value = v.leaves
      ? v.leaves.map((l) => el("span", {class: "leaf" + (changed.has(l.path) ? " changed" : ""),
        dataset: {path: l.path}}, el("span", {class: "key"}, l.key), " ", l.text))
      : [el("span", {class: "leaf" + (changed.has(v.name) ? " changed" : ""),
        dataset: {path: v.name}}, v.text)];
    return el("tr", {class: varChanged ? "changed" : "", dataset: {var: v.name}},
      el("th", {}, v.name), el("td", {}, ...value));
  });
  $("state-body").replaceChildren(...rows);
}

async function renderSuccessors() {
  const cells = S.path[S.cursor].state.cells;
  const key = cellsKey(cells);
  const list = $("successors");
  if (!S.succ || S.succ.key !== key) {
    list.replaceChildren(el("li", {class: "dim"}, "…"));
    $("succ-info").textContent = "";
    try {
      const r = await api("/api/successors", {cells});
      S.succ = {key, list: r.successors, outside: r.outside_constraints};
    } catch (e) {
      S.succ = {key, list: [], error: e.message};
    }
    if (cellsKey(S.path[S.cursor].state.cells) !== key) return;  // moved on meanwhile
  }
  const next = S.path[S.cursor + 1];
  const items = S.succ.list.map((s) => {
    const taken = next && sameStep(next, s);
    const badges = [];
    if (taken) badges.push(el("span", {class: "badge taken"}, "next in path"));
    if (s.state.invariants.length) {
      badges.push(el("span", {class: "badge bad"}, "✗ " + s.state.invariants.join(", ")));
    }
    if (s.properties.length) {
      badges.push(el("span", {class: "badge bad"}, "✗ " + s.properties.join(", ")));
    }
    if (!s.inside) badges.push(el("span", {class: "badge"}, "outside the constraints"));
    const diff = s.changes.map((c) => `${c.path}: ${c.old} → ${c.new}`).join("; ");
    return el("li", {class: taken ? "taken" : ""},
      el("button", {type: "button", class: "succ", dataset: {label: s.label},
        onclick: () => choose(s)}, s.label), ...badges,
      el("div", {class: "diff"}, diff || "(no variable changes)"));
  });
  if (S.succ.error) items.push(el("li", {}, el("pre", {class: "alert"}, S.succ.error)));
  else if (!items.length) {
    items.push(el("li", {class: "alert"}, S.succ.outside
      ? "This state is outside the state constraints: it is not expanded by the checker."
      : "No action is enabled: a deadlock."));
  }
  list.replaceChildren(...items);
  $("succ-info").textContent = S.succ.list.length ? `(${S.succ.list.length})` : "";
}

// ------------------------------------------------------------------ expressions
function pathBody() {
  return S.path.map((s) => ({action: s.action, params: s.params, cells: s.state.cells}));
}

async function evaluateOne(x) {
  const version = S.version;
  x.values = null;
  x.error = null;
  let values, error = null;
  try {
    values = (await api("/api/eval", {expr: x.expr, path: pathBody()})).values;
  } catch (e) {
    error = e.message;
  }
  if (version !== S.version) return;  // the path changed meanwhile: a newer answer comes
  x.values = error === null ? values : S.path.map(() => "error");
  x.error = error;
  if (error !== null) status(error, "error");
}

async function evaluateAll() {
  const exprs = S.exprs.slice();
  await Promise.all(exprs.map(evaluateOne));
  renderTimeline();
}

$("expr-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const expr = $("expr").value.trim();
  if (!expr) return;
  const x = {expr, values: null, error: null};
  S.exprs.push(x);
  renderTimeline();
  await evaluateOne(x);
  if (!x.error) status(`evaluated ${expr}`);
  renderTimeline();
  const heads = document.querySelectorAll("#timeline-head th.expr");
  if (heads.length) heads[heads.length - 1].scrollIntoView({block: "nearest", inline: "nearest"});
});

// ------------------------------------------------------------------ saving
$("save").addEventListener("click", async () => {
  try {
    const r = await api("/api/save", {path: pathBody(), loop: S.loop});
    const url = URL.createObjectURL(new Blob([r.itf], {type: "application/json"}));
    const a = el("a", {href: url, download: r.filename});
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    if (r.replay.ok) status(`saved ${r.filename}: a behaviour of ${S.info.title}`);
    else status(`saved ${r.filename}, but it is not a behaviour of the spec: ` +
      r.replay.message, "error");
  } catch (e) {
    status(`cannot save: ${e.message}`, "error");
  }
});

// ------------------------------------------------------------------ run results
function renderRun() {
  const run = S.info.run;
  $("run-none").hidden = !!run;
  $("run-content").hidden = !run;
  if (!run) return;
  const fmt = (n) => (n === null || n === undefined ? "—" : Number(n).toLocaleString("en"));
  const rows = [
    ["status", run.status + (run.reason ? ` (${run.reason})` : "")],
    ["spec", `${run.spec} ` + Object.entries(run.constants).map(([k, v]) => `${k}=${v}`).join(", ")],
    ["distinct states", fmt(run.distinct_states)],
    ["generated", fmt(run.generated_states)],
    ["depth", fmt(run.depth)],
    ["seconds", run.seconds === null ? "—" : String(run.seconds)],
  ];
  if (run.symmetry.length) rows.push(["symmetry", run.symmetry.join(", ")]);
  if (run.command) rows.push(["command", run.command]);
  $("run-summary").replaceChildren(...rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
  const v = run.violation;
  $("run-violation").replaceChildren(...(v ? [el("div", {class: "alert"}, v.text ||
    `${v.kind} ${v.property}`), el("div", {class: "dim"},
    `counterexample of ${v.trace_length} states`)] : run.error ? [el("pre", {class: "alert"}, run.error)]
    : run.message ? [el("div", {}, run.message)] : []));
  const never = run.coverage.filter((c) => c.never_enabled).length;
  $("coverage-info").textContent = never ? `(${never} never enabled)` : "";
  $("coverage-body").replaceChildren(...run.coverage.map((c) => el("tr",
    {class: c.never_enabled ? "never" : ""},
    el("td", {}, c.action), el("td", {}, c.params), el("td", {class: "num"}, fmt(c.fired)),
    el("td", {class: "num"}, fmt(c.new_states)),
    el("td", {}, c.never_enabled ? el("span", {class: "badge bad"}, "never enabled") : ""))));
  $("levels-chart").replaceChildren(levelsChart(run.levels));
}

function levelsChart(levels) {
  if (!levels.length) return el("p", {class: "dim"}, "no levels recorded");
  const W = 720, H = 240, L = 64, B = 34, T = 14;
  const max = Math.max(1, ...levels.map((l) => Math.max(l.new, l.generated)));
  const bw = (W - L - 10) / levels.length;
  const y = (v) => T + (H - T - B) * (1 - v / max);
  const g = svg("svg", {viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img",
    "aria-label": "states per BFS level"});
  for (const frac of [0, 0.5, 1]) {
    const v = Math.round(max * frac);
    g.append(svg("line", {x1: L, x2: W - 10, y1: y(v), y2: y(v), class: "grid"}),
      svg("text", {x: L - 6, y: y(v) + 4, class: "axis", "text-anchor": "end"},
        v.toLocaleString("en")));
  }
  levels.forEach((l, i) => {
    const x = L + i * bw;
    g.append(
      svg("rect", {x: x + bw * 0.1, y: y(l.generated), width: bw * 0.8,
        height: Math.max(0, y(0) - y(l.generated)), class: "bar generated"},
      svg("title", {}, `level ${l.depth}: ${l.generated.toLocaleString("en")} generated`)),
      svg("rect", {x: x + bw * 0.25, y: y(l.new), width: bw * 0.5,
        height: Math.max(0, y(0) - y(l.new)), class: "bar new"},
      svg("title", {}, `level ${l.depth}: ${l.new.toLocaleString("en")} new states`)));
    if (levels.length <= 40 || i % Math.ceil(levels.length / 40) === 0) {
      g.append(svg("text", {x: x + bw / 2, y: H - B + 14, class: "axis",
        "text-anchor": "middle"}, String(l.depth)));
    }
  });
  g.append(svg("text", {x: (W + L) / 2, y: H - 4, class: "axis", "text-anchor": "middle"},
    "BFS level"));
  const legend = el("div", {class: "legend"}, el("span", {class: "key-new"}, "new states"),
    " ", el("span", {class: "key-generated"}, "generated"));
  return el("div", {}, g, legend);
}

// ------------------------------------------------------------------ graph
async function renderGraph() {
  const cells = S.path[S.cursor].state.cells;
  const radius = Number($("radius").value);
  const key = `${cellsKey(cells)}|${radius}|${S.cursor}|${S.path.length}`;
  if (S.graphKey === key) return;
  S.graphKey = key;
  const box = $("graph");
  $("graph-info").textContent = "building…";
  let r;
  try {
    r = await api("/api/graph", {cells, radius});
  } catch (e) {
    box.replaceChildren(el("pre", {class: "alert"}, e.message));
    $("graph-info").textContent = "";
    return;
  }
  if (S.graphKey !== key) return;
  // over --graph-limit there is no graph at any radius: say why, hide what does nothing
  $("graph-controls").hidden = r.status === "too-large";
  $("graph-legend").hidden = r.status !== "ok";
  $("graph-detail").hidden = r.status !== "ok";
  if (r.status !== "ok") {
    box.replaceChildren(el("p", {class: "alert", id: "graph-message"}, r.message));
    $("graph-info").textContent = "";
    return;
  }
  $("graph-info").textContent = `${r.nodes.length} of ${r.states.toLocaleString("en")} ` +
    `reachable states${r.truncated ? " (the nearest only)" : ""}; click a state to see it, ` +
    "a successor to go there";
  box.replaceChildren(drawGraph(r));
  const cur = r.nodes.find((n) => n.distance === 0);
  $("graph-detail").textContent = `this state (state ${S.cursor + 1} of the path):\n${cur.label}`;
}

function drawGraph(r) {
  const cols = new Map();
  for (const n of r.nodes) {
    if (!cols.has(n.distance)) cols.set(n.distance, []);
    cols.get(n.distance).push(n);
  }
  const ds = [...cols.keys()].sort((a, b) => a - b);
  const NW = 170, CW = NW + 150, RH = 44, NH = 26, M = 30;
  const rows = Math.max(...[...cols.values()].map((c) => c.length));
  const W = M * 2 + CW * (ds.length - 1) + NW + 30, H = M * 2 + RH * rows;  // +30: a loop
  const pos = new Map();
  ds.forEach((d, ci) => {
    const col = cols.get(d);
    const top = M + (H - 2 * M - RH * col.length) / 2;
    col.forEach((n, ri) => pos.set(n.id, {x: M + ci * CW, y: top + ri * RH, n}));
  });
  // as wide as the pane at most (a wide neighbourhood is scaled down, never cut off)
  const g = svg("svg", {viewBox: `0 0 ${W} ${H}`, class: "graph", width: "100%",
    style: `max-width: ${W}px`});
  g.append(svg("defs", {}, svg("marker", {id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
    markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse"},
  svg("path", {d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead"}))));
  const grouped = new Map();
  for (const e of r.edges) {
    const k = `${e.from}>${e.to}`;
    if (!grouped.has(k)) grouped.set(k, []);
    grouped.get(k).push(e);
  }
  for (const [k, es] of grouped) {
    const a = pos.get(es[0].from), b = pos.get(es[0].to);
    const labels = es.map((e) => e.label).join("\n");
    let d, lx, ly;
    if (a === b) {
      d = `M ${a.x + NW - 20} ${a.y} c 10 -24 30 -24 20 0`;
      lx = a.x + NW - 5;
      ly = a.y - 22;
    } else {
      // left to right, right to left, or within a column (a bend to the right)
      const x1 = b.x < a.x ? a.x : a.x + NW, x2 = b.x > a.x ? b.x : b.x + NW;
      const y1 = a.y + NH / 2, y2 = b.y + NH / 2;
      const mid = b.x === a.x ? x1 + 40 : (x1 + x2) / 2;
      d = `M ${x1} ${y1} C ${mid} ${y1}, ${mid} ${y2}, ${x2} ${y2}`;
      lx = b.x === a.x ? x1 + 32 : mid;  // the curve's middle
      ly = (y1 + y2) / 2 - 3;
    }
    const fromCurrent = a.n.distance === 0;
    const text = es.map((e) => e.label).join(", ");
    g.append(svg("path", {d, class: "edge" + (fromCurrent ? " out" : ""),
      "marker-end": "url(#arrow)", "data-edge": k}, svg("title", {}, labels)),
    svg("text", {x: lx, y: ly, class: "edge-label", "text-anchor": "middle", "data-edge": k},
      text.length > 24 ? text.slice(0, 23) + "…" : text, svg("title", {}, labels)));
  }
  // a neighbour of this state is named by the action between them
  const cur = r.nodes.find((m) => m.distance === 0);
  const via = (n) => {
    const e = n.distance === 1 ? r.edges.find((x) => x.from === cur.id && x.to === n.id)
      : n.distance === -1 ? r.edges.find((x) => x.from === n.id && x.to === cur.id) : null;
    const text = e ? e.label : (n.distance > 0 ? "+" : "") + n.distance;
    return text.length > 24 ? text.slice(0, 23) + "…" : text;
  };
  for (const {x, y, n} of pos.values()) {
    const cls = ["node", n.distance === 0 ? "current" : "", n.initial ? "initial" : "",
      n.invariants.length ? "bad" : ""].join(" ");
    g.append(svg("g", {class: cls, transform: `translate(${x},${y})`, "data-id": n.id,
      "data-distance": n.distance, onclick: () => graphClick(n, r)},
    svg("rect", {width: NW, height: NH, rx: 5}),
    svg("text", {x: NW / 2, y: NH / 2 + 4, "text-anchor": "middle"},
      n.distance === 0 ? "this state" : via(n)),
    svg("title", {}, n.label)));
  }
  return g;
}

function graphClick(n, r) {
  const cur = r.nodes.find((m) => m.distance === 0);
  const edges = r.edges.filter((e) => e.from === cur.id && e.to === n.id);
  $("graph-detail").textContent = `${n.label}` +
    (n.invariants.length ? `\nviolates ${n.invariants.join(", ")}` : "") +
    (edges.length ? `\nreached from this state by ${edges.map((e) => e.label).join(", ")}` : "");
  if (edges.length && S.succ) {
    const key = cellsKey(n.cells);
    const step = S.succ.list.find((s) => s.label === edges[0].label &&
      cellsKey(s.state.cells) === key);
    if (step) choose(step);
  } else if (S.cursor > 0 && cellsKey(S.path[S.cursor - 1].state.cells) === cellsKey(n.cells)) {
    select(S.cursor - 1);
  }
}

// ------------------------------------------------------------------ wiring
function showView(name) {
  S.view = name;
  status("");  // messages are about the view left
  for (const b of document.querySelectorAll("#tabs button")) {
    b.classList.toggle("active", b.dataset.view === name);
  }
  for (const v of ["explore", "run", "graph"]) $(`view-${v}`).hidden = v !== name;
  if (name === "graph" && S.path.length) renderGraph();
}

for (const b of document.querySelectorAll("#tabs button")) {
  b.addEventListener("click", () => showView(b.dataset.view));
}
$("back").addEventListener("click", () => select(S.cursor - 1));
$("forward").addEventListener("click", () => select(S.cursor + 1));
$("reset").addEventListener("click", resetToTrace);
$("initial").addEventListener("change", (ev) => {
  const v = ev.target.value;
  if (v === "") resetToTrace(); else startFrom(Number(v));
});
$("radius").addEventListener("change", () => renderGraph());

load();
