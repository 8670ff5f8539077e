public import Foundation
public import Logging

/// A defaults-like key/value store: one human-readable JSON file per app id, safe to share
/// between processes.
///
/// The file is `<directory>/<app id>.json` (by default `$XDG_CONFIG_HOME/nearby/`, or
/// `~/.config/nearby/`): a pretty-printed JSON object with sorted keys. Bool, Int, Double and
/// String are JSON's own types; `Data` is a base64 string; any other `Codable` value is the
/// JSON its conformance produces, with `Date`s as ISO 8601 strings (whole seconds).
///
/// Guarantees:
/// - A write that returned is on disk: the new version is written to a temporary file,
///   fsync'd, renamed over the file, and the folder is fsync'd.
/// - A crash never leaves a torn file: readers see the old version or the new one.
/// - Writers of every process take an exclusive `flock` on `<app id>.json.lock` and re-read the
///   file under it, so concurrent read-modify-writes (``update(_:as:_:)``) lose no update.
/// - Changes made by other processes are seen (inotify on the folder, or polling the file's
///   inode and change time if inotify is unavailable) and published by ``events()``.
/// - An unreadable or corrupt file is renamed to `<app id>.json.corrupt-<UTC time>`, reported
///   as ``StoreEvent/corruptFileMovedAside(_:)`` (and in ``corruptFiles``, and logged as an
///   error), and the store starts clean: never a silent loss. By the time the event arrives
///   the snapshot is already the clean one.
///
/// Reads (``value(_:forKey:)``, ``bool(forKey:)``, ...) return the store's snapshot at once,
/// from any thread. Writes run on the store's own I/O thread (never on Swift's cooperative
/// pool); writes queued while one is being made are committed together with one fsync.
public final class DefaultsStore: Sendable {
  /// The app id this store belongs to; it names the file.
  public let appID: String
  /// The JSON file.
  public let fileURL: URL

  private let core: StoreCore
  private let thread: StoreThread<StoreCore.Job>
  private let watcher: FileWatcher

  /// Opens (creating if needed) the store of `appID`.
  ///
  /// - Parameters:
  ///   - appID: 1–200 characters of `A-Z a-z 0-9 . _ -`, not starting with `.`; for example a
  ///     reverse-DNS app id such as `com.example.kiosk`.
  ///   - directory: where the file lives; `nil` for ``defaultDirectory(environment:)``.
  ///   - logger: where problems (a corrupt file, a failed write) are logged.
  /// - Throws: ``StoreError/invalidAppID(_:)``, or ``StoreError/system(operation:path:errno:)``
  ///   when the folder cannot be created or the lock file opened.
  public init(
    appID: String, directory: URL? = nil, logger: Logger = Logger(label: "nearby.store")
  ) async throws {
    try Self.validate(appID: appID)
    let directory = directory ?? Self.defaultDirectory()
    let file = try await Self.onThread { try StoreFile(directory: directory, appID: appID) }
    let core = StoreCore(file: file, logger: logger)
    let thread = StoreThread<StoreCore.Job>(
      name: "nearby.store.io", process: core.process, drain: core.drain)
    let watcher: FileWatcher
    do {
      watcher = try FileWatcher(
        directory: directory.path, fileName: file.file.lastPathComponent
      ) { [weak thread] in
        thread?.submit(.refresh(nil))
      }
    } catch {
      thread.stop(wait: false)
      throw error
    }
    if let reason = watcher.fallbackReason {
      logger.warning(
        "inotify unavailable; polling the store file for changes every 200 ms",
        metadata: ["reason": "\(reason)"])
    }
    self.appID = appID
    self.fileURL = file.file
    self.core = core
    self.thread = thread
    self.watcher = watcher
    try await reload()
  }

  deinit {
    watcher.stop()
    thread.stop(wait: false)
  }

  /// `$XDG_CONFIG_HOME/nearby` when that variable holds an absolute path (as the XDG base
  /// directory spec asks), else `$HOME/.config/nearby`.
  public static func defaultDirectory(
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> URL {
    if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
      return URL(fileURLWithPath: config).appendingPathComponent("nearby")
    }
    let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
    return URL(fileURLWithPath: home).appendingPathComponent(".config/nearby")
  }

  static func validate(appID: String) throws(StoreError) {
    let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
    guard !appID.isEmpty, appID.count <= 200, !appID.hasPrefix("."),
      appID.allSatisfy({ allowed.contains($0) })
    else { throw .invalidAppID(appID) }
  }

