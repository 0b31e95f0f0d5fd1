// physd dashboard: every camera's state and latest certified estimate, and
// for the selected camera the picture with its region of interest, the last
// window's latent with the fitted ODE solution, the level crossings behind
// the certificate, the estimates over time, the training cost and the last
// verdicts. Served at /dashboard; the page holds no data.
//
// The token comes from the URL fragment (/dashboard#token=...; fragments
// are never sent to a server), is kept in sessionStorage and sent as
// "Authorization: Bearer" with every request. EventSource cannot send that
// header, so the event stream is read with fetch() and a ReadableStream.
//
// Data: GET /api/v1/dashboard (snapshot), GET /api/v1/dashboard/events
// (text/event-stream: snapshot, window, status events), and the camera's
// frame.png and source.png, fetched with the token and shown as blob: URLs.
//
// Console lines, for tests and for debugging on a phone:
//   physd: snapshot N cameras       a snapshot was applied
//   physd: stream open | closed     the event stream's state
//   physd: window CAMERA VERDICT    a window event arrived
//   physd: error MESSAGE            whatever the status line shows
"use strict";

const TOKEN_KEY = "physd.dashboard.token";
const HISTORY_MAX = 720; // as the server keeps
const RECENT_MAX = 10;
const STALL_MS = 40000; // no byte for this long (keepalive is 15 s): reconnect
const IMAGE_EVERY_MS = 1000;

const $ = (id) => document.getElementById(id);
const log = (msg) => console.log("physd: " + msg);

// The SVG namespace, taken from an element the HTML parser made, so the
// script names no URL.
const SVGNS = $("d-roi").namespaceURI;

let token = "";
let selected = "";
let chosen = false; // the operator picked the camera (click or #camera=)
const cams = new Map(); // name → {card, history, recent, detail}
let order = []; // camera names, sorted
let streamCtl = null;
let lastByte = 0;
const images = { frame: "", source: "", busy: false, last: 0 };

// ---------- small helpers ----------

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") e.textContent = v;
    else if (k === "class") e.className = v;
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function svg(tag, attrs = {}) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    if (k === "text") e.textContent = v;
    else e.setAttribute(k, String(v));
  }
  return e;
}

const finite = (v) => typeof v === "number" && Number.isFinite(v);

function fmt(v, digits = 5) {
  if (!finite(v)) return "–";
  if (v !== 0 && (Math.abs(v) >= 1e5 || Math.abs(v) < 1e-3)) return v.toExponential(Math.max(0, digits - 2));
  return Number(v.toPrecision(digits)).toString();
}

// fmtPM writes v ± s with v rounded to the σ's second significant digit.
function fmtPM(v, s, unit = "") {
  if (!finite(v)) return "–";
  const u = unit ? " " + unit : "";
  if (!finite(s) || s <= 0) return fmt(v) + u;
  const dec = Math.min(8, Math.max(0, 1 - Math.floor(Math.log10(s))));
  return v.toFixed(dec) + " ± " + s.toFixed(dec) + u;
}

const pad2 = (n) => String(n).padStart(2, "0");
function clock(t) {
  const d = t instanceof Date ? t : new Date(t);
  if (isNaN(d)) return "–";
  return pad2(d.getHours()) + ":" + pad2(d.getMinutes()) + ":" + pad2(d.getSeconds());
}
function ago(t) {
  const s = Math.max(0, Math.round((Date.now() - new Date(t).getTime()) / 1000));
  if (s < 90) return s + " s ago";
  if (s < 5400) return Math.round(s / 60) + " min ago";
  return Math.round(s / 3600) + " h ago";
}

function showStatus(msg, isError = true) {
  const s = $("status");
  s.hidden = !msg;
  s.textContent = msg || "";
  s.classList.toggle("error", isError);
  if (msg && isError) log("error " + msg);
}

function setConn(state, text) {
  const c = $("conn");
  c.dataset.conn = state;
  c.textContent = text || state;
}

const auth = () => (token ? { Authorization: "Bearer " + token } : {});

class HTTPError extends Error {
  constructor(status, msg) {
    super(msg);
    this.status = status;
  }
}

async function request(url, init = {}) {
  const res = await fetch(url, { cache: "no-store", ...init, headers: { ...auth(), ...(init.headers || {}) } });
  if (!res.ok) {
    const body = (await res.text().catch(() => "")).trim();
    throw new HTTPError(res.status, `HTTP ${res.status}${body ? ": " + body : ""}`);
  }
  return res;
}

// ---------- token and selection ----------

