/* hrb view: renders the pages from the view server's JSON (or, in a file written by
   `hrb report ID --html`, from the data embedded in window.HRB.data). Charts: Chart.js (vendored). */
"use strict";

const CFG = window.HRB || {};
const STATIC = !!CFG.static;

// ---------------------------------------------------------------------------------------------
// helpers

function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids.flat()) {
    if (kid === null || kid === undefined || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

const fmt = (v, d = 3) => (v === null || v === undefined ? "-" : Number(v).toFixed(d));
// four decimals, or three significant digits below a cent (so two cheap arms read apart), as `hrb report` prints
function usdText(v) {
  const x = Number(v);
  if (x === 0 || Math.abs(x) >= 0.01) return x.toFixed(4);
  if (Math.abs(x) >= 1e-4) return String(Number(x.toPrecision(3)));
  const [m, e] = x.toExponential(2).split("e");
  return `${Number(m)}e${e[0]}${e.slice(1).padStart(2, "0")}`;
}
const fmtUsd = (v) => (v === null || v === undefined ? "-" : "$" + usdText(v));
const usdCell = (v, k) => h("td", { class: "num", "data-k": k, "data-v": v === null || v === undefined ? "" : v }, fmtUsd(v));
const fmtP = (v) => (v === null || v === undefined ? "-" : v < 0.001 ? "<0.001" : Number(v).toFixed(3));
const interval = (lo, hi) => (lo === null || lo === undefined || hi === null || hi === undefined ? "-" : `[${fmt(lo)}, ${fmt(hi)}]`);
const num = (v, k) => h("td", { class: "num", "data-k": k, "data-v": v === null || v === undefined ? "" : v }, k === "usd" ? fmtUsd(v) : fmt(v));

function link(path, params) {
  const u = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params || {})) if (v !== null && v !== undefined && v !== "") u.searchParams.set(k, v);
  return u.pathname + u.search;
}

// access: the session key the server gave this tab when it opened the view's link, sent in a
// header of every API request; never a cookie (a browser sends cookies to every port of a host).
// sessionStorage and BroadcastChannel belong to this origin, port included: a tab opened on
// its own (a link opened in a new tab) asks the view's open tabs for the key.
const SESSION = "hrb-view-session";
const channel = !STATIC && "BroadcastChannel" in window ? new BroadcastChannel("hrb-view") : null;
if (channel) {
  channel.addEventListener("message", (e) => {
    const mine = sessionStorage.getItem(SESSION);
    if (e.data === "want" && mine) channel.postMessage({ session: mine });
  });
}

function session() {
  const mine = sessionStorage.getItem(SESSION);
  if (mine || !channel) return Promise.resolve(mine);
  return new Promise((resolve) => {
    const got = (e) => {
      if (e.data && typeof e.data.session === "string") {
        sessionStorage.setItem(SESSION, e.data.session);
        done();
      }
    };
    const done = () => {
      channel.removeEventListener("message", got);
      clearTimeout(timer);
      resolve(sessionStorage.getItem(SESSION));
    };
    const timer = setTimeout(done, 1000);
    channel.addEventListener("message", got);
    channel.postMessage("want");
  });
}

