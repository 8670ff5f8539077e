import NIOCore
import Synchronization

/// The connections open on this instance by client address (the TCP peer), shared by every
/// connection's ``ConnectionsPerAddressHandler``. Behind the `Mutex`, called from any event
/// loop.
final class ConnectionCounts: Sendable {
  let maximumPerAddress: Int
  /// Addresses not counted: trusted proxies, whose clients are behind them.
  let exempt: Set<String>
  private let counts = Mutex<[String: Int]>([:])

  init(maximumPerAddress: Int, exempt: Set<String>) {
    self.maximumPerAddress = maximumPerAddress
    self.exempt = exempt
  }

  /// Counts a connection from `address`; false (not counted) when the address holds its most.
  func admit(_ address: String) -> Bool {
    counts.withLock { counts in
      guard counts[address, default: 0] < maximumPerAddress else { return false }
      counts[address, default: 0] += 1
      return true
    }
  }

  func release(_ address: String) {
    counts.withLock { counts in
      let left = counts[address, default: 1] - 1
      counts[address] = left > 0 ? left : nil
    }
  }

  /// The connections open from `address` (for tests).
  func open(from address: String) -> Int { counts.withLock { $0[address, default: 0] } }
}

/// Closes a new connection at once when its address already holds
/// ``ConnectionCounts/maximumPerAddress`` connections, so one client cannot take the server's
/// whole connection limit (``ResolverServerConfiguration/maximumConnections``) however slowly
/// it sends. Runs on the connection's event loop.
final class ConnectionsPerAddressHandler: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = NIOAny

  let counts: ConnectionCounts
  private var counted: String?

  init(counts: ConnectionCounts) { self.counts = counts }

  func handlerAdded(context: ChannelHandlerContext) {
    if context.channel.isActive { admit(context) }
  }

  func channelActive(context: ChannelHandlerContext) {
    admit(context)
    context.fireChannelActive()
  }

  func channelInactive(context: ChannelHandlerContext) {
    release()
    context.fireChannelInactive()
  }

  func handlerRemoved(context: ChannelHandlerContext) { release() }

  private func admit(_ context: ChannelHandlerContext) {
    guard counted == nil, let address = context.channel.remoteAddress?.ipAddress,
      !counts.exempt.contains(address)
    else { return }
    if counts.admit(address) {
      counted = address
    } else {
      context.close(promise: nil)
    }
  }

  private func release() {
    guard let address = counted else { return }
    counted = nil
    counts.release(address)
  }
}