function takeFragment() {
  const frag = new URLSearchParams(location.hash.slice(1));
  if (frag.has("token")) {
    // Keep the token out of the address bar, the history and screenshots.
    try {
      sessionStorage.setItem(TOKEN_KEY, frag.get("token"));
    } catch (e) {
      /* storage disabled: the token lives in memory only */
    }
    token = frag.get("token");
    frag.delete("token");
    const rest = frag.toString();
    history.replaceState(null, "", location.pathname + location.search + (rest ? "#" + rest : ""));
  } else {
    try {
      token = sessionStorage.getItem(TOKEN_KEY) || "";
    } catch (e) {
      token = "";
    }
  }
  selected = frag.get("camera") || "";
  chosen = Boolean(selected);
}

function showLogin(msg) {
  setConn("locked", "token needed");
  showStatus(msg || "physd refused the token: enter the dashboard token (http.token).");
  $("login").hidden = false;
  $("token").focus();
}

$("login").addEventListener("submit", (ev) => {
  ev.preventDefault();
  token = $("token").value.trim();
  try {
    sessionStorage.setItem(TOKEN_KEY, token);
  } catch (e) {
    /* memory only */
  }
  $("token").value = "";
  $("login").hidden = true;
  showStatus("");
  start();
});

function select(name) {
  if (!cams.has(name)) return;
  selected = name;
  chosen = true;
  history.replaceState(null, "", location.pathname + location.search + "#camera=" + encodeURIComponent(name));
  images.last = 0;
  renderCards();
  renderDetail();
  refreshImages();
}

// ---------- state ----------

function applySnapshot(s) {
  cams.clear();
  for (const c of s.cameras || []) {
    const { history: hist, recent, detail, ...card } = c;
    cams.set(c.name, { card, history: hist || [], recent: recent || [], detail: detail || null });
  }
  order = [...cams.keys()].sort();
  autoSelect();
  log(`snapshot ${cams.size} cameras`);
  renderCards();
  renderDetail();
  images.last = 0;
  refreshImages();
}

function applyStatus(s) {
  const seen = new Set();
  for (const card of s.cameras || []) {
    seen.add(card.name);
    const c = cams.get(card.name);
    if (c) c.card = card;
    else cams.set(card.name, { card, history: [], recent: [], detail: null });
  }
  for (const name of [...cams.keys()]) if (!seen.has(name)) cams.delete(name);
  order = [...cams.keys()].sort();
  if (autoSelect()) renderDetail();
  renderCards();
  renderHeader();
  refreshImages();
}

function applyWindow(ev) {
  let c = cams.get(ev.camera);
  if (!c) {
    c = { card: ev.card, history: [], recent: [], detail: null };
    cams.set(ev.camera, c);
    order = [...cams.keys()].sort();
  }
  c.card = ev.card;
  const { reasons, ...point } = ev.window;
  c.history.push(point);
  if (c.history.length > HISTORY_MAX) c.history.splice(0, c.history.length - HISTORY_MAX);
  c.recent.unshift(ev.window);
  c.recent.length = Math.min(c.recent.length, RECENT_MAX);
  if (ev.detail) c.detail = ev.detail;
  log(`window ${ev.camera} ${ev.window.verdict}`);
  renderCards();
  if (ev.camera === selected) {
    renderDetail();
    refreshImages();
  }
}

// autoSelect shows, until the operator picks one, the first camera that
// needs attention (alerting), else the first that delivers frames, else the
// first; it reports whether the selection changed.
function autoSelect() {
  if (chosen && cams.has(selected)) return false;
  const rank = (n) => {
    const d = cams.get(n).card.display;
    if (d === "alerting") return 0;
    return d === "certified" || d === "training" || d === "online" ? 1 : 2;
  };
  let best = "";
  for (const n of order) if (!best || rank(n) < rank(best)) best = n;
  const changed = best !== selected;
  selected = best;
  return changed;
}

// ---------- the event stream ----------

// readEvents parses a text/event-stream body and calls on(event, data).
async function readEvents(body, on) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    lastByte = Date.now();
    buf += value.replace(/\r\n?/g, "\n");
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line === "" || line.startsWith(":")) continue; // comment: keepalive
        const c = line.indexOf(":");
        const field = c < 0 ? line : line.slice(0, c);
        let v = c < 0 ? "" : line.slice(c + 1);
        if (v.startsWith(" ")) v = v.slice(1);
        if (field === "event") event = v;
        else if (field === "data") data.push(v);
      }
      if (data.length) on(event, data.join("\n"));
    }
  }
}