async function api(path, params) {
  if (STATIC) {
    throw new Error("this page was saved by `hrb report --html`: open it with `hrb view` to browse further");
  }
  const key = (await session()) || "";
  const headers = { accept: "application/json", "x-hrb-view-session": key };
  const r = await fetch(link(path, params), { credentials: "omit", headers });
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

function page(title, crumbs, ...content) {
  document.title = `${title} · hrb view`;
  const app = document.getElementById("app");
  app.replaceChildren(
    h("header", { class: "top" },
      STATIC ? h("span", { class: "brand" }, "hrbench") : h("a", { class: "brand", href: "/" }, "hrbench"),
      h("span", { class: "crumbs" }, crumbs)),
    h("main", {}, ...content));
}

function fail(err) {
  page("error", "error", h("p", { class: "error", id: "error" }, String(err.message || err)));
}

const SEEN = {};  // benchmark id -> first [time, rows] seen on this page: the rate is measured here

function duration(s) {
  s = Math.round(s);
  return s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`
    : s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${s}s`;
}

function spend(b) {
  if (b.usd === null || b.usd === undefined) return b.max_usd ? `cap $${b.max_usd.toFixed(2)}` : "";
  return fmtUsd(b.usd) + (b.max_usd === null || b.max_usd === undefined ? "" : ` of $${b.max_usd.toFixed(2)}`);
}

// a benchmark's items: of one that stopped when sure, the items reported of those a full run has
const itemsText = (b, none) => (b.n_items === null || b.n_items === undefined ? none
  : b.n_items_of === null || b.n_items_of === undefined ? String(b.n_items) : `${b.n_items} of ${b.n_items_of}`);

function statusBadge(b) {
  const badge = h("span", { class: `badge ${b.status}`, "data-k": "status" }, b.status);
  if (b.status !== "running" || !b.total) return badge;
  const pct = Math.min(100, (100 * b.rows) / b.total);
  const now = Date.now() / 1000;
  const first = (SEEN[b.id] = SEEN[b.id] || [now, b.rows]);
  const rate = now - first[0] >= 1 && b.rows > first[1] ? (b.rows - first[1]) / (now - first[0]) : null;
  const parts = [`${b.rows}/${b.total} rows`];
  if (rate) parts.push(`${rate.toFixed(1)} rows/s`, `ETA ${duration((b.total - b.rows) / rate)}`);
  if (spend(b)) parts.push(spend(b));
  return h("span", { class: "progress", "data-rows": b.rows, "data-total": b.total },
    h("span", { class: "bar", title: `${b.rows} of ${b.total} rows` },
      h("span", { style: `width:${pct.toFixed(1)}%` })), badge, " ", h("span", { class: "muted", "data-k": "progress" }, parts.join(" · ")));
}

// the banner's label of a benchmark that ended early (its stop_note says how to resume it)
const ENDED_EARLY = { cancelled: "Cancelled", interrupted: "Interrupted" };
// what runs never scored measure, by what kept them from their scorer (the report's footnote says the same)
function unscoredReason(failures) {
  const stopped = (failures || {}).budget_stop, errors = (failures || {}).error;
  if (!errors) return "they measure the budget, not the arm.";
  return stopped ? "they measure the budget and the errors, not the arm." : "they measure the errors, not the arm.";
}

const DESCRIPTIVE = "descriptive only";
function descriptiveMark(on) {
  return on ? h("span", { class: "descriptive" }, ` (${DESCRIPTIVE})`) : null;
}

// ---------------------------------------------------------------------------------------------
// charts

const whiskers = {
  id: "whiskers",
  afterDatasetsDraw(chart, _args, opts) {
    const { ctx, scales: { x, y } } = chart;
    ctx.save();
    ctx.strokeStyle = "#333";
    ctx.lineWidth = 1.5;
    if (opts.zeroLine) {
      ctx.setLineDash([4, 4]);
      ctx.beginPath();
      ctx.moveTo(x.getPixelForValue(0), y.top);
      ctx.lineTo(x.getPixelForValue(0), y.bottom);
      ctx.stroke();
      ctx.setLineDash([]);
    }
    for (const p of chart.data.datasets[0].data) {
      const px = x.getPixelForValue(p.x), py = y.getPixelForValue(p.y);
      const line = (x0, y0, x1, y1) => { ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke(); };
      if (p.xMin !== null && p.xMin !== undefined && p.xMax !== null && p.xMax !== undefined) {
        const a = x.getPixelForValue(p.xMin), b = x.getPixelForValue(p.xMax);
        line(a, py, b, py); line(a, py - 4, a, py + 4); line(b, py - 4, b, py + 4);
      }
      if (p.yMin !== null && p.yMin !== undefined && p.yMax !== null && p.yMax !== undefined) {
        const a = y.getPixelForValue(p.yMin), b = y.getPixelForValue(p.yMax);
        line(px, a, px, b); line(px - 4, a, px + 4, a); line(px - 4, b, px + 4, b);
      }
      if (opts.labels && p.label) {
        ctx.fillStyle = "#1d2330";
        ctx.font = "12px system-ui, sans-serif";
        ctx.fillText(p.label, px + 7, py - 7);
      }
    }
    ctx.restore();
  },
};

function chartBox(id) {
  return h("div", { class: "chart" }, h("canvas", { id }));
}

function forest(canvasId, diffs, title) {
  const el = document.getElementById(canvasId);
  if (!el || !window.Chart) return;
  const labels = diffs.map((d) => d.arm);
  const lows = diffs.map((d) => d.ci_low ?? d.diff ?? 0), highs = diffs.map((d) => d.ci_high ?? d.diff ?? 0);
  const span = Math.max(0.05, ...lows.map(Math.abs), ...highs.map(Math.abs)) * 1.15;
  return new Chart(el, {
    type: "scatter",
    data: { datasets: [{ data: diffs.map((d, i) => ({ x: d.diff, y: i, xMin: d.ci_low, xMax: d.ci_high, d })),
      pointRadius: 6, pointBackgroundColor: "#2456c7" }] },
    options: {
      animation: false, maintainAspectRatio: false,
      scales: {
        x: { min: -span, max: span, title: { display: true, text: title } },
        y: { min: -0.6, max: diffs.length - 0.4, reverse: true, afterBuildTicks: (ax) => { ax.ticks = labels.map((_, i) => ({ value: i })); },
          ticks: { callback: (v) => labels[v] ?? "" } },
      },
      plugins: {
        legend: { display: false }, whiskers: { zeroLine: true },
        tooltip: { callbacks: { label: (c) => { const d = c.raw.d; return `${d.arm} − ${d.against}: ${fmt(d.diff)} ${interval(d.ci_low, d.ci_high)}, p_holm ${fmtP(d.p_holm)}`; } } },
      },
    },
    plugins: [whiskers],
  });
}

// the cost-accuracy frontier: each step to the next dearer frontier arm, with its paired difference
function frontierTable(steps, level) {
  if (!steps || !steps.length) return null;
  return h("table", { id: "frontier" },
    h("thead", {}, h("tr", {},
      h("th", {}, "frontier step"), h("th", { class: "num" }, "+ USD / run"), h("th", { class: "num" }, "difference"),
      h("th", {}, `${Math.round(level * 100)}% interval`), h("th", { class: "num" }, "p (Holm)"), h("th", {}, "reads"))),
    h("tbody", {}, steps.map((s) => h("tr", { "data-step": `${s.cheaper}>${s.dearer}` },
      h("td", {}, `${s.cheaper} → ${s.dearer}`), usdCell(s.usd_per_run_added, "usd_added"), num(s.diff, "diff"),
      h("td", { class: "nowrap", "data-k": "interval", "data-lo": s.ci_low ?? "", "data-hi": s.ci_high ?? "" }, interval(s.ci_low, s.ci_high)),
      h("td", { class: "num", "data-k": "p_holm" }, fmtP(s.p_holm ?? s.p_value)),
      h("td", { "data-k": "reads" }, s.reads)))));
}

function costChart(canvasId, arms, descriptive, steps) {
  const el = document.getElementById(canvasId);
  if (!el || !window.Chart) return;
  const shown = arms.filter((a) => a.accuracy !== null);
  const noCost = shown.every((a) => !a.usd_per_run);  // then spread the arms along x, by name
  const pts = shown.map((a, i) => ({
    x: noCost ? i : a.usd_per_run, y: a.accuracy, xMin: noCost ? null : a.usd_per_run_low, xMax: noCost ? null : a.usd_per_run_high,
    yMin: a.ci_low, yMax: a.ci_high, label: a.arm, usd: a.usd_per_run,
  }));
  const xmax = Math.max(...pts.map((p) => p.xMax ?? p.x)) * 1.25;
  const x = noCost
    ? { min: -0.5, max: pts.length - 0.5, afterBuildTicks: (ax) => { ax.ticks = pts.map((_, i) => ({ value: i })); },
        ticks: { callback: (v) => pts[v]?.label ?? "" }, title: { display: true, text: "arm (no cost recorded: $0 per run)" } }
    : { min: 0, max: xmax, ticks: { callback: (v) => "$" + Number(v).toPrecision(2) },
        title: { display: true, text: "USD per run, at list price (cache and recording hits at what they first cost)" } };
  const onFrontier = new Set((steps || []).flatMap((s) => [s.cheaper, s.dearer]));
  const line = noCost ? [] : pts.filter((p) => onFrontier.has(p.label)).sort((a, b) => a.x - b.x).map((p) => ({ x: p.x, y: p.y, label: p.label }));
  const datasets = [{ data: pts, pointRadius: 6, pointBackgroundColor: "#2456c7" }];
  if (line.length > 1) datasets.push({ type: "line", data: line, label: "frontier", borderColor: "#8a8f99", borderDash: [5, 4], pointRadius: 0, fill: false });
  return new Chart(el, {
    type: "scatter",
    data: { datasets },
    options: {
      animation: false, maintainAspectRatio: false,
      scales: {
        x,
        y: { min: 0, max: 1, title: { display: true, text: "accuracy" + (descriptive ? ` (${DESCRIPTIVE})` : "") } },
      },
      plugins: { legend: { display: false }, whiskers: { labels: !noCost },
        tooltip: { callbacks: { label: (c) => `${c.raw.label}: ${fmt(c.raw.y)} ${interval(c.raw.yMin, c.raw.yMax)} at ${fmtUsd(c.raw.usd)}/run (list price)` } } },
    },
    plugins: [whiskers],
  });
}

// ---------------------------------------------------------------------------------------------
// the list of benchmarks

async function listPage() {
  const q = new URLSearchParams(location.search).get("search") || "";
  const search = h("input", { type: "search", id: "search", placeholder: "search by name or id", value: q });
  const body = h("tbody", { id: "benchmarks" });
  const count = h("span", { class: "muted", id: "count" });
  page("benchmarks", "benchmarks",
    h("h1", {}, "Benchmarks"),
    h("div", { class: "filters" }, search, count),
    h("table", {}, h("thead", {}, h("tr", {},
      ["id", "name", "created", "status", "arms", "items", "runs", "rows", "best arm"].map((c) => h("th", {}, c)))), body));
  let timer = null;
  async function refresh() {
    const res = await api("/api/benchmarks", { search: search.value });
    body.replaceChildren(...res.benchmarks.map((b) => h("tr", { "data-id": b.id },
      h("td", {}, h("a", { href: link(`/b/${b.id}`) }, b.id)),
      h("td", {}, b.name ? h("a", { href: link(`/b/${b.id}`), class: "name" }, b.name) : h("span", { class: "muted" }, "-")),
      h("td", { class: "nowrap" }, (b.created || "").replace("T", " ").replace("+00:00", "Z")),
      h("td", {}, statusBadge(b)),
      h("td", {}, b.arms.join(", ")),
      h("td", { class: "num", "data-k": "n_items" }, itemsText(b, "-")),
      h("td", { class: "num" }, b.runs ?? "-"),
      h("td", { class: "num" }, b.rows),
      h("td", {}, b.best_arm ? `${b.best_arm} (${fmt(b.best_accuracy)})` : "-"))));
    count.textContent = `${res.benchmarks.length} benchmark(s)`;
    clearTimeout(timer);
    if (res.benchmarks.some((b) => b.status === "running")) timer = setTimeout(refresh, 2000);  // live progress
  }
  let typing = null;
  search.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => { history.replaceState(null, "", link("/", { search: search.value })); refresh().catch(fail); }, 200);
  });
  await refresh();
}

