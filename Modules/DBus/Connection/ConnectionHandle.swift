import CDBus
import Glibc

/// The libdbus connection and the pipe that wakes its dispatch thread.
///
/// `@unchecked Sendable` because it holds C handles. What guards them:
/// - libdbus is thread-aware (``ConnectionCore`` calls `dbus_threads_init_default` before
///   connecting) and locks the connection internally, so the dispatch thread's reads
///   (`dbus_connection_read_write`, `dbus_connection_pop_message`) may run while another thread
///   sends (`dbus_connection_send`, which never blocks: it writes what the socket takes and
///   queues the rest for the dispatch thread).
/// - Only the dispatch thread reads, polls, and finally closes and releases the connection.
/// - Every send happens while holding ``ConnectionCore``'s state mutex and only while the
///   connection is open; the dispatch thread closes and releases it while holding the same
///   mutex after marking it closed. So no send can meet a released connection.
final class ConnectionHandle: @unchecked Sendable {
  /// `DBusConnection*`; valid until ``release()``.
  let connection: OpaquePointer
  /// The connection's socket.
  let socket: Int32
  /// Read end of the wake pipe (polled by the dispatch thread) and its write end.
  let wakeRead: Int32
  let wakeWrite: Int32

  init(connection: OpaquePointer, socket: Int32, wakeRead: Int32, wakeWrite: Int32) {
    self.connection = connection
    self.socket = socket
    self.wakeRead = wakeRead
    self.wakeWrite = wakeWrite
  }

  /// Wakes the dispatch thread (non-blocking; a full pipe already means "wake up").
  func wake() {
    var byte: UInt8 = 1
    _ = write(wakeWrite, &byte, 1)
  }

  /// Empties the wake pipe (dispatch thread only).
  func drainWakes() {
    var buffer = [UInt8](repeating: 0, count: 64)
    while read(wakeRead, &buffer, buffer.count) > 0 {}
  }

  /// Closes the connection and the pipe (dispatch thread only, under the state mutex).
  func release() {
    dbus_connection_close(connection)
    dbus_connection_unref(connection)
    close(wakeRead)
    close(wakeWrite)
  }

  /// A non-blocking, close-on-exec pipe.
  static func makeWakePipe() -> (read: Int32, write: Int32)? {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { return nil }
    for fd in fds {
      _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }
    return (fds[0], fds[1])
  }
}
