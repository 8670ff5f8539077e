import Glibc

/// The host's network interfaces (of this network namespace), for error messages and the
/// CLI's availability report.
public enum NetworkInterfaces {
  /// Interface names, in the kernel's order, each once.
  public static func names() -> [String] {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0, let first = list else { return [] }
    defer { freeifaddrs(list) }
    var names: [String] = []
    var entry: UnsafeMutablePointer<ifaddrs>? = first
    while let current = entry {
      if let name = current.pointee.ifa_name {
        let text = String(cString: name)
        if !names.contains(text) { names.append(text) }
      }
      entry = current.pointee.ifa_next
    }
    return names
  }

  /// Whether an interface of that name exists.
  public static func exists(_ name: String) -> Bool { if_nametoindex(name) != 0 }
}

/// `strerror` text, read while the number is fresh.
enum SystemErrorText {
  static func text(for code: Int32) -> String {
    guard let text = strerror(code) else { return "error \(code)" }
    return String(cString: text)
  }
}
