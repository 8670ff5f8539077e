import Dispatch
import Glibc
import Synchronization

/// SIGINT and SIGTERM as a stream, so a command can stop cleanly (unpublish, unregister)
/// instead of dying mid-way.
enum SignalStream {
  /// Keeps the dispatch sources alive while the stream is; the mutex guards them.
  private final class Sources: Sendable {
    let sources: Mutex<[any DispatchSourceSignal]>
    init(_ sources: sending [any DispatchSourceSignal]) { self.sources = Mutex(sources) }
  }

  static func make() -> AsyncStream<Int32> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: Int32.self, bufferingPolicy: .bufferingNewest(4))
    var sources: [any DispatchSourceSignal] = []
    for number in [SIGINT, SIGTERM] {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
      source.setEventHandler { continuation.yield(number) }
      source.resume()
      sources.append(source)
    }
    let box = Sources(sources)
    continuation.onTermination = { _ in
      box.sources.withLock { sources in
        for source in sources { source.cancel() }
        sources = []
      }
    }
    return stream
  }
}
