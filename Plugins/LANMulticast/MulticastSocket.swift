import Glibc

/// A UDP socket joined to a multicast group on one interface, sending with hop limit 1.
/// Plain file descriptors: the I/O thread is their one user after ``open(_:)`` returns, and
/// closes them when it ends.
struct MulticastSocket: Sendable {
  /// The socket.
  let descriptor: Int32
  /// The group and port datagrams go to.
  let destination: Destination
  /// The interface index (0: the kernel's choice).
  let interfaceIndex: UInt32

  enum Destination: Sendable {
    case ipv4(sockaddr_in)
    case ipv6(sockaddr_in6)
  }

  /// Opens, binds and joins.
  /// - Throws: ``LANMulticastError`` naming the interface, the group or the failing call.
  static func open(_ configuration: LANMulticastConfiguration) throws(LANMulticastError)
    -> MulticastSocket
  {
    var index: UInt32 = 0
    if let name = configuration.interface {
      index = if_nametoindex(name)
      guard index != 0 else {
        throw .noSuchInterface(name, available: NetworkInterfaces.names())
      }
    }
    var v4 = in_addr()
    var v6 = in6_addr()
    if inet_pton(AF_INET, configuration.group, &v4) == 1 {
      // 224.0.0.0/4: the first octet (network byte order) is 1110xxxx.
      guard UInt32(bigEndian: v4.s_addr) >> 28 == 0xE else {
        throw .notAMulticastGroup(configuration.group)
      }
      return try openIPv4(group: v4, port: configuration.port, interface: index)
    }
    if inet_pton(AF_INET6, configuration.group, &v6) == 1 {
      guard withUnsafeBytes(of: v6, { $0[0] }) == 0xFF else {
        throw .notAMulticastGroup(configuration.group)
      }
      return try openIPv6(group: v6, port: configuration.port, interface: index)
    }
    throw .notAMulticastGroup(configuration.group)
  }

  /// Whether `group` is an IPv4 (224.0.0.0/4) or IPv6 (ff00::/8) multicast address.
  static func isMulticast(_ group: String) -> Bool {
    var v4 = in_addr()
    var v6 = in6_addr()
    if inet_pton(AF_INET, group, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 28 == 0xE }
    if inet_pton(AF_INET6, group, &v6) == 1 { return withUnsafeBytes(of: v6) { $0[0] } == 0xFF }
    return false
  }

