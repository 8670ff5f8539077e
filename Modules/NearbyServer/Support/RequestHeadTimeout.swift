import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Closes a connection that does not deliver a whole request head within `timeout` of opening,
/// or of the end of the previous answer. The idle timeout alone lets a client that sends a
/// byte of header now and then hold a connection for ever (slowloris); this bounds the whole
/// head, however it trickles in. An answer being sent (an event stream) is not timed.
///
/// Runs on the connection's event loop, as every channel handler does.
final class RequestHeadTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = HTTPRequestPart
  typealias InboundOut = HTTPRequestPart
  typealias OutboundIn = HTTPResponsePart
  typealias OutboundOut = HTTPResponsePart

  let timeout: TimeAmount
  private var deadline: Scheduled<Void>?

  init(timeout: TimeAmount) { self.timeout = timeout }

  func handlerAdded(context: ChannelHandlerContext) {
    if context.channel.isActive { arm(context) }
  }

  func channelActive(context: ChannelHandlerContext) {
    arm(context)
    context.fireChannelActive()
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    if case .head = unwrapInboundIn(data) { disarm() }
    context.fireChannelRead(data)
  }

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    if case .end = unwrapOutboundIn(data) {
      // The answer is out: the next request's head is timed from now.
      arm(context)
    }
    context.write(data, promise: promise)
  }

  func channelInactive(context: ChannelHandlerContext) {
    disarm()
    context.fireChannelInactive()
  }

  func handlerRemoved(context: ChannelHandlerContext) { disarm() }

  private func arm(_ context: ChannelHandlerContext) {
    disarm()
    let channel = context.channel
    deadline = context.eventLoop.scheduleTask(in: timeout) {
      channel.close(promise: nil)
    }
  }

  private func disarm() {
    deadline?.cancel()
    deadline = nil
  }
}
