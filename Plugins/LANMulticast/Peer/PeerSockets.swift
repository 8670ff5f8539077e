import Glibc

/// The two sockets of a ``LANPeerTransport``: a unicast one bound to every address (it sends
/// everything and receives answers; hop limit 1 for unicast and multicast alike), and one
/// bound to the who-has group and joined to it.
/// Plain file descriptors: the receiving thread closes them when it ends.
struct PeerSockets: Sendable {
  let unicast: Int32
  let group: Int32
  /// The unicast socket's port (the kernel's choice when 0 was asked).
  let port: UInt16
  /// Where who-has datagrams go.
  let groupAddress: sockaddr_in

  /// Opens, binds and joins.
  /// - Throws: ``LANMulticastError`` naming the interface, the group or the failing call.
  static func open(_ configuration: LANPeerConfiguration) throws(LANMulticastError)
    -> PeerSockets
  {
    var index: UInt32 = 0
    if let name = configuration.interface {
      index = if_nametoindex(name)
      guard index != 0 else {
        throw .noSuchInterface(name, available: NetworkInterfaces.names())
      }
    }
    var group = in_addr()
    guard inet_pton(AF_INET, configuration.group, &group) == 1,
      UInt32(bigEndian: group.s_addr) >> 28 == 0xE
    else { throw .notAMulticastGroup(configuration.group) }
    var request = ip_mreqn()
    request.imr_multiaddr = group
    request.imr_ifindex = Int32(index)

    let unicast = try socket()
    let groupSocket: Int32
    do throws(LANMulticastError) {
      try bind(unicast, address: in_addr(s_addr: INADDR_ANY), port: configuration.unicastPort)
      try option(unicast, Int32(IPPROTO_IP), IP_MULTICAST_IF, request, "IP_MULTICAST_IF")
      // Unicast too stays on the segment: a forged way back (a LAN announcement is not
      // authenticated without a key) cannot make this socket send beyond the first router.
      try option(unicast, Int32(IPPROTO_IP), IP_TTL, LANMulticastConfiguration.hopLimit, "IP_TTL")
      try option(
        unicast, Int32(IPPROTO_IP), IP_MULTICAST_TTL, LANMulticastConfiguration.hopLimit,
        "IP_MULTICAST_TTL")
      try option(unicast, Int32(IPPROTO_IP), IP_MULTICAST_LOOP, Int32(1), "IP_MULTICAST_LOOP")
      groupSocket = try socket()
      do throws(LANMulticastError) {
        try option(groupSocket, SOL_SOCKET, SO_REUSEADDR, Int32(1), "SO_REUSEADDR")
        try bind(groupSocket, address: group, port: configuration.groupPort)
        try option(
          groupSocket, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, request, "IP_ADD_MEMBERSHIP")
        try option(groupSocket, Int32(IPPROTO_IP), IP_MULTICAST_ALL, Int32(0), "IP_MULTICAST_ALL")
      } catch {
        Glibc.close(groupSocket)
        throw error
      }
    } catch {
      Glibc.close(unicast)
      throw error
    }
    var bound = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &bound) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(unicast, $0, &length) }
    }
    var destination = sockaddr_in()
    destination.sin_family = sa_family_t(AF_INET)
    destination.sin_port = configuration.groupPort.bigEndian
    destination.sin_addr = group
    return PeerSockets(
      unicast: unicast, group: groupSocket, port: UInt16(bigEndian: bound.sin_port),
      groupAddress: destination)
  }

  /// Sends `bytes` to `address` from the unicast socket without blocking; 0 or the errno.
  func send(_ bytes: [UInt8], to address: sockaddr_in) -> Int32 {
    var target = address
    let sent = withUnsafePointer(to: &target) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { destination in
        bytes.withUnsafeBytes {
          sendto(
            unicast, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT), destination,
            socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
    }
    return sent < 0 ? errno : 0
  }

  /// Receives one waiting datagram from `descriptor` without blocking: its length and its
  /// source, or nil when none waits.
  static func receive(_ descriptor: Int32, into buffer: inout [UInt8]) -> (Int, sockaddr_in)? {
    var source = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let count = buffer.withUnsafeMutableBytes { bytes in
      withUnsafeMutablePointer(to: &source) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          recvfrom(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0, &length)
        }
      }
    }
    return count < 0 ? nil : (count, source)
  }

  func close() {
    _ = Glibc.close(unicast)
    _ = Glibc.close(group)
  }

  private static func socket() throws(LANMulticastError) -> Int32 {
    let fd = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw .socket(operation: "socket(AF_INET)", errno: errno) }
    return fd
  }

  private static func bind(_ fd: Int32, address: in_addr, port: UInt16)
    throws(LANMulticastError)
  {
    var local = sockaddr_in()
    local.sin_family = sa_family_t(AF_INET)
    local.sin_port = port.bigEndian
    local.sin_addr = address
    let result = withUnsafePointer(to: &local) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard result == 0 else { throw .socket(operation: "bind(port \(port))", errno: errno) }
  }

  private static func option<Value>(
    _ fd: Int32, _ level: Int32, _ name: Int32, _ value: Value, _ label: String
  ) throws(LANMulticastError) {
    let result = withUnsafeBytes(of: value) {
      setsockopt(fd, level, name, $0.baseAddress, socklen_t($0.count))
    }
    guard result == 0 else { throw .socket(operation: "setsockopt(\(label))", errno: errno) }
  }
}