function onEvent(event, data) {
  let v;
  try {
    v = JSON.parse(data);
  } catch (e) {
    log("error bad event " + event);
    return;
  }
  if (event === "snapshot") applySnapshot(v);
  else if (event === "status") applyStatus(v);
  else if (event === "window") applyWindow(v);
}

async function streamLoop() {
  let delay = 1000;
  for (;;) {
    const ctl = new AbortController();
    streamCtl = ctl;
    try {
      const res = await fetch("/api/v1/dashboard/events", {
        cache: "no-store",
        headers: { ...auth(), Accept: "text/event-stream" },
        signal: ctl.signal,
      });
      if (res.status === 401) {
        showLogin();
        return;
      }
      if (!res.ok || !res.body) throw new Error(`event stream: HTTP ${res.status}`);
      setConn("live", "live");
      showStatus("");
      log("stream open");
      lastByte = Date.now();
      delay = 1000;
      await readEvents(res.body, onEvent);
      log("stream closed");
    } catch (e) {
      if (streamCtl !== ctl) return; // replaced by a new start()
      log("stream closed " + (e && e.message ? e.message : e));
    }
    if (streamCtl !== ctl) return;
    setConn("reconnecting", "reconnecting…");
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(2 * delay, 30000);
  }
}

// A stream that delivers nothing (not even the keepalive) is dead although
// TCP has not noticed: abort it, and the loop reconnects.
setInterval(() => {
  if (streamCtl && lastByte && Date.now() - lastByte > STALL_MS) {
    lastByte = 0;
    streamCtl.abort();
  }
}, 5000);

async function start() {
  if (streamCtl) streamCtl.abort();
  streamCtl = null;
  setConn("connecting", "connecting…");
  try {
    const res = await request("/api/v1/dashboard");
    applySnapshot(await res.json());
  } catch (e) {
    if (e.status === 401) {
      showLogin(token ? "physd refused the token: check it (http.token)." : "This dashboard needs physd's token (http.token): open it as /dashboard#token=… or enter it here.");
      return;
    }
    showStatus("Cannot load the dashboard: " + e.message);
  }
  streamLoop();
}

// ---------- overview ----------

function estimateLines(card) {
  const e = card.estimate;
  if (!e) return [["Estimate", el("span", { class: "muted", text: "no certified estimate yet" })], ...amplitudeLines(card.amplitude), ...chartLines(card.charts), ...evidenceLines(card.evidence)];
  return [
    ["f_n", el("span", { class: "fn", text: fmtPM(e.fn_hz, e.fn_sigma, "Hz") })],
    ["ζ", el("span", { class: "zeta", text: fmtPM(e.zeta, e.zeta_sigma) })],
    ["γ0", el("span", { class: "g0", "data-gamma0": e.gamma0, "data-gamma0-sigma": e.gamma0_sigma, text: fmtPM(e.gamma0, e.gamma0_sigma, "1/s²") })],
    ["γ1", el("span", { class: "g1", "data-gamma1": e.gamma1, "data-gamma1-sigma": e.gamma1_sigma, text: fmtPM(e.gamma1, e.gamma1_sigma, "1/s") })],
    ["Certified", el("span", { text: `${clock(e.window_end)} (${ago(e.window_end)}), ${e.regime}` })],
    ...amplitudeLines(card.amplitude),
    ...chartLines(card.charts),
    ...evidenceLines(card.evidence),
  ];
}

// evidenceLines links the newest raised alert's evidence: its figure and
// its clip (recording until alerts.evidence.post after the alert).
function evidenceLines(files) {
  if (!files || !files.length) return [];
  const links = el("span", { class: "evidence" });
  for (const f of files) {
    if (links.childNodes.length) links.append(" · ");
    if (f.pending) {
      links.append(el("span", { class: "muted", text: f.kind + " recording…" }));
      continue;
    }
    const url = "/evidence/" + f.name.split("/").map(encodeURIComponent).join("/");
    const a = el("a", { href: url, "data-sha256": f.sha256 || "", "data-kind": f.kind, text: f.kind });
    // With http.token set a plain link would be refused: fetch it with
    // the token and open what came back.
    a.addEventListener("click", async (ev) => {
      ev.preventDefault();
      try {
        const res = await request(url);
        window.open(URL.createObjectURL(await res.blob()), "_blank");
      } catch (e) {
        log("error evidence " + e.message);
      }
    });
    links.append(a);
  }
  return [["Alert evidence", links]];
}

