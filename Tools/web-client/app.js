// The phone's side of Nearby: a device of the project, like the Linux ones, whose medium is
// the browser's speaker and microphone. The modem runs in an AudioWorklet (worklet.js); this
// file talks to the resolver (the same API as every device: register, report, events) and
// draws what happens. The project's client key comes in the link's fragment (#key=...), which
// browsers never send to a server nor log.
"use strict";

const REPORT_MARGIN = 5; // seconds before the token expires when the page reports again
const SIGHTING_BATCH = 300; // ms a heard token waits for others before the report goes
const SELF_CHECK_WAIT = 4000; // ms the self-check listens for its own frame after its sweep
const SWEEP_SECONDS = 1.5; // the self-check's sweep, 15-21 kHz
const CARRYING_DB = 15; // a band carries when its sweep stands this far above its background
const STREAM_SILENCE = 40000; // ms without a byte (keepalives come every 15 s) = a dead stream
const LEVEL = 0.5; // peak of the frames the page plays, as the Linux medium's default
const CODE_REPEAT = 3000; // ms between the sightings a typed code makes
const CODE_LIFETIME = 120000; // ms a code is reported for: the box's token rotates then
const MEDIUMS = ["audio", "optical"]; // a typed code counts only on a medium both sides name

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);

const page = {
  key: "",
  device: null, // {id, secret}
  worklet: null,
  context: null,
  running: false,
  revision: -1,
  token: null,
  broadcasting: false,
  scanning: true,
  subscription: crypto.randomUUID ? crypto.randomUUID() : null,
  publication: null, // {id, text}
  unpublish: [],
  publishPending: null,
  sightings: new Map(),
  lastSequence: 0, // the highest event seen: Last-Event-ID when the stream reconnects
  seen: new Set(), // events already shown (a report's answer and the stream share them)
  found: new Map(),
  reportTimer: 0,
  reporting: null,
  selfCheck: null, // {token, resolve}: the check's own frame, awaited
  checkRecorded: null, // resolves with what the microphone took during the check
  module: null, // the compiled modem, also used here to judge the check's recording
  modem: null, // its instance on this thread
  rate: 0,
  code: null, // {token, until, timer}
};

// MARK: What the page shows

function showError(text) {
  const box = $("error");
  box.textContent = text;
  box.hidden = !text;
}

function showStatus(text) {
  $("status").textContent = text;
}

function setState(state) {
  document.body.dataset.state = state;
}

function bytesOfBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function base64OfText(text) {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function textOfMessage(message) {
  const bytes = bytesOfBase64(message.content || "");
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes), binary: false };
  } catch {
    return { text: `${bytes.length} bytes (not text)`, binary: true };
  }
}

function foundKey(event) {
  const m = event.message || {};
  return [event.subscription, m.namespace || "", m.type || "", m.content || ""].join("\u0000");
}

function drawFound() {
  const list = $("found-list");
  list.replaceChildren();
  for (const event of page.found.values()) {
    const item = document.createElement("li");
    item.dataset.testid = "found-item";
    const { text, binary } = textOfMessage(event.message);
    let body;
    if (!binary && /^https?:\/\/\S+$/i.test(text)) {
      body = document.createElement("a");
      body.href = text;
      body.rel = "noopener noreferrer";
      body.target = "_blank";
    } else {
      body = document.createElement("span");
    }
    body.className = "text";
    body.dataset.testid = "found-text";
    body.textContent = text;
    item.append(body);
    const type = event.message.type;
    if (type) {
      const meta = document.createElement("span");
      meta.className = "meta";
      meta.textContent = `type ${type}`;
      item.append(meta);
    }
    list.append(item);
  }
  $("found-empty").hidden = page.found.size > 0;
}

function handleEvent(event) {
  if (!event || typeof event.sequence !== "number") return;
  // Only repeats are skipped: the stream and a report's answer may bring events out of order.
  if (page.seen.has(event.sequence)) return;
  page.seen.add(event.sequence);
  if (page.seen.size > 4096) page.seen.delete(page.seen.values().next().value);
  page.lastSequence = Math.max(page.lastSequence, event.sequence);
  if (event.kind === "found" && event.message) {
    mark("found");
    page.found.set(foundKey(event), event);
  } else if (event.kind === "lost" && event.message) {
    page.found.delete(foundKey(event));
  } else if (event.kind === "publicationExpired" && page.publication &&
             event.publication === page.publication.id) {
    page.publication = null;
    drawPublication();
  }
  drawFound();
}