  private static func openIPv4(group: in_addr, port: UInt16, interface: UInt32)
    throws(LANMulticastError) -> MulticastSocket
  {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw .socket(operation: "socket(AF_INET)", errno: errno) }
    do throws(LANMulticastError) {
      try option(fd, SOL_SOCKET, SO_REUSEADDR, Int32(1), "SO_REUSEADDR")
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_port = port.bigEndian
      // Bound to the group, so only its datagrams arrive (not unicast to the port).
      address.sin_addr = group
      let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      guard bound == 0 else { throw LANMulticastError.socket(operation: "bind", errno: errno) }
      var request = ip_mreqn()
      request.imr_multiaddr = group
      request.imr_ifindex = Int32(interface)
      try option(fd, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, request, "IP_ADD_MEMBERSHIP")
      try option(fd, Int32(IPPROTO_IP), IP_MULTICAST_IF, request, "IP_MULTICAST_IF")
      try option(
        fd, Int32(IPPROTO_IP), IP_MULTICAST_TTL, LANMulticastConfiguration.hopLimit,
        "IP_MULTICAST_TTL")
      // Peers on this host (another process, another medium) hear us through the loopback.
      try option(fd, Int32(IPPROTO_IP), IP_MULTICAST_LOOP, Int32(1), "IP_MULTICAST_LOOP")
      // Only the groups this socket joined, not those other sockets joined.
      try option(fd, Int32(IPPROTO_IP), IP_MULTICAST_ALL, Int32(0), "IP_MULTICAST_ALL")
    } catch {
      Glibc.close(fd)
      throw error
    }
    var destination = sockaddr_in()
    destination.sin_family = sa_family_t(AF_INET)
    destination.sin_port = port.bigEndian
    destination.sin_addr = group
    return MulticastSocket(
      descriptor: fd, destination: .ipv4(destination), interfaceIndex: interface)
  }

  private static func openIPv6(group: in6_addr, port: UInt16, interface: UInt32)
    throws(LANMulticastError) -> MulticastSocket
  {
    let fd = socket(AF_INET6, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw .socket(operation: "socket(AF_INET6)", errno: errno) }
    do throws(LANMulticastError) {
      try option(fd, SOL_SOCKET, SO_REUSEADDR, Int32(1), "SO_REUSEADDR")
      try option(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, Int32(1), "IPV6_V6ONLY")
      var address = sockaddr_in6()
      address.sin6_family = sa_family_t(AF_INET6)
      address.sin6_port = port.bigEndian
      address.sin6_addr = group
      let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
      }
      guard bound == 0 else { throw LANMulticastError.socket(operation: "bind", errno: errno) }
      var request = ipv6_mreq()
      request.ipv6mr_multiaddr = group
      request.ipv6mr_interface = interface
      try option(fd, Int32(IPPROTO_IPV6), IPV6_ADD_MEMBERSHIP, request, "IPV6_JOIN_GROUP")
      try option(fd, Int32(IPPROTO_IPV6), IPV6_MULTICAST_IF, interface, "IPV6_MULTICAST_IF")
      try option(
        fd, Int32(IPPROTO_IPV6), IPV6_MULTICAST_HOPS, LANMulticastConfiguration.hopLimit,
        "IPV6_MULTICAST_HOPS")
      try option(fd, Int32(IPPROTO_IPV6), IPV6_MULTICAST_LOOP, UInt32(1), "IPV6_MULTICAST_LOOP")
      try option(fd, Int32(IPPROTO_IPV6), IPV6_MULTICAST_ALL, Int32(0), "IPV6_MULTICAST_ALL")
    } catch {
      Glibc.close(fd)
      throw error
    }
    var destination = sockaddr_in6()
    destination.sin6_family = sa_family_t(AF_INET6)
    destination.sin6_port = port.bigEndian
    destination.sin6_addr = group
    destination.sin6_scope_id = interface
    return MulticastSocket(
      descriptor: fd, destination: .ipv6(destination), interfaceIndex: interface)
  }

  private static func option<Value>(
    _ fd: Int32, _ level: Int32, _ name: Int32, _ value: Value, _ label: String
  ) throws(LANMulticastError) {
    let result = withUnsafeBytes(of: value) {
      setsockopt(fd, level, name, $0.baseAddress, socklen_t($0.count))
    }
    guard result == 0 else { throw .socket(operation: "setsockopt(\(label))", errno: errno) }
  }

  /// Sends one datagram to the group; returns 0 or the errno of the failure.
  func send(_ bytes: [UInt8]) -> Int32 {
    let sent: Int
    switch destination {
    case .ipv4(var address):
      sent = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
          bytes.withUnsafeBytes {
            sendto(
              descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT), target,
              socklen_t(MemoryLayout<sockaddr_in>.size))
          }
        }
      }
    case .ipv6(var address):
      sent = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
          bytes.withUnsafeBytes {
            sendto(
              descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT), target,
              socklen_t(MemoryLayout<sockaddr_in6>.size))
          }
        }
      }
    }
    return sent < 0 ? errno : 0
  }

  /// Receives one waiting datagram without blocking: its length and, for an IPv4 source,
  /// the source's address bytes; `nil` when none waits (`EAGAIN`) or the receive failed.
  func receive(into buffer: inout [UInt8]) -> (count: Int, sourceIPv4: [UInt8]?)? {
    var source = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let count = buffer.withUnsafeMutableBytes { bytes in
      withUnsafeMutablePointer(to: &source) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          recvfrom(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0, &length)
        }
      }
    }
    guard count >= 0 else { return nil }
    guard Int32(source.ss_family) == AF_INET else { return (count, nil) }
    let ipv4 = withUnsafePointer(to: &source) {
      $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
        withUnsafeBytes(of: $0.pointee.sin_addr.s_addr) { Array($0) }
      }
    }
    return (count, ipv4)
  }

  func close() { _ = Glibc.close(descriptor) }
}
