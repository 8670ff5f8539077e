import ArgumentParser

/// The exit codes of `nearby publish` and `nearby subscribe` (sysexits(3) numbers), listed in
/// their `--help`.
enum ExitCodes {
  /// Stopped by Ctrl-C / SIGTERM, or the TTL ran out: the work ended cleanly.
  static let success = ExitCode(0)
  /// Something failed while running (the message says what).
  static let failure = ExitCode(1)
  /// Bad arguments (ArgumentParser's validation errors also exit 64).
  static let usage = ExitCode(64)
  /// A medium asked for with `--mediums` is not available here, or the resolver cannot be
  /// reached or started.
  static let unavailable = ExitCode(69)
  /// The resolver refused the API key, or no key was found.
  static let noPermission = ExitCode(77)

  static let help = """
    Exit codes: 0 stopped by Ctrl-C/SIGTERM or the TTL ran out; 1 failed while running; \
    64 bad arguments; 69 a requested medium or the resolver is unavailable; 77 the API key \
    is missing or refused.
    """
}

/// A failure with its own exit code: the message goes to stderr as "error: …".
struct ExitFailure: Error, CustomStringConvertible {
  let description: String
  let code: ExitCode
  init(_ description: String, code: ExitCode) {
    self.description = description
    self.code = code
  }
}
