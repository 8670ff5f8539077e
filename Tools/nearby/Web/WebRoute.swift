import Core

/// What a request to `nearby --web`'s front asks for, from its method and path alone: the
/// page's files and the part of the resolver API a phone uses (register, report, events,
/// unregister), and nothing else.
enum WebRoute: Equatable {
  case page(path: String)
  case key
  case register
  case report(DeviceID)
  case events(DeviceID)
  case unregister(DeviceID)
  case notFound
  case methodNotAllowed

  init(method: String, path: String) {
    let path = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
    let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    switch (method, parts.first) {
    case ("GET", "web") where parts == ["web", "key"]:
      self = .key
    case ("GET", "web"), ("HEAD", "web"):
      self = .page(path: path)
    case (_, "web"):
      self = .methodNotAllowed
    case (_, "v1") where parts.count >= 2 && parts[1] == "devices":
      self = Self.device(method: method, parts: Array(parts.dropFirst(2)))
    default:
      self = .notFound
    }
  }

  private static func device(method: String, parts: [String]) -> WebRoute {
    switch (method, parts.count) {
    case ("POST", 0): return .register
    case (_, 0): return .methodNotAllowed
    default: break
    }
    guard let id = DeviceID(parts[0]) else { return .notFound }
    switch (method, parts.dropFirst().first) {
    case ("POST", "report") where parts.count == 2: return .report(id)
    case ("GET", "events") where parts.count == 2: return .events(id)
    case ("DELETE", nil): return .unregister(id)
    case (_, "report"), (_, "events"), (_, nil): return .methodNotAllowed
    default: return .notFound
    }
  }
}