// chartLines shows the alerts' control charts (docs/alerts.md): learning
// with the points so far, or the statistic against its limit and the
// baseline's size.
function chartLines(charts) {
  return (charts || []).map((c) => {
    const name = c.quantity === "zeta" ? "ζ chart" : "f_n chart";
    const text = c.state === "learning"
      ? `learning the baseline (${c.baseline_points} points)`
      : `${c.state === "alarm" ? "ALARM" : "normal"} · ${fmt(c.statistic, 2)} of ${fmt(c.limit, 2)} (baseline ${c.baseline_points} points)`;
    return [name, el("span", { class: "chart " + c.state, "data-quantity": c.quantity, "data-statistic": c.statistic, "data-limit": c.limit, text })];
  });
}

// amplitudeLines shows the newest window's displacement amplitude and
// noise floor: in millimetres with the pixels beside them when the camera
// has a scale, else in source pixels.
function amplitudeLines(a) {
  if (!a) return [["Amplitude", el("span", { class: "amp muted", text: "not measured" })]];
  const both = (mm, px) => (finite(mm) ? `${fmt(mm, 3)} mm (${fmt(px, 3)} px)` : `${fmt(px, 3)} px`);
  return [
    ["Amplitude", el("span", { class: "amp", "data-px": a.px, "data-mm": finite(a.mm) ? a.mm : "", text: both(a.mm, a.px) })],
    ["Noise floor", el("span", { class: "amp-noise", "data-noise-px": a.noise_px, text: both(a.noise_mm, a.noise_px) + " rms" })],
    // The frames the stream's codec held still: motion below its quantiser.
    ...(a.held_share > 0 ? [["Codec held", el("span", { class: "amp-held", "data-held-share": a.held_share, text: `${Math.round(100 * a.held_share)} % of the frames` })]] : []),
  ];
}

function counts(card) {
  const w = card.windows || {};
  const cert = w.certified || 0;
  let other = 0;
  for (const [k, n] of Object.entries(w)) if (k !== "certified") other += n;
  return `${card.frames} frames · ${cert} certified / ${other} other windows` + (card.windows_skipped ? ` · ${card.windows_skipped} skipped` : "");
}

function renderCards() {
  const box = $("cards");
  box.replaceChildren();
  if (!order.length) {
    box.append(el("p", { class: "muted", text: "No camera is running." }));
    return;
  }
  for (const name of order) {
    const card = cams.get(name).card;
    const dl = el("dl", { class: "grid" });
    for (const [k, v] of estimateLines(card)) dl.append(el("dt", { text: k }), el("dd", {}, v));
    dl.append(el("dt", { text: "Source" }), el("dd", { class: "src", text: card.source }));
    dl.append(el("dt", { text: "Counts" }), el("dd", { text: counts(card) }));
    const art = el(
      "article",
      {
        class: "card" + (name === selected ? " selected" : ""),
        "data-camera": name,
        "data-display": card.display,
        tabindex: 0,
        role: "button",
        "aria-pressed": name === selected ? "true" : "false",
      },
      el("header", {}, el("h3", { text: name }), el("span", { class: "badge st-" + card.display, text: card.display })),
      dl,
      card.error ? el("p", { class: "err", text: card.error }) : null,
    );
    art.addEventListener("click", () => select(name));
    art.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") {
        ev.preventDefault();
        select(name);
      }
    });
    box.append(art);
  }
}

// ---------- detail ----------

function renderHeader() {
  const c = cams.get(selected);
  if (!c) return;
  $("d-name").textContent = selected;
  const b = $("d-badge");
  b.textContent = c.card.display;
  b.className = "badge st-" + c.card.display;
}

function renderDetail() {
  const c = cams.get(selected);
  $("detail").hidden = !c;
  if (!c) return;
  $("detail").dataset.camera = selected;
  renderHeader();
  renderROI(c.card);
  renderLatent(c.detail);
  renderSpectrum(c.detail);
  renderSlopes(c.detail);
  renderHistory(c.history);
  renderVerdicts(c.recent);
}

