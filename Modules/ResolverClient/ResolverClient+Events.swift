@_spi(Resolver) import Core
import Foundation
import Logging
import OpenAPIRuntime
import ResolverAPI
@_spi(Resolver) import ResolverWire

/// The event stream: server-sent events, reconnected with backoff and resumed after the last
/// event received.
extension ResolverClient {
  /// Keeps the event stream open: reconnects with backoff after errors, resuming after the
  /// last event received; ends when the server no longer knows the device.
  func followEvents(
    of device: DeviceCredentials, stream number: Int,
    into continuation: AsyncStream<SequencedEvent>.Continuation
  ) async {
    var backoff = Backoff(
      initial: configuration.initialBackoff, maximum: configuration.maximumBackoff)
    while !Task.isCancelled, !isClosed, number == streamNumber {
      do {
        try await streamOnce(device, stream: number, into: continuation, backoff: &backoff)
      } catch let error as ResolverError where error.meansDeviceIsGone {
        logger.warning("event stream refused; the device is gone", metadata: ["error": "\(error)"])
        continuation.finish()
        return
      } catch {
        logger.debug("event stream interrupted", metadata: ["error": "\(error)"])
      }
      guard !Task.isCancelled, !isClosed, number == streamNumber else { return }
      try? await clock.sleep(for: max(backoff.next(), retryDelay))
    }
  }

  func streamOnce(
    _ device: DeviceCredentials, stream number: Int,
    into continuation: AsyncStream<SequencedEvent>.Continuation, backoff: inout Backoff
  ) async throws {
    let lastEventID = lastStreamedSequence > 0 ? String(lastStreamedSequence) : nil
    let output = try await call(secret: device.secret, stream: true) {
      try await $0.events(
        path: .init(id: device.id.description), headers: .init(lastEventID: lastEventID))
    }
    let body: HTTPBody
    switch output {
    case .ok(let ok): body = try ok.body.textEventStream
    case .badRequest(let answer): throw ResolverError.invalidReport(Self.message(answer))
    case .notFound: throw ResolverError.unknownDevice(device.id)
    case .forbidden: throw ResolverError.wrongSecret(device.id)
    case .unauthorized: throw ResolverError.invalidAPIKey
    case .tooManyRequests(let answer):
      throw ResolverError.unavailable("rate limited: \(Self.message(answer))")
    case .undocumented(let status, _):
      throw ResolverError.unavailable("the server answered \(status) to the event stream")
    }
    backoff.reset()
    for try await message in body.asDecodedServerSentEvents() {
      // A stream replaced by a newer one stops here, at an event or a keep-alive: its events
      // go to the newer one's.
      guard number == streamNumber else { return }
      guard let data = message.data, message.event != "keepalive" else { continue }
      let wire = try JSONDecoder().decode(Components.Schemas.Event.self, from: Data(data.utf8))
      let event = try wire.event()
      lastStreamedSequence = max(lastStreamedSequence, event.sequence)
      continuation.yield(event)
    }
  }
}
