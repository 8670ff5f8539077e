import CPulse

/// One blocking PulseAudio stream (libpulse-simple), mono float32, owned by one thread: it is
/// created, used and freed on the thread that runs its loop, never shared.
final class PulseStream {
  enum Direction {
    case playback
    case record
  }

  /// A libpulse failure: its error code and text.
  struct Failure: Error {
    var code: Int32
    var text: String
    var operation: String

    init(code: Int32, text: String, operation: String) {
      self.code = code
      self.text = text
      self.operation = operation
    }

    /// The failure inside `error` (closures that rethrow lose the error's type).
    init(_ error: any Error) {
      self = error as? Failure ?? Failure(code: -1, text: "\(error)", operation: "io")
    }
  }

  private let handle: OpaquePointer
  let sampleRate: Int

  /// Connects to `server` (nil: the default, `$PULSE_SERVER` or the session's) and opens a
  /// stream on `device` (nil: the default sink or source) with a latency of `latency` seconds.
  /// - Throws: ``Failure`` from `pa_simple_new`.
  init(
    direction: Direction, server: String?, device: String?, sampleRate: Int, latency: Double,
    name: String
  ) throws(Failure) {
    var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(sampleRate), channels: 1)
    let bytes = UInt32(Double(sampleRate) * latency) * 4
    var attributes = pa_buffer_attr(
      maxlength: UInt32.max, tlength: direction == .playback ? bytes : UInt32.max,
      prebuf: UInt32.max, minreq: UInt32.max, fragsize: direction == .record ? bytes : UInt32.max)
    var error: Int32 = 0
    let stream = pa_simple_new(
      server, "nearby", direction == .playback ? PA_STREAM_PLAYBACK : PA_STREAM_RECORD, device,
      name, &spec, nil, &attributes, &error)
    guard let stream else {
      throw Failure(code: error, text: Self.text(error), operation: "connect")
    }
    handle = stream
    self.sampleRate = sampleRate
  }

  deinit { pa_simple_free(handle) }

  /// Plays `samples`; blocks while the server's buffer is full (pacing the caller in real time).
  func write(_ samples: UnsafeBufferPointer<Float>) throws(Failure) {
    var error: Int32 = 0
    if pa_simple_write(handle, samples.baseAddress, samples.count * 4, &error) < 0 {
      throw Failure(code: error, text: Self.text(error), operation: "write")
    }
  }

  /// Fills `samples`; blocks until they have been recorded.
  func read(into samples: UnsafeMutableBufferPointer<Float>) throws(Failure) {
    var error: Int32 = 0
    if pa_simple_read(handle, samples.baseAddress, samples.count * 4, &error) < 0 {
      throw Failure(code: error, text: Self.text(error), operation: "read")
    }
  }

  /// Waits until everything written has been played.
  func drain() throws(Failure) {
    var error: Int32 = 0
    if pa_simple_drain(handle, &error) < 0 {
      throw Failure(code: error, text: Self.text(error), operation: "drain")
    }
  }

  /// Drops what is buffered for playback and not yet played.
  func flush() {
    var error: Int32 = 0
    _ = pa_simple_flush(handle, &error)
  }

  private static func text(_ code: Int32) -> String {
    guard let text = pa_strerror(code) else { return "error \(code)" }
    return String(cString: text)
  }

  /// Whether the failure means the server refused this client or has no such device: the
  /// microphone (or speaker) is not ours to use.
  static func isAccessProblem(_ failure: Failure) -> Bool {
    failure.code == Int32(PA_ERR_ACCESS.rawValue) || failure.code == Int32(PA_ERR_AUTHKEY.rawValue)
      || failure.code == Int32(PA_ERR_NOENTITY.rawValue)
  }
}