function renderROI(card) {
  const roi = card.roi;
  const th = card.thumb;
  const region = roi ? `the ROI x ${roi[0]}, y ${roi[1]}, ${roi[2]}×${roi[3]} px of the source` : "the whole source frame (no ROI)";
  const where = roi ? `ROI (yellow) x ${roi[0]}, y ${roi[1]}, ${roi[2]}×${roi[3]} px` : "ROI: the whole frame";
  $("d-frame-cap").textContent = `What the estimator sees: ${card.size}×${card.size} px from ${region}`;
  const box = $("d-source-box");
  box.hidden = !th;
  const o = $("d-roi");
  o.replaceChildren();
  if (!th) {
    $("d-source-cap").textContent = "No camera picture yet. " + where + " (source pixels).";
    return;
  }
  o.setAttribute("viewBox", `0 0 ${th.src_w} ${th.src_h}`);
  const r = roi || [0, 0, th.src_w, th.src_h];
  const sw = Math.max(1, Math.round(Math.max(th.src_w, th.src_h) / 120));
  if (card.zones?.length) {
    // A camera with zones: each zone's region, named; each has its own card.
    for (const z of card.zones) {
      o.append(svg("rect", { class: "roi-rect", x: z.roi[0], y: z.roi[1], width: z.roi[2], height: z.roi[3], "stroke-width": sw }));
      const t = svg("text", { class: "zone-label", x: z.roi[0] + 2 * sw, y: z.roi[1] + 8 * sw, "font-size": 7 * sw });
      t.textContent = z.name;
      o.append(t);
    }
    $("d-source-cap").textContent = `Camera picture ${th.src_w}×${th.src_h} px (${clock(th.taken)}); zones (yellow): ` +
      card.zones.map((z) => `${z.name} x ${z.roi[0]}, y ${z.roi[1]}, ${z.roi[2]}×${z.roi[3]} px`).join("; ");
    return;
  }
  o.append(svg("rect", { class: "roi-rect", x: r[0], y: r[1], width: r[2], height: r[3], "stroke-width": sw }));
  $("d-source-cap").textContent = `Camera picture ${th.src_w}×${th.src_h} px (${clock(th.taken)}); ${where}`;
}

// Fetch the selected camera's images with the token; at most once a second.
async function refreshImages() {
  const c = cams.get(selected);
  if (!c || images.busy || Date.now() - images.last < IMAGE_EVERY_MS) return;
  images.busy = true;
  images.last = Date.now();
  const name = selected;
  const base = "/api/v1/cameras/" + encodeURIComponent(name);
  try {
    const jobs = [];
    if (c.card.frame) jobs.push(loadImage($("d-frame"), base + "/frame.png", "frame"));
    if (c.card.thumb) jobs.push(loadImage($("d-source"), base + "/source.png", "source"));
    await Promise.all(jobs);
  } finally {
    images.busy = false;
  }
}

async function loadImage(img, url, key) {
  try {
    const res = await request(url);
    const blob = await res.blob();
    const u = URL.createObjectURL(blob);
    const old = images[key];
    images[key] = u;
    img.src = u;
    if (old) img.addEventListener("load", () => URL.revokeObjectURL(old), { once: true });
  } catch (e) {
    if (e.status !== 404) log("error image " + e.message);
  }
}

// ---------- plots ----------

// niceTicks returns about n round values spanning [lo, hi].
function niceTicks(lo, hi, n = 4) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / n;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * p).find((s) => s >= raw) || 10 * p;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

function timeTicks(lo, hi) {
  const span = (hi - lo) / 1000;
  const step = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200].find((s) => span / s <= 4) || 14400;
  const out = [];
  for (let v = Math.ceil(lo / 1000 / step) * step * 1000; v <= hi; v += step * 1000) out.push(v);
  return out;
}

// frame sets up an SVG plot: the size follows the element's width; the
// returned scales map data to pixels. opt: {x: [lo, hi], y: [lo, hi],
// xTicks, xFmt, yFmt, yLog}.
function frame(el_, opt) {
  const W = Math.max(240, Math.round(el_.clientWidth || el_.parentElement.clientWidth || 600));
  const H = Number(el_.dataset.h) || 160;
  el_.setAttribute("viewBox", `0 0 ${W} ${H}`);
  el_.replaceChildren();
  const m = { l: 54, r: 8, t: 8, b: 20 };
  const [x0, x1] = opt.x;
  let [y0, y1] = opt.y;
  const ly = (v) => (opt.yLog ? Math.log10(v) : v);
  let Y0 = ly(y0);
  let Y1 = ly(y1);
  if (!(Y1 > Y0)) {
    Y0 -= 1;
    Y1 += 1;
  }
  const sx = (v) => m.l + ((v - x0) / (x1 - x0 || 1)) * (W - m.l - m.r);
  const sy = (v) => {
    const p = m.t + (1 - (ly(v) - Y0) / (Y1 - Y0)) * (H - m.t - m.b);
    return Math.min(H - m.b, Math.max(m.t, p));
  };
  const clipped = (v) => ly(v) < Y0 || ly(v) > Y1;
  const g = svg("g", { class: "axes" });
  g.append(svg("rect", { class: "plotarea", x: m.l, y: m.t, width: W - m.l - m.r, height: H - m.t - m.b }));
  const yt = opt.yLog ? logTicks(y0, y1) : niceTicks(y0, y1, 4);
  for (const v of yt) {
    const y = sy(v);
    g.append(svg("line", { class: "gl", x1: m.l, x2: W - m.r, y1: y, y2: y }));
    g.append(svg("text", { class: "tick", x: m.l - 4, y: y + 3, "text-anchor": "end", text: (opt.yFmt || fmtTick)(v) }));
  }
  for (const v of opt.xTicks || niceTicks(x0, x1, 5)) {
    const x = sx(v);
    g.append(svg("line", { class: "gl", x1: x, x2: x, y1: m.t, y2: H - m.b }));
    g.append(svg("text", { class: "tick", x, y: H - 6, "text-anchor": "middle", text: (opt.xFmt || fmtTick)(v) }));
  }
  el_.append(g);
  return { sx, sy, W, H, m, clipped };
}

