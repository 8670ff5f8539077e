import CommandLineSupport
import ArgumentParser
import AudioModem
import AudioModemTestKit
import Foundation
import Tokens

/// The audio modem's goals, measured through the channel simulator: decode rate against C/N0,
/// clock offset, room reverberation, capture, collisions of equal power, false tokens in long
/// noise, and decoding CPU.
struct AudioBench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "audio",
    abstract: "Audio modem: decode rate vs C/N0, impairments, false tokens, CPU per second.",
    discussion: """
      Every trial is one frame at a random offset in 0.1–0.4 s of lead and 0.3 s of tail, \
      through the simulated channel, decoded by a fresh decoder; a trial succeeds when the \
      frame's token is found. A false token is any other token. Noise runs are fed in 1 s \
      buffers, much faster than real time. CPU is the decoding thread's CPU time only. Exits \
      1 when no frame at all is decoded at the strongest C/N0 (the modem or the simulator is \
      broken), not when a goal is missed.
      """)

  @Option(help: "Trials a point.") var trials = 200
  @Option(help: "Sample rate in Hz.") var rate = 48_000.0
  @Option(help: "Hours of white noise and of music-like noise for false tokens.")
  var noiseHours = 1.0
  @Option(help: "Seed of the simulation.") var seed: UInt64 = 1
  @Flag(
    help: """
      A short run for the test command, so the benchmark cannot rot: 10 trials a point, 10 s \
      of each noise, 20 s of busy stream (replaces --trials and --noise-hours).
      """)
  var short = false
  @Flag(help: "Print the results as one JSON object.") var json = false

  /// Trials a point: 10 in a short run.
  var trialCount: Int { short ? 10 : trials }
  /// Seconds of each noise for false tokens: 10 in a short run.
  var noiseSeconds: Int { short ? 10 : Int(noiseHours * 3600) }
  /// Seconds of the busy stream the CPU is measured on: 20 in a short run.
  var busySeconds: Int { short ? 20 : 120 }

  struct Point: Encodable {
    var condition: String
    var cn0: Double
    var trials: Int
    var decoded: Int
    var falseTokens: Int
    var rate: Double
  }

  struct NoiseRun: Encodable {
    var kind: String
    var seconds: Double
    var falseTokens: Int
    var candidates: Int
    var cpuMillisecondsPerSecond: Double
  }

  struct Results: Encodable {
    var sampleRate: Double
    var airtime: Double
    var curve: [Point]
    var impairments: [Point]
    var noise: [NoiseRun]
    var busyCPUMillisecondsPerSecond: Double
  }

  func validate() throws {
    guard trials > 0, noiseHours >= 0, ModemParameters.sampleRates.contains(rate) else {
      throw ValidationError("--trials > 0, --noise-hours ≥ 0, --rate in 44100…384000")
    }
  }

  func run() async throws {
    var generator = SplitMix64(seed: seed)
    let encoder = try AudioModemEncoder(sampleRate: rate)

    var curve: [Point] = []
    for cn0 in stride(from: 22.0, through: 34.0, by: 1.0) {
      progress("white noise at \(cn0) dB-Hz")
      curve.append(try point("white noise", cn0: cn0, encoder: encoder, using: &generator))
    }
    guard let strongest = curve.last, strongest.decoded > 0 else {
      throw CommandFailure(
        "no frame was decoded at \(curve.last?.cn0 ?? 0) dB-Hz in white noise: the modem or "
          + "the channel simulator is broken")
    }
    var impairments: [Point] = []
    for offset in [-0.005, 0.005] {
      progress("clock offset \(offset * 100) %")
      impairments.append(
        try point(
          "clock offset \(offset > 0 ? "+" : "")\(offset * 100) %", cn0: 35, encoder: encoder,
          using: &generator
        ) { audio, _ in (Channel.resample(audio, clockOffset: offset), [Token]()) })
    }
    for cn0 in [35.0, 45.0] {
      progress("room RT60 0.6 s at \(cn0) dB-Hz")
      impairments.append(
        try point(
          "room RT60 0.6 s, reverberant = direct", cn0: cn0, encoder: encoder, using: &generator
        ) {
          audio, generator in
          let response = Channel.roomImpulseResponse(
            rt60: 0.6, sampleRate: rate, using: &generator)
          return (Channel.convolve(audio, with: response), [Token]())
        })
    }
    progress("capture: a second transmitter 6 dB weaker")
    impairments.append(
      try point(
        "capture, other frame −6 dB overlapping", cn0: 40, encoder: encoder, using: &generator
      ) {
        audio, generator in
        var mixed = audio
        let weak = Token.random(using: &generator)
        let offset = Int((generator.uniform() * 0.7) * rate)
        Channel.mix(encoder.samples(for: weak), into: &mixed, at: offset, gainDB: -6)
        return (mixed, [weak])
      })
    for transmitters in 2...4 {
      progress("collisions: \(transmitters) frames of equal power overlapping")
      impairments.append(
        try collisions(transmitters: transmitters, cn0: 45, encoder: encoder, using: &generator))
    }

    var noise: [NoiseRun] = []
    let seconds = noiseSeconds
    if seconds > 0 {
      progress("\(seconds) s of white noise")
      var white = SplitMix64(seed: seed &+ 1)
      noise.append(
        try noiseRun("white noise", seconds: seconds) { count in
          Channel.whiteNoise(count: count, deviation: 0.1, using: &white)
        })
      progress("\(seconds) s of music-like noise")
      var music = MusicLikeNoise(sampleRate: rate, seed: seed &+ 2)
      noise.append(try noiseRun("music-like noise", seconds: seconds) { music.next($0) })
    }
    progress("CPU with a token every 2.5 s at 35 dB-Hz")
    let busy = try busyCPU(encoder: encoder, using: &generator)

    let results = Results(
      sampleRate: rate, airtime: ModemParameters.airtime, curve: curve,
      impairments: impairments, noise: noise, busyCPUMillisecondsPerSecond: busy)
    if json {
      print(JSONLine.encode(results))
      return
    }
    print(
      String(
        format: "airtime %.3f s at %.0f Hz, %d trials a point", results.airtime, rate, trialCount))
    print("C/N0 dB-Hz  decoded   rate     false")
    for point in curve {
      print(
        String(
          format: "%10.0f  %4d/%-4d %6.1f %%  %d", point.cn0, point.decoded, point.trials,
          point.rate * 100, point.falseTokens))
    }
    for point in impairments {
      print(
        String(
          format: "%@ at %.0f dB-Hz: %d/%d = %.1f %%, false %d", point.condition, point.cn0,
          point.decoded, point.trials, point.rate * 100, point.falseTokens))
    }
    for run in noise {
      print(
        String(
          format: "%@: %.0f s, %d false tokens, %d candidates, decode %.3f ms CPU a second",
          run.kind, run.seconds, run.falseTokens, run.candidates, run.cpuMillisecondsPerSecond))
    }
    print(String(format: "decode with a token every 2.5 s: %.3f ms CPU a second of audio", busy))
  }

  typealias ChannelStep = (_ audio: [Float], _ generator: inout SplitMix64) -> (
    audio: [Float], others: [Token]
  )

  /// One point: `trials` frames through `channel` (which may add other transmitters, whose
  /// tokens are then not false), then white noise at `cn0` (relative to the frame's power).
  private func point(
    _ condition: String, cn0: Double, encoder: AudioModemEncoder,
    using generator: inout SplitMix64,
    channel: ChannelStep = { audio, _ in (audio, []) }
  ) throws -> Point {
    var decoded = 0
    var falseTokens = 0
    for _ in 0..<trialCount {
      let token = Token.random(using: &generator)
      let frame = encoder.samples(for: token)
      let power = Channel.power(of: frame)
      let lead = Int((0.1 + 0.3 * generator.uniform()) * rate)
      var audio =
        [Float](repeating: 0, count: lead) + frame + [Float](repeating: 0, count: Int(0.3 * rate))
      let others: [Token]
      (audio, others) = channel(audio, &generator)
      Channel.addWhiteNoise(
        to: &audio, cn0: cn0, signalPower: power, sampleRate: rate, using: &generator)
      var decoder = try AudioModemDecoder(sampleRate: rate)
      let found = decoder.process(audio) + decoder.finish()
      if found.contains(where: { $0.token == token }) { decoded += 1 }
      falseTokens += found.filter { $0.token != token && !others.contains($0.token) }.count
    }
    return Point(
      condition: condition, cn0: cn0, trials: trialCount, decoded: decoded,
      falseTokens: falseTokens, rate: Double(decoded) / Double(trialCount))
  }

  /// Frames lost to collisions: `transmitters` frames of equal power, each starting 0.1–0.7 s
  /// after the one before (inside it: a frame lasts 0.85 s), white noise at `cn0` relative
  /// to one frame. The point counts frames: `trials` × `transmitters` sent, those decoded.
  private func collisions(
    transmitters: Int, cn0: Double, encoder: AudioModemEncoder, using generator: inout SplitMix64
  ) throws -> Point {
    var sent = 0
    var decoded = 0
    var falseTokens = 0
    for _ in 0..<trialCount {
      let tokens = (0..<transmitters).map { _ in Token.random(using: &generator) }
      var audio: [Float] = []
      var start = Int(0.1 * rate)
      for token in tokens {
        Channel.mix(encoder.samples(for: token), into: &audio, at: start)
        start += Int((0.1 + 0.6 * generator.uniform()) * rate)
      }
      audio += [Float](repeating: 0, count: Int(0.3 * rate))
      let power = Channel.power(of: encoder.samples(for: tokens[0]))
      Channel.addWhiteNoise(
        to: &audio, cn0: cn0, signalPower: power, sampleRate: rate, using: &generator)
      var decoder = try AudioModemDecoder(sampleRate: rate)
      let found = Set((decoder.process(audio) + decoder.finish()).map(\.token))
      sent += transmitters
      decoded += found.intersection(tokens).count
      falseTokens += found.subtracting(tokens).count
    }
    return Point(
      condition: "collisions, \(transmitters) frames of equal power overlapping (frames)",
      cn0: cn0, trials: sent, decoded: decoded, falseTokens: falseTokens,
      rate: Double(decoded) / Double(sent))
  }

  private func noiseRun(_ kind: String, seconds: Int, next: (Int) -> [Float]) throws -> NoiseRun {
    var decoder = try AudioModemDecoder(sampleRate: rate)
    var falseTokens = 0
    var cpu = 0.0
    for _ in 0..<seconds {
      let buffer = next(Int(rate))
      let start = threadCPUSeconds()
      falseTokens += decoder.process(buffer).count
      cpu += threadCPUSeconds() - start
    }
    falseTokens += decoder.finish().count
    return NoiseRun(
      kind: kind, seconds: Double(seconds), falseTokens: falseTokens,
      candidates: decoder.candidatesDemodulated,
      cpuMillisecondsPerSecond: cpu * 1000 / Double(seconds))
  }

  /// CPU per second of audio for a stream carrying a token every 2.5 s at 35 dB-Hz.
  private func busyCPU(encoder: AudioModemEncoder, using generator: inout SplitMix64) throws
    -> Double
  {
    let seconds = busySeconds
    var audio = [Float](repeating: 0, count: seconds * Int(rate))
    let frame = encoder.samples(for: .random(using: &generator))
    var position = Int(0.5 * rate)
    while position + frame.count < audio.count {
      Channel.mix(frame, into: &audio, at: position)
      position += Int(2.5 * rate)
    }
    Channel.addWhiteNoise(
      to: &audio, cn0: 35, signalPower: Channel.power(of: frame), sampleRate: rate,
      using: &generator)
    var decoder = try AudioModemDecoder(sampleRate: rate)
    let start = threadCPUSeconds()
    var found = 0
    audio.withUnsafeBufferPointer { buffer in
      var offset = 0
      while offset < buffer.count {
        let count = min(4_800, buffer.count - offset)
        found +=
          decoder.process(UnsafeBufferPointer(rebasing: buffer[offset..<(offset + count)])).count
        offset += count
      }
    }
    let cpu = threadCPUSeconds() - start
    progress("busy stream: \(found) tokens decoded")
    return cpu * 1000 / Double(seconds)
  }

  private func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }

  private func progress(_ text: String) {
    StandardStreams.error("bench: \(text)\n")
  }
}
