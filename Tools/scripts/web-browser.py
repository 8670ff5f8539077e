"""The phone's page end to end in headless Chromium (run by web-browser.sh).

A Linux box (`nearby publish --mediums audio` against the server) plays its live token into a
PulseAudio null sink; its monitor is recorded, and Chromium's fake microphone plays the
recording (clean, and with white noise at C/N0 30 dB-Hz, where the native decoder still decodes
99 %). At 44.1 and 48 kHz (a PulseAudio server for each, whose default rate Chromium's
AudioContext takes):
  - the page finds the box's message, and loses it when the box unpublishes;
  - the page publishes a text; its audio goes into another null sink, whose monitor a Linux
    `nearby subscribe --mediums audio` hears, finding the page's text;
  - hostile: a link with an admin key is refused by the page; a key of another project hears
    the token but finds nothing; a sighting of a token never heard finds nothing.
With no server (box A, `nearby subscribe --web` in peer mode, serving the page and resolving
for the phone, only listening; peer B publishing on audio):
  - the page finds B's message through A (A asks the LAN for B's token); A hears the page's
    audio and finds its text (the cast case); a link with another invitation is refused.
A server's phone and boxes with no server (the server joined to their LAN's peer network,
`nearby-server --peer-key-file`, the peers' key being the page's client key): the page finds
the message of a peer-mode box it hears, and loses it when that box unpublishes; a peer-mode
box that hears the page finds the page's text.
The self-check: a microphone that hears the sweep has its bands judged carried.
The optical fallback (a silent microphone, a box that hears nothing): the box finds the page's
text from the code its QR link carries, and from the code typed.
Screenshots at 360 px, light and dark, go to $NEARBY_WEB_SCREENSHOTS. Every step checks what
the page shows (data-testid attributes); the first failure ends the run with a non-zero exit.

Environment: NEARBY_WEB_URL, NEARBY_WEB_CLIENT_KEY, NEARBY_WEB_OTHER_KEY, NEARBY_WEB_ADMIN_KEY,
NEARBY_WEB_NEARBY (the nearby binary), NEARBY_WEB_WORK (a scratch folder),
NEARBY_WEB_PULSE_44100 and NEARBY_WEB_PULSE_48000 (PulseAudio servers with null sinks web_box,
web_out, web_sub and web_none), NEARBY_WEB_SCREENSHOTS, NEARBY_WEB_PEER_PORT (the server's peer network: its group's
port on lo). NEARBY_WEB_ONLY=server runs only the server part, =peer the no-server part,
=bridge the server's peer network, =self-check the self-check on a heard sweep, =optical the
optical fallback (for working on them; the test command runs
everything).
"""

import json
import math
import os
import queue
import random
import signal
import struct
import subprocess
import sys
import threading
import time
import wave

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

BASE = os.environ["NEARBY_WEB_URL"]
CLIENT_KEY = os.environ["NEARBY_WEB_CLIENT_KEY"]
OTHER_KEY = os.environ["NEARBY_WEB_OTHER_KEY"]
ADMIN_KEY = os.environ["NEARBY_WEB_ADMIN_KEY"]
NEARBY = os.environ["NEARBY_WEB_NEARBY"]
WORK = os.environ["NEARBY_WEB_WORK"]
SHOTS = os.environ["NEARBY_WEB_SCREENSHOTS"]
PULSE = {44100: os.environ["NEARBY_WEB_PULSE_44100"], 48000: os.environ["NEARBY_WEB_PULSE_48000"]}
PEER_PORT = os.environ["NEARBY_WEB_PEER_PORT"]
BOX_TEXT = "hello from the box"
PAGE_TEXT = "cast from the page"
PEER_TEXT = "hello from the peer box"
BRIDGED_TEXT = "hello from a box with no server"
CN0 = 30.0  # dB-Hz: the native decoder's 99 % point (docs/benchmarks.md)


def expect(condition, what):
    if not condition:
        raise AssertionError(what)


