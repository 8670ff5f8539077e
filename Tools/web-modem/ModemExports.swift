import Tokens

/// The modem's interface to the web page: C functions exported from the WebAssembly module
/// that Tools/scripts/build-web-modem.sh compiles from Modules/AudioModem (and the Token of
/// Modules/Tokens) with Embedded Swift. Everything crosses as numbers and pointers into the
/// module's memory: the page allocates a buffer with ``nearbyModemAllocate(_:)``, writes
/// samples there, and reads what the functions write back.
///
/// A token crosses as two 32-bit halves (high, low), which JavaScript numbers hold exactly.

/// `bytes` of the module's memory (16-byte aligned), or 0 when there is no more.
@_expose(wasm, "nearby_modem_allocate")
@_cdecl("nearby_modem_allocate")
public func nearbyModemAllocate(_ bytes: Int32) -> UnsafeMutableRawPointer? {
  UnsafeMutableRawPointer.allocate(byteCount: Int(max(bytes, 1)), alignment: 16)
}

/// Gives back what ``nearbyModemAllocate(_:)`` gave.
@_expose(wasm, "nearby_modem_release")
@_cdecl("nearby_modem_release")
public func nearbyModemRelease(_ pointer: UnsafeMutableRawPointer?) {
  pointer?.deallocate()
}

/// The samples of one frame at `sampleRate` (Hz); 0 for a rate the modem does not take.
@_expose(wasm, "nearby_modem_frame_length")
@_cdecl("nearby_modem_frame_length")
public func nearbyModemFrameLength(_ sampleRate: Double) -> Int32 {
  guard let encoder = try? AudioModemEncoder(sampleRate: sampleRate) else { return 0 }
  return Int32(encoder.frameLength)
}

/// Writes the frame of the token (`high`, `low`) at `sampleRate` and peak `level` into
/// `output` (room for `capacity` samples): the samples written, or −1 for a rate or level
/// the modem does not take or too little room.
@_expose(wasm, "nearby_modem_encode")
@_cdecl("nearby_modem_encode")
public func nearbyModemEncode(
  _ high: UInt32, _ low: UInt32, _ sampleRate: Double, _ level: Float,
  _ output: UnsafeMutablePointer<Float>, _ capacity: Int32
) -> Int32 {
  guard let encoder = try? AudioModemEncoder(sampleRate: sampleRate, level: level),
    encoder.frameLength <= Int(capacity)
  else { return -1 }
  let samples = encoder.samples(for: Token(value: UInt64(high) << 32 | UInt64(low)))
  for index in samples.indices { output[index] = samples[index] }
  return Int32(samples.count)
}

/// A decoder and what it found in the last samples it was given.
final class DecoderBox {
  var decoder: AudioModemDecoder
  var found: [DecodedToken] = []

  init(_ decoder: AudioModemDecoder) { self.decoder = decoder }
}

/// A decoder for audio at `sampleRate`, or 0 for a rate the modem does not take. Give it
/// back with ``nearbyModemDecoderRelease(_:)``.
@_expose(wasm, "nearby_modem_decoder_make")
@_cdecl("nearby_modem_decoder_make")
public func nearbyModemDecoderMake(_ sampleRate: Double) -> UnsafeMutableRawPointer? {
  guard let decoder = try? AudioModemDecoder(sampleRate: sampleRate) else { return nil }
  return Unmanaged.passRetained(DecoderBox(decoder)).toOpaque()
}

/// Decodes `count` samples at `samples` (after all those given before): how many tokens
/// they completed, each readable with ``nearbyModemDecoderResult(_:_:_:)``. `count` 0
/// flushes what is pending (the end of the audio).
@_expose(wasm, "nearby_modem_decoder_process")
@_cdecl("nearby_modem_decoder_process")
public func nearbyModemDecoderProcess(
  _ handle: UnsafeMutableRawPointer, _ samples: UnsafePointer<Float>, _ count: Int32
) -> Int32 {
  let box = Unmanaged<DecoderBox>.fromOpaque(handle).takeUnretainedValue()
  box.found =
    count == 0
    ? box.decoder.finish()
    : box.decoder.process(UnsafeBufferPointer(start: samples, count: Int(count)))
  return Int32(box.found.count)
}