// ---------------------------------------------------------------------------------------------
// one benchmark

function armTable(v) {
  const kinds = [...new Set(v.arms.flatMap((a) => Object.keys(a.failures)))];
  const metrics = [...new Set(v.arms.flatMap((a) => Object.keys(a.metrics || {})))];
  // repeat consistency, shown with 2 or more runs per item: pass^k and the flip rate, with intervals
  const repeat = v.arms.some((a) => a.flip_rate !== null && a.flip_rate !== undefined);
  const k = (v.arms.find((a) => a.pass_k_runs) || {}).pass_k_runs;
  const pct = `${Math.round(v.level * 100)}%`;
  return h("table", { id: "arms" },
    h("thead", {}, h("tr", {},
      h("th", {}, "arm"), h("th", { class: "num" }, "accuracy"),
      h("th", {}, `${pct} interval`, descriptiveMark(v.descriptive)),
      repeat ? [
        h("th", { class: "num", title: `the chance that ${k} runs of an item are all right` }, `pass^${k}`),
        h("th", {}, `${pct} interval`),
        h("th", { class: "num", title: "the chance that two runs of an item disagree" }, "flip rate"),
        h("th", {}, `${pct} interval`)] : [],
      metrics.map((m) => h("th", { class: "num", title: "a benchmark metric's mean over items, with no interval" }, m)),
      h("th", { class: "num" }, "runs"), h("th", {}, "failures by kind"),
      h("th", { class: "num" }, "tokens in"), h("th", { class: "num" }, "tokens out"),
      h("th", { class: "num", title: "what was paid: 0 for cache and recording hits" }, "USD paid"),
      h("th", { class: "num", title: "at list price: each reply at what it cost when first paid" }, "USD list"),
      h("th", { class: "num", title: "at list price, so arms compare by cost whatever the cache held" }, "USD / run"),
      h("th", { class: "num", title: "accuracy per USD, at list price" }, "accuracy / USD"),
      h("th", { class: "num" }, "seconds"))),
    h("tbody", {}, v.arms.map((a) => h("tr", { "data-arm": a.arm },
      h("td", {}, a.arm),
      num(a.accuracy, "accuracy"),
      h("td", { class: "nowrap", "data-k": "interval", "data-lo": a.ci_low ?? "", "data-hi": a.ci_high ?? "", "data-unscored": a.unscored_note ? "1" : null, title: a.unscored_note || null }, interval(a.ci_low, a.ci_high) + (a.unscored_note ? " *" : "")),
      repeat ? [
        num(a.pass_k, "pass_k"),
        h("td", { class: "nowrap", "data-k": "pass_k_interval" }, interval(a.pass_k_low, a.pass_k_high)),
        num(a.flip_rate, "flip_rate"),
        h("td", { class: "nowrap", "data-k": "flip_rate_interval" }, interval(a.flip_rate_low, a.flip_rate_high))] : [],
      metrics.map((m) => num((a.metrics || {})[m] ?? null, `metric-${m}`)),
      h("td", { class: "num", "data-k": "n_runs" }, a.n_runs),
      h("td", { "data-k": "failures" }, kinds.filter((k) => a.failures[k]).map((k) => `${k} ${a.failures[k]}`).join(" · ") || "-"),
      h("td", { class: "num" }, a.tokens_in), h("td", { class: "num" }, a.tokens_out),
      usdCell(a.usd, "usd"),
      a.usd_from_log ? h("td", { class: "num", "data-k": "usd_list", "data-v": a.usd_list ?? "", title: `${a.usd_from_log} run(s) from another tool's log: what the log records, not paid here` }, `${fmtUsd(a.usd_list)} (from the log, not paid here)`) : usdCell(a.usd_list, "usd_list"),
      usdCell(a.usd_per_run, "usd_per_run"),
      h("td", { class: "num", "data-k": "accuracy_per_usd" }, fmt(a.accuracy_per_usd, 1)),
      h("td", { class: "num" }, fmt(a.seconds, 2))))));
}

