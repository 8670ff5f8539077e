public import Core
public import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Where a server client keeps its device's id and secret between runs, so that a device
/// registers once. A store *claims* credentials for one client at a time: a second process of
/// the same app gets nothing and registers a device of its own.
public protocol CredentialStore: Sendable {
  /// The saved credentials for `account` (server URL + API key), claimed for this client, or
  /// nil if there are none or another live client holds them.
  func claim(_ account: String) async -> DeviceCredentials?
  /// Saves (and claims) credentials for `account`.
  func save(_ credentials: DeviceCredentials, for account: String) async
  /// Forgets the credentials for `account` (after the device was unregistered).
  func forget(_ account: String) async
}

/// Keeps credentials in memory only: every process registers anew.
public actor InMemoryCredentialStore: CredentialStore {
  private var saved: [String: DeviceCredentials] = [:]
  private var claimed: Set<String> = []

  public init() {}

  public func claim(_ account: String) -> DeviceCredentials? {
    guard let credentials = saved[account], !claimed.contains(account) else { return nil }
    claimed.insert(account)
    return credentials
  }

  public func save(_ credentials: DeviceCredentials, for account: String) {
    saved[account] = credentials
    claimed.insert(account)
  }

  public func forget(_ account: String) {
    saved[account] = nil
    claimed.remove(account)
  }
}

/// Keeps credentials in one JSON file per account (mode 0600) under `folder` (default
/// `$XDG_STATE_HOME/nearby/devices`, or `~/.local/state/nearby/devices`). A claim holds an
/// exclusive `flock` on the file until ``forget(_:)`` or the end of the process.
public actor FileCredentialStore: CredentialStore {
  public let folder: URL
  /// Open descriptors holding claims, by account.
  private var locks: [String: Int32] = [:]

  public init(folder: URL? = nil) {
    self.folder = folder ?? Self.defaultFolder()
  }

  public static func defaultFolder(
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> URL {
    let base =
      environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
      ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state"
    return URL(fileURLWithPath: base).appendingPathComponent("nearby/devices")
  }

  public func claim(_ account: String) -> DeviceCredentials? {
    guard let descriptor = lock(account) else { return nil }
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = pread(descriptor, &buffer, buffer.count, 0)
    guard count > 0,
      let credentials = try? JSONDecoder().decode(
        DeviceCredentials.self, from: Data(buffer.prefix(count)))
    else { return nil }
    return credentials
  }

  public func save(_ credentials: DeviceCredentials, for account: String) {
    guard let descriptor = lock(account), let data = try? JSONEncoder().encode(credentials)
    else { return }
    _ = ftruncate(descriptor, 0)
    _ = data.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    _ = fsync(descriptor)
  }

  public func forget(_ account: String) {
    guard let descriptor = locks.removeValue(forKey: account) else { return }
    _ = ftruncate(descriptor, 0)
    close(descriptor)
  }

  /// The account's file, opened and locked by this process; nil if another process holds it.
  private func lock(_ account: String) -> Int32? {
    if let descriptor = locks[account] { return descriptor }
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let path = folder.appendingPathComponent(Self.fileName(for: account)).path
    let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { return nil }
    guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
      close(descriptor)
      return nil
    }
    locks[account] = descriptor
    return descriptor
  }

  /// A stable file name for an account (FNV-1a of its text; the key itself is not written).
  static func fileName(for account: String) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in account.utf8 {
      hash ^= UInt64(byte)
      hash &*= 0x100_0000_01b3
    }
    return String(hash, radix: 16) + ".json"
  }
}