/// Writes the `index`th token of the last call's into `output`, six numbers: the token's high
/// and low halves, the frame's offset (s), the SNR (dB), the frequency offset (Hz) and the
/// symbols corrected. 0, or −1 for an index out of range.
@_expose(wasm, "nearby_modem_decoder_result")
@_cdecl("nearby_modem_decoder_result")
public func nearbyModemDecoderResult(
  _ handle: UnsafeMutableRawPointer, _ index: Int32, _ output: UnsafeMutablePointer<Double>
) -> Int32 {
  let box = Unmanaged<DecoderBox>.fromOpaque(handle).takeUnretainedValue()
  guard index >= 0, Int(index) < box.found.count else { return -1 }
  let token = box.found[Int(index)]
  output[0] = Double(UInt32(truncatingIfNeeded: token.token.value >> 32))
  output[1] = Double(UInt32(truncatingIfNeeded: token.token.value))
  output[2] = token.offset
  output[3] = token.snrDB
  output[4] = token.frequencyOffset
  output[5] = Double(token.correctedSymbols)
  return 0
}

/// Whether the decoder is inside a frame (a preamble heard, its symbols still arriving): 1
/// or 0. The page shows it, and a sender defers to it.
@_expose(wasm, "nearby_modem_decoder_receiving")
@_cdecl("nearby_modem_decoder_receiving")
public func nearbyModemDecoderReceiving(_ handle: UnsafeMutableRawPointer) -> Int32 {
  Unmanaged<DecoderBox>.fromOpaque(handle).takeUnretainedValue().decoder.isReceiving ? 1 : 0
}

/// Gives back a decoder.
@_expose(wasm, "nearby_modem_decoder_release")
@_cdecl("nearby_modem_decoder_release")
public func nearbyModemDecoderRelease(_ handle: UnsafeMutableRawPointer) {
  Unmanaged<DecoderBox>.fromOpaque(handle).release()
}

/// ``ModemVectors/digest(seed:)``: the module's answer to the modem's battery, which must be
/// the native build's.
@_expose(wasm, "nearby_modem_vectors_digest")
@_cdecl("nearby_modem_vectors_digest")
public func nearbyModemVectorsDigest(_ seed: UInt64) -> UInt64 {
  ModemVectors.digest(seed: seed)
}

/// ``ModemVectors/successes(seed:rate:deviation:count:)``: one point of the success curve,
/// computed by the module on samples it makes itself (the same as the native build's).
@_expose(wasm, "nearby_modem_successes")
@_cdecl("nearby_modem_successes")
public func nearbyModemSuccesses(
  _ seed: UInt64, _ rate: Double, _ deviation: Double, _ count: Int32
) -> Int32 {
  Int32(ModemVectors.successes(seed: seed, rate: rate, deviation: deviation, count: Int(count)))
}

/// Writes the self-check's sweep (``BandCheck/sweep(seconds:rate:)``) lasting `seconds` at
/// `sampleRate` into `output` (room for `capacity` samples): the samples written, or −1 when
/// they do not fit.
@_expose(wasm, "nearby_modem_sweep")
@_cdecl("nearby_modem_sweep")
public func nearbyModemSweep(
  _ seconds: Double, _ sampleRate: Double, _ output: UnsafeMutablePointer<Float>,
  _ capacity: Int32
) -> Int32 {
  guard seconds > 0, seconds <= 10, sampleRate > 0, Int(seconds * sampleRate) <= Int(capacity)
  else { return -1 }
  let samples = BandCheck.sweep(seconds: seconds, rate: sampleRate)
  for index in samples.indices { output[index] = samples[index] }
  return Int32(samples.count)
}

/// The self-check's verdict on `count` recorded samples at `samples` (``BandCheck/bands(in:rate:)``):
/// writes three numbers a band (from and to in Hz, its sweep's level above its background in
/// dB) into `output` (room for `capacity` numbers) and returns how many bands, or −1 when they
/// do not fit. ``BandCheck/carries(_:)`` is whether every band within 18.5–20 kHz stands 15 dB
/// or more above its background.
@_expose(wasm, "nearby_modem_bands")
@_cdecl("nearby_modem_bands")
public func nearbyModemBands(
  _ samples: UnsafePointer<Float>, _ count: Int32, _ sampleRate: Double,
  _ output: UnsafeMutablePointer<Double>, _ capacity: Int32
) -> Int32 {
  guard count >= 0, sampleRate > 0 else { return -1 }
  let bands = BandCheck.bands(
    in: Array(UnsafeBufferPointer(start: samples, count: Int(count))), rate: sampleRate)
  guard bands.count * 3 <= Int(capacity) else { return -1 }
  for (index, band) in bands.enumerated() {
    output[3 * index] = band.fromHz
    output[3 * index + 1] = band.toHz
    output[3 * index + 2] = band.snrDB
  }
  return Int32(bands.count)
}
