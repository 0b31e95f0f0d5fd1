// physd publish page: sends this device's camera to physd over WHIP
// (RFC 9725) and shows physd's latest estimate for the camera. Served at
// /publish/{camera}; the URL fragment (never sent to the server) may carry
// token=..., codec=vp8|h264 (offer only that codec family) and autostart=1.
// Every request carries the token, the first one (the camera's publish
// config) too: without the token the page asks for it and loads the config
// on Start.
//
// ICE: no trickle. The page waits for candidate gathering to complete
// (bounded by GATHER_MS; host candidates on a LAN take ~0.2 s) and sends one
// offer with every candidate in it.
//
// Console lines, for tests (Chromium prints them on stderr):
//   physd: config {json}             the publish config was loaded
//   physd: capture WxH@FPS           the camera opened with these settings
//   physd: offer codecs=A,B          codec names offered, in order
//   physd: whip STATUS LOCATION      the WHIP answer arrived
//   physd: connection STATE          RTCPeerConnection.connectionState
//   physd: sender degradation=D maxFramerate=F   sender parameters in force
//   physd: codec MIME FMTP IMPL      the codec actually sending (getStats)
//   physd: latest {json}             a /latest poll that changed something
//   physd: error MESSAGE             whatever the status line shows as an error
//   physd: stopped REASON            the session ended (DELETE sent)
"use strict";

const GATHER_MS = 2000;
const POLL_MS = 2000;
const POST_TIMEOUT_MS = 15000;

const $ = (id) => document.getElementById(id);
const log = (msg) => console.log("physd: " + msg);

const camera = decodeURIComponent(location.pathname.replace(/\/+$/, "").split("/").pop() || "");
const api = "/api/v1/cameras/" + encodeURIComponent(camera);
const frag = new URLSearchParams(location.hash.slice(1));
const wantCodec = (frag.get("codec") || "").toLowerCase();

let cfg = null; // publish config from the server
let stream = null; // camera MediaStream, kept across sessions for the preview
let pc = null; // RTCPeerConnection of the current session
let session = null; // {url, auth} of the WHIP session resource, for DELETE
let auth = null; // Authorization header of the current session
let timer = 0;
let busy = false;
let polling = false;
let pollFailed = false;
let codecLogged = false;
let lastLatest = "";

function status(msg, isError = false) {
  const s = $("status");
  s.textContent = msg;
  s.classList.toggle("error", isError);
  if (isError) log("error " + msg);
}

function setButton(label, disabled = false) {
  $("toggle").textContent = label || (pc ? "Stop" : "Start");
  $("toggle").disabled = disabled;
  $("token").disabled = Boolean(pc) || disabled;
}

// request is fetch that turns a non-2xx answer into an Error carrying the
// status and the server's plain-text message verbatim.
async function request(url, init = {}) {
  const res = await fetch(url, { cache: "no-store", ...init });
  if (!res.ok) {
    const body = (await res.text().catch(() => "")).trim();
    throw new Error(`HTTP ${res.status}${res.statusText ? " " + res.statusText : ""}${body ? ": " + body : ""}`);
  }
  return res;
}

async function init() {
  $("camera").textContent = camera;
  document.title = `physd · publish ${camera}`;
  if (frag.has("token")) {
    // Keep the token in memory only: take it out of the address bar and history.
    $("token").value = frag.get("token");
    frag.delete("token");
    const rest = frag.toString();
    history.replaceState(null, "", location.pathname + location.search + (rest ? "#" + rest : ""));
  }
  $("controls").addEventListener("submit", (e) => {
    e.preventDefault();
    if (pc) stop("by user");
    else start();
  });
  addEventListener("pagehide", () => stop("page closed"));
  new ResizeObserver(drawROI).observe($("video"));
  $("video").addEventListener("resize", () => { drawROI(); showCapture(false); });
  if (!window.isSecureContext || !navigator.mediaDevices) {
    status("Camera access needs a secure page: open it over HTTPS (or on localhost).", true);
    setButton("Start", true);
    return;
  }
  const token = $("token").value.trim();
  if (!token) {
    // The publish config needs the token too: it comes with Start.
    status("Enter the publish token and press Start.");
    return;
  }
  if (!(await configure(token))) return;
  if (!(await openCamera())) return;
  if (frag.get("autostart") === "1") start();
  else status("Ready: press Start.");
}

