import Logging

/// The objects a connection exports, and the actor that answers calls to them.
///
/// It reads the dispatch thread's stream of incoming method calls in order. Properties,
/// ObjectManager, Introspectable and Peer calls are answered on the actor; exported methods run
/// in child tasks of ``run()`` so that a slow handler does not hold up the others: when the
/// connection ends, the handlers still running are cancelled and awaited.
actor ObjectRegistry {
  static let properties = "org.freedesktop.DBus.Properties"
  static let objectManager = "org.freedesktop.DBus.ObjectManager"
  static let introspectable = "org.freedesktop.DBus.Introspectable"
  static let peer = "org.freedesktop.DBus.Peer"

  private let core: ConnectionCore
  /// Exported interfaces by path, then by interface name.
  private(set) var objects: [DBusObjectPath: [String: DBusInterface]] = [:]
  /// Paths that serve `org.freedesktop.DBus.ObjectManager` for the objects below them.
  private var managers: Set<DBusObjectPath> = []
  /// Checks every incoming call first; an error it returns is the reply.
  private var filter: DBusConnection.CallFilter?

  init(core: ConnectionCore) { self.core = core }

  /// Answers calls until the connection ends, then cancels the method handlers still running
  /// and waits for them.
  func run() async {
    await withDiscardingTaskGroup { group in
      for await call in core.incomingCalls {
        if let work = handle(call) { group.addTask(operation: work) }
      }
      group.cancelAll()
    }
  }

  // MARK: Changes by the owner

  func export(_ interface: DBusInterface, at path: DBusObjectPath) throws(DBusError) {
    try interface.validate()
    guard objects[path]?[interface.name] == nil else {
      throw DBusError.invalidValue("\(interface.name) is already exported at \(path)")
    }
    objects[path, default: [:]][interface.name] = interface
    if let manager = manager(of: path) {
      emit(
        path: manager, interface: Self.objectManager, member: "InterfacesAdded",
        body: [
          .objectPath(path),
          .dictionary(
            key: .string, value: .dictionary(key: .string, value: .variant),
            [DBusDictEntry(.string(interface.name), interface.propertyMap)]),
        ])
    }
  }

  func unexport(interfaces names: [String]?, at path: DBusObjectPath) {
    guard let existing = objects[path] else { return }
    let removed = names.map { $0.filter { existing[$0] != nil } } ?? Array(existing.keys)
    guard !removed.isEmpty else { return }
    for name in removed { objects[path]?[name] = nil }
    if objects[path]?.isEmpty == true { objects[path] = nil }
    if let manager = manager(of: path) {
      emit(
        path: manager, interface: Self.objectManager, member: "InterfacesRemoved",
        body: [.objectPath(path), .strings(removed.sorted())])
    }
  }

  func addObjectManager(at path: DBusObjectPath) { managers.insert(path) }

  func setFilter(_ filter: DBusConnection.CallFilter?) { self.filter = filter }

  func setProperty(_ name: String, to value: DBusValue, interface: String, at path: DBusObjectPath)
    throws(DBusError)
  {
    guard let property = objects[path]?[interface]?.properties[name] else {
      throw DBusError(.unknownProperty, "no property \(interface).\(name) at \(path)")
    }
    guard property.value.type == value.type else {
      throw DBusError.invalidValue(
        "\(interface).\(name) is of type \(property.value.type), not \(value.type)")
    }
    try DBusValueEncoder.check(value, depth: 0)
    store(value, property: property, interface: interface, path: path)
  }

  func property(_ name: String, interface: String, at path: DBusObjectPath) -> DBusValue? {
    objects[path]?[interface]?.properties[name]?.value
  }

  private func store(
    _ value: DBusValue, property: DBusProperty, interface: String, path: DBusObjectPath
  ) {
    guard property.value != value else { return }
    objects[path]?[interface]?.properties[property.name]?.value = value
    guard property.emitsChanged else { return }
    emit(
      path: path, interface: Self.properties, member: "PropertiesChanged",
      body: [.string(interface), .vardict([property.name: value]), .strings([])])
  }

  /// The closest object manager above `path` (a manager does not report its own path).
  private func manager(of path: DBusObjectPath) -> DBusObjectPath? {
    managers.filter { path != $0 && path.isDescendant(of: $0) }
      .max { $0.rawValue.count < $1.rawValue.count }
  }

  private func emit(path: DBusObjectPath, interface: String, member: String, body: [DBusValue]) {
    do {
      _ = try core.send(.signal(path: path, interface: interface, member: member, body: body))
    } catch {
      core.logger.warning("cannot emit \(interface).\(member) at \(path): \(error)")
    }
  }

  // MARK: Incoming calls

  /// Answers `call` now, or returns the work that answers it (an exported method's handler),
  /// for ``run()`` to run in a child task.
  private func handle(_ call: DBusMessage) -> (@Sendable () async -> Void)? {
    if let refusal = filter?(call) {
      respond(to: call, with: .failure(refusal))
      return nil
    }
    do throws(DBusError) {
      switch try answer(call) {
      case .now(let reply): respond(to: call, with: .success(reply))
      case .later(let work): return work
      }
    } catch {
      respond(to: call, with: .failure(error))
    }
    return nil
  }

  /// How a call is answered: at once, or by work that replies when done.
  private enum Answer {
    case now([DBusValue])
    case later(@Sendable () async -> Void)
  }

  private nonisolated func respond(
    to call: DBusMessage, with result: Result<[DBusValue], DBusError>
  ) {
    guard !call.noReplyExpected else { return }
    let reply =
      switch result {
      case .success(let body): call.reply(body)
      case .failure(let error): call.errorReply(error)
      }
    do {
      _ = try core.send(reply)
    } catch {
      core.logger.warning("cannot reply to \(call): \(error)")
    }
  }

  /// The reply's body, or the work that replies later (an exported method).
  private func answer(_ call: DBusMessage) throws(DBusError) -> Answer {
    guard let path = call.path, let member = call.member else {
      throw DBusError(.unknownMethod, "a call without path or member")
    }
    switch call.interface {
    case Self.properties: return .now(try answerProperties(call, path: path, member: member))
    case Self.introspectable where member == "Introspect":
      _ = try call.arguments("")
      guard objects[path] != nil || hasChildren(path) else { throw unknownObject(path) }
      return .now([.string(introspection(of: path))])
    case Self.peer where member == "Ping":
      return .now([])
    case Self.objectManager where managers.contains(path) && member == "GetManagedObjects":
      _ = try call.arguments("")
      return .now([managedObjects(below: path)])
    default:
      break
    }
    guard let interfaces = objects[path] else { throw unknownObject(path) }
    let method: DBusMethod
    if let name = call.interface {
      guard let interface = interfaces[name] else {
        throw DBusError(.unknownInterface, "no interface \(name) at \(path)")
      }
      guard let found = interface.methods[member] else {
        throw DBusError(.unknownMethod, "no method \(name).\(member) at \(path)")
      }
      method = found
    } else {
      guard let found = interfaces.values.lazy.compactMap({ $0.methods[member] }).first else {
        throw DBusError(.unknownMethod, "no method \(member) at \(path)")
      }
      method = found
    }
    _ = try call.arguments(method.inputSignature)
    let logger = core.logger
    return .later {
      let result: Result<[DBusValue], DBusError>
      do {
        let values = try await method.handler(call)
        let signature = DBusType.signature(of: values.map(\.type))
        if signature == method.outputSignature {
          result = .success(values)
        } else {
          logger.error(
            "\(member) at \(path) returned \(signature), declared \(method.outputSignature)")
          result = .failure(DBusError(.failed, "the method's reply has the wrong type"))
        }
      } catch let error as DBusError {
        result = .failure(error)
      } catch {
        result = .failure(DBusError(.failed, "\(error)"))
      }
      self.respond(to: call, with: result)
      await method.afterReply?(call)
    }
  }

  private func unknownObject(_ path: DBusObjectPath) -> DBusError {
    DBusError(.unknownObject, "no object at \(path)")
  }

  private func answerProperties(_ call: DBusMessage, path: DBusObjectPath, member: String)
    throws(DBusError) -> [DBusValue]
  {
    guard let interfaces = objects[path] else { throw unknownObject(path) }
    func interface(_ value: DBusValue) throws(DBusError) -> DBusInterface {
      let name = value.string ?? ""
      guard let found = interfaces[name] else {
        throw DBusError(.unknownInterface, "no interface \(name) at \(path)")
      }
      return found
    }
    switch member {
    case "Get":
      let args = try call.arguments("ss")
      let owner = try interface(args[0])
      let name = args[1].string ?? ""
      guard let property = owner.properties[name], property.access != .write else {
        throw DBusError(.unknownProperty, "no readable property \(owner.name).\(name) at \(path)")
      }
      return [.variant(property.value)]
    case "GetAll":
      let args = try call.arguments("s")
      return [try interface(args[0]).propertyMap]
    case "Set":
      let args = try call.arguments("ssv")
      let owner = try interface(args[0])
      let name = args[1].string ?? ""
      guard let property = owner.properties[name] else {
        throw DBusError(.unknownProperty, "no property \(owner.name).\(name) at \(path)")
      }
      guard property.access != .read else {
        throw DBusError(.propertyReadOnly, "\(owner.name).\(name) is read-only")
      }
      let value = args[2].unwrapped
      guard value.type == property.value.type else {
        throw DBusError(
          .invalidArgs, "\(owner.name).\(name) is of type \(property.value.type), not \(value.type)"
        )
      }
      if let validator = property.validator {
        do { try validator(value) } catch let error as DBusError { throw error } catch {
          throw DBusError(.invalidArgs, "\(error)")
        }
      }
      store(value, property: property, interface: owner.name, path: path)
      return []
    default:
      throw DBusError(.unknownMethod, "no method \(Self.properties).\(member)")
    }
  }

  private func managedObjects(below manager: DBusObjectPath) -> DBusValue {
    let entries = objects.filter { $0.key != manager && $0.key.isDescendant(of: manager) }
      .sorted { $0.key < $1.key }
      .map { path, interfaces in
        DBusDictEntry(
          .objectPath(path),
          .dictionary(
            key: .string, value: .dictionary(key: .string, value: .variant),
            interfaces.sorted { $0.key < $1.key }.map {
              DBusDictEntry(.string($0.key), $0.value.propertyMap)
            }))
      }
    return .dictionary(
      key: .objectPath,
      value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
      entries)
  }

  private func hasChildren(_ path: DBusObjectPath) -> Bool {
    objects.keys.contains { $0 != path && $0.isDescendant(of: path) }
  }

  private func introspection(of path: DBusObjectPath) -> String {
    let children = Set(
      objects.keys.compactMap { child -> String? in
        guard child != path, child.isDescendant(of: path) else { return nil }
        let rest = child.rawValue.dropFirst(path.rawValue == "/" ? 1 : path.rawValue.count + 1)
        return rest.split(separator: "/").first.map(String.init)
      })
    return Introspection.xml(
      interfaces: objects[path].map { Array($0.values) } ?? [],
      isManager: managers.contains(path), children: children.sorted())
  }
}
