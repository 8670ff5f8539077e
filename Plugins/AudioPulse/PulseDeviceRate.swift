import CPulse
import Foundation

/// Reads a sink's or source's sample rate from the server (libpulse introspection on a private
/// main loop, run to completion on the calling thread; used from the medium's own threads).
enum PulseDeviceRate {
  private final class Result {
    var rate: Int?
    var done = false
  }

  /// The sample rate of `device` (nil: the default sink or source), or nil when the server
  /// cannot be reached or has no such device within `timeout` seconds.
  static func sampleRate(server: String?, device: String?, isSink: Bool, timeout: Double = 2)
    -> Int?
  {
    guard let mainloop = pa_mainloop_new() else { return nil }
    defer { pa_mainloop_free(mainloop) }
    guard let context = pa_context_new(pa_mainloop_get_api(mainloop), "nearby") else { return nil }
    defer { pa_context_unref(context) }
    guard pa_context_connect(context, server, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0 else { return nil }
    defer { pa_context_disconnect(context) }
    let deadline = Date().addingTimeInterval(timeout)
    func iterate() -> Bool {
      guard Date() < deadline else { return false }
      if pa_mainloop_iterate(mainloop, 0, nil) < 0 { return false }
      usleep(2_000)
      return true
    }
    while true {
      let state = pa_context_get_state(context)
      if state == PA_CONTEXT_READY { break }
      if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED { return nil }
      guard iterate() else { return nil }
    }
    let result = Result()
    let box = Unmanaged.passRetained(result)
    defer { box.release() }
    let name = device ?? (isSink ? "@DEFAULT_SINK@" : "@DEFAULT_SOURCE@")
    let operation: OpaquePointer?
    if isSink {
      operation = pa_context_get_sink_info_by_name(
        context, name,
        { _, info, eol, userdata in
          guard let userdata else { return }
          let result = Unmanaged<Result>.fromOpaque(userdata).takeUnretainedValue()
          if let info { result.rate = Int(info.pointee.sample_spec.rate) }
          if eol != 0 { result.done = true }
        }, box.toOpaque())
    } else {
      operation = pa_context_get_source_info_by_name(
        context, name,
        { _, info, eol, userdata in
          guard let userdata else { return }
          let result = Unmanaged<Result>.fromOpaque(userdata).takeUnretainedValue()
          if let info { result.rate = Int(info.pointee.sample_spec.rate) }
          if eol != 0 { result.done = true }
        }, box.toOpaque())
    }
    guard let operation else { return nil }
    defer { pa_operation_unref(operation) }
    while !result.done && pa_operation_get_state(operation) == PA_OPERATION_RUNNING {
      guard iterate() else { return nil }
    }
    return result.rate
  }
}