function drawPublication() {
  const shown = $("published");
  if (page.publication) {
    shown.textContent = `Shown to the devices that hear this phone: ${page.publication.text}`;
    shown.hidden = false;
  } else {
    shown.hidden = true;
  }
  $("unpublish").disabled = !page.publication;
  $("publish").disabled = !page.running;
}

// MARK: The resolver

class ServerError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function call(method, path, body, withDevice = true) {
  const headers = { "X-Nearby-API-Key": page.key };
  if (withDevice && page.device) headers["X-Nearby-Device-Secret"] = page.device.secret;
  const init = { method, headers, cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    throw new ServerError(0, "unreachable", "the server does not answer");
  }
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!response.ok) {
    const message = (json && json.message) || `the server answered ${response.status}`;
    const failure = new ServerError(response.status, (json && json.error) || "", message);
    failure.retryAfter = Number(response.headers.get("Retry-After")) || 0;
    throw failure;
  }
  return json;
}

function tokenHex(high, low) {
  return (high >>> 0).toString(16).padStart(8, "0") + (low >>> 0).toString(16).padStart(8, "0");
}

function tokenHalves(hex) {
  return { high: parseInt(hex.slice(0, 8), 16), low: parseInt(hex.slice(8, 16), 16) };
}

async function register() {
  page.device = await call("POST", "/v1/devices", {}, false);
  page.revision = -1;
  // A new device numbers its events from 1 and has found nothing yet.
  page.lastSequence = 0;
  page.seen.clear();
  page.found.clear();
  drawFound();
}

function scheduleReport(delay) {
  clearTimeout(page.reportTimer);
  page.reportTimer = setTimeout(report, Math.max(0, delay));
}

// One report at a time; what arrives meanwhile goes in the next.
async function report() {
  if (!page.running) return;
  if (page.reporting) {
    await page.reporting;
    return report();
  }
  page.reporting = sendReport().finally(() => (page.reporting = null));
  return page.reporting;
}

async function sendReport() {
  const body = {
    sentAt: new Date().toISOString(),
    subscribe: [{ id: page.subscription, strategy: { mediums: MEDIUMS, ttl: "infinite" } }],
  };
  const publish = page.publishPending;
  if (publish) {
    body.publish = [{
      id: publish.id,
      message: { content: base64OfText(publish.text), type: "" },
      strategy: { mediums: MEDIUMS, ttl: "infinite" },
    }];
  } else if (page.publication) {
    body.publish = [{
      id: page.publication.id,
      message: { content: base64OfText(page.publication.text), type: "" },
      strategy: { mediums: MEDIUMS, ttl: "infinite" },
    }];
  }
  const unpublish = page.unpublish.slice();
  if (unpublish.length) body.unpublish = unpublish;
  const sightings = [...page.sightings.values()];
  page.sightings.clear();
  if (sightings.length) body.sightings = sightings.slice(-1024);
  let answer;
  try {
    if (!page.device) await register();
    answer = await call("POST", `/v1/devices/${page.device.id}/report`, body);
  } catch (error) {
    for (const sighting of sightings) {
      if (!page.sightings.has(sighting.token)) page.sightings.set(sighting.token, sighting);
    }
    return reportFailed(error);
  }
  page.unpublish = page.unpublish.filter((id) => !unpublish.includes(id));
  if (publish && page.publishPending === publish) {
    page.publication = publish;
    page.publishPending = null;
  }
  drawPublication();
  showError("");
  for (const event of answer.events || []) handleEvent(event);
  follow(answer.directives);
  if (page.sightings.size || page.publishPending || page.unpublish.length) {
    scheduleReport(SIGHTING_BATCH);
  }
}

function reportFailed(error) {
  if (error.status === 404) {
    page.device = null; // expired or removed: a new device, same handles
    scheduleReport(0);
  } else if (error.status === 401 || error.status === 403) {
    stop();
    showError(`The server refused this link's key: ${error.message}. Ask for a new link.`);
  } else if (error.status === 400 || error.status === 413 || error.status === 422) {
    page.publishPending = null;
    drawPublication();
    showError(`The server refused the message: ${error.message}`);
    scheduleReport(1000);
  } else {
    const wait = Math.max(error.retryAfter || 0, 2) * 1000;
    showStatus(`The server does not answer (${error.message}); trying again in ${wait / 1000} s.`);
    scheduleReport(wait);
  }
}