function fmtTick(v) {
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e4 || a < 1e-3) return v.toExponential(0);
  return Number(v.toPrecision(4)).toString();
}

function logTicks(lo, hi) {
  const out = [];
  for (let e = Math.ceil(Math.log10(lo)); e <= Math.floor(Math.log10(hi)); e++) out.push(Math.pow(10, e));
  return out.length ? out : [lo];
}

function empty(el_, msg) {
  const W = Math.max(240, Math.round(el_.clientWidth || 600));
  const H = Number(el_.dataset.h) || 160;
  el_.setAttribute("viewBox", `0 0 ${W} ${H}`);
  el_.replaceChildren(svg("text", { class: "empty", x: W / 2, y: H / 2, "text-anchor": "middle", text: msg }));
}

function pathOf(pts) {
  let d = "";
  let pen = false;
  for (const [x, y] of pts) {
    if (!finite(x) || !finite(y)) {
      pen = false;
      continue;
    }
    d += (pen ? "L" : "M") + x.toFixed(1) + " " + y.toFixed(1);
    pen = true;
  }
  return d;
}

function extent(vals, pad = 0.08) {
  const v = vals.filter(finite);
  if (!v.length) return null;
  let lo = Math.min(...v);
  let hi = Math.max(...v);
  if (hi === lo) {
    const d = Math.abs(lo) * 0.01 || 1;
    lo -= d;
    hi += d;
  }
  const p = (hi - lo) * pad;
  return [lo - p, hi + p];
}

function renderLatent(det) {
  const p = $("p-latent");
  p.dataset.latentPoints = 0;
  p.dataset.fittedPoints = 0;
  p.dataset.crossings = 0;
  if (!det || !det.latents || !det.latents.length) {
    empty(p, "no window estimated yet");
    return;
  }
  // An ambient record's evidence is its correlation signature R(τ),
  // from τ = Δt on: a free response of the same ODE.
  $("h-latent").textContent = det.signature
    ? "Last record: correlation signature R(τ) and the fitted free response"
    : "Last window: latent z(t) and the fitted ODE solution";
  const dt = det.dt * det.stride;
  let tmax = 0;
  const all = [];
  for (const z of det.latents) {
    tmax = Math.max(tmax, (z.length - 1) * dt);
    all.push(...z);
  }
  for (const z of det.fitted || []) all.push(...z);
  const cov = det.coverage || {};
  if (finite(cov.u_lo)) all.push(cov.u_lo, cov.u_hi);
  const y = extent(all) || [-1, 1];
  const f = frame(p, { x: [0, tmax || 1], y, xFmt: (v) => fmtTick(v) + " s" });
  if (finite(cov.u_lo) && finite(cov.u_hi)) {
    const a = f.sy(cov.u_hi);
    const b = f.sy(cov.u_lo);
    p.append(svg("rect", { class: "band", x: f.m.l, y: a, width: f.W - f.m.l - f.m.r, height: Math.max(1, b - a) }));
  }
  for (const l of det.levels || []) {
    const yy = f.sy(l.u);
    p.append(svg("line", { class: "level", x1: f.m.l, x2: f.W - f.m.r, y1: yy, y2: yy }));
  }
  let nl = 0;
  det.latents.forEach((z, i) => {
    nl += z.length;
    p.append(svg("path", { class: "lat c" + (i % 6), d: pathOf(z.map((v, k) => [f.sx(k * dt), f.sy(v)])), "data-points": z.length }));
  });
  let nf = 0;
  (det.fitted || []).forEach((z) => {
    nf += z.length;
    p.append(svg("path", { class: "fit", d: pathOf(z.map((v, k) => [f.sx(k * dt), f.sy(v)])), "data-points": z.length }));
  });
  let nc = 0;
  for (const l of det.levels || []) {
    for (const c of l.crossings) {
      p.append(svg("circle", { class: "cross c" + (c.clip % 6), cx: f.sx(c.t), cy: f.sy(l.u), r: 3 }));
      nc++;
    }
  }
  p.dataset.latentPoints = nl;
  p.dataset.fittedPoints = nf;
  p.dataset.crossings = nc;
}

