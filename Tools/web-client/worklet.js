// The page's audio thread: the modem (Modules/AudioModem compiled to WebAssembly, compiled by
// the page and posted here, since a worklet can neither fetch nor compile a module itself)
// decodes the microphone and writes the frames to send. Everything it learns goes to the page
// as messages; it never touches the network.
//
// Page -> worklet: {type: "module", module}, {type: "send", high, low, level} (broadcast a
// token, a frame every 2-3 s, deferring to a frame being heard), {type: "silence"},
// {type: "check", high, low, level, sweep} (the self-check: a sweep of `sweep` seconds, 0.3 s
// of silence and the token's frame, played at once, with the microphone recorded meanwhile).
// Worklet -> page: {type: "ready", rate}, {type: "failed", message},
// {type: "heard", high, low, snr, offset}, {type: "level", rms, peak, receiving, load},
// {type: "sent", high, low}, {type: "recorded", samples} (what the microphone took during a
// check, for the page to judge off the audio thread).

const BLOCK = 2048; // samples handed to the decoder at once
const LEVEL_EVERY = 0.1; // seconds between level reports
const GAP = [2.0, 3.0]; // seconds between broadcast frames, as the Linux medium spaces them
const CHECK_MARGIN = 1.0; // seconds recorded after a check's sound: the output and input latency

class NearbyModem extends AudioWorkletProcessor {
  constructor() {
    super();
    this.exports = null;
    this.decoder = 0;
    this.input = 0; // BLOCK floats in the module's memory
    this.result = 0; // six doubles
    this.frame = 0; // one frame's floats in the module's memory
    this.frameLength = 0;
    this.pending = new Float32Array(BLOCK);
    this.pendingCount = 0;
    this.broadcast = null; // {high, low, level, samples}
    this.once = null;
    this.recording = null; // {samples, count}: the microphone during a check
    this.playing = null; // {samples, position, high, low}
    this.nextStart = 0; // in samples of currentFrame
    this.levelSum = 0;
    this.levelPeak = 0;
    this.levelCount = 0;
    this.busy = 0; // seconds spent decoding since the last level report
    this.port.onmessage = (event) => this.receive(event.data);
  }

  receive(message) {
    try {
      if (message.type === "module") {
        this.load(message.module);
      } else if (message.type === "send") {
        this.broadcast = { high: message.high, low: message.low, samples: this.encode(message) };
        this.nextStart = Math.min(this.nextStart, currentFrame + Math.round(0.2 * sampleRate));
      } else if (message.type === "silence") {
        this.broadcast = null;
      } else if (message.type === "check") {
        const sweep = this.sweep(message.sweep);
        const frame = this.encode(message);
        const samples = new Float32Array(sweep.length + Math.round(0.3 * sampleRate) + frame.length);
        samples.set(sweep);
        samples.set(frame, samples.length - frame.length);
        this.once = { high: message.high, low: message.low, samples };
        const length = samples.length + Math.round(CHECK_MARGIN * sampleRate);
        this.recording = { samples: new Float32Array(length), count: 0 };
      }
    } catch (error) {
      this.port.postMessage({ type: "failed", message: String(error) });
    }
  }

  load(module) {
    const instance = new WebAssembly.Instance(module, {});
    const e = instance.exports;
    const decoder = e.nearby_modem_decoder_make(sampleRate);
    if (!decoder) {
      this.port.postMessage({
        type: "failed",
        message: `the modem does not take this device's sample rate (${sampleRate} Hz)`,
      });
      return;
    }
    this.exports = e;
    this.decoder = decoder;
    this.input = e.nearby_modem_allocate(BLOCK * 4);
    this.result = e.nearby_modem_allocate(6 * 8);
    this.frameLength = e.nearby_modem_frame_length(sampleRate);
    this.frame = e.nearby_modem_allocate(this.frameLength * 4);
    if (!this.input || !this.result || !this.frame) throw new Error("the modem is out of memory");
    this.port.postMessage({ type: "ready", rate: sampleRate });
  }

