/// A D-Bus message as a value: its header fields and its body as typed ``DBusValue``s.
///
/// Make one with ``methodCall(destination:path:interface:member:body:)``,
/// ``signal(path:interface:member:destination:body:)``, or receive one from a
/// ``DBusConnection``. Header fields and values are checked when the message is encoded (sent
/// or serialized), and a message that breaks D-Bus's rules is refused with a ``DBusError``
/// instead of reaching libdbus (which aborts the process on some invalid input).
public struct DBusMessage: Sendable, Hashable {
  /// The four kinds of D-Bus message.
  public enum Kind: Sendable, Hashable {
    case methodCall, methodReturn, error, signal
  }

  /// The kind of message.
  public var kind: Kind
  /// The sender's serial number; 0 until the message is sent.
  public var serial: UInt32 = 0
  /// For replies and errors: the serial of the call answered.
  public var replySerial: UInt32?
  /// The object: required for calls and signals.
  public var path: DBusObjectPath?
  /// The interface: required for signals, optional for calls.
  public var interface: String?
  /// The method or signal name.
  public var member: String?
  /// For errors: the error name.
  public var errorName: String?
  /// The bus name the message goes to.
  public var destination: String?
  /// The unique bus name of the sender (set by the bus on received messages).
  public var sender: String?
  /// For calls: the caller wants no reply.
  public var noReplyExpected = false
  /// The arguments.
  public var body: [DBusValue] {
    didSet { knownSignature = nil }
  }
  /// The body's signature as received (saves recomputing it from the values).
  var knownSignature: String?

  /// A message with every field given.
  public init(
    kind: Kind, path: DBusObjectPath? = nil, interface: String? = nil, member: String? = nil,
    errorName: String? = nil, destination: String? = nil, replySerial: UInt32? = nil,
    body: [DBusValue] = []
  ) {
    self.kind = kind
    self.path = path
    self.interface = interface
    self.member = member
    self.errorName = errorName
    self.destination = destination
    self.replySerial = replySerial
    self.body = body
    self.knownSignature = nil
  }

  /// A method call.
  public static func methodCall(
    destination: String?, path: DBusObjectPath, interface: String?, member: String,
    body: [DBusValue] = []
  ) -> DBusMessage {
    DBusMessage(
      kind: .methodCall, path: path, interface: interface, member: member,
      destination: destination, body: body)
  }

  /// A signal (broadcast when `destination` is `nil`).
  public static func signal(
    path: DBusObjectPath, interface: String, member: String, destination: String? = nil,
    body: [DBusValue] = []
  ) -> DBusMessage {
    DBusMessage(
      kind: .signal, path: path, interface: interface, member: member, destination: destination,
      body: body)
  }

  /// The successful reply to this call.
  public func reply(_ body: [DBusValue] = []) -> DBusMessage {
    DBusMessage(kind: .methodReturn, destination: sender, replySerial: serial, body: body)
  }

  /// The error reply to this call.
  public func errorReply(_ error: DBusError) -> DBusMessage {
    DBusMessage(
      kind: .error, errorName: error.name.rawValue, destination: sender, replySerial: serial,
      body: error.message.isEmpty ? [] : [.string(error.message)])
  }

  /// The body's signature, such as `sa{sv}as`.
  public var signature: String { knownSignature ?? DBusType.signature(of: body.map(\.type)) }

  /// For an error message: the error it carries (its name and first string argument).
  public var error: DBusError? {
    guard kind == .error else { return nil }
    return DBusError(.init(errorName ?? DBusError.Name.failed.rawValue), body.first?.string ?? "")
  }

  /// The body, after checking its signature.
  /// - Throws: ``DBusError`` named ``DBusError/Name-swift.struct/invalidArgs`` when the body's
  ///   signature is not `signature`, saying which member sent what.
  public func arguments(_ signature: String) throws(DBusError) -> [DBusValue] {
    let actual = self.signature
    guard actual == signature else {
      throw DBusError(
        .invalidArgs,
        "\(interface ?? "")\(member.map { ".\($0)" } ?? "") has arguments \"\(actual)\", "
          + "expected \"\(signature)\"")
    }
    return body
  }
}

extension DBusMessage: CustomStringConvertible {
  public var description: String {
    var parts = ["\(kind)"]
    if let sender { parts.append("from \(sender)") }
    if let destination { parts.append("to \(destination)") }
    if let path { parts.append(path.rawValue) }
    if let member { parts.append((interface.map { $0 + "." } ?? "") + member) }
    if let errorName { parts.append(errorName) }
    parts.append("(\(signature))")
    return parts.joined(separator: " ")
  }
}

extension DBusMessage {
  /// Equal when every header field and the body are equal.
  public static func == (lhs: DBusMessage, rhs: DBusMessage) -> Bool {
    lhs.kind == rhs.kind && lhs.serial == rhs.serial && lhs.replySerial == rhs.replySerial
      && lhs.path == rhs.path && lhs.interface == rhs.interface && lhs.member == rhs.member
      && lhs.errorName == rhs.errorName && lhs.destination == rhs.destination
      && lhs.sender == rhs.sender && lhs.noReplyExpected == rhs.noReplyExpected
      && lhs.body == rhs.body
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(kind)
    hasher.combine(serial)
    hasher.combine(path)
    hasher.combine(interface)
    hasher.combine(member)
    hasher.combine(body)
  }
}