  /// Runs blocking work on a new thread (before the store's own thread exists).
  private static func onThread<T: Sendable>(
    _ body: @escaping @Sendable () throws -> T
  ) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
  }

  // MARK: Reading

  /// Every key that has a value.
  public var keys: [String] { core.state.withLock { $0.values.keys.sorted() } }

  /// The raw value of `key`, or `nil`.
  public func storeValue(forKey key: String) -> StoreValue? {
    core.state.withLock { $0.values[key] }
  }

  /// The whole snapshot.
  public func dictionaryRepresentation() -> [String: StoreValue] {
    core.state.withLock { $0.values }
  }

  /// The value of `key` decoded as `T` (any `Decodable`, including Bool, Int, Double, String,
  /// Data), or `nil` when the key has no value.
  ///
  /// - Throws: ``StoreError/typeMismatch(key:expected:found:)`` when the stored value does not
  ///   decode as `T`.
  public func value<T: Decodable>(_ type: T.Type = T.self, forKey key: String) throws -> T? {
    guard let stored = storeValue(forKey: key) else { return nil }
    return try StoreValueCoding.decode(T.self, from: stored, key: key)
  }

  /// The Bool of `key`, or `nil` when it has none or holds another type.
  public func bool(forKey key: String) -> Bool? {
    guard case .bool(let value) = storeValue(forKey: key) else { return nil }
    return value
  }

  /// The Int of `key` (an integral Double counts), or `nil`.
  public func integer(forKey key: String) -> Int? {
    switch storeValue(forKey: key) {
    case .int(let value): value
    case .double(let value) where value.rounded() == value: Int(exactly: value)
    default: nil
    }
  }

  /// The Double of `key` (an Int counts), or `nil`.
  public func double(forKey key: String) -> Double? {
    switch storeValue(forKey: key) {
    case .double(let value): value
    case .int(let value): Double(value)
    default: nil
    }
  }

  /// The String of `key`, or `nil`.
  public func string(forKey key: String) -> String? {
    guard case .string(let value) = storeValue(forKey: key) else { return nil }
    return value
  }

  /// The Data of `key` (stored as base64), or `nil`.
  public func data(forKey key: String) -> Data? {
    guard case .string(let value) = storeValue(forKey: key) else { return nil }
    return Data(base64Encoded: value)
  }

  /// The corrupt files this store has moved aside since it was opened.
  public var corruptFiles: [CorruptFile] { core.state.withLock { $0.corruptFiles } }

  // MARK: Writing

  /// Stores `value` under `key` (`nil` removes it). Returns once the file is on disk.
  ///
  /// - Throws: ``StoreError/unencodable(key:reason:)``, ``StoreError/closed``, or
  ///   ``StoreError/system(operation:path:errno:)`` when the file cannot be written (a full
  ///   disk, a read-only folder).
  public func set<T: Encodable>(_ value: T?, forKey key: String) async throws {
    let stored = try value.map { try StoreValueCoding.encode($0, key: key) }
    _ = try await mutate { values in
      values[key] = stored
      return stored
    }
  }

  /// Removes the value of `key`. Returns once the file is on disk.
  ///
  /// - Throws: as ``set(_:forKey:)``.
  public func removeValue(forKey key: String) async throws {
    _ = try await mutate { values in
      values[key] = nil
      return nil
    }
  }

  /// Replaces the value of `key` with `transform(current)` under the cross-process lock, so
  /// that concurrent updates from any process are applied one after the other. `transform`
  /// runs on the store's I/O thread and must return quickly; returning `nil` removes the key.
  ///
  /// - Returns: the new value.
  /// - Throws: what `transform` throws, ``StoreError/typeMismatch(key:expected:found:)`` when
  ///   the current value is not a `T`, or the errors of ``set(_:forKey:)``.
  @discardableResult
  public func update<T: Codable & Sendable>(
    _ key: String, as type: T.Type = T.self,
    _ transform: @escaping @Sendable (T?) throws -> T?
  ) async throws -> T? {
    let stored = try await mutate { values in
      let current = try values[key].map { try StoreValueCoding.decode(T.self, from: $0, key: key) }
      let next = try transform(current).map { try StoreValueCoding.encode($0, key: key) }
      values[key] = next
      return next
    }
    return try stored.map { try StoreValueCoding.decode(T.self, from: $0, key: key) }
  }

  private func mutate(_ mutation: @escaping StoreCore.Mutation) async throws -> StoreValue? {
    try await withCheckedThrowingContinuation { continuation in
      if !thread.submit(.write(mutation, continuation)) {
        continuation.resume(throwing: StoreError.closed)
      }
    }
  }

  /// Re-reads the file now if another process replaced it (this happens by itself within a
  /// moment; call it to be sure before a read).
  ///
  /// - Throws: ``StoreError/closed`` or ``StoreError/system(operation:path:errno:)``.
  public func reload() async throws {
    try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<Void, any Error>) in
      if !thread.submit(.refresh(continuation)) {
        continuation.resume(throwing: StoreError.closed)
      }
    }
  }

  // MARK: Events

  /// How many event streams are open (a test waits for a follower to listen before it
  /// changes the store).
  package var eventStreamCount: Int { core.state.withLock { $0.subscribers.count } }

  /// A new stream of this store's events: changes (by this store or elsewhere), corrupt files
  /// moved aside, a watch that failed. Each call makes an independent stream; it keeps the
  /// newest 256 unread events and finishes when the store closes.
  public func events() -> AsyncStream<StoreEvent> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: StoreEvent.self, bufferingPolicy: .bufferingNewest(256))
    let id: UInt64? = core.state.withLock { state in
      guard !state.closed else { return nil }
      let id = state.nextSubscriber
      state.nextSubscriber += 1
      state.subscribers[id] = continuation
      return id
    }
    guard let id else {
      continuation.finish()
      return stream
    }
    continuation.onTermination = { [weak core] _ in
      _ = core?.state.withLock { $0.subscribers.removeValue(forKey: id) }
    }
    return stream
  }

  /// Stops watching, fails writes not yet started with ``StoreError/closed``, finishes every
  /// event stream and closes the files. Returns at once; also done when the store is released.
  public func close() {
    core.state.withLock { $0.closed = true }
    watcher.stop()
    thread.stop(wait: false)
  }
}