// renderSpectrum draws the first clip's periodogram (log power) with a
// line at each of the window's modes: solid when certified.
function renderSpectrum(det) {
  const p = $("p-spectrum");
  p.dataset.bins = 0;
  p.dataset.modes = 0;
  const sp = det && det.spectrum;
  if (!sp || !sp.hz || !sp.hz.length) {
    empty(p, "no spectrum yet");
    return;
  }
  const pw = sp.power.map((v) => Math.max(v, 1e-30));
  const top = Math.max(...pw);
  const y = [Math.max(Math.min(...pw), top * 1e-8), top];
  const f = frame(p, { x: [0, sp.hz[sp.hz.length - 1]], y, yLog: true, xFmt: (v) => fmtTick(v) + " Hz" });
  p.append(svg("path", { class: "lat c0", d: pathOf(sp.hz.map((h, k) => [f.sx(h), f.sy(pw[k])])), "data-points": sp.hz.length }));
  for (const m of sp.modes || []) {
    if (!finite(m.fn_hz)) continue;
    const x = f.sx(m.fn_hz);
    p.append(svg("line", { class: m.certified ? "fit" : "level", x1: x, x2: x, y1: f.m.t, y2: f.H - f.m.b, "data-label": m.label }));
    const t = svg("text", { class: "tick", x: x + 3, y: f.m.t + 10 });
    t.textContent = "mode " + m.label;
    p.append(t);
  }
  p.dataset.bins = sp.hz.length;
  p.dataset.modes = (sp.modes || []).length;
}

function renderSlopes(det) {
  const p = $("p-slopes");
  const note = $("d-coverage");
  if (!det || !det.levels || !det.levels.length) {
    empty(p, "no crossings yet");
    note.textContent = "";
    return;
  }
  const cov = det.coverage || {};
  const slopes = [];
  const us = [];
  for (const l of det.levels) {
    us.push(l.u);
    for (const c of l.crossings) slopes.push(c.slope);
  }
  if (finite(cov.u_lo)) us.push(cov.u_lo, cov.u_hi);
  const x = extent(slopes.concat([0])) || [-1, 1];
  const y = extent(us, 0.15) || [-1, 1];
  const f = frame(p, { x, y });
  if (finite(cov.u_lo) && finite(cov.u_hi)) {
    const a = f.sy(cov.u_hi);
    const b = f.sy(cov.u_lo);
    p.append(svg("rect", { class: "band", x: f.m.l, y: a, width: f.W - f.m.l - f.m.r, height: Math.max(1, b - a) }));
  }
  const x0 = f.sx(0);
  p.append(svg("line", { class: "zero", x1: x0, x2: x0, y1: f.m.t, y2: f.H - f.m.b }));
  for (const l of det.levels) {
    const yy = f.sy(l.u);
    p.append(svg("line", { class: "level", x1: f.m.l, x2: f.W - f.m.r, y1: yy, y2: yy }));
    p.append(svg("text", { class: "tick lbl", x: f.W - f.m.r - 2, y: yy - 3, "text-anchor": "end", text: `${l.crossings.length} crossings` }));
  }
  for (const l of det.levels) {
    const yy = f.sy(l.u);
    for (const c of l.crossings) p.append(svg("circle", { class: "cross c" + (c.clip % 6), cx: f.sx(c.slope), cy: yy, r: 3.5 }));
  }
  const inside = cov.holds ? "inside U" : "at the latent's quartiles (no U)";
  note.textContent =
    `${det.verdict}: coverage ${cov.holds ? "holds" : "fails"} — ${cov.covered ?? 0} of ${cov.levels ?? 0} levels covered, ` +
    `at most ${cov.max_distinct_slopes ?? 0} distinct slopes at a level (need 3), ` +
    (finite(cov.u_lo) ? `U = [${fmt(cov.u_lo, 4)}, ${fmt(cov.u_hi, 4)}] holds ${fmt(100 * cov.width, 3)} % of the samples (need ${fmt(100 * cov.min_width, 3)} %), ` : "") +
    `slope tolerance ${fmt(cov.slope_tol, 3)}, ψ_min ${fmt(det.psi_min, 3)}, fit residual ${fmt(det.trajectory_residual, 3)}. ` +
    `Levels shown ${inside}; slopes on the x axis.`;
}

