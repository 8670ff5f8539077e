/// An error from D-Bus: an error reply from a peer, or a failure of this library (a timeout, a
/// lost connection, a value that cannot be encoded, a message that cannot be decoded).
///
/// Every error carries a D-Bus error ``name`` and a human-readable ``message``. Peers' replies
/// keep the name they sent, so a caller recognises them by comparing names:
///
/// ```swift
/// do { try await connection.call(...) }
/// catch let error where error.name == .accessDenied { ... }
/// catch let error where error.name.isInNamespace("org.bluez.Error") { ... }
/// ```
///
/// Failures of this library use the standard names libdbus uses for the same failure
/// (``Name-swift.struct/noReply`` for a timeout, ``Name-swift.struct/disconnected``, ...).
public struct DBusError: Error, Sendable, Hashable {
  /// A D-Bus error name such as `org.freedesktop.DBus.Error.AccessDenied`. Modules add their
  /// own names as static constants in an extension.
  public struct Name: RawRepresentable, Sendable, Hashable, CustomStringConvertible,
    ExpressibleByStringLiteral
  {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }

    /// Whether the name lies in `namespace`, such as `"org.bluez.Error"`.
    public func isInNamespace(_ namespace: String) -> Bool {
      rawValue.hasPrefix(namespace + ".")
    }
  }

  /// The error's D-Bus name.
  public var name: Name
  /// What went wrong, for people.
  public var message: String

  public init(_ name: Name, _ message: String) {
    self.name = name
    self.message = message
  }
}

extension DBusError: CustomStringConvertible {
  public var description: String { message.isEmpty ? name.rawValue : "\(name): \(message)" }
}

extension DBusError.Name {
  private static let prefix = "org.freedesktop.DBus.Error."
  /// A generic failure; also what a method handler's non-D-Bus error becomes.
  public static let failed = Self(prefix + "Failed")
  /// No reply within the call's timeout (this library's timeout uses it, as libdbus does).
  public static let noReply = Self(prefix + "NoReply")
  /// The connection is closed or was lost.
  public static let disconnected = Self(prefix + "Disconnected")
  /// The bus or a service refused access (bus policy, polkit, BlueZ's permission checks).
  public static let accessDenied = Self(prefix + "AccessDenied")
  /// The destination name has no owner and cannot be activated.
  public static let serviceUnknown = Self(prefix + "ServiceUnknown")
  /// The name has no owner.
  public static let nameHasNoOwner = Self(prefix + "NameHasNoOwner")
  /// Arguments of the wrong type or value; also used for messages this library cannot decode.
  public static let invalidArgs = Self(prefix + "InvalidArgs")
  /// A malformed type signature.
  public static let invalidSignature = Self(prefix + "InvalidSignature")
  /// The object has no such method.
  public static let unknownMethod = Self(prefix + "UnknownMethod")
  /// No object at that path.
  public static let unknownObject = Self(prefix + "UnknownObject")
  /// The object has no such interface.
  public static let unknownInterface = Self(prefix + "UnknownInterface")
  /// The interface has no such property.
  public static let unknownProperty = Self(prefix + "UnknownProperty")
  /// The property cannot be written.
  public static let propertyReadOnly = Self(prefix + "PropertyReadOnly")
  /// Out of memory (libdbus could not allocate).
  public static let noMemory = Self(prefix + "NoMemory")
  /// The bus address is malformed or names an unknown transport.
  public static let badAddress = Self(prefix + "BadAddress")
  /// The connection could not be made (no such socket, refused).
  public static let noServer = Self(prefix + "NoServer")
  /// The operation is not supported by this library or the peer.
  public static let notSupported = Self(prefix + "NotSupported")
  /// The call was cancelled by its task (this library's name, not a standard one).
  public static let cancelled = Self("org.nearby.DBus.Error.Cancelled")
}

extension DBusError {
  /// A value or header that cannot be put into a message.
  static func invalidValue(_ message: String) -> DBusError { DBusError(.invalidArgs, message) }
}
