import Core

/// Wakes the event streams of this instance when events for their device were written: here
/// (the handler and the sweeper call ``wake(_:)``), or by another instance sharing the
/// database (the storage's notifications, see `ResolverServer`). Streams also look on their
/// own every ``ResolverServerConfiguration/eventPollInterval``, as a safety net.
actor EventHub {
  private var listeners: [DeviceID: [Int: AsyncStream<Void>.Continuation]] = [:]
  private var nextID = 0

  /// A stream that yields when the device may have new events (newest wake-up only).
  func listen(to device: DeviceID) -> (id: Int, wakeups: AsyncStream<Void>) {
    let (stream, continuation) = AsyncStream.makeStream(
      of: Void.self, bufferingPolicy: .bufferingNewest(1))
    nextID += 1
    listeners[device, default: [:]][nextID] = continuation
    return (nextID, stream)
  }

  func stopListening(to device: DeviceID, id: Int) {
    listeners[device]?.removeValue(forKey: id)?.finish()
    if listeners[device]?.isEmpty == true { listeners[device] = nil }
  }

  /// Wakes every stream of these devices.
  func wake<Devices: Sequence<DeviceID>>(_ devices: Devices) {
    for device in devices {
      for continuation in listeners[device, default: [:]].values { continuation.yield() }
    }
  }

  /// Wakes every stream (notifications may have been missed).
  func wakeAll() {
    for streams in listeners.values {
      for continuation in streams.values { continuation.yield() }
    }
  }

  /// How many streams are open (for metrics).
  var openStreams: Int { listeners.values.reduce(0) { $0 + $1.count } }
}
