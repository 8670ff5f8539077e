internal import AsyncAlgorithms
public import Core
public import Foundation
public import Logging

/// The user's Nearby permission for one app (the seed's `GNSPermission`), kept in the app's
/// ``DefaultsStore`` under ``key`` and shared by every process of the app, including
/// `nearby permission grant|revoke`.
///
/// Give it to a manager (`Configuration.permission`) and the manager asks for consent on the
/// first publish or subscribe, pauses everything while permission is not granted, and resumes
/// when it is granted (here, by another process, or by the CLI).
///
/// ```swift
/// let permission = try await NearbyPermission(appID: "com.example.kiosk") { granted in
///   print("Nearby is now", granted ? "allowed" : "off")
/// }
/// var configuration = MessageManager.Configuration(resolver: .embedded)
/// configuration.permission = permission
/// ```
public final class NearbyPermission: PermissionGate {
  /// The store key: `true` granted, `false` denied, absent never answered.
  public static let key = "nearby.permission.granted"

  /// How the user is asked when the app gives no `permissionRequestHandler`.
  public enum Prompt: Sendable {
    /// A y/n question on the terminal when `input` is one (stdin and stderr by default);
    /// without a terminal, nobody is asked and permission stays not granted.
    case terminal(input: Int32 = STDIN_FILENO, output: Int32 = STDERR_FILENO)
    /// Never ask (services): permission is what was recorded.
    case never
  }

  /// The store that holds the answer.
  public let store: DefaultsStore
  private let prompt: Prompt
  private let promptTimeout: Duration
  /// Calls the `changedHandler` as the answer changes; ended when the permission goes away.
  private let handlerWork = WorkGroup()

  /// A permission over `store`.
  ///
  /// - Parameters:
  ///   - store: the app's store, which holds the answer under ``key``.
  ///   - prompt: how to ask when the app gives no request handler. Default: the terminal.
  ///   - promptTimeout: how long the terminal prompt waits for an answer (then: not asked).
  ///   - changedHandler: called with ``isGranted`` each time it changes (not at creation),
  ///     whoever changed it; runs on a task of its own.
  public init(
    store: DefaultsStore, prompt: Prompt = .terminal(), promptTimeout: Duration = .seconds(120),
    changedHandler: (@Sendable (Bool) -> Void)? = nil
  ) {
    self.store = store
    self.prompt = prompt
    self.promptTimeout = promptTimeout
    if let changedHandler {
      let changes = Self.changes(of: store)
      handlerWork.start {
        for await granted in changes { changedHandler(granted) }
      }
    }
  }

  /// A permission over the store of `appID` in `directory` (default: the XDG config folder).
  ///
  /// - Throws: the errors of ``DefaultsStore/init(appID:directory:logger:)``.
  public convenience init(
    appID: String, directory: URL? = nil, prompt: Prompt = .terminal(),
    logger: Logger = Logger(label: "nearby.permission"),
    changedHandler: (@Sendable (Bool) -> Void)? = nil
  ) async throws {
    let store = try await DefaultsStore(appID: appID, directory: directory, logger: logger)
    self.init(store: store, prompt: prompt, changedHandler: changedHandler)
  }

  deinit { handlerWork.end() }

  /// Whether the user granted Nearby permission (false when never asked).
  public var isGranted: Bool { store.bool(forKey: Self.key) == true }

  /// Whether the user has answered (granted or denied).
  public var isDetermined: Bool { store.bool(forKey: Self.key) != nil }

  /// Grants or revokes permission, for every process of the app. Returns once it is on disk.
  ///
  /// - Throws: the errors of ``DefaultsStore/set(_:forKey:)``.
  public func setGranted(_ granted: Bool) async throws {
    try await store.set(granted, forKey: Self.key)
  }

  /// Forgets the answer: the next publish or subscribe asks again.
  ///
  /// - Throws: the errors of ``DefaultsStore/removeValue(forKey:)``.
  public func reset() async throws {
    try await store.removeValue(forKey: Self.key)
  }

  /// A new stream of ``isGranted`` each time it changes (not its value now). Keeps the newest
  /// 16 unread values.
  public func changes() -> AsyncStream<Bool> { Self.changes(of: store) }

  private static func changes(of store: DefaultsStore) -> AsyncStream<Bool> {
    let granted = chain(
      [store.bool(forKey: key) == true].async, answerSequence(of: store).map { $0 == true })
    return stream(of: granted.removeDuplicates().dropFirst())
  }

  private static func answers(of store: DefaultsStore) -> AsyncStream<Bool?> {
    stream(of: answerSequence(of: store))
  }

  /// The stored answer each time it changes (not its value now), as the store's events tell.
  private static func answerSequence(
    of store: DefaultsStore
  ) -> some AsyncSequence<Bool?, Never> & Sendable {
    let relevant = store.events().filter { event in
      switch event {
      case .changed(let keys, _): keys.contains(key)
      case .corruptFileMovedAside: true
      case .watchFailed: false
      }
    }
    return chain([store.bool(forKey: key)].async, relevant.map { _ in store.bool(forKey: key) })
      .removeDuplicates().dropFirst()
  }

  /// `sequence` as a stream that keeps the newest 16 unread values; a work group of its own
  /// reads it until it ends or the stream's reader goes away.
  private static func stream<Element: Sendable>(
    of sequence: some AsyncSequence<Element, Never> & Sendable
  ) -> AsyncStream<Element> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: Element.self, bufferingPolicy: .bufferingNewest(16))
    let reading = WorkGroup()
    reading.start {
      for await element in sequence { continuation.yield(element) }
      continuation.finish()
    }
    continuation.onTermination = { _ in reading.end() }
    return stream
  }

  // MARK: PermissionGate

  public func answer() async -> Bool? { store.bool(forKey: Self.key) }

  public func record(_ granted: Bool) async throws { try await setGranted(granted) }

  public func answers() -> AsyncStream<Bool?> { Self.answers(of: store) }

  public var howToGrant: String {
    "run `nearby permission grant --app \(store.appID)`, or call NearbyPermission.setGranted(true)"
  }

  /// Asks on the terminal (see ``Prompt``); `nil` when there is none, the prompt is `.never`,
  /// or nobody answered within the prompt timeout.
  public func ask(logger: Logger) async -> Bool? {
    guard case .terminal(let input, let output) = prompt, isatty(input) == 1 else {
      return nil
    }
    let question = """
      \(store.appID) wants to use Nearby: it exchanges short random tokens with nearby devices \
      over Bluetooth LE and near-ultrasonic audio (speaker and microphone), and sends them to \
      the Nearby resolver server to find the messages of people nearby.
      Allow Nearby for \(store.appID)? [y/N] 
      """
    let timeout = promptTimeout
    return await withCheckedContinuation { continuation in
      Thread.detachNewThread {
        continuation.resume(
          returning: TerminalPrompt.ask(question, input: input, output: output, timeout: timeout))
      }
    }
  }
}