function diffTable(v) {
  const table = h("table", { id: "differences" },
    h("thead", {}, h("tr", {},
      h("th", {}, "arm"), h("th", { class: "num" }, `− ${v.against}`),
      h("th", {}, `${Math.round(v.level * 100)}% interval`, descriptiveMark(v.descriptive)),
      h("th", { class: "num" }, "p"), h("th", { class: "num" }, "p (Holm)"), h("th", { class: "num" }, "items"))),
    h("tbody", {}, v.differences.map((d) => h("tr", { "data-arm": d.arm },
      h("td", {}, d.arm), num(d.diff, "diff"),
      h("td", { class: "nowrap", "data-k": "interval", "data-lo": d.ci_low ?? "", "data-hi": d.ci_high ?? "" }, interval(d.ci_low, d.ci_high)),
      h("td", { class: "num", "data-k": "p_value" }, fmtP(d.p_value)),
      h("td", { class: "num", "data-k": "p_holm" }, fmtP(d.p_holm)),
      h("td", { class: "num", "data-k": "n_items", "data-unscored": d.unscored_note ? "1" : null, title: d.unscored_note || null }, d.unscored_note ? `${d.n_items} *` : d.n_items)))));
  // how to read a row: no item scored differently (its interval is a bound, not a measured
  // spread), 5 or fewer clusters disagree, or why it has no interval
  const notes = v.differences.filter((d) => d.note).map((d) => h("p", { class: "muted", "data-note": d.arm }, `${d.arm}: ${d.note}.`));
  // * : a difference computed only over the items where both arms have every run scored
  const unscored = v.differences.filter((d) => d.unscored_note).map((d) => h("p", { class: "banner", "data-unscored-note": d.arm }, `* ${d.arm} − ${d.against}: ${d.unscored_note}.`));
  return [table, ...unscored, ...notes];
}

function colour(mean) {
  if (mean === null || mean === undefined) return "#e3e6ec";
  return `hsl(${Math.round(120 * mean)}, 62%, ${78 - 10 * Math.abs(mean - 0.5)}%)`;
}

function matrixSection(id, m, cellLink) {
  const sel = (name, values) => h("label", {}, `${name.replace("_", " ")} `,
    h("select", { id: `f-${name}` }, h("option", { value: "" }, "all"), values.map((x) => h("option", { value: x }, x))));
  const filters = h("div", { class: "filters" },
    sel("cluster", m.clusters), sel("failure_kind", m.failure_kinds), sel("split", m.splits),
    h("label", {}, h("input", { type: "checkbox", id: "f-disagree" }), " arms disagree"),
    h("span", { class: "muted", id: "matrix-count" }));
  const LIMIT = 400;
  const table = h("table", { class: "matrix", id: "matrix" });
  const more = h("p", { class: "muted", id: "matrix-more" });
  function apply() {
    const f = Object.fromEntries(["cluster", "failure_kind", "split"].map((k) => [k, document.getElementById(`f-${k}`).value]));
    const disagree = document.getElementById("f-disagree").checked;
    const kept = m.items.filter((it) =>
      (!f.cluster || it.cluster === f.cluster) && (!f.split || it.split === f.split) &&
      (!disagree || it.disagree) &&
      (!f.failure_kind || it.cells.some((c) => c && c.failure_kinds[f.failure_kind])));
    document.getElementById("matrix-count").textContent = `${kept.length} of ${m.n_items_total} items`;
    document.getElementById("matrix-count").setAttribute("data-n", kept.length);
    document.getElementById("matrix-count").setAttribute("data-total", m.n_items_total);
    table.replaceChildren(
      h("thead", {}, h("tr", {}, h("th", {}, "item"), h("th", {}, "cluster"), h("th", {}, "split"), m.arms.map((a) => h("th", {}, a)))),
      h("tbody", {}, kept.slice(0, LIMIT).map((it) => h("tr", { "data-item": it.item, "data-disagree": it.disagree },
        h("td", { class: "item", title: it.item }, it.item), h("td", {}, it.cluster), h("td", {}, it.split),
        it.cells.map((c, j) => c === null
          ? h("td", { class: "cell muted" }, "·")
          : h("td", { class: "cell", style: `background:${colour(c.mean)}`, "data-arm": m.arms[j],
              title: `${m.arms[j]} on ${it.item}: ${c.n} run(s)` + Object.entries(c.failure_kinds).map(([k, n]) => `, ${k} ${n}`).join("") },
            cellLink(it.item, m.arms[j], c.mean === null ? "n/a" : fmt(c.mean, 2))))))));
    more.textContent = kept.length > LIMIT ? `showing the first ${LIMIT}; narrow the filters to see the rest` : "";
  }
  filters.addEventListener("change", apply);
  setTimeout(apply, 0);
  // a benchmark that stopped when sure: the items of the clusters cancelled at the stop are not reported
  const cut = m.n_items_cancelled
    ? h("p", { class: "muted", id: "matrix-cancelled", "data-n": m.n_items_cancelled },
        `${m.n_items_cancelled} item(s) of clusters cancelled at the stop are left out: their runs are kept and paid, not reported.`)
    : null;
  return [h("h2", { id }, "Items × arms: mean correctness over runs"), filters, cut, table, more];
}

