import Synchronization

/// Lines `nearby subscribe`'s live table shows above itself (the `--web` link, its QR code and
/// the box's code): the table clears the terminal at each redraw, so what is written beside
/// it would be gone within a second. Set from the web session's task, read at each redraw.
final class ScreenBanner: Sendable {
  private let text = Mutex("")

  var current: String { text.withLock { $0 } }

  func set(_ lines: String) { text.withLock { $0 = lines } }
}