// configure loads the camera's publish config with the token (physd
// answers 401 without it, whether the camera exists or not).
async function configure(token) {
  try {
    cfg = await (await request(api + "/publish", { headers: { Authorization: "Bearer " + token } })).json();
  } catch (e) {
    cfg = null;
    status(`Cannot load the camera's publish config: ${e.message}`, true);
    return false;
  }
  log("config " + JSON.stringify(cfg));
  $("video").parentElement.style.aspectRatio = `${cfg.width} / ${cfg.height}`;
  return true;
}

async function openCamera() {
  try {
    stream = await navigator.mediaDevices.getUserMedia({
      audio: false,
      video: {
        facingMode: { ideal: "environment" },
        width: { ideal: cfg.width },
        height: { ideal: cfg.height },
        frameRate: { ideal: cfg.fps },
      },
    });
  } catch (e) {
    status(`Camera unavailable: ${e.name}: ${e.message}`, true);
    return false;
  }
  const track = stream.getVideoTracks()[0];
  // "motion" tells the encoder to keep the frame rate and give up detail,
  // which is what the estimator needs.
  track.contentHint = "motion";
  track.addEventListener("ended", () => {
    status("The camera stopped (device lost or permission revoked).", true);
    stop(null);
  });
  $("video").srcObject = stream;
  showCapture(true);
  return true;
}

function showCapture(logIt) {
  const s = stream?.getVideoTracks()[0]?.getSettings();
  if (!s || !cfg) return;
  let txt = `${s.width}×${s.height} @ ${s.frameRate} fps`;
  if (s.width !== cfg.width || s.height !== cfg.height) {
    txt += ` (physd expects ${cfg.width}×${cfg.height}`;
    if (s.height > s.width && cfg.width > cfg.height) txt += ": turn the phone to landscape";
    txt += ")";
  }
  $("capture").textContent = txt;
  if (logIt) log(`capture ${s.width}x${s.height}@${s.frameRate}`);
}

// drawROI outlines the region of interest over the preview. The ROI is in
// pixels of cfg.width×cfg.height, i.e. fractions of the whole frame, and the
// video is letterboxed (object-fit: contain) inside its box.
function drawROI() {
  const v = $("video");
  const c = $("roi");
  const dpr = window.devicePixelRatio || 1;
  c.width = Math.round(c.clientWidth * dpr);
  c.height = Math.round(c.clientHeight * dpr);
  const g = c.getContext("2d");
  g.clearRect(0, 0, c.width, c.height);
  if (!cfg?.roi || !v.videoWidth) return;
  const k = Math.min(c.width / v.videoWidth, c.height / v.videoHeight);
  const w = v.videoWidth * k;
  const h = v.videoHeight * k;
  const [x, y, rw, rh] = cfg.roi;
  const rx = (c.width - w) / 2 + (x / cfg.width) * w;
  const ry = (c.height - h) / 2 + (y / cfg.height) * h;
  g.lineWidth = 2 * dpr;
  g.strokeStyle = "#ffd400";
  g.setLineDash([6 * dpr, 4 * dpr]);
  g.strokeRect(rx, ry, (rw / cfg.width) * w, (rh / cfg.height) * h);
  g.fillStyle = "#ffd400";
  g.font = `${12 * dpr}px system-ui, sans-serif`;
  g.fillText("ROI", rx + 4 * dpr, ry + 14 * dpr);
}

async function start() {
  if (busy || pc) return;
  const token = $("token").value.trim();
  if (!token) {
    status("Enter the publish token first.", true);
    $("token").focus();
    return;
  }
  if (!cfg) {
    busy = true;
    setButton("Starting…", true);
    const ok = await configure(token);
    busy = false;
    setButton();
    if (!ok) return;
  }
  if (!stream && !(await openCamera())) return;
  busy = true;
  auth = { Authorization: "Bearer " + token };
  pc = new RTCPeerConnection({ iceServers: [], bundlePolicy: "max-bundle" });
  setButton("Starting…", true);
  const p = pc;
  try {
    await publish(p);
  } catch (e) {
    if (pc === p) {
      status(`Publishing failed: ${e.message}`, true);
      stop(null);
    }
  } finally {
    busy = false;
    setButton();
  }
}