// a benchmark run with a stop rule: how it stopped, and the sequential test's own numbers (the
// fixed-sample intervals and p of its differences are not valid, so the report leaves them out)
function stopSection(v) {
  const s = v.report && v.report.stop;
  if (!s) return null;
  const where = `after ${s.clusters} of ${s.of} clusters` + (s.row_share == null ? "" : ` (${Math.round(s.row_share * 100)}% of the full run's runs` + (s.unreported_rows ? `, ${s.unreported_rows} of them in clusters cancelled at the stop, paid and not reported` : "") + ")");
  // the library's headline (hrbench.stats._stopped.headline): what ended it, and what it decided whatever ended it
  const head = s.headline || (s.reason === "running" ? `Stopping when sure: ${s.clusters} of ${s.of} clusters committed so far.`
    : `Stopped (${s.reason}), ${where}.`);
  const e = (x) => (x == null ? "NA" : x < 1e6 ? Number(x.toPrecision(3)).toString() : x.toExponential(2));
  return h("div", { class: "banner", id: "stopped-when-sure", "data-reason": s.reason, "data-clusters": s.clusters, "data-of": s.of },
    h("b", {}, head),
    h("table", { id: "stop-pairs" },
      h("thead", {}, h("tr", {}, h("th", {}, "pair"), h("th", { class: "num" }, "diff"), h("th", {}, "confidence sequence"),
        h("th", { class: "num" }, "e-value"), h("th", { class: "num" }, "anytime p"), h("th", {}, "decided"))),
      h("tbody", {}, s.pairs.map((p) => h("tr", { "data-pair": `${p.a}-${p.b}` },
        h("td", {}, `${p.a} − ${p.b}`), num(p.diff, "diff"),
        h("td", { class: "nowrap", "data-k": "cs" }, interval(p.cs_low, p.cs_high)),
        h("td", { class: "num", "data-k": "e_value" }, e(p.e_value)),
        h("td", { class: "num", "data-k": "p_anytime" }, fmtP(p.p_anytime)),
        h("td", {}, p.decided || "-"))))),
    h("p", { class: "muted" }, `Sequential test ${s.method}, alpha ${s.alpha}, clusters in a seeded order (seed ${s.order_seed}); `
      + `the confidence sequence and anytime p hold at every look. Estimand: ${s.estimand}. `
      + (s.fixed_valid ? "It ran its most clusters, a number fixed before it began: the paired differences below are the fixed design's, shown to describe the difference, not to decide it (the stop's own decisions hold at alpha; taken as a second decision on the same clusters, a p below alpha there would add its false positives to the stop's)."
        : "Per-arm intervals are conditional on the clusters run; the paired differences below show no fixed-sample interval or p (not valid after stopping).")
      + (s.unreported_rows ? ` ${s.unreported_rows} run(s) of clusters cancelled at the stop are kept, not reportable (${usdText(s.unreported_usd)} USD, counted in the spend).` : "")));
}

// a benchmark a judge scored: the judge's agreement with the exact scorer on the same rows, and its flips
function judgeSection(v) {
  const j = v.report && v.report.judge;
  if (!j) return null;
  const c = j.confusion, flips = j.n_multi ? `; ${j.flipped} of ${j.n_multi} rows judged ${j.judge_runs} times flipped between draws (${fmt(j.flip_rate)})` : "";
  return h("div", { class: "banner", id: "judge-agreement", "data-agree": j.agree, "data-n": j.n },
    h("b", {}, "Judge agreement: "), `agrees with ${j.reference} on ${j.agree} of ${j.n} rows, ${fmt(j.rate)}${j.ci_low == null ? "" : " " + interval(j.ci_low, j.ci_high)}; `
      + `both right ${c.both_right}, judge only ${c.judge_only}, ${j.reference} only ${c.reference_only}, both wrong ${c.both_wrong}${flips}.`);
}

// a benchmark with human grades: each arm and pair as humans would grade it (PPI++), beside the judge-only and human-only intervals
function humanSection(v) {
  const s = v.report && v.report.human;
  if (!s) return null;
  const row = (e) => h("tr", { "data-target": e.arm_b === null ? e.arm_a : `${e.arm_a}-${e.arm_b}`, "data-method": e.method },
    h("td", {}, e.arm_b === null ? e.arm_a : `${e.arm_a} − ${e.arm_b}`), num(e.estimate, "estimate"),
    h("td", { class: "nowrap", "data-k": "interval" }, interval(e.ci_low, e.ci_high)), h("td", {}, e.method),
    h("td", { class: "nowrap", "data-k": "judge" }, interval(e.judge_low, e.judge_high)),
    h("td", { class: "nowrap", "data-k": "human" }, interval(e.human_low, e.human_high)),
    h("td", { class: "num", "data-k": "n_graded" }, e.n_graded), h("td", { class: "num", "data-k": "worth" }, e.worth === null ? "-" : Math.round(e.worth)));
  return h("div", { class: "card", id: "human-graded", "data-grades": s.n_grades, "data-fallback": s.fallback },
    h("b", {}, `Human-graded (PPI++): ${s.n_grades} grade(s) by ${s.graders.join(", ") || "-"}; the judge agrees with them on ${s.agree} (kappa ${fmt(s.kappa)})`),
    h("table", {}, h("thead", {}, h("tr", {}, ["arm / pair", "estimate", `${Math.round(s.level * 100)}% CI`, "method", "judge-only", "human-only", "grades", "worth"].map((c) => h("th", {}, c)))),
      h("tbody", {}, [...s.arms, ...s.pairs].map(row))),
    h("p", { class: "muted" }, s.note));
}