function follow(directives) {
  if (!directives || directives.revision < page.revision) return;
  page.revision = directives.revision;
  page.token = directives.token;
  page.scanning = (directives.scan || []).includes("audio");
  const broadcast = (directives.broadcast || []).includes("audio");
  // Told only of a change: each "send" brings the next frame forward, and reports come far
  // more often than frames should.
  if (broadcast && (!page.broadcasting || page.sending !== page.token)) {
    page.worklet.port.postMessage({ type: "send", ...tokenHalves(page.token), level: LEVEL });
    page.sending = page.token;
  } else if (!broadcast && page.broadcasting) {
    page.worklet.port.postMessage({ type: "silence" });
    page.sending = null;
  }
  page.broadcasting = broadcast;
  showStatus(describe());
  const seconds = Math.max(1, (directives.tokenExpiresIn || 60) - REPORT_MARGIN);
  scheduleReport(seconds * 1000);
}

function describe() {
  const rate = page.context ? `${page.context.sampleRate} Hz` : "";
  const parts = [page.scanning ? `Listening (${rate})` : "Not listening"];
  if (page.broadcasting) parts.push(`sending token ${page.token}`);
  return parts.join(", ") + ".";
}

// Server-Sent Events over fetch: EventSource cannot send the key's header.
async function streamEvents() {
  let wait = 1000;
  while (page.running) {
    if (!page.device) {
      await sleep(500);
      continue;
    }
    const abort = new AbortController();
    page.streamAbort = abort;
    let watchdog = setTimeout(() => abort.abort(), STREAM_SILENCE);
    try {
      const headers = {
        "X-Nearby-API-Key": page.key,
        "X-Nearby-Device-Secret": page.device.secret,
        Accept: "text/event-stream",
      };
      if (page.lastSequence) headers["Last-Event-ID"] = String(page.lastSequence);
      const response = await fetch(`/v1/devices/${page.device.id}/events`, {
        headers, signal: abort.signal, cache: "no-store",
      });
      if (!response.ok) throw new ServerError(response.status, "", `events: ${response.status}`);
      wait = 1000;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        clearTimeout(watchdog);
        watchdog = setTimeout(() => abort.abort(), STREAM_SILENCE);
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split("\n").filter((l) => l.startsWith("data:"))
            .map((l) => l.slice(5).trimStart()).join("\n");
          if (data) {
            try {
              handleEvent(JSON.parse(data));
            } catch {
              // A block that is not an event's JSON: nothing to show.
            }
          }
        }
      }
    } catch (error) {
      if (error.status === 404) {
        page.device = null; // gone: the next report registers again
        scheduleReport(0);
      }
    } finally {
      clearTimeout(watchdog);
    }
    if (!page.running) break;
    await sleep(wait);
    wait = Math.min(wait * 2, 30000);
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// MARK: Audio

// Times since Start (ms) for the tests and the benchmark: the first token heard, the first
// message found, and the worklet's decoding load (seconds of CPU a second of audio) on average.
const marks = { started: 0, heard: 0, found: 0, loadSum: 0, loadCount: 0 };

function mark(name) {
  if (marks[name] || !marks.started) return;
  marks[name] = performance.now() - marks.started;
  document.body.dataset[`${name}Ms`] = marks[name].toFixed(0);
}

function heard(message) {
  const token = tokenHex(message.high, message.low);
  $("last-token").textContent = `${token} (SNR ${message.snr.toFixed(1)} dB)`;
  if (page.selfCheck && page.selfCheck.token === token) {
    page.selfCheck.resolve(message.snr);
    return;
  }
  if (token === page.token || !page.scanning) return; // our own frame, heard back
  mark("heard");
  page.sightings.set(token, {
    token, medium: "audio", snr: Math.max(-1000, Math.min(1000, message.snr)),
    time: new Date().toISOString(),
  });
  scheduleReport(SIGHTING_BATCH);
}