def log(text):
    print(f"web-browser: {text}", file=sys.stderr, flush=True)


class Process:
    """A `nearby` process whose JSON lines are read on a thread, so that a test waits for a
    line it expects (bounded) rather than sleeping."""

    def __init__(self, name, arguments, pulse, sink, source):
        env = dict(os.environ)
        home = os.path.join(WORK, name)
        os.makedirs(home, exist_ok=True)
        env.update({
            "HOME": home, "XDG_CONFIG_HOME": os.path.join(home, "config"),
            "XDG_STATE_HOME": os.path.join(home, "state"),
            "XDG_RUNTIME_DIR": os.path.join(home, "run"),
            "PULSE_SERVER": pulse, "PULSE_SINK": sink, "PULSE_SOURCE": source,
            "NEARBY_SERVER": "", "NEARBY_API_KEY": "",
        })
        os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
        self.name = name
        self.lines = queue.Queue()
        self.stderr = open(os.path.join(WORK, f"{name}.stderr"), "w")
        self.process = subprocess.Popen(
            [NEARBY] + arguments, stdout=subprocess.PIPE, stderr=self.stderr, stdin=subprocess.DEVNULL,
            env=env, text=True)
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.process.stdout:
            try:
                self.lines.put(json.loads(line))
            except ValueError:
                pass

    def wait_for(self, predicate, seconds, what):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                expect(self.process.poll() is None, f"{self.name} exited ({self.process.returncode}) "
                       f"before {what}; its stderr is in {self.stderr.name}")
                continue
            if predicate(line):
                return line
        raise AssertionError(f"{self.name}: no {what} within {seconds} s")

    def interrupt(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.stderr.close()


def box(rate):
    """The Linux box: publishes on audio through the server, into the sink web_box."""
    process = Process(
        f"box-{rate}",
        ["publish", BOX_TEXT, "--server", BASE, "--api-key", CLIENT_KEY, "--mediums", "audio",
         "--json"], PULSE[rate], "web_box", "web_sub.monitor")
    process.wait_for(lambda l: l.get("event") == "medium" and l.get("available"), 20, "audio medium")
    return process


def record(rate, seconds):
    """`seconds` of web_box's monitor as 16-bit samples at `rate`."""
    env = dict(os.environ, PULSE_SERVER=PULSE[rate])
    recorder = subprocess.Popen(
        ["parec", "--device=web_box.monitor", f"--rate={rate}", "--channels=1", "--format=s16le",
         "--latency-msec=50"], stdout=subprocess.PIPE, env=env)
    wanted = int(seconds * rate) * 2
    data = bytearray()
    deadline = time.monotonic() + seconds + 10
    while len(data) < wanted and time.monotonic() < deadline:
        chunk = recorder.stdout.read1(65536)
        if not chunk:
            break
        data += chunk
    recorder.terminate()
    recorder.wait()
    expect(len(data) >= wanted, f"parec gave {len(data)} of {wanted} bytes")
    return list(struct.unpack(f"<{wanted // 2}h", bytes(data[:wanted])))


def write_wav(path, rate, samples):
    with wave.open(path, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        clipped = (max(-32768, min(32767, int(round(s)))) for s in samples)
        out.writeframes(struct.pack(f"<{len(samples)}h", *clipped))


def noisy(samples, rate):
    """The recording 26 dB down (room for the noise in 16 bits) with white noise at C/N0 CN0:
    the signal's power C measured over its frames (|x| above a threshold), N0 = C / 10^(CN0/10),
    variance N0 * rate / 2, as AudioModemTestKit's Channel.addWhiteNoise."""
    gain = 10 ** (-26 / 20)
    scaled = [s * gain for s in samples]
    loud = [s for s in scaled if abs(s) > 20 * gain]
    power = sum(s * s for s in loud) / max(1, len(loud))
    deviation = math.sqrt(power / 10 ** (CN0 / 10) * rate / 2)
    generator = random.Random(7)
    return [s + generator.gauss(0, deviation) for s in scaled]


def decoded(path, snr=False):
    """The tokens the native decoder finds in a WAV file (with snr: and their SNRs, dB)."""
    result = subprocess.run([NEARBY, "audio", "decode", path, "--json"], capture_output=True,
                            text=True, timeout=120)
    expect(result.returncode == 0, f"nearby audio decode {path}: {result.stderr}")
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    return [(l["token"], l["snr_db"]) for l in lines] if snr else [l["token"] for l in lines]


def page_snr(driver):
    """The SNR the page's decoder measured on the last token it heard (dB), or None."""
    text = testid(driver, "last-token").text
    if "SNR " not in text:
        return None
    return float(text.split("SNR ")[1].split(" dB")[0])


def browser(rate, wav, loop=True, self_signed=False):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    capture = wav if loop else wav + "%noloop"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--hide-scrollbars", "--window-size=360,800",
                     "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
                     f"--use-file-for-fake-audio-capture={capture}"):
        options.add_argument(argument)
    if self_signed:
        # The box's own certificate, as a phone's user accepts it once.
        options.add_argument("--ignore-certificate-errors")
    env = dict(os.environ, PULSE_SERVER=PULSE[rate], PULSE_SINK="web_out")
    service = Service("/usr/bin/chromedriver", env=env)
    return webdriver.Chrome(service=service, options=options)


def testid(driver, name):
    return driver.find_element(By.CSS_SELECTOR, f'[data-testid="{name}"]')


def found_texts(driver):
    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="found-text"]')]