// a benchmark run in batch mode: its provider batches, their states as the daemon last read them
function batchSection(batches) {
  if (!batches || !batches.length) return null;
  return h("div", { class: "card", id: "batches", "data-n": batches.length },
    h("h2", {}, "Provider batches"),
    h("table", {},
      h("thead", {}, h("tr", {}, h("th", {}, "batch"), h("th", {}, "state"), h("th", { class: "num" }, "lines"),
        h("th", { class: "num" }, "done"), h("th", { class: "num" }, "failed"), h("th", { class: "num" }, "age"),
        h("th", { class: "num" }, "USD reserved"), h("th", { class: "num" }, "USD billed"))),
      h("tbody", {}, batches.map((x) => h("tr", { "data-batch": x.id || x.tag, "data-state": x.state },
        h("td", { class: "nowrap" }, x.id || `(tag ${x.tag})`), h("td", { "data-k": "state" }, x.state),
        ...["lines", "done", "failed"].map((k) => h("td", { class: "num", "data-k": k, "data-v": x[k] }, String(x[k]))),
        h("td", { class: "num" }, duration(x.age_s)), usdCell(x.usd_reserved, "usd_reserved"), usdCell(x.live ? null : x.usd_billed, "usd_billed"))))));
}

function renderBenchmark(v, m, others, onAgainst, batches) {
  const b = v.benchmark;
  const crumbs = STATIC ? `benchmark ${b.id}` : [h("a", { href: "/" }, "benchmarks"), ` / ${b.name || b.id}`];
  const against = h("select", { id: "against" }, v.arms.map((a) => h("option", { value: a.arm, selected: a.arm === v.against }, a.arm)));
  against.addEventListener("change", () => onAgainst(against.value));
  const cellLink = STATIC
    ? (item, arm, text) => h("span", { title: `hrb rows ${b.id} --traces --item ${item} --arm ${arm}` }, text)
    : (item, arm, text) => h("a", { href: link(`/b/${b.id}/cell`, { item, arm }) }, text);
  const compare = !STATIC && others.length
    ? h("p", {}, "Compare with another benchmark on the same items: ",
        others.map((o) => h("a", { href: link("/compare", { a: b.id, b: o.id }), style: "margin-right:.8em" }, o.name || o.id)))
    : null;
  page(b.name || b.id, crumbs,
    h("h1", { id: "title" }, b.name || b.id),
    h("p", { class: "muted" }, `${b.id} · created ${(b.created || "").replace("T", " ")} · `, statusBadge(b),
      " · ", h("span", { id: "shape", "data-arms": b.arms.length, "data-items": b.n_items ?? "", "data-items-of": b.n_items_of ?? "",
        title: b.n_items_of == null ? null : "the items reported (those of the clusters run to the stop), of the items a full run has" },
        `${b.arms.length} arm(s) × ${itemsText(b, "?")} item(s) × ${b.runs ?? "?"} run(s)`),
      ` · reference ${b.reference_hash.slice(0, 12)}`),
    !b.stop_note ? null : b.status === "errors"
      ? h("div", { class: "banner", id: "runs-failed" }, h("b", {}, "Runs failed: "), b.stop_note)
      : ENDED_EARLY[b.status]
        ? h("div", { class: "banner", id: "ended-early" }, h("b", {}, `${ENDED_EARLY[b.status]}: `), b.stop_note)
        : h("div", { class: "banner", id: "budget-stopped" }, h("b", {}, "Budget stopped: "), b.stop_note),
    stopSection(v),
    batchSection(batches),
    judgeSection(v),
    humanSection(v),
    STATIC ? null : h("p", {}, h("a", { href: link(`/b/${b.id}/grade`), id: "grade-link" }, "Grade rows by hand"),
      h("span", { class: "muted" }, " (the rows whose human grades would narrow the intervals most)")),
    v.descriptive ? h("div", { class: "banner", id: "descriptive" }, h("b", {}, "Descriptive only: "), v.note.replace(/^Descriptive: /, "")) : h("p", { class: "muted" }, v.note),
    h("h2", {}, "Arms"), armTable(v),
    ...v.arms.filter((a) => a.unscored_note).map((a) => h("p", { class: "banner", "data-unscored-note": a.arm }, `* ${a.arm}: ${a.unscored_note}: ${unscoredReason(a.failures)}`)),
    h("h2", {}, "Paired differences against ", against, descriptiveMark(v.descriptive)),
    h("div", { class: "charts" }, h("div", { class: "card" }, chartBox("forest")), h("div", { class: "card" }, diffTable(v))),
    h("h2", {}, "Accuracy against cost", descriptiveMark(v.descriptive)),
    h("div", { class: "card" }, chartBox("cost"),
      v.arms.every((a) => !a.usd_per_run) ? h("p", { class: "muted", id: "no-cost" }, "No arm has a cost (fixed outputs, or models with no price): the arms are spread along x by name.") : null,
      frontierTable(v.report?.frontier, v.level)),
    ...matrixSection("matrix-title", m, cellLink),
    compare,
    h("details", {}, h("summary", {}, "The report as text"), h("pre", { id: "report-text" }, v.text)));
  forest("forest", v.differences, `accuracy difference, arm − ${v.against}` + (v.descriptive ? ` (${DESCRIPTIVE})` : ""));
  costChart("cost", v.arms, v.descriptive, v.report?.frontier);
}

async function benchmarkPage(id) {
  const params = new URLSearchParams(location.search);
  let against = params.get("against") || null;
  let m, others = [];
  async function draw() {
    const v = STATIC ? CFG.data.views[against || CFG.data.against] : await api(`/api/benchmark/${encodeURIComponent(id)}`, { against });
    const batches = STATIC ? [] : (await api(`/api/benchmark/${encodeURIComponent(id)}/batches`)).batches;
    if (!m) {
      m = STATIC ? CFG.data.matrix : await api(`/api/benchmark/${encodeURIComponent(id)}/matrix`);
      if (!STATIC) {
        const all = (await api("/api/benchmarks")).benchmarks;
        others = all.filter((o) => o.id !== id && o.reference_hash === v.benchmark.reference_hash);
      }
    }
    renderBenchmark(v, m, others, (arm) => {
      against = arm;
      if (!STATIC) history.replaceState(null, "", link(location.pathname, { against: arm }));
      draw().catch(fail);
    }, batches);
    if (!STATIC && v.benchmark.status === "running") {
      clearTimeout(refresh);
      refresh = setTimeout(() => { m = null; draw().catch(fail); }, 3000);  // live: rows keep coming
    }
  }
  let refresh = null;
  await draw();
}

