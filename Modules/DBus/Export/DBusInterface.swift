/// An interface of an object this process exports on a ``DBusConnection``: its methods,
/// properties and the signals it declares (for introspection).
///
/// ```swift
/// let advert = DBusInterface("org.bluez.LEAdvertisement1",
///   methods: [DBusMethod("Release") { _ in released(); return [] }],
///   properties: [DBusProperty("Type", .string("broadcast"))])
/// try await connection.export(advert, at: try DBusObjectPath("/org/example/advert0"))
/// ```
public struct DBusInterface: Sendable {
  /// The interface name, such as `org.bluez.LEAdvertisement1`.
  public var name: String
  /// Methods by name.
  public var methods: [String: DBusMethod]
  /// Properties by name.
  public var properties: [String: DBusProperty]
  /// Signals the interface emits (introspection only: emit them with
  /// ``DBusConnection/emit(_:)``).
  public var signals: [DBusSignalDeclaration]

  public init(
    _ name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [],
    signals: [DBusSignalDeclaration] = []
  ) {
    self.name = name
    self.methods = Dictionary(methods.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
    self.properties = Dictionary(properties.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
    self.signals = signals
  }

  /// The properties as an `a{sv}` map (readable ones only).
  var propertyMap: DBusValue {
    .vardict(properties.filter { $0.value.access != .write }.mapValues(\.value))
  }

  func validate() throws(DBusError) {
    guard DBusNames.isInterface(name) else {
      throw DBusError.invalidValue("\"\(name)\" is not an interface name")
    }
    for method in methods.values {
      guard DBusNames.isMember(method.name) else {
        throw DBusError.invalidValue("\"\(method.name)\" is not a method name")
      }
      _ = try DBusType.list(signature: method.inputSignature)
      _ = try DBusType.list(signature: method.outputSignature)
    }
    for property in properties.values {
      guard DBusNames.isMember(property.name) else {
        throw DBusError.invalidValue("\"\(property.name)\" is not a property name")
      }
      try DBusValueEncoder.check(property.value, depth: 0)
    }
  }
}

/// A method of an exported interface.
public struct DBusMethod: Sendable {
  /// Runs a call: gets the call message (its ``DBusMessage/body`` already matches
  /// ``inputSignature``) and returns the reply's values, which must match ``outputSignature``.
  /// Throwing a ``DBusError`` sends that error; any other error is sent as
  /// ``DBusError/Name-swift.struct/failed`` with its description. Runs in its own task.
  public typealias Handler = @Sendable (DBusMessage) async throws -> [DBusValue]

  /// Runs once the reply to a call has been queued on the connection (after an error reply
  /// too), with the call: for what the service does only after it answered, such as a signal or
  /// a call of its own that the caller must see after the reply (messages leave a connection in
  /// the order they were queued). Runs in the handler's task: when the connection ends it is
  /// cancelled and awaited with it, so start work that must outlive the connection in a task of
  /// your own.
  public typealias AfterReply = @Sendable (DBusMessage) async -> Void

  public var name: String
  /// The arguments' signature, such as `oa{sv}`.
  public var inputSignature: String
  /// The reply's signature.
  public var outputSignature: String
  public var handler: Handler
  /// What runs after the reply is queued (see ``AfterReply``); `nil` for most methods.
  public var afterReply: AfterReply?

  public init(
    _ name: String, input: String = "", output: String = "", handler: @escaping Handler,
    afterReply: AfterReply? = nil
  ) {
    self.name = name
    self.inputSignature = input
    self.outputSignature = output
    self.handler = handler
    self.afterReply = afterReply
  }
}

/// A property of an exported interface, served through `org.freedesktop.DBus.Properties`.
public struct DBusProperty: Sendable {
  /// Who may read and write it over D-Bus (the owner can always change it with
  /// ``DBusConnection/setProperty(_:to:interface:at:)``).
  public enum Access: Sendable, Hashable {
    case read, readWrite, write
  }

  /// Checks a value a peer sets before it is stored; throw a ``DBusError`` to refuse it.
  public typealias Validator = @Sendable (DBusValue) throws -> Void

  public var name: String
  /// The current value; its type is the property's type.
  public var value: DBusValue
  public var access: Access
  /// Whether a change emits `PropertiesChanged` with the new value.
  public var emitsChanged: Bool
  /// Called before a peer's `Set` is stored.
  public var validator: Validator?

  public init(
    _ name: String, _ value: DBusValue, access: Access = .read, emitsChanged: Bool = true,
    validator: Validator? = nil
  ) {
    self.name = name
    self.value = value
    self.access = access
    self.emitsChanged = emitsChanged
    self.validator = validator
  }
}

/// A signal an interface declares, for introspection.
public struct DBusSignalDeclaration: Sendable, Hashable {
  public var name: String
  public var signature: String
  public init(_ name: String, signature: String = "") {
    self.name = name
    self.signature = signature
  }
}
