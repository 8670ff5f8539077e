import Foundation

/// A private `dbus-daemon` for benchmarks, in a temporary folder, stopped by ``stop()``.
final class PrivateBus {
  let address: String
  private let process: Process
  private let folder: URL

  init() throws {
    folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "nearby-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let socket = folder.appendingPathComponent("bus").path
    let config = folder.appendingPathComponent("bus.conf")
    try """
    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
    <busconfig>
      <type>session</type>
      <listen>unix:path=\(socket)</listen>
      <auth>EXTERNAL</auth>
      <policy context="default">
        <allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/>
      </policy>
    </busconfig>
    """.write(to: config, atomically: true, encoding: .utf8)
    process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
    process.arguments = ["--config-file=\(config.path)", "--nofork", "--nosyslog"]
    try process.run()
    address = "unix:path=\(socket)"
    let deadline = Date().addingTimeInterval(5)
    while !FileManager.default.fileExists(atPath: socket) {
      guard Date() < deadline else { throw BenchError("dbus-daemon did not start within 5 s") }
      usleep(10_000)
    }
  }

  /// Kills the daemon. SIGKILL, not `terminate()`: a process started from a Swift
  /// concurrency thread inherits its blocked signals, SIGTERM among them.
  func stop() {
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    try? FileManager.default.removeItem(at: folder)
  }
}