function onWorkletMessage(event) {
  const message = event.data;
  if (message.type === "heard") {
    heard(message);
  } else if (message.type === "recorded") {
    if (page.checkRecorded) page.checkRecorded(message.samples);
  } else if (message.type === "level") {
    const dB = message.rms > 0 ? 20 * Math.log10(message.rms) : -90;
    $("level").value = Math.max(-90, Math.min(0, dB));
    marks.loadSum += message.load;
    marks.loadCount += 1;
    document.body.dataset.load = (marks.loadSum / marks.loadCount).toFixed(4);
  } else if (message.type === "failed") {
    showError(`The audio modem failed: ${message.message}`);
  }
}

async function startAudio() {
  const context = new AudioContext({ latencyHint: "interactive" });
  page.context = context;
  const compiled = (async () => {
    const response = await fetch("/web/modem.wasm", { cache: "no-cache" });
    if (!response.ok) throw new Error(`the modem did not load (${response.status})`);
    return WebAssembly.compile(await response.arrayBuffer());
  })();
  await context.audioWorklet.addModule("/web/worklet.js");
  // Echo cancellation off is what selects the unprocessed path on Android; noise
  // suppression and gain control would take the band away.
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: { echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  });
  const module = await compiled;
  page.module = module;
  const node = new AudioWorkletNode(context, "nearby-modem", {
    numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [1],
  });
  const ready = new Promise((resolve, reject) => {
    node.port.onmessage = (event) => {
      if (event.data.type === "ready") resolve(event.data.rate);
      else if (event.data.type === "failed") reject(new Error(event.data.message));
    };
  });
  node.port.postMessage({ type: "module", module });
  const rate = await ready;
  node.port.onmessage = onWorkletMessage;
  context.createMediaStreamSource(stream).connect(node);
  node.connect(context.destination);
  await context.resume();
  page.worklet = node;
  $("rate").textContent = `${rate} Hz`;
  page.rate = rate;
}

// The self-check, as `nearby audio selftest`: the phone plays a 15-21 kHz sweep and one frame
// of a random token, and records itself. The modem's own code (BandCheck, in the module) says
// how far each 500 Hz band of the sweep stood above the band's background; the frame must
// decode too. The answer decides what the page tells the user; audio stays on either way
// (another device may still hear this one).
async function selfCheck() {
  const random = new Uint32Array(2);
  crypto.getRandomValues(random);
  const token = tokenHex(random[0], random[1]);
  $("self-check").textContent = "playing a sweep and a test frame, and listening…";
  const timeout = sleep(SWEEP_SECONDS * 1000 + SELF_CHECK_WAIT).then(() => null);
  const recorded = new Promise((resolve) => { page.checkRecorded = resolve; });
  const heardBack = new Promise((resolve) => { page.selfCheck = { token, resolve }; });
  page.worklet.port.postMessage({
    type: "check", high: random[0], low: random[1], level: LEVEL, sweep: SWEEP_SECONDS,
  });
  const [samples, snr] = await Promise.all([
    Promise.race([recorded, timeout]), Promise.race([heardBack, timeout]),
  ]);
  page.selfCheck = null;
  page.checkRecorded = null;
  const bands = samples ? modemBands(samples) : [];
  drawBands(bands);
  const weakest = bands.reduce((low, band) => (!low || band.snr < low.snr ? band : low), null);
  const carries = weakest !== null && weakest.snr >= CARRYING_DB;
  const where = weakest ? `${kHz(weakest.from)}–${kHz(weakest.to)} kHz` : "";
  if (carries && snr !== null) {
    $("self-check").textContent = `passed: this phone carries 18.5–20 kHz (its weakest band, ` +
      `${where}, ${weakest.snr.toFixed(1)} dB above the background) and hears its own test ` +
      `frame at ${snr.toFixed(1)} dB SNR`;
  } else if (carries) {
    $("self-check").textContent = `the band passes (its weakest part, ${where}, ` +
      `${weakest.snr.toFixed(1)} dB above the background) but this phone did not decode its ` +
      "own test frame: keep it still, away from noise, and reload the page to check again.";
  } else {
    const failing = weakest ? `${where} stood ${weakest.snr.toFixed(1)} dB above the ` +
      `background, ${CARRYING_DB} dB are needed` : "nothing was recorded";
    $("self-check").textContent = `failed: this phone did not carry its own sweep (${failing}). ` +
      "Its speaker or microphone may not carry 18.5–20 kHz (iPhones often do not); other " +
      "devices may still hear it. Turn the volume up and reload the page to check again, or " +
      "type the code the box shows below.";
  }
}

