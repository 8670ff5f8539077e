import Glibc

/// A loopback TCP port that is free now, below Linux's ephemeral range (32768 and up), for a
/// server a test starts in a child process: a random port inside that range may be the local
/// end of another test's connection, and the child then fails with "Address already in use".
/// Tried by binding to it, so a port another server holds is never handed out; a port taken
/// between this call and the child's own bind remains possible, but only by a listener.
public func freeLoopbackPort(in range: Range<Int> = 20_000..<32_768) -> Int {
  freePort(in: range, type: SOCK_STREAM)
}

/// A UDP port that is free now, below Linux's ephemeral range, for a LAN medium a test starts
/// in a child process (`--lan-port`): a random port inside that range may be another test's
/// kernel-chosen unicast socket, and the medium then fails to bind.
public func freeUDPPort(in range: Range<Int> = 20_000..<32_768) -> Int {
  freePort(in: range, type: SOCK_DGRAM)
}

private func freePort(in range: Range<Int>, type: __socket_type) -> Int {
  for _ in 0..<200 {
    let port = Int.random(in: range)
    if canBind(port, type: type) { return port }
  }
  return Int.random(in: range)
}

private func canBind(_ port: Int, type: __socket_type) -> Bool {
  let descriptor = socket(AF_INET, Int32(type.rawValue), 0)
  guard descriptor >= 0 else { return false }
  defer { close(descriptor) }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = in_port_t(UInt16(port).bigEndian)
  address.sin_addr = in_addr(s_addr: INADDR_ANY)
  return withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
    }
  }
}