// ---------------------------------------------------------------------------------------------
// one cell

function payloadBlock(x) {
  if (x === null || x === undefined) return h("span", { class: "muted" }, "(not stored)");
  if (typeof x === "object" && !Array.isArray(x)) {  // a mapping: one block per field, short ones first
    const keys = Object.keys(x).sort((a, b) => String(x[a]).length - String(x[b]).length);
    return h("div", {}, keys.map((k) => h("div", {}, h("span", { class: "role" }, `${k}: `),
      h("pre", { "data-field": k }, typeof x[k] === "string" ? x[k] : JSON.stringify(x[k], null, 2)))));
  }
  return h("pre", {}, typeof x === "string" ? x : JSON.stringify(x, null, 2));
}

function stepBlock(s) {
  const usage = s.usage ? `tokens ${s.usage.tokens_in} in / ${s.usage.tokens_out} out (${s.usage.provenance || "?"})` : "no usage";
  return h("div", { class: "step", "data-source": s.source },
    h("div", { class: "muted" }, `${s.kind} · source ${s.source}${s.source === "cache" || s.source === "recording" ? " (hit)" : s.source === "log" ? " (from the log, not paid here)" : ""} · model ${s.model || "-"} · finish ${s.finish_reason || "-"} · ${usage} · ${s.usd === null ? "USD unknown (no price)" : fmtUsd(s.usd)} · ${fmt(s.seconds, 2)} s`),
    (s.messages || []).map((msg) => h("div", {}, h("span", { class: "role" }, `${msg.role}: `),
      h("pre", {}, typeof msg.content === "string" ? msg.content : JSON.stringify(msg.content, null, 2)))),
    s.text !== null && s.text !== undefined ? h("div", {}, h("span", { class: "role" }, "reply: "), h("pre", { class: "reply" }, s.text)) : null,
    s.error ? h("div", { class: "error" }, s.error) : null);
}

async function cellPage(id) {
  const q = new URLSearchParams(location.search);
  const c = await api(`/api/benchmark/${encodeURIComponent(id)}/cell`, { item: q.get("item"), arm: q.get("arm") });
  const b = c.benchmark;
  page(`${c.arm} on ${c.item}`, [h("a", { href: "/" }, "benchmarks"), " / ", h("a", { href: link(`/b/${b.id}`) }, b.name || b.id), ` / ${c.arm} on ${c.item}`],
    h("h1", {}, `${c.arm} on ${c.item}`),
    h("dl", { class: "kv card" }, h("dt", {}, "cluster"), h("dd", {}, c.cluster), h("dt", {}, "split"), h("dd", {}, c.split),
      h("dt", {}, "label"), h("dd", { id: "label" }, c.label === null ? "(none)" : JSON.stringify(c.label)),
      h("dt", {}, "item"), h("dd", {}, payloadBlock(c.payload))),
    h("p", {}, "Reproduce: ", h("code", { class: "cmd", id: "command" }, c.command)),
    h("h2", {}, `${c.runs.length} run(s)`),
    c.runs.map(({ row: r, trace }) => runCard(r, trace)));
}

// the arm's output (the note step its trace keeps: what the scorer received), then the other steps
function runCard(r, trace) {
  const out = trace.find((s) => s.kind === "note" && s.source === "output");
  const steps = trace.filter((s) => s !== out);
  return h("div", { class: `card run ${r.correct === true ? "right" : r.correct === false ? "wrong" : ""}`, "data-run": r.run },
    h("div", {}, h("b", {}, `run ${r.run}`), ` · draw index ${r.draw_index} · `,
      h("span", { "data-k": "correct" }, r.correct === null ? "unlabelled" : r.correct ? "right" : "wrong"),
      r.failure_kind ? ` · failure ${r.failure_kind}` : "",
      ` · tokens ${r.tokens_in} in / ${r.tokens_out} out · ${r.usd === null ? "USD unknown (no price)" : fmtUsd(r.usd)} (${r.usd_provenance === "log" ? "from the log, not paid here" : r.usd_provenance || "?"}) · ${fmt(r.seconds, 2)} s`),
    h("div", {}, h("span", { class: "role" }, "output: "), h("pre", { class: "output" }, out ? out.text : "(none)")),
    h("div", {}, h("span", { class: "role" }, "outcome as scored: "), h("pre", { class: "outcome" }, r.outcome ?? "(none)")),
    h("details", { class: "trace", open: steps.length <= 3 }, h("summary", {}, `trace: ${steps.length} step(s)`),
      steps.length ? steps.map(stepBlock) : h("p", { class: "muted" }, "no model call (a fixed output)")));
}

// ---------------------------------------------------------------------------------------------
// grading by hand: the rows to grade next, one at a time; r = right, w = wrong, s = skip