// The check's bands within the modem's 18.5-20 kHz ({from, to, snr}), judged by the module
// (BandCheck.bands) on this thread, so the audio thread never waits for it.
function modemBands(samples) {
  if (!page.modem) page.modem = new WebAssembly.Instance(page.module, {}).exports;
  const e = page.modem;
  const input = e.nearby_modem_allocate(samples.length * 4);
  const output = e.nearby_modem_allocate(64 * 3 * 8);
  try {
    if (!input || !output) return [];
    new Float32Array(e.memory.buffer, input, samples.length).set(samples);
    const count = e.nearby_modem_bands(input, samples.length, page.rate, output, 64 * 3);
    if (count <= 0) return [];
    const numbers = new Float64Array(e.memory.buffer, output, count * 3);
    const bands = [];
    for (let i = 0; i < count; i++) {
      const band = { from: numbers[3 * i], to: numbers[3 * i + 1], snr: numbers[3 * i + 2] };
      if (band.from >= 18500 && band.to <= 20000) bands.push(band);
    }
    return bands;
  } finally {
    if (input) e.nearby_modem_release(input);
    if (output) e.nearby_modem_release(output);
  }
}

function kHz(hz) {
  return (hz / 1000).toFixed(1);
}

function drawBands(bands) {
  const list = $("self-check-bands");
  list.replaceChildren();
  for (const band of bands) {
    const item = document.createElement("li");
    item.dataset.testid = "self-check-band";
    item.dataset.snr = band.snr.toFixed(1);
    item.textContent = `${kHz(band.from)}–${kHz(band.to)} kHz: ${band.snr.toFixed(1)} dB`;
    item.className = band.snr >= CARRYING_DB ? "band-ok" : "band-weak";
    list.append(item);
  }
}

// MARK: The optical fallback

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

// A box's short code (Tokens' Token.shortCode: 13 characters of Crockford's base32, the last
// one 4 bits) as its token's hex, or null. Case, dashes and spaces do not matter; O reads
// as 0, I and L as 1.
function tokenOfCode(text) {
  const clean = text.toUpperCase().replace(/[-\s]/g, "").replace(/O/g, "0").replace(/[IL]/g, "1");
  if (clean.length !== 13) return null;
  let value = 0n;
  for (let i = 0; i < 13; i++) {
    const digit = CROCKFORD.indexOf(clean[i]);
    if (digit < 0) return null;
    if (i < 12) {
      value = (value << 5n) | BigInt(digit);
    } else {
      if (digit & 1) return null;
      value = (value << 4n) | BigInt(digit >> 1);
    }
  }
  return value.toString(16).padStart(16, "0");
}

// A code typed (or carried by the QR code's link) counts as a sighting of the box on the
// optical medium, repeated while the code can still be the box's current one.
function useCode(text) {
  const token = tokenOfCode(text);
  const status = $("code-status");
  status.hidden = false;
  if (!token) {
    status.textContent = "That is not a box's code: 13 letters and digits, like 7K3M-Q9TA-C2W1G.";
    return;
  }
  if (page.code) clearInterval(page.code.timer);
  const sight = () => {
    if (!page.code || performance.now() > page.code.until) {
      if (page.code) clearInterval(page.code.timer);
      page.code = null;
      status.textContent = "The code has expired (the box shows a new one every 2 minutes): " +
        "type the new one.";
      return;
    }
    page.sightings.set(token, { token, medium: "optical", time: new Date().toISOString() });
    scheduleReport(0);
  };
  page.code = { token, until: performance.now() + CODE_LIFETIME, timer: setInterval(sight, CODE_REPEAT) };
  sight();
  status.textContent = `Using the box's code ${text.trim().toUpperCase()} for 2 minutes.`;
}

function onCode(event) {
  event.preventDefault();
  if (page.running) useCode($("code-text").value);
}

// MARK: Start and stop