def wait_until(driver, predicate, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return time.monotonic()
        time.sleep(0.2)
    status = testid(driver, "status").text
    error = testid(driver, "error").text
    last = testid(driver, "last-token").text
    raise AssertionError(f"no {what} within {seconds} s (status: {status!r}, error: {error!r}, "
                         f"last token: {last!r}, found: {found_texts(driver)!r})")


def open_page(driver, key, base=BASE):
    driver.get("about:blank")  # a new load: the same URL but its fragment would not be one
    driver.get(f"{base}/web#key={key}")
    testid(driver, "start").click()


TIMINGS = {}


def timings(driver, name):
    """The page's own marks (ms since Start): the first token heard, the first found; and the
    worklet's decoding load so far. Logged, and kept for web-timings.json."""
    data = driver.execute_script(
        "const d = document.body.dataset; return [d.heardMs, d.foundMs, d.load];")
    heard, found, load = (float(v) if v else None for v in data)
    TIMINGS[name] = {"startToHeardMs": heard, "startToFoundMs": found,
                     "heardToFoundMs": found - heard if heard is not None and found else None,
                     "workletLoad": load}
    log(f"{name}: Start to heard {heard} ms, to found {found} ms; worklet load {load}")


def shoot(driver, name):
    for scheme in ("light", "dark"):
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-color-scheme", "value": scheme}]})
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": 360, "height": 800, "deviceScaleFactor": 1, "mobile": True})
        driver.save_screenshot(os.path.join(SHOTS, f"{name}-360-{scheme}.png"))
        width = driver.execute_script("return document.documentElement.scrollWidth")
        expect(width <= 360, f"{name} is {width} px wide in a 360 px viewport ({scheme})")
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def hostile(rate, wav):
    """An admin key's link (refused by the page, and by `nearby --web`, which would print it);
    another project's key; a sighting of a token never heard."""
    env = dict(os.environ, PULSE_SERVER=PULSE[rate], PULSE_SINK="web_none",
               PULSE_SOURCE="web_none.monitor", HOME=WORK, XDG_STATE_HOME=os.path.join(WORK, "st"))
    refused = subprocess.run(
        [NEARBY, "subscribe", "--server", BASE, "--api-key", ADMIN_KEY, "--mediums", "audio",
         "--web"], env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    expect(refused.returncode == 77 and "admin key" in refused.stderr,
           f"nearby --web with an admin key: {refused.returncode} {refused.stderr[-400:]}")
    expect(ADMIN_KEY not in refused.stdout + refused.stderr, "the admin key was printed")
    log("nearby --web refuses to print a link with an admin key")
    driver = browser(rate, wav)
    try:
        open_page(driver, ADMIN_KEY)
        wait_until(driver, lambda: "admin key" in testid(driver, "error").text, 20,
                   "refusal of an admin key")
        expect(testid(driver, "start").is_enabled(), "Start stays usable after the refusal")
        log("an admin key's link is refused")

        open_page(driver, OTHER_KEY)
        wait_until(driver, lambda: "SNR" in testid(driver, "last-token").text, 30,
                   "token heard with another project's key")
        time.sleep(4)  # reports of what it heard have reached the server: nothing resolves
        expect(found_texts(driver) == [], f"another project's key found {found_texts(driver)}")
        log("another project's key hears the box's token and finds nothing")

        # A sighting of a token no one sent, from the page's origin with a device of its own.
        answer = driver.execute_async_script("""
            const [key, done] = arguments;
            const h = {"X-Nearby-API-Key": key, "Content-Type": "application/json"};
            (async () => {
              const device = await (await fetch("/v1/devices", {method: "POST", headers: h,
                body: "{}"})).json();
              const report = {subscribe: [{id: crypto.randomUUID(), strategy: {mediums: ["audio"]}}],
                sightings: [{token: "0badc0de0badc0de", medium: "audio",
                             time: new Date().toISOString()}]};
              const r = await fetch(`/v1/devices/${device.id}/report`, {method: "POST",
                headers: {...h, "X-Nearby-Device-Secret": device.secret},
                body: JSON.stringify(report)});
              done({status: r.status, body: await r.json()});
            })().catch((e) => done({status: -1, body: String(e)}));
        """, CLIENT_KEY)
        expect(answer["status"] == 200, f"a spoofed sighting's report: {answer}")
        expect(answer["body"]["events"] == [], f"a spoofed sighting found {answer['body']['events']}")
        log("a sighting of a token never heard finds nothing")
    finally:
        driver.quit()


def run_rate(rate):
    log(f"== {rate} Hz")
    publisher = box(rate)
    try:
        samples = record(rate, 8.0)
        clean = os.path.join(WORK, f"box-{rate}.wav")
        write_wav(clean, rate, samples)
        tokens = decoded(clean)
        expect(tokens, f"the box's recording at {rate} Hz holds no token the native decoder finds")
        noise = os.path.join(WORK, f"box-{rate}-noisy.wav")
        write_wav(noise, rate, noisy(samples, rate))
        native_clean = [snr for _, snr in decoded(clean, snr=True)]
        native_noisy = [snr for _, snr in decoded(noise, snr=True)]
        log(f"recorded the box's token {tokens[0]} (native decoder: {len(tokens)} frames clean, "
            f"{len(native_noisy)} with noise at {CN0} dB-Hz)")

        if rate == 48000:
            hostile(rate, clean)

        # With noise: the page still finds the box's message.
        driver = browser(rate, noise)
        try:
            open_page(driver, CLIENT_KEY)
            wait_until(driver, lambda: BOX_TEXT in found_texts(driver), 45,
                       f"found with noise at {CN0} dB-Hz")
            expect(testid(driver, "rate").text == f"{rate} Hz",
                   f"the page runs at {testid(driver, 'rate').text}, not {rate} Hz")
            log(f"with noise at {CN0} dB-Hz: found ({testid(driver, 'last-token').text})")
            TIMINGS[f"snr-noisy-{rate}"] = {"nativeDB": native_noisy, "pageDB": page_snr(driver)}
            log(f"SNR with noise: native {native_noisy} dB, in the page {page_snr(driver)} dB")
        finally:
            driver.quit()

        # Clean: found; the page publishes and a Linux subscriber hears it; lost on unpublish.
        driver = browser(rate, clean)
        subscriber = None
        try:
            started = time.monotonic()
            open_page(driver, CLIENT_KEY)
            found_at = wait_until(driver, lambda: BOX_TEXT in found_texts(driver), 30, "found")
            log(f"clean: found {found_at - started:.1f} s after Start")
            timings(driver, f"server-{rate}")
            TIMINGS[f"snr-clean-{rate}"] = {"nativeDB": native_clean, "pageDB": page_snr(driver)}
            log(f"SNR clean: native {native_clean} dB, in the page {page_snr(driver)} dB")
            testid(driver, "publish-text").send_keys(PAGE_TEXT)
            testid(driver, "publish").click()
            wait_until(driver, lambda: PAGE_TEXT in testid(driver, "published").text, 15,
                       "the page's publication")
            shoot(driver, f"web-{rate}")
            subscriber = Process(
                f"subscriber-{rate}",
                ["subscribe", "--server", BASE, "--api-key", CLIENT_KEY, "--mediums", "audio",
                 "--json"], PULSE[rate], "web_sub", "web_out.monitor")
            subscriber.wait_for(lambda l: l.get("event") == "found" and l.get("text") == PAGE_TEXT,
                                40, f"found {PAGE_TEXT!r} from the page's audio")
            log("a Linux subscriber hears the page and finds its text")
            stopped = time.monotonic()
            publisher.interrupt()
            lost_at = wait_until(driver, lambda: BOX_TEXT not in found_texts(driver), 8,
                                 "lost after the box unpublished")
            log(f"lost {lost_at - stopped:.1f} s after the box's Ctrl-C")
        finally:
            if subscriber:
                subscriber.interrupt()
            driver.quit()
    finally:
        publisher.interrupt()


def front_limits(base, key):
    """The box's front under hostile clients: a body announced over the limit is refused at
    once (413, before any of it is sent); one address holds at most 8 connections and 4
    phones; a wrong invitation registers nothing."""
    import http.client
    import socket
    import ssl
    host, port = base.removeprefix("https://").rsplit(":", 1)
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE

    def request(method, path, body=None, headers=None):
        connection = http.client.HTTPSConnection(host, int(port), context=context, timeout=10)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            answer = connection.getresponse()
            return answer.status, answer.read()
        finally:
            connection.close()

    # Announced over 256 KiB: answered before a byte of the body is sent.
    raw = socket.create_connection((host, int(port)), timeout=10)
    tls = context.wrap_socket(raw, server_hostname=host)
    tls.sendall(b"POST /v1/devices HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n")
    head = tls.recv(4096).decode(errors="replace")
    tls.close()
    expect(head.startswith("HTTP/1.1 413"), f"an announced 10 MB body: {head[:80]!r}")

    status, _ = request("POST", "/v1/devices", headers={"X-Nearby-API-Key": "ni_wrong"})
    expect(status == 401, f"a wrong invitation registered: {status}")
    answers = [request("POST", "/v1/devices", headers={"X-Nearby-API-Key": key})
               for _ in range(5)]
    statuses = [status for status, _ in answers]
    expect(statuses[:4] == [201] * 4 and statuses[4] == 429, f"5 phones from one address: {statuses}")
    for _, body in answers[:4]:  # they leave, so that the page can join from this address
        device = json.loads(body)
        status, _ = request("DELETE", f"/v1/devices/{device['id']}", headers={
            "X-Nearby-API-Key": key, "X-Nearby-Device-Secret": device["secret"]})
        expect(status == 204, f"a phone's goodbye: {status}")

    held = []
    try:
        for _ in range(8):
            held.append(context.wrap_socket(socket.create_connection((host, int(port)), timeout=10),
                                            server_hostname=host))
        extra = socket.create_connection((host, int(port)), timeout=10)
        try:
            closed = False
            try:
                wrapped = context.wrap_socket(extra, server_hostname=host)
                closed = wrapped.recv(1) == b""
            except (ssl.SSLError, ConnectionError, OSError):
                closed = True
            expect(closed, "a 9th connection from one address was served")
        finally:
            extra.close()
    finally:
        for connection in held:
            connection.close()
    log("the front refuses an announced 10 MB body at once, a 5th phone and a 9th connection "
        "from one address, and a wrong invitation")


def meet(driver, key, text, listener, name, base=BASE):
    """Opens the page with `key`, waits until it finds `text` (what it hears), then publishes
    PAGE_TEXT from it and waits until `listener` (a `nearby subscribe --json` hearing the
    page) finds that. Returns how long Start took to the found, in seconds."""
    started = time.monotonic()
    open_page(driver, key, base)
    found_at = wait_until(driver, lambda: text in found_texts(driver), 30, f"found {text!r}")
    timings(driver, name)
    testid(driver, "publish-text").send_keys(PAGE_TEXT)
    testid(driver, "publish").click()
    wait_until(driver, lambda: PAGE_TEXT in testid(driver, "published").text, 15,
               "the page's publication")
    listener.wait_for(lambda l: l.get("event") == "found" and l.get("text") == PAGE_TEXT, 40,
                      f"found {PAGE_TEXT!r} from the page's audio")
    return found_at - started


def run_peer(rate):
    """No server, the seeds' cast case: box A (`nearby subscribe --web`, peer mode) serves the
    page and is the phone's resolver, and only listens; peer B on the LAN (loopback here)
    publishes on audio. The page hears B's token and finds B's message through A (A does not
    hold the token: it asks the LAN, B answers); A hears the page's audio and finds the page's
    text (the phone is a device of A's own resolver)."""
    log(f"== no server, {rate} Hz")
    lan = ["--lan-interface", "lo", "--lan-port", str(random.randint(40001, 60000)),
           "--api-key", f"web-peer-{random.getrandbits(32)}"]
    box = Process(
        f"peer-box-{rate}",
        ["subscribe", "--mediums", "audio", "--web", "--web-host", "127.0.0.1", "--web-port",
         "0", "--json"] + lan, PULSE[rate], "web_none", "web_out.monitor")
    publisher = None
    driver = None
    try:
        # In the order the box prints them: its mediums, then the page's link.
        box.wait_for(lambda l: l.get("event") == "medium" and l.get("available"), 20,
                     "audio medium")
        link = box.wait_for(lambda l: l.get("event") == "web", 30, "the page's link")["url"]
        base, key = link.split("/web#key=")
        publisher = Process(
            f"peer-publisher-{rate}", ["publish", PEER_TEXT, "--mediums", "audio", "--json"] + lan,
            PULSE[rate], "web_box", "web_none.monitor")
        publisher.wait_for(lambda l: l.get("event") == "medium" and l.get("available"), 20,
                           "audio medium")
        samples = record(rate, 8.0)
        wav = os.path.join(WORK, f"peer-publisher-{rate}.wav")
        write_wav(wav, rate, samples)
        expect(decoded(wav), f"peer B's recording at {rate} Hz holds no token")

        if rate == 48000:
            front_limits(base, key)

        driver = browser(rate, wav, self_signed=True)
        open_page(driver, "ni_not-this-box", base)
        wait_until(driver, lambda: "invitation" in testid(driver, "error").text, 20,
                   "refusal of another box's invitation")
        log("a link with an invitation that is not the box's is refused")

        took = meet(driver, key, PEER_TEXT, box, f"peer-{rate}", base)
        log(f"no server: the page found peer B's message through the box {took:.1f} s after "
            f"Start; the box, only listening, heard the page and found its text")
    finally:
        if driver:
            driver.quit()
        if publisher:
            publisher.interrupt()
        box.interrupt()


def run_bridge(rate):
    """A phone of the server and boxes with no server: the server has joined their peer
    network (the LAN's who-has group on lo, sealed under the page's client key). A peer-mode
    box publishes on audio; the page hears it and finds its message through the server (the
    server does not hold the token: it asks the LAN, the box answers), and loses it when the
    box unpublishes. A peer-mode box that only listens hears the page and finds its text (the
    box asks the LAN for the page's token: the server answers for its device)."""
    log(f"== a server's phone and boxes with no server, {rate} Hz")
    lan = ["--lan-interface", "lo", "--lan-port", str(random.randint(40001, 60000)),
           "--peer-group-port", PEER_PORT, "--api-key", CLIENT_KEY]
    publisher = Process(
        f"bridged-publisher-{rate}", ["publish", BRIDGED_TEXT, "--mediums", "audio", "--json"]
        + lan, PULSE[rate], "web_box", "web_none.monitor")
    listener = None
    driver = None
    try:
        publisher.wait_for(lambda l: l.get("event") == "medium" and l.get("available"), 20,
                           "audio medium")
        samples = record(rate, 8.0)
        wav = os.path.join(WORK, f"bridged-publisher-{rate}.wav")
        write_wav(wav, rate, samples)
        expect(decoded(wav), f"the peer box's recording at {rate} Hz holds no token")
        listener = Process(
            f"bridged-listener-{rate}", ["subscribe", "--mediums", "audio", "--json"] + lan,
            PULSE[rate], "web_none", "web_out.monitor")
        listener.wait_for(lambda l: l.get("event") == "medium" and l.get("available"), 20,
                          "audio medium")

        driver = browser(rate, wav)
        took = meet(driver, CLIENT_KEY, BRIDGED_TEXT, listener, f"bridge-{rate}")
        log(f"the page found a peer-mode box's message through the server {took:.1f} s after "
            f"Start; a peer-mode box that only listens heard the page and found its text")
        stopped = time.monotonic()
        publisher.interrupt()
        lost_at = wait_until(driver, lambda: BRIDGED_TEXT not in found_texts(driver), 15,
                             "lost after the peer box unpublished")
        log(f"lost {lost_at - stopped:.1f} s after the peer box's Ctrl-C")
    finally:
        if driver:
            driver.quit()
        if listener:
            listener.interrupt()
        publisher.interrupt()


def sweep_wav(path, rate):
    """A microphone that hears a phone's self-check sweep (BandCheck.sweep: 15-21 kHz in
    1.5 s, peak 0.5, 10 ms raised-cosine ramps) every 2.5 s, in faint noise."""
    seconds, low, high = 1.5, 15000.0, 21000.0
    count, ramp = int(seconds * rate), 0.01 * rate
    generator = random.Random(7)
    samples = []
    for index in range(count):
        t = index / rate
        phase = low * t + (high - low) * t * t / (2 * seconds)
        edge = min(index, count - 1 - index)
        envelope = 0.5 * (1 - math.cos(math.pi * edge / ramp)) if edge < ramp else 1
        samples.append(0.5 * envelope * math.sin(2 * math.pi * (phase - math.floor(phase))))
    samples += [0.0] * int(1.0 * rate)
    write_wav(path, rate, [32767 * (x + generator.gauss(0, 0.003)) for x in samples])


def run_self_check(rate):
    """The self-check judges its sweep with the modem's code in the page: a microphone that
    hears the sweep (a fake one playing it) shows every band of 18.5-20 kHz carried, and the
    verdict says so; the page's own frame is not in that recording, and the verdict says that
    too."""
    log(f"== self-check, {rate} Hz")
    wav = os.path.join(WORK, f"sweep-{rate}.wav")
    sweep_wav(wav, rate)
    driver = browser(rate, wav)
    try:
        open_page(driver, CLIENT_KEY)
        wait_until(driver, lambda: "the band passes" in testid(driver, "self-check").text, 30,
                   "the self-check's verdict on a sweep heard")
        bands = driver.find_elements(By.CSS_SELECTOR, '[data-testid="self-check-band"]')
        levels = [float(band.get_attribute("data-snr")) for band in bands]
        expect(len(levels) == 3 and all(level >= 15 for level in levels),
               f"the modem's three bands at 15 dB or more above the background: {levels}")
        shoot(driver, f"self-check-{rate}")
        log(f"the self-check judged the sweep it heard: 18.5-20 kHz carried, bands {levels} dB "
            f"({testid(driver, 'self-check').text!r})")
    finally:
        driver.quit()


def run_optical(rate):
    """The fallback when audio does not carry: the page hears nothing (a silent microphone)
    and the box hears nothing of the page (it listens to a sink nobody plays into); the box
    (`nearby subscribe --web` with a server) shows its code; the page opened from the link the
    box's QR code carries, and then from the plain link with the code typed, publishes, and
    the box finds the page's text through the optical sighting alone."""
    log(f"== optical fallback, {rate} Hz")
    box = Process(
        f"optical-box-{rate}",
        ["subscribe", "--server", BASE, "--api-key", CLIENT_KEY, "--mediums", "audio", "--web",
         "--json"], PULSE[rate], "web_sub", "web_none.monitor")
    driver = None
    try:
        link = box.wait_for(lambda l: l.get("event") == "web", 30, "the page's link")["url"]
        optical = box.wait_for(lambda l: l.get("event") == "optical", 30, "the box's code")
        code, coded_link = optical["text"], optical["url"]
        expect(coded_link == f"{link}&code={code}", f"the QR link {coded_link} carries {code}")
        silence = os.path.join(WORK, f"silence-{rate}.wav")
        write_wav(silence, rate, [0] * (rate * 2))
        driver = browser(rate, silence)
        for how, url, typed in (("the QR code's link", coded_link, False),
                                ("a typed code", link, True)):
            text = f"cast by {how}"
            driver.get("about:blank")
            driver.get(url)
            testid(driver, "start").click()
            wait_until(driver, lambda: testid(driver, "publish").is_enabled(), 20, "started")
            if typed:
                testid(driver, "code-text").send_keys(code.lower().replace("-", " "))
                testid(driver, "code-submit").click()
            wait_until(driver, lambda: "Using the box's code" in testid(driver, "code-status").text,
                       10, "the code taken")
            testid(driver, "publish-text").send_keys(text)
            testid(driver, "publish").click()
            box.wait_for(lambda l: l.get("event") == "found" and l.get("text") == text, 30,
                         f"found {text!r} by the optical medium")
            expect("none yet" in testid(driver, "last-token").text,
                   "the page heard a token from a silent microphone")
            log(f"optical: the box found the page's text by {how} (no audio either way)")
        testid(driver, "code-text").clear()
        testid(driver, "code-text").send_keys("0000-0000-0000U")
        testid(driver, "code-submit").click()
        wait_until(driver, lambda: "not a box's code" in testid(driver, "code-status").text, 10,
                   "a malformed code refused")
    finally:
        if driver:
            driver.quit()
        box.interrupt()


def main():
    only = os.environ.get("NEARBY_WEB_ONLY")
    # (part, what a failure names, the run): every part runs; the run fails at the end.
    parts = [("server", f"at {rate} Hz", lambda rate=rate: run_rate(rate)) for rate in (44100, 48000)]
    parts += [("peer", f"with no server at {rate} Hz", lambda rate=rate: run_peer(rate))
              for rate in (44100, 48000)]
    parts += [("bridge", "a server's phone and boxes with no server", lambda: run_bridge(48000)),
              ("self-check", "the self-check", lambda: run_self_check(48000)),
              ("optical", "the optical fallback", lambda: run_optical(48000))]
    failed = False
    for part, what, run in parts:
        if only not in (None, part):
            continue
        try:
            run()
        except Exception as error:
            failed = True
            log(f"FAILED, {what}: {error}")
    with open(os.path.join(SHOTS, "web-timings.json"), "w") as out:
        json.dump(TIMINGS, out, indent=1, sort_keys=True)
    if failed:
        sys.exit(1)
    log("passed")


if __name__ == "__main__":
    main()