// publish negotiates the session of p; it throws if p was stopped meanwhile.
async function publish(p) {
  const check = () => { if (pc !== p) throw new Error("cancelled"); };
  p.addEventListener("connectionstatechange", () => onConnectionState(p));
  const track = stream.getVideoTracks()[0];
  const tr = p.addTransceiver(track, { direction: "sendonly", streams: [stream], sendEncodings: [{ maxFramerate: cfg.fps }] });
  if (wantCodec) preferCodec(tr, wantCodec);
  await tuneSender(tr.sender);
  status("Gathering network candidates…");
  await p.setLocalDescription();
  await gathered(p);
  check();
  const offer = p.localDescription.sdp;
  log("offer codecs=" + sdpCodecs(offer).join(","));
  status("Sending the offer to physd…");
  const res = await request(cfg.whip, {
    method: "POST",
    headers: { ...auth, "Content-Type": "application/sdp" },
    body: offer,
    signal: AbortSignal.timeout?.(POST_TIMEOUT_MS),
  });
  const loc = res.headers.get("Location");
  const answer = await res.text();
  if (loc) {
    const s = { url: new URL(loc, res.url).href, auth };
    if (pc !== p) deleteSession(s); // stopped while the POST was in flight
    else session = s;
  }
  check();
  log(`whip ${res.status} ${loc}`);
  if (!loc) throw new Error("the WHIP answer has no Location header");
  await p.setRemoteDescription({ type: "answer", sdp: answer });
  check();
  $("codec").textContent = sdpCodecs(answer)[0] || "–";
  const prm = await tuneSender(tr.sender);
  if (prm) log(`sender degradation=${prm.degradationPreference} maxFramerate=${prm.encodings?.map((e) => e.maxFramerate).join(",")}`);
  if (p.connectionState !== "connected") status(`Connecting ${camera}…`);
  timer = setInterval(tick, POLL_MS);
  tick();
}

function preferCodec(tr, name) {
  if (name !== "vp8" && name !== "h264") throw new Error(`unknown codec "${name}" in the URL (vp8 or h264)`);
  const caps = RTCRtpSender.getCapabilities("video")?.codecs || [];
  const want = caps.filter((c) => c.mimeType.toLowerCase() === "video/" + name);
  if (!want.length) throw new Error(`this browser cannot send ${name.toUpperCase()}`);
  // Only this family (plus retransmission): physd must take it or refuse.
  const rtx = caps.filter((c) => c.mimeType.toLowerCase() === "video/rtx");
  tr.setCodecPreferences([...want, ...rtx]);
}

// tuneSender favours frame timing over resolution: the estimator needs
// evenly spaced frames more than it needs detail.
async function tuneSender(sender) {
  try {
    const prm = sender.getParameters();
    prm.degradationPreference = "maintain-framerate";
    for (const e of prm.encodings || []) e.maxFramerate = cfg.fps;
    await sender.setParameters(prm);
    return sender.getParameters();
  } catch (e) {
    log(`warning setParameters: ${e.name}: ${e.message}`);
  }
}

function gathered(p) {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      p.removeEventListener("icegatheringstatechange", changed);
      resolve();
    };
    const changed = () => { if (p.iceGatheringState === "complete") done(); };
    const t = setTimeout(done, GATHER_MS);
    p.addEventListener("icegatheringstatechange", changed);
    changed();
  });
}

// sdpCodecs lists the distinct codec names of the video m-line, in order.
function sdpCodecs(sdp) {
  const m = sdp.match(/^m=video \S+ \S+ ([\d ]+)/m);
  if (!m) return [];
  const names = m[1].trim().split(/\s+/).map((pt) => (sdp.match(new RegExp(`^a=rtpmap:${pt} ([^/\\s]+)`, "m")) || [])[1] || pt);
  return [...new Set(names)];
}

function onConnectionState(p) {
  if (pc !== p) return;
  const s = p.connectionState;
  $("conn").textContent = s;
  log("connection " + s);
  if (s === "connected") status(`Publishing ${camera}.`);
  else if (s === "disconnected") status("Connection interrupted; waiting for it to recover…", true);
  else if (s === "failed") {
    status("Connection failed: is physd reachable from this device?", true);
    stop(null);
  }
}

async function tick() {
  const p = pc;
  if (!p || polling) return;
  polling = true;
  try {
    await showStats(p).catch(() => {});
    const res = await request(api + "/latest", { headers: auth });
    if (pc !== p) return;
    showLatest(await res.json());
    if (pollFailed && p.connectionState === "connected") status(`Publishing ${camera}.`);
    pollFailed = false;
  } catch (e) {
    if (pc === p) {
      pollFailed = true;
      status(`Cannot read the latest estimate: ${e.message}`, true);
    }
  } finally {
    polling = false;
  }
}

