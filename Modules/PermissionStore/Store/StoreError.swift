import Glibc

/// Why a ``DefaultsStore`` call failed.
public enum StoreError: Error, Sendable, Hashable {
  /// The app id is empty, longer than 200 characters, starts with a dot or holds a character
  /// other than `A-Z a-z 0-9 . _ -` (it names a file).
  case invalidAppID(String)
  /// A system call failed; `operation` names it and the path, `errno` is the C error number.
  case system(operation: String, path: String, errno: Int32)
  /// The value stored under `key` is not of the type asked for.
  case typeMismatch(key: String, expected: String, found: String)
  /// The value could not be encoded as JSON (a non-finite Double, an encoder error).
  case unencodable(key: String, reason: String)
  /// The store was closed with ``DefaultsStore/close()``.
  case closed
}

extension StoreError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .invalidAppID(let id):
      "invalid app id \"\(id)\": use 1-200 characters of A-Z a-z 0-9 . _ - not starting with '.'"
    case .system(let operation, let path, let code):
      "\(operation) \(path) failed: \(String(cString: strerror(code))) (errno \(code))"
    case .typeMismatch(let key, let expected, let found):
      "the value of \"\(key)\" is \(found), not \(expected)"
    case .unencodable(let key, let reason):
      "the value for \"\(key)\" cannot be stored as JSON: \(reason)"
    case .closed: "the store was closed"
    }
  }
}
