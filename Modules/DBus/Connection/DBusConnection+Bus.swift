/// Calls to the bus itself: names and their owners.
extension DBusConnection {
  /// How ``requestName(_:flags:)`` ended.
  public enum NameReply: UInt32, Sendable {
    /// This connection now owns the name.
    case primaryOwner = 1
    /// Queued behind the current owner.
    case inQueue = 2
    /// Another connection owns it and no queueing was asked for.
    case exists = 3
    /// This connection already owned it.
    case alreadyOwner = 4
  }

  /// `RequestName` flags.
  public struct NameFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let allowReplacement = NameFlags(rawValue: 1)
    public static let replaceExisting = NameFlags(rawValue: 2)
    public static let doNotQueue = NameFlags(rawValue: 4)
  }

  /// Asks the bus for a well-known name.
  /// - Throws: ``DBusError``: ``DBusError/Name-swift.struct/accessDenied`` when the bus policy
  ///   forbids owning it, ``DBusError/Name-swift.struct/invalidArgs`` for an invalid name.
  @discardableResult
  public func requestName(_ name: String, flags: NameFlags = .doNotQueue) async throws(DBusError)
    -> NameReply
  {
    let reply = try await callBus("RequestName", [.string(name), .uint32(flags.rawValue)])
    guard case .uint32(let code)? = reply.first, let result = NameReply(rawValue: code) else {
      throw DBusError(.invalidArgs, "RequestName answered \(reply)")
    }
    return result
  }

  /// Gives a well-known name back; returns whether this connection owned it.
  @discardableResult
  public func releaseName(_ name: String) async throws(DBusError) -> Bool {
    let reply = try await callBus("ReleaseName", [.string(name)])
    return reply.first == .uint32(1)
  }

  /// The unique name owning `name`, or `nil` when nobody owns it.
  /// - Throws: ``DBusError`` for other failures than the name having no owner.
  public func nameOwner(of name: String) async throws(DBusError) -> String? {
    do {
      return try await callBus("GetNameOwner", [.string(name)]).first?.string
    } catch  where error.name == .nameHasNoOwner {
      return nil
    }
  }

  /// The names on the bus.
  public func listNames() async throws(DBusError) -> [String] {
    try await callBus("ListNames", []).first?.elements?.compactMap(\.string) ?? []
  }

  /// Ownership changes of `name` as (old owner, new owner) pairs, `""` meaning none. Use it to
  /// notice a service restarting (its name lost and regained).
  public func nameOwnerChanges(of name: String) async throws(DBusError) -> AsyncStream<
    (old: String, new: String)
  > {
    let (stream, continuation) = AsyncStream.makeStream(
      of: (old: String, new: String).self, bufferingPolicy: .bufferingNewest(64))
    // Mapped on the dispatch thread as each signal arrives: no task between the bus and the
    // stream.
    let handler = try await handleSignals(
      matching: DBusMatchRule(
        sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus",
        member: "NameOwnerChanged", arguments: [0: name]),
      onEnd: { continuation.finish() }
    ) { signal in
      guard signal.signature == "sss" else { return }
      continuation.yield((signal.body[1].string ?? "", signal.body[2].string ?? ""))
    }
    continuation.onTermination = { _ in handler.cancel() }
    return stream
  }
}
