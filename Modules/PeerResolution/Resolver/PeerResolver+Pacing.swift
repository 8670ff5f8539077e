@_spi(Resolver) public import Core
@_spi(Resolver) import Resolution
import Strategy

@_spi(Resolver) extension PeerResolver: TransmitPaceSource {
  /// How often `device`'s mediums should repeat its token, as hearers ask about it
  /// (``TransmitPaceStateMachine``). A reader that falls more than 16 changes behind loses the
  /// oldest; there is at most one change per medium and question or tick, and a manager reads
  /// them as they come.
  /// - Throws: `ResolverError.unknownDevice` (Core) for a device not registered here, and the
  ///   engine's authentication error for a wrong secret.
  public func transmitPaces(for device: DeviceCredentials) async throws
    -> AsyncStream<TransmitPaceChange>
  {
    guard locals[device.id] != nil else { throw ResolverError.unknownDevice(device.id) }
    _ = try engine.authenticate(device)
    paceStreams[device.id]?.finish()
    let (stream, continuation) = AsyncStream.makeStream(
      of: TransmitPaceChange.self, bufferingPolicy: .bufferingNewest(16))
    paceStreams[device.id] = continuation
    return stream
  }
}

extension PeerResolver {
  /// Hands each change to its device's stream (none: nobody reads it, nothing to keep).
  func pace(_ changes: [TransmitPaceStateMachine.Change]) {
    for change in changes {
      paceStreams[change.device]?.yield(change.change)
    }
  }
}
