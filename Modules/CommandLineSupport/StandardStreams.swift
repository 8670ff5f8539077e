import Glibc

/// Writes a command's output to its standard output or standard error so that a reader that
/// went away ends the command as it ends any Unix tool, never with a crash.
///
/// Foundation's `FileHandle.write(_:)` traps when a write fails. Once something in the process
/// ignores SIGPIPE (the HTTP client's event loops do), every write to a closed pipe fails with
/// EPIPE instead of ending the process: `nearby subscribe --json | head -n 1`, or a script that
/// stopped reading before it stopped the command, crashed it. These write with `write(2)`,
/// whole, from any thread; a closed standard output ends the process with SIGPIPE (status
/// 141, as a shell pipeline expects), a failure on standard error is dropped (there is nowhere
/// left to say it).
public enum StandardStreams {
  /// Writes `text` to standard output; ends the process with SIGPIPE when nobody reads it
  /// any more.
  public static func output(_ text: String) {
    guard writeAll(text, to: 1) == EPIPE else { return }
    signal(SIGPIPE, SIG_DFL)
    raise(SIGPIPE)
  }

  /// Writes `text` to standard error; a failure is dropped.
  public static func error(_ text: String) {
    _ = writeAll(text, to: 2)
  }

  /// Writes all of `text` to `descriptor`; the `errno` of a failure, 0 when written.
  private static func writeAll(_ text: String, to descriptor: Int32) -> Int32 {
    let bytes = Array(text.utf8)
    return bytes.withUnsafeBytes { buffer -> Int32 in
      var offset = 0
      while offset < buffer.count {
        let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          return errno
        }
        offset += written
      }
      return 0
    }
  }
}