// historyPlot draws one quantity over time: certified windows as filled
// dots with ±σ bars and a line, the others as hollow squares.
function historyPlot(id, hist, key, skey, opt = {}) {
  const p = $(id);
  const pts = hist.map((w) => ({ t: new Date(w.end).getTime(), v: w[key], s: skey ? w[skey] : null, cert: w.certified })).filter((q) => finite(q.v) && finite(q.t) && (!opt.yLog || q.v > 0));
  p.dataset.count = pts.length;
  p.dataset.certified = pts.filter((q) => q.cert).length;
  if (!pts.length) {
    empty(p, "no windows yet");
    return;
  }
  const cert = pts.filter((q) => q.cert);
  // The scale follows the certified windows (a rejected window may be
  // wildly off); others outside it are pinned to the edge.
  const basis = cert.length ? cert : pts;
  let y;
  if (opt.yLog) {
    const lo = Math.min(...basis.map((q) => q.v));
    const hi = Math.max(...basis.map((q) => q.v));
    y = [lo / 1.5, hi * 1.5];
  } else {
    y = extent(basis.flatMap((q) => (finite(q.s) && q.cert ? [q.v - q.s, q.v + q.s] : [q.v]))) || [0, 1];
  }
  const tlo = pts[0].t;
  const thi = Math.max(pts[pts.length - 1].t, tlo + 1000);
  const f = frame(p, { x: [tlo, thi], y, yLog: opt.yLog, xTicks: timeTicks(tlo, thi), xFmt: (v) => clock(new Date(v)) });
  if (cert.length) {
    let bars = "";
    for (const q of cert) {
      if (!finite(q.s) || q.s <= 0) continue;
      const x = f.sx(q.t).toFixed(1);
      bars += `M${x} ${f.sy(q.v - q.s).toFixed(1)}V${f.sy(q.v + q.s).toFixed(1)}`;
    }
    if (bars) p.append(svg("path", { class: "sigma", d: bars }));
    p.append(svg("path", { class: "cert-line", d: pathOf(cert.map((q) => [f.sx(q.t), f.sy(q.v)])) }));
  }
  const g = svg("g", {});
  for (const q of pts) {
    const x = f.sx(q.t);
    const yy = f.sy(q.v);
    const out = f.clipped(q.v);
    if (q.cert) g.append(svg("circle", { class: "pt cert" + (out ? " out" : ""), cx: x, cy: yy, r: 2.6 }));
    else g.append(svg("rect", { class: "pt rej" + (out ? " out" : ""), x: x - 2.5, y: yy - 2.5, width: 5, height: 5 }));
  }
  p.append(g);
}

function renderHistory(hist) {
  historyPlot("p-g0", hist, "gamma0", "gamma0_sigma");
  historyPlot("p-g1", hist, "gamma1", "gamma1_sigma");
  historyPlot("p-fn", hist, "fn_hz", "fn_sigma");
  historyPlot("p-zeta", hist, "zeta", "zeta_sigma");
  const logLoss = hist.some((w) => finite(w.loss)) && hist.every((w) => !finite(w.loss) || w.loss > 0);
  historyPlot("p-loss", hist.map((w) => ({ ...w, certified: w.verdict === "certified" })), "loss", null, { yLog: logLoss });
  historyPlot("p-train", hist, "train_ms", null);
}

function renderVerdicts(recent) {
  const ol = $("d-verdicts");
  ol.replaceChildren();
  if (!recent.length) {
    ol.append(el("li", { class: "muted", text: "no window finished yet" }));
    return;
  }
  for (const w of recent) {
    const head = el(
      "div",
      { class: "vhead" },
      el("span", { class: "badge v-" + w.verdict, text: w.verdict }),
      el("span", { class: "muted", text: ` ${clock(w.start)}–${clock(w.end)}` }),
      el("span", { text: finite(w.gamma0) ? `  γ0 ${fmt(w.gamma0)} γ1 ${fmt(w.gamma1, 3)}` : "" }),
      el("span", { class: "muted", text: finite(w.train_ms) ? `  ${fmt(w.train_ms, 3)} ms${w.cold ? " (cold start)" : ""}` : "" }),
    );
    const reasons = el("ul", { class: "reasons" });
    if (w.reasons && w.reasons.length) for (const r of w.reasons) reasons.append(el("li", { text: r }));
    else if (w.certified) reasons.append(el("li", { class: "ok", text: "certified: coverage, conditioning and fit all hold" }));
    ol.append(el("li", { "data-verdict": w.verdict }, head, reasons));
  }
}

// Plots take their width from the page: redraw when it changes.
let resizeTimer = 0;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(renderDetail, 150);
});

takeFragment();
start();