async function gradePage(id) {
  const K = Number(new URLSearchParams(location.search).get("k")) || 20;
  const grader = h("input", { id: "grader", placeholder: "your name", value: localStorage.getItem("hrb-grader") || "" });
  grader.addEventListener("change", () => localStorage.setItem("hrb-grader", grader.value.trim()));
  const status = h("p", { class: "muted", id: "grade-status" });
  const card = h("div", { class: "card", id: "grade-card" });
  let rows = [], at = 0, done = 0, skipped = 0, busy = false;
  page("grade", [h("a", { href: "/" }, "benchmarks"), " / ", h("a", { href: link(`/b/${id}`) }, id), " / grade"],
    h("h1", {}, "Grade rows by hand"),
    h("p", {}, "Is the arm's output right, given the item and its label? Keys: ", h("kbd", {}, "r"), " right, ",
      h("kbd", {}, "w"), " wrong, ", h("kbd", {}, "s"), " skip. Each grade is kept at once, under your name."),
    h("p", {}, "Grader: ", grader), status, card);
  function show() {
    status.textContent = `${done} graded, ${skipped} skipped, ${Math.max(rows.length - at, 0)} left of ${rows.length}`;
    status.setAttribute("data-graded", done);
    if (at >= rows.length) {
      card.replaceChildren(h("p", { id: "grade-done" }, "Nothing left in this batch. "),
        h("button", { id: "grade-more", onclick: () => load().catch(fail) }, "Draw more rows"));
      return;
    }
    const r = rows[at];
    card.replaceChildren(
      h("div", { class: "muted" }, `arm ${r.arm} · item ${r.item} · run ${r.run} · cluster ${r.cluster}`),
      h("dl", { class: "kv" }, h("dt", {}, "item"), h("dd", { id: "grade-item" }, payloadBlock(r.payload)),
        h("dt", {}, "label"), h("dd", { id: "grade-label" }, r.label === null ? "(none)" : Array.isArray(r.label) ? r.label.join(" | ") : String(r.label)),
        h("dt", {}, r.output_source === "judge prompt" ? "what the judge was shown" : "the arm's output"),
        h("dd", {}, h("pre", { id: "grade-output", "data-arm": r.arm, "data-item": r.item, "data-run": r.run }, r.output ?? "(not kept)"))),
      h("p", {}, h("button", { id: "grade-right", onclick: () => grade(true) }, "Right (r)"), " ",
        h("button", { id: "grade-wrong", onclick: () => grade(false) }, "Wrong (w)"), " ",
        h("button", { id: "grade-skip", onclick: () => grade(null) }, "Skip (s)")));
  }
  async function grade(correct) {
    if (busy || at >= rows.length) return;
    const r = rows[at];
    if (correct !== null) {
      if (!grader.value.trim()) { status.textContent = "Give your name first (it is kept with each grade)."; grader.focus(); return; }
      busy = true;
      try {
        const res = await fetch(link(`/api/benchmark/${encodeURIComponent(id)}/grades`), {
          method: "POST", credentials: "omit",
          headers: { "content-type": "application/json", accept: "application/json", "x-hrb-view-session": (await session()) || "" },
          body: JSON.stringify({ grades: [{ item: r.item, arm: r.arm, run: r.run, correct, pi: r.pi }], grader: grader.value.trim() }),
        });
        const body = await res.json();
        if (!res.ok) throw new Error(body.error || res.statusText);
        done += 1;
      } finally { busy = false; }
    } else skipped += 1;
    at += 1;
    show();
  }
  async function load() {
    rows = (await api(`/api/benchmark/${encodeURIComponent(id)}/grades/next`, { k: K, seed: Date.now() % 1000003 })).rows;
    at = 0;
    show();
  }
  document.addEventListener("keydown", (e) => {
    if (e.target === grader || e.ctrlKey || e.metaKey || e.altKey) return;
    const k = e.key.toLowerCase();
    if (k === "r") grade(true).catch(fail); else if (k === "w") grade(false).catch(fail); else if (k === "s") grade(null).catch(fail);
  });
  await load();
}

// ---------------------------------------------------------------------------------------------
// two benchmarks

async function comparePage() {
  const q = new URLSearchParams(location.search);
  const c = await api("/api/compare", { a: q.get("a"), b: q.get("b") });
  // each benchmark by name and id: two runs of one spec share a name ("mycaps - mycaps")
  const name = (x) => (x.name ? `${x.name} (${x.id.slice(0, 8)})` : x.id);
  const when = (x) => (x.created || "").replace("T", " ").slice(0, 16);
  page("compare", [h("a", { href: "/" }, "benchmarks"), ` / ${name(c.b)} against ${name(c.a)}`],
    h("h1", { id: "title" }, `${name(c.b)} against ${name(c.a)}`),
    h("p", { id: "direction" }, "Per arm in both, on the items both ran (reference ", c.reference_hash.slice(0, 12),
      "): its accuracy in ", h("a", { href: link(`/b/${c.b.id}`) }, name(c.b)), ` (created ${when(c.b)})`,
      " minus its accuracy in ", h("a", { href: link(`/b/${c.a.id}`) }, name(c.a)), ` (created ${when(c.a)})`,
      `. A positive difference means the arm scored higher in ${name(c.b)}; a negative one, higher in ${name(c.a)}.`),
    c.descriptive ? h("div", { class: "banner" }, h("b", {}, "Descriptive only. "), "Fewer than 5 runs per item: the intervals cover the sampling of items only.") : null,
    h("div", { class: "charts" }, h("div", { class: "card" }, chartBox("forest")),
      h("div", { class: "card" }, diffTable({ ...c, level: c.differences[0]?.level ?? 0.95, against: name(c.a) }))),
    c.only_a.length || c.only_b.length ? h("p", { class: "muted" }, `Arms in one benchmark only: ${[...c.only_a, ...c.only_b].join(", ")}`) : null);
  forest("forest", c.differences.map((d) => ({ ...d, against: name(c.a) })), `accuracy difference, ${name(c.b)} − ${name(c.a)}` + (c.descriptive ? ` (${DESCRIPTIVE})` : ""));
}

// ---------------------------------------------------------------------------------------------

function route() {
  if (STATIC) return benchmarkPage(CFG.data.id);
  const path = location.pathname;
  let m;
  if ((m = path.match(/^\/b\/([^/]+)\/cell$/))) return cellPage(decodeURIComponent(m[1]));
  if ((m = path.match(/^\/b\/([^/]+)\/grade$/))) return gradePage(decodeURIComponent(m[1]));
  if ((m = path.match(/^\/b\/([^/]+)$/))) return benchmarkPage(decodeURIComponent(m[1]));
  if (path === "/compare") return comparePage();
  return listPage();
}

route().then(() => document.body.setAttribute("data-ready", "1"), (e) => { fail(e); document.body.setAttribute("data-ready", "1"); });