function failureText(error) {
  const name = error && error.name;
  if (name === "NotAllowedError" || name === "SecurityError") {
    return "The microphone is blocked for this page. Allow it (the icon left of the address, " +
      "or the browser's site settings) and tap Start again.";
  }
  if (name === "NotFoundError" || name === "OverconstrainedError") {
    return "This device has no microphone the browser can use.";
  }
  if (name === "NotReadableError" || name === "AbortError") {
    return "The microphone is busy or blocked by the system: close the app using it and tap " +
      "Start again.";
  }
  if (error instanceof ServerError) {
    if (error.status === 401 || error.status === 403) {
      return `The server refused this link's key: ${error.message}. Ask for a new link.`;
    }
    if (error.status === 429) {
      return `The server is busy: ${error.message}. Tap Start again in a minute.`;
    }
    return `The server could not be reached (${error.message}). Check the network and tap ` +
      "Start again.";
  }
  return `Could not start: ${error && error.message ? error.message : error}`;
}

function linkKey() {
  return new URLSearchParams(location.hash.slice(1)).get("key") || "";
}

function preconditions() {
  page.key = linkKey();
  if (!page.key) {
    return "This link has no project key: ask for the link again (it ends in #key=…).";
  }
  if (!window.isSecureContext) {
    return "This page was not opened over HTTPS, so the browser keeps the microphone from it. " +
      "Open the https:// link.";
  }
  if (!navigator.mediaDevices || !window.AudioWorkletNode || !window.WebAssembly) {
    return "This browser lacks what the page needs (microphone access, AudioWorklet, " +
      "WebAssembly): open the link in a current Chrome, Firefox or Safari.";
  }
  return "";
}

async function start() {
  const problem = preconditions();
  if (problem) {
    showError(problem);
    return;
  }
  const button = $("start");
  button.disabled = true;
  showError("");
  showStatus("Starting: checking the link, then the microphone…");
  marks.started = performance.now();
  setState("starting");
  try {
    const role = await call("GET", "/web/key", undefined, false);
    if (!role || role.role !== "client") throw new Error("the key is not a client key");
    await startAudio();
    page.running = true;
    setState("running");
    await register();
    await report();
    streamEvents();
    drawPublication();
    $("code-submit").disabled = false;
    const code = new URLSearchParams(location.hash.slice(1)).get("code");
    if (code) {
      $("code-text").value = code;
      useCode(code);
    }
    await selfCheck();
  } catch (error) {
    stop();
    showError(failureText(error));
    button.disabled = false;
  }
}

function stop() {
  page.running = false;
  setState("stopped");
  clearTimeout(page.reportTimer);
  if (page.streamAbort) page.streamAbort.abort();
  if (page.code) clearInterval(page.code.timer);
  page.code = null;
  onLeave(); // the device goes at once rather than when the resolver finds it silent
  page.device = null;
  if (page.context) page.context.close().catch(() => {});
  page.context = null;
  drawPublication();
}

function onPublish(event) {
  event.preventDefault();
  const text = $("publish-text").value.trim();
  if (!text || !page.running) return;
  if (page.publication) page.unpublish.push(page.publication.id);
  page.publication = null;
  page.publishPending = { id: crypto.randomUUID(), text };
  scheduleReport(0);
}

function onUnpublish() {
  if (!page.publication) return;
  page.unpublish.push(page.publication.id);
  page.publication = null;
  drawPublication();
  scheduleReport(0);
}

function onVisibility() {
  if (document.hidden && page.running) {
    showError("This tab is in the background: the browser may pause the microphone and the " +
      "speaker. Bring it back to the front to keep taking part.");
  } else if (page.running) {
    showError("");
    if (page.context && page.context.state === "suspended") page.context.resume();
  }
}

function onLeave() {
  if (!page.device) return;
  // keepalive: the request outlives the page, so the phone leaves at once rather than
  // being lost when its sightings stop.
  fetch(`/v1/devices/${page.device.id}`, {
    method: "DELETE", keepalive: true,
    headers: { "X-Nearby-API-Key": page.key, "X-Nearby-Device-Secret": page.device.secret },
  }).catch(() => {});
}

function init() {
  $("start").addEventListener("click", start);
  document.getElementById("publish-form").addEventListener("submit", onPublish);
  document.getElementById("code-form").addEventListener("submit", onCode);
  $("unpublish").addEventListener("click", onUnpublish);
  document.addEventListener("visibilitychange", onVisibility);
  window.addEventListener("pagehide", onLeave);
  // A new link in the same tab (only its fragment changed, so no load): start afresh.
  window.addEventListener("hashchange", () => location.reload());
  const problem = preconditions();
  if (problem) showError(problem);
}

init();