async function showStats(p) {
  let out = null;
  const codecs = new Map();
  (await p.getStats()).forEach((s) => {
    if (s.type === "outbound-rtp" && s.kind === "video") out = s;
    else if (s.type === "codec") codecs.set(s.id, s);
  });
  if (!out || pc !== p) return;
  const c = codecs.get(out.codecId);
  if (c) {
    const impl = out.encoderImplementation || "";
    const profile = (c.sdpFmtpLine || "").match(/profile-level-id=(\w+)/);
    $("codec").textContent = [c.mimeType.replace(/^video\//, ""), profile && "profile " + profile[1], impl].filter(Boolean).join(" · ");
    // Logged once frames flow, when the encoder implementation is known.
    if (!codecLogged && out.framesSent > 0) {
      log(`codec ${c.mimeType} ${c.sdpFmtpLine || "-"} ${impl || "-"}`);
      codecLogged = true;
    }
  }
  const lim = out.qualityLimitationReason && out.qualityLimitationReason !== "none" ? ` · limited by ${out.qualityLimitationReason}` : "";
  $("sending").textContent = `${out.frameWidth ?? "?"}×${out.frameHeight ?? "?"} @ ${out.framesPerSecond ?? 0} fps · ${out.framesSent ?? 0} frames${lim}`;
}

const num = (x, digits = 4) => (Number.isFinite(x) ? String(Number(x.toPrecision(digits))) : "–");
const pm = (x, s) => `${num(x)} ± ${num(s, 2)}`;
const clock = (t) => { const d = new Date(t); return isNaN(d) ? "–" : d.toLocaleTimeString(); };

function showLatest(L) {
  const E = L.estimate;
  const D = L.diagnostic;
  $("state").textContent = L.state || "–";
  if (E) {
    $("fn").textContent = `${pm(E.fn_hz, E.fn_sigma)} Hz`;
    $("zeta").textContent = pm(E.zeta, E.zeta_sigma);
    $("g0").textContent = pm(E.gamma0, E.gamma0_sigma);
    $("g1").textContent = pm(E.gamma1, E.gamma1_sigma);
    $("regime").textContent = E.regime || "–";
    $("window").textContent = `${clock(E.window_start)} – ${clock(E.window_end)} · ${E.frames} frames`;
  }
  // The badge follows the newer of the estimate and the diagnostic.
  const last = [E, D].filter(Boolean).sort((a, b) => (Date.parse(b.window_end) || 0) - (Date.parse(a.window_end) || 0))[0];
  const badge = $("badge");
  const reasons = $("reasons");
  reasons.replaceChildren();
  if (!last) {
    badge.textContent = "no estimate yet";
    badge.className = "badge";
    $("badge-time").textContent = "";
  } else {
    const ok = last.certified === true;
    badge.textContent = ok ? "CERTIFIED" : "not certified";
    badge.className = "badge " + (ok ? "ok" : "bad");
    $("badge-time").textContent = `${last.verdict ? last.verdict + " · " : ""}window ending ${clock(last.window_end)}`;
    for (const r of ok ? [] : D?.reasons || []) {
      const li = document.createElement("li");
      li.textContent = r;
      reasons.append(li);
    }
  }
  const sum = JSON.stringify({ state: L.state, fn_hz: E?.fn_hz ?? null, zeta: E?.zeta ?? null, certified: last ? last.certified === true : null, verdict: D?.verdict ?? null });
  if (sum !== lastLatest) log("latest " + sum);
  lastLatest = sum;
}

function deleteSession(s) {
  // keepalive lets the request outlive the page on pagehide.
  fetch(s.url, { method: "DELETE", headers: s.auth, keepalive: true })
    .then((r) => log(`delete ${r.status}`))
    .catch((e) => log(`delete failed: ${e.message}`));
}

function stop(reason) {
  clearInterval(timer);
  timer = 0;
  const p = pc;
  const s = session;
  pc = null;
  session = null;
  codecLogged = false;
  if (!p && !s) return;
  p?.close();
  log("stopped " + (reason || "on error"));
  if (s) deleteSession(s);
  $("conn").textContent = "idle";
  $("sending").textContent = "–";
  if (reason) status(`Stopped (${reason}).`);
  setButton();
}

init();
