/// Which signals a subscription receives: a D-Bus match rule.
///
/// The bus filters with the rule's text (``text``), and the connection filters again locally
/// so that each subscription gets only its own signals. Locally, a `sender` is compared only
/// when it is a unique name (`:1.42`): a well-known name such as `org.bluez` is resolved by the
/// bus alone, so two subscriptions that differ only in a well-known sender may see each other's
/// signals. Filter on the message's ``DBusMessage/sender`` where that matters.
public struct DBusMatchRule: Sendable, Hashable {
  /// The sender's bus name.
  public var sender: String?
  /// The signal's interface.
  public var interface: String?
  /// The signal's name.
  public var member: String?
  /// The object path, exactly.
  public var path: DBusObjectPath?
  /// The object path or any path below it.
  public var pathNamespace: DBusObjectPath?
  /// String arguments that must be equal: index (0…63) → value. `arguments[0] =
  /// "org.bluez.Device1"` picks `PropertiesChanged` of devices only.
  public var arguments: [Int: String]

  /// A rule for signals; every field left `nil` matches anything.
  public init(
    sender: String? = nil, interface: String? = nil, member: String? = nil,
    path: DBusObjectPath? = nil, pathNamespace: DBusObjectPath? = nil,
    arguments: [Int: String] = [:]
  ) {
    self.sender = sender
    self.interface = interface
    self.member = member
    self.path = path
    self.pathNamespace = pathNamespace
    self.arguments = arguments
  }

  /// The rule as the bus reads it, such as
  /// `type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties'`.
  public var text: String {
    var parts = ["type='signal'"]
    func add(_ key: String, _ value: String?) {
      guard let value else { return }
      parts.append("\(key)='\(value.replacingOccurrences(of: "'", with: "'\\''"))'")
    }
    add("sender", sender)
    add("interface", interface)
    add("member", member)
    add("path", path?.rawValue)
    add("path_namespace", pathNamespace?.rawValue)
    for (index, value) in arguments.sorted(by: { $0.key < $1.key }) { add("arg\(index)", value) }
    return parts.joined(separator: ",")
  }

  /// Checks the parts the bus would refuse.
  func validate() throws(DBusError) {
    if let sender, !DBusNames.isBusName(sender) {
      throw DBusError.invalidValue("match rule: \"\(sender)\" is not a bus name")
    }
    if let interface, !DBusNames.isInterface(interface) {
      throw DBusError.invalidValue("match rule: \"\(interface)\" is not an interface name")
    }
    if let member, !DBusNames.isMember(member) {
      throw DBusError.invalidValue("match rule: \"\(member)\" is not a member name")
    }
    if path != nil, pathNamespace != nil {
      throw DBusError.invalidValue("match rule: give path or pathNamespace, not both")
    }
    for (index, value) in arguments {
      guard (0...63).contains(index), !value.utf8.contains(0) else {
        throw DBusError.invalidValue("match rule: arg\(index) is out of range 0…63 or holds NUL")
      }
    }
  }

  /// Whether the header fields match (cheap; no body needed).
  func matchesHeader(
    sender messageSender: String?, interface messageInterface: String?,
    member messageMember: String?, path messagePath: String?
  ) -> Bool {
    if let sender, sender.hasPrefix(":"), sender != messageSender { return false }
    if let interface, interface != messageInterface { return false }
    if let member, member != messageMember { return false }
    if let path, path.rawValue != messagePath { return false }
    if let pathNamespace {
      guard let messagePath else { return false }
      let namespace = pathNamespace.rawValue
      if namespace != "/", messagePath != namespace, !messagePath.hasPrefix(namespace + "/") {
        return false
      }
    }
    return true
  }

  /// Whether the body's string arguments match.
  func matchesArguments(_ body: [DBusValue]) -> Bool {
    for (index, value) in arguments {
      guard index < body.count else { return false }
      switch body[index] {
      case .string(let text) where text == value: continue
      default: return false
      }
    }
    return true
  }
}
