import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Closes a connection that does not deliver a whole request head within `headTimeout` of
/// opening (or of the end of the previous answer), or the whole body within `bodyTimeout` of
/// its head. The idle timeout alone lets a client that sends a byte now and then hold a
/// connection for ever (slowloris), in the head or in a body with a large `Content-Length`;
/// these bound each part however it trickles in. An answer being sent (an event stream) is not
/// timed.
///
/// Runs on the connection's event loop, as every channel handler does.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = HTTPRequestPart
  typealias InboundOut = HTTPRequestPart
  typealias OutboundIn = HTTPResponsePart
  typealias OutboundOut = HTTPResponsePart

  let headTimeout: TimeAmount
  let bodyTimeout: TimeAmount
  private var deadline: Scheduled<Void>?

  init(headTimeout: TimeAmount, bodyTimeout: TimeAmount) {
    self.headTimeout = headTimeout
    self.bodyTimeout = bodyTimeout
  }

  func handlerAdded(context: ChannelHandlerContext) {
    if context.channel.isActive { arm(context, in: headTimeout) }
  }

  func channelActive(context: ChannelHandlerContext) {
    arm(context, in: headTimeout)
    context.fireChannelActive()
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch unwrapInboundIn(data) {
    case .head: arm(context, in: bodyTimeout)  // the body is timed from its head
    case .body: break
    case .end: disarm()  // the request is in: the answer is not timed
    }
    context.fireChannelRead(data)
  }

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    if case .end = unwrapOutboundIn(data) {
      // The answer is out: the next request's head is timed from now.
      arm(context, in: headTimeout)
    }
    context.write(data, promise: promise)
  }

  func channelInactive(context: ChannelHandlerContext) {
    disarm()
    context.fireChannelInactive()
  }

  func handlerRemoved(context: ChannelHandlerContext) { disarm() }

  private func arm(_ context: ChannelHandlerContext, in timeout: TimeAmount) {
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