  encode({ high, low, level }) {
    const e = this.exports;
    if (!e) throw new Error("the modem is not loaded");
    const written = e.nearby_modem_encode(high, low, sampleRate, level, this.frame, this.frameLength);
    if (written <= 0) throw new Error("the modem could not encode the token");
    // A copy: the module's memory may grow (and its old buffer detach) at any later call.
    return new Float32Array(e.memory.buffer, this.frame, written).slice();
  }

  sweep(seconds) {
    const e = this.exports;
    if (!e) throw new Error("the modem is not loaded");
    const capacity = Math.ceil(seconds * sampleRate);
    const buffer = e.nearby_modem_allocate(capacity * 4);
    if (!buffer) throw new Error("the modem is out of memory");
    try {
      const written = e.nearby_modem_sweep(seconds, sampleRate, buffer, capacity);
      if (written <= 0) throw new Error("the modem could not make the sweep");
      return new Float32Array(e.memory.buffer, buffer, written).slice();
    } finally {
      e.nearby_modem_release(buffer);
    }
  }

  record(input) {
    const recording = this.recording;
    const count = Math.min(input.length, recording.samples.length - recording.count);
    recording.samples.set(input.subarray(0, count), recording.count);
    recording.count += count;
    if (recording.count === recording.samples.length) {
      this.recording = null;
      this.port.postMessage({ type: "recorded", samples: recording.samples }, [
        recording.samples.buffer,
      ]);
    }
  }

  decode() {
    const e = this.exports;
    const started = Date.now();
    new Float32Array(e.memory.buffer, this.input, BLOCK).set(this.pending);
    const count = e.nearby_modem_decoder_process(this.decoder, this.input, BLOCK);
    for (let index = 0; index < count; index++) {
      if (e.nearby_modem_decoder_result(this.decoder, index, this.result) !== 0) continue;
      const r = new Float64Array(e.memory.buffer, this.result, 6);
      this.port.postMessage({ type: "heard", high: r[0], low: r[1], offset: r[2], snr: r[3] });
    }
    this.busy += (Date.now() - started) / 1000;
  }

  process(inputs, outputs) {
    const output = outputs[0] && outputs[0][0];
    if (output) this.play(output);
    const input = inputs[0] && inputs[0][0];
    if (!this.exports) return true;
    if (input) {
      if (this.recording) this.record(input);
      for (let i = 0; i < input.length; i++) {
        const sample = input[i];
        this.levelSum += sample * sample;
        const magnitude = Math.abs(sample);
        if (magnitude > this.levelPeak) this.levelPeak = magnitude;
        this.pending[this.pendingCount++] = sample;
        if (this.pendingCount === BLOCK) {
          this.decode();
          this.pendingCount = 0;
        }
      }
      this.levelCount += input.length;
      if (this.levelCount >= LEVEL_EVERY * sampleRate) {
        this.port.postMessage({
          type: "level",
          rms: Math.sqrt(this.levelSum / this.levelCount),
          peak: this.levelPeak,
          receiving: this.exports.nearby_modem_decoder_receiving(this.decoder) === 1,
          load: this.busy / (this.levelCount / sampleRate),
        });
        this.levelSum = 0;
        this.levelPeak = 0;
        this.levelCount = 0;
        this.busy = 0;
      }
    }
    return true;
  }

  play(output) {
    if (!this.playing) {
      if (this.once) {
        this.playing = { ...this.once, position: 0 };
        this.once = null;
      } else if (
        this.broadcast &&
        currentFrame >= this.nextStart &&
        !(this.exports && this.exports.nearby_modem_decoder_receiving(this.decoder) === 1)
      ) {
        this.playing = { ...this.broadcast, position: 0 };
      }
    }
    output.fill(0);
    const playing = this.playing;
    if (!playing) return;
    const count = Math.min(output.length, playing.samples.length - playing.position);
    output.set(playing.samples.subarray(playing.position, playing.position + count));
    playing.position += count;
    if (playing.position >= playing.samples.length) {
      this.playing = null;
      const gap = GAP[0] + Math.random() * (GAP[1] - GAP[0]);
      this.nextStart = currentFrame + output.length + Math.round(gap * sampleRate);
      this.port.postMessage({ type: "sent", high: playing.high, low: playing.low });
    }
  }
}

registerProcessor("nearby-modem", NearbyModem);
